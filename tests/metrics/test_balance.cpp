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

// gamma 0: the targets of capacity x headroom alone, so the other rules' worked values stay round (the
// square-root margin has its own cases below, at the default gamma).
Params ttls(std::uint32_t ttlMin, std::uint32_t ttl = 30) {
    Params p;
    p.ttlMin = ttlMin;
    p.ttl = ttl;
    p.sqrtMargin = 0;
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

TEST_CASE("headroom: the square-root margin, the header's worked example") {
    CHECK(Params{}.sqrtMargin == 0.25);  // the default the header and doc/lab.md measured
    auto c = candidates(3);
    const double max[] = {400, 100, 25}, used[] = {320, 80, 20};  // 80 % each
    for (int i = 0; i < 3; ++i) {
        c[i].sessionsMax = max[i];
        c[i].sessionsUsed = used[i];
    }
    ShareSummary sum;
    auto s = run(c, Params{}, 0, &sum);
    // free 80, 20, 5 (F = 105); sum √C = 20 + 10 + 5 = 35; beta = 0.25 x 105 / 35 = 0.75 seats per √seat.
    CHECK(sum.beta == doctest::Approx(0.75));
    CHECK(s[0].free == doctest::Approx(80));
    CHECK(s[2].free == doctest::Approx(5));
    CHECK(s[0].margin == doctest::Approx(15));
    CHECK(s[1].margin == doctest::Approx(7.5));
    CHECK(s[2].margin == doctest::Approx(3.75));
    // targets 65, 12.5, 1.25 of 78.75 (= (1 - gamma) F): 0.825, 0.159, 0.016 against 16 : 4 : 1 by capacity.
    CHECK(s[0].target == doctest::Approx(65 / 78.75));
    CHECK(s[1].target == doctest::Approx(12.5 / 78.75));
    CHECK(s[2].target == doctest::Approx(1.25 / 78.75));
    CHECK(s[0].probability == doctest::Approx(65 / 78.75));
    // The fixed point (a = 420 / 78.75 = 16/3, a x beta = 4): free 3 (C + 4 √C) / 19 = 1440/19, 420/19,
    // 135/19; there the targets are the load's shares (6160/19, 1480/19, 340/19 of 420: 81 %, 78 %, 72 %
    // used).
    const double fixedUsed[] = {6160.0 / 19, 1480.0 / 19, 340.0 / 19};
    for (int i = 0; i < 3; ++i) c[i].sessionsUsed = fixedUsed[i];
    s = run(c, Params{}, 0, &sum);
    CHECK(sum.beta == doctest::Approx(0.75));
    for (int i = 0; i < 3; ++i) CHECK(s[i].target == doctest::Approx(fixedUsed[i] / 420));
    // gamma 0: capacity x headroom, 16 : 4 : 1 at 80 % each.
    for (int i = 0; i < 3; ++i) c[i].sessionsUsed = used[i];
    s = run(c, ttls(1), 0, &sum);
    CHECK(sum.beta == 0);
    CHECK(s[0].margin == 0);
    CHECK(s[2].target == doctest::Approx(1.0 / 21));
    // gamma 0.5: beta 1.5, margins 30, 15, 7.5: targets 50, 5, 0 (5 - 7.5 < 0): the small site gets nothing.
    Params half;
    half.sqrtMargin = 0.5;
    s = run(c, half, 0, &sum);
    CHECK(sum.beta == doctest::Approx(1.5));
    CHECK(s[0].target == doctest::Approx(10.0 / 11));
    CHECK(s[2].target == 0);
    CHECK(s[2].probability == 0);
}

TEST_CASE("headroom: the square-root margin on 500, 300 and 100 seats, unknowns, full and weights") {
    // 80 % each: free 100, 60, 20 (F = 180), sum √C = 49.681, beta = 45 / 49.681 = 0.9058; margins 20.25,
    // 15.69, 9.06; targets 79.75, 44.31, 10.94 of 135: 0.5907, 0.3282, 0.0811 against 5/9, 3/9, 1/9.
    auto c = sites(400, 240, 80);
    ShareSummary sum;
    auto s = run(c, Params{}, 0, &sum);
    const double rootSum = std::sqrt(500.0) + std::sqrt(300.0) + 10;
    CHECK(sum.beta == doctest::Approx(45 / rootSum));
    CHECK(s[0].margin == doctest::Approx(45 / rootSum * std::sqrt(500.0)));
    CHECK(s[0].target == doctest::Approx(0.590713).epsilon(1e-5));
    CHECK(s[1].target == doctest::Approx(0.328233).epsilon(1e-5));
    CHECK(s[2].target == doctest::Approx(0.081054).epsilon(1e-4));
    CHECK(s[0].target + s[1].target + s[2].target == doctest::Approx(1));
    // Unknown capacity: the mean (400), and its √ (20) in the margin; load unknown: the mean utilisation.
    c = sites(400, 240, 0);
    c[2].sessionsMax = kUnknown;
    c[2].sessionsUsed = kUnknown;
    s = run(c, Params{}, 0, &sum);
    CHECK(s[2].capacity == 400);
    CHECK(s[2].free == doctest::Approx(80));                                       // 400 x (1 - 0.8)
    const double beta2 = 0.25 * 240 / (std::sqrt(500.0) + std::sqrt(300.0) + 20);  // 1.0053
    CHECK(sum.beta == doctest::Approx(beta2));
    CHECK(s[2].margin == doctest::Approx(beta2 * 20));
    CHECK(s[2].target == doctest::Approx((80 - beta2 * 20) / 180));  // 59.89 of 180
    // Every site full: no margin (F = 0), in proportion to capacity as without it.
    s = run(sites(500, 300, 100), Params{}, 0, &sum);
    CHECK(sum.beta == 0);
    CHECK(s[0].margin == 0);
    CHECK(s[0].target == doctest::Approx(5.0 / 9));
    // One site with free seats (the others full, failed elsewhere or dropped): it takes everything, whatever
    // its margin.
    s = run(sites(500, 200, 100), Params{}, 0, &sum);
    CHECK(s[1].target == 1);
    // gamma 1 at its own fixed point (free ∝ √C: 20, 10, 5 of 400, 100, 25): every target 0 up to rounding,
    // so the free seats themselves (4 : 2 : 1), never a division by 0 nor a share of rounding noise.
    c = candidates(3);
    const double max[] = {400, 100, 25}, used[] = {380, 90, 20};
    for (int i = 0; i < 3; ++i) {
        c[i].sessionsMax = max[i];
        c[i].sessionsUsed = used[i];
    }
    Params one;
    one.sqrtMargin = 1;
    s = run(c, one, 0, &sum);
    CHECK(sum.beta == doctest::Approx(1));
    CHECK(s[0].target == doctest::Approx(4.0 / 7));
    CHECK(s[2].target == doctest::Approx(1.0 / 7));
    // Taken candidates (answers > 1) take no part in F or sum √C: the two left at 80 % are 400 and 100
    // seats: free 80, 20, beta = 0.25 x 100 / 30, margins 16.7, 8.3, targets 63.3, 11.7 of 75.
    for (int i = 0; i < 3; ++i) c[i].sessionsUsed = max[i] * 0.8;
    s = run(c, Params{}, 0b100, &sum);
    CHECK(sum.beta == doctest::Approx(25.0 / 30));
    CHECK(s[0].target == doctest::Approx((80 - 50.0 / 3) / 75));
    CHECK(s[2].probability == 0);
    // No capacity known: the weights, no margin.
    c = candidates(3);
    c[0].weight = 5;
    c[1].weight = 3;
    c[2].weight = 1;
    s = run(c, Params{}, 0, &sum);
    CHECK(sum.basis == ShareBasis::Weight);
    CHECK(sum.beta == 0);
    CHECK(s[0].target == doctest::Approx(5.0 / 9));
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
