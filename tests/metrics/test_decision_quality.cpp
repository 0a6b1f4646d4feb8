// Decision quality of the seeds' pipeline over time (brocadeStages() in helpers.hpp, the default before
// headroom): a new user's trial saw 200 of 200 answers go to one of three equal sites, switching every 2 s,
// because LAN FlashBack noise is far above 10 %. This simulates health-check rounds with jittery times (and
// the odd scheduling hiccup) through the real smoothing (metrics/health/smoothing.hpp) and that pipeline, and
// counts the answers.
#include <doctest/doctest.h>

#include <array>
#include <cstdio>
#include <random>

#include "helpers.hpp"
#include "metrics/health/smoothing.hpp"
#include "metrics/select.hpp"

using namespace gslb::metrics;
using namespace gslb::metrics::test;

namespace {

struct Trial {
    std::array<double, 3> shares{};  // answer share per site
    int longestRun = 0;              // most consecutive check rounds in which one site took every answer
};

// 3 sites; `rounds` check rounds, `perRound` queries between rounds. A check's time is base + an
// exponential jitter (mean 0.4 ms), and 3 % of checks hit a 20..60 ms hiccup.
Trial run(std::array<double, 3> baseMs, std::uint64_t seed, const Params& params = {}, int rounds = 600,
          int perRound = 20) {
    std::mt19937_64 gen(seed);
    std::exponential_distribution<double> jitter(1.0 / 0.4);
    std::uniform_real_distribution<double> u(0, 1);
    std::array<health::RollingMedian, 3> l4;
    std::array<double, 3> count{};
    Policy policy = Policy::defaultPolicy();
    std::string error;
    REQUIRE_MESSAGE(Policy::compile(brocadeStages(), params, policy, error), error);
    ChooserState state(3);
    Rng rng(seed);
    std::array<std::uint16_t, 1> out{};
    int run = 0, longest = 0, lastOnly = -1;
    for (int r = 0; r < rounds; ++r) {
        for (int s = 0; s < 3; ++s) {
            double t = baseMs[s] + jitter(gen);
            if (u(gen) < 0.03) t += 20 + 40 * u(gen);
            l4[s].add(t);
        }
        std::array<double, 3> roundCount{};
        for (int q = 0; q < perRound; ++q) {
            auto c = candidates(3);
            for (int s = 0; s < 3; ++s) c[s].l4Ms = l4[s].value();
            const auto res = select(policy, c, state, rng, out);
            REQUIRE(res.count == 1);
            count[out[0]] += 1;
            roundCount[out[0]] += 1;
        }
        int only = -1;
        for (int s = 0; s < 3; ++s)
            if (roundCount[s] == perRound) only = s;
        run = only >= 0 && only == lastOnly ? run + 1 : (only >= 0 ? 1 : 0);
        lastOnly = only;
        longest = std::max(longest, run);
    }
    Trial t;
    for (int s = 0; s < 3; ++s) t.shares[s] = count[s] / (double(rounds) * perRound);
    t.longestRun = longest;
    return t;
}

}  // namespace

TEST_CASE("decision quality: three equal sites with jittery checks each get about a third") {
    for (std::uint64_t seed : {1u, 2u, 3u}) {
        const Trial t = run({0.3, 0.3, 0.3}, seed);
        std::printf("equal sites, seed %llu: shares %.3f %.3f %.3f, longest one-site run %d rounds\n",
                    static_cast<unsigned long long>(seed), t.shares[0], t.shares[1], t.shares[2],
                    t.longestRun);
        for (double s : t.shares) {
            CHECK(s > 0.30);
            CHECK(s < 0.37);
        }
        // 20 answers per round all to one site by chance: (1/3)^19 per round; never two rounds running.
        CHECK(t.longestRun <= 1);
    }
}

TEST_CASE("decision quality: without the floor, LAN noise decides (what the trial saw)") {
    Params p;
    p.flashbackFloorMs = 0;
    const Trial t = run({0.3, 0.3, 0.3}, 1, p);
    std::printf("equal sites, floor 0: shares %.3f %.3f %.3f, longest one-site run %d rounds\n", t.shares[0],
                t.shares[1], t.shares[2], t.longestRun);
    CHECK(t.longestRun >= 3);  // one site takes every answer for several check rounds in a row
}

TEST_CASE("decision quality: a site 30 ms slower gets almost none, the other two share") {
    for (std::uint64_t seed : {1u, 2u, 3u}) {
        const Trial t = run({0.3, 0.3, 30.3}, seed);
        std::printf("one site 30 ms slower, seed %llu: shares %.3f %.3f %.3f\n",
                    static_cast<unsigned long long>(seed), t.shares[0], t.shares[1], t.shares[2]);
        CHECK(t.shares[2] < 0.01);
        CHECK(t.shares[0] > 0.45);
        CHECK(t.shares[1] > 0.45);
    }
}

TEST_CASE("decision quality: sites a few ms apart on a WAN are equal, tens of ms apart are not") {
    const Trial near = run({10, 12, 14}, 4);
    for (double s : near.shares) CHECK(s > 0.28);
    const Trial far = run({10, 12, 40}, 5);
    CHECK(far.shares[2] < 0.01);
}
