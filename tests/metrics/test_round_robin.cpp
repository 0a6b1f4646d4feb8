#include <doctest/doctest.h>

#include "helpers.hpp"

using namespace gslb::metrics;
using namespace gslb::metrics::test;

TEST_CASE("round-robin: next in turn from the start member") {
    auto c = candidates(3);
    Rng rng(1);
    ChooserState st(3);
    st.startAt(0);
    CHECK(sequence(chooseRoundRobin, c, st, rng, 7) == "ABCABCA");
    ChooserState st2(3);
    st2.startAt(2);
    CHECK(sequence(chooseRoundRobin, c, st2, rng, 4) == "CABC");
}

TEST_CASE("round-robin: a fresh state starts at a random member, then goes in turn") {
    auto c = candidates(4);
    Rng rng(21);
    ChooserState st(4);
    const std::string s = sequence(chooseRoundRobin, c, st, rng, 8);
    for (std::size_t i = 1; i < s.size(); ++i) CHECK(s[i] == 'A' + (s[i - 1] - 'A' + 1) % 4);
}

TEST_CASE("round-robin: filtered set -> next surviving index after the last answered") {
    auto all = candidates(4);
    Rng rng(1);
    ChooserState st(4);
    st.startAt(0);
    CHECK(sequence(chooseRoundRobin, all, st, rng, 2) == "AB");
    const std::vector<Candidate> noC{all[0], all[1], all[3]};
    CHECK(sequence(chooseRoundRobin, noC, st, rng, 3) == "DAB");
    const std::vector<Candidate> onlyAC{all[2], all[0]};  // order of the candidates does not matter
    CHECK(sequence(chooseRoundRobin, onlyAC, st, rng, 3) == "CAC");
    CHECK(sequence(chooseRoundRobin, all, st, rng, 2) == "DA");
}

TEST_CASE("round-robin: taken members are skipped (answers > 1)") {
    auto c = candidates(3);
    Rng rng(1);
    ChooserState st(3);
    st.startAt(0);
    CHECK(c[chooseRoundRobin(c, 0b010, {}, st, rng)].index == 0);
    CHECK(c[chooseRoundRobin(c, 0b011, {}, st, rng)].index == 2);
    CHECK(chooseRoundRobin(c, 0b111, {}, st, rng) == -1);
}
