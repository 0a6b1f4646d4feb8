#pragma once
// Each resolver's demand for a hostname, learnt from its own queries (the `headroom` chooser, balance.hpp).
//
// A caching resolver asks again at the first client lookup after the answer it holds has expired. Client
// lookups behind one resolver arrive at a rate d (sessions/s), so the gap between the expiry of the answer
// gslbd gave (answer time + the TTL given) and that resolver's next query is exponential with mean 1 / d.
// An EWMA of those gaps (weight 1/4) gives d = 1000 / gap_ms. Keyed by (resolver, hostname, address family):
// the resolver is the packet's source, or the ECS prefix when the answer is scoped to it (RFC 7871 §7.3.1:
// the resolver then caches per prefix).
//  - A resolver that asks again BEFORE the answer expired (prefetch, as Unbound's `prefetch` does in the
//    last tenth of the TTL; a farm of caches behind one address) gives a gap of 0: clamped to kMinGapMs, so
//    its demand goes towards the cap kMaxDemand — it is treated as large, which is the safe side (short TTLs,
//    only sites its batch fits).
//  - A resolver never seen (or not since its entry was reused): the hostname's prior, a geometric mean (an
//    EWMA of log d, weight 1/8) of each resolver's FIRST measured demand, so every resolver counts once, not
//    by how often it asks; before any measurement at all, kDefaultDemand.
//  - Several gslbd instances of one NS set: each measures from its own answers. A resolver that spreads its
//    queries over k instances shows each of them gaps of up to k TTLs and looks smaller than it is; resolvers
//    that pick the fastest server (BIND, Unbound: by smoothed RTT) mostly stay with one.
//
// Storage: a fixed table of `entries` (a power of two) of 16 octets, direct-mapped by a 64-bit hash of the
// key; a different key in the slot replaces it (the newest resolver wins; the key is checked in full, so a
// collision never mixes two resolvers). The prior of a hostname lives in the same table under its own key.
// Shared by every worker thread: two relaxed 64-bit atomics per entry, no lock; two workers answering one
// resolver at the same instant may lose one update (one sample of an EWMA) — approximate under races, never
// torn. Each entry packs the last expiry (ms, 32 bits, wrapping every 49 days; compared as a signed
// difference) with the gap EWMA (a float) in one word, so those two are always read together.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace gslb::metrics {

inline constexpr double kMinGapMs = 1.0;       // gap samples below this count as this
inline constexpr double kMaxDemand = 1000.0;   // sessions/s: 1000 / kMinGapMs
inline constexpr double kDefaultDemand = 1.0;  // sessions/s before any resolver of a hostname was measured

enum class DemandSource : std::uint8_t {
    Measured,  // this resolver's gaps
    Prior,     // the hostname's prior (resolver not measured yet)
    Default,   // nothing measured for the hostname yet: kDefaultDemand
};
const char* demandSourceName(DemandSource s) noexcept;  // "measured", "prior", "default"

struct DemandEstimate {
    double demand = kDefaultDemand;  // sessions/s, in (0, kMaxDemand]
    DemandSource source = DemandSource::Default;
    double gapMs = 0;  // the EWMA of gaps (Measured), else 0
};

class DemandTable {
  public:
    // `entries` rounded up to a power of two, at least 1024. Memory: 16 octets an entry.
    explicit DemandTable(std::size_t entries);
    std::size_t size() const noexcept { return mask_ + 1; }
    std::size_t bytes() const noexcept { return size() * sizeof(Entry); }

    // The key of (resolver, hostname, family): `resolverKey` from the client's address or prefix
    // (metrics::clientPrefixKey), `hostKey` from the hostname (a hash of its name, stable across reloads),
    // `family` 0 (A) or 1 (AAAA).
    static std::uint64_t key(std::uint64_t resolverKey, std::uint64_t hostKey, int family) noexcept;

    // Query path, before the choice: the resolver's demand at `nowMs` (monotonic ms), learning from this
    // query first: when the entry holds `key` and the expiry of the last answer, (nowMs - expiry) is a gap
    // sample. O(1), no allocation.
    DemandEstimate observe(std::uint64_t key, std::uint64_t hostKey, std::int64_t nowMs) noexcept;
    // Query path, after the choice: the answer given at nowMs expires after ttlS seconds.
    void answered(std::uint64_t key, std::int64_t nowMs, std::uint32_t ttlS) noexcept;
    // The estimate without learning (explain).
    DemandEstimate peek(std::uint64_t key, std::uint64_t hostKey) const noexcept;
    // The hostname's prior, or kDefaultDemand with source Default.
    DemandEstimate prior(std::uint64_t hostKey) const noexcept;

  private:
    struct Entry {
        std::atomic<std::uint64_t> key{0};
        std::atomic<std::uint64_t> word{0};  // low 32: expiry ms (wrapping); high 32: float gap EWMA (ms),
                                             // 0 = no gap measured yet. The prior's entry: float log(d).
    };
    static_assert(std::atomic<std::uint64_t>::is_always_lock_free);
    Entry& at(std::uint64_t key) const noexcept { return entries_[key & mask_]; }
    static std::uint64_t priorKey(std::uint64_t hostKey) noexcept;
    void learnPrior(std::uint64_t hostKey, double demand) noexcept;

    std::unique_ptr<Entry[]> entries_;
    std::size_t mask_ = 0;
};

}  // namespace gslb::metrics
