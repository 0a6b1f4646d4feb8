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

TEST_CASE(
    "least-connections: with a capacity on every candidate, connections / capacity (HP SA9200 User Manual's "
    "trap, p. 17)") {
    // "Server A may be capable of handling 3000 connections ... The realistic connection limit of Server B
    // may therefore only be about 500 ... If Server A has 900 connections and Server B has 400 connections,
    // then Server B is the site with the least number of connections, although it is already 80% loaded
    // while Server A is only 30% loaded. The better choice would be to give the traffic to server A."
    auto c = conns({900, 400});
    c[0].capacity = 3000;
    c[1].capacity = 500;
    CHECK(connectionsRelativeToCapacity(c));
    CHECK(kept(filterLeastConnections, c, factor(0)) == V{0});       // 0.30 < 0.80
    CHECK(kept(filterLeastConnections, c, factor(1.6)) == V{0});     // 0.80 > 0.30 * 2.6 = 0.78
    CHECK(kept(filterLeastConnections, c, factor(1.7)) == V{0, 1});  // 0.80 <= 0.30 * 2.7 = 0.81
    // One candidate without a capacity: the manual's raw counts (and gslbd --check warns).
    c[1].capacity = kUnknown;
    CHECK_FALSE(connectionsRelativeToCapacity(c));
    CHECK(kept(filterLeastConnections, c, factor(0)) == V{1});
    // A candidate whose connections are unknown needs no capacity: it is kept and never the bar.
    auto d = conns({900, 400, NAN});
    d[0].capacity = 3000;
    d[1].capacity = 500;
    CHECK(connectionsRelativeToCapacity(d));
    CHECK(kept(filterLeastConnections, d, factor(0)) == V{0, 2});
}
