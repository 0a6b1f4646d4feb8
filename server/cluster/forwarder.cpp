#include "server/cluster/forwarder.hpp"

#include <event2/http.h>
#include <fmt/format.h>

#include <memory>

#include "server/base/http_client.hpp"
#include "server/base/log.hpp"

namespace gslb::server {

PeerForwarder::PeerForwarder(event_base* base, SendFn send) : base_(base), send_(std::move(send)) {
    if (!send_) send_ = [this](const PeerRequest& r, Done done) { httpSend(r, std::move(done)); };
}

PeerForwarder::~PeerForwarder() {
    *alive_ = false;
}

size_t PeerForwarder::pending(const std::string& peer) const {
    auto it = peers_.find(peer);
    return it == peers_.end() ? 0 : it->second.queue.size() + (it->second.busy ? 1 : 0);
}

void PeerForwarder::forward(PeerRequest r) {
    Peer& p = peers_[r.peer];
    PeerCounters& c = counters_[r.peer];
    if (p.queue.size() >= kMaxQueued) {
        // The newest report is worth more than the oldest waiting one (a later report replaces the values).
        p.queue.pop_front();
        if (c.dropped++ == 0)
            log::warn("cluster: {} does not keep up: its forward queue is full ({}), the oldest reports go",
                      r.peer, kMaxQueued);
    }
    std::string peer = r.peer;
    p.queue.push_back(std::move(r));
    pump(peer);
}

void PeerForwarder::pump(const std::string& peer) {
    Peer& p = peers_[peer];
    if (p.busy || p.queue.empty()) return;
    p.busy = true;
    PeerRequest r = std::move(p.queue.front());
    p.queue.pop_front();
    std::weak_ptr<bool> alive = alive_;
    send_(r, [this, alive, peer](bool ok, const std::string& error) {
        auto a = alive.lock();
        if (!a || !*a) return;
        PeerCounters& c = counters_[peer];
        if (ok) {
            if (!c.lastError.empty()) log::info("cluster: forwarding to {} works again", peer);
            ++c.ok;
            c.lastError.clear();
        } else {
            // Logged when the reason changes, not per report.
            if (c.lastError != error) log::warn("cluster: forwarding a report to {} failed: {}", peer, error);
            ++c.failed;
            c.lastError = error;
        }
        peers_[peer].busy = false;
        pump(peer);
    });
}

namespace {

const char* requestError(evhttp_request_error e) {
    switch (e) {
        case EVREQ_HTTP_TIMEOUT:
            return "no answer in time";
        case EVREQ_HTTP_EOF:
            return "the connection closed without an answer";
        case EVREQ_HTTP_INVALID_HEADER:
            return "an invalid answer";
        case EVREQ_HTTP_BUFFER_ERROR:
            return "cannot connect";
        default:
            return "the request failed";
    }
}

}  // namespace

void PeerForwarder::httpSend(const PeerRequest& r, Done done) {
    auto it = clients_.find(r.peer);
    if (it == clients_.end()) {
        evhttp_uri* uri = evhttp_uri_parse(r.peer.c_str());
        if (!uri || !evhttp_uri_get_host(uri) || evhttp_uri_get_port(uri) <= 0) {
            if (uri) evhttp_uri_free(uri);
            done(false, "not an http://ADDRESS:PORT URL");
            return;
        }
        std::string host = evhttp_uri_get_host(uri);
        int port = evhttp_uri_get_port(uri);
        evhttp_uri_free(uri);
        if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
        auto client = std::make_unique<HttpClient>(base_, host, port);
        client->setTimeout(kTimeoutMs / 1000.0);
        it = clients_.emplace(r.peer, std::move(client)).first;
    }
    auto answered = [done](const HttpAnswer& a) {
        if (a.status >= 200 && a.status < 300) {
            done(true, "");
        } else if (a.status != 0) {
            std::string why = fmt::format("answered {}", a.status);
            std::string body = a.body.substr(0, 200);
            while (!body.empty() && (body.back() == '\n' || body.back() == '\r')) body.pop_back();
            if (!body.empty()) why += ": " + body;
            done(false, why);
        } else {
            done(false, a.failed ? requestError(a.error) : "cannot connect");
        }
    };
    const HttpClient::Headers headers = {{"Connection", "close"},
                                         {"Content-Type", "application/json"},
                                         {"Authorization", "Bearer " + r.token},
                                         {kForwardedHeader, r.origin}};
    if (!it->second->send(EVHTTP_REQ_POST, r.path, headers, r.body, answered)) {
        // libevent has not called back and will not: fail on a fresh turn of the loop, as callers expect.
        auto d = std::make_unique<Done>(std::move(done));
        event_base_once(
            base_, -1, EV_TIMEOUT,
            [](evutil_socket_t, short, void* arg) {
                std::unique_ptr<Done> d(static_cast<Done*>(arg));
                (*d)(false, "cannot send the request");
            },
            d.release(), nullptr);
    }
}

}  // namespace gslb::server
