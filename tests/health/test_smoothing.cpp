#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "metrics/health/smoothing.hpp"

using namespace gslb::metrics;
using namespace gslb::metrics::health;

TEST_CASE("flashback median: unknown until the first sample, which is taken as is") {
    RollingMedian m;
    CHECK(std::isnan(m.value()));
    CHECK_FALSE(m.known());
    m.add(10);
    CHECK(m.value() == 10.0);
}

TEST_CASE("flashback median: one outlier never moves the value (a decision-quality trial)") {
    RollingMedian m;
    m.add(0.3);
    m.add(50);  // a hiccup: the lower median of two is the usual time
    CHECK(m.value() == 0.3);
    m.add(0.4);
    m.add(0.2);
    m.add(0.3);
    CHECK(m.value() == 0.3);
    m.add(80);  // the window is 80 50 0.4 0.2 0.3: two outliers of five still do not win
    CHECK(m.value() == 0.4);
}

TEST_CASE("flashback median: a site that really slows down moves after three of five samples") {
    RollingMedian m;
    for (int i = 0; i < 5; ++i) m.add(1);
    m.add(31);
    m.add(31);
    CHECK(m.value() == 1.0);
    m.add(31);
    CHECK(m.value() == 31.0);
}

TEST_CASE("flashback median: NaN samples (no time, e.g. tcp has no L7) are ignored") {
    RollingMedian m;
    m.add(kUnknown);
    CHECK_FALSE(m.known());
    m.add(5);
    m.add(kUnknown);
    CHECK(m.value() == 5.0);
    m.reset();
    CHECK_FALSE(m.known());
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
