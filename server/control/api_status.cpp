// GET /v1/status: every zone, site and service with its state, metrics and their age, check state, FlashBack
// times and answer counts; every GSLB hostname with its policy. Unknown numbers are null.
#include <nlohmann/json.hpp>

#include <cmath>
#include <map>

#include "server/base/clock.hpp"
#include "server/control/api.hpp"
#include "server/control/json_values.hpp"

#include <ctime>
#include "zones/dnssec.hpp"
#include "server/state/gslb.hpp"
#include "server/responder/shared.hpp"
#include "server/net/xdp/path.hpp"

namespace gslb::server {

namespace {

const char* healthName(metrics::Health h) {
    return h == metrics::Health::Up ? "up" : h == metrics::Health::Down ? "down" : "unknown";
}

using nlohmann::json;

// "zones": each zone's serial and size; a signed one's DNSSEC state (doc/dnssec.md): the validity window of
// this snapshot's signatures, its keys, and how many signatures the query path has made (GSLB answers): it
// stops growing once every set is cached.
json zonesJson(const Snapshot& s) {
    json out = json::array();
    for (const auto& z : s.db.zones()) {
        json zj = {{"name", z->name()}, {"serial", z->serial()}, {"records", z->recordCount()}};
        if (const zones::ZoneSigner* sg = z->signer()) {
            json keys = json::array();
            for (const auto& k : sg->keys())
                keys.push_back({{"tag", k.tag}, {"algorithm", k.algorithm}, {"flags", k.flags}});
            zj["dnssec"] = {{"inception", sg->inception()},
                            {"expiration", sg->expiration()},
                            {"resign_at", sg->refreshAt()},
                            // the next Publish/Activate/Inactive/Delete of a key: gslbd rebuilds then
                            {"key_event_at", sg->keyEventAt() ? json(sg->keyEventAt()) : json(nullptr)},
                            {"keys", keys},
                            {"online_signatures", sg->onlineSigned()},
                            {"cache_slots", sg->cacheSlots()}};
        }
        out.push_back(zj);
    }
    return out;
}

// The strictest max_age of the hostnames that read a site's (a service's) metrics: a report older than that
// counts as unknown for at least one of them, so gslbctl status calls it stale.
struct MaxAges {
    std::map<uint32_t, int64_t> site, service;

    explicit MaxAges(const Gslb& g) {
        for (const auto& h : g.hosts)
            for (int f = 0; f < 2; ++f)
                for (const auto& sv : h.family[f]) {
                    put(site, sv.site, h.maxAgeMs);
                    put(service, sv.slot, h.maxAgeMs);
                }
    }
    static void put(std::map<uint32_t, int64_t>& m, uint32_t k, int64_t ms) {
        auto it = m.find(k);
        if (it == m.end() || ms < it->second) m[k] = ms;
    }
    static json seconds(const std::map<uint32_t, int64_t>& m, uint32_t k) {
        auto it = m.find(k);
        return it == m.end() ? json(nullptr) : json(double(it->second) / 1000.0);
    }
};

json sitesJson(const metrics::StateTable& t, const MaxAges& maxAges, int64_t now) {
    json out = json::array();
    for (uint32_t i = 0; i < t.siteCount(); ++i) {
        auto v = t.siteView(i);
        out.push_back({{"name", t.siteName(i)},
                       {"max_age_s", MaxAges::seconds(maxAges.site, i)},
                       {"enabled", v.enabled},
                       {"up", v.up},
                       {"preference", v.preference},
                       {"cpu", jsonNumber(v.cpu)},
                       {"sessions_used", jsonNumber(v.sessionsUsed)},
                       {"sessions_max", jsonNumber(v.sessionsMax)},
                       {"load_factor", jsonNumber(v.loadFactor)},
                       {"report_age_s", jsonAge(v.reportAtMs, now)},
                       // Each key ages on its own (a partial report or a scrape updates only its keys).
                       {"ages_s",
                        {{"cpu", jsonAge(v.cpuAtMs, now)},
                         {"sessions", jsonAge(v.sessionsAtMs, now)},
                         {"load_factor", jsonAge(v.loadFactorAtMs, now)}}}});
    }
    return out;
}

// "hostnames": each GSLB hostname with its policy, fallback counts and services; `hostsOf` gets, per service
// slot, the hostnames that answer with it.
json hostnamesJson(const Snapshot& s, std::map<uint32_t, std::vector<std::string>>& hostsOf) {
    const metrics::StateTable& t = *s.gslb.table;
    json out = json::array();
    for (uint32_t hi = 0; hi < s.gslb.hosts.size(); ++hi) {
        const auto& h = s.gslb.hosts[hi];
        json svcs = json::array();
        json emptied = json::array();
        for (int f = 0; f < 2; ++f)
            if (nothingUndrained(t, h.family[f])) emptied.push_back(f == 0 ? "A" : "AAAA");
        const uint64_t fallbacks = s.gslb.fallbacks ? s.gslb.fallbacks->total(hi) : 0;
        const uint64_t drainedFallbacks = s.gslb.drainedFallbacks ? s.gslb.drainedFallbacks->total(hi) : 0;
        for (int f = 0; f < 2; ++f)
            for (const auto& sv : h.family[f]) {
                hostsOf[sv.slot].push_back(h.name);
                svcs.push_back(
                    {{"site", t.siteName(sv.site)}, {"address", sv.address()}, {"weight", sv.weight}});
            }
        std::vector<std::string> stages;
        for (const auto* st : h.policy.filters()) stages.emplace_back(st->name);
        stages.emplace_back(h.policy.chooser().name);
        std::string fb = h.conf ? h.conf->policy.fallback : "all";
        out.push_back({{"name", h.name},
                       {"policy", stages},
                       {"ttl", h.ttl},
                       {"answers", h.answers},
                       {"fallback", fb},
                       // Queries this hostname answered by its all-down fallback since start (also
                       // gslbd_hostname_fallbacks_total in /metrics).
                       {"fallbacks_taken", fallbacks + drainedFallbacks},
                       // Of them, those that found every candidate drained (nothing to give).
                       {"fallbacks_drained", drainedFallbacks},
                       // The types whose every candidate is drained now: they answer NODATA (or the fixed
                       // address) whatever health says.
                       {"nothing_undrained", emptied},
                       {"max_age_s", double(h.maxAgeMs) / 1000.0},
                       {"services", svcs}});
    }
    return out;
}

// A service's "check": null when it has none.
json checkJson(const CheckStatus& cs) {
    if (!cs.checked) return nullptr;
    json check = {{"name", cs.check},
                  {"type", cs.type},
                  {"target", cs.target},
                  {"state", cs.state},
                  {"last_error", cs.lastError},
                  {"last_change_unix_ms", cs.lastChangeUnixMs},
                  {"last_change_reason", cs.lastChangeReason},
                  {"flaps", cs.flaps},
                  {"successes", cs.successes},
                  {"failures", cs.failures},
                  {"last_latency_ms", cs.lastLatencyMs < 0 ? json(nullptr) : json(cs.lastLatencyMs)},
                  {"l4_ms", cs.l4Ms < 0 ? json(nullptr) : json(cs.l4Ms)},
                  {"l7_ms", cs.l7Ms < 0 ? json(nullptr) : json(cs.l7Ms)}};
    // The health quorum (doc/ns-set.md): what this member's checks alone say, beside the health the selector
    // uses; with health_quorum, the votes behind it.
    check["own_state"] = cs.ownState;
    if (cs.quorum)
        check["quorum"] = {{"voters", cs.votes.voters},
                           {"down_votes", cs.votes.downVotes},
                           {"own_view", cs.votes.ownView},
                           {"max_age_ms", cs.quorumMaxAgeMs}};
    // Probe ownership (doc/ns-set.md "Shared state in etcd"): whether this member probes the service or uses
    // the verdicts of the members that hold its owner keys; null when every member probes it itself.
    check["probe"] = cs.ownership ? json{{"here", cs.probedHere}, {"owners", cs.owners}} : json(nullptr);
    if (cs.certNotAfterUnix) {
        // https: when the certificate expires, and in how long (negative: expired), for an alert.
        check["cert_not_after"] = isoTime(cs.certNotAfterUnix * 1000);
        check["cert_expires_in_s"] = cs.certNotAfterUnix - int64_t(std::time(nullptr));
    }
    return check;
}

// Metric sources (doc/design.md "Metric sources"): one object per [source.NAME]; times as ages and wall-clock
// ms, null when never.
json sourcesJson(const std::vector<SourceStatus>& sources, int64_t now) {
    json out = json::array();
    for (const auto& src : sources)
        out.push_back(
            {{"name", src.name},
             {"type", src.type},
             {"url", src.url},
             {"preset", src.preset.empty() ? json(nullptr) : json(src.preset)},
             {"state", src.state},
             {"last_success_unix_ms", src.lastSuccessUnixMs ? json(src.lastSuccessUnixMs) : json(nullptr)},
             {"last_success_age_s",
              src.lastSuccessMonoMs ? json(double(now - src.lastSuccessMonoMs) / 1000.0) : json(nullptr)},
             {"last_error", src.lastError.empty() ? json(nullptr) : json(src.lastError)},
             {"last_error_unix_ms", src.lastErrorUnixMs ? json(src.lastErrorUnixMs) : json(nullptr)},
             {"duration_ms", src.durationMs < 0 ? json(nullptr) : json(src.durationMs)},
             {"series", src.series},
             {"series_matched", src.matched},
             {"values", src.values},
             {"scrapes", src.scrapes},
             {"failures", src.failures},
             {"feeds", src.feeds}});
    return out;
}

// [cluster] health_quorum (doc/ns-set.md): null when not set. The verdicts come from etcd (health_quorum
// needs it): its lease TTL bounds each one's life.
json quorumJson(const QuorumStatus& q) {
    if (q.quorum <= 0) return nullptr;
    return {{"quorum", q.quorum},
            {"members", q.members},
            {"own_view", q.ownView},
            {"own_view_services", q.ownViewServices},
            {"own_view_since", q.sinceUnixMs ? json(isoTime(q.sinceUnixMs)) : json(nullptr)},
            {"source", "etcd"},
            {"voting_members", q.votingMembers},
            {"verdict_ttl_s", q.verdictTtlSec}};
}

// [server] xdp (doc/xdp.md): each interface, serving, fallen back to the sockets at start with the reason
// logged then, or not serving since (gone, down, program detached: Path::recheck); the warning when no listen
// address is one of its addresses. Empty without `xdp`.
json xdpJson(const xdp::Path* xp) {
    json out = json::array();
    if (!xp) return out;
    for (const auto& x : xp->status()) {
        json drops = nullptr;
        if (x.sockets > 0)
            drops = {{"dropped", x.drops.dropped},
                     {"ring_full", x.drops.ringFull},
                     {"fill_empty", x.drops.fillEmpty},
                     {"invalid", x.drops.invalid},
                     {"tx_full", x.drops.txFull}};
        out.push_back({{"name", x.name},
                       {"state", x.state()},
                       {"reason", x.serving ? json(nullptr) : json(x.reason)},
                       {"warning", x.warning.empty() ? json(nullptr) : json(x.warning)},
                       {"sockets", x.sockets},
                       {"mode", x.sockets > 0 ? json(x.zeroCopy ? "zero-copy" : "copy") : json(nullptr)},
                       {"queries", x.queries},
                       {"responses", x.responses},
                       {"dropped", drops}});
    }
    return out;
}

// [cluster]: the members, and `etcd` (ControlApi::etcdJson).
json clusterJson(const ClusterConf& c, json etcd) {
    json members = json::array();
    for (const auto& m : c.members) members.push_back(m.url);
    return {{"members", members},
            {"self", c.selfIndex >= 0 ? json(c.members[size_t(c.selfIndex)].url) : json(nullptr)},
            {"health_quorum", c.healthQuorum ? json(c.healthQuorum) : json(nullptr)},
            {"etcd", std::move(etcd)}};
}

// The learned round-trip times (gslbd-agent(8)): the table's fill and each site's agent.
json rttJson(const RttTable& rt, const std::map<std::string, ControlApi::RttSiteStats>& stats, int64_t now) {
    json sites = json::object();
    for (const auto& [site, st] : stats)
        sites[site] = {
            {"reports", st.taken},
            {"refused", st.refused},
            {"last_report_age_s", st.lastMs ? json(double(now - st.lastMs) / 1000.0) : json(nullptr)},
            {"last_prefixes", st.lastPrefixes},
            {"last_error", st.lastError.empty() ? json(nullptr) : json(st.lastError)}};
    return {{"prefixes", rt.used()},
            {"prefixes_max", rt.capacity()},
            {"memory_bytes", rt.memoryBytes()},
            {"evictions", rt.evictions()},
            {"prefix_v4", rt.v4Bits()},
            {"prefix_v6", rt.v6Bits()},
            {"sites", sites}};
}

}  // namespace

// Each part of the document is made by its function above, in the order a reader of the JSON meets them.
ApiResponse ControlApi::status(const Snapshot& s) {
    const metrics::StateTable& t = *s.gslb.table;
    const int64_t now = monotonicMs();
    const MaxAges maxAges(s.gslb);
    json j;
    j["zones"] = zonesJson(s);
    j["sites"] = sitesJson(t, maxAges, now);
    std::map<uint32_t, std::vector<std::string>> hostsOf;
    j["hostnames"] = hostnamesJson(s, hostsOf);
    j["services"] = json::array();
    for (uint32_t i = 0; i < t.serviceCount(); ++i) {
        auto v = t.serviceView(i);
        const auto& key = t.serviceKey(i);
        CheckStatus cs = checkStatus_ ? checkStatus_(i) : CheckStatus{};
        j["services"].push_back(
            {{"site", key.site},
             {"address", key.address},
             {"hostnames", hostsOf[i]},
             {"enabled", v.enabled},
             // A service without a check counts as up (doc/design.md); say so rather than "unknown".
             {"health", !cs.checked && v.health == metrics::Health::Unknown ? "up" : healthName(v.health)},
             {"connections", jsonNumber(v.connections)},
             {"connections_age_s", jsonAge(v.connectionsAtMs, now)},
             {"max_age_s", MaxAges::seconds(maxAges.service, i)},
             {"flashback", {{"l4_ms", jsonNumber(v.l4Ms)}, {"l7_ms", jsonNumber(v.l7Ms)}}},
             {"answers", s.gslb.answers->total(i)},
             {"check", checkJson(cs)}});
    }
    j["sources"] = sourcesJson(sourceStatus_ ? sourceStatus_() : std::vector<SourceStatus>{}, now);
    j["health_quorum"] = quorumStatus_ ? quorumJson(quorumStatus_()) : json(nullptr);
    j["xdp"] = xdpJson(shared_.xdpPath.load());
    auto reloads = [&](int trig) {
        return json{{"ok", shared_.reloads[trig][0].load(std::memory_order_relaxed)},
                    {"failed", shared_.reloads[trig][1].load(std::memory_order_relaxed)}};
    };
    j["reloads"] = {{"sighup", reloads(kReloadSighup)}, {"api", reloads(kReloadApi)}};
    // What `gslbctl status` compares across [cluster] members (doc/ns-set.md).
    j["config_digest"] = s.configDigest.empty() ? json(nullptr) : json(s.configDigest);
    if (s.config.cluster.enabled) j["cluster"] = clusterJson(s.config.cluster, etcdJson());
    if (s.gslb.rtt) j["rtt"] = rttJson(*s.gslb.rtt, rttStats_, now);
    return ApiResponse{200, jsonText(j, 2) + "\n"};
}

nlohmann::json ControlApi::etcdJson() const {
    using nlohmann::json;
    // [cluster] etcd (cluster/etcd_sync.hpp): null without it.
    if (!etcdOn()) return nullptr;
    const cluster::EtcdStatus e = etcd_->status();
    // Every member's entry (PREFIX member/URL, under its lease: a member that is gone has none), so
    // `gslbctl status` compares the NS set from this one answer (tools/gslbctl/cluster_status.hpp).
    json members = json::array();
    for (const auto& [key, item] : etcd_->cache())
        if (const auto* m = std::get_if<cluster::SharedMember>(&item))
            members.push_back({{"member", m->member},
                               {"config_digest", m->configDigest},
                               {"etcd", m->etcdState},
                               {"serials", m->serials},
                               {"drained", m->drained},
                               {"health", m->health}});
    return json{{"state", e.state},
                {"endpoint", e.endpoint},
                {"prefix", e.prefix},
                {"revision", e.revision},
                {"since", e.sinceUnixMs ? json(isoTime(e.sinceUnixMs)) : json(nullptr)},
                {"last_error", e.lastError.empty() ? json(nullptr) : json(e.lastError)},
                {"lease_ttl_s", e.ttlSec},
                {"applied", e.applied},
                {"refused", e.refused},
                {"written", e.written},
                {"queued", e.queued},
                {"cuts", e.cuts},
                {"members", members}};
}

}  // namespace gslb::server
