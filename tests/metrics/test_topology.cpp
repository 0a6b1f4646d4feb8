// topology stage: ranks (region lists) and distances (nearest). Rules in metrics/stages/stages.hpp.
#include <doctest/doctest.h>

#include "helpers.hpp"

using namespace gslb::metrics;
using namespace gslb::metrics::test;

TEST_CASE("topology: the lowest rank present wins; unlisted sites go") {
    auto c = candidates(4);
    c[0].topoRank = 1;
    c[1].topoRank = kNoRank;
    c[2].topoRank = 1;
    c[3].topoRank = 2;
    CHECK(kept(filterTopology, c) == std::vector<int>{0, 2});
    SUBCASE("the first site has no candidate left (health took it): the next one wins") {
        c.erase(c.begin());
        c.erase(c.begin() + 1);  // drops index 2
        CHECK(kept(filterTopology, c) == std::vector<int>{3});
    }
}

TEST_CASE("topology: no rank and no distance known (unknown client) -> all pass") {
    auto c = candidates(3);
    CHECK(kept(filterTopology, c) == std::vector<int>{0, 1, 2});
}

TEST_CASE("topology nearest: within nearest + tolerance km; unknown distances kept") {
    auto c = candidates(4);
    c[0].distanceKm = 500;
    c[1].distanceKm = 120;
    c[2].distanceKm = 160;
    c[3].distanceKm = kUnknown;
    Params p;
    CHECK(kept(filterTopology, c, p) == std::vector<int>{1, 3});
    p.nearestTolerance = 50;
    CHECK(kept(filterTopology, c, p) == std::vector<int>{1, 2, 3});
    p.nearestTolerance = 1000;
    CHECK(kept(filterTopology, c, p) == std::vector<int>{0, 1, 2, 3});
}
