#include "server/api.hpp"

#include <event2/buffer.h>
#include <event2/keyvalq_struct.h>
#include <nlohmann/json.hpp>

#include <strings.h>

#include <fstream>
#include <sstream>
#include <unistd.h>
#include <vector>

#include "server/log.hpp"

namespace gslb::server {

std::string jsonText(const nlohmann::json& j, int indent) {
    return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

ApiResponse apiError(int status, const std::string& message) {
    return ApiResponse{status, jsonText(nlohmann::json{{"error", message}}) + "\n", "application/json"};
}

ControlApi::ControlApi(event_base* base, Shared& shared, ReloadFn reload, CheckStatusFn checkStatus)
    : base_(base), shared_(shared), reload_(std::move(reload)), checkStatus_(std::move(checkStatus)) {}

ControlApi::~ControlApi() {
    if (http_) evhttp_free(http_);
    if (fd_ >= 0) close(fd_);
}

bool ControlApi::loadToken(const std::string& path, std::string& token, std::string& error) {
    std::ifstream in(path);
    if (!in) {
        error = fmt::format("{}: cannot read the control token file", path);
        return false;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    std::string t = ss.str();
    while (!t.empty() && isspace(uint8_t(t.back()))) t.pop_back();
    while (!t.empty() && isspace(uint8_t(t.front()))) t.erase(t.begin());
    if (t.size() < 8) {
        error = fmt::format("{}: the control token must be at least 8 characters", path);
        return false;
    }
    token = t;
    return true;
}

bool ControlApi::readToken(const std::string& path, std::string& error) {
    std::string t;
    if (!loadToken(path, t, error)) return false;
    token_ = t;
    return true;
}

bool ControlApi::start(const ControlConf& conf, std::string& error) {
    if (!bind(conf, error)) return false;
    return serve(error);
}

bool ControlApi::bind(const ControlConf& conf, std::string& error) {
    if (!readToken(conf.tokenFile, error)) return false;
    listenText_ = conf.listen.text;
    const sockaddr* sa = reinterpret_cast<const sockaddr*>(&conf.listen.addr);
    evutil_socket_t fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        error = fmt::format("control API {}: socket: {}", conf.listen.text, strerror(errno));
        return false;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, sa, conf.listen.len) != 0 || listen(fd, 128) != 0) {
        error =
            fmt::format("control API {}: {}", conf.listen.text, strerror(errno));  // errno of bind or listen
        close(fd);
        return false;
    }
    fd_ = fd;
    return true;
}

bool ControlApi::serve(std::string& error) {
    http_ = evhttp_new(base_);
    evhttp_set_allowed_methods(http_, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD);
    evhttp_set_max_body_size(http_, 1 << 20);
    evhttp_set_timeout(http_, 10);
    evhttp_set_gencb(http_, onRequest, this);
    if (!evhttp_accept_socket_with_handle(http_, fd_)) {
        error = fmt::format("control API {}: cannot accept", listenText_);
        return false;
    }
    fd_ = -1;  // evhttp owns it now
    return true;
}

namespace {

// Constant-time comparison: the token's length and bytes do not leak through timing.
bool sameToken(const std::string& a, const std::string& b) {
    unsigned diff = unsigned(a.size() ^ b.size());
    for (size_t i = 0; i < a.size(); ++i) diff |= unsigned(uint8_t(a[i]) ^ uint8_t(i < b.size() ? b[i] : 0));
    return diff == 0;
}

// `Authorization: Bearer <token>` (RFC 6750 §2.1): the scheme is case-insensitive (RFC 7235 §2.1) and one
// or more spaces separate it from the credentials. False when the header is not a Bearer credential.
bool bearerToken(const std::string& h, std::string& token) {
    static const char kScheme[] = "bearer";
    size_t n = sizeof kScheme - 1;
    if (h.size() <= n || strncasecmp(h.c_str(), kScheme, n) != 0 || h[n] != ' ') return false;
    size_t i = h.find_first_not_of(' ', n);
    if (i == std::string::npos) return false;
    token = h.substr(i);
    return true;
}

std::vector<std::string> splitPath(const std::string& path) {
    std::vector<std::string> parts;
    std::string cur;
    for (char c : path) {
        if (c == '?') break;
        if (c == '/') {
            if (!cur.empty()) parts.push_back(cur);
            cur.clear();
        } else {
            cur += c;
        }
    }
    if (!cur.empty()) parts.push_back(cur);
    for (auto& p : parts) {
        char* d = evhttp_uridecode(p.c_str(), 0, nullptr);
        if (d) {
            p = d;
            free(d);
        }
    }
    return parts;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> queryParams(const std::string& path) {
    std::vector<std::pair<std::string, std::string>> out;
    auto q = path.find('?');
    if (q == std::string::npos) return out;
    evkeyvalq kv;
    kv.tqh_first = nullptr;
    kv.tqh_last = &kv.tqh_first;
    if (evhttp_parse_query_str(path.c_str() + q + 1, &kv) == 0)
        for (evkeyval* e = kv.tqh_first; e; e = e->next.tqe_next) out.emplace_back(e->key, e->value);
    evhttp_clear_headers(&kv);
    return out;
}

ApiResponse ControlApi::handle(const std::string& method, const std::string& path,
                               const std::string& authorization, const std::string& body) {
    // A NUL byte has no place in a request line or a header (RFC 9110 §5.5): what reads the string up to it
    // (a C API, a proxy) would see another request than what we check.
    if (path.find('\0') != std::string::npos || authorization.find('\0') != std::string::npos)
        return apiError(400, "a NUL byte in the request line or a header");
    auto snap = shared_.holder.get();
    auto parts = splitPath(path);
    bool get = method == "GET" || method == "HEAD";
    if (parts.size() == 2 && parts[0] == "v1" && parts[1] == "status") {
        if (!get) return apiError(405, "use GET for /v1/status");
        return status(*snap);
    }
    if (parts.size() == 2 && parts[0] == "v1" && parts[1] == "events") {
        if (!get) return apiError(405, "use GET for /v1/events");
        return events(path);
    }
    if (parts.size() == 2 && parts[0] == "v1" && parts[1] == "explain") {
        if (!get) return apiError(405, "use GET for /v1/explain");
        return explainQuery(*snap, path);
    }
    if (parts.size() == 1 && parts[0] == "metrics") {
        if (!get) return apiError(405, "use GET for /metrics");
        return prometheus(*snap);
    }
    bool known = (parts.size() == 2 && parts[0] == "v1" && parts[1] == "reload") ||
                 (parts.size() == 4 && parts[0] == "v1" && parts[1] == "sites") ||
                 (parts.size() == 6 && parts[0] == "v1" && parts[1] == "sites" && parts[3] == "services");
    if (!known) return apiError(404, fmt::format("no such endpoint: {} {}", method, path));
    if (method != "POST") return apiError(405, fmt::format("use POST for {}", path));
    std::string presented;
    if (!bearerToken(authorization, presented) || !sameToken(presented, token_)) {
        ++refused_;
        return apiError(401,
                        "a valid bearer token is required (Authorization: Bearer <token_file contents>)");
    }
    if (parts.size() == 2) {
        std::string message;
        ++reloads_;
        if (!reload_(message)) {
            ++reloadFailures_;
            return apiError(500, "reload failed, the previous configuration keeps serving: " + message);
        }
        return ApiResponse{200, jsonText(nlohmann::json{{"ok", true}, {"message", message}}) + "\n"};
    }
    const std::string& site = parts[2];
    if (parts.size() == 4) {
        if (parts[3] == "report") return report(*snap, site, body);
        if (parts[3] == "drain" || parts[3] == "enable") return admin(*snap, site, "", parts[3] == "enable");
        return apiError(404, fmt::format("no such endpoint: {} {}", method, path));
    }
    if (parts[5] == "drain" || parts[5] == "enable")
        return admin(*snap, site, parts[4], parts[5] == "enable");
    return apiError(404, fmt::format("no such endpoint: {} {}", method, path));
}

void ControlApi::onRequest(evhttp_request* req, void* arg) {
    auto* api = static_cast<ControlApi*>(arg);
    std::string method;
    switch (evhttp_request_get_command(req)) {
        case EVHTTP_REQ_GET:
            method = "GET";
            break;
        case EVHTTP_REQ_HEAD:
            method = "HEAD";
            break;
        case EVHTTP_REQ_POST:
            method = "POST";
            break;
        default:
            method = "OTHER";
            break;
    }
    const char* uri = evhttp_request_get_uri(req);
    const char* auth = evhttp_find_header(evhttp_request_get_input_headers(req), "Authorization");
    evbuffer* in = evhttp_request_get_input_buffer(req);
    std::string body(evbuffer_get_length(in), '\0');
    evbuffer_copyout(in, body.data(), body.size());
    ApiResponse r;
    try {
        r = api->handle(method, uri ? uri : "/", auth ? auth : "", body);
    } catch (const std::exception& e) {
        r = apiError(500, e.what());
    }
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", r.contentType.c_str());
    evbuffer* out = evbuffer_new();
    evbuffer_add(out, r.body.data(), r.body.size());
    evhttp_send_reply(req, r.status, r.status == 200 ? "OK" : "Error", out);
    evbuffer_free(out);
}

}  // namespace gslb::server
