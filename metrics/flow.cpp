#include "metrics/flow.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace gslb::metrics {

namespace {
std::uint64_t packWord(std::uint32_t bucket, float sum) noexcept {
    return std::uint64_t(bucket) << 32 | std::bit_cast<std::uint32_t>(sum);
}
std::uint32_t bucketOf(std::uint64_t w) noexcept {
    return std::uint32_t(w >> 32);
}
float sumOf(std::uint64_t w) noexcept {
    return std::bit_cast<float>(std::uint32_t(w));
}
}  // namespace

FlowLedger::FlowLedger(std::size_t workers, std::vector<std::uint32_t> widthMs)
    : workers_(workers), width_(std::move(widthMs)) {
    for (auto& w : width_) w = w == 0 ? 1 : w;
    const std::size_t n = workers_ * width_.size() * kFlowBuckets;
    words_ = std::make_unique<std::atomic<std::uint64_t>[]>(n);
    for (std::size_t i = 0; i < n; ++i) words_[i].store(0, std::memory_order_relaxed);
}

std::uint32_t FlowLedger::bucketWidthMs(std::uint32_t ttlS) noexcept {
    const std::uint64_t ms = std::uint64_t(ttlS) * 1000;
    const std::uint64_t w = (ms + kFlowBuckets - 3) / (kFlowBuckets - 2);
    return w == 0 ? 1 : w > 0xffffffffULL ? 0xffffffffU : std::uint32_t(w);
}

void FlowLedger::add(std::size_t worker, std::uint32_t slot, double demand, std::int64_t expiryMs) noexcept {
    if (worker >= workers_ || slot >= width_.size() || !(demand > 0) || !std::isfinite(demand)) return;
    const auto bucket = std::uint32_t(std::uint64_t(expiryMs) / width_[slot]);
    std::atomic<std::uint64_t>& word = row(worker, slot)[bucket % kFlowBuckets];
    const std::uint64_t w = word.load(std::memory_order_relaxed);
    const float sum = bucketOf(w) == bucket ? sumOf(w) : 0.0f;  // another bucket number: expired, reuse
    word.store(packWord(bucket, sum + float(demand)), std::memory_order_relaxed);
}

FlowReading FlowLedger::read(std::uint32_t slot, std::int64_t nowMs) const noexcept {
    const std::size_t slots = width_.size();
    if (slot >= slots) return {};
    const std::uint32_t width = width_[slot];
    const auto now = std::uint32_t(std::uint64_t(nowMs) / width);
    // Where now lies in its bucket, in widths: a bucket k ahead of now's has (k + 0.5 - into) widths left.
    const double into = double(std::uint64_t(nowMs) % width) / double(width);
    // Everything but the words read into locals first: this runs per candidate and query of a headroom
    // hostname, and the compiler reloads members around each atomic load otherwise.
    const std::atomic<std::uint64_t>* r = &words_[std::size_t(slot) * kFlowBuckets];
    const std::size_t stride = slots * kFlowBuckets;
    double total = 0, widthsAhead = 0;
    for (std::size_t wk = workers_; wk > 0; --wk, r += stride)
        for (std::size_t b = 0; b < kFlowBuckets; ++b) {
            const std::uint64_t w = r[b].load(std::memory_order_relaxed);
            // Live: its bucket is now's or later (within the ring); unsigned difference: wraps safely, and an
            // expired bucket (before now) is a huge number.
            const std::uint32_t ahead = bucketOf(w) - now;
            if (ahead < kFlowBuckets) {
                const double sum = double(sumOf(w));
                total += sum;
                widthsAhead += sum * std::max(0.0, double(ahead) + 0.5 - into);
            }
        }
    return {total, widthsAhead * double(width) / 1000.0};
}

void FlowLedger::carry(const FlowLedger& old, std::uint32_t oldSlot, std::uint32_t newSlot) noexcept {
    if (old.workers_ != workers_ || oldSlot >= old.width_.size() || newSlot >= width_.size() ||
        old.width_[oldSlot] != width_[newSlot])
        return;
    for (std::size_t wk = 0; wk < workers_; ++wk)
        for (std::size_t b = 0; b < kFlowBuckets; ++b)
            row(wk, newSlot)[b].store(old.row(wk, oldSlot)[b].load(std::memory_order_relaxed),
                                      std::memory_order_relaxed);
}

void FlowView::bind(const FlowLedger* ledger) {
    ledger_ = ledger;
    const std::size_t n = ledger ? ledger->slots() : 0;
    entries_.assign(n, Entry{});
    refreshMs_.resize(n);
    for (std::size_t i = 0; i < n; ++i)
        refreshMs_[i] = std::max<std::uint32_t>(1, ledger->widthMs(std::uint32_t(i)) / 8);
}

FlowReading FlowView::read(std::uint32_t slot, std::int64_t nowMs) noexcept {
    if (slot >= entries_.size()) return {};
    Entry& e = entries_[slot];
    if (e.untilMs == 0 || nowMs >= e.untilMs || nowMs < e.untilMs - std::int64_t(refreshMs_[slot])) {
        e.value = ledger_->read(slot, nowMs);
        e.untilMs = nowMs + refreshMs_[slot];
    }
    return e.value;
}

void FlowView::added(std::uint32_t slot, double demand, std::uint32_t ttlS) noexcept {
    if (slot >= entries_.size() || !(demand > 0) || !std::isfinite(demand)) return;
    entries_[slot].value.rate += demand;
    entries_[slot].value.pending += demand * double(ttlS);
}

}  // namespace gslb::metrics
