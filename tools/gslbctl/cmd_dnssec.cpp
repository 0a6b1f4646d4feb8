// `gslbctl dnssec keygen|ds|list`: the zone's keys in BIND's key file format (zones/dnssec_keys.hpp), the
// DS records for the parent, and what the directory holds.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

#include <fmt/format.h>

#include "tools/gslbctl/commands.hpp"
#include "zones/dnssec_keys.hpp"

namespace gslb::ctl {
namespace {

std::string absoluteZone(std::string z) {
    if (z.empty() || z.back() != '.') z += '.';
    return z;
}

std::string stamp(int64_t t) {
    if (!t) return "-";
    time_t tt = time_t(t);
    struct tm g {};
    gmtime_r(&tt, &g);
    char b[32];
    std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", &g);
    return b;
}

}  // namespace

int dnssecKeygen(const DnssecKeygenArgs& a) {
    std::string zone = absoluteZone(a.zone);
    zones::WireName wire;
    if (!zones::textToName(zone, {}, wire)) {
        fmt::print(stderr, "{}: not a domain name\n", a.zone);
        return kUsage;
    }
    uint8_t alg = zones::algorithmFromText(a.algorithm);
    if (!alg) {
        fmt::print(stderr, "--algorithm {}: use ecdsap256sha256 or ed25519\n", a.algorithm);
        return kUsage;
    }
    if (mkdir(a.dir.c_str(), 0700) != 0 && errno != EEXIST) {
        fmt::print(stderr, "{}: {}\n", a.dir, std::strerror(errno));
        return kFailed;
    }
    int64_t now = int64_t(time(nullptr));
    std::vector<uint16_t> flags;
    if (a.split)
        flags = {zones::kDnskeyZone | zones::kDnskeySep, zones::kDnskeyZone};  // KSK, then ZSK
    else
        flags = {zones::kDnskeyZone | zones::kDnskeySep};  // one combined signing key
    for (uint16_t f : flags) {
        zones::DnssecKey k;
        std::string error;
        if (!zones::generateKey(zone, alg, f, now, k, error) || !zones::writeKeyFiles(k, a.dir, error)) {
            fmt::print(stderr, "{}: {}\n", zone, error);
            return kFailed;
        }
        std::string role = !a.split ? "CSK" : (k.sep() ? "KSK" : "ZSK");
        fmt::print("{} {} {} tag {}: {}.key, {}.private\n", zone, role, zones::algorithmName(alg), k.tag,
                   k.file, k.file);
        if (k.sep()) fmt::print("{}\n", zones::dsText(k));
    }
    return kOk;
}

int dnssecDs(const std::string& zoneArg, const std::string& dir) {
    std::string zone = absoluteZone(zoneArg);
    std::vector<zones::DnssecKey> keys;
    std::string error;
    if (!zones::loadKeys(dir, zone, keys, error)) {
        fmt::print(stderr, "{}\n", error);
        return kFailed;
    }
    int64_t now = int64_t(time(nullptr));
    int n = 0;
    for (const auto& k : keys)
        if (k.sep() && k.published(now)) {
            fmt::print("{}\n", zones::dsText(k));
            ++n;
        }
    if (n == 0) {
        fmt::print(stderr, "{}: no published key-signing key for {} (gslbctl dnssec keygen {} --dir {})\n",
                   dir, zone, zone, dir);
        return kFailed;
    }
    return kOk;
}

int dnssecList(const std::string& zoneArg, const std::string& dir) {
    std::vector<std::string> zonesSeen;
    if (!zoneArg.empty()) {
        zonesSeen.push_back(absoluteZone(zoneArg));
    } else {
        // Every zone some K*.key file of the directory names.
        std::string error;
        DIR* d = opendir(dir.c_str());
        if (!d) {
            fmt::print(stderr, "{}: {}\n", dir, std::strerror(errno));
            return kFailed;
        }
        while (dirent* e = readdir(d)) {
            std::string n = e->d_name;
            if (n.size() < 6 || n[0] != 'K' || n.compare(n.size() - 4, 4, ".key") != 0) continue;
            size_t plus = n.find('+');
            if (plus == std::string::npos || plus < 2) continue;
            std::string z = n.substr(1, plus - 1);
            bool dup = false;
            for (const auto& s : zonesSeen) dup |= s == z;
            if (!dup) zonesSeen.push_back(z);
        }
        closedir(d);
        std::sort(zonesSeen.begin(), zonesSeen.end());
    }
    int64_t now = int64_t(time(nullptr));
    int rc = kOk;
    for (const auto& zone : zonesSeen) {
        std::vector<zones::DnssecKey> keys;
        std::string error;
        if (!zones::loadKeys(dir, zone, keys, error)) {
            fmt::print(stderr, "{}\n", error);
            rc = kFailed;
            continue;
        }
        if (keys.empty()) fmt::print("{}: no keys in {}\n", zone, dir);
        for (const auto& k : keys)
            fmt::print(
                "{} tag {} {} {} flags {} {} created {} publish {} activate {} inactive {} delete {} {}\n",
                k.zone, k.tag, k.role(keys), zones::algorithmName(k.algorithm), k.flags,
                k.active(now) ? "active" : (k.published(now) ? "published" : "inactive"),
                stamp(k.timing.created), stamp(k.timing.publish), stamp(k.timing.activate),
                stamp(k.timing.inactive), stamp(k.timing.remove), k.file);
    }
    return rc;
}

}  // namespace gslb::ctl
