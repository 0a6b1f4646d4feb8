// The configuration check shared by `gslbd --check` and `gslbctl check` (the same summary,
// warnings included): the server's own loading (config, every zone, GSLB cross-checks), one problem per
// line, a few cheap warnings in the spirit of named-checkzone, and what a start checks on top (the control
// token, the user, the state directory and the drains kept there).
#include "server/daemon/check.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <toml++/toml.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>

#include "server/conf/config.hpp"
#include "server/conf/token.hpp"
#include "server/state/gslb.hpp"
#include "server/state/admin_state.hpp"
#include "server/daemon/privileges.hpp"
#include "server/daemon/readable.hpp"
#include "server/state/snapshot.hpp"
#include "server/conf/unread_settings.hpp"
#include "server/net/xdp/path.hpp"
#include "zones/loader.hpp"
#include "zones/name.hpp"
#include "zones/rrtype.hpp"
#include "zones/rrtype_text.hpp"
#include "zones/zonedb.hpp"

namespace gslb::server {
namespace {

struct Report {
    std::FILE* out = stdout;
    std::set<std::string> seen;
    int problems = 0, warnings = 0;
    void problem(const std::string& m) {
        if (!seen.insert(m).second) return;
        ++problems;
        fmt::print(out, "{}\n", m);
    }
    void warning(const std::string& where, const std::string& m) {
        std::string line = fmt::format("{}: warning: {}", where, m);
        if (!seen.insert(line).second) return;
        ++warnings;
        fmt::print(out, "{}\n", line);
    }
};

// The lower-case wire name inside `rdata` at `off`, or empty.
std::string nameAt(std::string_view rdata, size_t off) {
    size_t p = off;
    while (p < rdata.size()) {
        uint8_t l = uint8_t(rdata[p]);
        if (l == 0) {
            std::string n(rdata.substr(off, p + 1 - off));
            zones::lowerName(reinterpret_cast<uint8_t*>(n.data()), n.size());
            return n;
        }
        if (l > 63) return {};
        p += 1 + l;
    }
    return {};
}

// Warnings named-checkzone would give and that cost nothing here.
void warnings(const zones::SourceSet& set, const std::string& apex, Report& rep) {
    std::map<std::string_view, std::set<uint16_t>, std::less<>> types;
    std::map<std::pair<std::string_view, uint16_t>, const zones::SourceRecord*> firstOfSet;
    for (const auto& r : set.records) types[r.owner].insert(r.type);
    for (const auto& r : set.records) {
        auto key = std::make_pair(r.owner, r.type);
        auto it = firstOfSet.find(key);
        if (it == firstOfSet.end()) {
            firstOfSet[key] = &r;
        } else if (it->second->ttl != r.ttl) {
            rep.warning(
                fmt::format("{}:{}", set.file(r), r.line),
                fmt::format("TTL {} differs from the {} of the RRset {} {} at line {} (RFC 2181 §5.2: "
                            "the lowest is served)",
                            r.ttl, it->second->ttl, zones::nameToText(r.owner), zones::typeText(r.type),
                            it->second->line));
        }
        const char* what = r.type == zones::kTypeNS   ? "NS"
                           : r.type == zones::kTypeMX ? "MX"
                           : r.type == 33             ? "SRV"
                                                      : nullptr;
        if (!what) continue;
        int off = zones::targetNameOffset(r.type);
        if (off < 0) continue;
        std::string target = nameAt(r.rdata, size_t(off));
        if (target.empty() || target == std::string(1, '\0')) continue;
        if (!zones::isSubdomain(target, apex)) continue;
        auto t = types.find(target);
        std::string where = fmt::format("{}:{}", set.file(r), r.line);
        if (t != types.end() && t->second.count(zones::kTypeCNAME)) {
            rep.warning(where, fmt::format("{} target {} is a CNAME (RFC 2181 §10.3)", what,
                                           zones::nameToText(target)));
        } else if (t == types.end() ||
                   (!t->second.count(zones::kTypeA) && !t->second.count(zones::kTypeAAAA))) {
            rep.warning(where,
                        fmt::format("{} target {} is inside the zone but has no address record (A or AAAA)",
                                    what, zones::nameToText(target)));
        }
    }
}

// A zone transferred to secondaries (axfr_allow or notify) gives them each GSLB hostname's candidate RRset as
// the file has it: every candidate, at the file's TTL. A resolver that asks a secondary of a mixed NS set
// then caches dead sites for that long, where gslbd answers one live site for the hostname's `ttl` (the
// new-user trial: 3600 s at NSD against 30 at gslbd). One warning per zone, with the first few hostnames.
void secondaryTtlWarnings(const Config& cfg, const Snapshot& snap, Report& rep) {
    for (const auto& zc : cfg.zones) {
        bool transferred =
            !zc.notify.empty() || (zc.axfrAllowSet ? !zc.axfrAllow.empty() : !cfg.server.axfrAllow.empty());
        zones::WireName apex;
        if (!transferred || !zones::textToName(zc.name, {}, apex)) continue;
        size_t count = 0;
        uint32_t lowest = UINT32_MAX;
        std::string examples;
        for (const auto& h : snap.gslb.hosts) {
            const zones::Zone* z = snap.db.findZone(h.wire);
            if (!z || z->apex() != apex) continue;
            uint32_t n = z->find(h.wire);
            if (n == zones::kNone) continue;
            bool over = false;
            for (uint16_t type : {zones::kTypeA, zones::kTypeAAAA})
                if (const zones::RRset* set = z->rrset(z->node(n), type); set && set->ttl > h.ttl) {
                    over = true;
                    if (count < 3)
                        examples +=
                            fmt::format("{}{} {} TTL {} > ttl {}", examples.empty() ? "" : ", ", h.name,
                                        type == zones::kTypeA ? "A" : "AAAA", set->ttl, h.ttl);
                }
            if (over) {
                ++count;
                lowest = std::min(lowest, h.ttl);
            }
        }
        if (count == 0) continue;
        rep.warning(
            zc.file,
            fmt::format("zone {} is transferred ({}), and the candidate A/AAAA of {} GSLB hostname(s) have a "
                        "TTL above the hostname's ttl ({}{}): a secondary answers every candidate at the "
                        "zone's TTL, so resolvers that ask it cache dead sites that long; give those records "
                        "a TTL of at most {} s (doc/operating.md, \"Secondaries and GSLB TTLs\")",
                        zc.name, zc.notify.empty() ? "axfr_allow" : "notify", count, examples,
                        count > 3 ? ", …" : "", lowest));
    }
}

std::string dirOf(const std::string& path) {
    auto slash = path.rfind('/');
    return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

// What a start checks beyond the config and the zones (doc/operating.md): so that `--check` passing means the
// start will not fail on them.
void startChecks(const Config& cfg, const zones::ZoneDb&, Checker checker, Report& rep) {
    const std::string& where = cfg.path;
    std::string error, token;
    if (cfg.control.enabled && !loadControlToken(cfg.control.tokenFile, token, error))
        rep.problem(fmt::format("{}: [control] token_file: {}", where, error));
    service::UserInfo user;
    bool userKnown = false;
    if (!cfg.server.user.empty() && !(userKnown = service::lookupUser(cfg.server.user, user, error)))
        rep.problem(fmt::format("{}: {}", where, error));
    // The user gslbd runs as depends on how it is started, which only a check standing for that start knows.
    const bool forStart = checker == Checker::kStart;
    if (forStart && !cfg.server.user.empty() && geteuid() != 0 && geteuid() != user.uid)
        rep.warning(where, fmt::format("[server] user \"{}\": gslbd must start as root to switch to it",
                                       cfg.server.user));
    if (forStart && cfg.server.user.empty()) {
        std::string w = unsetUserWarning(geteuid() == 0, getenv("INVOCATION_ID") != nullptr,
                                         access("/run/systemd/system/", F_OK) == 0);
        if (!w.empty()) rep.warning(where, w);
    }
    // Files only root can read pass the start (it reads them before dropping to `user`) and fail every
    // reload.
    if (userKnown && geteuid() == 0 && user.uid != 0) {
        std::vector<service::Unreadable> lines;
        std::string why;
        if (!service::unreadableAs(user, service::pathsReadAtReload(cfg), lines, why))
            rep.warning(where, fmt::format("[server] user \"{}\": could not check what it may read: {}",
                                           cfg.server.user, why));
        for (const auto& u : lines)
            rep.problem(
                fmt::format("{}: {} is not readable by [server] user \"{}\" ({}): the start reads it as "
                            "root, every reload as that user and would fail",
                            where, u.name, cfg.server.user, u.why));
    }
    // [server] xdp: an interface this machine lacks (or a loopback) falls back to the sockets at start; one
    // that holds no listen address serves nothing. Warnings, not problems: the config may be checked on
    // another host than the one it serves on.
    for (const auto& name : cfg.server.xdp) {
        if (std::string why = xdp::interfaceProblem(name); !why.empty())
            rep.warning(where, xdp::fallbackLine(name, why));
        else if (std::string w = xdp::listenProblem(name, cfg.server.listen, xdp::interfaceAddresses(name));
                 !w.empty())
            rep.warning(where, fmt::format("xdp on {}: {}", name, w));  // as the start logs it
    }
    if (!cfg.server.stateDir.empty()) {
        struct stat st;
        if (stat(cfg.server.stateDir.c_str(), &st) != 0)
            rep.warning(where, fmt::format("[server] state_dir {}: {} (it is created at start)",
                                           cfg.server.stateDir, strerror(errno)));
        else if (!S_ISDIR(st.st_mode))
            rep.problem(
                fmt::format("{}: [server] state_dir {}: not a directory", where, cfg.server.stateDir));
    }
}

}  // namespace

std::string unsetUserWarning(bool root, bool inUnit, bool systemdHost) {
    if (!root) return {};
    if (inUnit)
        return "[server] user is not set and this systemd unit runs gslbd as root: set User= in the unit "
               "(the shipped gslbd.service does) or [server] user";
    if (systemdHost) return {};
    return "[server] user is not set: gslbd started as root would keep running as root";
}

namespace {

// The [[zone]] tables of a config loadConfig refused, when the file is TOML at all: their zones are still
// checked. Empty when it is not TOML.
std::vector<ZoneConf> zonesNamedIn(const std::string& configPath) {
    std::vector<ZoneConf> out;
    try {
        toml::table root = toml::parse_file(configPath);
        if (const toml::array* za = root["zone"].as_array())
            for (const auto& e : *za) {
                const toml::table* t = e.as_table();
                if (!t) continue;
                auto n = (*t)["name"].value<std::string>();
                auto f = (*t)["file"].value<std::string>();
                if (!n || !f || n->empty() || f->empty()) continue;
                ZoneConf zc;
                zc.name = zones::endsInDot(*n) ? *n : *n + ".";
                zc.file = (*f)[0] == '/' ? *f : dirOf(configPath) + "/" + *f;
                out.push_back(zc);
            }
    } catch (const std::exception&) {
    }
    return out;
}

// Each zone file read and compiled as gslbd would (catalog zones are built from the others, by
// buildSnapshot later), with named-checkzone's warnings; the zones that compile go into `db`, their records
// are counted into `records`. False when any zone has a problem. `error`: the callees' scratch message.
bool checkZones(const std::vector<ZoneConf>& zoneList, const std::string& configPath, zones::ZoneDb& db,
                size_t& records, Report& rep, std::string& error) {
    bool ok = true;
    for (const auto& zc : zoneList) {
        if (zc.catalog) continue;  // built from the others: checked by buildSnapshot below
        zones::SourceSet recs;
        if (std::string why = zoneFileProblem(zc); !why.empty()) {
            rep.problem(why);
            ok = false;
            continue;
        }
        if (!zones::readZoneFile(zc.file, zc.name, recs, error)) {
            rep.problem(error);
            ok = false;
            continue;
        }
        zones::WireName apex;
        if (!zones::textToName(zc.name, {}, apex)) {
            rep.problem(fmt::format("{}: zone name \"{}\" is not a domain name", configPath, zc.name));
            ok = false;
            continue;
        }
        warnings(recs, apex, rep);
        auto z = zones::Zone::compile(apex, recs, zc.file, error);
        if (!z) {
            rep.problem(error);
            ok = false;
            continue;
        }
        for (const auto& w : z->warnings()) rep.warning(w.where, w.message);
        records += z->recordCount();
        db.add(std::move(z));
    }
    return ok;
}

// The GSLB cross-checks of a config whose zones compile: each hostname's build, the settings nothing reads,
// the start's checks, then gslbd's own snapshot (its warnings, the records as a reload counts them into
// `recordText`, the drains state_dir would restore).
void checkGslb(const Config& cfg, const std::string& configPath, zones::ZoneDb& db, Checker checker,
               Report& rep, std::string& recordText, std::string& error) {
    // Each hostname on its own, so that one bad hostname does not hide the next. The rest of the config
    // is copied once and each build's one bound node is unbound after it: a copy of the whole config
    // and a walk over every node per hostname made this quadratic (46 s of CPU at 10,000 hostnames).
    Config one = cfg;
    for (const auto& h : cfg.hostnames) {
        one.hostnames.assign(1, h);
        Gslb g;
        if (!buildGslb(one, db, nullptr, 1, g, error)) rep.problem(error);
        for (const auto& bound : g.hosts)
            for (auto& z : db.zones())
                if (uint32_t n = z->find(bound.wire); n != zones::kNone && z->node(n).dynamic >= 0)
                    z->mutableNode(n).dynamic = -1;
    }
    for (const auto& w : unreadSettings(cfg)) rep.warning(w.where, w.message);
    startChecks(cfg, db, checker, rep);
    // The verdict gslbd itself would give.
    auto snap = buildSnapshot(configPath, nullptr, error);
    if (snap) {
        secondaryTtlWarnings(cfg, *snap, rep);
        // The serial gslbd would serve, from state_dir (a file behind what was served), and the zones'
        // warnings once more (the same lines count once); the records as gslbd's reload counts them.
        for (const auto& w : snap->warnings) rep.warning(w.where, w.message);
        recordText = recordCountText(snap->db);
    }
    if (!snap) {
        rep.problem(error);
    } else if (!cfg.server.stateDir.empty()) {
        service::AdminStateLoad loaded;
        if (!service::loadAdminState(*snap->gslb.table, cfg.server.stateDir, loaded, error))
            rep.problem(error);
        for (const auto& d : loaded.dropped)
            rep.warning(cfg.server.stateDir + "/" + service::kAdminStateFile,
                        fmt::format("the drain of {} would be dropped", d));
    }
}

}  // namespace

int checkConfig(const std::string& configPath, std::FILE* out, Checker checker) {
    Report rep;
    rep.out = out;
    Config cfg;
    std::string error;
    bool cfgOk = loadConfig(configPath, cfg, error);
    std::vector<ZoneConf> zoneList;
    if (cfgOk) {
        zoneList = cfg.zones;
    } else {
        rep.problem(error);
        zoneList = zonesNamedIn(configPath);  // still check the zones the file names
    }
    zones::ZoneDb db;
    size_t records = 0;
    std::string recordText;  // from gslbd's own build, when it succeeds
    const bool zonesOk = checkZones(zoneList, configPath, db, records, rep, error);
    if (cfgOk && zonesOk) checkGslb(cfg, configPath, db, checker, rep, recordText, error);

    if (rep.problems == 0) {
        if (recordText.empty()) recordText = fmt::format("{} records", records);
        fmt::print(out, "{}: ok: {} zone(s), {}, {} GSLB hostname(s){}\n", configPath, zoneList.size(),
                   recordText, cfg.hostnames.size(),
                   rep.warnings ? fmt::format(", {} warning(s)", rep.warnings) : "");
        return 0;
    }
    fmt::print(out, "{}: {} problem(s), {} warning(s)\n", configPath, rep.problems, rep.warnings);
    return 1;
}

}  // namespace gslb::server
