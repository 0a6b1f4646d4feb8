#include "server/control/explain.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <strings.h>

#include <algorithm>
#include <cmath>

#include "metrics/compare.hpp"
#include "metrics/select.hpp"
#include "metrics/stage_registry.hpp"
#include "server/base/clock.hpp"
#include "server/control/json_values.hpp"
#include "zones/ldns.hpp"
#include "zones/name.hpp"
#include "zones/rrtype.hpp"

namespace gslb::server {
namespace {

using metrics::Candidate;
using metrics::StageKind;
using nlohmann::json;

// A FlashBack time (ms, a smoothed average): to the microsecond is more than a health check measures, and
// "51.17535799741745" reads as noise; two decimals keep what a tolerance of a few percent compares.
json ms(double v) {
    return std::isnan(v) ? json(nullptr) : json(std::round(v * 100) / 100);
}
// Sessions available at a site: unknown (NaN) when the site never reported, or its report is stale — never 0,
// which would read as a full table beside "nothing dropped" (the stage keeps unknown sites).
double available(const Candidate& c) {
    if (std::isnan(c.sessionsMax) || std::isnan(c.sessionsUsed)) return metrics::kUnknown;
    return std::max(0.0, c.sessionsMax - c.sessionsUsed);
}

bool parseSubnet(const std::string& text, bool prefixAllowed, zones::ClientSubnet& s, sockaddr_storage* sa) {
    std::string addr = text;
    int bits = -1;
    auto slash = text.find('/');
    if (slash != std::string::npos) {
        if (!prefixAllowed) return false;
        std::string b = text.substr(slash + 1);
        if (b.empty() || b.size() > 3 || b.find_first_not_of("0123456789") != std::string::npos) return false;
        bits = std::stoi(b);
        addr.resize(slash);
    }
    uint8_t len = 0;
    s = zones::ClientSubnet{};
    if (!parseAddress(addr, s.addr, len)) return false;
    s.family = len == 4 ? zones::kFamilyIPv4 : zones::kFamilyIPv6;
    if (bits < 0) bits = len * 8;
    if (bits > len * 8) return false;
    s.bits = uint8_t(bits);
    // Bits past the prefix are cleared, as a resolver sends them (RFC 7871 §6).
    for (int i = 0; i < 16; ++i) {
        int keep = std::clamp(bits - i * 8, 0, 8);
        s.addr[i] &= uint8_t(0xFF00 >> keep);
    }
    if (sa) {
        *sa = sockaddr_storage{};
        if (len == 4) {
            auto* s4 = reinterpret_cast<sockaddr_in*>(sa);
            s4->sin_family = AF_INET;
            std::memcpy(&s4->sin_addr, s.addr, 4);
        } else {
            auto* s6 = reinterpret_cast<sockaddr_in6*>(sa);
            s6->sin6_family = AF_INET6;
            std::memcpy(&s6->sin6_addr, s.addr, 16);
        }
    }
    return true;
}

std::string subnetText(const zones::ClientSubnet& s) {
    char buf[INET6_ADDRSTRLEN];
    inet_ntop(s.family == zones::kFamilyIPv4 ? AF_INET : AF_INET6, s.addr, buf, sizeof buf);
    return fmt::format("{}/{}", buf, s.bits);
}

// Per-stage presentation: the value a stage reads from a candidate, with the age of what it came from.
struct Reading {
    json value;
    json ageS;
};

class Explainer {
  public:
    Explainer(const Snapshot& s, const GslbHost& h, const std::vector<GslbService>& svcs, int64_t now)
        : s_(s), t_(*s.gslb.table), h_(h), svcs_(svcs), now_(now) {}

    std::string id(const Candidate& c) const {
        const GslbService& sv = svcs_[c.index];
        return t_.siteName(sv.site) + "/" + sv.address();
    }
    json ids(std::span<const Candidate> cs) const {
        json a = json::array();
        for (const auto& c : cs) a.push_back(id(c));
        return a;
    }
    std::string site(const Candidate& c) const { return t_.siteName(svcs_[c.index].site); }

    Reading read(StageKind k, const Candidate& c, const ClientDecision& d) const {
        const GslbService& sv = svcs_[c.index];
        auto site = t_.siteView(sv.site);
        auto svc = t_.serviceView(sv.slot);
        switch (k) {
            case StageKind::Health:
                return {json{{"health", c.health == metrics::Health::Up     ? "up"
                                        : c.health == metrics::Health::Down ? "down"
                                                                            : "unknown (counts as up)"},
                             {"enabled", c.enabled},
                             {"site_up", c.siteUp},
                             {"site_enabled", c.siteEnabled}},
                        nullptr};
            case StageKind::SessionThreshold:
                return {
                    jsonNumber(c.sessionsMax > 0 ? c.sessionsUsed / c.sessionsMax * 100 : metrics::kUnknown),
                    jsonAge(site.sessionsAtMs, now_)};
            case StageKind::SessionCapacity:
                return {jsonNumber(available(c)), jsonAge(site.sessionsAtMs, now_)};
            case StageKind::Flashback:
                return {json{{"l7_ms", ms(c.l7Ms)}, {"l4_ms", ms(c.l4Ms)}}, nullptr};
            case StageKind::LeastConnections:
                if (!std::isnan(c.connections) && c.capacity > 0)
                    return {json{{"connections", c.connections},
                                 {"capacity", c.capacity},
                                 {"utilisation", c.connections / c.capacity}},
                            jsonAge(svc.connectionsAtMs, now_)};
                return {jsonNumber(c.connections), jsonAge(svc.connectionsAtMs, now_)};
            case StageKind::Cpu:
                return {jsonNumber(c.cpu), jsonAge(site.cpuAtMs, now_)};
            case StageKind::Preference:
                return {json(c.preference), nullptr};
            case StageKind::Topology:
                if (h_.topology.mode == HostTopology::Mode::Nearest)
                    return {jsonNumber(c.distanceKm), nullptr};
                return {c.topoRank == metrics::kNoRank ? json(nullptr) : json(c.topoRank), nullptr};
            case StageKind::WeightedRandom:
            case StageKind::WeightedRoundRobin:
                return {json(c.weight), nullptr};
            case StageKind::LoadFactor:
                return {jsonNumber(c.loadFactor), jsonAge(site.loadFactorAtMs, now_)};
            case StageKind::Hashed:
                return {jsonNumber(c.hashScore), nullptr};
            case StageKind::Rtt: {
                // What the agents taught for the client's prefix, fresh or not: a figure older than
                // rtt_max_age shows with its age and counts as unknown (value null).
                const RttTable::Figure& f = c.index < rtt_.size() ? rtt_[c.index] : RttTable::Figure{};
                if (f.atMs == 0) return {nullptr, nullptr};
                json v = {{"rtt_ms", std::isnan(c.rttMs) ? json(nullptr) : jsonFloat(f.rttMs)},
                          {"samples", f.samples}};
                if (std::isnan(c.rttMs))
                    v["note"] = fmt::format("{} ms, older than rtt_max_age: unknown", f.rttMs);
                return {v, jsonAge(f.atMs, now_)};
            }
            case StageKind::LeastSelected:
                // What it compares: answers given per service. Each worker thread counts its own; the
                // snapshot's total over all of them is the nearest an operator can see.
                return {json{{"answered", s_.gslb.hostAnswers ? s_.gslb.hostAnswers->total(sv.hostSlot) : 0}},
                        nullptr};
            case StageKind::BestServer:
                return {json{{"l7_ms", ms(c.l7Ms)}, {"l4_ms", ms(c.l4Ms)}}, nullptr};
            default:
                return {nullptr, nullptr};
        }
        (void)d;
    }

    // rtt_explore as configured (percent): the query path's fraction of 2^32 reads back as 4.9999999813735485
    // for 5, so the configured value is shown; a hostname without its own configuration gets the fraction to
    // six decimals, more than a per-cent setting has.
    json explorePercent() const {
        if (h_.conf) return h_.conf->policy.rttExplore;
        return std::round(double(h_.rttExplore) / 4294967296.0 * 100.0 * 1e6) / 1e6;
    }

    // The bar a filter sets over what it received, and why a dropped candidate fell below it.
    json bar(StageKind k, std::span<const Candidate> in, const metrics::Params& p, const ClientDecision& d,
             const Location& loc) const {
        auto best = [&](auto get, bool lowest) {
            double b = metrics::kUnknown;
            for (const auto& c : in) {
                double v = get(c);
                if (!std::isnan(v) && (std::isnan(b) || (lowest ? v < b : v > b))) b = v;
            }
            return b;
        };
        switch (k) {
            case StageKind::SessionThreshold:
                return {{"threshold_percent", p.sessionThreshold}};
            case StageKind::SessionCapacity:
                return {{"best_available", jsonNumber(best(available, false))},
                        {"tolerance_percent", p.sessionTolerance},
                        {"floor_percent", p.sessionFloor}};
            case StageKind::Flashback:
                return {{"fastest_l7_ms", ms(best([](const Candidate& c) { return c.l7Ms; }, true))},
                        {"fastest_l4_ms", ms(best([](const Candidate& c) { return c.l4Ms; }, true))},
                        {"tolerance_percent", p.flashbackTolerance}};
            case StageKind::LeastConnections:
                if (metrics::connectionsRelativeToCapacity(in)) {
                    double b = best([](const Candidate& c) { return c.connections / c.capacity; }, true);
                    return {{"compares", "connections / capacity"},
                            {"best", jsonNumber(b)},
                            {"factor", p.factor},
                            {"limit", jsonNumber(b * (1 + p.factor))}};
                }
                [[fallthrough]];
            case StageKind::Cpu: {
                double b = k == StageKind::Cpu ? best([](const Candidate& c) { return c.cpu; }, true)
                                               : best([](const Candidate& c) { return c.connections; }, true);
                json j = {
                    {"best", jsonNumber(b)}, {"factor", p.factor}, {"limit", jsonNumber(b * (1 + p.factor))}};
                if (k == StageKind::LeastConnections)
                    j["compares"] = "connections (not every candidate has a capacity)";
                return j;
            }
            case StageKind::Preference: {
                double b = best([](const Candidate& c) { return double(c.preference); }, false);
                return {{"best", jsonNumber(b)}};
            }
            case StageKind::Rtt:
                return {
                    {"prefix", rttPrefix_.empty() ? json(nullptr) : json(rttPrefix_)},
                    {"fastest_ms", jsonFloat(float(best([](const Candidate& c) { return c.rttMs; }, true)))},
                    {"tolerance_percent", p.rttTolerance},
                    {"floor_ms", p.rttFloorMs},
                    {"max_age_s", h_.rttMaxAgeMs / 1000},
                    {"explore_percent", explorePercent()}};
            case StageKind::Topology: {
                const HostTopology& t = h_.topology;
                if (t.mode == HostTopology::Mode::Nearest)
                    return {{"mode", "nearest"},
                            {"nearest_km",
                             jsonNumber(best([](const Candidate& c) { return c.distanceKm; }, true))},
                            {"tolerance_km", p.nearestTolerance}};
                json j = {{"mode", t.mode == HostTopology::Mode::Map ? "map" : "region"}};
                if (d.label >= 0) j["matched"] = s_.gslb.topology->labelText(loc.labels[d.label]);
                if (d.list >= 0) {
                    j["list_key"] = t.keyText[size_t(d.list)];
                    json sites = json::array();
                    for (uint32_t sl : t.lists[size_t(d.list)]) sites.push_back(t_.siteName(sl));
                    j["list"] = sites;
                }
                return j;
            }
            default:
                return nullptr;
        }
    }

    std::string why(StageKind k, const Candidate& c, const json& b, const metrics::Params& p) const {
        switch (k) {
            case StageKind::Health: {
                std::string w;
                auto add = [&](const char* s) { w += w.empty() ? s : std::string(", ") + s; };
                if (c.health == metrics::Health::Down) add("down");
                if (!c.enabled) add("drained");
                if (!c.siteUp) add("site down");
                if (!c.siteEnabled) add("site drained");
                return w;
            }
            case StageKind::SessionThreshold:
                return fmt::format("sessions {:.1f} % used > threshold {} %",
                                   c.sessionsUsed / c.sessionsMax * 100, p.sessionThreshold);
            case StageKind::SessionCapacity:
                return fmt::format(
                    "{} sessions available: more than {} % below the best {}, and more than {} % of the "
                    "smaller session table",
                    available(c), p.sessionTolerance, b.value("best_available", 0.0), p.sessionFloor);
            case StageKind::Flashback:
                return fmt::format("slower than the fastest by more than {} % (l7 {} ms, l4 {} ms)",
                                   p.flashbackTolerance, ms(c.l7Ms).dump(), ms(c.l4Ms).dump());
            case StageKind::LeastConnections:
                if (b.value("compares", "") == "connections / capacity")
                    return fmt::format("{} connections of capacity {} = {:.3f} > limit {}", c.connections,
                                       c.capacity, c.connections / c.capacity, b["limit"].dump());
                return fmt::format("{} connections > limit {}", c.connections, b["limit"].dump());
            case StageKind::Cpu:
                return fmt::format("cpu {} % > limit {}", c.cpu, b["limit"].dump());
            case StageKind::Preference:
                return c.preference == 0
                           ? "preference 0 takes the site out"
                           : fmt::format("preference {} < best {}", c.preference, b["best"].dump());
            case StageKind::Rtt:
                return fmt::format(
                    "{} ms from the client's prefix: slower than the fastest {} ms by more than "
                    "{} % and {} ms",
                    float(c.rttMs), b["fastest_ms"].dump(), p.rttTolerance, p.rttFloorMs);
            case StageKind::Topology:
                if (h_.topology.mode == HostTopology::Mode::Nearest)
                    return fmt::format("{:.0f} km > nearest {} + tolerance {} km", c.distanceKm,
                                       b["nearest_km"].dump(), p.nearestTolerance);
                if (c.topoRank == metrics::kNoRank)
                    return fmt::format("site {} is not listed for this client", site(c));
                return fmt::format("site {} is choice {} of the list; an earlier one has candidates", site(c),
                                   c.topoRank + 1);
            default:
                return "dropped";
        }
    }

    /// The `rtt` stage's view: the client's prefix at the table's length ("198.51.100.0/24"; empty when it
    /// cannot be placed) and every candidate's figure, by service index, fresh or not.
    void setRtt(std::string prefix, std::vector<RttTable::Figure> figures) {
        rttPrefix_ = std::move(prefix);
        rtt_ = std::move(figures);
    }

  private:
    const Snapshot& s_;
    const metrics::StateTable& t_;
    const GslbHost& h_;
    const std::vector<GslbService>& svcs_;
    int64_t now_;
    std::string rttPrefix_;
    std::vector<RttTable::Figure> rtt_;
};

json locationJson(const Topology& topo, const Location& loc, const zones::Client& client) {
    json j = {{"subnet", client.subnet.family ? json(subnetText(client.subnet)) : json(nullptr)},
              {"from", client.fromEcs ? "ecs" : "client"},
              {"known", loc.known()},
              {"scope", loc.scope}};
    if (loc.netEntry >= 0) {
        const auto& e = topo.nets().entries()[size_t(loc.netEntry)];
        j["nets"] = {{"prefix", e.text}, {"region", topo.labelText({RegionLabel::Net, e.value}).substr(5)}};
    } else {
        j["nets"] = nullptr;
    }
    if (topo.hasGeoIp()) {
        const GeoResult& g = loc.geo;
        j["geoip"] = g.found ? json{{"continent", g.continent},
                                    {"country", g.country},
                                    {"subdivision", g.subdivision},
                                    {"asn", g.asn ? json(g.asn) : json(nullptr)},
                                    {"latitude", g.hasLocation ? json(g.latitude) : json(nullptr)},
                                    {"longitude", g.hasLocation ? json(g.longitude) : json(nullptr)},
                                    {"network_bits", g.scope}}
                             : json{{"found", false}, {"network_bits", g.scope}};
    }
    json labels = json::array();
    for (uint8_t i = 0; i < loc.count; ++i) labels.push_back(topo.labelText(loc.labels[i]));
    j["labels"] = labels;
    return j;
}

// The zone's answer, for names that are not GSLB hostnames (and to show a CNAME chain's end).
json staticAnswer(const Snapshot& s, const std::string& name, uint16_t qtype, const zones::Client& client,
                  const sockaddr* source, bool ecs) {
    std::vector<uint8_t> q = {0x12, 0x34, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1};
    zones::WireName w;
    std::string n = name.empty() || name.back() != '.' ? name + "." : name;
    if (!zones::textToName(n, {}, w)) return {{"rcode", "FORMERR"}};
    q.insert(q.end(), w.begin(), w.end());
    q.insert(q.end(), {uint8_t(qtype >> 8), uint8_t(qtype), 0, 1});
    size_t octets = ecs ? (size_t(client.subnet.bits) + 7) / 8 : 0;
    size_t optLen = ecs ? 8 + octets : 0;
    q.insert(q.end(), {0, 0, 41, 0x10, 0, 0, 0, 0, 0, uint8_t(optLen >> 8), uint8_t(optLen)});
    if (ecs) {
        q.insert(q.end(), {0, 8, 0, uint8_t(4 + octets), 0, client.subnet.family, client.subnet.bits, 0});
        q.insert(q.end(), client.subnet.addr, client.subnet.addr + octets);
    }
    // Explain mode: no worker's counters are touched (the control thread must not write a worker's row), and
    // no chooser state is made per hostname (a CNAME chain reaches a GSLB name or two, not the zone's
    // 10,000).
    Selector sel(0, uint64_t(monotonicNs()), Selector::Mode::Explain);
    sel.rebind(&s.gslb);
    std::vector<uint8_t> out(65535);
    auto r = zones::answer(s.db, s.answer, q, true, out, &sel, zones::ClientInfo{source});
    json j;
    ldns_pkt* pkt = nullptr;
    if (r.action != zones::Action::Send || ldns_wire2pkt(&pkt, out.data(), r.len) != LDNS_STATUS_OK)
        return {{"rcode", "none"}};
    char* rc = ldns_pkt_rcode2str(ldns_pkt_get_rcode(pkt));
    j["rcode"] = rc ? rc : "?";
    free(rc);
    json recs = json::array();
    ldns_rr_list* an = ldns_pkt_answer(pkt);
    for (size_t i = 0; i < ldns_rr_list_rr_count(an); ++i) {
        char* t = ldns_rr2str(ldns_rr_list_rr(an, i));
        std::string line = t;
        free(t);
        while (!line.empty() && line.back() == '\n') line.pop_back();
        for (auto& ch : line)
            if (ch == '\t') ch = ' ';
        recs.push_back(line);
    }
    j["records"] = recs;
    ldns_pkt_free(pkt);
    // The ECS option is the OPT record's last option when we echoed one: its scope octet.
    if (ecs && r.len > 0 && out[r.len - 1 - octets - 1] == client.subnet.bits)
        j["ecs_scope"] = out[r.len - 1 - octets];
    else
        j["ecs_scope"] = nullptr;
    return j;
}

// The query explain is asked about, read as the query path would see it.
struct ExplainQuery {
    uint16_t qtype = 0;
    std::string name;  // fully qualified
    zones::Client client;
    sockaddr_storage src{};
    bool haveSource = false;
    bool useEcs = false;  // an ECS prefix given and [server] ecs on
    const sockaddr* source() const { return haveSource ? reinterpret_cast<const sockaddr*>(&src) : nullptr; }
};

// The request's type, name, client and ECS prefix; false with `error` (the API's 400) when one is not what a
// query could carry.
bool readQuery(const Snapshot& s, const ExplainRequest& req, ExplainQuery& q, std::string& error) {
    if (strcasecmp(req.type.c_str(), "A") == 0)
        q.qtype = zones::kTypeA;
    else if (strcasecmp(req.type.c_str(), "AAAA") == 0)
        q.qtype = zones::kTypeAAAA;
    else {
        error = fmt::format("type \"{}\": explain answers A or AAAA", req.type);
        return false;
    }
    if (req.name.empty()) {
        error = "name is required";
        return false;
    }
    // A name the query path could never be asked: a NUL (or another control octet, or a space) cut the name
    // short in the C string the zone lookup read ("a%00b.eval.test." became "a." and REFUSED). Octets like
    // these are written \DDD in a name (RFC 1035 §5.1).
    {
        std::string fq = zones::endsInDot(req.name) ? req.name : req.name + ".";
        zones::WireName w;
        bool bad = std::any_of(req.name.begin(), req.name.end(),
                               [](char ch) { return uint8_t(ch) <= 0x20 || uint8_t(ch) == 0x7f; });
        if (bad || !zones::textToName(fq, {}, w)) {
            std::string shown;  // the name as given, its control octets as \DDD
            for (char ch : req.name)
                shown += uint8_t(ch) < 0x20 || uint8_t(ch) == 0x7f ? fmt::format("\\{:03d}", uint8_t(ch))
                                                                   : std::string(1, ch);
            error = fmt::format("name \"{}\" is not a domain name{}", shown,
                                bad ? " (a control octet or a space: write it as \\DDD)" : "");
            return false;
        }
    }
    zones::ClientSubnet source;
    if (!req.client.empty()) {
        if (!parseSubnet(req.client, false, source, &q.src)) {
            error = fmt::format("client \"{}\" is not an IPv4 or IPv6 address", req.client);
            return false;
        }
        q.haveSource = true;
    }
    q.useEcs = !req.ecs.empty() && s.answer.ecs;
    if (!req.ecs.empty()) {
        zones::ClientSubnet e;
        if (!parseSubnet(req.ecs, true, e, nullptr)) {
            error = fmt::format("ecs \"{}\" is not an address prefix (198.51.100.0/24)", req.ecs);
            return false;
        }
        if (q.useEcs) {
            q.client.subnet = e;
            q.client.fromEcs = true;
        }
    }
    if (!q.client.fromEcs && q.haveSource) q.client.subnet = source;
    if (q.haveSource) q.client.resolver = source;
    q.name = req.name;
    if (q.name.back() != '.') q.name += '.';
    return true;
}

json queryJson(const Snapshot& s, const ExplainRequest& req, const ExplainQuery& q) {
    json j = {{"name", q.name},
              {"type", q.qtype == zones::kTypeA ? "A" : "AAAA"},
              {"client", q.haveSource ? json(req.client) : json(nullptr)},
              {"ecs", req.ecs.empty() ? json(nullptr) : json(req.ecs)}};
    if (!req.ecs.empty() && !s.answer.ecs) j["note"] = "[server] ecs = false: the ECS option is ignored";
    return j;
}

// The GSLB hostname `name` (fully qualified) names, or null.
const GslbHost* findHost(const Gslb& g, const std::string& name) {
    const GslbHost* host = nullptr;
    for (const auto& h : g.hosts) {
        std::string hn = zones::endsInDot(h.name) ? h.name : h.name + ".";
        if (strcasecmp(hn.c_str(), name.c_str()) == 0) host = &h;
    }
    return host;
}

// Every service of the (hostname, family) as the selection's candidates, as the query path fills them.
std::vector<Candidate> candidates(const Gslb& g, const GslbHost& h, const std::vector<GslbService>& svcs,
                                  int64_t now) {
    std::vector<Candidate> c(svcs.size());
    for (size_t i = 0; i < svcs.size(); ++i) {
        c[i] = metrics::fillCandidate(*g.table, svcs[i].slot, svcs[i].site, svcs[i].weight, now, h.maxAgeMs);
        c[i].index = uint16_t(i);
        c[i].capacity = svcs[i].capacity;
    }
    return c;
}

// The learned RTTs the rtt stage reads for the client's prefix (gslbd-agent(8)), shown by the Explainer.
void learnedRtts(Explainer& ex, const RttTable& rtt, const std::vector<GslbService>& svcs,
                 const zones::Client& client) {
    std::string prefix;
    std::vector<RttTable::Figure> figs(svcs.size());
    if (const RttTable::Key key = rtt.key(client.subnet)) {
        zones::ClientSubnet p = client.subnet;
        p.bits = uint8_t(rtt.bits(key.family));
        for (size_t i = 0; i < 16; ++i) p.addr[i] &= uint8_t(0xFF00 >> std::clamp(p.bits - int(i) * 8, 0, 8));
        prefix = subnetText(p);
        std::vector<uint32_t> sites(svcs.size());
        for (size_t i = 0; i < svcs.size(); ++i) sites[i] = svcs[i].site;
        rtt.lookup(key, sites, figs);
    }
    ex.setRtt(prefix, std::move(figs));
}

// Preference 0 takes a site out before any stage, whatever the policy (metrics::select does so): the pseudo
// stage that shows it, compacting c[0..n).
json preferenceZeroStage(const Explainer& ex, std::vector<Candidate>& c, size_t& n) {
    json sj = {{"stage", "preference 0"}, {"received", ex.ids({c.data(), n})}};
    json dropped = json::array();
    size_t w = 0;
    for (size_t r = 0; r < n; ++r)
        if (c[r].preference != 0)
            c[w++] = c[r];
        else
            dropped.push_back({{"service", ex.id(c[r])}, {"why", "preference 0 takes the site out"}});
    n = w;
    sj["values"] = json::array();
    sj["bar"] = nullptr;
    sj["kept"] = ex.ids({c.data(), n});
    sj["dropped"] = dropped;
    sj["note"] = "a site at preference 0 is out of every answer, before the policy's stages";
    return sj;
}

// One filter stage over c[0..n): what it received, each candidate's value, its bar, what it kept (c[0..n)
// compacted, n updated) and why each other was dropped.
json filterStage(const Explainer& ex, const GslbHost& h, const metrics::StageInfo& st,
                 std::vector<Candidate>& c, size_t& n, const ClientDecision& d, const Location& loc) {
    const metrics::Params& p = h.policy.params();
    std::span<Candidate> in(c.data(), n);
    json sj = {{"stage", st.name}, {"received", ex.ids(in)}};
    json values = json::array();
    bool anyKnown = false;
    for (const auto& x : in) {
        Reading r = ex.read(st.kind, x, d);
        anyKnown |= !r.value.is_null();
        values.push_back({{"service", ex.id(x)}, {"value", r.value}, {"age_s", r.ageS}});
    }
    sj["values"] = values;
    json b = ex.bar(st.kind, in, p, d, loc);
    sj["bar"] = b;
    std::vector<Candidate> before(in.begin(), in.end());
    size_t kept = st.filter(in, p);
    json dropped = json::array();
    for (const auto& x : before) {
        bool still = false;
        for (size_t k = 0; k < kept; ++k) still |= c[k].index == x.index;
        if (!still) dropped.push_back({{"service", ex.id(x)}, {"why", ex.why(st.kind, x, b, p)}});
    }
    sj["kept"] = ex.ids({c.data(), kept});
    sj["dropped"] = dropped;
    if (st.kind == StageKind::Topology && d.list >= 0 && d.list == h.topology.defaultList)
        sj["note"] = loc.known() ? "no label of the client is in the table: the default list"
                                 : "the client's location is unknown: the default list";
    else if (!anyKnown && st.kind != StageKind::Health && st.kind != StageKind::Preference)
        sj["note"] = st.kind == StageKind::Topology
                         ? "the client's location is unknown (or matches nothing): all pass"
                         : "unknown for every candidate: all pass";
    else if (kept == before.size() && st.kind != StageKind::Health && dropped.empty() && before.size() > 1)
        sj["note"] = "nothing dropped";
    n = kept;
    return sj;
}

// The headroom chooser's view of each candidate (its measured load, headroom, target and share) into
// values[], and its bar: the resolver's demand and what the batch fits.
json headroomBar(const GslbHost& h, std::span<const Candidate> active, const HeadroomQuery& hq,
                 json& values) {
    const metrics::Params& p = h.policy.params();
    const size_t n = active.size();
    metrics::Share shares[metrics::kMaxServices];
    auto sum = metrics::headroomShares(active, 0, p, {shares, std::min(n, metrics::kMaxServices)});
    for (size_t i = 0; i < values.size() && i < metrics::kMaxServices; ++i) {
        const metrics::Share& sh = shares[i];
        const auto& m = sh.measured;
        // json(nullptr): a null const char* (the ternary's type) would throw building a string.
        values[i]["value"] = {{"basis", m.basis == metrics::LoadBasis::Sessions      ? json("sessions")
                                        : m.basis == metrics::LoadBasis::Connections ? json("connections")
                                                                                     : json(nullptr)},
                              {"capacity", jsonNumber(m.capacity)},
                              {"load", jsonNumber(m.load)},
                              {"utilisation", jsonNumber(m.value)},
                              {"utilisation_used", sh.utilisation},
                              {"headroom", sh.headroom},
                              {"free", sh.free},
                              {"margin", sh.margin},
                              {"target", sh.target},
                              {"flow", sh.flow},
                              {"pending", sh.pending},
                              {"projected_load", jsonNumber(sh.projected)},
                              {"deficit", sh.deficit},
                              {"fits", sh.fits},
                              {"nearest", sh.nearest},
                              {"probability", sh.probability}};
        if (std::isnan(m.value) && sum.basis == metrics::ShareBasis::Capacity)
            values[i]["value"]["note"] = std::isnan(m.capacity)
                                             ? "capacity unknown: counted as the mean of the others"
                                             : "load unknown: counted as the mean utilisation";
    }
    return {{"basis", sum.basis == metrics::ShareBasis::Capacity ? "capacity x headroom" : "weight"},
            {"resolver_demand", hq.demand.demand},
            {"demand_source", metrics::demandSourceName(hq.demand.source)},
            {"gap_ms", hq.demand.gapMs > 0 ? json(hq.demand.gapMs) : json(nullptr)},
            {"committed_flow", sum.totalFlow},
            {"session_time_s", jsonNumber(sum.sessionTime)},
            {"sqrt_margin", {{"gamma", p.sqrtMargin}, {"beta", sum.beta}}},
            {"batch_fits_somewhere", sum.anyFits},
            {"ttl_min", h.ttlMin},
            {"ttl", h.ttl}};
}

// The chooser over the candidates the filters kept, c[0..n): each one's value, one draw of the answer's
// records (into `records`) and, for headroom, the TTL it sets (into `answer`).
json chooserJson(const Snapshot& s, const GslbHost& h, int f, const zones::Client& client,
                 const ClientDecision& d, const Explainer& ex, std::vector<Candidate>& c, size_t n,
                 int64_t now, json& records, json& answer) {
    const metrics::Params& p = h.policy.params();
    const auto& svcs = h.family[f];
    std::span<const Candidate> active(c.data(), n);
    const auto& ch = h.policy.chooser();
    json cj = {{"stage", ch.name}, {"received", ex.ids(active)}};
    HeadroomQuery hq;
    if (h.headroom)  // what the query path reads, without teaching the demand table anything
        hq = fillHeadroom(s.gslb, h, f, client, d.scope, c.data(), n, now, false);
    json values = json::array();
    for (const auto& x : active) {
        Reading r = ex.read(ch.kind, x, d);
        values.push_back({{"service", ex.id(x)}, {"value", r.value}, {"age_s", r.ageS}});
    }
    if (h.headroom) cj["bar"] = headroomBar(h, active, hq, values);
    cj["values"] = values;
    if (h.hashed)
        cj["bar"] = {
            {"hashed_prefix",
             client.subnet.family
                 ? json(fmt::format("{}/{}",
                                    subnetText(client.subnet).substr(0, subnetText(client.subnet).find('/')),
                                    d.hashBits))
                 : json(nullptr)}};
    metrics::ChooserState state(svcs.size());
    metrics::Rng rng{uint64_t(monotonicNs())};
    std::uint64_t taken = 0;
    json picked = json::array();
    size_t want = std::min<size_t>(h.answers, n);
    while (picked.size() < want) {
        int pos = ch.chooser(active, taken, p, state, rng);
        if (pos < 0) break;
        const Candidate& x = active[size_t(pos)];
        picked.push_back(ex.id(x));
        records.push_back(svcs[x.index].address());
        taken |= std::uint64_t{1} << x.index;
    }
    cj["picked"] = picked;
    if (h.headroom && s.gslb.demand) {
        uint16_t idx[metrics::kMaxServices];
        size_t k = 0;
        for (const auto& pk : picked)
            for (const auto& x : active)
                if (ex.id(x) == pk && k < metrics::kMaxServices) idx[k++] = x.index;
        auto t = headroomTtl(h, c.data(), n, idx, k);
        answer["ttl"] = t.ttl;
        answer["ttl_reason"] = metrics::ttlReasonName(t.reason);
    }
    if (ch.kind == StageKind::RoundRobin || ch.kind == StageKind::WeightedRoundRobin ||
        ch.kind == StageKind::LeastSelected || ch.kind == StageKind::BestServer)
        cj["note"] = "a stateful chooser: shown from a fresh state; each worker thread keeps its own";
    else if (ch.kind == StageKind::Random || ch.kind == StageKind::WeightedRandom ||
             ch.kind == StageKind::LoadFactor || ch.kind == StageKind::Headroom)
        cj["note"] = "random: this pick is one draw";
    return cj;
}

// When the stages left nothing (`status` AllDown or AllExcluded): the policy's fallback, the candidates a
// drain keeps out of it, and its records (into `records`).
json fallbackJson(const Snapshot& s, const GslbHost& h, int f, metrics::SelectStatus status, json& records) {
    const auto& svcs = h.family[f];
    std::string why = status == metrics::SelectStatus::AllDown ? "health left nothing"
                                                               : "every remaining site has preference 0";
    std::string fb = h.conf ? h.conf->policy.fallback : "all";
    // A drain holds through the fallback (the query path's rule, Selector::select): what `all` gives is
    // every candidate not drained, and nothing when every one is.
    json left = json::array();
    std::vector<const GslbService*> undrained;
    for (const auto& sv : svcs) {
        const metrics::StateTable& t = *s.gslb.table;
        if (!drainedOut(t, sv.slot, sv.site)) {
            undrained.push_back(&sv);
            continue;
        }
        std::string w = !t.siteEnabled(sv.site)          ? "site drained"
                        : t.sitePreference(sv.site) == 0 ? "site at preference 0"
                                                         : "drained";
        if (!t.serviceEnabled(sv.slot) && w != "drained") w = "drained, " + w;
        left.push_back({{"service", t.siteName(sv.site) + "/" + sv.address()}, {"why", w}});
    }
    json j = {{"why", why}, {"fallback", fb}, {"left_out", left}};
    if (undrained.empty())
        j["note"] =
            fmt::format("every candidate is drained: a drain holds through the fallback, so the answer is {}",
                        drainedOutAnswer(h, f));
    if (h.fallback == Fallback::Address && h.fallbackLen == (f == 0 ? 4 : 16)) {
        records.push_back(fb);
    } else if (h.fallback != Fallback::None) {
        for (const auto* sv : undrained) records.push_back(sv->address());
    }
    return j;
}

}  // namespace

// The steps of one query's selection, each shown as the query path takes it: the query, the hostname, the
// client's location and decision, the preference-0 pass and each filter stage, then the chooser or the
// fallback, and the answer.
bool explain(const Snapshot& s, const ExplainRequest& req, json& out, std::string& error) {
    ExplainQuery q;
    if (!readQuery(s, req, q, error)) return false;
    out = json::object();
    out["query"] = queryJson(s, req, q);
    const GslbHost* host = findHost(s.gslb, q.name);
    if (!host) {
        out["hostname"] = nullptr;
        out["note"] = "not a GSLB hostname: answered from the zone, as the query path would";
        out["answer"] = staticAnswer(s, q.name, q.qtype, q.client, q.source(), q.useEcs);
        return true;
    }
    const GslbHost& h = *host;
    const int f = q.qtype == zones::kTypeA ? 0 : 1;
    const auto& svcs = h.family[f];
    out["hostname"] = h.name;
    out["policy"] = h.policy.describe();
    const int64_t now = monotonicMs();
    std::vector<Candidate> c = candidates(s.gslb, h, svcs, now);
    Location loc;
    if (h.usesTopology) s.gslb.topology->locate(q.client.subnet, loc);
    ClientDecision d;
    if (h.usesTopology || h.hashed || h.usesRtt)
        d = applyClient(s.gslb, h, svcs, q.client, loc, c.data(), c.size(), now);
    if (h.usesTopology) out["location"] = locationJson(*s.gslb.topology, loc, q.client);

    Explainer ex(s, h, svcs, now);
    if (h.usesRtt && s.gslb.rtt) learnedRtts(ex, *s.gslb.rtt, svcs, q.client);
    json stages = json::array();
    size_t n = c.size();
    metrics::SelectStatus status = n == 0 ? metrics::SelectStatus::NoCandidates : metrics::SelectStatus::Ok;
    if (std::any_of(c.begin(), c.end(), [](const Candidate& x) { return x.preference == 0; })) {
        stages.push_back(preferenceZeroStage(ex, c, n));
        if (n == 0) status = metrics::SelectStatus::AllExcluded;
    }
    for (const auto* st : h.policy.filters()) {
        if (status != metrics::SelectStatus::Ok) break;
        stages.push_back(filterStage(ex, h, *st, c, n, d, loc));
        if (n == 0)
            status = st->kind == StageKind::Health ? metrics::SelectStatus::AllDown
                                                   : metrics::SelectStatus::AllExcluded;
    }
    out["stages"] = stages;

    json answer = {{"ttl", h.ttl}};
    json records = json::array();
    if (status == metrics::SelectStatus::Ok) {
        out["chooser"] = chooserJson(s, h, f, q.client, d, ex, c, n, now, records, answer);
        out["fallback"] = nullptr;
    } else if (status == metrics::SelectStatus::NoCandidates) {
        out["chooser"] = nullptr;
        out["fallback"] = nullptr;
        out["note"] = fmt::format("no {} records: NODATA", q.qtype == zones::kTypeA ? "A" : "AAAA");
    } else {
        out["chooser"] = nullptr;
        out["fallback"] = fallbackJson(s, h, f, status, records);
    }
    answer["rcode"] = "NOERROR";
    answer["records"] = records;
    if (records.empty()) {
        // NODATA (RFC 2308 §2.2): no record carries the hostname's ttl; what a resolver caches is the
        // zone's SOA in authority, at min(SOA TTL, SOA MINIMUM) (§3) — the query path's answer exactly.
        answer.erase("ttl_reason");
        answer["nodata"] = true;
        const zones::Zone* z = s.db.findZone(h.wire);
        answer["ttl"] = z ? json(z->negativeTtl()) : json(nullptr);
        answer["authority"] =
            z ? json{{"soa", std::string(z->name())}, {"ttl", z->negativeTtl()}} : json(nullptr);
        answer["note"] = "NODATA: the zone's SOA in authority, at min(SOA TTL, SOA MINIMUM) (RFC 2308 §3)";
    }
    answer["ecs_scope"] = q.client.fromEcs ? json(q.client.subnet.bits ? d.scope : 0) : json(nullptr);
    out["answer"] = answer;
    return true;
}

std::string explainText(const json& j) {
    std::string o;
    const json& q = j["query"];
    o += fmt::format("query    {} {}", q["name"].get<std::string>(), q["type"].get<std::string>());
    if (!q["client"].is_null()) o += " from " + q["client"].get<std::string>();
    if (!q["ecs"].is_null()) o += " ecs " + q["ecs"].get<std::string>();
    o += "\n";
    if (q.contains("note")) o += "         " + q["note"].get<std::string>() + "\n";
    auto list = [](const json& a) {
        std::string s;
        for (const auto& x : a)
            s += (s.empty() ? "" : ", ") + (x.is_string() ? x.get<std::string>() : x.dump());
        return s.empty() ? std::string("(none)") : s;
    };
    if (j["hostname"].is_null()) {
        o += j.value("note", "") + "\n";
        const json& a = j["answer"];
        o += fmt::format("answer   {}\n", a.value("rcode", "?"));
        if (a.contains("records"))
            for (const auto& r : a["records"]) o += "         " + r.get<std::string>() + "\n";
        if (a.contains("ecs_scope") && !a["ecs_scope"].is_null())
            o += fmt::format("ecs scope {}\n", a["ecs_scope"].dump());
        return o;
    }
    o += fmt::format("hostname {} (policy: {})\n", j["hostname"].get<std::string>(),
                     j["policy"].get<std::string>());
    if (j.contains("location")) {
        const json& l = j["location"];
        o += fmt::format(
            "client   {} ({}): {}", l["subnet"].is_null() ? "unknown" : l["subnet"].get<std::string>(),
            l["from"].get<std::string>(), l["known"].get<bool>() ? list(l["labels"]) : "location unknown");
        if (l.contains("geoip") && l["geoip"].contains("latitude") && !l["geoip"]["latitude"].is_null())
            o += fmt::format(" at {}, {}", l["geoip"]["latitude"].dump(), l["geoip"]["longitude"].dump());
        if (!l["nets"].is_null()) o += fmt::format(" [nets {}]", l["nets"]["prefix"].get<std::string>());
        o += "\n";
    }
    int i = 0;
    for (const auto& st : j["stages"]) {
        o += fmt::format("\n{}. {}  received: {}\n", ++i, st["stage"].get<std::string>(),
                         list(st["received"]));
        for (const auto& v : st["values"]) {
            o += fmt::format("     {:<28} {}", v["service"].get<std::string>(), v["value"].dump());
            if (!v["age_s"].is_null()) o += fmt::format("  (age {:.1f} s)", v["age_s"].get<double>());
            o += "\n";
        }
        if (!st["bar"].is_null()) o += "   bar: " + st["bar"].dump() + "\n";
        for (const auto& dr : st["dropped"])
            o += fmt::format("   dropped {}: {}\n", dr["service"].get<std::string>(),
                             dr["why"].get<std::string>());
        o += "   kept: " + list(st["kept"]) + "\n";
        if (st.contains("note")) o += "   (" + st["note"].get<std::string>() + ")\n";
    }
    if (!j["chooser"].is_null()) {
        const json& ch = j["chooser"];
        o += fmt::format("\n{}. {} (chooser)  received: {}\n", ++i, ch["stage"].get<std::string>(),
                         list(ch["received"]));
        for (const auto& v : ch["values"])
            if (!v["value"].is_null())
                o += fmt::format("     {:<28} {}\n", v["service"].get<std::string>(), v["value"].dump());
        if (ch.contains("bar")) o += "   bar: " + ch["bar"].dump() + "\n";
        o += "   picked: " + list(ch["picked"]) + "\n";
        if (ch.contains("note")) o += "   (" + ch["note"].get<std::string>() + ")\n";
    }
    if (!j["fallback"].is_null()) {
        const json& fb = j["fallback"];
        o += fmt::format("\nfallback {}: {}\n", fb["fallback"].get<std::string>(),
                         fb["why"].get<std::string>());
        for (const auto& l : fb.value("left_out", json::array()))
            o += fmt::format("   left out {}: {} (a drain holds through the fallback)\n",
                             l["service"].get<std::string>(), l["why"].get<std::string>());
        if (fb.contains("note")) o += "   (" + fb["note"].get<std::string>() + ")\n";
    }
    const json& a = j["answer"];
    if (a.value("nodata", false) && a["authority"].is_object())
        o += fmt::format("\nanswer   {} NODATA, SOA {} ttl {} in authority", a["rcode"].get<std::string>(),
                         a["authority"]["soa"].get<std::string>(), a["authority"]["ttl"].dump());
    else
        o += fmt::format("\nanswer   {} ttl {}{}: {}", a["rcode"].get<std::string>(), a["ttl"].dump(),
                         a.contains("ttl_reason") ? " (" + a["ttl_reason"].get<std::string>() + ")" : "",
                         list(a["records"]));
    if (!a["ecs_scope"].is_null()) o += fmt::format("  (ECS scope /{})", a["ecs_scope"].dump());
    o += "\n";
    return o;
}

}  // namespace gslb::server
