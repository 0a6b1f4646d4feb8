#include <doctest/doctest.h>

#include "helpers.hpp"

using namespace gslb::metrics;
using namespace gslb::metrics::test;

TEST_CASE("random: uniform among what is left (100,000 seeded draws, 6 sigma)") {
    constexpr int kDraws = 100000;
    const auto s = shares(chooseRandom, candidates(4), 1, kDraws);
    for (int i = 0; i < 4; ++i) CHECK(std::fabs(s[i] - 0.25) <= sixSigma(0.25, kDraws));
}

TEST_CASE("random: never picks a taken candidate; -1 when all are taken") {
    auto c = candidates(3);
    Rng rng(3);
    ChooserState st(3);
    const std::uint64_t taken = 0b101;  // A and C already in the answer
    for (int i = 0; i < 1000; ++i) REQUIRE(c[chooseRandom(c, taken, {}, st, rng)].index == 1);
    CHECK(chooseRandom(c, 0b111, {}, st, rng) == -1);
    CHECK(chooseRandom({}, 0, {}, st, rng) == -1);
}

TEST_CASE("random: deterministic for a seed") {
    auto c = candidates(5);
    ChooserState s1(5), s2(5);
    Rng r1(99), r2(99);
    CHECK(sequence(chooseRandom, c, s1, r1, 50) == sequence(chooseRandom, c, s2, r2, 50));
}
