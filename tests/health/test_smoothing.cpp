#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "metrics/health/smoothing.hpp"

using namespace gslb::metrics;
using namespace gslb::metrics::health;

TEST_CASE("ewma: unknown until the first sample, which is taken as is") {
    Ewma e;
    CHECK(std::isnan(e.value()));
    CHECK_FALSE(e.known());
    e.add(10);
    CHECK(e.value() == 10.0);
}

TEST_CASE("ewma: alpha 0.3, exact values") {
    Ewma e;
    e.add(10);
    e.add(20);  // 0.3*20 + 0.7*10 = 13
    CHECK(e.value() == doctest::Approx(13.0).epsilon(1e-12));
    e.add(0);  // 0.7*13 = 9.1
    CHECK(e.value() == doctest::Approx(9.1).epsilon(1e-12));
    e.add(100);  // 30 + 6.37 = 36.37
    CHECK(e.value() == doctest::Approx(36.37).epsilon(1e-12));
}

TEST_CASE("ewma: NaN samples (no time, e.g. tcp has no L7) are ignored") {
    Ewma e;
    e.add(kUnknown);
    CHECK_FALSE(e.known());
    e.add(5);
    e.add(kUnknown);
    CHECK(e.value() == 5.0);
}

TEST_CASE("ewma: converges to a steady value") {
    Ewma e;
    e.add(100);
    for (int i = 0; i < 200; ++i) e.add(1);
    CHECK(e.value() == doctest::Approx(1.0).epsilon(1e-9));
}

TEST_CASE("slowest of several checks on one slot") {
    std::vector<double> v{3.5, 12.25, 7};
    CHECK(slowest(v) == 12.25);
    std::vector<double> withUnknown{kUnknown, 4, kUnknown, 2};
    CHECK(slowest(withUnknown) == 4.0);
    std::vector<double> none{kUnknown, kUnknown};
    CHECK(std::isnan(slowest(none)));
    CHECK(std::isnan(slowest(std::span<const double>{})));
}
