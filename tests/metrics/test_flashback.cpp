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

TEST_CASE("flashback: L4 only, within 10 % of the fastest (Brocade Virtual ADX GSLB Guide, p. 10)") {
    // 100 ms fastest; 110 differs by 10 <= 10 % of 110: equal; 113 differs by 13 > 11.3: slower
    CHECK(kept(filterFlashback, times({}, {100, 110, 113, 200})) == V{0, 1});
}

TEST_CASE(
    "flashback: below the absolute floor (5 ms) times are equal whatever the percentage (doc/design.md "
    "'Metric sources')") {
    // LAN noise: 0.25 and 0.31 ms differ by 24 %, 0.9 by 260 % — all equal below 5 ms.
    CHECK(kept(filterFlashback, times({}, {0.25, 0.31, 0.9})) == V{0, 1, 2});
    CHECK(kept(filterFlashback, times({}, {20, 22, 23, 40})) == V{0, 1, 2});  // 3 ms apart: equal
    // A site 30 ms slower still loses; so does one 5.01 ms slower.
    CHECK(kept(filterFlashback, times({}, {0.3, 0.4, 30.3})) == V{0, 1});
    CHECK(kept(filterFlashback, times({}, {1, 6.01})) == V{0});
    // The floor applies to L7 too.
    CHECK(kept(filterFlashback, times({1.0, 4.0, 40.0}, {1, 1, 1})) == V{0, 1});
    Params p;
    p.flashbackFloorMs = 0;  // the floor off: the relative rule alone
    CHECK(kept(filterFlashback, times({}, {0.25, 0.31, 0.9}), p) == V{0});
}

TEST_CASE("flashback: L7 differing beyond tolerance decides, L4 is not looked at") {
    // B's L7 is fastest by far, even though its L4 is the slowest
    CHECK(kept(filterFlashback, times({50, 10, 30}, {1, 9, 2})) == V{1});
}

TEST_CASE("flashback: L7 ties are broken by L4 among those left") {
    // A and B equal on L7 (100 vs 105), C slower on L7 (though fastest on L4): C out by L7,
    // then L4 between A (18) and B (4): B.
    CHECK(kept(filterFlashback, times({100, 105, 200}, {18, 4, 1})) == V{1});
    // L4 equal too: both kept
    CHECK(kept(filterFlashback, times({100, 105, 200}, {4.2, 4, 1})) == V{0, 1});
}

TEST_CASE("flashback: tolerance parameter") {
    Params p;
    p.flashbackFloorMs = 0;
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
