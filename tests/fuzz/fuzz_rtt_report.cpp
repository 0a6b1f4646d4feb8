// libFuzzer target for the body of POST /v1/sites/SITE/rtt (gslbd-agent's reports, parsed by
// server/state/rtt_report.hpp): untrusted JSON from the sites. A report that parses must hold only what the
// parser promises (the table's prefix lengths, host bits zero, figures in range, no prefix twice), and every
// figure written into an RttTable must be read back exactly by the query path's lookup.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string_view>
#include <vector>

#include "fuzz_util.hpp"
#include "server/state/rtt_report.hpp"
#include "server/state/rtt_table.hpp"

using namespace gslb;
using namespace gslb::server;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view body(reinterpret_cast<const char*>(data), size);
    std::vector<RttReportEntry> entries;
    std::string error;
    const bool ok = parseRttReport(body, 24, 56, 256, entries, error);
    if (!ok) {
        FUZZ_CHECK(entries.empty(), std::string(body.substr(0, 200)));
        FUZZ_CHECK(!error.empty(), std::string(body.substr(0, 200)));
        return 0;
    }
    FUZZ_CHECK(entries.size() <= 256, std::string(body.substr(0, 200)));
    RttTable table(1024, 2, 24, 56);
    std::set<std::pair<uint64_t, uint8_t>> keys;
    int64_t now = 1;
    for (const auto& e : entries) {
        FUZZ_CHECK(e.prefix.bits == (e.prefix.family == zones::kFamilyIPv4 ? 24 : 56),
                   std::string(body.substr(0, 200)));
        FUZZ_CHECK(e.rttMs > 0 && e.rttMs <= kMaxRttMs && std::isfinite(e.rttMs),
                   std::string(body.substr(0, 200)));
        FUZZ_CHECK(e.samples >= 1 && e.samples <= kMaxRttSamples, std::string(body.substr(0, 200)));
        const auto k = table.prefixKey(e.prefix);
        FUZZ_CHECK(bool(k), std::string(body.substr(0, 200)));
        FUZZ_CHECK(keys.emplace(k.addr, k.family).second,
                   std::string(body.substr(0, 200)));  // no prefix twice
        FUZZ_CHECK(table.update(k, 1, float(e.rttMs), e.samples, ++now), std::string(body.substr(0, 200)));
    }
    if (table.evictions() != 0) return 0;
    const uint32_t sites[] = {0, 1};
    RttTable::Figure f[2];
    for (const auto& e : entries) {
        FUZZ_CHECK(table.lookup(table.prefixKey(e.prefix), sites, f), std::string(body.substr(0, 200)));
        FUZZ_CHECK(f[0].atMs == 0, std::string(body.substr(0, 200)));
        FUZZ_CHECK(f[1].samples == e.samples, std::string(body.substr(0, 200)));
        FUZZ_CHECK(std::fabs(double(f[1].rttMs) - double(float(e.rttMs))) <= 0.001,
                   std::string(body.substr(0, 200)));
    }
    return 0;
}
