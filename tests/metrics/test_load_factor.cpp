#include <doctest/doctest.h>

#include <vector>

#include "helpers.hpp"
#include "metrics/load_factor.hpp"

using namespace gslb::metrics;
using namespace gslb::metrics::test;

TEST_CASE(
    "load factor: per metric min(load / capacity, 1) x weight / total weight (JBoss mod_cluster User Guide, "
    "ch. 11 Load Metrics, p. 40)") {
    const std::vector<LoadMetric> one{{0.3, 1, 1}};
    CHECK(aggregateLoad(one) == doctest::Approx(0.3));
    // weights 2:1 — busy at 0.9 of capacity with weight 2, memory at 0.3 with weight 1:
    // (0.9 * 2 + 0.3 * 1) / 3 = 0.7
    const std::vector<LoadMetric> weighted{{90, 100, 2}, {0.3, 1, 1}};
    CHECK(aggregateLoad(weighted) == doctest::Approx(0.7));
    // a metric over its capacity counts as 1, not 1.5: (1 * 2 + 0.2 * 1) / 3
    const std::vector<LoadMetric> over{{150, 100, 2}, {0.2, 1, 1}};
    CHECK(aggregateLoad(over) == doctest::Approx(2.2 / 3));
    CHECK(loadFactor(aggregateLoad(weighted)) == doctest::Approx(30));
}

TEST_CASE("load factor: invalid input is unknown (NaN), not idle") {
    CHECK(std::isnan(aggregateLoad({})));
    const std::vector<LoadMetric> zeroCap{{1, 0, 1}};
    CHECK(std::isnan(aggregateLoad(zeroCap)));
    const std::vector<LoadMetric> zeroWeight{{1, 1, 0}};
    CHECK(std::isnan(aggregateLoad(zeroWeight)));
    CHECK(std::isnan(loadFactor(NAN)));
}

TEST_CASE("load factor: time decay is the normalised average (doc/design.md, MODCLUSTER-606)") {
    // newest -> oldest 0.5, 0.25, 1.0 with D = 2:
    // (0.5 + 0.25/2 + 1.0/4) / (1 + 1/2 + 1/4) = 0.875 / 1.75 = 0.5 -> factor 50
    const std::vector<double> h{0.5, 0.25, 1.0};
    CHECK(decayedLoad(h, 2) == doctest::Approx(0.5));
    CHECK(loadFactor(decayedLoad(h, 2)) == doctest::Approx(50));
    // D = 1: plain average
    CHECK(decayedLoad(h, 1) == doctest::Approx(1.75 / 3));
    // a full load stays 1 (the seed's printed formula would give 1 x 1023 x ... > 1)
    const std::vector<double> full(10, 1.0);
    CHECK(decayedLoad(full, 2) == doctest::Approx(1.0));
    CHECK(loadFactor(decayedLoad(full, 2)) == doctest::Approx(0));
    // missed values are skipped, not zero
    const std::vector<double> gap{0.5, NAN, 0.5};
    CHECK(decayedLoad(gap, 2) == doctest::Approx(0.5));
}

TEST_CASE("load factor: LoadHistory keeps history + 1 values, newest first") {
    LoadHistory h(2.0, 2);
    CHECK(std::isnan(h.factor()));
    CHECK(h.push(1.0) == doctest::Approx(0));  // only the current value: L = 1
    h.push(0.25);
    CHECK(h.push(0.5) == doctest::Approx(50));  // 0.5, 0.25, 1.0 as above
    CHECK(h.size() == 3);
    CHECK(h.at(0) == 0.5);
    CHECK(h.at(2) == 1.0);
    // a fourth value drops the oldest (1.0): (0 + 0.5/2 + 0.25/4) / 1.75 = 0.3125 / 1.75
    CHECK(h.push(0.0) == doctest::Approx(100 - 0.3125 / 1.75 * 100));
    CHECK(h.size() == 3);

    LoadHistory current(2.0, 0);  // history 0: only the current value
    current.push(0.9);
    CHECK(current.push(0.2) == doctest::Approx(80));

    LoadHistory defaults;  // D = 2, H = 9
    for (int i = 0; i < 20; ++i) defaults.push(0.4);
    CHECK(defaults.size() == 10);
    CHECK(defaults.factor() == doctest::Approx(60));
}

TEST_CASE("load factor: parameter ranges") {
    CHECK_FALSE(checkLoadParams(2, 9).has_value());
    CHECK(checkLoadParams(0.5, 9).has_value());
    CHECK(checkLoadParams(2, kMaxLoadHistory + 1).has_value());
}

TEST_CASE("load-factor chooser: weighted by factor (seeded, 100,000 draws, 6 sigma)") {
    constexpr int kDraws = 100000;
    auto c = candidates(3);
    c[0].loadFactor = 75;
    c[1].loadFactor = 25;
    c[2].loadFactor = 0;  // fully loaded: never while others have room
    const auto s = shares(chooseLoadFactor, c, 31, kDraws);
    CHECK(std::fabs(s[0] - 0.75) <= sixSigma(0.75, kDraws));
    CHECK(std::fabs(s[1] - 0.25) <= sixSigma(0.25, kDraws));
    CHECK(s[2] == 0.0);
}

TEST_CASE("load-factor chooser: unknown counts as the lowest known; all unknown -> uniform") {
    constexpr int kDraws = 100000;
    auto c = candidates(3);
    c[0].loadFactor = NAN;  // counts as 20
    c[1].loadFactor = 20;
    c[2].loadFactor = 60;
    const auto s = shares(chooseLoadFactor, c, 32, kDraws);
    CHECK(std::fabs(s[0] - 0.2) <= sixSigma(0.2, kDraws));
    CHECK(std::fabs(s[1] - 0.2) <= sixSigma(0.2, kDraws));
    CHECK(std::fabs(s[2] - 0.6) <= sixSigma(0.6, kDraws));

    const auto u = shares(chooseLoadFactor, candidates(2), 33, kDraws);
    CHECK(std::fabs(u[0] - 0.5) <= sixSigma(0.5, kDraws));

    auto zeros = candidates(2);
    zeros[0].loadFactor = 0;
    zeros[1].loadFactor = 0;
    const auto z = shares(chooseLoadFactor, zeros, 34, kDraws);
    CHECK(std::fabs(z[0] - 0.5) <= sixSigma(0.5, kDraws));
}
