// Master-file text -> the zone loader, read four ways that must agree: the fast path for plain records
// (plain_rr.cpp) on and off (ldns alone), each serially and cut into parts parsed on several threads. All
// four give the same records (owner, type, TTL, rdata, file and line) or the same error, line included.
// When they load, Zone::compile runs its checks on the records. $INCLUDE may name the file itself (a loop)
// or two fixed files beside it; an input that names a path with a slash is skipped (it would read outside
// the scratch directory).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_util.hpp"
#include "zones/loader.hpp"
#include "zones/zone.hpp"

namespace {

struct Read {
    bool ok = false;
    std::string error;
    std::vector<std::string> records;  // one line of text per record
};

std::string hexBytes(std::string_view b) {
    std::string s;
    char buf[4];
    for (unsigned char c : b) {
        std::snprintf(buf, sizeof buf, "%02x", c);
        s += buf;
    }
    return s;
}

Read read(const std::string& path, bool fast, bool parallel) {
    gslb::zones::setPlainFastPath(fast);
    gslb::zones::setParallelParseThreshold(parallel ? 1 : size_t(1) << 40);
    gslb::zones::SourceSet set;
    Read r;
    r.ok = gslb::zones::readZoneFile(path, "f.test.", set, r.error);
    if (r.ok)
        for (const auto& rec : set.records)
            r.records.push_back(hexBytes(rec.owner) + " " + std::to_string(rec.type) + " " +
                                std::to_string(rec.ttl) + " " + hexBytes(rec.rdata) + " " + set.file(rec) +
                                ":" + std::to_string(rec.line));
    gslb::zones::setPlainFastPath(true);
    gslb::zones::setParallelParseThreshold(4u << 20);
    return r;
}

std::string describe(const Read& r) {
    if (!r.ok) return "error: " + r.error;
    std::string s = std::to_string(r.records.size()) + " records";
    for (const auto& x : r.records) s += "\n  " + x;
    return s;
}

bool same(const Read& a, const Read& b) {
    return a.ok == b.ok && (a.ok ? a.records == b.records : a.error == b.error);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const bool init = [] {
        fuzzutil::writeFile("inc.zone", "$ORIGIN inc\nwww A 192.0.2.1\n  TXT \"included\"\n@ MX 1 www\n");
        fuzzutil::writeFile("inc2.zone", "$TTL 5\n$INCLUDE inc.zone sub\nafter A 192.0.2.2\n");
        return true;
    }();
    (void)init;
    if (size > 64 * 1024) return 0;
    std::string_view text(reinterpret_cast<const char*>(data), size);
    if (fuzzutil::includesOutside(text)) return 0;
    const std::string path = fuzzutil::writeFile("f.zone", text);

    Read serialFast = read(path, true, false);
    Read serialLdns = read(path, false, false);
    FUZZ_CHECK(same(serialFast, serialLdns),
               "fast path: " + describe(serialFast) + "\nldns only: " + describe(serialLdns));
    Read parallelFast = read(path, true, true);
    FUZZ_CHECK(same(serialFast, parallelFast),
               "serial: " + describe(serialFast) + "\nparallel: " + describe(parallelFast));
    Read parallelLdns = read(path, false, true);
    FUZZ_CHECK(same(serialLdns, parallelLdns),
               "ldns serial: " + describe(serialLdns) + "\nldns parallel: " + describe(parallelLdns));
    if (!serialFast.ok) {
        // An error names this file or the included one, and a line.
        FUZZ_CHECK(serialFast.error.rfind(fuzzutil::scratchDir(), 0) == 0, serialFast.error);
        return 0;
    }
    std::string error;
    auto zone = gslb::zones::loadZone(path, "f.test.", error);
    if (!zone) FUZZ_CHECK(!error.empty(), "loadZone failed without a message");
    return 0;
}
