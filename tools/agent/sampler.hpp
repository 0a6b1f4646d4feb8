// What the site agent learns between two reports: every connection it saw on the watched ports, grouped by
// the client's prefix (/24 and /56 by default), reduced per prefix to one robust figure — the median over its
// connections of each one's least round-trip time in the interval — with the number of connections behind it.
// Brocade ADX's GSLB RTT metric keeps the same grain: one figure per client network and site, measured
// passively at the site.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "tools/agent/sockdiag.hpp"

namespace gslb::agent {

/// A client network: its family (4 or 6), length and address with the bits past the length zero.
struct Prefix {
    uint8_t family = 4;
    uint8_t bits = 0;
    uint8_t addr[16]{};
    bool operator==(const Prefix& o) const;
};

/// "198.51.100.0/24", "2001:db8:0:100::/56".
std::string prefixText(const Prefix& p);

/// One prefix's figure for a report.
struct Figure {
    Prefix prefix;
    double rttMs = 0;      // the median of its connections' figures (least sample in the interval), ms, 0.001
                           // resolution
    uint32_t samples = 0;  // connections behind the median
};

class Sampler {
  public:
    /// v4Bits 8..32, v6Bits 16..128: the prefix lengths clients are grouped by.
    Sampler(int v4Bits, int v6Bits) : v4Bits_(v4Bits), v6Bits_(v6Bits) {}
    /// One poll's connections. A connection (its 4-tuple) seen in several polls of one interval counts once,
    /// with the least of its samples (TcpConn::sampleUs) in the interval: its path's delay without the
    /// queueing of a busy moment.
    void observe(const std::vector<TcpConn>& conns);
    /// The figures of every prefix seen since the last take, the most connections first (ties: the
    /// prefixes' order), at most `maxPrefixes` (the least active are dropped: a report stays bounded
    /// whatever the site's client count). Starts a new interval.
    std::vector<Figure> take(size_t maxPrefixes);
    /// Connections seen since the last take.
    size_t connections() const { return conns_.size(); }

  private:
    struct Key {
        uint8_t family, remote[16], local[16];
        uint16_t remotePort, localPort;
        bool operator==(const Key& o) const;
    };
    struct KeyHash {
        size_t operator()(const Key& k) const noexcept;
    };
    Prefix prefixOf(const TcpConn& c) const;
    int v4Bits_, v6Bits_;
    std::unordered_map<Key, uint32_t, KeyHash> conns_;  // 4-tuple -> figure, µs
};

/// The body of POST /v1/sites/SITE/rtt: {"prefixes": [{"prefix": "…", "rtt_ms": …, "samples": …}, …]}.
std::string rttReportJson(const std::vector<Figure>& figures);

/// Exact median of `v` (reordered): the middle value, or the mean of the two middle values.
double median(std::vector<uint32_t>& v);

}  // namespace gslb::agent
