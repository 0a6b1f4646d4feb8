#include "server/responder/rrl.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/mman.h>

#include <cstring>
#include <new>

namespace gslb::server {
namespace {

constexpr uint64_t kSecond = 1000000000;  // ns
constexpr uint64_t kReported = uint64_t(1) << 31;
constexpr int kTick = 26;  // Bucket::state keeps the time of the last limited response in units of 2^26 ns
constexpr uint64_t kMetaMask = 0xFFFFFFFFu;

const char* kindName(unsigned k) {
    static const char* names[] = {"answer", "nodata", "nxdomain", "referral", "error"};
    return k < 5 ? names[k] : "?";
}

// The client's address as (family, 16 octets), IPv4-mapped IPv6 counted as IPv4; false when neither.
bool addressOf(const sockaddr* sa, int& family, uint8_t a[16]) {
    if (!sa) return false;
    if (sa->sa_family == AF_INET) {
        family = AF_INET;
        std::memcpy(a, &reinterpret_cast<const sockaddr_in*>(sa)->sin_addr, 4);
        return true;
    }
    if (sa->sa_family == AF_INET6) {
        const auto* a6 = &reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr;
        if (IN6_IS_ADDR_V4MAPPED(a6)) {
            family = AF_INET;
            std::memcpy(a, a6->s6_addr + 12, 4);
        } else {
            family = AF_INET6;
            std::memcpy(a, a6->s6_addr, 16);
        }
        return true;
    }
    return false;
}

// The first 8 octets of the address masked to the configured prefix, as one number (IPv6 prefixes are at
// most 64 bits long: the config refuses longer ones).
uint64_t prefixOf(const RrlConf& conf, int family, const uint8_t a[16], int& bits) {
    bits = family == AF_INET ? conf.ipv4Prefix : conf.ipv6Prefix;
    int width = family == AF_INET ? 32 : 64;
    uint64_t v = 0;
    for (int i = 0; i < width / 8; ++i) v = v << 8 | a[i];
    if (bits < width) v &= ~((uint64_t(1) << (width - bits)) - 1);
    return v;
}

inline uint64_t mix(uint64_t h) {
    // The finaliser of MurmurHash3 / splitmix64: every input bit reaches every output bit.
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

}  // namespace

RateLimiter::RateLimiter(size_t buckets, uint64_t seed) : seed_(seed) {
    size_t n = 1024;
    while (n < buckets) n <<= 1;
    bytes_ = n * sizeof(Bucket);
    const size_t huge = size_t(2) << 20;
    size_t len = (bytes_ + huge - 1) / huge * huge;
    void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    madvise(p, len, MADV_HUGEPAGE);  // a hint: without transparent huge pages the table works all the same
    bytes_ = len;
    table_ = static_cast<Bucket*>(p);
    for (size_t i = 0; i < n; ++i) new (&table_[i]) Bucket;  // one by one: no array cookie in the mapping
    mask_ = n - 1;
}

RateLimiter::~RateLimiter() {
    // Bucket is trivially destructible (atomics of integers): the mapping can go as it is.
    munmap(table_, bytes_);
}

std::string RateLimiter::prefixText(const RrlConf& conf, const sockaddr* client) {
    int family = 0, bits = 0;
    uint8_t a[16]{};
    if (!addressOf(client, family, a)) return "?";
    uint64_t v = prefixOf(conf, family, a, bits);
    uint8_t out[16]{};
    int width = family == AF_INET ? 4 : 8;
    for (int i = 0; i < width; ++i) out[i] = uint8_t(v >> (8 * (width - 1 - i)));
    char text[INET6_ADDRSTRLEN];
    inet_ntop(family, out, text, sizeof text);
    return fmt::format("{}/{}", text, bits);
}

RateLimiter::Slot RateLimiter::locate(const RrlConf& conf, const sockaddr* client,
                                      const zones::AnswerResult& res) const noexcept {
    Slot slot;
    int family = 0, bits = 0;
    uint8_t a[16];
    if (!addressOf(client, family, a)) return slot;
    uint64_t prefix = prefixOf(conf, family, a, bits);
    unsigned kind = unsigned(res.kind);

    // The key: prefix, family, kind, and the name (with QTYPE for answers and NODATA) the kind counts by.
    // This runs for every UDP response: the name is taken 8 octets at a time with one multiply and a
    // rotation each (the seeded start and the final mix() spread them), its last word as the last 8 octets
    // (overlapping the one before) rather than assembled from single octets.
    uint64_t h = mix(seed_ ^ prefix) ^ (uint64_t(family == AF_INET6) << 8 | kind);
    if (res.kind == zones::ResponseKind::Answer || res.kind == zones::ResponseKind::NoData)
        h ^= uint64_t(res.qtype) << 16;
    const uint8_t* p = res.kindName;
    const size_t len = p ? res.kindNameLen : 0;
    auto step = [&h](uint64_t w) {
        h = (h ^ w) * 0x9E3779B97F4A7C15ULL;
        h = h << 27 | h >> 37;
    };
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        std::memcpy(&w, p + i, 8);
        step(w);
    }
    if (i < len) {
        uint64_t w = 0;
        if (len >= 8) {
            std::memcpy(&w, p + len - 8, 8);
        } else {
            for (size_t j = 0; j < len; ++j) w = w << 8 | p[j];
        }
        step(w);
    }
    h = mix(h ^ len);
    uint64_t key = h | 1;
    slot.key = key;
    slot.index = (h >> 1) & mask_;
    slot.prefix = prefix;
    slot.meta = uint32_t(family == AF_INET6) << 16 | uint32_t(kind) << 8 | uint32_t(bits);
    // The bucket is most likely not in the cache (a table of megabytes, one line per name): ask for it now,
    // so that the worker's other answers of the batch run while it comes.
    __builtin_prefetch(&table_[slot.index], 1);
    return slot;
}

RateLimiter::Verdict RateLimiter::account(const RrlConf& conf, const sockaddr* client,
                                          const zones::AnswerResult& res, uint64_t now,
                                          uint32_t& slipCount) noexcept {
    return account(conf, locate(conf, client, res), now, slipCount);
}

RateLimiter::Verdict RateLimiter::account(const RrlConf& conf, const Slot& slot, uint64_t now,
                                          uint32_t& slipCount) noexcept {
    if (!slot.key) return Verdict::Pass;
    const uint64_t key = slot.key;
    Bucket& b = table_[slot.index];

    // One token, ns: kSecond / responses_per_second, remembered with the rate it is for (one word, so that a
    // reload that changes the rate cannot pair the new rate with the old interval). A division per response
    // costs more than all the rest of the arithmetic here.
    uint64_t rateWord = rate_.load(std::memory_order_relaxed);
    const uint32_t rps = uint32_t(conf.responsesPerSecond);
    if (uint32_t(rateWord >> 32) != rps) {
        rateWord = uint64_t(rps) << 32 | (kSecond / (rps ? rps : 1));
        rate_.store(rateWord, std::memory_order_relaxed);
    }
    const uint64_t interval = rateWord & kMetaMask;
    // Up to one second of tokens banked: a client that was quiet may send a burst of responses_per_second at
    // once (BIND caps its credit the same way), then one every `interval`.
    const uint64_t burst = kSecond - interval;
    if (b.key.load(std::memory_order_relaxed) != key) {
        // A new client, or a collision: the bucket is this key's now, full (NSD replaces on collision too).
        b.key.store(key, std::memory_order_relaxed);
        b.who.store(slot.prefix, std::memory_order_relaxed);
        b.state.store(slot.meta, std::memory_order_relaxed);
        b.tat.store(now + interval, std::memory_order_relaxed);
        return Verdict::Pass;
    }
    // GCRA (the generic cell rate algorithm): `tat` is when the bucket would be full again. A response
    // conforms while tat is at most `burst` ahead of now; it then moves tat one interval on.
    uint64_t tat = b.tat.load(std::memory_order_relaxed);
    for (;;) {
        uint64_t t = tat > now ? tat : now;
        if (t - now > burst) break;
        if (b.tat.compare_exchange_weak(tat, t + interval, std::memory_order_relaxed)) return Verdict::Pass;
    }
    // Limited: note when, unless this tick is noted already (the sweep only needs the tick).
    uint64_t tick = (now >> kTick) & kMetaMask;
    if (!tick) tick = 1;
    uint64_t st = b.state.load(std::memory_order_relaxed);
    if (st >> 32 != tick) {
        b.state.compare_exchange_strong(st, tick << 32 | (st & kMetaMask), std::memory_order_relaxed);
        // Tells the next sweep to look (read first: under a flood the line stays shared, not bounced).
        if (!fresh_.load(std::memory_order_relaxed)) fresh_.store(true, std::memory_order_release);
    }
    if (conf.slip == 0) return Verdict::Drop;
    if (++slipCount >= uint32_t(conf.slip)) {
        slipCount = 0;
        return Verdict::Slip;
    }
    return Verdict::Drop;
}

size_t RateLimiter::sweep(const RrlConf& conf, uint64_t now,
                          const std::function<void(const std::string&)>& log, size_t maxLines) {
    size_t limited = 0, lines = 0, moreStarted = 0, moreStopped = 0;
    auto describe = [&](uint64_t v, uint64_t meta) {
        bool v6 = meta >> 16 & 1;
        unsigned kind = unsigned(meta >> 8 & 0xFF);
        int bits = int(meta & 0xFF);
        uint8_t out[16]{};
        int width = v6 ? 8 : 4;
        for (int i = 0; i < width; ++i) out[i] = uint8_t(v >> (8 * (width - 1 - i)));
        char text[INET6_ADDRSTRLEN];
        inet_ntop(v6 ? AF_INET6 : AF_INET, out, text, sizeof text);
        return fmt::format("{}/{} ({} responses)", text, bits, kindName(kind));
    };
    // Nothing was limited at the last sweep and nothing since: every bucket's `state` says "not limited",
    // and the table (4 MiB by default) is not read at all. Most seconds of most servers are like that, RRL
    // on or off; reading it anyway cost the control thread ~0.2 ms a second and pushed the workers' lines
    // out of a shared cache.
    if (lastLimited_ == 0 && !fresh_.exchange(false, std::memory_order_acquire)) {
        scanned_ = 0;
        return 0;
    }
    scanned_ = mask_ + 1;
    const uint64_t window = (uint64_t(conf.window) * kSecond) >> kTick;  // in ticks
    const uint64_t nowTick = now >> kTick;
    for (size_t i = 0; i <= mask_; ++i) {
        Bucket& b = table_[i];
        uint64_t st = b.state.load(std::memory_order_relaxed);
        uint64_t at = st >> 32;
        if (!at) continue;
        uint64_t who = b.who.load(std::memory_order_relaxed);
        uint64_t meta = st & kMetaMask;
        // Ticks are 32 bits: the difference is taken in 32 bits, so that a wrap does not read as the future.
        if (uint32_t(nowTick - at) > window) {
            // Not limited for a whole window: it has stopped. (A response limited in between makes the CAS
            // fail; the bucket is then looked at again at the next sweep.)
            if (b.state.compare_exchange_strong(st, meta & ~kReported, std::memory_order_relaxed) &&
                (meta & kReported)) {
                if (lines < maxLines) {
                    ++lines;
                    log(fmt::format("rrl: {} no longer limited", describe(who, meta)));
                } else {
                    ++moreStopped;
                }
            }
            continue;
        }
        ++limited;
        if (!(meta & kReported) &&
            b.state.compare_exchange_strong(st, st | kReported, std::memory_order_relaxed)) {
            if (lines < maxLines) {
                ++lines;
                log(fmt::format("rrl: {} limited to {} responses/s", describe(who, meta),
                                conf.responsesPerSecond));
            } else {
                ++moreStarted;
            }
        }
    }
    if (moreStarted || moreStopped)
        log(fmt::format("rrl: and {} more started, {} more stopped being limited", moreStarted, moreStopped));
    lastLimited_ = limited;
    return limited;
}

}  // namespace gslb::server
