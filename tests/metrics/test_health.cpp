#include <doctest/doctest.h>

#include "helpers.hpp"

using namespace gslb::metrics;
using namespace gslb::metrics::test;
using V = std::vector<int>;

TEST_CASE("health: keeps up, enabled services on up, enabled sites; Unknown counts as up") {
    auto c = candidates(7);
    c[0].health = Health::Up;
    c[1].health = Health::Down;
    c[2].health = Health::Unknown;  // no check configured / first check pending
    c[3].enabled = false;           // drained service
    c[4].siteUp = false;
    c[5].siteEnabled = false;  // drained site
    c[6].health = Health::Up;
    CHECK(kept(filterHealth, c) == V{0, 2, 6});
}

TEST_CASE("health: all down is a hard exclusion (0 kept), never 'pass all on'") {
    auto c = candidates(3);
    for (auto& x : c) x.health = Health::Down;
    CHECK(kept(filterHealth, c).empty());
}

TEST_CASE("health: stable order of what is kept") {
    auto c = candidates(5);
    c[1].health = Health::Down;
    c[3].health = Health::Down;
    CHECK(kept(filterHealth, c) == V{0, 2, 4});
}
