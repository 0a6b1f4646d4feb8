#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "helpers.hpp"
#include "metrics/rng.hpp"

using namespace gslb::metrics;

TEST_CASE("rng: same seed, same stream; different seeds differ") {
    Rng a(42), b(42), c(43);
    for (int i = 0; i < 100; ++i) {
        const auto x = a.next();
        CHECK(x == b.next());
        (void)c.next();
    }
    Rng d(42), e(43);
    CHECK(d.next() != e.next());
}

TEST_CASE("rng: uniform(n) stays in [0, n) and is unbiased") {
    Rng rng(7);
    CHECK(rng.uniform(0) == 0);
    CHECK(rng.uniform(1) == 0);
    constexpr int kDraws = 120000;
    std::vector<int> count(3, 0);
    for (int i = 0; i < kDraws; ++i) {
        const auto v = rng.uniform(3);
        REQUIRE(v < 3);
        ++count[v];
    }
    for (int c : count) CHECK(std::fabs(c / double(kDraws) - 1.0 / 3) <= test::sixSigma(1.0 / 3, kDraws));
    // A bound just over a power of two is where modulo bias would show most.
    const std::uint64_t big = (std::uint64_t{1} << 63) + 1;
    for (int i = 0; i < 1000; ++i) REQUIRE(rng.uniform(big) < big);
}

TEST_CASE("rng: uniform01 in [0, 1) with mean 1/2") {
    Rng rng(9);
    double sum = 0;
    constexpr int kDraws = 100000;
    for (int i = 0; i < kDraws; ++i) {
        const double u = rng.uniform01();
        REQUIRE(u >= 0.0);
        REQUIRE(u < 1.0);
        sum += u;
    }
    // sd of the mean of U(0,1) = sqrt(1/12 / n)
    CHECK(std::fabs(sum / kDraws - 0.5) <= 6 * std::sqrt(1.0 / 12 / kDraws));
}
