// PeerMonitor (contract in peers.hpp).
#include "server/probes/peers.hpp"

#include <event2/buffer.h>
#include <event2/http.h>
#include <netdb.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <map>

#include "server/events.hpp"
#include "server/gslb.hpp"
#include "server/log.hpp"
#include "server/snapshot.hpp"

namespace gslb::server {

using metrics::Health;

namespace {

int64_t wallMs() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

timeval toTimeval(double s) {
    if (s < 0) s = 0;
    return timeval{time_t(s), suseconds_t((s - double(time_t(s))) * 1e6)};
}

// A peer's answer can name every service of a big config; far more than that is not a peer talking.
constexpr ev_ssize_t kMaxBody = 16 * 1024 * 1024;

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
        evhttp_connection* conn = nullptr;
        evhttp_request* req = nullptr;  // in flight
        std::string reqError;
        event* timer = nullptr;
        event* deadline = nullptr;
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
        cancel(p);
        if (p.timer) event_free(p.timer);
        if (p.deadline) event_free(p.deadline);
        if (p.conn) evhttp_connection_free(p.conn);
        p.timer = p.deadline = nullptr;
        p.conn = nullptr;
    }

    void cancel(Peer& p) {
        if (p.req) {
            evhttp_cancel_request(p.req);  // frees the request; its callback is not called
            p.req = nullptr;
        }
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
                p->conn = evhttp_connection_base_new(base, nullptr, p->host.c_str(), uint16_t(p->port));
                evhttp_connection_set_retries(p->conn, 0);
                evhttp_connection_set_max_body_size(p->conn, kMaxBody);
                p->timer = evtimer_new(base, onTimer, p.get());
                p->deadline = evtimer_new(base, onDeadline, p.get());
                Peer* raw = p.get();
                peers.emplace(m.url, std::move(p));
                poll(*raw);
            }
        for (auto it = peers.begin(); it != peers.end();) {
            if (keep.count(it->first)) {
                timeval tv = toTimeval(timeout);
                evhttp_connection_set_timeout_tv(it->second->conn, &tv);
                ++it;
                continue;
            }
            stop(*it->second);
            it = peers.erase(it);
        }
    }

    static void onTimer(evutil_socket_t, short, void* arg) {
        auto* p = static_cast<Peer*>(arg);
        p->impl->poll(*p);
    }
    static void onDeadline(evutil_socket_t, short, void* arg) {
        auto* p = static_cast<Peer*>(arg);
        p->impl->cancel(*p);
        p->impl->finish(*p, fmt::format("timeout after {} s", p->impl->timeout), nullptr);
    }

    void poll(Peer& p) {
        if (p.req) return;
        timeval tv = toTimeval(timeout);
        evhttp_connection_set_timeout_tv(p.conn, &tv);
        evtimer_add(p.deadline, &tv);
        p.reqError.clear();
        p.req = evhttp_request_new(onResponse, &p);
        evhttp_request_set_error_cb(p.req, onError);
        evkeyvalq* h = evhttp_request_get_output_headers(p.req);
        std::string host = p.host.find(':') != std::string::npos ? "[" + p.host + "]" : p.host;
        host += ":" + std::to_string(p.port);
        evhttp_add_header(h, "Host", host.c_str());
        evhttp_add_header(h, "Accept", "application/json");
        evhttp_add_header(h, "User-Agent", "gslbd");
        if (evhttp_make_request(p.conn, p.req, EVHTTP_REQ_GET, "/v1/verdicts") != 0) {
            p.req = nullptr;  // libevent freed it
            evtimer_del(p.deadline);
            finish(p, "cannot start the request", nullptr);
        }
    }

    static void onError(evhttp_request_error e, void* arg) {
        auto* p = static_cast<Peer*>(arg);
        p->reqError = e == EVREQ_HTTP_TIMEOUT          ? "timeout"
                      : e == EVREQ_HTTP_EOF            ? "connection closed early"
                      : e == EVREQ_HTTP_INVALID_HEADER ? "invalid response header"
                      : e == EVREQ_HTTP_DATA_TOO_LONG  ? "answer too large"
                                                       : "connect or read failed";
    }

    static void onResponse(evhttp_request* req, void* arg) {
        auto* p = static_cast<Peer*>(arg);
        p->req = nullptr;  // libevent frees it after this callback
        evtimer_del(p->deadline);
        if (!req || evhttp_request_get_response_code(req) == 0) {
            p->impl->finish(*p, p->reqError.empty() ? "connect or read failed" : p->reqError, nullptr);
            return;
        }
        if (int code = evhttp_request_get_response_code(req); code != 200) {
            p->impl->finish(*p, fmt::format("http {}", code), nullptr);
            return;
        }
        evbuffer* in = evhttp_request_get_input_buffer(req);
        std::string body(evbuffer_get_length(in), '\0');
        if (!body.empty()) evbuffer_copyout(in, body.data(), body.size());
        p->impl->finish(*p, "", &body);
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
        timeval tv = toTimeval(interval);
        if (p.timer) evtimer_add(p.timer, &tv);
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
