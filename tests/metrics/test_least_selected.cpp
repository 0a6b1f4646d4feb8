#include <doctest/doctest.h>

#include "helpers.hpp"

using namespace gslb::metrics;
using namespace gslb::metrics::test;

TEST_CASE("least-selected: least answered first, ties to the lowest index") {
    auto c = candidates(3);
    Rng rng(1);
    ChooserState st(3);
    CHECK(sequence(chooseLeastSelected, c, st, rng, 7) == "ABCABCA");
    CHECK(st.selectedCount(0) == 3);
    CHECK(st.selectedCount(1) == 2);
    CHECK(st.selectedCount(2) == 2);
}

TEST_CASE("least-selected: counts survive filtering; the least among the survivors wins") {
    auto all = candidates(3);
    Rng rng(1);
    ChooserState st(3);
    CHECK(sequence(chooseLeastSelected, all, st, rng, 3) == "ABC");  // 1 1 1
    const std::vector<Candidate> ab{all[0], all[1]};
    CHECK(sequence(chooseLeastSelected, ab, st, rng, 4) == "ABAB");  // 3 3 1
    // C comes back with count 1 while the others are at 3: it is raised to 3, not given 2 answers in a row
    CHECK(sequence(chooseLeastSelected, all, st, rng, 3) == "ABC");
    CHECK(st.selectedCount(2) == 4);
}

TEST_CASE("least-selected: a newcomer starts level with the least-selected, not at 0") {
    auto all = candidates(3);
    Rng rng(1);
    ChooserState st(3);
    const std::vector<Candidate> ab{all[0], all[1]};
    CHECK(sequence(chooseLeastSelected, ab, st, rng, 10) == "ABABABABAB");
    CHECK(sequence(chooseLeastSelected, all, st, rng, 6) == "ABCABC");
}

TEST_CASE("least-selected: taken candidates are skipped") {
    auto c = candidates(2);
    Rng rng(1);
    ChooserState st(2);
    CHECK(c[chooseLeastSelected(c, 0b01, {}, st, rng)].index == 1);
    CHECK(chooseLeastSelected(c, 0b11, {}, st, rng) == -1);
}
