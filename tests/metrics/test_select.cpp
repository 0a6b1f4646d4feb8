#include <doctest/doctest.h>

#include <array>
#include <set>

#include "helpers.hpp"
#include "metrics/select.hpp"

using namespace gslb::metrics;
using namespace gslb::metrics::test;

namespace {
Policy compile(std::vector<std::string> names, Params p = {}) {
    Policy out = Policy::defaultPolicy();
    std::string error;
    REQUIRE_MESSAGE(Policy::compile(names, p, out, error), error);
    return out;
}
}  // namespace

TEST_CASE("select: the seeds' pipeline (the default before headroom) end to end") {
    auto c = candidates(4);
    c[0].health = Health::Down;  // out by health
    for (auto& x : c) {
        x.sessionsMax = 1000000;
        x.sessionsUsed = 100000;
        x.l4Ms = 10;
        x.connections = 100;
    }
    c[1].sessionsUsed = 950000;  // over 90 %: out by session-threshold
    c[2].connections = 50;       // fewest connections: the only one left for random
    const Policy p = compile(brocadeStages());
    ChooserState st(4);
    Rng rng(1);
    std::array<std::uint16_t, 4> out{};
    const auto r = select(p, c, st, rng, out);
    CHECK(r.status == SelectStatus::Ok);
    REQUIRE(r.count == 1);
    CHECK(out[0] == 2);
}

TEST_CASE("select: health leaving nothing is reported as AllDown, never an empty answer") {
    auto c = candidates(2);
    c[0].health = Health::Down;
    c[1].enabled = false;
    ChooserState st(2);
    Rng rng(1);
    std::array<std::uint16_t, 2> out{};
    const auto r = select(Policy::defaultPolicy(), c, st, rng, out);
    CHECK(r.allDown());
    CHECK(r.status == SelectStatus::AllDown);
    CHECK(r.count == 0);
}

TEST_CASE("select: preference 0 takes a site out whatever the policy (doc/design.md 'Metric sources')") {
    auto c = candidates(3);
    c[1].preference = 0;
    ChooserState st(3);
    Rng rng(7);
    std::array<std::uint16_t, 1> out{};
    const Policy p = Policy::defaultPolicy();  // no `preference` stage
    for (int i = 0; i < 300; ++i) {
        auto copy = c;
        const auto r = select(p, copy, st, rng, out);
        REQUIRE(r.count == 1);
        CHECK(out[0] != 1);
    }
    // Every site at 0: AllExcluded, even without the stage.
    for (auto& x : c) x.preference = 0;
    CHECK(select(p, c, st, rng, out).status == SelectStatus::AllExcluded);
}

TEST_CASE("select: preference 0 everywhere is AllExcluded; no candidates at all is NoCandidates") {
    auto c = candidates(2);
    c[0].preference = 0;
    c[1].preference = 0;
    ChooserState st(2);
    Rng rng(1);
    std::array<std::uint16_t, 2> out{};
    const auto r = select(compile({"health", "preference", "random"}), c, st, rng, out);
    CHECK(r.status == SelectStatus::AllExcluded);
    CHECK_FALSE(r.allDown());
    CHECK(select(Policy::defaultPolicy(), {}, st, rng, out).status == SelectStatus::NoCandidates);
}

TEST_CASE("select: a soft filter that would leave nothing passes all on to the next stage") {
    auto c = candidates(3);
    for (auto& x : c) {
        x.sessionsMax = 100;
        x.sessionsUsed = 99;  // all over the threshold
    }
    c[1].cpu = 10;
    c[0].cpu = 50;
    c[2].cpu = 70;
    ChooserState st(3);
    Rng rng(1);
    std::array<std::uint16_t, 1> out{};
    const auto r = select(compile({"session-threshold", "cpu", "random"}), c, st, rng, out);
    REQUIRE(r.count == 1);
    CHECK(out[0] == 1);
}

TEST_CASE("select: answers > 1 gives distinct services, capped by the candidates and the buffer") {
    Params p;
    p.answers = 3;
    const Policy rr = compile({"health", "round-robin"}, p);
    auto c = candidates(4);
    ChooserState st(4);
    st.startAt(0);
    Rng rng(1);
    std::array<std::uint16_t, 8> out{};
    auto r = select(rr, c, st, rng, out);
    REQUIRE(r.count == 3);
    CHECK(out[0] == 0);
    CHECK(out[1] == 1);
    CHECK(out[2] == 2);
    // the round robin advanced once per record: next answer starts at D
    c = candidates(4);
    r = select(rr, c, st, rng, out);
    REQUIRE(r.count == 3);
    CHECK(out[0] == 3);
    CHECK(out[1] == 0);
    CHECK(out[2] == 1);

    // only two candidates survive: two records
    c = candidates(4);
    c[0].health = Health::Down;
    c[3].health = Health::Down;
    r = select(rr, c, st, rng, out);
    CHECK(r.count == 2);
    CHECK(std::set<int>{out[0], out[1]} == std::set<int>{1, 2});

    // the output buffer bounds the count too
    c = candidates(4);
    std::array<std::uint16_t, 1> one{};
    CHECK(select(rr, c, st, rng, one).count == 1);
}

TEST_CASE("select: answers > 1 with random choosers never repeats a service") {
    Params p;
    p.answers = 4;
    for (const char* chooser : {"random", "weighted-random", "load-factor", "weighted-round-robin",
                                "least-selected", "best-server"}) {
        const Policy pol = compile({"health", chooser}, p);
        ChooserState st(5);
        Rng rng(17);
        for (int q = 0; q < 200; ++q) {
            auto c = candidates(5);
            c[0].weight = 5;
            c[1].loadFactor = 90;
            std::array<std::uint16_t, 4> out{};
            const auto r = select(pol, c, st, rng, out);
            REQUIRE(r.count == 4);
            CHECK(std::set<int>(out.begin(), out.end()).size() == 4);
        }
    }
}

TEST_CASE("select: weighted-round-robin with answers = 2 fills the answer with spent members uncharged") {
    Params p;
    p.answers = 2;
    const Policy pol = compile({"weighted-round-robin"}, p);
    ChooserState st(2);
    st.startAt(0);
    Rng rng(1);
    std::string seq;
    for (int q = 0; q < 4; ++q) {
        auto c = candidates(2);
        c[0].weight = 3;
        c[1].weight = 1;
        std::array<std::uint16_t, 2> out{};
        REQUIRE(select(pol, c, st, rng, out).count == 2);
        seq += static_cast<char>('A' + out[0]);
        seq += static_cast<char>('A' + out[1]);
        seq += ' ';
    }
    // Two services, two records: every answer holds both. Query 2 finds B spent while A has weight left, so
    // B is added uncharged; query 3 starts a new cycle. No hang, no repeat.
    CHECK(seq == "AB AB AB AB ");
}
