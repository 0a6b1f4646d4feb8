// PeerMonitor (contract in peers.hpp).
#include "server/probes/peers.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

#include "server/base/clock.hpp"
#include "server/base/events.hpp"
#include "server/state/gslb.hpp"
#include "server/base/log.hpp"
#include "server/state/snapshot.hpp"

namespace gslb::server {

using metrics::Health;

namespace {

// A peer's answer can name every service of a big config; far more than that is not a peer talking.
constexpr size_t kMaxBody = 16 * 1024 * 1024;

}  // namespace

std::string parsePeerVerdicts(std::string_view body, int64_t nowMonoMs,
                              std::map<std::string, ParsedVerdict>& out) {
    auto j = nlohmann::json::parse(body, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return "bad JSON: not an object";
    auto services = j.find("services");
    if (services == j.end() || !services->is_array()) return "bad JSON: no services array";
    for (const auto& s : *services) {
        if (!s.is_object()) continue;
        auto str = [&s](const char* k, std::string& v) {
            auto it = s.find(k);
            if (it == s.end() || !it->is_string()) return false;
            v = it->get<std::string>();
            return true;
        };
        std::string site, address, health;
        auto age = s.find("age_ms");
        if (!str("site", site) || !str("address", address) || age == s.end() || !age->is_number()) continue;
        str("health", health);
        // Read as a double: a float or a huge unsigned age must not reach an int64_t conversion (UB, or a
        // wrap to a negative age that would read as fresh).
        double a = age->get<double>();
        int64_t ageMs = !(a > 0) ? 0 : a >= double(kMaxPeerAgeMs) ? kMaxPeerAgeMs : int64_t(a);
        ParsedVerdict v;
        v.health = health == "up" ? Health::Up : health == "down" ? Health::Down : Health::Unknown;
        v.observedMonoMs = nowMonoMs - ageMs;
        out[site + '\0' + address] = v;
    }
    return "";
}

struct PeerMonitor::Impl {
    struct Peer {
        std::map<std::string, ParsedVerdict> verdicts;  // site '\0' address
        size_t answered = 0;                            // services in the last answer
        std::unique_ptr<cluster::PeerPoller> poller;
    };

    PeerMonitor* owner;
    event_base* base;
    std::map<std::string, std::unique_ptr<Peer>> peers;  // by URL
    double interval = 5, timeout = 1;

    Impl(PeerMonitor* o, event_base* b) : owner(o), base(b) {}

    cluster::PollTiming timing() const { return {timeout, timeout, interval}; }

    void apply(const Snapshot& s) {
        const ClusterConf& c = s.config.cluster;
        const bool on = c.enabled && c.healthQuorum > 0 && c.selfIndex >= 0 && c.etcd.empty();
        double shortest = 0;
        for (const auto& [name, cc] : s.config.checks)
            if (cc.type == "tcp" || cc.type == "http" || cc.type == "https")
                shortest = shortest == 0 ? cc.interval : std::min(shortest, cc.interval);
        interval = std::clamp(shortest == 0 ? 5.0 : shortest, 0.1, 10.0);
        // At least 0.5 s even for very short check intervals: a loaded peer that answers in 300 ms is still
        // there, and one slow poll must not start the fall back on the own view.
        timeout = std::clamp(interval, 0.5, 1.0);
        std::map<std::string, bool> keep;
        if (on)
            for (size_t i = 0; i < c.members.size(); ++i) {
                if (int(i) == c.selfIndex) continue;
                const ClusterMember& m = c.members[i];
                keep[m.url] = true;
                if (peers.count(m.url)) continue;
                auto p = std::make_unique<Peer>();
                Peer* raw = p.get();
                p->poller = cluster::PeerPoller::make(
                    base, m, "/v1/verdicts", kMaxBody, timing(),
                    [raw](const std::string& body) {
                        std::map<std::string, ParsedVerdict> v;
                        std::string error = parsePeerVerdicts(body, monotonicMs(), v);
                        if (error.empty()) {
                            raw->verdicts = std::move(v);
                            raw->answered = raw->verdicts.size();
                        }
                        return error;
                    },
                    [this, raw](const std::string& error, const std::string& before) {
                        finished(*raw, error, before);
                    });
                if (!p->poller) continue;  // the config checked the address; nothing to poll otherwise
                peers.emplace(m.url, std::move(p));
                raw->poller->poll();
            }
        for (auto it = peers.begin(); it != peers.end();) {
            if (keep.count(it->first)) {
                it->second->poller->setTiming(timing());
                ++it;
                continue;
            }
            it = peers.erase(it);  // cancels its poll in flight
        }
    }

    void finished(Peer& p, const std::string& error, const std::string& before) {
        const std::string& url = p.poller->status().url;
        if (error.empty() && before == "failing") {
            log::info("cluster peer {} answers again", url);
            recordEvent(log::Level::Info, "cluster", url, "peer answers again");
        } else if (!error.empty() && before != "failing") {
            log::warn("cluster peer {}: {}; its verdicts stop counting once stale", url, error);
            recordEvent(log::Level::Warn, "cluster", url, "peer failing: " + error);
        }
        if (owner->onRound_) owner->onRound_();
    }
};

PeerMonitor::PeerMonitor(event_base* base) : impl_(std::make_unique<Impl>(this, base)) {}
PeerMonitor::~PeerMonitor() = default;

void PeerMonitor::apply(const Snapshot& snap) {
    const ClusterConf& c = snap.config.cluster;
    quorum_ = c.enabled && c.selfIndex >= 0 ? c.healthQuorum : 0;
    members_ = c.enabled ? c.members.size() : 0;
    impl_->apply(snap);
    interval_ = impl_->interval;
    timeout_ = impl_->timeout;
}

void PeerMonitor::verdicts(const std::string& site, const std::string& address, int64_t nowMonoMs,
                           std::vector<metrics::health::PeerVerdict>& out) const {
    const std::string key = site + '\0' + address;
    for (const auto& [url, p] : impl_->peers) {
        auto it = p->verdicts.find(key);
        if (it == p->verdicts.end()) {
            out.push_back({});
            continue;
        }
        out.push_back({it->second.health, std::max<int64_t>(0, nowMonoMs - it->second.observedMonoMs)});
    }
}

std::vector<PeerStatus> PeerMonitor::status() const {
    std::vector<PeerStatus> out;
    for (const auto& [url, p] : impl_->peers) {
        PeerStatus st;
        static_cast<cluster::PollStatus&>(st) = p->poller->status();
        st.verdicts = p->answered;
        out.push_back(std::move(st));
    }
    return out;
}

}  // namespace gslb::server
