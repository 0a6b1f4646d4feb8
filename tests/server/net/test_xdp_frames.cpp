// server/net/xdp/frames.hpp: the spare UMEM frames go back to the fill ring in the order they came free, so
// that the kernel receives into frames (and their buffer heads) in address order.
#include <doctest/doctest.h>

#include <cstdint>
#include <deque>
#include <vector>

#include "server/net/xdp/frames.hpp"

using namespace gslb::server::xdp;

TEST_CASE("xdp frames: first in, first out, across many wrap-arounds of the slots") {
    FrameFifo f(5);  // rounded up to 8 slots
    CHECK(f.empty());
    uint64_t in = 0, out = 0;
    for (int round = 0; round < 100; ++round) {
        for (int i = 0; i < 5; ++i) f.push(in++ * 4096);
        CHECK(f.size() == 5);
        for (int i = 0; i < 3 + round % 3; ++i) CHECK(f.pop() == out++ * 4096);
        while (!f.empty()) CHECK(f.pop() == out++ * 4096);
    }
    CHECK(in == out);
}

TEST_CASE("xdp frames: every frame of the UMEM fits, and they come out in the order they went in") {
    constexpr uint32_t kFrames = 4096;
    FrameFifo f(kFrames);
    for (uint32_t i = 0; i < kFrames; ++i) f.push(uint64_t(i) << 12);
    CHECK(f.size() == kFrames);
    for (uint32_t i = 0; i < kFrames; ++i) REQUIRE(f.pop() == uint64_t(i) << 12);
    CHECK(f.empty());
}

// The queue's round trip, as server/net/xdp/path.cpp runs it: kFill frames in the fill ring, the kernel
// receives into them in ring order, the worker answers a batch (the answers' frames complete in order, a few
// batches later) or frees a query's frame at once (no answer: `dropEvery`), and tops the fill ring up from
// the spare frames. Returns the times, after a warm-up, that the kernel met a frame that was not the one
// after the previous (the run its prefetcher follows: xp_alloc's buffer head and __xsk_rcv's copy). Every
// frame is checked to be in exactly one place at the end.
namespace {
int orderBreaks(int dropEvery) {
    constexpr uint32_t kFrames = 256, kFill = 64, kBatch = 16;
    FrameFifo spare(kFrames);
    std::deque<uint64_t> fill, inFlight;
    for (uint32_t i = 0; i < kFill; ++i) fill.push_back(i);
    for (uint32_t i = kFill; i < kFrames; ++i) spare.push(i);
    uint64_t last = kFill - 1;
    int breaks = 0, received = 0;
    for (int round = 0; round < 200; ++round) {
        while (inFlight.size() > 2 * kBatch) {  // completions of what was sent two batches ago, in order
            spare.push(inFlight.front());
            inFlight.pop_front();
        }
        for (uint32_t i = 0; i < kBatch; ++i) {
            uint64_t frame = fill.front();
            fill.pop_front();
            if (round > 10 && frame != (last + 1) % kFrames) ++breaks;
            last = frame;
            if (dropEvery && ++received % dropEvery == 0)
                spare.push(frame);
            else
                inFlight.push_back(frame);
        }
        while (fill.size() < kFill && !spare.empty()) fill.push_back(spare.pop());
    }
    std::vector<int> seen(kFrames);
    for (auto f : fill) ++seen[f];
    for (auto f : inFlight) ++seen[f];
    while (!spare.empty()) ++seen[spare.pop()];
    for (uint32_t i = 0; i < kFrames; ++i) REQUIRE(seen[i] == 1);
    return breaks;
}
}  // namespace

TEST_CASE("xdp frames: the kernel receives into consecutive frames, round after round") {
    // Every query answered (the steady state of a server under load): the frames go round in address order.
    // A stack of spare frames (the most recently freed first) broke the run at nearly every batch.
    CHECK(orderBreaks(0) == 0);
    // Queries freed without an answer go ahead of the answers in flight: the order bends, no frame is lost.
    CHECK(orderBreaks(7) > 0);
}
