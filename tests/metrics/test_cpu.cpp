#include <doctest/doctest.h>

#include "helpers.hpp"

using namespace gslb::metrics;
using namespace gslb::metrics::test;
using V = std::vector<int>;

namespace {
std::vector<Candidate> cpus(std::vector<double> v) {
    auto c = candidates(v.size());
    for (std::size_t i = 0; i < c.size(); ++i) c[i].cpu = v[i];
    return c;
}
}  // namespace

TEST_CASE("cpu: the lightest load balancer, with the factor (HP SA9200 User Manual, p. 17)") {
    Params p;
    CHECK(kept(filterCpu, cpus({30, 80, 30.5}), p) == V{0});
    p.factor = 0.25;  // 30 * 1.25 = 37.5
    CHECK(kept(filterCpu, cpus({30, 80, 37.5, 37.6}), p) == V{0, 2});
    p.factor = 2;  // 30 * 3 = 90
    CHECK(kept(filterCpu, cpus({30, 80, 91}), p) == V{0, 1});
}

TEST_CASE("cpu: unknown is kept but never sets the bar; all unknown passes all; idle site beats all") {
    Params p;
    p.factor = 10;
    CHECK(kept(filterCpu, cpus({NAN, 50, 60}), p) == V{0, 1, 2});
    p.factor = 0;
    CHECK(kept(filterCpu, cpus({NAN, 50, 60}), p) == V{0, 1});
    p.factor = 10;
    CHECK(kept(filterCpu, cpus({NAN, NAN}), p) == V{0, 1});
    CHECK(kept(filterCpu, cpus({0, 1, 50}), p) == V{0});
}
