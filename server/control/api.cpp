#include "server/control/api.hpp"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/keyvalq_struct.h>
#include <nlohmann/json.hpp>

#include <strings.h>

#include <cerrno>

#include <charconv>
#include <chrono>
#include <fstream>
#include <sstream>
#include <unistd.h>
#include <vector>

#include "server/base/clock.hpp"
#include "server/base/log.hpp"
#include "server/conf/token.hpp"

namespace gslb::server {

std::string jsonText(const nlohmann::json& j, int indent) {
    return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

ApiResponse apiError(int status, const std::string& message) {
    return ApiResponse{status, jsonText(nlohmann::json{{"error", message}}) + "\n", "application/json", ""};
}

ApiResponse methodNotAllowed(const std::string& allow, const std::string& message) {
    ApiResponse r = apiError(405, message);
    r.allow = allow;
    return r;
}

const char* reasonPhrase(int status) {
    switch (status) {
        case 200:
            return "OK";
        case 400:
            return "Bad Request";
        case 401:
            return "Unauthorized";
        case 404:
            return "Not Found";
        case 405:
            return "Method Not Allowed";
        case 413:
            return "Content Too Large";
        case 417:
            return "Expectation Failed";
        case 431:
            return "Request Header Fields Too Large";
        case 500:
            return "Internal Server Error";
        case 501:
            return "Not Implemented";
        case 503:
            return "Service Unavailable";
        case 505:
            return "HTTP Version Not Supported";
        default:
            return "Error";
    }
}

namespace {

// The lines of a request head, without their "\r\n" or "\n"; empty lines before the request line skipped.
std::vector<std::string_view> headLines(std::string_view head) {
    std::vector<std::string_view> lines;
    while (!head.empty()) {
        size_t e = head.find('\n');
        std::string_view line = head.substr(0, e);
        head = e == std::string_view::npos ? std::string_view{} : head.substr(e + 1);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.empty() && lines.empty()) continue;
        if (line.empty()) break;
        lines.push_back(line);
    }
    return lines;
}

// The value of the first header field `name` (case-insensitive), trimmed; nullopt without one.
std::optional<std::string_view> headerValue(const std::vector<std::string_view>& lines,
                                            std::string_view name) {
    for (size_t i = 1; i < lines.size(); ++i) {
        std::string_view l = lines[i];
        if (l.size() <= name.size() || l[name.size()] != ':' ||
            strncasecmp(l.data(), name.data(), name.size()) != 0)
            continue;
        std::string_view v = l.substr(name.size() + 1);
        while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
        while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
        return v;
    }
    return std::nullopt;
}

// Transfer-Encoding's last coding is chunked (RFC 9112 §6.1), as evhttp reads it.
bool chunkedCoding(const std::optional<std::string_view>& coding) {
    return coding && coding->size() >= 7 &&
           strncasecmp(coding->data() + coding->size() - 7, "chunked", 7) == 0;
}

bool isChunked(std::string_view head) {
    return chunkedCoding(headerValue(headLines(head), "Transfer-Encoding"));
}

// Shown in a message: at most 80 octets of what the client sent.
std::string shown(std::string_view s) {
    return s.size() <= 80 ? std::string(s) : std::string(s.substr(0, 80)) + "…";
}

}  // namespace

void ChunkedBodyScanner::feed(std::string_view chunk) {
    while (!chunk.empty()) {
        if (dataLeft_ > 0) {
            const size_t skip = size_t(std::min<uint64_t>(dataLeft_, chunk.size()));
            dataLeft_ -= skip;
            chunk.remove_prefix(skip);
            continue;
        }
        const size_t e = chunk.find('\n');
        if (line_.size() < 64) line_.append(chunk.substr(0, std::min(e, 64 - line_.size())));
        if (e == std::string_view::npos) return;
        chunk.remove_prefix(e + 1);
        std::string_view l = line_;
        if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
        uint64_t n = 0;
        auto [p, ec] = std::from_chars(l.data(), l.data() + l.size(), n, 16);
        if (!l.empty() && p != l.data()) {
            declared = ec == std::errc() && n <= UINT64_MAX - declared ? declared + n : UINT64_MAX;
            dataLeft_ = ec == std::errc() ? n : UINT64_MAX;
        }
        line_.clear();
    }
}

ApiResponse ownErrorResponse(int status, std::string_view head, uint64_t chunkedDeclared, size_t maxBody) {
    const auto lines = headLines(head);
    if (lines.empty())
        return apiError(status, fmt::format("{}: the request head did not come whole", reasonPhrase(status)));
    // The request line: METHOD SP TARGET SP HTTP-VERSION (RFC 9112 §3).
    std::vector<std::string_view> words;
    for (std::string_view l = lines[0]; !l.empty();) {
        size_t b = l.find_first_not_of(" \t");
        if (b == std::string_view::npos) break;
        l.remove_prefix(b);
        size_t e = l.find_first_of(" \t");
        words.push_back(l.substr(0, e));
        l = e == std::string_view::npos ? std::string_view{} : l.substr(e);
    }
    if (words.size() != 3)
        return apiError(400, fmt::format("the request line \"{}\" is not METHOD PATH HTTP/1.1 (RFC 9112 §3)",
                                         shown(lines[0])));
    const std::string_view method = words[0], version = words[2];
    if (version != "HTTP/1.1" && version != "HTTP/1.0")
        return apiError(
            status == 505 ? 505 : 400,
            fmt::format("HTTP version \"{}\": the control API speaks HTTP/1.1 (and 1.0)", shown(version)));
    static constexpr std::string_view kKnown[] = {"GET",     "HEAD",  "POST",    "PUT",  "DELETE",
                                                  "OPTIONS", "TRACE", "CONNECT", "PATCH"};
    if (std::find(std::begin(kKnown), std::end(kKnown), method) == std::end(kKnown)) {
        ApiResponse r =
            apiError(501, fmt::format("method \"{}\" is not one the control API knows: it reads with "
                                      "GET (or HEAD) and changes with POST",
                                      shown(method)));
        r.allow = "GET, HEAD, POST";
        return r;
    }
    for (size_t i = 1; i < lines.size(); ++i)
        if (lines[i].find(':') == std::string_view::npos)
            return apiError(
                400, fmt::format("the header line \"{}\" is not NAME: VALUE (RFC 9112 §5)", shown(lines[i])));
    const auto length = headerValue(lines, "Content-Length");
    const auto coding = headerValue(lines, "Transfer-Encoding");
    const bool chunked = chunkedCoding(coding);
    if (length && !chunked) {
        uint64_t n = 0;
        auto [p, ec] = std::from_chars(length->data(), length->data() + length->size(), n);
        if (length->empty() || ec != std::errc() || p != length->data() + length->size())
            return apiError(400,
                            fmt::format("Content-Length \"{}\" is not a number of octets (RFC 9112 §6.2)",
                                        shown(*length)));
        if (n > maxBody)
            return apiError(413, fmt::format("the body (Content-Length {}) is over the {} octets the control "
                                             "API reads",
                                             n, maxBody));
    }
    if (chunked && (status == 413 || status == 400)) {
        if (chunkedDeclared <= maxBody)
            return apiError(400,
                            "the chunked body is malformed: each chunk is its size in hex, CRLF, its data, "
                            "CRLF, and a chunk of size 0 ends the body (RFC 9112 §7.1)");
        return apiError(413,
                        fmt::format("the chunked body is over the {} octets the control API reads", maxBody));
    }
    if (const auto expect = headerValue(lines, "Expect"); expect && status == 417)
        return apiError(417, fmt::format("Expect \"{}\": only 100-continue is understood (RFC 9110 §10.1.1)",
                                         shown(*expect)));
    if (status == 413)
        return apiError(413, fmt::format("the body is over the {} octets the control API reads", maxBody));
    return apiError(status, fmt::format("{}: a header line the server cannot read (each is NAME: VALUE, RFC "
                                        "9112 §5), or a request it refuses before reading it",
                                        reasonPhrase(status)));
}

ControlApi::ControlApi(event_base* base, Shared& shared, ReloadFn reload, CheckStatusFn checkStatus)
    : base_(base), shared_(shared), reload_(std::move(reload)), checkStatus_(std::move(checkStatus)) {}

ControlApi::~ControlApi() {
    if (historyTimer_) event_free(historyTimer_);
    if (http_) evhttp_free(http_);
    if (fd_ >= 0) close(fd_);
}

void ControlApi::onHistoryTimer(evutil_socket_t, short, void* arg) {
    auto* api = static_cast<ControlApi*>(arg);
    api->sampleHistory(wallMs());
}

bool ControlApi::readToken(const std::string& path, std::string& error) {
    std::string t;
    if (!loadControlToken(path, t, error)) return false;
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

bool RequestHeadScanner::feed(std::string_view chunk) {
    for (char c : chunk) {
        if (done()) break;
        ++pos;
        if (c == '\0') {
            nul = true;
        } else if (c == '\n') {
            const bool empty = lineLen_ == 0 || (lineLen_ == 1 && lineIsCr_);
            if (empty && content_) end = pos;
            content_ = content_ || !empty;
            lineLen_ = 0;
        } else {
            lineIsCr_ = lineLen_ == 0 && c == '\r';
            ++lineLen_;
        }
    }
    return done();
}

// One control connection: the filter's state. Once the head has passed whole and clean, the rest of the
// connection goes through untouched: every response says "Connection: close", so evhttp reads no second
// head on it (a pipelined one is dropped with the connection).
struct ControlApi::Conn {
    std::shared_ptr<Conns> conns;
    bufferevent* bev = nullptr;   // the filter evhttp reads and writes
    bufferevent* sock = nullptr;  // the socket's, under it
    event* kick = nullptr;        // sends the last byte of what evhttp wrote (filterOut)
    event* wake = nullptr;  // the socket is writable again: runs the kick (filterOut; made at first need)
    evbuffer_cb_entry* outCb = nullptr;
    bool inKick = false;
    RequestHeadScanner head;
    bool passing = false;  // the head was clean: pass everything
    int refused = 0;       // 400 (NUL) or 431 (too long): evhttp gets a stand-in request, answered with it
    // onRequest has answered on this connection. Until then, whatever evhttp writes is its own doing: an
    // error page for a request it refused by itself (HTML), or a "100 Continue". filterOut holds it to the
    // kick and puts ownErrorResponse() in place of the page.
    bool answered = false;
    std::string headText;  // the request head as it came (for ownErrorResponse)
    bool chunked = false;  // Transfer-Encoding names chunked: the body passes through `chunks` too
    ChunkedBodyScanner chunks;
};

namespace {

// The body octets of `src` from `from` on, through the connection's chunk scanner (without copying them
// together).
void feedChunks(ControlApi::Conn* c, evbuffer* src, size_t from) {
    if (evbuffer_get_length(src) <= from) return;
    evbuffer_ptr at;
    evbuffer_ptr_set(src, &at, from, EVBUFFER_PTR_SET);
    const int k = evbuffer_peek(src, -1, &at, nullptr, 0);
    std::vector<evbuffer_iovec> v(size_t(std::max(k, 0)));
    evbuffer_peek(src, -1, &at, v.data(), k);
    for (const auto& e : v) c->chunks.feed({static_cast<const char*>(e.iov_base), e.iov_len});
}

bufferevent_filter_result filterIn(evbuffer* src, evbuffer* dst, ev_ssize_t, bufferevent_flush_mode,
                                   void* ctx) {
    auto* c = static_cast<ControlApi::Conn*>(ctx);
    const size_t n = evbuffer_get_length(src);
    if (c->refused) {
        evbuffer_drain(src, n);
        return BEV_OK;
    }
    if (c->passing) {
        if (c->chunked) feedChunks(c, src, 0);
        evbuffer_add_buffer(dst, src);
        return BEV_OK;
    }
    // Scan only the bytes not seen yet, without copying them together (a head that trickles in is scanned
    // once, not once per segment).
    const size_t upto = std::min(n, RequestHeadScanner::kMaxHead);
    if (c->head.pos < upto) {
        evbuffer_ptr at;
        evbuffer_ptr_set(src, &at, c->head.pos, EVBUFFER_PTR_SET);
        evbuffer_iovec v[16];
        while (!c->head.done() && c->head.pos < upto) {
            int k = evbuffer_peek(src, ev_ssize_t(upto - c->head.pos), &at, v, 16);
            int use = std::min(k, 16);
            for (int i = 0; i < use && !c->head.done(); ++i) {
                size_t len = std::min(v[i].iov_len, upto - c->head.pos);
                c->head.feed({static_cast<const char*>(v[i].iov_base), len});
            }
            if (k <= 16 || c->head.done()) break;
            evbuffer_ptr_set(src, &at, c->head.pos, EVBUFFER_PTR_SET);
        }
    }
    if (!c->head.done() && n < RequestHeadScanner::kMaxHead) return BEV_NEED_MORE;  // held back
    if (c->head.done() && !c->head.nul) {
        c->passing = true;
        c->headText.resize(std::min(n, c->head.end));
        evbuffer_copyout(src, c->headText.data(), c->headText.size());
        c->chunked = isChunked(c->headText);
        if (c->chunked) feedChunks(c, src, c->headText.size());
        evbuffer_add_buffer(dst, src);
        return BEV_OK;
    }
    // Refused: evhttp never sees the bytes, only a stand-in request that onRequest answers with the error.
    c->refused = c->head.nul ? 400 : 431;
    evbuffer_drain(src, n);
    static constexpr std::string_view kStandIn = "GET / HTTP/1.1\r\nHost: refused\r\n\r\n";
    evbuffer_add(dst, kStandIn.data(), kStandIn.size());
    return BEV_OK;
}

// The way out, unchanged but for when it empties. evhttp frees a connection (and shuts its socket down) as
// soon as the filter's output is empty, and a plain filter empties it by moving the bytes to the socket's
// bufferevent, not to the socket: a response followed by a close ("Connection: close", HTTP/1.0) would be
// lost. So the filter writes to the socket itself, and the output empties only once the kernel has every
// byte. libevent also leaves bytes that evhttp added while writing was off in the filter when evhttp turns
// writing on, and may call the filter before evhttp has set the callback that ends the response: so outside
// the connection's `kick` (an event that runs once evhttp has finished handing over the response and is
// waiting for it to be written) the last byte stays, and the kick writes it. When the socket is full,
// nothing of libevent's would call the filter again (no bytes wait on the socket's bufferevent, whose
// drain would): `wake`, the socket writable, runs the kick then. (Waiting on nothing there stalled a large
// response whose request came after the connection had been seen writable until evhttp's 10 s timeout.)
// evhttp's timeout then limits a client that stops reading, not one that reads a large response slowly.
void kickConn(evutil_socket_t, short, void* ctx);

// What evhttp wrote before any request reached onRequest (Conn::answered): in the kick, when evhttp has
// handed all of it over, an error page ("HTTP/1.1 400 Bad Request" … HTML) is replaced by
// ownErrorResponse()'s JSON, with evhttp's other fields (Date, Connection) kept. A "100 Continue" passes as
// it is. (libevent 2.2's evhttp_set_errorcb would let evhttp write the body itself; Debian 12 has 2.1.12.)
void replaceOwnError(ControlApi::Conn* c, evbuffer* src) {
    const size_t n = evbuffer_get_length(src);
    std::string out(n, '\0');
    evbuffer_copyout(src, out.data(), n);
    const size_t headEnd = out.find("\r\n\r\n");
    int status = 0;
    if (headEnd == std::string::npos || out.compare(0, 5, "HTTP/") != 0) return;
    const size_t sp = out.find(' ');
    if (sp == std::string::npos || sp > headEnd) return;
    std::from_chars(out.data() + sp + 1, out.data() + headEnd, status);
    if (status < 400) return;  // 100 Continue: the request goes on
    c->answered = true;
    const ApiResponse r = ownErrorResponse(status, c->headText, c->chunks.declared, kMaxRequestBody);
    std::string head = fmt::format("{} {} {}\r\n", out.substr(0, sp), r.status, reasonPhrase(r.status));
    // No body to a HEAD request (RFC 9110 §9.3.2): evhttp writes one to a HEAD it refused.
    const std::string_view req(c->headText);
    const size_t first = std::min(req.find_first_not_of("\r\n"), req.size());
    const bool hasBody = req.substr(first, 5) != "HEAD ";
    for (size_t at = out.find("\r\n") + 2; at < headEnd + 2;) {
        const size_t e = out.find("\r\n", at);
        const std::string_view field(out.data() + at, e - at);
        at = e + 2;
        auto is = [&](std::string_view name) {
            return field.size() > name.size() && field[name.size()] == ':' &&
                   strncasecmp(field.data(), name.data(), name.size()) == 0;
        };
        if (!is("Content-Length") && !is("Content-Type")) head.append(field).append("\r\n");
    }
    head += "Content-Type: application/json\r\n";
    if (!r.allow.empty()) head += fmt::format("Allow: {}\r\n", r.allow);
    head += fmt::format("Content-Length: {}\r\n\r\n", r.body.size());
    if (hasBody) head += r.body;
    evbuffer_drain(src, n);
    evbuffer_add(src, head.data(), head.size());
}

bufferevent_filter_result filterOut(evbuffer* src, evbuffer* dst, ev_ssize_t, bufferevent_flush_mode,
                                    void* ctx) {
    auto* c = static_cast<ControlApi::Conn*>(ctx);
    const size_t keep = c->inKick ? 0 : 1;
    const size_t before0 = evbuffer_get_length(src);
    if (before0 == 0) return BEV_OK;
    if (!c->answered) {
        if (!c->inKick) return BEV_NEED_MORE;  // evhttp's own: the kick judges it whole
        replaceOwnError(c, src);
    }
    const size_t before = evbuffer_get_length(src);
    if (c->wake && event_pending(c->wake, EV_WRITE, nullptr)) return BEV_NEED_MORE;  // the wake writes
    const evutil_socket_t fd = bufferevent_getfd(c->sock);
    // After a failed write (below) everything goes the plain way, to the socket's bufferevent. The peer is
    // gone then (EPIPE, ECONNRESET): that bufferevent meets the error itself and tells evhttp, which frees
    // the connection.
    if (fd < 0 || evbuffer_get_length(dst) != 0 ||
        (before > keep && evbuffer_write_atmost(src, fd, ev_ssize_t(before - keep)) < 0 && errno != EAGAIN &&
         errno != EWOULDBLOCK && errno != EINTR)) {
        evbuffer_add_buffer(dst, src);
        return BEV_OK;
    }
    const size_t n = evbuffer_get_length(src);
    if (n > keep) {  // the socket is full
        if (!c->wake) c->wake = event_new(bufferevent_get_base(c->sock), fd, EV_WRITE, kickConn, c);
        if (!c->wake || event_add(c->wake, nullptr) != 0) {
            evbuffer_add_buffer(dst, src);  // out of memory: queued, as a plain filter does
            return BEV_OK;
        }
    } else if (n != 0 && !c->inKick) {
        event_active(c->kick, 0, 0);
    }
    if (n == before) return BEV_NEED_MORE;
    // Bytes moved: BEV_OK restarts evhttp's write timeout, enabling reading again its read timeout, which
    // runs while evhttp waits for a response to be written (it reads to see the client close). Else a
    // client reading a large response slowly (7 MB of /metrics at 300 kB/s) was cut 10 s after its request.
    if (bufferevent_get_enabled(c->bev) & EV_READ) bufferevent_enable(c->bev, EV_READ);
    return BEV_OK;
}

void kickConn(evutil_socket_t, short, void* ctx) {
    auto* c = static_cast<ControlApi::Conn*>(ctx);
    bufferevent_data_cb r, w;
    bufferevent_event_cb e;
    void* arg;
    bufferevent_getcb(c->bev, &r, &w, &e, &arg);
    if (!e) return;  // evhttp has freed the connection: libevent destroys it later
    c->inKick = true;
    bufferevent_flush(c->bev, EV_WRITE, BEV_FLUSH);
    c->inKick = false;
}

void outputAdded(evbuffer*, const evbuffer_cb_info* info, void* ctx) {
    if (info->n_added) event_active(static_cast<ControlApi::Conn*>(ctx)->kick, 0, 0);
}

void freeConn(void* ctx) {
    auto* c = static_cast<ControlApi::Conn*>(ctx);
    if (c->outCb) evbuffer_remove_cb_entry(bufferevent_get_output(c->bev), c->outCb);
    if (c->kick) event_free(c->kick);
    if (c->wake) event_free(c->wake);
    c->conns->erase(c->bev);
    delete c;
}

}  // namespace

bufferevent* ControlApi::newConnection(event_base* base, void* arg) {
    auto* api = static_cast<ControlApi*>(arg);
    bufferevent* sock = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
    if (!sock) return nullptr;  // evhttp then makes its own (unfiltered) one: only when memory runs out
    auto* c = new Conn;
    c->conns = api->conns_;
    c->sock = sock;
    bufferevent* f = bufferevent_filter_new(sock, filterIn, filterOut, BEV_OPT_CLOSE_ON_FREE, freeConn, c);
    if (!f) {
        bufferevent_free(sock);
        delete c;
        return nullptr;
    }
    c->bev = f;
    c->kick = event_new(base, -1, 0, kickConn, c);
    c->outCb = evbuffer_add_cb(bufferevent_get_output(f), outputAdded, c);
    if (!c->kick || !c->outCb) {
        bufferevent_free(f);  // frees `c` too
        return nullptr;
    }
    (*api->conns_)[f] = c;
    return f;
}

bool ControlApi::serve(std::string& error) {
    http_ = evhttp_new(base_);
    evhttp_set_bevcb(http_, newConnection, this);
    // Every method evhttp knows reaches handle(), which answers the ones a resource does not take with a
    // JSON 405 and its Allow field; left to evhttp, a PUT got an HTML 501 page gslbctl and scripts cannot
    // read. (A method evhttp does not know still gets its own 400/501.)
    evhttp_set_allowed_methods(http_, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD | EVHTTP_REQ_PUT |
                                          EVHTTP_REQ_DELETE | EVHTTP_REQ_OPTIONS | EVHTTP_REQ_TRACE |
                                          EVHTTP_REQ_CONNECT | EVHTTP_REQ_PATCH);
    evhttp_set_max_body_size(http_, kMaxRequestBody);
    evhttp_set_timeout(http_, 10);
    evhttp_set_gencb(http_, onRequest, this);
    if (!evhttp_accept_socket_with_handle(http_, fd_)) {
        error = fmt::format("control API {}: cannot accept", listenText_);
        return false;
    }
    fd_ = -1;  // evhttp owns it now
    // The page's chart: a sample of the answer counters every interval, from the start (so the chart has
    // history by the time someone opens the page).
    historyTimer_ = event_new(base_, -1, EV_PERSIST, onHistoryTimer, this);
    double iv = history_.intervalSec();
    timeval tv{time_t(iv), suseconds_t((iv - double(time_t(iv))) * 1e6)};
    event_add(historyTimer_, &tv);
    onHistoryTimer(-1, 0, this);
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
    // Nor percent-encoded: the query decoder (evhttp) hands each value on as a C string, so
    // "a%00b.eval.test." reached explain as "a." and was answered REFUSED, where no name, site or address
    // holds a NUL octet.
    for (size_t i = path.find('%'); i != std::string::npos && i + 2 < path.size(); i = path.find('%', i + 1))
        if (path[i + 1] == '0' && path[i + 2] == '0')
            return apiError(400,
                            "a NUL octet (%00) in the request path or query: no name, site or address "
                            "holds one (write a name's NUL octet as \\000)");
    auto snap = shared_.holder.get();
    auto parts = splitPath(path);
    bool get = method == "GET" || method == "HEAD";
    if (starting_)
        return apiError(503,
                        "starting: the first health round and etcd's first read are running; gslbd answers "
                        "here once it answers DNS");
    if (parts.size() == 2 && parts[0] == "v1" && parts[1] == "status") {
        if (!get) return methodNotAllowed("GET, HEAD", "use GET for /v1/status");
        return status(*snap);
    }
    if (parts.size() == 2 && parts[0] == "v1" && parts[1] == "events") {
        if (!get) return methodNotAllowed("GET, HEAD", "use GET for /v1/events");
        return events(path);
    }
    if (parts.size() == 2 && parts[0] == "v1" && parts[1] == "explain") {
        if (!get) return methodNotAllowed("GET, HEAD", "use GET for /v1/explain");
        return explainQuery(*snap, path);
    }
    if (parts.size() == 2 && parts[0] == "v1" && parts[1] == "history") {
        if (!get) return methodNotAllowed("GET, HEAD", "use GET for /v1/history");
        return history();
    }
    if (parts.empty() || (parts.size() == 2 && parts[0] == "ui")) {
        if (!get) return methodNotAllowed("GET, HEAD", "use GET for the status page");
        return page(*snap, parts.empty() ? "" : parts[1], path);
    }
    if (parts.size() == 1 && parts[0] == "metrics") {
        if (!get) return methodNotAllowed("GET, HEAD", "use GET for /metrics");
        return prometheus(*snap);
    }
    bool known = (parts.size() == 2 && parts[0] == "v1" && parts[1] == "reload") ||
                 (parts.size() == 4 && parts[0] == "v1" && parts[1] == "sites") ||
                 (parts.size() == 6 && parts[0] == "v1" && parts[1] == "sites" && parts[3] == "services");
    if (!known) return apiError(404, fmt::format("no such endpoint: {} {}", method, path));
    if (method != "POST") return methodNotAllowed("POST", fmt::format("use POST for {}", path));
    std::string presented;
    // A site's agent_token_file token may post that site's reports (rtt and report) and nothing else.
    const bool agentPost = parts.size() == 4 && (parts[3] == "report" || parts[3] == "rtt");
    const auto siteToken = [&]() -> const std::string* {
        if (!agentPost) return nullptr;
        for (const auto& sc : snap->config.sites)
            if (sc.name == parts[2] && !sc.agentToken.empty()) return &sc.agentToken;
        return nullptr;
    };
    const std::string* agentToken = siteToken();
    if (!bearerToken(authorization, presented) ||
        !(sameToken(presented, token_) || (agentToken && sameToken(presented, *agentToken)))) {
        ++refused_;
        return apiError(401,
                        "a valid bearer token is required (Authorization: Bearer <token_file contents>)");
    }
    if (parts.size() == 2) {
        std::string message;
        bool ok = reload_(message);
        shared_.reloads[kReloadApi][ok ? 0 : 1].fetch_add(1, std::memory_order_relaxed);
        if (!ok) {
            return apiError(500, "reload failed, the previous configuration keeps serving: " + message);
        }
        return ApiResponse{200, jsonText(nlohmann::json{{"ok", true}, {"message", message}}) + "\n"};
    }
    const std::string& site = parts[2];
    // ?scope=member (gslbctl --member): a drain or enable of this member only.
    bool local = false;
    for (const auto& [k, v] : queryParams(path)) {
        if (parts.back() == "report" || parts.back() == "rtt") continue;
        if (k == "scope") {
            if (v != "member" && v != "cluster")
                return apiError(400, fmt::format("scope must be member or cluster, not \"{}\"", v));
            local = v == "member";
        }
    }
    if (parts.size() == 4) {
        if (parts[3] == "rtt") return rtt(*snap, site, body);
        if (parts[3] == "report") {
            ApiResponse r = report(*snap, site, body);
            // Only what this member accepted: the others run the same config and would refuse it too. With
            // etcd, written there once and read by every member; without it, this member's alone.
            if (r.status == 200 && etcdOn()) etcd_->publish(cluster::SharedReport{site, etcd_->self(), body});
            return r;
        }
        if (parts[3] == "drain" || parts[3] == "enable")
            return admin(*snap, site, "", parts[3] == "enable", local);
        return apiError(404, fmt::format("no such endpoint: {} {}", method, path));
    }
    if (parts[5] == "drain" || parts[5] == "enable")
        return admin(*snap, site, parts[4], parts[5] == "enable", local);
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
        case EVHTTP_REQ_PUT:
            method = "PUT";
            break;
        case EVHTTP_REQ_DELETE:
            method = "DELETE";
            break;
        case EVHTTP_REQ_OPTIONS:
            method = "OPTIONS";
            break;
        case EVHTTP_REQ_TRACE:
            method = "TRACE";
            break;
        case EVHTTP_REQ_CONNECT:
            method = "CONNECT";
            break;
        case EVHTTP_REQ_PATCH:
            method = "PATCH";
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
    evhttp_connection* evcon = evhttp_request_get_connection(req);
    auto conn = api->conns_->find(evcon ? evhttp_connection_get_bufferevent(evcon) : nullptr);
    const int refused = conn != api->conns_->end() ? conn->second->refused : 0;
    if (conn != api->conns_->end()) conn->second->answered = true;
    ApiResponse r;
    if (refused == 400) {
        r = apiError(400, "a NUL byte in the request line or a header");
    } else if (refused) {
        r = apiError(431,
                     fmt::format("the request head is longer than {} octets", RequestHeadScanner::kMaxHead));
    } else {
        try {
            r = api->handle(method, uri ? uri : "/", auth ? auth : "", body);
        } catch (const std::exception& e) {
            r = apiError(500, e.what());
        }
    }
    // One request per connection: the filter checks the first head only (see Conn).
    evhttp_add_header(evhttp_request_get_output_headers(req), "Connection", "close");
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", r.contentType.c_str());
    if (!r.allow.empty()) evhttp_add_header(evhttp_request_get_output_headers(req), "Allow", r.allow.c_str());
    evbuffer* out = evbuffer_new();
    evbuffer_add(out, r.body.data(), r.body.size());
    evhttp_send_reply(req, r.status, reasonPhrase(r.status), out);
    evbuffer_free(out);
}

}  // namespace gslb::server
