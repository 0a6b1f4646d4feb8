// The body of POST /v1/sites/SITE/rtt, what gslbd-agent(8) sends: {"prefixes": [{"prefix": "198.51.100.0/24",
// "rtt_ms": 12.3, "samples": 17}, …]}. Untrusted input: every bound is checked and the whole report is
// refused, with the entry and the reason, before anything is applied.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "zones/client.hpp"

namespace gslb::server {

struct RttReportEntry {
    zones::ClientSubnet prefix;  // the client network, of the table's length for its family
    double rttMs = 0;            // (0, kMaxRttMs]
    uint32_t samples = 0;        // connections behind the figure, 1..kMaxRttSamples
};

inline constexpr double kMaxRttMs = 60000;  // a minute: anything longer is no round trip
inline constexpr uint32_t kMaxRttSamples = 1000000000;

/// "ADDR/LEN" (IPv4 dotted quad or IPv6 text, LEN 0..32 / 0..128) with every bit past LEN zero. False for
/// anything else (no length, a length with a sign or leading spaces, host bits set).
bool parseClientPrefix(std::string_view text, zones::ClientSubnet& out);

/// Parses `body`: a JSON object whose only key is "prefixes", an array of at most `maxPrefixes` objects with
/// exactly the keys prefix (a string parseClientPrefix takes, /v4Bits for IPv4 and /v6Bits for IPv6),
/// rtt_ms (a number) and samples (a whole number), no prefix twice. False and `error` ("prefixes[3]: …") on
/// the first thing wrong; `out` then holds nothing. O(body).
bool parseRttReport(std::string_view body, int v4Bits, int v6Bits, size_t maxPrefixes,
                    std::vector<RttReportEntry>& out, std::string& error);

}  // namespace gslb::server
