// Room in an AF_XDP TX ring for a batch of answers (server/net/xdp/path.cpp), apart from libxdp so that the
// unit tests drive it with a fake ring (tests/server/net/test_xdp_tx.cpp).
//
// The TX ring fills when the kernel takes descriptors more slowly than they come: in copy mode it sends only
// on a kick (sendto), at most 32 a kick (TX_BATCH_SIZE, net/xdp/xsk.c), and a driver queue that is stopped (a
// veth whose peer's ring is full, a NIC's full TX queue) makes the kick return EAGAIN with descriptors left
// in the ring. Knot (src/libknot/xdp/xdp.c) keeps its TX frames fewer than the ring's slots, so its ring
// always has room and an answer is lost when no TX frame is free; gslbd sends an answer from its query's
// frame, so the ring itself can be short. An answer that finds no room is not dropped at once: kick, take
// the completions back and look again, for at most kTxWaitNs per wake-up of the worker; what still finds no
// room is dropped and counted (gslbd_xdp_dropped_total{reason="tx_full"}).
#pragma once
#include <cstdint>

namespace gslb::server::xdp {

/// The longest a worker waits for TX ring room (and for a kernel that said "again" to take the ring's
/// descriptors) in one wake-up, nanoseconds: ~1,000 kicks, and what a ring of 2,048 frames takes to drain
/// at the ~1-2 µs a frame of a veth peer or a slow NIC queue.
inline constexpr int64_t kTxWaitNs = 1'000'000;

/// Ring, the operations the wait needs:
///   uint32_t reserve(uint32_t n, uint32_t& idx): reserves up to n slots, as many as are free; sets idx to
///       the first when it reserved any. Consecutive reservations are consecutive slots (one producer).
///   bool kick(): asks the kernel to send what was submitted and takes back the completed frames; true when
///       the kernel said it could not take everything (EAGAIN, ENOBUFS, EBUSY).
///   int64_t nowNs(): a monotonic clock.
/// `deadlineNs` is per wake-up: 0 until the first wait, which sets it to now + kTxWaitNs, so every batch of
/// the wake-up shares one bound and a ring that stays full costs one wait, not one per batch.
/// Returns how many slots, from idx on, were reserved (<= want); the caller drops and counts the rest.
template <class Ring>
uint32_t reserveTx(Ring& ring, uint32_t want, uint32_t& idx, int64_t& deadlineNs) {
    uint32_t got = ring.reserve(want, idx);
    while (got < want) {
        int64_t now = ring.nowNs();
        if (deadlineNs == 0)
            deadlineNs = now + kTxWaitNs;
        else if (now >= deadlineNs)
            break;
        ring.kick();
        uint32_t first = 0;
        uint32_t more = ring.reserve(want - got, first);
        if (more && got == 0) idx = first;
        got += more;
    }
    return got;
}

/// Kicks the ring after a batch was submitted, and again while the kernel says it could not take everything,
/// within the wake-up's deadline (as reserveTx): answers left in the ring are otherwise sent only when the
/// next query wakes the worker. Returns whether the kernel still had some left at the end.
template <class Ring>
bool kickTx(Ring& ring, int64_t& deadlineNs) {
    while (ring.kick()) {
        int64_t now = ring.nowNs();
        if (deadlineNs == 0)
            deadlineNs = now + kTxWaitNs;
        else if (now >= deadlineNs)
            return true;
    }
    return false;
}

}  // namespace gslb::server::xdp
