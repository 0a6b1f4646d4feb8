#include <doctest/doctest.h>

#include "helpers.hpp"

using namespace gslb::metrics;
using namespace gslb::metrics::test;
using V = std::vector<int>;

namespace {
std::vector<Candidate> sessions(std::vector<std::pair<double, double>> usedMax) {
    auto c = candidates(usedMax.size());
    for (std::size_t i = 0; i < c.size(); ++i) {
        c[i].sessionsUsed = usedMax[i].first;
        c[i].sessionsMax = usedMax[i].second;
    }
    return c;
}
}  // namespace

TEST_CASE("session-threshold: keeps sites at most 90 % used (default)") {
    // 80 %, 90 % (at the threshold: kept), 95 %
    auto c = sessions({{800, 1000}, {900, 1000}, {950, 1000}});
    CHECK(kept(filterSessionThreshold, c) == V{0, 1});
}

TEST_CASE("session-threshold: configured threshold") {
    auto c = sessions({{800, 1000}, {900, 1000}, {500, 1000}});
    Params p;
    p.sessionThreshold = 60;
    CHECK(kept(filterSessionThreshold, c, p) == V{2});
}

TEST_CASE("session-threshold: unknown use is kept; all unknown passes all") {
    auto c = sessions({{950, 1000}, {NAN, 1000}, {100, NAN}, {10, 0}, {500, 1000}});
    CHECK(kept(filterSessionThreshold, c) == V{1, 2, 3, 4});
    CHECK(kept(filterSessionThreshold, candidates(3)) == V{0, 1, 2});
}

TEST_CASE("session-threshold: every site over the threshold -> all passed on (soft)") {
    auto c = sessions({{950, 1000}, {990, 1000}});
    CHECK(kept(filterSessionThreshold, c) == V{0, 1});
}
