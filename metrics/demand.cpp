#include "metrics/demand.hpp"

#include <bit>
#include <cmath>
#include <cstring>

#include "metrics/rng.hpp"

namespace gslb::metrics {

namespace {

constexpr auto kRelaxed = std::memory_order_relaxed;

float gapField(std::uint64_t w) noexcept {
    return std::bit_cast<float>(std::uint32_t(w >> 32));
}
std::uint64_t pack(std::uint32_t low, float high) noexcept {
    return std::uint64_t(std::bit_cast<std::uint32_t>(high)) << 32 | low;
}

double demandOfGap(double gapMs) noexcept {
    return 1000.0 / std::max(gapMs, kMinGapMs);
}

}  // namespace

const char* demandSourceName(DemandSource s) noexcept {
    switch (s) {
        case DemandSource::Measured:
            return "measured";
        case DemandSource::Prior:
            return "prior";
        case DemandSource::Default:
            return "default";
    }
    return "?";
}

DemandTable::DemandTable(std::size_t entries) {
    std::size_t n = 1024;
    while (n < entries) n <<= 1;
    entries_ = std::make_unique<Entry[]>(n);
    mask_ = n - 1;
}

std::uint64_t DemandTable::key(std::uint64_t resolverKey, std::uint64_t hostKey, int family) noexcept {
    const std::uint64_t k =
        mix64(resolverKey ^ mix64(hostKey + 0x9e3779b97f4a7c15ULL * std::uint64_t(family + 1)));
    return k == 0 ? 1 : k;  // 0 marks an empty entry
}

std::uint64_t DemandTable::priorKey(std::uint64_t hostKey) noexcept {
    const std::uint64_t k = mix64(hostKey ^ 0x5bd1e9955bd1e995ULL);
    return k == 0 ? 1 : k;
}

DemandEstimate DemandTable::prior(std::uint64_t hostKey) const noexcept {
    const std::uint64_t pk = priorKey(hostKey);
    const Entry& e = at(pk);
    if (e.key.load(kRelaxed) != pk) return {};
    const float logd = gapField(e.word.load(kRelaxed));
    return {std::min(kMaxDemand, std::exp(double(logd))), DemandSource::Prior, 0};
}

void DemandTable::learnPrior(std::uint64_t hostKey, double demand) noexcept {
    const std::uint64_t pk = priorKey(hostKey);
    Entry& e = at(pk);
    const double logd = std::log(demand);
    if (e.key.load(kRelaxed) != pk) {
        e.key.store(pk, kRelaxed);
        e.word.store(pack(1, float(logd)), kRelaxed);
        return;
    }
    const double old = gapField(e.word.load(kRelaxed));
    e.word.store(pack(1, float(old + (logd - old) / 8)), kRelaxed);
}

DemandEstimate DemandTable::peek(std::uint64_t key, std::uint64_t hostKey) const noexcept {
    const Entry& e = at(key);
    if (e.key.load(kRelaxed) == key) {
        const float gap = gapField(e.word.load(kRelaxed));
        if (gap > 0) return {demandOfGap(gap), DemandSource::Measured, double(gap)};
    }
    return prior(hostKey);
}

DemandEstimate DemandTable::observe(std::uint64_t key, std::uint64_t hostKey, std::int64_t nowMs) noexcept {
    Entry& e = at(key);
    if (e.key.load(kRelaxed) != key) return prior(hostKey);
    const std::uint64_t w = e.word.load(kRelaxed);
    const auto expiry = std::uint32_t(w);
    // Signed difference of wrapping 32-bit ms: right while the gap is under 24 days.
    const auto gapMs = double(std::int32_t(std::uint32_t(nowMs) - expiry));
    const double sample = std::max(gapMs, kMinGapMs);
    const float old = gapField(w);
    const double ewma = old > 0 ? double(old) + (sample - double(old)) / 4 : sample;
    e.word.store(pack(expiry, float(ewma)), kRelaxed);
    if (!(old > 0)) learnPrior(hostKey, demandOfGap(sample));
    return {demandOfGap(ewma), DemandSource::Measured, ewma};
}

void DemandTable::answered(std::uint64_t key, std::int64_t nowMs, std::uint32_t ttlS) noexcept {
    Entry& e = at(key);
    const auto expiry = std::uint32_t(nowMs + std::int64_t(ttlS) * 1000);
    if (e.key.load(kRelaxed) != key) {
        // A new resolver (or one replacing another in this slot): no gap yet.
        e.key.store(key, kRelaxed);
        e.word.store(pack(expiry, 0.0f), kRelaxed);
        return;
    }
    e.word.store(pack(expiry, gapField(e.word.load(kRelaxed))), kRelaxed);
}

}  // namespace gslb::metrics
