// Committed flow with expiry (metrics/flow.hpp): worked values.
#include <doctest/doctest.h>

#include <limits>

#include "metrics/flow.hpp"

using namespace gslb::metrics;

TEST_CASE("flow: answers count until the TTL they were given runs out, summed over workers") {
    CHECK(FlowLedger::bucketWidthMs(5) == 834);  // ceil(5000 / 6)
    CHECK(FlowLedger::bucketWidthMs(30) == 5000);
    CHECK(FlowLedger::bucketWidthMs(0) == 1);
    FlowLedger f(2, {834, 834});
    CHECK(f.bytes() == 2 * 2 * kFlowBuckets * 8);
    f.add(0, 0, 2.0, 10000);  // bucket 11 (10000 / 834), which ends at 10008
    f.add(1, 0, 3.0, 12000);  // bucket 14, ends at 12510
    f.add(1, 1, 7.0, 12000);
    CHECK(f.flow(0, 9000) == 5);
    CHECK(f.flow(0, 10007) == 5);  // counted to the end of its bucket: at most one width late
    CHECK(f.flow(0, 10008) == 3);
    CHECK(f.flow(0, 12509) == 3);
    CHECK(f.flow(0, 12510) == 0);
    CHECK(f.flow(1, 9000) == 7);
    // Two answers expiring in one bucket add up; a bucket reused after its expiry starts from zero.
    f.add(0, 0, 1.5, 10001);
    CHECK(f.flow(0, 9000) == 6.5);
    f.add(0, 0, 4.0, 10000 + 8 * 834);           // the same ring position as bucket 11, eight widths later
    CHECK(f.flow(0, 10008 + 6 * 834) == 4 + 0);  // bucket 19: the old sums are gone
    // Out of range, non-positive or NaN demand: ignored.
    f.add(2, 0, 1, 20000);
    f.add(0, 9, 1, 20000);
    f.add(0, 0, -1, 20000);
    CHECK(f.flow(9, 0) == 0);
}

TEST_CASE("flow: a reload carries a slot's rows when workers and width are the same") {
    FlowLedger old(1, {834, 834});
    old.add(0, 1, 2.5, 5000);
    FlowLedger now(1, {834, 834, 834});
    now.carry(old, 1, 2);
    CHECK(now.flow(2, 4000) == 2.5);
    FlowLedger other(1, {5000});
    other.carry(old, 1, 0);  // another width: not carried
    CHECK(other.flow(0, 4000) == 0);
}

TEST_CASE("flow ledger: the sessions still to come, demand x the TTL left, from the middle of each bucket") {
    FlowLedger f(2, {1000});
    f.add(0, 0, 2.0, 5500);  // bucket 5: its middle is 5500
    f.add(1, 0, 1.0, 2900);  // bucket 2, another worker
    // At 2250 (a quarter into bucket 2): 2/s for 3.25 s more, 1/s for 0.25 s more (2500 - 2250).
    auto r = f.read(0, 2250);
    CHECK(r.rate == 3);
    CHECK(r.pending == doctest::Approx(6.75));
    // At 2800 bucket 2's middle is past: still counted in the rate (to its end), nothing more to come.
    r = f.read(0, 2800);
    CHECK(r.rate == 3);
    CHECK(r.pending == doctest::Approx(5.4));
    CHECK(f.read(0, 3000).rate == 2);
    CHECK(f.read(0, 6000).pending == 0);
    CHECK(f.read(1, 2000).rate == 0);  // out of range
    // A thread's view adds its own answer's demand x its whole TTL at once.
    FlowView v;
    v.bind(&f);
    CHECK(v.read(0, 2250).pending == doctest::Approx(6.75));
    v.added(0, 0.5, 4);
    CHECK(v.read(0, 2251).rate == 3.5);
    CHECK(v.read(0, 2251).pending == doctest::Approx(8.75));
}

TEST_CASE("flow view: a thread's own answers at once, the other threads' a refresh (width / 8) late") {
    FlowLedger f(2, {834, 5000});  // TTL 5 s and 30 s: refresh 104 ms and 625 ms
    FlowView v;
    CHECK(v.flow(0, 1000) == 0);  // unbound
    v.bind(&f);
    f.add(1, 0, 3.0, 6000);
    CHECK(v.flow(0, 1000) == 3);  // read from the ledger, kept until 1104
    f.add(0, 0, 2.0, 6000);       // this thread's answer ...
    v.added(0, 2.0, 5);           // ... counted at once
    f.add(1, 0, 4.0, 6000);       // another thread's: not yet
    CHECK(v.flow(0, 1103) == 5);
    CHECK(v.flow(0, 1104) == 9);  // a refresh later: the ledger's sum, each answer once
    f.add(1, 1, 1.0, 30000);
    CHECK(v.flow(1, 1000) == 1);
    f.add(1, 1, 1.0, 30000);
    CHECK(v.flow(1, 1624) == 1);
    CHECK(v.flow(1, 1625) == 2);
    CHECK(v.flow(0, 7000) == 0);  // expired in the ledger, read afresh
    CHECK(v.flow(9, 1000) == 0);  // out of range
    v.added(9, 1.0, 5);           // ignored
    v.added(0, std::numeric_limits<double>::quiet_NaN(), 5);
    CHECK(v.flow(0, 7001) == 0);
    FlowLedger g(1, {834});  // a reload binds the new ledger: nothing of the old kept
    g.add(0, 0, 0.5, 6000);
    v.bind(&g);
    CHECK(v.flow(0, 7002) == 0);  // expired in g at 7002 (bucket 7 ends at 6672)
    CHECK(v.flow(1, 1000) == 0);  // no slot 1 in g
    v.bind(nullptr);
    CHECK(v.flow(0, 0) == 0);
}
