// Per-worker query counters: each worker writes only its own struct (relaxed atomics), the control thread
// sums them for GET /metrics. One struct per worker keeps writers off each other's cache lines.
#pragma once
#include <atomic>
#include <cstdint>

namespace gslb::server {

/// Adds one to a counter that only its owning thread writes: a plain load and store (no locked
/// read-modify-write on the query path); readers on other threads see a consistent, possibly slightly old,
/// value.
inline void bump(std::atomic<uint64_t>& c) {
    c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

/// Adds n, as bump().
inline void bump(std::atomic<uint64_t>& c, uint64_t n) {
    c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

struct alignas(64) WorkerStats {
    static constexpr int kRcodes = 24;  // 0..15 header RCODEs, 16 = BADVERS, the rest unused
    /// QTYPE buckets exported by name; everything else counts as "other".
    enum TypeBucket {
        kA,
        kAAAA,
        kNS,
        kCNAME,
        kSOA,
        kMX,
        kTXT,
        kSRV,
        kPTR,
        kDS,
        kANY,
        kAXFR,
        kIXFR,
        kOther,
        kTypes
    };
    std::atomic<uint64_t> udp{0}, tcp{0}, dropped{0}, truncated{0};
    std::atomic<uint64_t> rrlDropped{0}, rrlSlipped{0};  // UDP responses withheld / sent short by RRL
    // Of `udp`: frames the AF_XDP fast path received, and answers it sent (server/net/xdp/path.hpp)
    std::atomic<uint64_t> xdp{0}, xdpSent{0};
    std::atomic<uint64_t> tcpRefusedPerClient{0};  // connections closed at once: the client held its cap
    std::atomic<uint64_t> tls{0};                  // DNS messages received over TLS (RFC 7858)
    std::atomic<uint64_t> tlsHandshakeFailed{0};  // TLS connections that failed or timed out in the handshake
    std::atomic<uint64_t> axfrRefusedPerClient{0};  // transfers answered SERVFAIL: the client held its cap
    std::atomic<uint64_t> cookie[3]{};  // queries with a COOKIE option: client cookie only, invalid, valid
    std::atomic<uint64_t> rcode[kRcodes]{};
    std::atomic<uint64_t> qtype[kTypes]{};

    static TypeBucket bucket(uint16_t t) {
        switch (t) {
            case 1:
                return kA;
            case 28:
                return kAAAA;
            case 2:
                return kNS;
            case 5:
                return kCNAME;
            case 6:
                return kSOA;
            case 15:
                return kMX;
            case 16:
                return kTXT;
            case 33:
                return kSRV;
            case 12:
                return kPTR;
            case 43:
                return kDS;
            case 255:
                return kANY;
            case 252:
                return kAXFR;
            case 251:
                return kIXFR;
            default:
                return kOther;
        }
    }
    static const char* bucketName(int b) {
        static const char* names[] = {"A",   "AAAA", "NS", "CNAME", "SOA",  "MX",   "TXT",
                                      "SRV", "PTR",  "DS", "ANY",   "AXFR", "IXFR", "other"};
        return names[b];
    }
    void count(uint16_t type, uint8_t rc) {
        bump(qtype[bucket(type)]);
        bump(rcode[rc < kRcodes ? rc : kRcodes - 1]);
    }
};

}  // namespace gslb::server
