#include <doctest/doctest.h>

#include <string>

#include "metrics/health/hysteresis.hpp"

using namespace gslb::metrics;
using namespace gslb::metrics::health;

namespace {
// Feeds a sequence ('+' success, '-' failure) and returns the states after each result: U(p), D(own).
std::string run(Hysteresis& h, const std::string& seq) {
    std::string out;
    for (char c : seq) {
        auto s = h.feed(c == '+');
        out += s.state == Health::Up ? 'U' : s.state == Health::Down ? 'D' : '?';
    }
    return out;
}
}  // namespace

TEST_CASE("hysteresis: starts unknown, the first result decides at once") {
    Hysteresis a(2, 3);
    CHECK(a.state() == Health::Unknown);
    auto s = a.feed(true);
    CHECK(s.changed);
    CHECK(s.first);
    CHECK(s.state == Health::Up);

    Hysteresis b(2, 3);
    s = b.feed(false);
    CHECK(s.changed);
    CHECK(s.first);
    CHECK(s.state == Health::Down);
}

TEST_CASE("hysteresis: rise 2 / fall 3 sequences") {
    Hysteresis h(2, 3);
    // up at once; two failures keep it up, the third takes it down; one success is not enough, two are
    CHECK(run(h, "+--") == "UUU");
    CHECK(run(h, "-") == "D");
    CHECK(run(h, "+") == "D");
    CHECK(run(h, "+") == "U");
    // a success in the middle resets the failure run
    CHECK(run(h, "--+--") == "UUUUU");
    CHECK(run(h, "-") == "D");
    // a failure in the middle resets the success run
    CHECK(run(h, "+-+-+") == "DDDDD");
    CHECK(run(h, "+") == "U");
}

TEST_CASE("hysteresis: step reports the run that caused the change") {
    Hysteresis h(2, 3);
    h.feed(true);
    h.feed(false);
    h.feed(false);
    auto s = h.feed(false);
    CHECK(s.changed);
    CHECK_FALSE(s.first);
    CHECK(s.state == Health::Down);
    CHECK(s.run == 3);
    s = h.feed(true);
    CHECK_FALSE(s.changed);
    CHECK(s.run == 1);
    s = h.feed(true);
    CHECK(s.changed);
    CHECK(s.run == 2);
}

TEST_CASE("hysteresis: first failure at start-up is down, then rise applies") {
    Hysteresis h(3, 1);
    CHECK(run(h, "-++") == "DDD");
    CHECK(run(h, "+") == "U");
    CHECK(run(h, "-") == "D");  // fall 1
}

TEST_CASE("hysteresis: rise 1 / fall 1 follows every result") {
    Hysteresis h(1, 1);
    CHECK(run(h, "+-+-") == "UDUD");
}

TEST_CASE("hysteresis: limits changed on reload keep the current run") {
    Hysteresis h(2, 5);
    CHECK(run(h, "+---") == "UUUU");  // 3 failures, fall 5: still up
    h.setLimits(2, 3);
    CHECK(run(h, "-") == "D");  // the run (4) is already past the new fall
}
