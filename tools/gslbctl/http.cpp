#include "tools/gslbctl/http.hpp"

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/util.h>
#include <fmt/format.h>

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>

namespace gslb::ctl {
namespace {

struct Call {
    HttpResult* out;
    event_base* base;
    int* pending;
    int sockErr = 0;
    bool errorCb = false;
    evhttp_request_error reqErr = EVREQ_HTTP_TIMEOUT;
    evhttp_connection* conn = nullptr;
    std::string connectHost;
    int port = 80;
};

void onDone(evhttp_request* req, void* arg) {
    auto* c = static_cast<Call*>(arg);
    if (req && evhttp_request_get_response_code(req) != 0) {
        c->out->reached = true;
        c->out->status = evhttp_request_get_response_code(req);
        evbuffer* in = evhttp_request_get_input_buffer(req);
        size_t n = evbuffer_get_length(in);
        c->out->body.resize(n);
        if (n) evbuffer_remove(in, c->out->body.data(), n);
    } else if (!c->sockErr) {
        c->sockErr = EVUTIL_SOCKET_ERROR();
    }
    if (--*c->pending == 0) event_base_loopexit(c->base, nullptr);
}

void onError(evhttp_request_error err, void* arg) {
    auto* c = static_cast<Call*>(arg);
    c->errorCb = true;
    c->reqErr = err;
    c->sockErr = EVUTIL_SOCKET_ERROR();
}

// Why a connection failed: evhttp does not keep the socket error, so connect once more, plainly, to learn it
// ("connection refused", "no route to host", …). Diagnostics only; 0 when the probe connects.
int probeConnect(const std::string& host, int port) {
    addrinfo hints{}, *res = nullptr;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    int gai = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res);
    if (gai != 0 || !res) return EHOSTUNREACH;
    int err = 0;
    int fd = socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, res->ai_protocol);
    if (fd < 0) {
        err = errno;
    } else {
        timeval tv{2, 0};
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        if (connect(fd, res->ai_addr, res->ai_addrlen) != 0) err = errno == EINPROGRESS ? ETIMEDOUT : errno;
        close(fd);
    }
    freeaddrinfo(res);
    return err;
}

std::string lowerFirst(std::string s) {
    if (!s.empty()) s[0] = char(tolower(static_cast<unsigned char>(s[0])));
    return s;
}

}  // namespace

std::string pathSegment(const std::string& s) {
    std::string out;
    for (unsigned char ch : s) {
        if (isalnum(ch) || ch == '-' || ch == '.' || ch == '_' || ch == '~' || ch == ':')
            out += char(ch);
        else
            out += fmt::format("%{:02X}", ch);
    }
    return out;
}

HttpResult httpRequest(const std::string& url, const std::string& method, const std::string& path,
                       const std::string& token, const std::string& body, int timeoutS) {
    return httpRequests({HttpCall{url, method, path, token, body}}, timeoutS * 1000)[0];
}

std::vector<HttpResult> httpRequests(const std::vector<HttpCall>& calls, int timeoutMs) {
    std::vector<HttpResult> results(calls.size());
    std::vector<Call> state(calls.size());
    event_base* base = event_base_new();
    if (!base) {
        for (auto& r : results) r.error = "cannot set up the HTTP client";
        return results;
    }
    int pending = 0;
    for (size_t i = 0; i < calls.size(); ++i) {
        const HttpCall& hc = calls[i];
        HttpResult& r = results[i];
        Call& call = state[i];
        call.out = &r;
        call.base = base;
        call.pending = &pending;
        evhttp_uri* uri = evhttp_uri_parse(hc.url.c_str());
        if (!uri || !evhttp_uri_get_host(uri) || !evhttp_uri_get_scheme(uri) ||
            strcmp(evhttp_uri_get_scheme(uri), "http") != 0) {
            if (uri) evhttp_uri_free(uri);
            r.error = fmt::format("\"{}\" is not an http://HOST:PORT URL", hc.url);
            continue;
        }
        std::string host = evhttp_uri_get_host(uri);
        int port = evhttp_uri_get_port(uri);
        if (port < 0) port = 80;
        std::string prefix = evhttp_uri_get_path(uri) ? evhttp_uri_get_path(uri) : "";
        while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
        evhttp_uri_free(uri);
        call.connectHost = host;
        if (call.connectHost.size() > 2 && call.connectHost.front() == '[')
            call.connectHost = call.connectHost.substr(1, call.connectHost.size() - 2);
        call.port = port;
        call.conn = evhttp_connection_base_new(base, nullptr, call.connectHost.c_str(), uint16_t(port));
        if (!call.conn) {
            r.error = "cannot set up the HTTP client";
            continue;
        }
        timeval tv{timeoutMs / 1000, (timeoutMs % 1000) * 1000};
        evhttp_connection_set_timeout_tv(call.conn, &tv);
        evhttp_connection_set_retries(call.conn, 0);
        evhttp_request* req = evhttp_request_new(onDone, &call);
        evhttp_request_set_error_cb(req, onError);
        evkeyvalq* h = evhttp_request_get_output_headers(req);
        std::string hostHeader = port == 80 ? host : fmt::format("{}:{}", host, port);
        evhttp_add_header(h, "Host", hostHeader.c_str());
        evhttp_add_header(h, "Accept", "application/json");
        evhttp_add_header(h, "Connection", "close");
        if (!hc.token.empty()) evhttp_add_header(h, "Authorization", ("Bearer " + hc.token).c_str());
        for (const auto& [k, v] : hc.headers) evhttp_add_header(h, k.c_str(), v.c_str());
        evhttp_cmd_type cmd = EVHTTP_REQ_GET;
        if (hc.method == "POST") {
            cmd = EVHTTP_REQ_POST;
            evhttp_add_header(h, "Content-Type", "application/json");
            evbuffer_add(evhttp_request_get_output_buffer(req), hc.body.data(), hc.body.size());
        }
        std::string target = prefix + hc.path;
        ++pending;
        if (evhttp_make_request(call.conn, req, cmd, target.c_str()) != 0) {
            --pending;
            r.error = "cannot send the request";
        }
    }
    if (pending > 0) event_base_dispatch(base);
    for (size_t i = 0; i < calls.size(); ++i) {
        HttpResult& r = results[i];
        Call& call = state[i];
        if (!call.conn) continue;
        if (!r.reached && r.error.empty()) {
            if (call.errorCb && call.reqErr == EVREQ_HTTP_TIMEOUT)
                r.error = timeoutMs % 1000 == 0 ? fmt::format("no answer within {} s", timeoutMs / 1000)
                                                : fmt::format("no answer within {} ms", timeoutMs);
            else if (int e = probeConnect(call.connectHost, call.port); e != 0)
                r.error = lowerFirst(std::strerror(e));
            else if (call.sockErr)
                r.error = lowerFirst(evutil_socket_error_to_string(call.sockErr));
            else
                r.error = "the connection was closed without an answer";
        }
        evhttp_connection_free(call.conn);
    }
    event_base_free(base);
    return results;
}

}  // namespace gslb::ctl
