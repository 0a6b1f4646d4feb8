// `gslbctl service add|del`: a GSLB service lives in two files — its A/AAAA record in the hostname's zone and
// its [[hostname."H".service]] table in the config. Both are edited as text, validated together with
// buildSnapshot (the server's own loading) on temp copies, and only then renamed into place.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <strings.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "server/conf/config.hpp"
#include "server/state/snapshot.hpp"
#include "tools/gslbctl/commands.hpp"
#include "tools/gslbctl/fileio.hpp"
#include "tools/gslbctl/tomltext.hpp"
#include "tools/gslbctl/zoneedit.hpp"
#include "zones/name.hpp"

namespace gslb::ctl {
namespace {

struct Addr {
    uint8_t b[16]{};
    int len = 0;
};

bool parseAddr(const std::string& s, Addr& a) {
    if (inet_pton(AF_INET, s.c_str(), a.b) == 1) {
        a.len = 4;
        return true;
    }
    if (inet_pton(AF_INET6, s.c_str(), a.b) == 1) {
        a.len = 16;
        return true;
    }
    return false;
}

bool sameAddr(const std::string& x, const std::string& y) {
    Addr a, b;
    return parseAddr(x, a) && parseAddr(y, b) && a.len == b.len && std::memcmp(a.b, b.b, size_t(a.len)) == 0;
}

std::string absolute(std::string n) {
    if (n.empty() || n.back() != '.') n += '.';
    return n;
}

bool sameName(const std::string& a, const std::string& b) {
    return strcasecmp(absolute(a).c_str(), absolute(b).c_str()) == 0;
}

// Everything both commands need: the config as loaded by the server, its text, the hostname's zone.
struct Ctx {
    server::Config cfg;
    std::string text;
    const server::ZoneConf* zone = nullptr;
    size_t zoneIndex = 0;
    const server::HostnameConf* host = nullptr;
    std::string owner;  // the hostname relative to its zone ("@" for the apex)
    std::string type;   // A or AAAA
};

int setup(const ServiceArgs& a, Ctx& c) {
    std::string error;
    Addr addr;
    if (!parseAddr(a.address, addr)) {
        fmt::print(stderr, "\"{}\" is not an IPv4 or IPv6 address\n", a.address);
        return kUsage;
    }
    c.type = addr.len == 4 ? "A" : "AAAA";
    zones::WireName hw;
    std::string host = absolute(a.hostname);
    if (!zones::textToName(host, {}, hw) || host == ".") {
        fmt::print(stderr, "\"{}\" is not a host name\n", a.hostname);
        return kUsage;
    }
    if (!server::loadConfig(a.config, c.cfg, error)) return fail(error);
    if (!readFile(a.config, c.text, error)) return fail(error);
    size_t best = 0;
    for (size_t i = 0; i < c.cfg.zones.size(); ++i) {
        zones::WireName zw;
        if (!zones::textToName(c.cfg.zones[i].name, {}, zw) || !zones::isSubdomain(hw, zw)) continue;
        if (!c.zone || zw.size() > best) {
            c.zone = &c.cfg.zones[i];
            c.zoneIndex = i;
            best = zw.size();
        }
    }
    if (!c.zone) return fail(fmt::format("{}: {} is in none of the configured zones", a.config, host));
    if (strcasecmp(host.c_str(), c.zone->name.c_str()) == 0)
        c.owner.assign(1, '@');  // not = "@": a GCC 12 -Wrestrict false positive in the release build
    else
        c.owner = host.substr(0, host.size() - c.zone->name.size() - 1);
    for (const auto& h : c.cfg.hostnames)
        if (sameName(h.name, host)) c.host = &h;
    return kOk;
}

// Validates the candidate zone + config together with buildSnapshot, then renames both into place.
int validateAndCommit(const ServiceArgs& a, Ctx& c, ZoneEdit* ed, const std::string& newConfig) {
    std::string error;
    TempFile cfgTemp, checkCopy;
    if (!cfgTemp.write(a.config, newConfig, error)) return fail(error);
    std::string checkText = newConfig;
    if (ed && !replaceZoneValue(newConfig, c.zoneIndex, "file", ed->temp.path(), checkText))
        return fail(
            fmt::format("{}: cannot locate the file of zone {} in the config", a.config, c.zone->name));
    if (!checkCopy.write(a.config, checkText, error)) return fail(error);
    if (!server::buildSnapshot(checkCopy.path(), nullptr, error)) {
        error = replaceAll(error, checkCopy.path(), a.config);
        if (ed) error = replaceAll(error, ed->temp.path(), c.zone->file);
        return fail(error + "\nnothing was changed");
    }
    if (ed && !ed->temp.commit(error)) return fail(error);
    if (!cfgTemp.commit(error)) return fail(error + "\n(the zone file was already replaced)");
    if (ed) fmt::print("{}: serial {} -> {}\n", c.zone->file, ed->oldSerial, ed->newSerial);
    fmt::print("{}: updated\n", a.config);
    return kOk;
}

// The TTL of the OWNER/TYPE records the zone holds before the edit; nullopt when it has none.
std::optional<uint32_t> rrsetTtl(const ZoneText& z, const std::string& owner, const std::string& type) {
    std::vector<size_t> hits;
    std::string error;
    if (!z.match(owner, type, "", hits, error)) return std::nullopt;
    for (size_t i : hits)
        if (z.entries()[i].rr) return ldns_rr_ttl(z.entries()[i].rr.get());
    return std::nullopt;
}

// The TTL the record addRecord appended gets from the file ($TTL, or the record before it).
bool addedTtl(const ZoneEdit& ed, uint32_t& ttl, std::string& error) {
    ZoneText z;
    if (!z.parse(ed.file, ed.candidate, ed.before.origin(), error)) return false;
    for (size_t i = z.entries().size(); i > 0; --i)
        if (z.entries()[i - 1].kind == ZoneEntry::Record && z.entries()[i - 1].rr) {
            ttl = ldns_rr_ttl(z.entries()[i - 1].rr.get());
            return true;
        }
    error = ed.file + ": the added record is not in the edited text";
    return false;
}

}  // namespace

int serviceAdd(const ServiceArgs& a) {
    Ctx c;
    if (int rc = setup(a, c); rc != kOk) return rc;
    std::string error;
    if (c.host)
        for (const auto& s : c.host->services)
            if (sameAddr(s.address, a.address))
                return fail(fmt::format("{}:{}: {} is already a service of {}", a.config, s.line, a.address,
                                        c.host->name));

    // Zone: the address record, unless the zone already holds it.
    ZoneEdit ed;
    if (!openZone(c.zone->file, c.zone->name, ed, error)) return fail(error);
    std::vector<size_t> hits;
    if (!ed.before.match(c.owner, c.type, a.address, hits, error)) return fail(error);
    bool zoneChange = hits.empty();
    if (zoneChange) {
        if (!addRecord(ed, c.owner, "", c.type, a.address, error)) return fail(error);
        // The record's TTL is what secondaries serve (doc/operating.md, "Secondaries and GSLB TTLs"): the
        // file's $TTL (300 from `zone init`) made `check` warn about the record this command had just
        // written. So: the TTL of the RRset it joins (one TTL per RRset, RFC 2181 §5.2), else at most the
        // hostname's ttl; written out only when the file's default would give another.
        std::optional<uint32_t> rrset = rrsetTtl(ed.before, c.owner, c.type);
        uint32_t ttl = rrset ? *rrset : c.host ? c.host->policy.ttl : c.cfg.defaults.ttl;
        uint32_t implied = 0;
        if (!addedTtl(ed, implied, error)) return fail(error);
        if (implied != ttl && (rrset || implied > ttl) &&
            !addRecord(ed, c.owner, std::to_string(ttl), c.type, a.address, error))
            return fail(error);
        if (!prepareZone(ed, std::nullopt, error)) return fail(error);
    }

    // Config: a [[hostname."H".service]] table after the hostname's last table, or a new hostname at the end.
    std::string key = c.host ? c.host->name : absolute(a.hostname);
    std::string block = fmt::format("[[hostname.{}.service]]\naddress = {}\nsite = {}\n", tomlQuote(key),
                                    tomlQuote(a.address), tomlQuote(a.site));
    if (a.weight) block += fmt::format("weight = {}\n", *a.weight);
    if (!a.check.empty()) block += fmt::format("check = {}\n", tomlQuote(a.check));
    std::string newConfig;
    if (c.host) {
        std::vector<int> headers;
        if (!tomlHeaderLines(c.text, a.config, headers, error)) return fail(error);
        int last = c.host->line;
        for (const auto& s : c.host->services) last = std::max(last, s.line);
        auto [first, end] = tomlBlock(c.text, headers, last);
        newConfig = insertAfterLine(c.text, end, block);
    } else {
        newConfig = c.text;
        if (!newConfig.empty() && newConfig.back() != '\n') newConfig += '\n';
        newConfig += fmt::format("\n[hostname.{}]\n", tomlQuote(key)) + block;
    }
    int rc = validateAndCommit(a, c, zoneChange ? &ed : nullptr, newConfig);
    if (rc == kOk && !zoneChange)
        fmt::print("{}: already holds {} {} {}\n", c.zone->file, c.owner, c.type, a.address);
    return rc;
}

int serviceDel(const ServiceArgs& a) {
    Ctx c;
    if (int rc = setup(a, c); rc != kOk) return rc;
    std::string error;
    if (!c.host)
        return fail(fmt::format("{}: {} is not a GSLB hostname here", a.config, absolute(a.hostname)));
    const server::ServiceConf* svc = nullptr;
    for (const auto& s : c.host->services)
        if (sameAddr(s.address, a.address)) svc = &s;
    if (!svc)
        return fail(
            fmt::format("{}:{}: {} has no service {}", a.config, c.host->line, c.host->name, a.address));

    std::vector<int> headers;
    if (!tomlHeaderLines(c.text, a.config, headers, error)) return fail(error);
    std::vector<std::pair<int, int>> drop = {tomlBlock(c.text, headers, svc->line)};
    if (c.host->services.size() == 1) drop.push_back(tomlBlock(c.text, headers, c.host->line));  // last one
    std::sort(drop.begin(), drop.end(), [](auto x, auto y) { return x.first > y.first; });
    std::string newConfig = c.text;
    for (auto [f, l] : drop) newConfig = removeLines(newConfig, f, l);

    ZoneEdit ed;
    if (!openZone(c.zone->file, c.zone->name, ed, error)) return fail(error);
    std::vector<size_t> hits;
    if (!ed.before.match(c.owner, c.type, a.address, hits, error)) return fail(error);
    bool zoneChange = !hits.empty();
    if (zoneChange) {
        std::vector<std::string> removed;
        if (!deleteRecords(ed, c.owner, c.type, a.address, removed, error)) return fail(error);
        if (!prepareZone(ed, std::nullopt, error)) return fail(error);
    }
    return validateAndCommit(a, c, zoneChange ? &ed : nullptr, newConfig);
}

}  // namespace gslb::ctl
