// Response rate limiting (RRL), the design BIND, NSD and Knot share: a response to UDP client C of kind K
// (zones::ResponseKind: an answer per QNAME and QTYPE, NXDOMAIN per zone, a referral per delegation point,
// errors per prefix alone) is counted in the token bucket of (C's prefix, K, name). When the bucket is empty
// the response is dropped, except every `slip`-th one, which goes out short with TC set (or as BADCOOKIE to
// a client that sent a cookie) so that a real client retries over TCP. A spoofed flood reflected at a victim
// is cut to `responses_per_second` per bucket, and a real client behind the same prefix still gets through
// over TCP. TCP, clients with a valid server cookie and `exempt` prefixes are never limited (the worker
// checks those before asking).
//
// The table is one fixed array of buckets shared by every worker, lock-free with relaxed atomics: one
// client's source ports are spread over the workers by SO_REUSEPORT, so per-worker tables would each let the
// full rate through (the limit × the workers). A bucket's token state is one 64-bit word (GCRA: the
// theoretical arrival time) updated by compare-and-swap, so two workers counting the same client never lose
// each other's responses. Buckets are found by a seeded 64-bit hash of the key and replaced on collision
// (NSD's habit): memory stays fixed whatever the traffic, and an attacker who cannot see the seed cannot aim
// collisions.
#pragma once
#include <sys/socket.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "server/conf/config.hpp"
#include "zones/answer.hpp"

namespace gslb::server {

class RateLimiter {
  public:
    /// `buckets` is rounded up to a power of two (at least 1024); each takes 32 octets.
    explicit RateLimiter(size_t buckets, uint64_t seed);
    ~RateLimiter();
    RateLimiter(const RateLimiter&) = delete;
    RateLimiter& operator=(const RateLimiter&) = delete;

    enum class Verdict : uint8_t { Pass, Drop, Slip };

    /// Counts one UDP response for `client` at `nowNs` (a monotonic clock, ns) and says what to do with it.
    /// `slipCount` is the caller's (per worker) count of limited responses: every conf.slip-th becomes Slip.
    /// Never blocks, allocates or throws; O(length of the name).
    Verdict account(const RrlConf& conf, const sockaddr* client, const zones::AnswerResult& res,
                    uint64_t nowNs, uint32_t& slipCount) noexcept;

    /// The same in two steps, so that a worker can locate the buckets of a whole batch of responses first
    /// (each locate() prefetches its bucket) and account for them afterwards, when the lines have arrived.
    struct Slot {
        uint64_t key = 0;  // 0: a client that is neither IPv4 nor IPv6 (never limited)
        uint64_t prefix = 0;
        uint32_t meta = 0;
        size_t index = 0;
    };
    Slot locate(const RrlConf& conf, const sockaddr* client, const zones::AnswerResult& res) const noexcept;
    Verdict account(const RrlConf& conf, const Slot& slot, uint64_t nowNs, uint32_t& slipCount) noexcept;

    /// The control thread, about once a second: reports each bucket that started being limited since the
    /// last sweep, and each that has not been limited for `window` seconds (which it then forgets), through
    /// `log` (at most `maxLines` lines a sweep, then one line with the count of the rest). Returns how many
    /// buckets are limited now.
    size_t sweep(const RrlConf& conf, uint64_t nowNs, const std::function<void(const std::string&)>& log,
                 size_t maxLines = 20);

    size_t buckets() const { return mask_ + 1; }
    /// Buckets the last sweep read: 0 when nothing was limited then nor since (it skipped the table).
    size_t scanned() const { return scanned_; }

    /// The prefix `client` is counted under ("192.0.2.0/24", "2001:db8:1200::/56"): for the log and tests.
    static std::string prefixText(const RrlConf& conf, const sockaddr* client);

  private:
    // One bucket is 32 octets and aligned to 32, so it never straddles a cache line: a response touches one
    // line of the table. `state` packs what the sweep needs: bits 0..7 the prefix length, 8..15 the kind, bit
    // 16 IPv6, bit 31 "reported", bits 32..63 when it was last limited (in units of 2^26 ns, about 67 ms,
    // which wraps after 9 years; 0: not limited). A limited response writes it at most 15 times a second.
    struct alignas(32) Bucket {
        std::atomic<uint64_t> key{0};    // hash of (prefix, kind, name, qtype) | 1; 0: never used
        std::atomic<uint64_t> tat{0};    // GCRA theoretical arrival time, ns
        std::atomic<uint64_t> who{0};    // the prefix (its first 8 octets), for the log
        std::atomic<uint64_t> state{0};  // see above
    };
    static_assert(sizeof(Bucket) == 32);
    // mmap'ed and advised to be backed by huge pages: with 4 KB pages nearly every response also missed the
    // TLB (131072 buckets span 1024 pages), and that page walk cost more than the bucket's cache miss.
    Bucket* table_ = nullptr;
    size_t bytes_ = 0;
    size_t mask_;
    uint64_t seed_;
    std::atomic<uint64_t> rate_{0};  // responses_per_second << 32 | ns per token, for the last rate asked
    // A bucket was marked limited since the last sweep (set by account(), cleared by sweep()).
    alignas(64) std::atomic<bool> fresh_{false};
    size_t lastLimited_ = 0;  // what the last sweep returned (the control thread's own)
    size_t scanned_ = 0;
};

}  // namespace gslb::server
