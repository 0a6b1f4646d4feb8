// The spare UMEM frames of an AF_XDP queue (server/net/xdp/path.cpp), apart from libxdp so that the unit
// tests drive it (tests/server/net/test_xdp_frames.cpp).
//
// Frames go back to the fill ring in the order they came free, first in first out, and that order is the
// point. The kernel receives into fill ring frames in ring order and, for each, writes its buffer head
// (pool->heads[frame], 128 octets of kernel memory per frame: xp_alloc) and copies the packet into the
// frame (__xsk_rcv). With the frames in address order, consecutive receives touch consecutive heads and
// frames, which the CPU's prefetcher streams in; a stack (the most recently freed frame first, in the hope
// that it was still cached) fed them in an order the prefetcher cannot follow, and on a busy machine they
// were no longer cached by the time the kernel came back to them: xp_alloc was 10-11 % of the veth's NAPI
// thread (one load, the head's first field, ~0.2 us a query), against 1.4-2.3 % in FIFO order, as for Knot,
// whose frames go round in order (perf record -e cpu-clock on the NAPI thread, doc/performance.md "Measured:
// AF_XDP"). Answers and completions keep the receive order (one TX ring, completed in order), dropped queries
// are freed in it too, so the order survives the round trip.
#pragma once
#include <cstdint>
#include <vector>

namespace gslb::server::xdp {

/// A FIFO of frame addresses with room for every frame of the UMEM (so a push never fails: a frame is in at
/// most one place), no allocation after construction. Capacity: a power of two, at least the frame count.
class FrameFifo {
  public:
    explicit FrameFifo(uint32_t frames) {
        uint32_t cap = 1;
        while (cap < frames) cap <<= 1;
        slots_.resize(cap);
        mask_ = cap - 1;
    }
    bool empty() const { return head_ == tail_; }
    uint32_t size() const { return tail_ - head_; }
    /// A frame that came free (after the ones already in).
    void push(uint64_t addr) { slots_[tail_++ & mask_] = addr; }
    /// The frame that came free first; not when empty().
    uint64_t pop() { return slots_[head_++ & mask_]; }

  private:
    std::vector<uint64_t> slots_;
    uint32_t mask_ = 0;
    uint32_t head_ = 0, tail_ = 0;  // free-running; tail_ - head_ frames held (wraps safely: unsigned)
};

}  // namespace gslb::server::xdp
