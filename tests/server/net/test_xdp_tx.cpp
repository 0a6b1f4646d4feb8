// server/net/xdp/tx_ring.hpp: waiting (bounded) for room in the AF_XDP TX ring, against a fake ring whose
// "kernel" takes descriptors on a kick, a few at a time, or not at all while its queue is stopped.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>

#include "server/net/xdp/tx_ring.hpp"

using namespace gslb::server::xdp;

namespace {

struct FakeRing {
    uint32_t size = 8;
    uint32_t prod = 0;      // slots ever reserved (the next one's index)
    uint32_t pending = 0;   // reserved and not yet taken by the kernel
    uint32_t perKick = 32;  // what one kick takes (copy mode: TX_BATCH_SIZE)
    int stalled = 0;        // kicks that take nothing (a stopped queue), then perKick a kick; -1: forever
    int kicks = 0;
    int64_t now = 1'000;
    int64_t kickNs = 100'000;  // each kick costs this much of the clock

    uint32_t reserve(uint32_t n, uint32_t& idx) {
        uint32_t k = std::min(n, size - pending);
        if (k) idx = prod;
        prod += k;
        pending += k;
        return k;
    }
    bool kick() {
        ++kicks;
        now += kickNs;
        if (stalled != 0) {
            if (stalled > 0) --stalled;
            return pending > 0;
        }
        pending -= std::min(pending, perKick);
        return pending > 0;
    }
    int64_t nowNs() const { return now; }
};

}  // namespace

TEST_CASE("xdp TX: room in the ring is reserved at once, without a kick") {
    FakeRing r;
    r.prod = r.pending = 3;
    uint32_t idx = 99;
    int64_t deadline = 0;
    CHECK(reserveTx(r, 4, idx, deadline) == 4);
    CHECK(idx == 3);
    CHECK(r.kicks == 0);
    CHECK(deadline == 0);  // no wait started
}

TEST_CASE("xdp TX: a full ring is kicked until the kernel makes room; the slots run on from the first") {
    FakeRing r;
    r.prod = r.pending = 6;  // two free: the first two answers fit now, the other two after a kick
    r.perKick = 1;           // and each kick frees one slot
    uint32_t idx = 99;
    int64_t deadline = 0;
    CHECK(reserveTx(r, 4, idx, deadline) == 4);
    CHECK(idx == 6);  // slots 6..9: consecutive across the reservations
    CHECK(r.prod == 10);
    CHECK(r.kicks == 2);
    CHECK(deadline == 1'000 + kTxWaitNs);
}

TEST_CASE("xdp TX: a queue stopped for a while (a veth peer's full ring) still gets every answer") {
    FakeRing r;
    r.prod = r.pending = 8;
    r.stalled = 5;  // 0.5 ms of a stopped queue, within the 1 ms bound
    uint32_t idx = 0;
    int64_t deadline = 0;
    CHECK(reserveTx(r, 8, idx, deadline) == 8);
    CHECK(idx == 8);
    CHECK(r.kicks == 6);
}

TEST_CASE("xdp TX: a queue that stays stopped costs one bounded wait per wake-up, then the rest is dropped") {
    FakeRing r;
    r.prod = r.pending = 7;
    r.stalled = -1;
    uint32_t idx = 0;
    int64_t deadline = 0;
    CHECK(reserveTx(r, 4, idx, deadline) == 1);  // the one free slot; three answers for the caller to count
    CHECK(idx == 7);
    CHECK(r.kicks == int(kTxWaitNs / r.kickNs));
    CHECK(r.now >= deadline);
    // The next batch of the same wake-up does not wait again.
    int kicks = r.kicks;
    CHECK(reserveTx(r, 4, idx, deadline) == 0);
    CHECK(r.kicks == kicks);
    // Nor does the kick after its submit: the kernel says "again", the deadline has passed.
    CHECK(kickTx(r, deadline));
    CHECK(r.kicks == kicks + 1);
}

TEST_CASE("xdp TX: after a submit, kicked again while the kernel says it could not take everything") {
    FakeRing r;
    r.prod = r.pending = 8;
    r.perKick = 3;  // 8 descriptors: 3 kicks send them all
    int64_t deadline = 0;
    CHECK_FALSE(kickTx(r, deadline));
    CHECK(r.kicks == 3);
    CHECK(r.pending == 0);
    // A kernel that takes everything at once: one kick, no wait.
    FakeRing q;
    q.prod = q.pending = 4;
    int64_t d2 = 0;
    CHECK_FALSE(kickTx(q, d2));
    CHECK(q.kicks == 1);
    CHECK(d2 == 0);
}
