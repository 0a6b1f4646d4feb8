#include "server/cluster/forwarder.hpp"

#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <fmt/format.h>

#include <memory>

#include "server/log.hpp"

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

struct HttpCall {
    PeerForwarder::Done done;
    evhttp_connection* conn = nullptr;
    bool errorCb = false;
    evhttp_request_error err = EVREQ_HTTP_TIMEOUT;
};

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

void onError(evhttp_request_error e, void* arg) {
    auto* c = static_cast<HttpCall*>(arg);
    c->errorCb = true;
    c->err = e;
}

void onDone(evhttp_request* req, void* arg) {
    std::unique_ptr<HttpCall> c(static_cast<HttpCall*>(arg));
    int code = req ? evhttp_request_get_response_code(req) : 0;
    if (code >= 200 && code < 300) {
        c->done(true, "");
    } else if (code != 0) {
        std::string why = fmt::format("answered {}", code);
        if (evbuffer* in = evhttp_request_get_input_buffer(req)) {
            size_t n = std::min<size_t>(evbuffer_get_length(in), 200);
            std::string body(n, '\0');
            evbuffer_copyout(in, body.data(), n);
            while (!body.empty() && (body.back() == '\n' || body.back() == '\r')) body.pop_back();
            if (!body.empty()) why += ": " + body;
        }
        c->done(false, why);
    } else {
        c->done(false, c->errorCb ? requestError(c->err) : "cannot connect");
    }
    // The connection frees itself once this request is over (evhttp_connection_free_on_completion).
}

}  // namespace

void PeerForwarder::httpSend(const PeerRequest& r, Done done) {
    evhttp_uri* uri = evhttp_uri_parse(r.peer.c_str());
    if (!uri || !evhttp_uri_get_host(uri) || evhttp_uri_get_port(uri) <= 0) {
        if (uri) evhttp_uri_free(uri);
        done(false, "not an http://ADDRESS:PORT URL");
        return;
    }
    std::string host = evhttp_uri_get_host(uri);
    int port = evhttp_uri_get_port(uri);
    evhttp_uri_free(uri);
    std::string connectHost = host;
    if (connectHost.size() > 2 && connectHost.front() == '[')
        connectHost = connectHost.substr(1, connectHost.size() - 2);
    evhttp_connection* conn = evhttp_connection_base_new(base_, nullptr, connectHost.c_str(), uint16_t(port));
    if (!conn) {
        done(false, "cannot set up the HTTP client");
        return;
    }
    timeval tv{kTimeoutMs / 1000, (kTimeoutMs % 1000) * 1000};
    evhttp_connection_set_timeout_tv(conn, &tv);
    evhttp_connection_set_retries(conn, 0);
    auto* call = new HttpCall{std::move(done), conn};
    evhttp_request* req = evhttp_request_new(onDone, call);
    evhttp_request_set_error_cb(req, onError);
    evkeyvalq* h = evhttp_request_get_output_headers(req);
    std::string hostHeader = fmt::format("{}:{}", host, port);
    evhttp_add_header(h, "Host", hostHeader.c_str());
    evhttp_add_header(h, "Connection", "close");
    evhttp_add_header(h, "Content-Type", "application/json");
    evhttp_add_header(h, "Authorization", ("Bearer " + r.token).c_str());
    evhttp_add_header(h, kForwardedHeader, r.origin.c_str());
    evbuffer_add(evhttp_request_get_output_buffer(req), r.body.data(), r.body.size());
    if (evhttp_make_request(conn, req, EVHTTP_REQ_POST, r.path.c_str()) != 0) {
        // libevent has not called back and will not: fail on a fresh turn of the loop, as callers expect.
        evhttp_connection_free(conn);
        auto d = std::make_unique<Done>(std::move(call->done));
        delete call;
        event_base_once(
            base_, -1, EV_TIMEOUT,
            [](evutil_socket_t, short, void* arg) {
                std::unique_ptr<Done> d(static_cast<Done*>(arg));
                (*d)(false, "cannot send the request");
            },
            d.release(), nullptr);
        return;
    }
    evhttp_connection_free_on_completion(conn);
}

}  // namespace gslb::server
