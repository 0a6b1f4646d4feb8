// A [cluster] peer's GET /v1/verdicts body -> parsePeerVerdicts (server/probes/peers.hpp), what a member
// reads from the network for health_quorum. Invariants: it never throws; every verdict it keeps has an
// observation time between now - kMaxPeerAgeMs and now (so no age is negative, and no age overflows into
// "fresh"); when the body is refused nothing is kept.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "fuzz_util.hpp"
#include "server/probes/peers.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size > 1 << 20) return 0;
    std::string_view body(reinterpret_cast<const char*>(data), size);
    constexpr int64_t now = int64_t(1) << 40;
    std::map<std::string, gslb::server::ParsedVerdict> out;
    std::string error = gslb::server::parsePeerVerdicts(body, now, out);
    if (!error.empty()) FUZZ_CHECK(out.empty(), error);
    for (const auto& [key, v] : out) {
        FUZZ_CHECK(v.observedMonoMs <= now, key);
        FUZZ_CHECK(v.observedMonoMs >= now - gslb::server::kMaxPeerAgeMs, key);
        FUZZ_CHECK(key.find('\0') != std::string::npos, key);
    }
    return 0;
}
