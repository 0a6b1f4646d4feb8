// `gslbctl zone init|add|del|list|serial`.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <strings.h>
#include <sys/stat.h>

#include <algorithm>
#include <set>

#include "tools/gslbctl/commands.hpp"
#include "tools/gslbctl/fileio.hpp"
#include "tools/gslbctl/serial.hpp"
#include "tools/gslbctl/zoneedit.hpp"
#include "zones/loader.hpp"
#include "zones/name.hpp"
#include "server/conf/config.hpp"

namespace gslb::ctl {
namespace {

// A zone-file name relative to `origin` unless it ends in a dot ("@" is the apex); absolute presentation.
std::string absoluteName(const std::string& name, const std::string& origin) {
    if (name == "@") return origin;
    if (zones::endsInDot(name)) return name;
    return name + "." + origin;
}

int commitEdit(ZoneEdit& ed) {
    std::string error;
    if (!ed.temp.commit(error)) return fail(error);
    fmt::print("{}: serial {} -> {}\n", ed.file, ed.oldSerial, ed.newSerial);
    return kOk;
}

}  // namespace

int resolveZoneFile(const std::string& config, std::string& file, std::string& origin) {
    std::vector<server::ZoneConf> zl;
    std::string error;
    if (!server::loadZoneFiles(config, zl, error)) return fail(error);
    std::string want = file;
    if (!want.empty() && want.back() != '.') want += '.';
    for (const auto& z : zl)
        if (strcasecmp(z.name.c_str(), want.c_str()) == 0) {
            file = z.file;
            if (origin.empty()) origin = z.name;
            return kOk;
        }
    struct stat st;
    if (stat(file.c_str(), &st) == 0) return kOk;  // a zone file's path, as without -c
    std::string names;
    for (const auto& z : zl) names += (names.empty() ? "" : ", ") + z.name;
    return fail(fmt::format("{}: no [[zone]] named {} (zones: {}), and no file {}", config, want,
                            names.empty() ? "none" : names, file));
}

namespace {

// A name server of zone init: its absolute name, the glue addresses given with it, whether it is inside the
// zone (then it needs them).
struct NameServer {
    std::string name;
    std::vector<std::string> addrs;
    bool inZone;
};

// Each --ns NAME[=ADDR[,ADDR]] into `out`: the name relative to `zone` unless it ends in a dot, each address
// IPv4 or IPv6, no name twice, glue given exactly for the names inside the zone. Returns kOk, or the exit
// code after an error message.
int parseNameServers(const std::vector<std::string>& specs, const std::string& zone,
                     const zones::WireName& apex, std::vector<NameServer>& out) {
    std::set<std::string> seen;
    for (const auto& spec : specs) {
        auto eq = spec.find('=');
        NameServer n;
        n.name = absoluteName(spec.substr(0, eq), zone);
        zones::WireName w;
        if (spec.substr(0, eq).empty() || !zones::textToName(n.name, {}, w)) {
            fmt::print(stderr, "--ns {}: \"{}\" is not a name server name\n", spec, spec.substr(0, eq));
            return kUsage;
        }
        n.inZone = zones::isSubdomain(w, apex);
        if (eq != std::string::npos) {
            std::string rest = spec.substr(eq + 1);
            size_t p = 0;
            while (p <= rest.size()) {
                size_t c = rest.find(',', p);
                if (c == std::string::npos) c = rest.size();
                std::string addr = rest.substr(p, c - p);
                uint8_t buf[16];
                if (inet_pton(AF_INET, addr.c_str(), buf) != 1 &&
                    inet_pton(AF_INET6, addr.c_str(), buf) != 1) {
                    fmt::print(stderr, "--ns {}: \"{}\" is not an IPv4 or IPv6 address\n", spec, addr);
                    return kUsage;
                }
                n.addrs.push_back(addr);
                p = c + 1;
            }
        }
        if (!seen.insert(w).second) {
            fmt::print(stderr, "--ns {}: {} is given twice\n", spec, n.name);
            return kUsage;
        }
        if (n.inZone && n.addrs.empty())
            return fail(
                fmt::format("--ns {}: {} is inside the zone, so it needs an address (glue): "
                            "--ns {}=ADDRESS (or end the name with a dot if it is outside {})",
                            spec, n.name, spec, zone));
        if (!n.inZone && !n.addrs.empty())
            return fail(
                fmt::format("--ns {}: {} is outside the zone {}: its address belongs in its own zone "
                            "(drop =ADDRESS)",
                            spec, n.name, zone));
        out.push_back(n);
    }
    return kOk;
}

// --email as the SOA's RNAME (RFC 1035 §3.3.13): user@example.com becomes user.example.com. (dots in the
// user part escaped), a relative name is under the zone. Returns kOk, or kUsage after an error message.
int mailboxName(const std::string& given, const std::string& zone, std::string& rname) {
    std::string email = given;
    if (auto at = email.find('@'); at != std::string::npos) {
        std::string local, domain = email.substr(at + 1);
        for (char c : email.substr(0, at)) local += c == '.' ? std::string("\\.") : std::string(1, c);
        email = local + "." + domain;
        if (email.back() != '.') email += '.';
    }
    rname = absoluteName(email, zone);
    zones::WireName rw;
    if (!zones::textToName(rname, {}, rw)) {
        fmt::print(stderr, "--email {}: not a mailbox name\n", given);
        return kUsage;
    }
    return kOk;
}

// The new zone file's text: a comment saying how to edit it, $ORIGIN and $TTL, the SOA (serial, refresh
// 3600, retry 600, expire 1209600, negative TTL 60), the NS records and the glue.
std::string initialZoneText(const std::string& zone, uint32_t ttl, const std::vector<NameServer>& ns,
                            const std::string& rname, uint32_t serial) {
    std::string t;
    t += fmt::format(
        "; Zone {}: created by gslbctl zone init. Edit it with gslbctl zone add / zone del, which\n", zone);
    t += "; validate each change, bump the serial and keep this layout.\n";
    t += fmt::format("$ORIGIN {}\n$TTL {}\n", zone, ttl);
    t += fmt::format("@\tIN\tSOA\t{} {} (\n", ns[0].name, rname);
    t += fmt::format("\t\t{}\t; serial (YYYYMMDDnn)\n", serial);
    t += "\t\t3600\t\t; refresh\n\t\t600\t\t; retry\n\t\t1209600\t\t; expire\n\t\t60 )\t\t; negative TTL "
         "(RFC 2308)\n";
    for (const auto& n : ns) t += fmt::format("@\tIN\tNS\t{}\n", n.name);
    for (const auto& n : ns)
        for (const auto& addr : n.addrs)
            t += fmt::format("{}\tIN\t{}\t{}\n", n.name, addr.find(':') == std::string::npos ? "A" : "AAAA",
                             addr);
    return t;
}

}  // namespace

int zoneInit(const ZoneInitArgs& a) {
    std::string zone = a.zone;
    if (zone.empty() || zone.back() != '.') zone += '.';
    zones::WireName apex;
    if (!zones::textToName(zone, {}, apex) || zone == ".") {
        fmt::print(stderr, "\"{}\" is not a zone name\n", a.zone);
        return kUsage;
    }
    std::string file = a.file.empty() ? zone.substr(0, zone.size() - 1) + ".zone" : a.file;
    struct stat st;
    if (stat(file.c_str(), &st) == 0)
        return fail(fmt::format("{}: already exists; not overwriting it", file));

    std::vector<NameServer> ns;
    if (int rc = parseNameServers(a.ns, zone, apex, ns); rc != kOk) return rc;
    if (ns.empty()) {
        fmt::print(stderr, "zone init needs at least one --ns\n");
        return kUsage;
    }
    std::string rname;
    if (int rc = mailboxName(a.email, zone, rname); rc != kOk) return rc;

    uint32_t serial = initialSerial(todayUtc());
    const std::string t = initialZoneText(zone, a.ttl, ns, rname, serial);

    std::string error;
    TempFile tmp;
    if (!tmp.write(file, t, error)) return fail(error);
    if (!zones::loadZone(tmp.path(), zone, error)) return fail(replaceAll(error, tmp.path(), file));
    if (!tmp.commitNew(error)) return fail(error);
    fmt::print("{}: zone {} created, serial {}, {} name server(s)\n", file, zone, serial, ns.size());
    // Valid, and often how a first zone starts; but a delegation to one server is unreachable while it is.
    if (ns.size() == 1)
        fmt::print(
            stderr,
            "{}: warning: one name server: RFC 2182 §5 asks for at least two, on different networks, so "
            "that the zone answers while one is down; add one with `gslbctl zone add {} @ NS NAME` (and "
            "its address if it is inside the zone), or give --ns twice to zone init\n",
            file, file);
    return kOk;
}

int zoneAdd(const std::string& file, const std::string& origin, const std::string& owner,
            const std::vector<std::string>& words) {
    std::string ttl, type, rdata, error;
    if (!splitRecordWords(words, ttl, type, rdata, error)) {
        fmt::print(stderr, "zone add: {}\n", error);
        return kUsage;
    }
    ZoneEdit ed;
    if (!openZone(file, origin, ed, error)) return fail(error);
    if (!addRecord(ed, owner, ttl, type, rdata, error)) return fail(error);
    if (!prepareZone(ed, std::nullopt, error)) return fail(error);
    std::string added = ed.candidate.substr(ed.before.text().size());
    while (!added.empty() && added.back() == '\n') added.pop_back();
    if (auto nl = added.rfind('\n'); nl != std::string::npos) added = added.substr(nl + 1);
    fmt::print("{}: added {}\n", file, added);
    return commitEdit(ed);
}

int zoneDel(const std::string& file, const std::string& origin, const std::string& owner,
            const std::vector<std::string>& words) {
    std::string type, rdata, error;
    if (!words.empty()) {
        std::string ttl;
        if (!splitRecordWords(words, ttl, type, rdata, error)) {
            fmt::print(stderr, "zone del: {}\n", error);
            return kUsage;
        }
    }
    ZoneEdit ed;
    if (!openZone(file, origin, ed, error)) return fail(error);
    std::vector<std::string> removed;
    if (!deleteRecords(ed, owner, type, rdata, removed, error)) return fail(error);
    if (!prepareZone(ed, std::nullopt, error)) return fail(error);
    for (const auto& r : removed) fmt::print("removed {}\n", r);
    return commitEdit(ed);
}

int zoneList(const std::string& file, const std::string& origin, const std::string& owner) {
    ZoneEdit ed;
    std::string error;
    if (!openZone(file, origin, ed, error)) return fail(error);
    std::vector<size_t> hits;
    if (!owner.empty()) {
        if (!ed.before.match(owner, "", "", hits, error)) return fail(error);
        if (hits.empty())
            return fail(fmt::format("{}: no record at {}", file, absoluteName(owner, ed.before.origin())));
    }
    for (size_t i = 0; i < ed.before.entries().size(); ++i) {
        const ZoneEntry& e = ed.before.entries()[i];
        if (e.kind == ZoneEntry::Include)
            fmt::print("{}:{}: {}", file, e.firstLine, ed.before.text().substr(e.begin, e.end - e.begin));
        if (e.kind != ZoneEntry::Record || !e.rr) continue;
        if (!owner.empty() && std::find(hits.begin(), hits.end(), i) == hits.end()) continue;
        std::string text = recordText(e.rr.get());
        if (ldns_rr_ttl(e.rr.get()) == 0xFFFFFFFFu) {  // no TTL written and no $TTL: the SOA MINIMUM applies
            auto tab = text.find('\t');
            auto tab2 = tab == std::string::npos ? tab : text.find('\t', tab + 1);
            if (tab2 != std::string::npos) text.replace(tab + 1, tab2 - tab - 1, "(minimum)");
        }
        fmt::print("{}:{}\t{}\n", file, e.firstLine, text);
    }
    return kOk;
}

int zoneSerial(const std::string& file, const std::string& origin, std::optional<uint32_t> set, bool force) {
    ZoneEdit ed;
    std::string error;
    if (!openZone(file, origin, ed, error)) return fail(error);
    if (set && !force && !serialGreater(*set, ed.before.serial()))
        return fail(
            fmt::format("{}: {} is not greater than the current serial {} in serial arithmetic (RFC 1982): "
                        "secondaries would not transfer the zone (--force to set it anyway)",
                        file, *set, ed.before.serial()));
    keepRecords(ed);
    if (!prepareZone(ed, set, error)) return fail(error);
    return commitEdit(ed);
}

}  // namespace gslb::ctl
