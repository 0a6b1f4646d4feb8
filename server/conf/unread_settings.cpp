#include "server/conf/unread_settings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

#include "metrics/policy.hpp"

namespace gslb::server {

namespace {

const std::vector<std::string>& effective(const std::vector<std::string>& stages) {
    return stages.empty() ? metrics::Policy::defaultStageNames() : stages;
}

// Which stages read a policy key, and the bit standing for them.
struct KeyReader {
    const char* key;
    unsigned bit;
    const char* stages;
};
constexpr KeyReader kKeyReaders[] = {
    {"session_threshold", kReadsSessions, "\"session-threshold\""},
    {"session_tolerance", kReadsSessions, "\"session-capacity\""},
    {"session_floor", kReadsSessions, "\"session-capacity\""},
    {"ttl_min", 0, "\"headroom\""},
    {"flashback_tolerance", kReadsFlashback, "\"flashback\""},
    {"flashback_floor", kReadsFlashback, "\"flashback\""},
    {"factor", kReadsFactor, "\"least-connections\" or \"cpu\""},
    {"topology", 0, "\"topology\""},
    {"nearest_tolerance", 0, "\"topology\""},
    {"hash_prefix_v4", 0, "\"hashed\""},
    {"hash_prefix_v6", 0, "\"hashed\""},
    {"rtt_tolerance", 0, "\"rtt\""},
    {"rtt_floor", 0, "\"rtt\""},
    {"rtt_max_age", 0, "\"rtt\""},
    {"rtt_explore", 0, "\"rtt\""},
};

bool readsKey(const std::vector<std::string>& stages, const std::string& key) {
    // session_threshold and session_tolerance have one stage each, not the shared sessions bit.
    const auto& st = effective(stages);
    auto has = [&](const char* s) { return std::find(st.begin(), st.end(), s) != st.end(); };
    if (key == "session_threshold") return has("session-threshold");
    if (key == "session_tolerance" || key == "session_floor") return has("session-capacity");
    if (key == "ttl_min") return has("headroom");
    if (key == "flashback_tolerance" || key == "flashback_floor") return has("flashback");
    if (key == "factor") return has("least-connections") || has("cpu");
    if (key == "topology" || key == "nearest_tolerance") return has("topology");
    if (key == "hash_prefix_v4" || key == "hash_prefix_v6") return has("hashed");
    if (key.rfind("rtt_", 0) == 0) return has("rtt");
    return true;
}

bool readsWeight(const std::string& stage) {
    return stage == "weighted-random" || stage == "weighted-round-robin" || stage == "hashed" ||
           stage == "headroom";
}

}  // namespace

unsigned metricsReadBy(const std::vector<std::string>& stages) {
    unsigned bits = 0;
    for (const auto& s : effective(stages)) {
        if (s == "cpu") bits |= kReadsCpu | kReadsFactor;
        if (s == "session-threshold" || s == "session-capacity") bits |= kReadsSessions;
        if (s == "load-factor") bits |= kReadsLoads;
        if (s == "least-connections") bits |= kReadsConnections | kReadsFactor;
        // headroom's utilisation: the site's sessions_used / sessions_max, else connections / capacity.
        if (s == "headroom") bits |= kReadsSessions | kReadsConnections;
        if (s == "preference") bits |= kReadsPreference;
        if (s == "flashback") bits |= kReadsFlashback;
    }
    return bits;
}

unsigned metricsReadAtSite(const Config& cfg, const std::string& site) {
    unsigned bits = 0;
    for (const auto& h : cfg.hostnames)
        for (const auto& s : h.services)
            if (s.site == site) {
                bits |= metricsReadBy(h.policy.policy);
                break;
            }
    return bits;
}

namespace {

// "file:line" of a table of the config, or the file alone for line 0.
std::string at(const Config& cfg, int line) {
    return line > 0 ? fmt::format("{}:{}", cfg.path, line) : cfg.path;
}

// The stages that read policy key `key`, as the messages name them; "" for a key not in kKeyReaders.
const char* stagesReading(const std::string& key) {
    const char* stages = "";
    for (const auto& kr : kKeyReaders)
        if (key == kr.key) stages = kr.stages;
    return stages;
}

// Policy keys set in [defaults] that no hostname's policy reads, and set on a hostname whose own policy does
// not.
void unreadPolicyKeys(const Config& cfg, std::vector<UnreadSetting>& out) {
    for (const auto& k : cfg.defaults.written) {
        bool read = false;
        for (const auto& h : cfg.hostnames) read |= readsKey(h.policy.policy, k);
        if (!read && !cfg.hostnames.empty())
            out.push_back(
                {at(cfg, 0), fmt::format("[defaults] {} is not read: no hostname's policy has the {} stage",
                                         k, stagesReading(k))});
    }
    for (const auto& h : cfg.hostnames)
        for (const auto& k : h.policy.written)
            if (!readsKey(h.policy.policy, k))
                out.push_back({at(cfg, h.line),
                               fmt::format("hostname \"{}\": {} is not read: its policy has no {} stage",
                                           h.name, k, stagesReading(k))});
}

// A service's weight is read by the weighted choosers alone (metrics/stage_registry.cpp; headroom when no
// candidate's capacity is known, metrics/balance.hpp): under any other chooser it changes nothing. The
// bundled example once set weight = 3 on one of three sites under `random` and got a third of the answers
// there (67/69/64 of 200), with no word from the checks.
void unreadWeights(const Config& cfg, std::vector<UnreadSetting>& out) {
    for (const auto& h : cfg.hostnames) {
        const auto& st = effective(h.policy.policy);
        if (std::any_of(st.begin(), st.end(), [](const std::string& s) { return readsWeight(s); })) continue;
        for (const auto& s : h.services)
            if (s.weight != 1)
                out.push_back(
                    {at(cfg, s.line), fmt::format("hostname \"{}\": service {} weight = {} is not read: its "
                                                  "policy's chooser \"{}\" does not weigh services "
                                                  "(\"weighted-random\", \"weighted-round-robin\", "
                                                  "\"hashed\" and \"headroom\" do)",
                                                  h.name, s.address, s.weight, st.back())});
    }
}

// A site's preference other than 0 and the default 128 when no hostname with a service there has the
// `preference` stage.
void unreadPreferences(const Config& cfg, std::vector<UnreadSetting>& out) {
    for (const auto& s : cfg.sites) {
        // Preference 0 is read by every policy (it takes the site out before any stage); other values only
        // by the `preference` stage.
        if (s.preference == 0 || s.preference == 128) continue;
        if (!(metricsReadAtSite(cfg, s.name) & kReadsPreference))
            out.push_back(
                {at(cfg, s.line), fmt::format("[site.{}] preference = {} is not read: no hostname with a "
                                              "service at this site has the \"preference\" stage "
                                              "(0 takes a site out whatever the policy)",
                                              s.name, s.preference)});
    }
}

// Explicit source mappings whose key no stage at the site reads (a preset's keys are not named: a preset
// maps what the exporter has, whatever the policy uses).
void unreadMappings(const Config& cfg, std::vector<UnreadSetting>& out) {
    for (const auto& s : cfg.sites) {
        const unsigned reads = metricsReadAtSite(cfg, s.name);
        const std::tuple<const MappingConf*, unsigned, const char*, const char*> keys[] = {
            {&s.cpu, kReadsCpu, "cpu", "\"cpu\" stage"},
            {&s.sessionsUsed, kReadsSessions, "sessions_used",
             "\"session-threshold\" or \"session-capacity\" stage"}};
        for (const auto& [m, bit, name, stage] : keys)
            if (m->set && !(reads & bit))
                out.push_back(
                    {at(cfg, m->line), fmt::format("[site.{}] {} is mapped but not read: no hostname with a "
                                                   "service at this site has the {}",
                                                   s.name, name, stage)});
        for (const auto& [name, m] : s.loads)
            if (m.set && !(reads & kReadsLoads))
                out.push_back({at(cfg, m.line),
                               fmt::format("[site.{}] loads.{} is mapped but not read: no hostname "
                                           "with a service at this site has the \"load-factor\" chooser",
                                           s.name, name)});
    }
}

// Service settings the hostname's policy cannot read, and stages an operator named that cannot know
// capacity.
void capacityWarnings(const Config& cfg, std::vector<UnreadSetting>& out) {
    for (const auto& h : cfg.hostnames) {
        const auto& st = effective(h.policy.policy);
        auto has = [&](const char* n) { return std::find(st.begin(), st.end(), n) != st.end(); };
        const bool named = !h.policy.policy.empty();
        const bool readsCapacity = has("least-connections") || has("headroom");
        for (const auto& sv : h.services) {
            if (sv.capacity > 0 && !readsCapacity)
                out.push_back(
                    {at(cfg, sv.line), fmt::format("hostname \"{}\" service {}: capacity = {} is not read: "
                                                   "its policy has neither \"headroom\" nor "
                                                   "\"least-connections\"",
                                                   h.name, sv.address, sv.capacity)});
        }
        // Stages an operator named that compare load without knowing capacity.
        if (named && has("least-connections") && h.services.size() > 1) {
            size_t without = 0;
            for (const auto& sv : h.services) without += sv.capacity > 0 ? 0 : 1;
            if (without > 0)
                out.push_back(
                    {at(cfg, h.line),
                     fmt::format("hostname \"{}\": \"least-connections\" compares raw connection counts: "
                                 "{} of its {} services have no capacity, so a small full site looks "
                                 "best beside a large busy one; set capacity on every service (it then "
                                 "compares connections / capacity) or use the \"headroom\" chooser",
                                 h.name, without, h.services.size())});
        }
        if (named && has("session-capacity"))
            out.push_back(
                {at(cfg, h.line), fmt::format("hostname \"{}\": \"session-capacity\" compares absolute "
                                              "free sessions: a large site wins while it has more free "
                                              "seats, however full it is; the \"headroom\" chooser compares "
                                              "utilisation",
                                              h.name)});
    }
}

// A [check.NAME] no service names runs nothing (checks run per service that uses them).
void unusedChecks(const Config& cfg, std::vector<UnreadSetting>& out) {
    for (const auto& [name, c] : cfg.checks) {
        bool used = false;
        for (const auto& h : cfg.hostnames)
            for (const auto& s : h.services) used |= s.check == name;
        if (!used)
            out.push_back({at(cfg, c.line), fmt::format("[check.{}] is used by no service: it checks nothing "
                                                        "(a service names it with check = \"{}\")",
                                                        name, name)});
    }
}

// [load.metric.*] when no hostname's policy has the load-factor chooser.
void unreadLoadMetrics(const Config& cfg, std::vector<UnreadSetting>& out) {
    if (cfg.load.metrics.empty()) return;
    bool read = false;
    for (const auto& h : cfg.hostnames) read |= (metricsReadBy(h.policy.policy) & kReadsLoads) != 0;
    if (!read)
        out.push_back({at(cfg, 0), fmt::format("[load.metric.{}] is not read: no hostname's policy has the "
                                               "\"load-factor\" chooser",
                                               cfg.load.metrics.front().name)});
}

// [cluster] without etcd: the members used to poll each other (drains, verdicts, reports); that protocol is
// gone, so an operator upgrading must hear that a drain made on one member no longer reaches the others by
// itself.
void clusterWithoutEtcd(const Config& cfg, std::vector<UnreadSetting>& out) {
    if (cfg.cluster.enabled && cfg.cluster.etcd.empty() && cfg.cluster.members.size() > 1)
        out.push_back(
            {at(cfg, cfg.cluster.line),
             "[cluster] has no `etcd`: the members share nothing (no drain, enable, report or health verdict "
             "reaches another member by itself); `members` is only the list gslbctl reaches, so drain and "
             "report through gslbctl (it sends to every member) or add etcd = [\"http://ADDRESS:2379\", …] "
             "to [cluster] (doc/ns-set.md \"Shared state in etcd\")"});
}

}  // namespace

// Each check appends what it finds; their order is the order of the messages.
std::vector<UnreadSetting> unreadSettings(const Config& cfg) {
    std::vector<UnreadSetting> out;
    unreadPolicyKeys(cfg, out);
    unreadWeights(cfg, out);
    unreadPreferences(cfg, out);
    unreadMappings(cfg, out);
    capacityWarnings(cfg, out);
    unusedChecks(cfg, out);
    unreadLoadMetrics(cfg, out);
    clusterWithoutEtcd(cfg, out);
    return out;
}

}  // namespace gslb::server
