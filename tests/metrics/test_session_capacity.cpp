#include <doctest/doctest.h>

#include "helpers.hpp"

using namespace gslb::metrics;
using namespace gslb::metrics::test;
using V = std::vector<int>;

namespace {
std::vector<Candidate> available(std::vector<double> avail, double max = 2000000) {
    auto c = candidates(avail.size());
    for (std::size_t i = 0; i < c.size(); ++i) {
        c[i].sessionsMax = max;
        c[i].sessionsUsed = std::isnan(avail[i]) ? NAN : max - avail[i];
    }
    return c;
}
}  // namespace

TEST_CASE(
    "session-capacity: Brocade's example, 1,000,000 / 800,000 / 950,000 available at 10 % (Brocade Virtual "
    "ADX GSLB Guide, p. 10)") {
    CHECK(kept(filterSessionCapacity, available({1000000, 800000, 950000})) == V{0, 2});
    // order of the input does not matter
    CHECK(kept(filterSessionCapacity, available({800000, 950000, 1000000})) == V{1, 2});
}

TEST_CASE("session-capacity: tolerance 0 keeps only the most available; 25 % keeps all three") {
    Params p;
    p.sessionTolerance = 0;
    p.sessionFloor = 0;
    CHECK(kept(filterSessionCapacity, available({1000000, 800000, 950000}), p) == V{0});
    p.sessionTolerance = 25;
    CHECK(kept(filterSessionCapacity, available({1000000, 800000, 950000}), p) == V{0, 1, 2});
}

TEST_CASE("session-capacity: available is max - used, per site size") {
    auto c = candidates(2);
    c[0].sessionsMax = 1000000;  // 200,000 used -> 800,000 available
    c[0].sessionsUsed = 200000;
    c[1].sessionsMax = 4000000;  // 3,000,000 used -> 1,000,000 available
    c[1].sessionsUsed = 3000000;
    CHECK(kept(filterSessionCapacity, c) == V{1});
}

TEST_CASE("session-capacity: unknown is kept but never sets the bar; all unknown passes all") {
    CHECK(kept(filterSessionCapacity, available({NAN, 800000, 790000})) == V{0, 1, 2});
    CHECK(kept(filterSessionCapacity, available({NAN, 1000000, 800000})) == V{0, 1});
    CHECK(kept(filterSessionCapacity, available({NAN, NAN})) == V{0, 1});
}

TEST_CASE("session-capacity: over-full sites count as 0 available") {
    auto c = candidates(2);
    c[0].sessionsMax = 100;
    c[0].sessionsUsed = 150;
    c[1].sessionsMax = 100;
    c[1].sessionsUsed = 100;
    CHECK(kept(filterSessionCapacity, c) == V{0, 1});
}

TEST_CASE("session-capacity: near full, a few seats are no difference (the floor, of the smaller table)") {
    // Tables of 500, 300 and 100 seats with 3, 2 and 40 free: 40 vs 3 differ by 37 > 5 % of the smaller
    // table (100: 5 seats), so the big sites are dropped as before. Then the small site fills: the best is 3,
    // and Brocade's tolerance alone drops 2 (33 % of 3 below) — one seat decided every answer. With the
    // floor, 2 is within 5 % of min(300, 500) = 15 seats, and 0 (or 2) within 5 % of min(100, 500) = 5.
    auto c = candidates(3);
    c[0].sessionsMax = 500;
    c[0].sessionsUsed = 497;
    c[1].sessionsMax = 300;
    c[1].sessionsUsed = 298;
    c[2].sessionsMax = 100;
    c[2].sessionsUsed = 60;
    CHECK(kept(filterSessionCapacity, c) == V{2});
    c[2].sessionsUsed = 100;  // the small one full too: 0 free, 3 below the best and within 5 of its 100
    CHECK(kept(filterSessionCapacity, c) == V{0, 1, 2});
    c[2].sessionsUsed = 98;  // its 2 free; 5 % of the smaller table (min(500, 100) = 100) is 5 seats
    CHECK(kept(filterSessionCapacity, c) == V{0, 1, 2});
    Params p;
    p.sessionFloor = 0;  // Brocade's rule alone: one seat decides
    CHECK(kept(filterSessionCapacity, c, p) == V{0});
    // The floor is taken against the smaller table: 1,000,000 and 800,000 free in tables of 2,000,000 differ
    // by 200,000 > 5 % of 2,000,000 (100,000), so Brocade's worked example holds with the default floor.
    CHECK(kept(filterSessionCapacity, available({1000000, 800000, 950000})) == V{0, 2});
}
