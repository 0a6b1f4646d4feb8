// `gslbctl dnssec keygen|ds|list|rollover`: the zone's keys in BIND's key file format
// (zones/dnssec_keys.hpp), the DS records for the parent, what the directory holds, and a key rollover's
// schedule written into the key files (zones/dnssec_rollover.hpp).
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

#include <fmt/format.h>

#include "server/conf/config.hpp"
#include "tools/gslbctl/commands.hpp"
#include "zones/dnssec_keys.hpp"
#include "zones/dnssec_rollover.hpp"
#include "zones/loader.hpp"

namespace gslb::ctl {
namespace {

std::string absoluteZone(std::string z) {
    if (z.empty() || z.back() != '.') z += '.';
    return z;
}

std::string stamp(int64_t t) {
    return t ? zones::utcText(t, "%Y-%m-%dT%H:%M:%SZ") : "-";
}

// ZONE as given -> absolute presentation form and wire; false (after saying so) when it is not a name.
bool zoneName(const std::string& arg, std::string& zone, zones::WireName& wire) {
    zone = absoluteZone(arg);
    if (zones::textToName(zone, {}, wire)) return true;
    fmt::print(stderr, "{}: not a domain name\n", arg);
    return false;
}

}  // namespace

int dnssecKeygen(const DnssecKeygenArgs& a) {
    std::string zone;
    zones::WireName wire;
    if (!zoneName(a.zone, zone, wire)) return kUsage;
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

int dnssecDs(const std::string& zoneArg, const std::string& dir, bool all) {
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
        if (k.sep() && (k.published(now) || (all && zones::keyLive(k, now)))) {
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

namespace gslb::ctl {
namespace {

// now | now+N | +N | YYYYMMDDHHMMSS (UTC), as dnssec-settime reads times; false when it is none of them.
bool parseStart(const std::string& text, int64_t now, int64_t& out) {
    std::string t = text;
    if (t == "now") {
        out = now;
        return true;
    }
    if (t.rfind("now", 0) == 0) t = t.substr(3);
    if (!t.empty() && (t[0] == '+' || t[0] == '-')) {
        if (t.size() < 2 || t.size() > 12 || t.find_first_not_of("0123456789", 1) != std::string::npos)
            return false;
        int64_t n = std::stoll(t.substr(1));
        out = t[0] == '+' ? now + n : now - n;
        return true;
    }
    if (t.size() != 14 || t.find_first_not_of("0123456789") != std::string::npos) return false;
    struct tm g {};
    g.tm_year = std::stoi(t.substr(0, 4)) - 1900;
    g.tm_mon = std::stoi(t.substr(4, 2)) - 1;
    g.tm_mday = std::stoi(t.substr(6, 2));
    g.tm_hour = std::stoi(t.substr(8, 2));
    g.tm_min = std::stoi(t.substr(10, 2));
    g.tm_sec = std::stoi(t.substr(12, 2));
    if (g.tm_mon < 0 || g.tm_mon > 11 || g.tm_mday < 1 || g.tm_mday > 31 || g.tm_hour > 23 || g.tm_min > 59 ||
        g.tm_sec > 59)
        return false;
    out = int64_t(timegm(&g));
    return true;
}

// The largest GSLB `ttl` of the hostnames of `zone` (those under its apex and under no deeper [[zone]]).
uint32_t gslbTtl(const server::Config& cfg, const zones::WireName& apex, std::string& where) {
    uint32_t best = 0;
    for (const auto& h : cfg.hostnames) {
        zones::WireName n;
        if (!zones::textToName(absoluteZone(h.name), {}, n) || !zones::isSubdomain(n, apex)) continue;
        bool deeper = false;
        for (const auto& z : cfg.zones) {
            zones::WireName o;
            if (zones::textToName(z.name, {}, o) && o != apex && o.size() > apex.size() &&
                zones::isSubdomain(n, o))
                deeper = true;
        }
        if (!deeper && h.policy.ttl > best) {
            best = h.policy.ttl;
            where = h.name + " (GSLB ttl)";
        }
    }
    return best;
}

// --kind zsk | ksk | csk; false for anything else.
bool parseKind(const std::string& text, zones::KeyKind& kind) {
    if (text == "zsk")
        kind = zones::KeyKind::Zsk;
    else if (text == "ksk")
        kind = zones::KeyKind::Ksk;
    else if (text == "csk")
        kind = zones::KeyKind::Csk;
    else
        return false;
    return true;
}

// Where the rollover's TTLs and keys come from: the zone file gslbd signs and its key directory, plus the
// GSLB hostnames' ttl when the config was given.
struct RolloverSource {
    std::string file, dir;
    uint32_t gslbTtl = 0;   // s; 0 without a config or GSLB hostname
    std::string gslbWhere;  // the hostname whose ttl that is
};

// `a`'s -c CONFIG (the zone's [[zone]] file and key_dir, the GSLB ttl) or --zone-file, and --dir. Returns
// kOk, or the exit code after an error message.
int rolloverSource(const DnssecRolloverArgs& a, const std::string& zone, const zones::WireName& apex,
                   RolloverSource& out) {
    if (a.config.empty() == a.zoneFile.empty()) {
        fmt::print(
            stderr,
            "rollover: give -c CONFIG (the zone's file, key_dir and GSLB ttl) or --zone-file FILE: the "
            "schedule waits on the zone's TTLs\n");
        return kUsage;
    }
    out.file = a.zoneFile;
    out.dir = a.dir;
    if (!a.config.empty()) {
        server::Config cfg;
        std::string error;
        if (!server::loadConfig(a.config, cfg, error)) {
            fmt::print(stderr, "{}\n", error);
            return kFailed;
        }
        const server::ZoneConf* zc = nullptr;
        for (const auto& z : cfg.zones) {
            zones::WireName n;
            if (zones::textToName(z.name, {}, n) && n == apex) zc = &z;
        }
        if (!zc) {
            fmt::print(stderr, "{}: no [[zone]] named {}\n", a.config, zone);
            return kFailed;
        }
        out.file = zc->file;
        if (out.dir.empty()) out.dir = zc->keyDir;
        if (!zc->dnssec)
            fmt::print(stderr, "note: {} is not signed (dnssec = false) in {}\n", zone, a.config);
        out.gslbTtl = gslbTtl(cfg, apex, out.gslbWhere);
    }
    if (out.dir.empty()) {
        fmt::print(stderr, "rollover: give --dir (the zone has no key_dir in the config)\n");
        return kUsage;
    }
    return kOk;
}

// The key of `kind` to roll among `dir`'s keys of `zone` (zones::rolloverKey), into `old`, and the new key's
// algorithm: --algorithm, which must be the old key's (no algorithm rollover), or the old key's. Returns kOk,
// or the exit code after an error message.
int keyToRoll(const DnssecRolloverArgs& a, const std::string& zone, const std::string& dir,
              zones::KeyKind kind, int64_t now, zones::DnssecKey& old, uint8_t& alg) {
    std::vector<zones::DnssecKey> keys;
    std::string error;
    if (!zones::loadKeys(dir, zone, keys, error)) {
        fmt::print(stderr, "{}\n", error);
        return kFailed;
    }
    size_t idx = 0;
    if (!zones::rolloverKey(keys, kind, now, idx, error)) {
        fmt::print(stderr, "{}: {}\n", zone, error);
        return kFailed;
    }
    old = keys[idx];
    alg = old.algorithm;
    if (!a.algorithm.empty()) {
        alg = zones::algorithmFromText(a.algorithm);
        if (!alg) {
            fmt::print(stderr, "--algorithm {}: use ecdsap256sha256 or ed25519\n", a.algorithm);
            return kUsage;
        }
        // RFC 6781 §4.1.4: a new algorithm must sign everything before its DNSKEY is published, which these
        // timelines (and gslbd's "published before active") do not do.
        if (alg != old.algorithm) {
            fmt::print(
                stderr,
                "{}: key {} is {}; an algorithm rollover (RFC 6781 §4.1.4) is not done by this command: "
                "roll with --algorithm {}\n",
                zone, old.tag, zones::algorithmName(old.algorithm), zones::algorithmName(old.algorithm));
            return kFailed;
        }
    }
    return kOk;
}

// RFC 7583's intervals for this zone, each with where it came from (printed with the schedule).
struct Intervals {
    zones::RolloverIntervals iv;
    std::string sigWhere;  // TTLsig: the zone's largest TTL, or a GSLB hostname's ttl
    std::string dprpWhy;   // Dprp: --propagation, or the SOA's refresh + retry
};

Intervals intervals(const DnssecRolloverArgs& a, const zones::ZoneTtls& ttl, const RolloverSource& src) {
    Intervals out;
    out.iv.ttlKey = ttl.key;
    out.iv.ttlSig = std::max(ttl.sig, src.gslbTtl);
    out.sigWhere = src.gslbTtl > ttl.sig ? src.gslbWhere : ttl.sigWhere;
    out.dprpWhy = "--propagation";
    if (a.propagation) {
        out.iv.dprp = *a.propagation;
    } else {
        // A missed NOTIFY is caught up at the next refresh, a failed one after the retry (RFC 1996 §3.4).
        out.iv.dprp = int64_t(ttl.refresh) + ttl.retry;
        out.dprpWhy = fmt::format("SOA refresh {} + retry {}; --propagation to set", ttl.refresh, ttl.retry);
    }
    out.iv.dprpP = a.parentPropagation;
    out.iv.ttlDs = a.parentDsTtl;
    return out;
}

// The new key, made now and written to `dir` with the plan's Publish and Activate, into `fresh`; then the
// old key's Inactive and Delete written into its .private file. Returns kOk, or kFailed after an error
// message (one that says what to do when the new key is written and the old one could not be changed).
int writeKeys(const std::string& zone, const std::string& dir, zones::KeyKind kind, uint8_t alg, int64_t now,
              const zones::RolloverPlan& plan, zones::DnssecKey& old, zones::DnssecKey& fresh) {
    std::string error;
    uint16_t flags =
        kind == zones::KeyKind::Zsk ? zones::kDnskeyZone : zones::kDnskeyZone | zones::kDnskeySep;
    if (!zones::generateKey(zone, alg, flags, now, fresh, error)) {
        fmt::print(stderr, "{}: {}\n", zone, error);
        return kFailed;
    }
    fresh.timing = {now, plan.newPublish, plan.newActivate, 0, 0};
    if (!zones::writeKeyFiles(fresh, dir, error)) {
        fmt::print(stderr, "{}: {}\n", zone, error);
        return kFailed;
    }
    // The old key's four times, written out: an unset Publish/Activate ("since always") becomes its Created
    // time, or now, which means the same.
    int64_t since = old.timing.created ? old.timing.created : now;
    if (!old.timing.publish) old.timing.publish = since;
    if (!old.timing.activate) old.timing.activate = std::max(since, old.timing.publish);
    old.timing.inactive = plan.oldInactive;
    old.timing.remove = plan.oldRemove;
    if (!zones::rewriteTiming(old, error)) {
        fmt::print(
            stderr,
            "{}: {}\nthe new key {} is written ({}) but the old key {} keeps its times: set its Inactive "
            "{} and Delete {} (dnssec-settime -I -D), or remove the new key's files\n",
            zone, error, fresh.tag, fresh.file, old.tag, stamp(plan.oldInactive), stamp(plan.oldRemove));
        return kFailed;
    }
    return kOk;
}

// What was done and what comes: the method, the intervals and where each came from, then each step with its
// time (the keys' changes, which gslbd makes by itself, and the parent's DS changes, which are the
// operator's), and the files written.
void printSchedule(const std::string& zone, zones::KeyKind kind, const Intervals& in,
                   const zones::RolloverPlan& plan, const zones::DnssecKey& fresh,
                   const zones::DnssecKey& old) {
    const zones::RolloverIntervals& iv = in.iv;
    const char* how = kind == zones::KeyKind::Zsk ? "pre-publication (RFC 7583 §3.2.1)"
                      : kind == zones::KeyKind::Ksk
                          ? "double-DS (RFC 7583 §3.3.2)"
                          : "double-DS with pre-publication (RFC 7583 §3.2.1, §3.3.2)";
    const char* kn = zones::kindName(kind);
    fmt::print("{} {} rollover, {}: key {} replaces key {}\n", zone, kn, how, fresh.tag, old.tag);
    fmt::print("  TTLkey {} s (DNSKEY: the SOA TTL), TTLsig {} s ({}), Dprp {} s ({}), Dsgn 0", iv.ttlKey,
               iv.ttlSig, in.sigWhere, iv.dprp, in.dprpWhy);
    if (kind != zones::KeyKind::Zsk)
        fmt::print(", DprpP {} s (--parent-propagation), TTLds {} s (--parent-ds-ttl)", iv.dprpP, iv.ttlDs);
    fmt::print("\n  ");
    if (kind != zones::KeyKind::Ksk) fmt::print("Ipub = Dprp + TTLkey = {} s, ", plan.ipub);
    if (kind != zones::KeyKind::Zsk) fmt::print("IpubP = DprpP + TTLds = {} s, ", plan.ipubP);
    fmt::print("Iret = {} = {} s\n",
               kind == zones::KeyKind::Zsk   ? "Dsgn + Dprp + TTLsig"
               : kind == zones::KeyKind::Ksk ? "Dprp + TTLkey"
                                             : "Dsgn + Dprp + max(TTLsig, TTLkey)",
               plan.iret);
    std::vector<std::pair<int64_t, std::string>> steps;
    std::string nk = fmt::format("key {} ({}, new)", fresh.tag, kn),
                ok = fmt::format("key {} ({}, old)", old.tag, kn);
    if (plan.dsAdd)
        steps.emplace_back(plan.dsAdd,
                           fmt::format("parent: add the DS of {} (gslbctl dnssec ds --all):\n      {}", nk,
                                       zones::dsText(fresh)));
    if (plan.newPublish == plan.newActivate) {
        steps.emplace_back(plan.newPublish,
                           fmt::format("{} is published and becomes active; {} becomes inactive "
                                       "and is deleted",
                                       nk, ok));
    } else {
        steps.emplace_back(plan.newPublish, nk + " is published");
        steps.emplace_back(plan.newActivate, fmt::format("{} becomes active; {} becomes inactive", nk, ok));
        steps.emplace_back(plan.oldRemove, ok + " is deleted");
    }
    if (plan.dsRemove)
        steps.emplace_back(plan.dsRemove,
                           fmt::format("parent: remove the DS of {}:\n      {}", ok, zones::dsText(old)));
    std::stable_sort(steps.begin(), steps.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    for (const auto& [t, what] : steps) fmt::print("  {}  {}\n", stamp(t), what);
    fmt::print("  new key: {}.key, {}.private; old key's times: {}.private\n", fresh.file, fresh.file,
               old.file);
    fmt::print(
        "gslbd rebuilds the zone by itself at each of these times, and within a second of seeing the new "
        "key files; the parent's DS steps are yours.\n");
}

}  // namespace

int dnssecRollover(const DnssecRolloverArgs& a) {
    std::string zone;
    zones::WireName apex;
    if (!zoneName(a.zone, zone, apex)) return kUsage;
    zones::KeyKind kind;
    if (!parseKind(a.kind, kind)) {
        fmt::print(stderr, "--kind {}: use zsk, ksk or csk\n", a.kind);
        return kUsage;
    }
    RolloverSource src;
    if (int rc = rolloverSource(a, zone, apex, src); rc != kOk) return rc;
    std::string error;
    auto z = zones::loadZone(src.file, zone, error);
    if (!z) {
        fmt::print(stderr, "{}\n", error);
        return kFailed;
    }
    const zones::ZoneTtls ttl = zones::zoneTtls(*z);
    int64_t now = int64_t(time(nullptr)), start = 0;
    if (!parseStart(a.start, now, start)) {
        fmt::print(stderr, "--start {}: use now, now+SECONDS, +SECONDS or YYYYMMDDHHMMSS (UTC)\n", a.start);
        return kUsage;
    }
    if (start < now) {
        fmt::print(stderr, "--start {} is in the past ({}; now {}): the keys' times would be too\n", a.start,
                   stamp(start), stamp(now));
        return kFailed;
    }
    zones::DnssecKey old;
    uint8_t alg = 0;
    if (int rc = keyToRoll(a, zone, src.dir, kind, now, old, alg); rc != kOk) return rc;

    const Intervals in = intervals(a, ttl, src);
    const zones::RolloverPlan plan = zones::planRollover(kind, start, in.iv);
    for (int64_t t : {plan.newPublish, plan.newActivate, plan.oldInactive, plan.oldRemove})
        if (t < now) {
            fmt::print(stderr, "{}: the schedule would set a time in the past ({})\n", zone, stamp(t));
            return kFailed;
        }
    zones::DnssecKey fresh;
    if (int rc = writeKeys(zone, src.dir, kind, alg, now, plan, old, fresh); rc != kOk) return rc;
    printSchedule(zone, kind, in, plan, fresh, old);
    return kOk;
}

}  // namespace gslb::ctl
