// HttpClient and PollTimers (contract in http_client.hpp).
#include "server/base/http_client.hpp"

#include <event2/buffer.h>
#include <event2/keyvalq_struct.h>

#include <algorithm>

namespace gslb::server {

struct HttpClient::Call {
    HttpClient* client = nullptr;
    evhttp_request* req = nullptr;
    Done done;
    HttpAnswer answer;
};

HttpClient::HttpClient(event_base* base, std::string host, int port) : host_(std::move(host)), port_(port) {
    conn_ = evhttp_connection_base_new(base, nullptr, host_.c_str(), uint16_t(port_));
    if (conn_) evhttp_connection_set_retries(conn_, 0);
}

HttpClient::~HttpClient() {
    cancel();
    if (conn_) evhttp_connection_free(conn_);
}

void HttpClient::setTimeout(double seconds) {
    timeval tv = toTimeval(seconds);
    if (conn_) evhttp_connection_set_timeout_tv(conn_, &tv);
}

void HttpClient::setMaxBody(size_t octets) {
    if (conn_) evhttp_connection_set_max_body_size(conn_, ev_ssize_t(octets));
}

void HttpClient::cancel() {
    for (auto& c : calls_)
        if (c->req) evhttp_cancel_request(c->req);  // frees the request; its callback is not called
    calls_.clear();
}

bool HttpClient::send(evhttp_cmd_type method, const std::string& uri, const Headers& headers,
                      const std::string& body, Done done) {
    if (!conn_) return false;
    auto c = std::make_unique<Call>();
    c->client = this;
    c->done = std::move(done);
    c->req = evhttp_request_new(onResponse, c.get());
    if (!c->req) return false;
    evhttp_request_set_error_cb(c->req, onError);
    evkeyvalq* h = evhttp_request_get_output_headers(c->req);
    std::string host = host_.find(':') != std::string::npos ? "[" + host_ + "]" : host_;
    host += ":" + std::to_string(port_);
    evhttp_add_header(h, "Host", host.c_str());
    for (const auto& [name, value] : headers) evhttp_add_header(h, name.c_str(), value.c_str());
    if (!body.empty()) evbuffer_add(evhttp_request_get_output_buffer(c->req), body.data(), body.size());
    evhttp_request* req = c->req;
    Call* raw = c.get();
    calls_.push_back(std::move(c));
    if (evhttp_make_request(conn_, req, method, uri.c_str()) != 0) {
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
