// The headroom chooser and its TTL rule (metrics/balance.hpp): worked values and many draws.
#include <doctest/doctest.h>

#include "helpers.hpp"
#include "metrics/balance.hpp"
#include "metrics/stage_registry.hpp"

using namespace gslb::metrics;
using namespace gslb::metrics::test;

namespace {

// Three sites of 500, 300 and 100 session seats with `used` in use each.
std::vector<Candidate> sites(double u0, double u1, double u2) {
    auto c = candidates(3);
    const double max[] = {500, 300, 100}, used[] = {u0, u1, u2};
    for (int i = 0; i < 3; ++i) {
        c[i].sessionsMax = max[i];
        c[i].sessionsUsed = used[i];
    }
    return c;
}

Params ttls(std::uint32_t ttlMin, std::uint32_t ttl = 30) {
    Params p;
    p.ttlMin = ttlMin;
    p.ttl = ttl;
    return p;
}

std::vector<Share> run(const std::vector<Candidate>& c, const Params& p, std::uint64_t taken = 0,
                       ShareSummary* sum = nullptr) {
    std::vector<Share> out(c.size());
    auto s = headroomShares(c, taken, p, out);
    if (sum) *sum = s;
    return out;
}

}  // namespace

TEST_CASE("headroom: equal utilisation gives shares in proportion to capacity") {
    auto c = sites(400, 240, 80);  // 80 % each: headroom 0.2
    for (auto& x : c) x.demand = 9;
    ShareSummary sum;
    auto s = run(c, ttls(1), 0, &sum);
    CHECK(sum.basis == ShareBasis::Capacity);
    CHECK(s[0].measured.basis == LoadBasis::Sessions);
    CHECK(s[0].utilisation == doctest::Approx(0.8));
    CHECK(s[0].headroom == doctest::Approx(0.2));
    // targets 500 x 0.2 : 300 x 0.2 : 100 x 0.2 = 5 : 3 : 1
    CHECK(s[0].target == doctest::Approx(5.0 / 9));
    CHECK(s[1].target == doctest::Approx(3.0 / 9));
    CHECK(s[2].target == doctest::Approx(1.0 / 9));
    // No flow committed yet: the deficits are the targets x the demand (9/s): 5, 3, 1.
    CHECK(s[0].deficit == doctest::Approx(5));
    CHECK(s[2].deficit == doctest::Approx(1));
    CHECK(s[0].probability == doctest::Approx(5.0 / 9));
    CHECK(s[2].probability == doctest::Approx(1.0 / 9));
}

TEST_CASE("headroom: a fuller site gets less than its capacity share; a full one nothing") {
    auto c = sites(450, 150, 50);  // 90 %, 50 %, 50 %
    auto s = run(c, ttls(1));
    // 500 x 0.1 = 50, 300 x 0.5 = 150, 100 x 0.5 = 50: 1/5, 3/5, 1/5
    CHECK(s[0].target == doctest::Approx(0.2));
    CHECK(s[1].target == doctest::Approx(0.6));
    CHECK(s[2].target == doctest::Approx(0.2));
    c = sites(500, 150, 120);  // full, 50 %, over full (120 of 100: headroom 0, not negative)
    s = run(c, ttls(1));
    CHECK(s[0].target == 0);
    CHECK(s[1].target == 1);
    CHECK(s[2].target == 0);
    CHECK(s[2].headroom == 0);
    // Every site full: in proportion to capacity (the TTL rule shortens the answers).
    s = run(sites(500, 300, 100), ttls(1));
    CHECK(s[0].target == doctest::Approx(5.0 / 9));
    CHECK(s[2].target == doctest::Approx(1.0 / 9));
}

TEST_CASE("headroom: committed flow moves the pick toward the target shares") {
    auto c = sites(400, 240, 80);
    const double flow[] = {10, 2, 0};
    for (int i = 0; i < 3; ++i) {
        c[i].flow = flow[i];
        c[i].demand = 6;
    }
    ShareSummary sum;
    auto s = run(c, ttls(1), 0, &sum);
    CHECK(sum.totalFlow == 12);
    // After this answer the flow is 18/s: targets 10, 6, 2 against 10, 2, 0 committed: deficits 0, 4, 2.
    CHECK(s[0].deficit == doctest::Approx(0).epsilon(1e-9));
    CHECK(s[1].deficit == doctest::Approx(4));
    CHECK(s[2].deficit == doctest::Approx(2));
    CHECK(s[0].probability == doctest::Approx(0).epsilon(1e-9));
    CHECK(s[1].probability == doctest::Approx(2.0 / 3));
    CHECK(s[2].probability == doctest::Approx(1.0 / 3));
    // ttl_min 3 s: this resolver brings 6 x 3 = 18 sessions, more than half the small site's 20 free seats:
    // it does not fit there while the 300-seat site (60 free) can take it.
    s = run(c, ttls(3), 0, &sum);
    CHECK(s[2].fits == false);
    CHECK(s[1].fits == true);
    CHECK(sum.anyFits);
    CHECK(s[1].probability == 1);
    CHECK(s[2].probability == 0);
    // ttl_min 6 s: 36 sessions, more than half of 60 too; only the 500-seat site (100 free) takes them.
    s = run(c, ttls(6), 0, &sum);
    CHECK(s[1].fits == false);
    CHECK(s[0].fits == true);
    CHECK(s[0].probability == 1);  // its deficit is 0: the target decides among those that fit
    // A batch that fits nowhere (demand 200/s): drawn only from the site with the most free seats (the
    // nearest to fitting), never the small one; two with as many free seats share by their deficits.
    for (auto& x : c) x.demand = 200;
    s = run(c, ttls(6), 0, &sum);
    CHECK_FALSE(sum.anyFits);
    CHECK(s[0].nearest);
    CHECK_FALSE(s[1].nearest);
    CHECK(s[0].probability == 1);
    CHECK(s[2].probability == 0);
    c[1].sessionsUsed = 200;  // 100 free as well
    s = run(c, ttls(6), 0, &sum);
    CHECK(s[1].nearest);
    CHECK(s[0].probability + s[1].probability == doctest::Approx(1));
    CHECK(s[1].probability > 0);
    CHECK(s[2].probability == 0);
}

TEST_CASE("headroom: the projected load counts the sessions in flight, less those that end meanwhile") {
    // projectedLoad's worked example: 80 in use, 4/s committed, 20 to come over 20 / 4 = 5 s, S = 20 s:
    // 80 x 5 / (20 + 2.5) = 17.8 end, 80 + 20 - 17.8 = 82.2.
    CHECK(projectedLoad(80, 4, 20, 20) == doctest::Approx(80 + 20 - 400.0 / 22.5));
    CHECK(projectedLoad(80, 0, 0, 20) == 80);          // nothing in flight
    CHECK(projectedLoad(80, 4, 20, kUnknown) == 100);  // S unknown: nothing ends
    CHECK(std::isnan(projectedLoad(kUnknown, 4, 20, 20)));
    CHECK(projectedLoad(10, 1, 1, 0.1) == 0);  // never below 0
    // Three sites at 80 %, 10/s and 2/s committed to the first two, 50 and 10 sessions still to come (5 s
    // each), none to the third: S = 720 / 12 = 60 s.
    auto c = sites(400, 240, 80);
    const double flow[] = {10, 2, 0}, pending[] = {50, 10, 0};
    for (int i = 0; i < 3; ++i) {
        c[i].flow = flow[i];
        c[i].pending = pending[i];
    }
    ShareSummary sum;
    auto s = run(c, ttls(1), 0, &sum);
    CHECK(sum.sessionTime == doctest::Approx(60));
    // 400 + 50 - 400 x 5 / 62.5 = 418 (83.6 %); 240 + 10 - 19.2 = 230.8 (76.9 %); 80, no flow (80 %).
    CHECK(s[0].projected == doctest::Approx(418));
    CHECK(s[1].projected == doctest::Approx(230.8));
    CHECK(s[2].projected == 80);
    CHECK(s[0].measured.value == doctest::Approx(0.8));  // explain shows both
    CHECK(s[0].utilisation == doctest::Approx(0.836));
    // Targets 500 x 0.164 = 82, 300 x 0.2307 = 69.2, 100 x 0.2 = 20: the herded first site gets less than
    // its capacity share (5/9), the second more.
    CHECK(s[0].target == doctest::Approx(82 / 171.2));
    CHECK(s[1].target == doctest::Approx(69.2 / 171.2));
    CHECK(s[2].target == doctest::Approx(20 / 171.2));
    // Pending without a flow (a view's rounding) is no pending.
    c[2].pending = 5;
    s = run(c, ttls(1));
    CHECK(s[2].pending == 0);
    CHECK(s[2].projected == 80);
}

TEST_CASE(
    "headroom: unknown capacity counts as the mean, unknown load as the mean utilisation, never empty") {
    auto c = sites(400, 240, 0);
    c[2].sessionsMax = kUnknown;  // no session table ...
    c[2].sessionsUsed = kUnknown;
    auto s = run(c, ttls(1));
    // ... and no capacity: the mean capacity of the others (400) at their mean utilisation (640 / 800 = 0.8).
    CHECK(std::isnan(s[2].measured.capacity));
    CHECK(s[2].capacity == 400);
    CHECK(s[2].utilisation == doctest::Approx(0.8));
    CHECK(s[0].target == doctest::Approx(100.0 / 240));
    CHECK(s[2].target == doctest::Approx(80.0 / 240));
    // A configured capacity with its connections unknown (stale): that capacity, the mean utilisation.
    c[2].capacity = 100;
    s = run(c, ttls(1));
    CHECK(s[2].measured.basis == LoadBasis::Connections);
    CHECK(s[2].capacity == 100);
    CHECK(s[2].utilisation == doctest::Approx(0.8));
    CHECK(s[2].target == doctest::Approx(20.0 / 180));
    // With its connections known: 30 of 100.
    c[2].connections = 30;
    s = run(c, ttls(1));
    CHECK(s[2].utilisation == doctest::Approx(0.3));
    CHECK(s[2].target == doctest::Approx(70.0 / 230));
    // The site's session table wins over the service's capacity when both are known.
    c[2].sessionsMax = 1000;
    c[2].sessionsUsed = 900;
    s = run(c, ttls(1));
    CHECK(s[2].measured.basis == LoadBasis::Sessions);
    CHECK(s[2].utilisation == doctest::Approx(0.9));
}

TEST_CASE("headroom: no capacity known anywhere: static weights") {
    auto c = candidates(3);
    c[0].weight = 5;
    c[1].weight = 3;
    c[2].weight = 1;
    ShareSummary sum;
    auto s = run(c, ttls(1), 0, &sum);
    CHECK(sum.basis == ShareBasis::Weight);
    CHECK(s[0].probability == doctest::Approx(5.0 / 9));
    CHECK(s[2].probability == doctest::Approx(1.0 / 9));
    // Taken candidates take no part (answers > 1).
    s = run(c, ttls(1), 0b001);
    CHECK(s[0].probability == 0);
    CHECK(s[1].probability == doctest::Approx(0.75));
}

TEST_CASE("headroom: many draws follow the probabilities") {
    constexpr int kDraws = 100000;
    auto c = sites(400, 240, 80);
    const double flow[] = {10, 2, 0};
    for (int i = 0; i < 3; ++i) {
        c[i].flow = flow[i];
        c[i].demand = 6;
    }
    const auto got = shares(chooseHeadroom, c, 21, kDraws, ttls(1));
    CHECK(got[0] == 0);
    CHECK(std::fabs(got[1] - 2.0 / 3) <= sixSigma(2.0 / 3, kDraws));
    CHECK(std::fabs(got[2] - 1.0 / 3) <= sixSigma(1.0 / 3, kDraws));
    const auto eq = shares(chooseHeadroom, sites(400, 240, 80), 22, kDraws, ttls(1));
    for (int i = 0; i < 3; ++i) {
        const double want = (i == 0 ? 5.0 : i == 1 ? 3.0 : 1.0) / 9;
        CHECK(std::fabs(eq[i] - want) <= sixSigma(want, kDraws));
    }
}

TEST_CASE("headroom: the registry knows the chooser") {
    const StageInfo* s = findStage("headroom");
    REQUIRE(s != nullptr);
    CHECK(s->isChooser);
    CHECK((s->chooser == &chooseHeadroom));
}

TEST_CASE("adaptive TTL: the header's worked example and every reason") {
    auto c = candidates(1)[0];
    c.sessionsMax = 100;
    c.sessionsUsed = 60;  // 40 free
    c.demand = 2;         // 2 x 30 = 60 > 40 / 2: floor(20 / 2) = 10 s
    auto t = adaptiveTtl(c, 6, 30);
    CHECK(t.ttl == 10);
    CHECK(t.reason == TtlReason::Headroom);
    c.demand = 0.5;  // 15 <= 20
    t = adaptiveTtl(c, 6, 30);
    CHECK(t.ttl == 30);
    CHECK(t.reason == TtlReason::Calm);
    c.demand = 10;  // floor(2) -> ttl_min
    CHECK(adaptiveTtl(c, 6, 30).ttl == 6);
    c.demand = kUnknown;  // no demand known: calm
    CHECK(adaptiveTtl(c, 6, 30).reason == TtlReason::Calm);
    c.demand = 0.5;
    c.suspect = true;
    t = adaptiveTtl(c, 6, 30);
    CHECK(t.ttl == 6);
    CHECK(t.reason == TtlReason::Suspect);
    c.suspect = false;
    c.sessionsMax = kUnknown;
    c.sessionsUsed = kUnknown;
    c.capacity = 100;  // capacity configured, connections unknown: stale, ttl / 2
    t = adaptiveTtl(c, 6, 30);
    CHECK(t.ttl == 15);
    CHECK(t.reason == TtlReason::Stale);
    CHECK(adaptiveTtl(c, 20, 30).ttl == 20);  // ttl / 2 below ttl_min: ttl_min
    t = adaptiveTtl(c, 30, 30);
    CHECK(t.ttl == 30);
    CHECK(t.reason == TtlReason::Fixed);
    CHECK(std::string(ttlReasonName(TtlReason::Headroom)) == "headroom");
}
