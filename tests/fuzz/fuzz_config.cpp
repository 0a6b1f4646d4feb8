// TOML text -> loadConfig and buildSnapshot (the config checks, the zones it names, the GSLB binding and the
// policies), then a second build that carries the first one's state, as a reload does. Invariants: a
// snapshot is built only from a config that loads; every refusal has a message that starts with the name
// of a file (the config or a zone it names: "file:line: why"). Zone files may be the two fixed ones beside
// the config; a config naming any other file is not built (it could name /dev/zero).
#include <sys/stat.h>

#include <climits>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "fuzz_util.hpp"
#include "server/conf/config.hpp"
#include "server/state/snapshot.hpp"
#include "tests/server/world.hpp"

namespace {

const char* kZoneU =
    "$ORIGIN u.test.\n"
    "$TTL 60\n"
    "@ IN SOA ns1.t.test. hostmaster 1 3600 900 604800 120\n"
    "@ IN NS ns1.t.test.\n"
    "@ IN A 192.0.2.9\n"
    "v6 IN AAAA 2001:db8::9\n"
    "v6 IN AAAA 2001:db8::10\n";

// Every zone file the config names is one of ours (a regular file in the scratch directory).
bool zonesAreOurs(const gslb::server::Config& cfg) {
    for (const auto& z : cfg.zones) {
        char real[PATH_MAX];
        if (!realpath(z.file.c_str(), real)) continue;  // missing: the loader says so
        struct stat sb {};
        if (stat(real, &sb) != 0 || !S_ISREG(sb.st_mode)) return false;
        std::string r(real);
        if (r.rfind(fuzzutil::scratchDir() + "/", 0) != 0) return false;
    }
    return true;
}

// The message starts with the config file or one of the zone files it names ("file:line: why", or
// "file: why" for a file that cannot be read).
bool namesAFile(const std::string& error, const std::string& config, const gslb::server::Config* cfg) {
    auto startsWith = [&](const std::string& path) {
        return error.size() > path.size() && error.compare(0, path.size(), path) == 0 &&
               error[path.size()] == ':';
    };
    if (startsWith(config)) return true;
    if (cfg)
        for (const auto& z : cfg->zones)
            if (startsWith(z.file)) return true;
    return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const bool init = [] {
        fuzzutil::writeFile("t.zone", st::kZone);
        fuzzutil::writeFile("u.zone", kZoneU);
        // Owner-only: gslbd refuses a control token others may read.
        chmod(fuzzutil::writeFile("control.token", "s3cret-token-0123\n").c_str(), 0600);
        return true;
    }();
    (void)init;
    if (size > 64 * 1024) return 0;
    std::string_view text(reinterpret_cast<const char*>(data), size);
    if (fuzzutil::includesOutside(text)) return 0;  // the config itself may be named as a zone file
    const std::string path = fuzzutil::writeFile("gslbd.toml", text);
    gslb::server::Config cfg;
    std::string error;
    bool loaded = gslb::server::loadConfig(path, cfg, error);
    if (!loaded) {
        FUZZ_CHECK(namesAFile(error, path, nullptr), "loadConfig: " + error);
        return 0;
    }
    if (!zonesAreOurs(cfg)) return 0;
    auto first = gslb::server::buildSnapshot(path, nullptr, error);
    if (!first) {
        FUZZ_CHECK(namesAFile(error, path, &cfg), "buildSnapshot: " + error);
        return 0;
    }
    auto second = gslb::server::buildSnapshot(path, first.get(), error);
    FUZZ_CHECK(second != nullptr, "the same config failed on reload: " + error);
    FUZZ_CHECK(second->gslb.hosts.size() == first->gslb.hosts.size(), "reload changed the hostnames");
    return 0;
}
