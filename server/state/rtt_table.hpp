// Round-trip times learned per (client prefix, site) from the site agents (gslbd-agent(8), POST
// /v1/sites/SITE/rtt), for the `rtt` stage. Written by the control thread alone, read lock-free by every
// worker: a fixed table of slots (open addressing, a window of kProbe slots per key), each slot a seqlock, so
// a reader never waits and never sees half an update. Bounded: at most `capacity` prefixes; a new prefix that
// finds its window full takes the slot of the one reported least recently (least-recently-updated eviction:
// a measurement nobody renews is the one to lose). Memory: capacity × (24 + 16 × sites) octets: 72 a prefix
// with three sites.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "zones/client.hpp"

namespace gslb::server {

class RttTable {
  public:
    static constexpr size_t kProbe = 16;  // slots a key may live in: its hash's and the next 15
    static constexpr size_t kMaxSites = 256;

    /// `prefixes` (1..16,777,216) rounded up to a power of two; `sites` (1..kMaxSites) figures per prefix;
    /// clients grouped by /v4Bits (8..32) and /v6Bits (16..64), as the agents group them.
    RttTable(size_t prefixes, size_t sites, int v4Bits, int v6Bits);

    int v4Bits() const { return v4Bits_; }
    int v6Bits() const { return v6Bits_; }
    size_t capacity() const { return slots_; }
    size_t sites() const { return sites_; }
    /// Octets the table holds.
    size_t memoryBytes() const { return slots_ * stride_ * sizeof(uint64_t); }

    /// A client network: its family (zones::kFamilyIPv4/IPv6; 0: none) and its address's first 64 bits with
    /// the bits past the table's prefix length zero.
    struct Key {
        uint64_t addr = 0;
        uint8_t family = 0;
        explicit operator bool() const { return family != 0; }
        bool operator==(const Key&) const = default;
    };
    /// The table's key of a client network. None when the client cannot be placed at the table's length
    /// (unknown, or an ECS prefix shorter than it: a /20 says nothing of which /24). noexcept, the query
    /// path's.
    Key key(const zones::ClientSubnet& client) const noexcept;
    /// The key of a prefix exactly of the table's length (a report's); none for any other length.
    Key prefixKey(const zones::ClientSubnet& prefix) const noexcept;
    /// The prefix length a key of `family` stands for.
    int bits(uint8_t family) const { return family == zones::kFamilyIPv4 ? v4Bits_ : v6Bits_; }

    struct Figure {
        float rttMs = 0;
        uint32_t samples = 0;
        int64_t atMs = 0;  // monotonic ms of the report; 0: no figure
    };
    /// Copies `key`'s figure of site sites[i] into out[i] for every i (atMs 0 where none; a site out of
    /// range has none). False when the key has no slot (every figure 0) — also when a concurrent update kept
    /// changing it, which a reader treats as "not learned" for this one query rather than waiting. noexcept,
    /// no allocation; reads one slot per probe (one or two cache lines at a few sites).
    bool lookup(Key key, std::span<const uint32_t> sites, std::span<Figure> out) const noexcept;

    /// Control thread only: sets site `site`'s figure of `key` (a slot is taken for a new key; see the
    /// eviction above). `nowMs` monotonic, > 0. Returns false only for no key or a site out of range.
    bool update(Key key, uint32_t site, float rttMs, uint32_t samples, int64_t nowMs) noexcept;

    /// Prefixes held (control thread).
    size_t used() const { return used_; }
    /// Prefixes evicted to make room since the table was made (control thread).
    uint64_t evictions() const { return evictions_; }

    /// Control thread: copies every figure of `old` into this table, site `s` of old to site map[s] (-1:
    /// dropped), for a reload that keeps what the agents taught. Prefix lengths must be the same (else
    /// nothing is copied: the keys would mean other networks).
    void carryFrom(const RttTable& old, const std::vector<int>& map);

  private:
    // Slot layout in 64-bit words: [0] key address bits, [1] sequence (odd while written), [2] last update
    // ms << 8 | family (family 0: an empty slot), then per site: [3 + 2s] rtt µs << 32 | samples, [4 + 2s]
    // report time ms.
    std::atomic<uint64_t>* slot(size_t i) const { return words_.get() + i * stride_; }
    size_t home(Key key) const noexcept;
    int v4Bits_, v6Bits_;
    size_t sites_, slots_, stride_;
    std::unique_ptr<std::atomic<uint64_t>[]> words_;
    size_t used_ = 0;
    uint64_t evictions_ = 0;
};

}  // namespace gslb::server
