// PeerMonitor (contract in peers.hpp).
#include "server/probes/peers.hpp"

#include <netdb.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

#include "server/clock.hpp"
#include "server/events.hpp"
#include "server/gslb.hpp"
#include "server/http_client.hpp"
#include "server/log.hpp"
#include "server/snapshot.hpp"

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
        Impl* impl = nullptr;
        ClusterMember member;
        std::string host;  // numeric, for evhttp and the Host header
        int port = 0;
        std::unique_ptr<HttpClient> http;
        std::unique_ptr<PollTimers> timers;             // the next poll, and this one's timeout
        std::map<std::string, ParsedVerdict> verdicts;  // site '\0' address
        PeerStatus st;
    };

    PeerMonitor* owner;
    event_base* base;
    std::map<std::string, std::unique_ptr<Peer>> peers;  // by URL
    double interval = 5, timeout = 1;

    Impl(PeerMonitor* o, event_base* b) : owner(o), base(b) {}
    ~Impl() {
        for (auto& [u, p] : peers) stop(*p);
    }

    void stop(Peer& p) {
        p.timers.reset();
        p.http.reset();  // cancels the poll in flight: its callback is not called
    }

    void apply(const Snapshot& s) {
        const ClusterConf& c = s.config.cluster;
        const bool on = c.enabled && c.healthQuorum > 0 && c.selfIndex >= 0;
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
                p->impl = this;
                p->member = m;
                p->st.url = m.url;
                char host[NI_MAXHOST], serv[NI_MAXSERV];
                if (getnameinfo(reinterpret_cast<const sockaddr*>(&m.addr.addr), m.addr.len, host,
                                sizeof host, serv, sizeof serv, NI_NUMERICHOST | NI_NUMERICSERV) != 0)
                    continue;  // the config checked the address; nothing to poll otherwise
                p->host = host;
                p->port = std::atoi(serv);
                Peer* raw = p.get();
                p->http = std::make_unique<HttpClient>(base, p->host, p->port);
                p->http->setMaxBody(kMaxBody);
                p->timers = std::make_unique<PollTimers>(
                    base, [this, raw] { poll(*raw); },
                    [this, raw] {
                        raw->http->cancel();
                        finish(*raw, fmt::format("timeout after {} s", timeout), nullptr);
                    });
                peers.emplace(m.url, std::move(p));
                poll(*raw);
            }
        for (auto it = peers.begin(); it != peers.end();) {
            if (keep.count(it->first)) {
                it->second->http->setTimeout(timeout);
                ++it;
                continue;
            }
            stop(*it->second);
            it = peers.erase(it);
        }
    }

    void poll(Peer& p) {
        if (p.http->inFlight() > 0) return;
        p.http->setTimeout(timeout);
        p.timers->deadlineIn(timeout);
        Peer* raw = &p;
        if (!p.http->send(EVHTTP_REQ_GET, "/v1/verdicts",
                          {{"Accept", "application/json"}, {"User-Agent", "gslbd"}}, "",
                          [this, raw](const HttpAnswer& a) { answered(*raw, a); })) {
            p.timers->clearDeadline();
            finish(p, "cannot start the request", nullptr);
        }
    }

    static const char* requestError(evhttp_request_error e) {
        return e == EVREQ_HTTP_TIMEOUT          ? "timeout"
               : e == EVREQ_HTTP_EOF            ? "connection closed early"
               : e == EVREQ_HTTP_INVALID_HEADER ? "invalid response header"
               : e == EVREQ_HTTP_DATA_TOO_LONG  ? "answer too large"
                                                : "connect or read failed";
    }

    void answered(Peer& p, const HttpAnswer& a) {
        p.timers->clearDeadline();
        if (a.status == 0) {
            finish(p, a.failed ? requestError(a.error) : "connect or read failed", nullptr);
            return;
        }
        if (a.status != 200) {
            finish(p, fmt::format("http {}", a.status), nullptr);
            return;
        }
        finish(p, "", &a.body);
    }

    void finish(Peer& p, std::string error, const std::string* body) {
        ++p.st.polls;
        if (error.empty() && body) {
            std::map<std::string, ParsedVerdict> v;
            error = parsePeerVerdicts(*body, monotonicMs(), v);
            if (error.empty()) {
                p.verdicts = std::move(v);
                p.st.verdicts = p.verdicts.size();
            }
        }
        const std::string before = p.st.state;
        if (error.empty()) {
            p.st.state = "ok";
            p.st.lastSuccessMonoMs = monotonicMs();
            p.st.lastSuccessUnixMs = wallMs();
            if (before == "failing") {
                log::info("cluster peer {} answers again", p.st.url);
                recordEvent(log::Level::Info, "cluster", p.st.url, "peer answers again");
            }
        } else {
            ++p.st.failures;
            p.st.lastError = error;
            p.st.state = "failing";
            if (before != "failing") {
                log::warn("cluster peer {}: {}; its verdicts stop counting once stale", p.st.url, error);
                recordEvent(log::Level::Warn, "cluster", p.st.url, "peer failing: " + error);
            }
        }
        p.timers->nextRoundIn(interval);
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
    for (const auto& [url, p] : impl_->peers) out.push_back(p->st);
    return out;
}

}  // namespace gslb::server
