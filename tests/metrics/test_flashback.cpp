#include <doctest/doctest.h>

#include "helpers.hpp"

using namespace gslb::metrics;
using namespace gslb::metrics::test;
using V = std::vector<int>;

namespace {
std::vector<Candidate> times(std::vector<double> l7, std::vector<double> l4) {
    auto c = candidates(l4.size());
    for (std::size_t i = 0; i < c.size(); ++i) {
        c[i].l7Ms = l7.empty() ? NAN : l7[i];
        c[i].l4Ms = l4[i];
    }
    return c;
}
}  // namespace

TEST_CASE("flashback: L4 only, within 10 % of the fastest (seed 002)") {
    // 20 ms fastest; 22 differs by 2 <= 10 % of 22: equal; 23 differs by 3 > 2.3: slower
    CHECK(kept(filterFlashback, times({}, {20, 22, 23, 40})) == V{0, 1});
}

TEST_CASE("flashback: L7 differing beyond tolerance decides, L4 is not looked at") {
    // B's L7 is fastest by far, even though its L4 is the slowest
    CHECK(kept(filterFlashback, times({50, 10, 30}, {1, 9, 2})) == V{1});
}

TEST_CASE("flashback: L7 ties are broken by L4 among those left") {
    // A and B equal on L7 (100 vs 105), C slower on L7 (though fastest on L4): C out by L7,
    // then L4 between A (8) and B (4): B.
    CHECK(kept(filterFlashback, times({100, 105, 200}, {8, 4, 1})) == V{1});
    // L4 equal too: both kept
    CHECK(kept(filterFlashback, times({100, 105, 200}, {4.2, 4, 1})) == V{0, 1});
}

TEST_CASE("flashback: tolerance parameter") {
    Params p;
    p.flashbackTolerance = 50;
    CHECK(kept(filterFlashback, times({}, {20, 30, 41}), p) == V{0, 1});
    p.flashbackTolerance = 0;
    CHECK(kept(filterFlashback, times({}, {20, 20, 20.5}), p) == V{0, 1});
}

TEST_CASE("flashback: unknown times") {
    // all unknown: all passed on
    CHECK(kept(filterFlashback, times({}, {NAN, NAN, NAN})) == V{0, 1, 2});
    // an unknown L4 time is kept (no evidence against it) but does not set the bar
    CHECK(kept(filterFlashback, times({}, {NAN, 30, 31})) == V{0, 1, 2});
    CHECK(kept(filterFlashback, times({}, {NAN, 30, 60})) == V{0, 1});
    // L7 known for some only: the one without L7 stays, 50 and 52 are equal at 10 %, then L4 among the three
    CHECK(kept(filterFlashback, times({NAN, 50, 52}, {1, 20, 10})) == V{0});
    // a slow L7 is dropped even when another candidate has no L7 time
    CHECK(kept(filterFlashback, times({NAN, 50, 90}, {NAN, NAN, NAN})) == V{0, 1});
}
