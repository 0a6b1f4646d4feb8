#include <doctest/doctest.h>

#include <vector>

#include "metrics/health/aggregate.hpp"

using namespace gslb::metrics;
using namespace gslb::metrics::health;
using H = Health;

TEST_CASE("slot health: all up -> up, any down -> down") {
    CHECK(combineChecks(std::vector<H>{H::Up}) == H::Up);
    CHECK(combineChecks(std::vector<H>{H::Up, H::Up}) == H::Up);
    CHECK(combineChecks(std::vector<H>{H::Up, H::Down}) == H::Down);
    CHECK(combineChecks(std::vector<H>{H::Down, H::Up, H::Up}) == H::Down);
}

TEST_CASE("slot health: no result yet -> no news; a check still unknown does not hide the others") {
    CHECK_FALSE(combineChecks(std::vector<H>{H::Unknown}).has_value());
    CHECK_FALSE(combineChecks(std::vector<H>{}).has_value());
    CHECK(combineChecks(std::vector<H>{H::Unknown, H::Up}) == H::Up);
    CHECK(combineChecks(std::vector<H>{H::Unknown, H::Down}) == H::Down);
}

TEST_CASE("site down only when every service is checked and down") {
    using S = SiteService;
    CHECK(siteDown(std::vector<S>{{true, H::Down}, {true, H::Down}}));
    CHECK_FALSE(siteDown(std::vector<S>{{true, H::Down}, {true, H::Up}}));
    CHECK_FALSE(siteDown(std::vector<S>{{true, H::Down}, {true, H::Unknown}}));
    CHECK_FALSE(siteDown(std::vector<S>{{true, H::Down}, {false, H::Unknown}}));  // unchecked keeps it up
    CHECK_FALSE(siteDown(std::vector<S>{{false, H::Unknown}}));
    CHECK_FALSE(siteDown(std::vector<S>{}));
}
