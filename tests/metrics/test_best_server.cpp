#include <doctest/doctest.h>

#include <algorithm>

#include "helpers.hpp"

using namespace gslb::metrics;
using namespace gslb::metrics::test;

namespace {
// Three servers with response times 10, 20, 40 ms (L7).
std::vector<Candidate> servers() {
    auto c = candidates(3);
    c[0].l7Ms = 10;
    c[1].l7Ms = 20;
    c[2].l7Ms = 40;
    return c;
}
}  // namespace

TEST_CASE(
    "best-server: recalibration computes throughput = total throughput / own (CA SiteMinder Web Agent "
    "technote on the Best Server Algorithm)") {
    auto c = servers();
    Rng rng(1);
    ChooserState st(3);
    // A fresh table is all 0, so the first pick recalibrates.
    CHECK(sequence(chooseBestServer, c, st, rng, 1) == "A");
    CHECK(st.recalibrations() == 1);
    // total = 1/10 + 1/20 + 1/40 = 0.175 per ms; A: 0.175 / 0.1 = 1.75, B: 0.175 / 0.05 = 3.5,
    // C: 0.175 / 0.025 = 7 — a slow server is charged more per answer, so it gets fewer.
    CHECK(st.throughput(0) == doctest::Approx(1.75));
    CHECK(st.throughput(1) == doctest::Approx(3.5));
    CHECK(st.throughput(2) == doctest::Approx(7.0));
    CHECK(st.capacity(0) == doctest::Approx(100 - 1.75));
    CHECK(st.capacity(1) == 100.0);
    CHECK(st.capacity(2) == 100.0);
}

TEST_CASE("best-server: exact picks, highest capacity, first wins ties") {
    auto c = servers();
    Rng rng(1);
    ChooserState st(3);
    // capacities A/B/C after each pick:
    //  A 98.25/100/100, B 98.25/96.5/100, C 98.25/96.5/93, A 96.5/96.5/93, A (tie, first) 94.75/96.5/93,
    //  B 94.75/93/93, A 93/93/93, A (tie) 91.25/93/93, B 91.25/89.5/93, C 91.25/89.5/86, ...
    CHECK(sequence(chooseBestServer, c, st, rng, 15) == "ABCAABAABCAABAA");
}

TEST_CASE("best-server: a calibration round is 58/29/15 answers, then it recalibrates") {
    auto c = servers();
    Rng rng(1);
    ChooserState st(3);
    // A needs ceil(100 / 1.75) = 58 answers to reach <= 0, B ceil(100 / 3.5) = 29, C ceil(100 / 7) = 15:
    // 102 answers in the ratio 4:2:1 of the throughputs; the 103rd finds the best capacity <= 0.
    const std::string round = sequence(chooseBestServer, c, st, rng, 102);
    CHECK(std::count(round.begin(), round.end(), 'A') == 58);
    CHECK(std::count(round.begin(), round.end(), 'B') == 29);
    CHECK(std::count(round.begin(), round.end(), 'C') == 15);
    CHECK(st.recalibrations() == 1);
    CHECK(st.capacity(0) <= 0);
    CHECK(st.capacity(1) <= 0);
    CHECK(st.capacity(2) <= 0);
    CHECK(round.substr(95) == "ABAABCA");
    CHECK(sequence(chooseBestServer, c, st, rng, 5) == "ABCAA");  // recalibrated: as from the start
    CHECK(st.recalibrations() == 2);
}

TEST_CASE("best-server: a server goes down (leaves the candidate set) and comes back") {
    auto all = servers();
    const std::vector<Candidate> ac{all[0], all[2]};
    Rng rng(1);
    ChooserState st(3);
    CHECK(sequence(chooseBestServer, all, st, rng, 5) == "ABCAA");
    CHECK(st.recalibrations() == 1);
    // B is inactive with capacity 96.5 > 0 -> recalibrate over A and C: total 1/10 + 1/40 = 0.125;
    // A 0.125 / 0.1 = 1.25, C 0.125 / 0.025 = 5. Picks: A 98.75/100, C 98.75/95, A 97.5, A 96.25, A 95,
    // A (tie with C at 95, first wins) 93.75.
    CHECK(sequence(chooseBestServer, ac, st, rng, 6) == "ACAAAA");
    CHECK(st.recalibrations() == 2);
    CHECK(st.throughput(0) == doctest::Approx(1.25));
    CHECK(st.throughput(2) == doctest::Approx(5.0));
    CHECK(st.capacity(1) == 0.0);
    // B comes back into the active set -> recalibrate over all three: as from the start.
    CHECK(sequence(chooseBestServer, all, st, rng, 6) == "ABCAAB");
    CHECK(st.recalibrations() == 3);
}

TEST_CASE("best-server: L4 when no L7, all equal when no time; unknown counts as the slowest known") {
    auto c = candidates(2);
    c[0].l4Ms = 30;
    c[1].l4Ms = 10;
    Rng rng(1);
    ChooserState st(2);
    CHECK(sequence(chooseBestServer, c, st, rng, 3) == "ABB");  // thr A = 4, B = 4/3; A 96, B 98.7, B 97.3
    CHECK(st.throughput(0) == doctest::Approx(4.0));
    CHECK(st.throughput(1) == doctest::Approx(4.0 / 3));

    auto none = candidates(3);
    ChooserState st2(3);
    CHECK(sequence(chooseBestServer, none, st2, rng, 6) == "ABCABC");  // equal: round robin
    CHECK(st2.throughput(0) == doctest::Approx(3.0));

    auto some = candidates(3);
    some[0].l7Ms = 10;
    some[2].l7Ms = 20;  // B unknown -> 20
    ChooserState st3(3);
    sequence(chooseBestServer, some, st3, rng, 1);
    CHECK(st3.throughput(1) == doctest::Approx(st3.throughput(2)));
}

TEST_CASE("best-server: taken servers are skipped and the active set stays the whole set") {
    auto c = servers();
    Rng rng(1);
    ChooserState st(3);
    CHECK(c[chooseBestServer(c, 0b001, {}, st, rng)].index == 1);
    CHECK(c[chooseBestServer(c, 0b011, {}, st, rng)].index == 2);
    CHECK(st.recalibrations() == 1);  // no spurious recalibration for the taken ones
    CHECK(chooseBestServer(c, 0b111, {}, st, rng) == -1);
}
