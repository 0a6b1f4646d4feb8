// One run of one health check on the control thread's event_base (doc/design.md "Metric sources"): a
// non-blocking TCP connect with a deadline, then whatever the check's kind does on the connection
// (server/probes/health_tcp.cpp: nothing; server/probes/health_http.cpp: GET and read the response). Internal
// to server/probes/health*.cpp and their tests.
#pragma once
#include <event2/event.h>
#include <sys/socket.h>

#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace gslb::server::health {

/// What to check and how; owned by the monitor's entry, read by each run (not changed while a run is in
/// flight).
struct CheckSpec {
    std::string type = "tcp";  // tcp | http | https
    sockaddr_storage addr{};
    socklen_t addrLen = 0;
    std::string target;  // "192.0.2.10:80", "[2001:db8::1]:80"
    std::string path = "/";
    std::string host;  // Host header (http)
    std::vector<int> expectStatus = {200};
    std::string expectBody;
    double timeout = 2;  // s: connect + response
    // https: the name sent as SNI and checked against the certificate (RFC 6125; an IP literal is matched
    // against the certificate's IP addresses and sent as no SNI, RFC 6066 §3); empty: none sent or checked.
    std::string tlsName;
    std::string caFile;     // https: PEM CA bundle to verify against; empty: the system store
    bool insecure = false;  // https: no certificate verification at all
};

struct CheckResult {
    bool ok = false;
    std::string reason;    // "connect: Connection refused", "timeout", "http 503", "tcp connect", "http 200"
    double l4Ms = NAN;     // connect time (when the connect finished)
    double l7Ms = NAN;     // request sent -> response complete (http, when complete)
    double elapsedMs = 0;  // start -> result
    int64_t certNotAfterUnix = 0;  // https: the server certificate's notAfter (s since the epoch), 0: unknown
};

/// Fills addr/addrLen/target from an address literal and a port; false when it is not an address.
bool setTarget(CheckSpec& spec, const std::string& address, int port);

class CheckRun {
  public:
    using Done = std::function<void(const CheckResult&)>;
    /// A run for spec.type ("tcp" or "http"); `spec` must outlive the run.
    static std::unique_ptr<CheckRun> make(event_base* base, const CheckSpec& spec, Done done);
    virtual ~CheckRun();
    CheckRun(const CheckRun&) = delete;
    CheckRun& operator=(const CheckRun&) = delete;

    /// Starts a run (precondition: !running()). May finish (and call done) before it returns.
    void start();
    /// Stops a run in flight without calling done.
    void cancel();
    bool running() const { return running_; }

  protected:
    CheckRun(event_base* base, const CheckSpec& spec, Done done);
    virtual void connected() = 0;         // the TCP connection is up (l4Ms_ is set)
    virtual void onIo(short /*what*/) {}  // an event asked for with want()
    virtual void reset() {}               // per-run state of the kind, before each start
    virtual void release() {}             // frees what the kind holds on the connection (every end of a run)

    void want(short what);  // (re)arms the socket event: EV_READ / EV_WRITE, optionally | EV_PERSIST
    void succeed(std::string reason, double l7Ms = NAN);
    void fail(std::string reason);
    int64_t certNotAfterUnix_ = 0;  // https: carried into the result
    double sinceStartMs() const;
    double nowMs() const;

    event_base* base_;
    const CheckSpec& spec_;
    int fd_ = -1;
    double l4Ms_ = NAN;

  private:
    static void onSocket(evutil_socket_t, short what, void* arg);
    static void onDeadline(evutil_socket_t, short, void* arg);
    void finish(CheckResult r);
    void cleanup();

    Done done_;
    bool running_ = false;
    bool connecting_ = false;
    event* io_ = nullptr;
    event* deadline_ = nullptr;
    int64_t startUs_ = 0;  // monotonicUs() at start()
};

std::unique_ptr<CheckRun> makeTcpCheck(event_base* base, const CheckSpec& spec, CheckRun::Done done);
std::unique_ptr<CheckRun> makeHttpCheck(event_base* base, const CheckSpec& spec, CheckRun::Done done);
/// HTTPS (server/probes/health_https.cpp): TLS through libevent's bufferevent_openssl on the connected
/// socket, then the http check's request and judgement. L4: the TCP connect; L7: request sent (after the
/// handshake)
/// -> response complete.
std::unique_ptr<CheckRun> makeHttpsCheck(event_base* base, const CheckSpec& spec, CheckRun::Done done);

}  // namespace gslb::server::health
