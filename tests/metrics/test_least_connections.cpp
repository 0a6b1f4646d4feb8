#include <doctest/doctest.h>

#include "helpers.hpp"

using namespace gslb::metrics;
using namespace gslb::metrics::test;
using V = std::vector<int>;

namespace {
std::vector<Candidate> conns(std::vector<double> v) {
    auto c = candidates(v.size());
    for (std::size_t i = 0; i < c.size(); ++i) c[i].connections = v[i];
    return c;
}
Params factor(double f) {
    Params p;
    p.factor = f;
    return p;
}
}  // namespace

TEST_CASE("least-connections: HP's Server A 900 vs Server B 400 (HP SA9200 User Manual, p. 17)") {
    CHECK(kept(filterLeastConnections, conns({900, 400}), factor(0)) == V{1});
    CHECK(kept(filterLeastConnections, conns({900, 400}), factor(1.25)) == V{0, 1});  // 900 <= 400 * 2.25
    CHECK(kept(filterLeastConnections, conns({900, 400}), factor(1.0)) == V{1});      // 900 > 800
}

TEST_CASE("least-connections: factor 0 keeps every candidate equal to the fewest") {
    CHECK(kept(filterLeastConnections, conns({5, 3, 3, 4}), factor(0)) == V{1, 2});
    CHECK(kept(filterLeastConnections, conns({100, 120, 126}), factor(0.25)) == V{0, 1});
}

TEST_CASE("least-connections: best 0 keeps only zeros, whatever the factor") {
    CHECK(kept(filterLeastConnections, conns({0, 1, 0}), factor(1000)) == V{0, 2});
}

TEST_CASE("least-connections: unknown (stale) is kept but never sets the bar; all unknown passes all") {
    CHECK(kept(filterLeastConnections, conns({NAN, 500, 10}), factor(0)) == V{0, 2});
    CHECK(kept(filterLeastConnections, conns({NAN, NAN}), factor(0)) == V{0, 1});
}
