#include <doctest/doctest.h>

#include "helpers.hpp"

using namespace gslb::metrics;
using namespace gslb::metrics::test;

TEST_CASE("weighted-random: in proportion to weight; weight 0 never chosen") {
    constexpr int kDraws = 100000;
    auto c = candidates(3);
    c[0].weight = 3;
    c[1].weight = 1;
    c[2].weight = 0;
    const auto s = shares(chooseWeightedRandom, c, 11, kDraws);
    CHECK(std::fabs(s[0] - 0.75) <= sixSigma(0.75, kDraws));
    CHECK(std::fabs(s[1] - 0.25) <= sixSigma(0.25, kDraws));
    CHECK(s[2] == 0.0);
}

TEST_CASE("weighted-random: all weights 0 -> uniform") {
    constexpr int kDraws = 60000;
    auto c = candidates(3);
    for (auto& x : c) x.weight = 0;
    const auto s = shares(chooseWeightedRandom, c, 12, kDraws);
    for (int i = 0; i < 3; ++i) CHECK(std::fabs(s[i] - 1.0 / 3) <= sixSigma(1.0 / 3, kDraws));
}

TEST_CASE("weighted-random: answers > 1 with the heavy one taken -> the rest by weight") {
    auto c = candidates(3);
    c[0].weight = 100;
    c[1].weight = 0;
    c[2].weight = 1;
    Rng rng(5);
    ChooserState st(3);
    for (int i = 0; i < 1000; ++i) REQUIRE(c[chooseWeightedRandom(c, 0b001, {}, st, rng)].index == 2);
    // only weight-0 left untaken: it is answered rather than nothing
    CHECK(c[chooseWeightedRandom(c, 0b101, {}, st, rng)].index == 1);
}
