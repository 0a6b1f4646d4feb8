#include <doctest/doctest.h>

#include "helpers.hpp"

using namespace gslb::metrics;
using namespace gslb::metrics::test;

TEST_CASE("chooser state: sized for N services, clamped at kMaxServices; reset forgets everything") {
    CHECK(ChooserState(5).serviceCount() == 5);
    CHECK(ChooserState(1000).serviceCount() == kMaxServices);
    auto c = candidates(3);
    Rng rng(1);
    ChooserState st(3);
    CHECK(sequence(chooseLeastSelected, c, st, rng, 4) == "ABCA");
    CHECK(st.selectedCount(0) == 2);
    st.reset(3);
    CHECK(st.selectedCount(0) == 0);
    CHECK(sequence(chooseLeastSelected, c, st, rng, 2) == "AB");
    sequence(chooseBestServer, c, st, rng, 1);
    CHECK(st.recalibrations() == 1);
    st.reset(2);
    CHECK(st.serviceCount() == 2);
    CHECK(st.recalibrations() == 0);
    CHECK(st.capacity(0) == 0.0);
}

TEST_CASE("chooser state: 64 services work (bit masks use every bit)") {
    auto c = candidates(kMaxServices);
    Rng rng(1);
    ChooserState st(kMaxServices);
    st.startAt(62);
    CHECK(c[chooseRoundRobin(c, 0, {}, st, rng)].index == 62);
    CHECK(c[chooseRoundRobin(c, 0, {}, st, rng)].index == 63);
    CHECK(c[chooseRoundRobin(c, 0, {}, st, rng)].index == 0);
    CHECK(c[chooseRandom(c, ~(std::uint64_t{1} << 63), {}, st, rng)].index == 63);
}
