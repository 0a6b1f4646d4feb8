#include "server/state/rtt_table.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace gslb::server {

namespace {

uint64_t prefixMask(int bits) {
    return bits >= 64 ? ~uint64_t(0) : ~(~uint64_t(0) >> bits);
}

// The first 64 bits of an address, most significant first (IPv4: its 32 bits at the top).
uint64_t topBits(const zones::ClientSubnet& c) {
    uint64_t v = 0;
    const size_t n = c.family == zones::kFamilyIPv4 ? 4 : 8;
    for (size_t i = 0; i < 8; ++i) v = v << 8 | (i < n ? c.addr[i] : 0);
    return v;
}

constexpr int kReadTries = 4;

}  // namespace

RttTable::RttTable(size_t prefixes, size_t sites, int v4Bits, int v6Bits)
    : v4Bits_(std::clamp(v4Bits, 8, 32)),
      v6Bits_(std::clamp(v6Bits, 16, 64)),
      sites_(std::clamp<size_t>(sites, 1, kMaxSites)),
      slots_(std::bit_ceil(std::clamp<size_t>(prefixes, kProbe, size_t(1) << 24))),
      stride_(3 + 2 * sites_) {
    words_ = std::make_unique<std::atomic<uint64_t>[]>(slots_ * stride_);
    for (size_t i = 0; i < slots_ * stride_; ++i) words_[i].store(0, std::memory_order_relaxed);
}

RttTable::Key RttTable::key(const zones::ClientSubnet& c) const noexcept {
    if (c.family != zones::kFamilyIPv4 && c.family != zones::kFamilyIPv6) return {};
    const int need = bits(c.family);
    if (c.bits < need) return {};
    return {topBits(c) & prefixMask(need), c.family};
}

RttTable::Key RttTable::prefixKey(const zones::ClientSubnet& p) const noexcept {
    if (p.family != zones::kFamilyIPv4 && p.family != zones::kFamilyIPv6) return {};
    if (p.bits != bits(p.family)) return {};
    return key(p);
}

size_t RttTable::home(Key k) const noexcept {
    // A multiplicative hash of the address bits and the family: prefixes of one network differ in their
    // last kept bits, which the multiplication carries into the top bits taken here.
    const uint64_t h = (k.addr ^ (uint64_t(k.family) << 1)) * 0x9E3779B97F4A7C15ULL;
    return size_t(h >> (64 - std::countr_zero(slots_))) & (slots_ - 1);
}

bool RttTable::lookup(Key k, std::span<const uint32_t> sites, std::span<Figure> out) const noexcept {
    const size_t n = std::min(out.size(), sites.size());
    for (auto& f : out) f = Figure{};
    if (!k) return false;
    const size_t h = home(k);
    for (size_t i = 0; i < kProbe; ++i) {
        const std::atomic<uint64_t>* s = slot((h + i) & (slots_ - 1));
        for (int t = 0;; ++t) {
            if (t == kReadTries) return false;  // a writer kept it busy: unknown for this query
            const uint64_t seq = s[1].load(std::memory_order_acquire);
            if (seq & 1) continue;
            const uint64_t addr = s[0].load(std::memory_order_relaxed);
            const uint8_t family = uint8_t(s[2].load(std::memory_order_relaxed) & 0xff);
            const bool match = family == k.family && addr == k.addr;
            if (match)
                for (size_t j = 0; j < n; ++j) {
                    if (sites[j] >= sites_) continue;
                    const uint64_t v = s[3 + 2 * sites[j]].load(std::memory_order_relaxed);
                    out[j].rttMs = float(double(v >> 32) / 1000.0);
                    out[j].samples = uint32_t(v);
                    out[j].atMs = int64_t(s[4 + 2 * sites[j]].load(std::memory_order_relaxed));
                }
            std::atomic_thread_fence(std::memory_order_acquire);
            if (s[1].load(std::memory_order_relaxed) != seq) continue;
            if (match) return true;
            if (family == 0) return false;  // slots are only ever replaced, never emptied: no key past a hole
            break;                          // someone else's: the next slot of the window
        }
    }
    for (auto& f : out) f = Figure{};
    return false;
}

bool RttTable::update(Key k, uint32_t site, float rttMs, uint32_t samples, int64_t nowMs) noexcept {
    if (!k || site >= sites_) return false;
    const size_t h = home(k);
    std::atomic<uint64_t>* found = nullptr;
    std::atomic<uint64_t>* oldest = nullptr;
    uint64_t oldestMs = ~uint64_t(0);
    bool fresh = false;
    for (size_t i = 0; i < kProbe && !found; ++i) {
        std::atomic<uint64_t>* s = slot((h + i) & (slots_ - 1));
        const uint64_t meta = s[2].load(std::memory_order_relaxed);
        if ((meta & 0xff) == 0) {
            found = s;
            fresh = true;
            ++used_;
        } else if (uint8_t(meta) == k.family && s[0].load(std::memory_order_relaxed) == k.addr) {
            found = s;
        } else if ((meta >> 8) < oldestMs) {
            oldestMs = meta >> 8;
            oldest = s;
        }
    }
    if (!found) {
        found = oldest;
        fresh = true;
        ++evictions_;
    }
    std::atomic<uint64_t>* s = found;
    const uint64_t seq = s[1].load(std::memory_order_relaxed);
    s[1].store(seq + 1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    if (fresh) {
        s[0].store(k.addr, std::memory_order_relaxed);
        for (size_t j = 0; j < sites_; ++j) {
            s[3 + 2 * j].store(0, std::memory_order_relaxed);
            s[4 + 2 * j].store(0, std::memory_order_relaxed);
        }
    }
    s[2].store(uint64_t(std::max<int64_t>(nowMs, 1)) << 8 | k.family, std::memory_order_relaxed);
    const uint64_t us = uint64_t(std::lround(std::clamp(double(rttMs), 0.0, 4.0e6) * 1000.0));
    s[3 + 2 * site].store(us << 32 | samples, std::memory_order_relaxed);
    s[4 + 2 * site].store(uint64_t(std::max<int64_t>(nowMs, 1)), std::memory_order_relaxed);
    s[1].store(seq + 2, std::memory_order_release);
    return true;
}

void RttTable::carryFrom(const RttTable& old, const std::vector<int>& map) {
    if (old.v4Bits_ != v4Bits_ || old.v6Bits_ != v6Bits_) return;
    for (size_t i = 0; i < old.slots_; ++i) {
        const std::atomic<uint64_t>* s = old.slot(i);
        const uint64_t meta = s[2].load(std::memory_order_relaxed);
        if ((meta & 0xff) == 0) continue;
        const Key k{s[0].load(std::memory_order_relaxed), uint8_t(meta)};
        for (size_t j = 0; j < old.sites_ && j < map.size(); ++j) {
            const int64_t at = int64_t(s[4 + 2 * j].load(std::memory_order_relaxed));
            if (map[j] < 0 || at == 0) continue;
            const uint64_t v = s[3 + 2 * j].load(std::memory_order_relaxed);
            update(k, uint32_t(map[j]), float(double(v >> 32) / 1000.0), uint32_t(v), at);
        }
    }
}

}  // namespace gslb::server
