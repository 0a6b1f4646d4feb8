#include <doctest/doctest.h>

#include "helpers.hpp"

using namespace gslb::metrics;
using namespace gslb::metrics::test;

namespace {
std::vector<Candidate> weighted(std::vector<double> w) {
    auto c = candidates(w.size());
    for (std::size_t i = 0; i < c.size(); ++i) c[i].weight = w[i];
    return c;
}
std::string run(std::vector<double> w, std::uint16_t start, int count) {
    auto c = weighted(w);
    Rng rng(1);
    ChooserState st(c.size());
    st.startAt(start);
    return sequence(chooseWeightedRoundRobin, c, st, rng, count);
}
}  // namespace

TEST_CASE(
    "weighted-round-robin: 3/1 (WebSphere V6 Scalability and Performance Handbook (SG24-6392), Workload "
    "management policies), each cycle repeats from its start member") {
    CHECK(run({3, 1}, 0, 12) ==
          "ABAA"
          "ABAA"
          "ABAA");
    CHECK(run({3, 1}, 1, 12) ==
          "BAAA"
          "BAAA"
          "BAAA");
}

TEST_CASE("weighted-round-robin: 2/2/1") {
    CHECK(run({2, 2, 1}, 0, 10) ==
          "ABCAB"
          "ABCAB");
    CHECK(run({2, 2, 1}, 1, 10) ==
          "BCABA"
          "BCABA");
    CHECK(run({2, 2, 1}, 2, 10) ==
          "CABAB"
          "CABAB");
}

TEST_CASE("weighted-round-robin: equal weights are plain round robin; weight 0 is skipped") {
    CHECK(run({1, 1, 1}, 1, 6) == "BCABCA");
    CHECK(run({2, 0, 1}, 0, 6) == "ACAACA");
    CHECK(run({0, 0}, 0, 4) == "ABAB");  // all 0: all count as 1
}

TEST_CASE("weighted-round-robin: weights left in the cycle are visible and decrease") {
    auto c = weighted({3, 1});
    Rng rng(1);
    ChooserState st(2);
    st.startAt(0);
    CHECK(sequence(chooseWeightedRoundRobin, c, st, rng, 1) == "A");
    CHECK(st.remainingWeight(0) == 2);
    CHECK(st.remainingWeight(1) == 1);
}

TEST_CASE("weighted-round-robin: a member filtered out mid-cycle; reset counts only the survivors") {
    auto all = weighted({2, 1, 1});
    Rng rng(1);
    ChooserState st(3);
    st.startAt(0);
    CHECK(sequence(chooseWeightedRoundRobin, all, st, rng, 2) == "AB");  // A=1 B=0 C=1
    const std::vector<Candidate> noC{all[0], all[1]};
    // A=1 -> A; A and B at 0 -> new cycle at A: A B A, ...
    CHECK(sequence(chooseWeightedRoundRobin, noC, st, rng, 4) == "AABA");
}

TEST_CASE("weighted-round-robin: random start member is one of the members, then the pattern") {
    auto c = weighted({3, 1});
    Rng rng(77);
    ChooserState st(2);
    const std::string s = sequence(chooseWeightedRoundRobin, c, st, rng, 8);
    CHECK((s == "ABAAABAA" || s == "BAAABAAA"));
}
