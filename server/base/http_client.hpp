// The control thread's HTTP client (libevent's evhttp), shared by the metric sources' scrapes and queries
// (probes/sources.hpp) and etcd's v3 JSON gateway (cluster/etcd_client.hpp): one connection to one address,
// no retries (the next round is the retry), one timeout, a cap on the body, and each answer (or why there is
// none) handed to one callback. PollTimers is the rhythm of a periodic GET: the next round, and the deadline
// of this one.
#pragma once
#include <event2/event.h>
#include <event2/http.h>
#include <openssl/types.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "server/base/clock.hpp"

namespace gslb::server {

/// What one request got.
struct HttpAnswer {
    int status = 0;  // the HTTP status; 0: no answer (connect, read or timeout failure)
    std::string body;
    bool failed = false;  // libevent's error callback ran; `error` says why
    evhttp_request_error error = EVREQ_HTTP_TIMEOUT;
};

/// Why a request got no answer, for a log line or a status field ("no answer in time", "cannot connect", …).
const char* answerError(const HttpAnswer& a);

class HttpClient {
  public:
    using Done = std::function<void(const HttpAnswer&)>;
    using Headers = std::vector<std::pair<std::string, std::string>>;

    /// To `host` (a numeric address; IPv6 without brackets) and `port`. Nothing connects until a request.
    /// With `tls` (not owned; must outlive the client): HTTPS through libevent's bufferevent_openssl, the
    /// server's certificate verified by `tls`'s settings and against `host` (an IP address SAN), one
    /// connection per request (evhttp cannot reconnect an SSL bufferevent).
    HttpClient(event_base* base, std::string host, int port, SSL_CTX* tls = nullptr);
    ~HttpClient();  // cancels what is in flight: no callback follows
    HttpClient(const HttpClient&) = delete;
    HttpClient& operator=(const HttpClient&) = delete;

    /// For the requests that follow: evhttp's timeout (connect, and each wait for the peer, s) and the
    /// largest body taken (octets; a larger one fails with EVREQ_HTTP_DATA_TOO_LONG).
    void setTimeout(double seconds);
    void setMaxBody(size_t octets);

    /// Sends METHOD `uri` with a Host header ("ADDR:PORT", "[V6]:PORT"), then `headers`, then `body`. True:
    /// `done` runs once, later, on the loop, unless cancel() (or the destructor) comes first. False: libevent
    /// would not start it, and `done` is never called.
    bool send(evhttp_cmd_type method, const std::string& uri, const Headers& headers, const std::string& body,
              Done done);
    /// As send(), for a streamed answer (etcd's watch): `chunk` gets each piece of the body as it arrives
    /// (the answer's body stays empty), then `done` once when the stream ends or fails.
    using Chunk = std::function<void(const char* data, size_t len)>;
    bool sendStream(evhttp_cmd_type method, const std::string& uri, const Headers& headers,
                    const std::string& body, Chunk chunk, Done done);
    /// Cancels every request in flight; their callbacks are not called.
    void cancel();
    size_t inFlight() const { return calls_.size(); }

  private:
    struct Call;
    static void onError(evhttp_request_error e, void* arg);
    static void onResponse(evhttp_request* req, void* arg);
    static void onChunk(evhttp_request* req, void* arg);
    evhttp_connection* tlsConnection();
    bool start(evhttp_cmd_type method, const std::string& uri, const Headers& headers,
               const std::string& body, Chunk chunk, Done done);

    event_base* base_;
    std::string host_;
    int port_;
    SSL_CTX* tls_ = nullptr;
    timeval timeout_{};
    size_t maxBody_ = 0;
    evhttp_connection* conn_ = nullptr;
    std::vector<std::unique_ptr<Call>> calls_;  // in flight
};

/// The two timers of a periodic poll: when the next round starts, and when the current one gives up.
class PollTimers {
  public:
    PollTimers(event_base* base, std::function<void()> onRound, std::function<void()> onDeadline);
    ~PollTimers();
    PollTimers(const PollTimers&) = delete;
    PollTimers& operator=(const PollTimers&) = delete;

    void nextRoundIn(double seconds);  // (re)schedules the next round
    void deadlineIn(double seconds);   // (re)arms this round's deadline
    void clearDeadline();              // the round is over in time

  private:
    static void fire(evutil_socket_t, short, void* arg);
    std::function<void()> onRound_, onDeadline_;
    event* round_ = nullptr;
    event* deadline_ = nullptr;
};

}  // namespace gslb::server
