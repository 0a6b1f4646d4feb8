// HttpClient and PollTimers (contract in http_client.hpp).
#include "server/base/http_client.hpp"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/keyvalq_struct.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <algorithm>

namespace gslb::server {

const char* answerError(const HttpAnswer& a) {
    if (!a.failed) return "cannot connect";
    switch (a.error) {
        case EVREQ_HTTP_TIMEOUT:
            return "no answer in time";
        case EVREQ_HTTP_EOF:
            return "the connection closed without an answer";
        case EVREQ_HTTP_INVALID_HEADER:
            return "an invalid answer";
        case EVREQ_HTTP_DATA_TOO_LONG:
            return "an answer larger than the limit";
        default:
            return "cannot connect";
    }
}

struct HttpClient::Call {
    HttpClient* client = nullptr;
    evhttp_request* req = nullptr;
    Done done;
    Chunk chunk;
    HttpAnswer answer;
    evhttp_connection* own = nullptr;  // TLS: this request's connection
    event_base* base = nullptr;
    ~Call() {
        if (!own) return;
        // Not from inside libevent's callback of that connection: on a fresh turn of the loop.
        event_base_once(
            base, -1, EV_TIMEOUT,
            [](evutil_socket_t, short, void* arg) {
                evhttp_connection_free(static_cast<evhttp_connection*>(arg));
            },
            own, nullptr);
    }
};

HttpClient::HttpClient(event_base* base, std::string host, int port, SSL_CTX* tls)
    : base_(base), host_(std::move(host)), port_(port), tls_(tls) {
    if (tls_) return;
    conn_ = evhttp_connection_base_new(base, nullptr, host_.c_str(), uint16_t(port_));
    if (conn_) evhttp_connection_set_retries(conn_, 0);
}

HttpClient::~HttpClient() {
    cancel();
    if (conn_) evhttp_connection_free(conn_);
}

void HttpClient::setTimeout(double seconds) {
    timeout_ = toTimeval(seconds);
    if (conn_) evhttp_connection_set_timeout_tv(conn_, &timeout_);
}

void HttpClient::setMaxBody(size_t octets) {
    maxBody_ = octets;
    if (conn_) evhttp_connection_set_max_body_size(conn_, ev_ssize_t(octets));
}

void HttpClient::cancel() {
    for (auto& c : calls_)
        if (c->req) evhttp_cancel_request(c->req);  // frees the request; its callback is not called
    calls_.clear();
}

evhttp_connection* HttpClient::tlsConnection() {
    SSL* ssl = SSL_new(tls_);
    if (!ssl) return nullptr;
    // The server's certificate must name the address we dialled (an IP address SAN): etcd's own
    // certificates carry them (etcd's "transport security model").
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host_.c_str());
    bufferevent* bev = bufferevent_openssl_socket_new(base_, -1, ssl, BUFFEREVENT_SSL_CONNECTING,
                                                      BEV_OPT_CLOSE_ON_FREE | BEV_OPT_DEFER_CALLBACKS);
    if (!bev) {
        SSL_free(ssl);
        return nullptr;
    }
    bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
    evhttp_connection* c =
        evhttp_connection_base_bufferevent_new(base_, nullptr, bev, host_.c_str(), uint16_t(port_));
    if (!c) {
        bufferevent_free(bev);
        return nullptr;
    }
    evhttp_connection_set_retries(c, 0);
    if (timeout_.tv_sec || timeout_.tv_usec) evhttp_connection_set_timeout_tv(c, &timeout_);
    if (maxBody_) evhttp_connection_set_max_body_size(c, ev_ssize_t(maxBody_));
    return c;
}

bool HttpClient::sendStream(evhttp_cmd_type method, const std::string& uri, const Headers& headers,
                            const std::string& body, Chunk chunk, Done done) {
    return start(method, uri, headers, body, std::move(chunk), std::move(done));
}

bool HttpClient::send(evhttp_cmd_type method, const std::string& uri, const Headers& headers,
                      const std::string& body, Done done) {
    return start(method, uri, headers, body, nullptr, std::move(done));
}

bool HttpClient::start(evhttp_cmd_type method, const std::string& uri, const Headers& headers,
                       const std::string& body, Chunk chunk, Done done) {
    evhttp_connection* own = nullptr;
    if (tls_ && !(own = tlsConnection())) return false;
    evhttp_connection* conn = own ? own : conn_;
    if (!conn) return false;
    auto c = std::make_unique<Call>();
    c->client = this;
    c->done = std::move(done);
    c->own = own;
    c->base = base_;
    c->req = evhttp_request_new(onResponse, c.get());
    if (!c->req) return false;
    evhttp_request_set_error_cb(c->req, onError);
    if (chunk) {
        c->chunk = std::move(chunk);
        evhttp_request_set_chunked_cb(c->req, onChunk);
    }
    evkeyvalq* h = evhttp_request_get_output_headers(c->req);
    std::string host = host_.find(':') != std::string::npos ? "[" + host_ + "]" : host_;
    // Appended piecewise: GCC 12 at -O3 (tools/build --server) warned -Wrestrict on ":" + std::string&&.
    host += ':';
    host += std::to_string(port_);
    evhttp_add_header(h, "Host", host.c_str());
    for (const auto& [name, value] : headers) evhttp_add_header(h, name.c_str(), value.c_str());
    if (!body.empty()) evbuffer_add(evhttp_request_get_output_buffer(c->req), body.data(), body.size());
    evhttp_request* req = c->req;
    Call* raw = c.get();
    calls_.push_back(std::move(c));
    if (evhttp_make_request(conn, req, method, uri.c_str()) != 0) {
        // libevent freed the request already. Had it failed it through the callback on the way, that ran
        // `done` (and took the call off the list): then it is no refusal.
        auto it = std::find_if(calls_.begin(), calls_.end(), [raw](const auto& p) { return p.get() == raw; });
        if (it == calls_.end()) return true;
        calls_.erase(it);
        return false;
    }
    return true;
}

void HttpClient::onError(evhttp_request_error e, void* arg) {
    auto* c = static_cast<Call*>(arg);
    c->answer.failed = true;
    c->answer.error = e;
}

void HttpClient::onChunk(evhttp_request* req, void* arg) {
    auto* c = static_cast<Call*>(arg);
    evbuffer* in = evhttp_request_get_input_buffer(req);
    size_t n = evbuffer_get_length(in);
    if (n == 0) return;
    std::string piece(n, '\0');
    evbuffer_remove(in, piece.data(), n);
    if (c->chunk) c->chunk(piece.data(), piece.size());  // may cancel: nothing of `c` is used after it
}

void HttpClient::onResponse(evhttp_request* req, void* arg) {
    auto* c = static_cast<Call*>(arg);
    HttpClient* self = c->client;
    c->req = nullptr;  // libevent frees it after this callback
    if (req) {
        c->answer.status = evhttp_request_get_response_code(req);
        if (evbuffer* in = evhttp_request_get_input_buffer(req)) {
            c->answer.body.resize(evbuffer_get_length(in));
            if (!c->answer.body.empty()) evbuffer_copyout(in, c->answer.body.data(), c->answer.body.size());
        }
    }
    // Out of the list before the callback: it may send again, cancel, or destroy the client.
    std::unique_ptr<Call> mine;
    auto it =
        std::find_if(self->calls_.begin(), self->calls_.end(), [c](const auto& p) { return p.get() == c; });
    if (it != self->calls_.end()) {
        mine = std::move(*it);
        self->calls_.erase(it);
    }
    if (mine && mine->done) mine->done(mine->answer);
}

PollTimers::PollTimers(event_base* base, std::function<void()> onRound, std::function<void()> onDeadline)
    : onRound_(std::move(onRound)), onDeadline_(std::move(onDeadline)) {
    round_ = evtimer_new(base, fire, &onRound_);
    deadline_ = evtimer_new(base, fire, &onDeadline_);
}

PollTimers::~PollTimers() {
    if (round_) event_free(round_);
    if (deadline_) event_free(deadline_);
}

void PollTimers::fire(evutil_socket_t, short, void* arg) {
    (*static_cast<std::function<void()>*>(arg))();
}

void PollTimers::nextRoundIn(double seconds) {
    timeval tv = toTimeval(seconds);
    evtimer_add(round_, &tv);
}

void PollTimers::deadlineIn(double seconds) {
    timeval tv = toTimeval(seconds);
    evtimer_add(deadline_, &tv);
}

void PollTimers::clearDeadline() {
    evtimer_del(deadline_);
}

}  // namespace gslb::server
