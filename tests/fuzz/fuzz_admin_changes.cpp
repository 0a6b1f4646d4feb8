// A [cluster] peer's GET /v1/admin body -> parseAdminChanges (server/state/admin_log.hpp), what a member
// reads from the network to converge drains, then the merge rule over what it kept. Invariants: it never
// throws; a refused body keeps nothing; every kept change has a site and a time within 0..kMaxTimeMs; the
// merge never takes a local change, never takes one that does not order after what the log had, and a
// second merge of the same changes takes nothing.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_util.hpp"
#include "server/state/admin_log.hpp"

using namespace gslb::server::cluster;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size > 1 << 20) return 0;
    std::string_view body(reinterpret_cast<const char*>(data), size);
    std::vector<RemoteChange> out;
    std::string error = parseAdminChanges(body, out);
    if (!error.empty()) FUZZ_CHECK(out.empty(), error);
    for (const auto& r : out) {
        FUZZ_CHECK(!r.key.site.empty(), "a change without a site");
        FUZZ_CHECK(r.change.timeMs >= 0 && r.change.timeMs <= kMaxTimeMs, r.key.site);
    }
    constexpr int64_t now = int64_t(1) << 40;
    AdminLog log;
    log.record({"east", ""}, false, now, "http://192.0.2.53:8053", false);
    const auto before = log.entries();
    for (const auto& r : log.merge(out, now)) {
        FUZZ_CHECK(!r.change.local, r.key.site);
        FUZZ_CHECK(r.change.timeMs <= now + kMaxAheadMs, r.key.site);
        auto old = before.find(r.key);
        FUZZ_CHECK(old == before.end() || orderedAfter(r.change, old->second), r.key.site);
    }
    FUZZ_CHECK(log.merge(out, now).empty(), "a second merge of the same changes took some");
    return 0;
}
