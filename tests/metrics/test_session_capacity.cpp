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
