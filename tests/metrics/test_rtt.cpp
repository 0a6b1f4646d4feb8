#include <doctest/doctest.h>

#include "helpers.hpp"
#include "metrics/policy.hpp"

using namespace gslb::metrics;
using namespace gslb::metrics::test;
using V = std::vector<int>;

namespace {
std::vector<Candidate> rtts(std::vector<double> ms) {
    auto c = candidates(ms.size());
    for (std::size_t i = 0; i < c.size(); ++i) c[i].rttMs = ms[i];
    return c;
}
}  // namespace

TEST_CASE("rtt: the fastest site and those within 10 % of the larger or 5 ms") {
    // 80 ms fastest; 88 differs by 8 <= 8.8 (10 % of 88): equal; 90 differs by 10 > 9: slower; 150 slower.
    CHECK(kept(filterRtt, rtts({88, 80, 90, 150})) == V{0, 1});
    // Below the floor: 2 and 6.9 ms are equal (4.9 ms apart), 7.1 is not.
    CHECK(kept(filterRtt, rtts({2, 6.9, 7.1})) == V{0, 1});
    Params p;
    p.rttTolerance = 50;  // 30 vs 50: 20 <= 25 (50 % of 50)
    p.rttFloorMs = 0;
    CHECK(kept(filterRtt, rtts({30, 50, 61}), p) == V{0, 1});
}

TEST_CASE("rtt: unknown is never zero — a site without a figure stays beside the best known") {
    CHECK(kept(filterRtt, rtts({NAN, 40, 120})) == V{0, 1});
    // No figure for the client's prefix at all: everything passes to the stages after it.
    CHECK(kept(filterRtt, rtts({NAN, NAN, NAN})) == V{0, 1, 2});
    // One site known: it is the best; the unknown ones stay.
    CHECK(kept(filterRtt, rtts({NAN, 300, NAN})) == V{0, 1, 2});
}

TEST_CASE("rtt: registered by name; its keys' ranges are checked") {
    Policy compiled = Policy::defaultPolicy();
    std::string error;
    CHECK(Policy::compile({"health", "rtt", "random"}, Params{}, compiled, error));
    Params p;
    p.rttTolerance = 101;
    REQUIRE_FALSE(Policy::compile({"rtt", "random"}, p, compiled, error));
    CHECK(error == "rtt_tolerance = 101 is out of range 0..100 (percent)");
    p = Params{};
    p.rttFloorMs = -1;
    REQUIRE_FALSE(Policy::compile({"rtt", "random"}, p, compiled, error));
    CHECK(error == "rtt_floor = -1 is out of range 0..10000 (ms)");
}
