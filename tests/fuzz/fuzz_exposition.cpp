// libFuzzer target for the Prometheus exposition parser (metrics/sources/exposition.hpp) and the mapping
// reads over what it returns: a scraped body is untrusted input from a site. Small limits so that the
// bounds themselves are exercised; the invariants checked are the header's promises.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_util.hpp"
#include "metrics/sources/exposition.hpp"
#include "metrics/sources/mapping.hpp"

using namespace gslb::metrics::sources;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    Limits limits;
    limits.maxBytes = 1 << 16;
    limits.maxLineLength = 512;
    limits.maxSeries = 256;
    limits.maxLabels = 8;
    std::vector<Sample> out;
    ParseStats stats;
    std::string error;
    const bool ok = parseExposition(text, limits, {}, out, stats, error);
    FUZZ_CHECK(ok == error.empty(), error);
    FUZZ_CHECK(out.size() == stats.kept && stats.kept <= stats.series && stats.kept <= limits.maxSeries,
               std::to_string(stats.kept) + " kept of " + std::to_string(stats.series));
    // The count includes the line that failed: one over the limit exactly when the limit is the failure.
    const bool overLimit = !ok && error == "more than " + std::to_string(limits.maxSeries) + " series";
    FUZZ_CHECK(stats.series <= limits.maxSeries || (overLimit && stats.series == limits.maxSeries + 1),
               std::to_string(stats.series) + " series: " + error);
    for (const auto& s : out) FUZZ_CHECK(s.labels.size() <= limits.maxLabels, s.name);
    // The selector parser sees the same bytes, and every preset reads the samples.
    bool rate = false;
    Selector sel;
    std::string why;
    (void)parseSelector(text.substr(0, 256), rate, sel, why);
    for (const char* name : {"haproxy", "node", "nginx", "envoy"}) {
        std::vector<PresetMapping> p;
        FUZZ_CHECK(preset(name, p, why), why);
        RateState st;
        for (const auto& pm : p) (void)st.apply(pm.mapping, read(pm.mapping, out), 1000);
    }
    return 0;
}
