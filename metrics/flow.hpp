#pragma once
// The committed flow of each service (the `headroom` chooser, balance.hpp): the sum of the demand of the
// answers naming it that resolvers still hold in their caches, as this gslbd gave them — the sessions per
// second on their way to the service that its metrics cannot show yet. An answer counts from the moment it is
// given until the TTL it was given runs out.
//
// Storage: per (worker, service slot) a ring of kFlowBuckets words, each a 32-bit bucket number (expiry ms ÷
// the slot's bucket width) and a float sum of demand, in one 64-bit atomic (never torn apart). Only worker w
// writes its rows (single writer: a relaxed load and store, no locked instruction), any thread reads and sums
// the rows (as AnswerCounters in server/state/gslb.hpp). An answer is added to the bucket of its expiry; a
// bucket whose number is before now's has expired and is reused. The width is the slot's longest TTL ÷
// (kFlowBuckets - 2), so every live expiry has its own bucket; an answer counts until the end of its bucket,
// at most one width (ttl / 6) late. A reader racing a writer may miss the newest answer — approximate, as
// every metric here is.
// In flight: the sessions those answers are still to bring, sum over them of demand x the time their TTL has
// left (read per bucket: its sum x (the middle of its bucket - now), at least 0), what the site's metrics
// cannot show yet (balance.hpp, the projected load).
// Memory: workers x service slots x kFlowBuckets x 8 octets (64 per slot and worker): 5 MB for 10,000
// hostnames x 2 sites x 4 workers.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace gslb::metrics {

inline constexpr std::size_t kFlowBuckets = 8;

// What the answers still cached commit to one service slot.
struct FlowReading {
    double rate = 0;     // sessions/s: the committed flow
    double pending = 0;  // sessions still to arrive: sum of demand x the TTL left
};

class FlowLedger {
  public:
    // widthMs[slot]: the bucket width of each service slot (bucketWidthMs of its longest TTL).
    FlowLedger(std::size_t workers, std::vector<std::uint32_t> widthMs);
    static std::uint32_t bucketWidthMs(std::uint32_t ttlS) noexcept;

    std::size_t workers() const noexcept { return workers_; }
    std::size_t slots() const noexcept { return width_.size(); }
    std::uint32_t widthMs(std::uint32_t slot) const noexcept { return slot < slots() ? width_[slot] : 1; }
    std::size_t bytes() const noexcept { return workers_ * slots() * kFlowBuckets * 8; }

    // Worker `worker` only: an answer naming `slot` for a resolver of `demand` (sessions/s) that expires at
    // `expiryMs` (monotonic ms). Out-of-range worker or slot: ignored.
    void add(std::size_t worker, std::uint32_t slot, double demand, std::int64_t expiryMs) noexcept;
    // Any thread: the committed flow of `slot` at `nowMs` and its sessions still to come, summed over every
    // worker; {0, 0} for an out-of-range slot.
    FlowReading read(std::uint32_t slot, std::int64_t nowMs) const noexcept;
    double flow(std::uint32_t slot, std::int64_t nowMs) const noexcept { return read(slot, nowMs).rate; }
    // A reload: the rows of slot oldSlot of `old` become those of newSlot here (same worker count and
    // width; else nothing is carried). Control thread, before workers see this ledger.
    void carry(const FlowLedger& old, std::uint32_t oldSlot, std::uint32_t newSlot) noexcept;

  private:
    std::atomic<std::uint64_t>* row(std::size_t worker, std::uint32_t slot) const noexcept {
        return &words_[(worker * width_.size() + slot) * kFlowBuckets];
    }
    std::size_t workers_;
    std::vector<std::uint32_t> width_;
    std::unique_ptr<std::atomic<std::uint64_t>[]> words_;
};

// One answering thread's view of a FlowLedger: each slot's sum over every row, read again once it is a
// refresh old (the slot's bucket width ÷ 8: ttl ÷ 48), and this thread's own answers added to it at once.
// FlowLedger::flow reads kFlowBuckets words per row, and there is a row per answering thread (workers x
// (1 + listen addresses)): 96 atomic loads per candidate and query at 4 workers on 2 addresses. Through the
// view a query reads one cached figure per candidate; the answers of other threads count at most a refresh
// late (the buckets already count an answer up to a width late), this thread's never.
class FlowView {
  public:
    // A new ledger (a reload; null: none): every slot is read afresh. Allocates: not on the query path.
    void bind(const FlowLedger* ledger);
    // The committed flow of `slot` at `nowMs`, as FlowLedger::read, at most a refresh old; {0, 0} when
    // unbound or out of range.
    FlowReading read(std::uint32_t slot, std::int64_t nowMs) noexcept;
    double flow(std::uint32_t slot, std::int64_t nowMs) noexcept { return read(slot, nowMs).rate; }
    // This thread has added `demand` to `slot` for `ttlS` seconds (FlowLedger::add): counted here until the
    // next refresh reads it from the ledger.
    void added(std::uint32_t slot, double demand, std::uint32_t ttlS) noexcept;

  private:
    struct Entry {
        std::int64_t untilMs = 0;  // 0: never read
        FlowReading value;
    };
    const FlowLedger* ledger_ = nullptr;
    std::vector<Entry> entries_;
    std::vector<std::uint32_t> refreshMs_;
};

}  // namespace gslb::metrics
