#include "server/state/gslb.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <ctime>
#include <map>
#include <new>
#include <type_traits>
#include <unordered_map>

#include "metrics/rendezvous.hpp"
#include "metrics/select.hpp"
#include "server/base/clock.hpp"
#include "zones/rrtype.hpp"

namespace gslb::server {

AnswerCounters::AnswerCounters(size_t workers, size_t slots)
    : workers_(workers), slots_(slots), stride_((slots + 7) / 8 * 8 + 8) {
    // Each worker's row starts on its own 64-octet line (8 counters) and a spare line separates rows.
    rows_ = std::make_unique<std::atomic<uint64_t>[]>(workers_ * stride_);
    for (size_t i = 0; i < workers_ * stride_; ++i) rows_[i].store(0, std::memory_order_relaxed);
}

uint64_t AnswerCounters::total(uint32_t slot) const {
    uint64_t t = 0;
    for (size_t w = 0; w < workers_; ++w) t += rows_[w * stride_ + slot].load(std::memory_order_relaxed);
    return t;
}

void AnswerCounters::carryFrom(const AnswerCounters& old, const metrics::StateTable& oldTable,
                               const metrics::StateTable& table) {
    for (uint32_t s = 0; s < oldTable.serviceCount(); ++s) {
        const auto& key = oldTable.serviceKey(s);
        auto slot = table.findService(key.site, key.address);
        if (slot) rows_[*slot].fetch_add(old.total(s), std::memory_order_relaxed);
    }
}

void AnswerCounters::carryByKey(const AnswerCounters& old, const std::vector<std::string>& oldKeys,
                                const std::vector<std::string>& keys) {
    std::map<std::string, uint32_t> index;
    for (uint32_t i = 0; i < keys.size(); ++i) index.emplace(keys[i], i);
    for (uint32_t s = 0; s < oldKeys.size() && s < old.slots(); ++s) {
        auto it = index.find(oldKeys[s]);
        if (it != index.end()) rows_[it->second].fetch_add(old.total(s), std::memory_order_relaxed);
    }
}

namespace {

std::string addressText(const uint8_t* rd, size_t len) {
    char buf[INET6_ADDRSTRLEN];
    inet_ntop(len == 4 ? AF_INET : AF_INET6, rd, buf, sizeof buf);
    return buf;
}

}  // namespace

std::vector<std::string> hostAnswerKeys(const Gslb& g) {
    std::vector<std::string> keys(g.hostAnswers ? g.hostAnswers->slots() : 0);
    for (const auto& h : g.hosts)
        for (const auto& fam : h.family)
            for (const auto& s : fam)
                if (s.hostSlot < keys.size())
                    keys[s.hostSlot] = h.name + '\0' + g.sites[s.site] + '\0' + s.address();
    return keys;
}

namespace {

// The state table: every site, and every (site, address) of a service once, with the previous snapshot's
// states carried; each site's preference.
bool buildTable(const Config& cfg, const Gslb* previous, Gslb& out, std::string& error) {
    std::vector<std::string> sites;
    for (const auto& s : cfg.sites) sites.push_back(s.name);
    std::vector<metrics::ServiceKey> keys;
    std::map<std::pair<std::string, std::string>, bool> seen;
    for (const auto& h : cfg.hostnames)
        for (const auto& s : h.services)
            if (!seen[{s.site, s.address}]) {
                seen[{s.site, s.address}] = true;
                keys.push_back({s.site, s.address});
            }
    std::shared_ptr<metrics::StateTable> table;
    std::string why;
    if (!metrics::StateTable::build(sites, keys, table, why, previous ? previous->table.get() : nullptr)) {
        error = fmt::format("{}: {}", cfg.path, why);
        return false;
    }
    out.table = std::move(table);
    out.sites = sites;
    for (const auto& s : cfg.sites)
        out.table->setSitePreference(*out.table->findSite(s.name), uint8_t(s.preference));
    return true;
}

// [topology] and each site's place: its location and region labels.
bool buildTopology(const Config& cfg, Gslb& out, std::string& error) {
    auto topo = std::make_shared<Topology>();
    if (!topo->build(cfg.topology, cfg.path, error)) return false;
    out.siteGeo.assign(out.sites.size(), SiteGeo{});
    for (const auto& s : cfg.sites) {
        SiteGeo& sg = out.siteGeo[*out.table->findSite(s.name)];
        sg.hasLocation = s.hasLocation;
        sg.latitude = s.latitude;
        sg.longitude = s.longitude;
        std::string why;
        if (!s.region.empty() && !topo->parseKey(s.region, sg.region, why)) {
            error = fmt::format("{}:{}: [site.{}] region: {}", cfg.path, s.line, s.name, why);
            return false;
        }
    }
    out.topology = topo;
    return true;
}

// One hostname being built: where a step's error goes ("PATH:LINE: hostname "NAME": WHY").
struct HostBuild {
    const Config& cfg;
    const HostnameConf& hc;
    std::string& error;
    bool fail(int line, const std::string& msg) const {
        error = fmt::format("{}:{}: hostname \"{}\": {}", cfg.path, line, hc.name, msg);
        return false;
    }
};

// The hostname's node in the zone that serves it: a name with its own A/AAAA records, not at or below a
// DNAME or a zone cut, not a CNAME, not configured twice.
bool findHostNode(const HostBuild& b, zones::ZoneDb& db, GslbHost& h, zones::Zone*& zone, uint32_t& node) {
    const HostnameConf& hc = b.hc;
    std::string absolute = hc.name;
    if (absolute.empty() || absolute.back() != '.') absolute += '.';
    if (!zones::textToName(absolute, {}, h.wire)) return b.fail(hc.line, "not a domain name");
    const zones::Zone* zc = db.findZone(h.wire);
    if (!zc) return b.fail(hc.line, "is in none of the served zones");
    zone = nullptr;
    for (auto& z : db.zones())
        if (z.get() == zc) zone = z.get();
    node = zone->find(h.wire);
    if (node == zones::kNone) return b.fail(hc.line, fmt::format("has no records in zone {}", zone->name()));
    const zones::Node& n = zone->node(node);
    // RFC 6672 §2.3: a DNAME redirects every name below its owner, so candidates there would never be
    // answered; at the owner itself the name would answer for the addresses and redirect below them.
    for (std::string_view up = h.wire; up.size() >= zone->apex().size();
         up = up.substr(size_t(uint8_t(up[0])) + 1)) {
        uint32_t a = zone->find(up);
        if (a != zones::kNone && (zone->node(a).flags & zones::kNodeDname))
            return b.fail(hc.line, fmt::format("is at or below the DNAME at {} (RFC 6672 §2.3) in {}",
                                               zones::nameToText(up), zone->file()));
        if (up.size() <= 1) break;
    }
    if (n.flags & (zones::kNodeOccluded | zones::kNodeDelegation))
        return b.fail(hc.line, "is at or below a zone cut: its addresses are not authoritative");
    if (zone->rrset(n, zones::kTypeCNAME))
        return b.fail(hc.line, "is a CNAME in its zone, not a name with A/AAAA records");
    if (n.dynamic >= 0) return b.fail(hc.line, "is configured twice");
    return true;
}

// Each A and AAAA record of the node matched to its [[service]] (by the rdata parsed at load), and every
// [[service]] to a record: h.family[0] (A) and [1] (AAAA), each service given its row of the per-hostname
// answer counters (`hostSlots`, the rows handed out so far).
bool matchServices(const HostBuild& b, const zones::Zone& zone, const zones::Node& n, const Gslb& out,
                   GslbHost& h, uint32_t& hostSlots) {
    const HostnameConf& hc = b.hc;
    const uint16_t types[2] = {zones::kTypeA, zones::kTypeAAAA};
    std::vector<bool> used(hc.services.size(), false);
    for (int f = 0; f < 2; ++f) {
        const zones::RRset* set = zone.rrset(n, types[f]);
        if (!set) continue;
        for (uint32_t i = set->first; i < set->first + set->count; ++i) {
            const zones::Rdata& rd = zone.rdata(i);
            const uint8_t* bytes = zone.bytes(rd);
            bool found = false;
            for (size_t k = 0; k < hc.services.size() && !found; ++k) {
                const ServiceConf& sc = hc.services[k];
                if (sc.rdlen != rd.len || std::memcmp(sc.rdata, bytes, rd.len) != 0) continue;
                GslbService s;
                std::memcpy(s.rdata, sc.rdata, sizeof s.rdata);
                s.rdlen = sc.rdlen;
                found = true;
                used[k] = true;
                s.slot = *out.table->findService(hc.services[k].site, hc.services[k].address);
                s.site = out.table->siteOf(s.slot);
                s.weight = hc.services[k].weight;
                if (hc.services[k].capacity > 0) s.capacity = hc.services[k].capacity;
                s.hashKey = metrics::serviceHashKey(s.rdata, s.rdlen);
                s.conf = &hc.services[k];
                s.hostSlot = hostSlots++;
                h.family[f].push_back(s);
            }
            if (!found)
                return b.fail(hc.line,
                              fmt::format("the zone's address {} (in {}, zone {}) has no [[service]]",
                                          addressText(bytes, rd.len), zone.file(), zone.name()));
        }
        if (h.family[f].size() > metrics::kMaxServices)
            return b.fail(hc.line,
                          fmt::format("more than {} services of one address family", metrics::kMaxServices));
    }
    for (size_t k = 0; k < hc.services.size(); ++k)
        if (!used[k])
            return b.fail(hc.services[k].line,
                          fmt::format("service address {} is not among the A/AAAA records of the name in {}",
                                      hc.services[k].address, zone.file()));
    if (h.family[0].empty() && h.family[1].empty())
        return b.fail(hc.line, "has no A or AAAA records in its zone");
    return true;
}

// The hostname's policy compiled with its parameters, and what the query path asks of it: the chooser's
// kind, the client stages it uses, the demand table's name key.
bool compilePolicy(const HostBuild& b, GslbHost& h) {
    const PolicyConf& p = b.hc.policy;
    metrics::Params params;
    params.sessionThreshold = p.sessionThreshold;
    params.sessionTolerance = p.sessionTolerance;
    params.sessionFloor = p.sessionFloor;
    params.flashbackTolerance = p.flashbackTolerance;
    params.flashbackFloorMs = p.flashbackFloor;
    params.factor = p.factor;
    params.answers = p.answers;
    params.nearestTolerance = p.nearestTolerance;
    params.rttTolerance = p.rttTolerance;
    params.rttFloorMs = p.rttFloor;
    params.ttl = p.ttl;
    params.ttlMin = p.effectiveTtlMin();
    std::string why;
    if (!metrics::Policy::compile(p.policy.empty() ? metrics::Policy::defaultStageNames() : p.policy, params,
                                  h.policy, why))
        return b.fail(b.hc.line, fmt::format("policy: {}", why));
    h.hashed = h.policy.chooser().kind == metrics::StageKind::Hashed;
    h.headroom = h.policy.chooser().kind == metrics::StageKind::Headroom;
    h.ttlMin = params.ttlMin;
    {
        // The demand table's key part: the name's lower-case wire form, hashed (the same after a reload).
        uint64_t k = 0xcbf29ce484222325ULL;  // FNV-1a
        for (char ch : h.wire) k = (k ^ uint8_t(std::tolower(uint8_t(ch)))) * 0x100000001b3ULL;
        h.nameKey = k;
    }
    h.hashBits[0] = uint8_t(p.hashPrefixV4);
    h.hashBits[1] = uint8_t(p.hashPrefixV6);
    for (const auto* st : h.policy.filters()) {
        h.usesTopology |= st->kind == metrics::StageKind::Topology;
        h.usesRtt |= st->kind == metrics::StageKind::Rtt;
    }
    h.rttMaxAgeMs = int64_t(p.rttMaxAge) * 1000;
    h.rttExplore = uint64_t(p.rttExplore / 100.0 * 4294967296.0);
    return true;
}

// The topology stage's mode for the hostname (nearest, a map of client keys to site lists, or regions),
// checked against what [topology] and the sites provide.
bool buildHostTopology(const HostBuild& b, const Topology& topo, const Gslb& out, GslbHost& h) {
    const PolicyConf& p = b.hc.policy;
    if (!topo.configured())
        return b.fail(b.hc.line, "the topology stage needs a [topology] table with nets, nets_file or geoip");
    std::vector<uint32_t> hostSites;
    for (const auto& fam : h.family)
        for (const auto& s : fam)
            if (std::find(hostSites.begin(), hostSites.end(), s.site) == hostSites.end())
                hostSites.push_back(s.site);
    int line = p.topologyLine ? p.topologyLine : b.hc.line;
    if (p.topologyMode == "nearest") {
        h.topology.mode = HostTopology::Mode::Nearest;
        if (!topo.hasGeoIp())
            return b.fail(line, "topology = \"nearest\" needs client locations: a [topology] geoip database");
        for (uint32_t s : hostSites)
            if (!out.siteGeo[s].hasLocation)
                return b.fail(line,
                              fmt::format("topology = \"nearest\": site {} has no location = [lat, lon]",
                                          out.sites[s]));
    } else if (p.topologyMode == "map") {
        h.topology.mode = HostTopology::Mode::Map;
        for (const auto& [key, siteNames] : p.topologyMap) {
            std::vector<uint32_t> list;
            for (const auto& sn : siteNames) {
                auto slot = out.table->findSite(sn);
                if (!slot) return b.fail(line, fmt::format("topology {}: unknown site \"{}\"", key, sn));
                list.push_back(*slot);
            }
            auto idx = uint16_t(h.topology.lists.size());
            h.topology.lists.push_back(std::move(list));
            h.topology.keyText.push_back(key);
            if (key == "default") {
                h.topology.defaultList = idx;
                continue;
            }
            std::vector<RegionLabel> labels;
            std::string why;
            if (!topo.parseKey(key, labels, why)) return b.fail(line, fmt::format("topology: {}", why));
            for (const auto& l : labels) h.topology.keys.push_back({l, idx});
        }
    } else {
        h.topology.mode = HostTopology::Mode::Region;
        bool any = false;
        for (uint32_t s : hostSites) any |= !out.siteGeo[s].region.empty();
        if (!any)
            return b.fail(line,
                          "the topology stage without a topology map needs a region on its sites "
                          "([site.NAME] region = …)");
    }
    return true;
}

// The answer's TTL, count and age bound, and the fallback (all, none, or an address parsed at load).
void answerSettings(const PolicyConf& p, GslbHost& h) {
    h.ttl = p.ttl;
    h.answers = p.answers;
    h.maxAgeMs = int64_t(p.maxAge) * 1000;
    if (p.fallback == "all") {
        h.fallback = Fallback::All;
    } else if (p.fallback == "none") {
        h.fallback = Fallback::None;
    } else {
        h.fallback = Fallback::Address;
        std::memcpy(h.fallbackRdata, p.fallbackRdata, sizeof p.fallbackRdata);
        h.fallbackLen = p.fallbackLen;
    }
}

// One [hostname."NAME"]: its node, services, policy, topology and answer settings; the node is marked
// dynamic (the query path asks the Selector) and the host appended to out.hosts.
bool buildHost(const Config& cfg, const HostnameConf& hc, zones::ZoneDb& db, Gslb& out, uint32_t& hostSlots,
               std::string& error) {
    const HostBuild b{cfg, hc, error};
    GslbHost h;
    h.name = hc.name;
    h.conf = &hc;
    zones::Zone* zone = nullptr;
    uint32_t node = zones::kNone;
    if (!findHostNode(b, db, h, zone, node)) return false;
    if (!matchServices(b, *zone, zone->node(node), out, h, hostSlots)) return false;
    if (!compilePolicy(b, h)) return false;
    if (h.usesTopology && !buildHostTopology(b, *out.topology, out, h)) return false;
    answerSettings(hc.policy, h);
    zone->mutableNode(node).dynamic = int32_t(out.hosts.size());
    out.hosts.push_back(std::move(h));
    return true;
}

// The learned RTT table, when a hostname's policy has the rtt stage: sized by [rtt], the previous one's
// figures carried by site name.
void buildRtt(const Config& cfg, const Gslb* previous, Gslb& out) {
    if (std::none_of(out.hosts.begin(), out.hosts.end(), [](const GslbHost& h) { return h.usesRtt; })) return;
    const RttConf& rc = cfg.rtt;
    out.rtt = std::make_shared<RttTable>(size_t(rc.prefixesMax), std::max<size_t>(out.sites.size(), 1),
                                         rc.prefixV4, rc.prefixV6);
    if (previous && previous->rtt) {
        std::vector<int> map(previous->sites.size(), -1);
        for (size_t i = 0; i < previous->sites.size(); ++i)
            if (auto slot = out.table->findSite(previous->sites[i])) map[i] = int(*slot);
        out.rtt->carryFrom(*previous->rtt, map);
    }
}

// headroom: the demand table and the flow ledger, when a hostname's chooser is headroom, with bucket widths
// per service slot from the longest TTL of the headroom hostnames using it; the previous ones carried.
void buildHeadroom(const Gslb* previous, size_t workers, Gslb& out) {
    std::vector<uint32_t> widths(out.table->serviceCount(), 0);
    size_t headroomHosts = 0;
    for (const auto& h : out.hosts) {
        if (!h.headroom) continue;
        ++headroomHosts;
        for (const auto& fam : h.family)
            for (const auto& s : fam)
                widths[s.slot] = std::max(widths[s.slot], metrics::FlowLedger::bucketWidthMs(h.ttl));
    }
    if (headroomHosts == 0) return;
    // 512 entries per headroom hostname and family, 64 K to 1 M: 1 to 16 MB.
    size_t entries = std::clamp<size_t>(headroomHosts * 2 * 512, size_t{1} << 16, size_t{1} << 20);
    if (previous && previous->demand && previous->demand->size() >= entries)
        out.demand = previous->demand;
    else
        out.demand = std::make_shared<metrics::DemandTable>(entries);
    out.flow = std::make_shared<metrics::FlowLedger>(workers, widths);
    if (previous && previous->flow && previous->table)
        for (uint32_t s = 0; s < previous->table->serviceCount(); ++s) {
            const auto& key = previous->table->serviceKey(s);
            if (auto slot = out.table->findService(key.site, key.address))
                out.flow->carry(*previous->flow, s, *slot);
        }
}

// The answer counters (per service, per (hostname, service), per hostname's fallbacks), the previous ones'
// counts carried by key.
void buildCounters(const Gslb* previous, size_t workers, uint32_t hostSlots, Gslb& out) {
    out.answers = std::make_shared<AnswerCounters>(workers, out.table->serviceCount());
    if (previous && previous->answers && previous->table)
        out.answers->carryFrom(*previous->answers, *previous->table, *out.table);
    out.hostAnswers = std::make_shared<AnswerCounters>(workers, hostSlots);
    out.fallbacks = std::make_shared<AnswerCounters>(workers, out.hosts.size());
    out.drainedFallbacks = std::make_shared<AnswerCounters>(workers, out.hosts.size());
    if (previous && previous->hostAnswers)
        out.hostAnswers->carryByKey(*previous->hostAnswers, hostAnswerKeys(*previous), hostAnswerKeys(out));
    if (previous && previous->fallbacks) {
        std::vector<std::string> oldNames, names;
        for (const auto& h : previous->hosts) oldNames.push_back(h.name);
        for (const auto& h : out.hosts) names.push_back(h.name);
        out.fallbacks->carryByKey(*previous->fallbacks, oldNames, names);
        if (previous->drainedFallbacks)
            out.drainedFallbacks->carryByKey(*previous->drainedFallbacks, oldNames, names);
    }
}

}  // namespace

bool buildGslb(const Config& cfg, zones::ZoneDb& db, const Gslb* previous, size_t workers, Gslb& out,
               std::string& error) {
    if (!buildTable(cfg, previous, out, error)) return false;
    if (!buildTopology(cfg, out, error)) return false;
    uint32_t hostSlots = 0;  // (hostname, service) rows of out.hostAnswers handed out so far
    for (const auto& hc : cfg.hostnames)
        if (!buildHost(cfg, hc, db, out, hostSlots, error)) return false;
    buildRtt(cfg, previous, out);
    buildHeadroom(previous, workers, out);
    buildCounters(previous, workers, hostSlots, out);
    return true;
}

ClientDecision applyClient(const Gslb& g, const GslbHost& h, const std::vector<GslbService>& svcs,
                           const zones::Client& client, const Location& loc, metrics::Candidate* c, size_t n,
                           int64_t nowMs, bool rttSkip) noexcept {
    ClientDecision d;
    if (h.usesTopology) {
        d.located = true;
        d.scope = loc.scope;
        const HostTopology& t = h.topology;
        if (t.mode == HostTopology::Mode::Nearest) {
            if (loc.hasCoordinates())
                for (size_t i = 0; i < n; ++i) {
                    const SiteGeo& sg = g.siteGeo[svcs[c[i].index].site];
                    if (sg.hasLocation)
                        c[i].distanceKm =
                            greatCircleKm(loc.latitude, loc.longitude, sg.latitude, sg.longitude);
                }
        } else if (t.mode == HostTopology::Mode::Map) {
            // The most specific of the client's labels that the map names decides; else `default`, also
            // for a client of unknown location (no nets prefix, no database entry, an ECS /0): an operator
            // who writes `default` means everyone else, as gdnsd's default datacenters serve any unmatched
            // client. An ECS /0 is a client's privacy opt-out (RFC 7871 §7.1.2) whose answer the resolver
            // caches for every client that opted out: the list for clients we cannot place is the right
            // one, at scope 0 (loc.scope), rather than any site at all.
            for (uint8_t l = 0; l < loc.count && d.list < 0; ++l)
                for (const auto& [key, idx] : t.keys)
                    if (key == loc.labels[l]) {
                        d.list = idx;
                        d.label = l;
                        break;
                    }
            if (d.list < 0) d.list = t.defaultList;
            if (d.list >= 0) {
                const auto& list = t.lists[size_t(d.list)];
                for (size_t i = 0; i < n; ++i) {
                    uint32_t site = svcs[c[i].index].site;
                    for (size_t k = 0; k < list.size() && k < metrics::kNoRank; ++k)
                        if (list[k] == site) {
                            c[i].topoRank = uint8_t(k);
                            break;
                        }
                }
            }
        } else {
            // Region: a site whose region is the client's most specific label ranks first.
            for (size_t i = 0; i < n; ++i) {
                const SiteGeo& sg = g.siteGeo[svcs[c[i].index].site];
                for (uint8_t l = 0; l < loc.count; ++l) {
                    bool match = false;
                    for (const auto& r : sg.region) match |= r == loc.labels[l];
                    if (match) {
                        c[i].topoRank = l;
                        if (d.label < 0 || l < d.label) d.label = l;
                        break;
                    }
                }
            }
        }
    }
    if (h.hashed) {
        const zones::ClientSubnet& s = client.subnet;
        unsigned bits = 0;
        if (s.family != 0)
            bits = std::min<unsigned>(s.bits, h.hashBits[s.family == zones::kFamilyIPv4 ? 0 : 1]);
        d.hashBits = uint8_t(bits);
        uint64_t key = metrics::clientPrefixKey(s.addr, s.family == zones::kFamilyIPv4 ? 4 : 16, bits);
        for (size_t i = 0; i < n; ++i) {
            const GslbService& sv = svcs[c[i].index];
            c[i].hashScore = metrics::rendezvousScore(key, sv.hashKey, sv.weight);
        }
        if (bits > d.scope) d.scope = uint8_t(bits);
    }
    if (h.usesRtt && g.rtt && !rttSkip) {
        // The answer now depends on the client's prefix at the table's length, learned or not (another prefix
        // of the same ECS source may be): that is its ECS scope. A shorter ECS prefix cannot be placed.
        if (const RttTable::Key key = g.rtt->key(client.subnet)) {
            d.rttKeyed = true;
            d.scope = std::max<uint8_t>(d.scope, uint8_t(g.rtt->bits(key.family)));
            uint32_t sites[metrics::kMaxServices];
            RttTable::Figure fig[metrics::kMaxServices];
            n = std::min(n, metrics::kMaxServices);
            for (size_t i = 0; i < n; ++i) sites[i] = svcs[c[i].index].site;
            if (g.rtt->lookup(key, {sites, n}, {fig, n}))
                for (size_t i = 0; i < n; ++i)
                    if (fig[i].atMs > 0 && nowMs - fig[i].atMs <= h.rttMaxAgeMs) {
                        c[i].rttMs = fig[i].rttMs;
                        ++d.rttKnown;
                    }
        }
    }
    return d;
}

uint64_t resolverDemandKey(const GslbHost& h, int f, const zones::Client& client, uint8_t scope) noexcept {
    const zones::ClientSubnet& r = client.fromEcs && scope > 0 ? client.subnet : client.resolver;
    const unsigned bits = client.fromEcs && scope > 0 ? std::min<unsigned>(r.bits, scope) : r.bits;
    const uint64_t rk = metrics::clientPrefixKey(r.addr, r.family == zones::kFamilyIPv4 ? 4 : 16, bits) ^
                        (uint64_t(r.family) << 56);
    return metrics::DemandTable::key(rk, h.nameKey, f);
}

HeadroomQuery fillHeadroom(const Gslb& g, const GslbHost& h, int f, const zones::Client& client,
                           uint8_t scope, metrics::Candidate* c, size_t n, int64_t nowMs, bool learn,
                           metrics::FlowView* view) noexcept {
    HeadroomQuery q;
    if (!g.demand || !g.flow) return q;
    q.key = resolverDemandKey(h, f, client, scope);
    q.demand = learn ? g.demand->observe(q.key, h.nameKey, nowMs) : g.demand->peek(q.key, h.nameKey);
    const auto& svcs = h.family[f];
    for (size_t i = 0; i < n; ++i) {
        c[i].demand = q.demand.demand;
        const uint32_t slot = svcs[c[i].index].slot;
        const metrics::FlowReading r = view ? view->read(slot, nowMs) : g.flow->read(slot, nowMs);
        c[i].flow = r.rate;
        c[i].pending = r.pending;
    }
    return q;
}

metrics::TtlDecision headroomTtl(const GslbHost& h, const metrics::Candidate* c, size_t n,
                                 const uint16_t* picked, size_t count) noexcept {
    metrics::TtlDecision best{h.ttl, metrics::TtlReason::Calm};
    bool first = true;
    for (size_t k = 0; k < count; ++k)
        for (size_t i = 0; i < n; ++i)
            if (c[i].index == picked[k]) {
                // select() compacts in place: copies of one candidate are equal, so the first will do.
                const metrics::TtlDecision d = metrics::adaptiveTtl(c[i], h.ttlMin, h.ttl);
                if (first || d.ttl < best.ttl) best = d;
                first = false;
                break;
            }
    return best;
}

bool nothingUndrained(const metrics::StateTable& t, const std::vector<GslbService>& svcs) noexcept {
    for (const auto& s : svcs)
        if (!drainedOut(t, s.slot, s.site)) return false;
    return !svcs.empty();
}

std::string drainedOutAnswer(const GslbHost& h, int family) {
    if (h.fallback == Fallback::Address && h.fallbackLen == (family == 0 ? 4 : 16))
        return "fallback " + addressText(h.fallbackRdata, h.fallbackLen);
    return "NODATA";
}

const Location& Selector::locate(const zones::ClientSubnet& client) noexcept {
    const Topology& t = *gslb_->topology;
    if (cache_.empty()) {
        t.locate(client, scratch_);
        return scratch_;
    }
    uint64_t h = metrics::clientPrefixKey(client.addr, client.octets(), client.bits) ^ client.family;
    CacheEntry& e = cache_[h & (cache_.size() - 1)];
    if (!e.valid || e.key.family != client.family || e.key.bits != client.bits ||
        std::memcmp(e.key.addr, client.addr, 16) != 0) {
        t.locate(client, e.loc);
        e.key = client;
        e.valid = true;
    }
    return e.loc;
}

namespace {

// The same services in the same order: (site name, address) pair by pair. Exact, and needs no signature
// string kept per hostname.
bool sameServices(const Gslb& oldG, const std::vector<GslbService>& oldS, const Gslb& newG,
                  const std::vector<GslbService>& newS) {
    if (oldS.size() != newS.size()) return false;
    for (size_t i = 0; i < oldS.size(); ++i)
        if (oldS[i].rdlen != newS[i].rdlen || std::memcmp(oldS[i].rdata, newS[i].rdata, oldS[i].rdlen) != 0 ||
            oldG.sites[oldS[i].site] != newG.sites[newS[i].site])
            return false;
    return true;
}

}  // namespace

void Selector::rebind(const Gslb* g) {
    std::vector<std::unique_ptr<metrics::ChooserState>> states;
    if (g && mode_ == Mode::Worker) {
        // The previous snapshot's hostnames by name: one hash map, so a reload is linear in hostnames (a
        // scan per hostname stalled a worker's answers for 0.7 s at 10,000 hostnames).
        std::unordered_map<std::string_view, size_t> before;
        if (gslb_) {
            before.reserve(gslb_->hosts.size());
            for (size_t i = 0; i < gslb_->hosts.size(); ++i) before.emplace(gslb_->hosts[i].name, i);
        }
        states.resize(g->hosts.size() * 2);
        for (size_t hi = 0; hi < g->hosts.size(); ++hi) {
            const GslbHost& h = g->hosts[hi];
            uint8_t needs = h.policy.chooser().state;
            if (needs == metrics::kNeedsNothing) continue;
            auto it = before.find(h.name);
            for (int f = 0; f < 2; ++f) {
                if (h.family[f].empty()) continue;
                auto& slot = states[hi * 2 + size_t(f)];
                if (it != before.end()) {
                    auto& old = states_[it->second * 2 + size_t(f)];
                    // Same services and the same kind of state: round robin etc. go on where they were.
                    if (old && old->needs() == needs &&
                        sameServices(*gslb_, gslb_->hosts[it->second].family[f], *g, h.family[f])) {
                        slot = std::move(old);
                        continue;
                    }
                }
                slot = std::make_unique<metrics::ChooserState>(h.family[f].size(), needs);
            }
        }
    }
    if (mode_ == Mode::Explain && !fresh_)
        fresh_ = std::make_unique<metrics::ChooserState>(metrics::kMaxServices, metrics::kNeedsAll);
    cache_.clear();
    if (g && g->topology && g->topology->hasGeoIp()) cache_.assign(4096, CacheEntry{});
    states_ = std::move(states);
    flowView_.bind(g && mode_ == Mode::Worker ? g->flow.get() : nullptr);
    gslb_ = g;
}

void Selector::select(int32_t dynamic, uint16_t qtype, const zones::Zone&, const zones::RRset*,
                      const zones::Client& client, zones::DynAnswer& out) noexcept {
    const GslbHost& h = gslb_->hosts[size_t(dynamic)];
    int f = qtype == zones::kTypeA ? 0 : 1;
    const auto& svcs = h.family[f];
    out.ttl = h.ttl;
    out.count = 0;
    if (svcs.empty()) return;  // no address of this family: NODATA, never the other type
    // Only the candidates this hostname has are constructed: a plain array would first default-construct all
    // 64 (NaN stores included) on every query.
    union Buf {
        Buf() {}
        metrics::Candidate c[metrics::kMaxServices];
    } buf;
    static_assert(std::is_trivially_destructible_v<metrics::Candidate>);
    metrics::Candidate* c = buf.c;
    int64_t now = monotonicMs();
    for (size_t i = 0; i < svcs.size(); ++i) {
        new (&c[i]) metrics::Candidate(metrics::fillCandidate(*gslb_->table, svcs[i].slot, svcs[i].site,
                                                              svcs[i].weight, now, h.maxAgeMs));
        c[i].index = uint16_t(i);
        c[i].capacity = svcs[i].capacity;
    }
    if (h.usesTopology || h.hashed || h.usesRtt) {
        static const Location kNowhere;
        const Location& loc = h.usesTopology ? locate(client.subnet) : kNowhere;
        // rtt_explore: this share of answers skips the rtt stage, so that a site gets clients (and the
        // agents figures) from prefixes it would otherwise never see (Brocade ADX explores the same way).
        const bool explore = h.usesRtt && mode_ == Mode::Worker && (rng_.next() >> 32) < h.rttExplore;
        out.scope = applyClient(*gslb_, h, svcs, client, loc, c, svcs.size(), now, explore).scope;
    }
    const bool learn = mode_ == Mode::Worker;
    HeadroomQuery hq;
    if (h.headroom)
        hq = fillHeadroom(*gslb_, h, f, client, out.scope, c, svcs.size(), now, learn,
                          learn ? &flowView_ : nullptr);
    uint16_t picked[metrics::kMaxServices];
    metrics::ChooserState* st = &none_;
    if (mode_ == Mode::Explain) {
        st = fresh_.get();
        st->reset(svcs.size());  // within its capacity: no allocation
    } else if (auto& kept = states_[size_t(dynamic) * 2 + size_t(f)]) {
        st = kept.get();
    }
    const bool count = mode_ == Mode::Worker;
    auto r = metrics::select(h.policy, {c, svcs.size()}, *st, rng_, {picked, h.answers});
    if (r.status == metrics::SelectStatus::Ok && r.count > 0) {
        for (size_t k = 0; k < r.count; ++k) {
            const GslbService& s = svcs[picked[k]];
            out.recs[k] = {s.rdata, s.rdlen};
            if (count) {
                gslb_->answers->add(worker_, s.slot);
                gslb_->hostAnswers->add(worker_, s.hostSlot);
            }
        }
        out.count = uint16_t(r.count);
        if (h.headroom && gslb_->demand) {
            // The TTL for this resolver and site (metrics/balance.hpp), then what this answer commits: its
            // demand, shared by its records, until the TTL given runs out.
            out.ttl = headroomTtl(h, c, svcs.size(), picked, r.count).ttl;
            if (learn) {
                gslb_->demand->answered(hq.key, now, out.ttl);
                const double share = hq.demand.demand / double(r.count);
                const int64_t expiry = now + int64_t(out.ttl) * 1000;
                for (size_t k = 0; k < r.count; ++k) {
                    gslb_->flow->add(worker_, svcs[picked[k]].slot, share, expiry);
                    flowView_.added(svcs[picked[k]].slot, share, out.ttl);
                }
            }
        }
        return;
    }
    // Nothing healthy (or every site taken out): the hostname's fallback decides (doc/design.md "All down").
    // A drain holds through it: `all` gives every candidate not drainedOut, and when every one is, the answer
    // is NODATA (or the fixed address). A cold path: the table is read again, once per service.
    uint16_t keep[metrics::kMaxServices];
    size_t kept = 0;
    for (size_t i = 0; i < svcs.size(); ++i)
        if (!drainedOut(*gslb_->table, svcs[i].slot, svcs[i].site)) keep[kept++] = uint16_t(i);
    if (count) (kept ? gslb_->fallbacks : gslb_->drainedFallbacks)->add(worker_, uint32_t(dynamic));
    // The answer says so (RFC 8914 §4.1 "Other", with EXTRA-TEXT): no other INFO-CODE fits an authoritative
    // answer chosen by an operator's all-down policy ("Stale Answer", §4.4, is a resolver's cached data;
    // "Forged Answer", §4.5, reads as a blocked name). A resolver or `dig` user sees why the addresses are
    // the fallback's.
    const bool all =
        h.fallback == Fallback::All || (h.fallback == Fallback::Address && h.fallbackLen != svcs[0].rdlen);
    out.ede = {zones::Ede::kOther, {edeText_, fallbackText(h, kept == 0, all)}};
    if (h.fallback == Fallback::None) return;
    if (!all) {
        out.recs[0] = {h.fallbackRdata, h.fallbackLen};
        out.count = 1;
        return;
    }
    for (size_t k = 0; k < kept && k < zones::kMaxDynRecords; ++k) {
        const GslbService& s = svcs[keep[k]];
        out.recs[k] = {s.rdata, s.rdlen};
        if (count) {
            gslb_->answers->add(worker_, s.slot);
            gslb_->hostAnswers->add(worker_, s.hostSlot);
        }
        out.count = uint16_t(k + 1);
    }
}

size_t Selector::fallbackText(const GslbHost& h, bool drained, bool all) noexcept {
    // "all services of www.gslb.example.com. are down: fallback all" — composed here, on the cold path, with
    // no allocation (inet_ntop into the buffer for the fixed address).
    size_t n = 0;
    auto put = [&](std::string_view s) {
        size_t k = std::min(s.size(), sizeof edeText_ - n);
        std::memcpy(edeText_ + n, s.data(), k);
        n += k;
    };
    put("all services of ");
    put(std::string_view(h.name).substr(0, 255));
    put(drained ? " are drained: fallback " : " are down: fallback ");
    if (all) {
        put("all");
    } else if (h.fallback == Fallback::None) {
        put("none");
    } else {
        char a[INET6_ADDRSTRLEN] = "";
        inet_ntop(h.fallbackLen == 4 ? AF_INET : AF_INET6, h.fallbackRdata, a, sizeof a);
        put(a);
    }
    return n;
}

}  // namespace gslb::server
