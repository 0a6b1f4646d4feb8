// The control API (doc/design.md "Control API and gslbctl"): HTTP on the control thread's libevent loop
// (evhttp), JSON with nlohmann-json. Every change needs `Authorization: Bearer <token from token_file>`;
// reads do not.
//
//   GET  /v1/status                               sites, services, states, metrics, their age, answer counts
//   GET  /metrics                                 Prometheus text format (version 0.0.4)
//   GET  /v1/events[?since=SEQ&limit=N]           recent events (health changes, drains, reloads, scrapes)
//   GET  /v1/explain?name=N&type=A&client=ADDR[&ecs=PREFIX][&format=text]
//                                                 one simulated query, stage by stage (explain.hpp)
//   GET  /v1/history                              answers per (hostname, site, address) per sample interval
//   GET  /  and /ui/page.css, /ui/page.js         the status page (api_page.hpp)
//   GET  /?name=N[&type=A][&client=ADDR][&ecs=PREFIX]
//                                                 the page with its explain form's answer (api_page.hpp)
//   POST /v1/sites/{site}/report                  {"cpu":35,"sessions_used":…,"sessions_max":…,
//                                                  "loads":{"busy":0.3},"services":{"192.0.2.10":{"connections":900}}}
//   POST /v1/sites/{site}/rtt                     {"prefixes":[{"prefix":"198.51.100.0/24","rtt_ms":12.4,
//                                                  "samples":17}]}: a site agent's round-trip times
//                                                  (gslbd-agent(8))
//   POST /v1/sites/{site}/drain | enable[?scope=member]
//   POST /v1/sites/{site}/services/{address}/drain | enable[?scope=member]
//                                                 scope=member: this member only, never written to etcd
//   POST /v1/reload                               reload config and zones (as SIGHUP), answer ok or the error
//
// With [cluster] etcd, the drains, enables and reports this API takes are written to etcd once and every
// member applies them from there (server/cluster/etcd_sync.hpp); without etcd they stay on this member.
//
// Errors are JSON {"error": "..."} with 400 (bad body or value), 401 (token), 404 (unknown site, service or
// path), 405 (method), 500 (reload failed). A refused request changes nothing: bodies are validated whole
// before anything is written. Each handler lives in its own file: api_report.cpp, api_rtt.cpp, api_admin.cpp,
// api_status.cpp, api_metrics.cpp, api_events.cpp, api_page.cpp, api_history.cpp, api_explain.cpp (reload is
// in api.cpp, it only calls the daemon back).
#pragma once
#include <event2/event.h>
#include <event2/http.h>

#include <nlohmann/json_fwd.hpp>

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "metrics/load_factor.hpp"
#include "server/state/admin_log.hpp"
#include "server/cluster/etcd_sync.hpp"
#include "server/state/history.hpp"
#include "server/probes/health.hpp"
#include "server/probes/sources.hpp"
#include "server/responder/shared.hpp"

namespace gslb::server {

struct ApiResponse {
    int status = 200;
    std::string body;
    std::string contentType = "application/json";
    // A 405's Allow field, the methods the resource takes (RFC 9110 §15.5.6, §10.2.1). The initializer keeps
    // ApiResponse{status, body} free of GCC's -Wmissing-field-initializers.
    std::string allow = {};
};

class ControlApi {
  public:
    using ReloadFn = std::function<bool(std::string& message)>;
    using CheckStatusFn = std::function<CheckStatus(uint32_t slot)>;
    using SourceStatusFn = std::function<std::vector<SourceStatus>()>;
    using QuorumStatusFn = std::function<QuorumStatus()>;

    struct Conn;  // one connection's filter state (api.cpp)
    using Conns = std::unordered_map<bufferevent*, Conn*>;

    ControlApi(event_base* base, Shared& shared, ReloadFn reload, CheckStatusFn checkStatus);
    /// What GET /v1/status and /metrics show of the metric sources (doc/design.md "Metric sources"); none
    /// when unset.
    void setSourceStatus(SourceStatusFn fn) { sourceStatus_ = std::move(fn); }
    /// The health quorum's state in /v1/status and /metrics (doc/ns-set.md); none when unset.
    void setQuorum(QuorumStatusFn status) { quorumStatus_ = std::move(status); }
    ~ControlApi();

    /// Binds the HTTP listener and reads the token. False and `error` when either fails.
    bool start(const ControlConf& conf, std::string& error);
    /// start() in two steps: bind() (and read the token) while the process still has its privileges, serve()
    /// once the privileges are dropped and before the initial health round and etcd's first read.
    bool bind(const ControlConf& conf, std::string& error);
    bool serve(std::string& error);
    /// While starting (from serve() until gslbd answers DNS): every request gets 503 "starting", so none
    /// waits the start out in the listen queue and none reaches a half-started daemon (a reload in the
    /// middle of the health round).
    void setStarting(bool starting) { starting_ = starting; }
    /// [cluster] etcd (cluster/etcd_sync.hpp; not owned, may be null): drains, enables and reports this API
    /// takes are written there for every member.
    void setEtcd(cluster::EtcdSync* etcd) { etcd_ = etcd; }
    /// A drain or enable read from etcd: applied to the table, logged and recorded when it changed a state,
    /// kept in the admin log (so state_dir mirrors it). Unknown sites and services are skipped (a member
    /// running another config). True when a state changed.
    bool applySharedAdmin(const Snapshot& s, const cluster::SharedAdmin& a);
    /// A report another member took, read from etcd: validated and applied as a POST would be; a refusal is
    /// logged (never applied).
    void applySharedReport(const Snapshot& s, const cluster::SharedReport& r);
    /// Called on the control thread after a drain or enable changed the admin state (to persist it).
    void setAdminChanged(std::function<void()> fn) { adminChanged_ = std::move(fn); }
    /// Re-reads the token file (after a reload). False and `error` when it cannot be read; the old token
    /// stays.
    bool readToken(const std::string& path, std::string& error);

    /// Socket-free entry point (doc/design.md "Principles" 1), used by the evhttp callback and by the unit
    /// tests.
    ApiResponse handle(const std::string& method, const std::string& path, const std::string& authorization,
                       const std::string& body);

    ApiResponse report(const Snapshot& s, const std::string& site, const std::string& body);
    /// POST /v1/sites/{site}/rtt: a site agent's round-trip times per client prefix (gslbd-agent(8),
    /// server/state/rtt_report.hpp), written into the snapshot's RttTable at once, whole or not at all (400
    /// with the entry and why; 404 unknown site; 409 when no hostname's policy has an `rtt` stage).
    ApiResponse rtt(const Snapshot& s, const std::string& site, const std::string& body);
    /// What the agents sent, per site (for /v1/status and /metrics): reports taken and refused, the time of
    /// the last one taken (monotonic ms) and how many prefixes it carried.
    struct RttSiteStats {
        uint64_t taken = 0, refused = 0;
        int64_t lastMs = 0;
        size_t lastPrefixes = 0;
        std::string lastError;
    };
    const std::map<std::string, RttSiteStats>& rttStats() const { return rttStats_; }
    /// A drain or enable of a site (address empty) or a service, recorded in the admin log; `local`: on this
    /// member only (?scope=member): with etcd, not written there.
    ApiResponse admin(const Snapshot& s, const std::string& site, const std::string& address, bool enable,
                      bool local = false);
    /// The admin log the drains are recorded in (the daemon's, restored from state_dir); by default one
    /// of this object's own.
    void setAdminLog(cluster::AdminLog* log) { adminLog_ = log ? log : &ownAdminLog_; }
    ApiResponse status(const Snapshot& s);
    /// GET /v1/explain?name=…&type=A&client=ADDR[&ecs=PREFIX][&format=text] (api_explain.cpp).
    ApiResponse explainQuery(const Snapshot& s, const std::string& path);
    ApiResponse prometheus(const Snapshot& s);
    /// GET /v1/events; `path` carries the query string.
    ApiResponse events(const std::string& path);
    /// GET / (file "") and GET /ui/FILE (page.css, page.js); `path` carries the query string (the explain
    /// form's fields, api_page.hpp).
    ApiResponse page(const Snapshot& s, const std::string& file, const std::string& path);
    /// GET /v1/history: the answer history's samples and series (history.hpp).
    ApiResponse history();
    /// Takes one sample of the answer counters into the history (the control loop's timer calls it every
    /// AnswerHistory::intervalSec(); tests call it directly).
    void sampleHistory(int64_t unixMs);

  private:
    static void onRequest(evhttp_request* req, void* arg);
    /// evhttp's bufferevent callback: each connection reads through a filter that holds the request head
    /// back until it is whole and refuses one with a NUL byte (see RequestHeadScanner).
    static bufferevent* newConnection(event_base* base, void* arg);
    // Shared with each connection's filter context: a filter freed after this object (libevent may finalize
    // a bufferevent later) still unregisters itself safely.
    std::shared_ptr<Conns> conns_ = std::make_shared<Conns>();
    static void onHistoryTimer(evutil_socket_t, short, void* arg);

    event_base* base_;
    Shared& shared_;
    ReloadFn reload_;
    CheckStatusFn checkStatus_;
    SourceStatusFn sourceStatus_;
    QuorumStatusFn quorumStatus_;
    evhttp* http_ = nullptr;
    int fd_ = -1;  // bound, not yet served
    std::function<void()> adminChanged_;
    cluster::EtcdSync* etcd_ = nullptr;
    bool etcdOn() const { return etcd_ && etcd_->configured(); }
    nlohmann::json etcdJson() const;  // /v1/status "cluster"."etcd" (api_status.cpp)
    cluster::AdminLog ownAdminLog_;
    cluster::AdminLog* adminLog_ = &ownAdminLog_;
    bool starting_ = false;  // setStarting()
    std::string listenText_;
    event* historyTimer_ = nullptr;
    AnswerHistory history_;
    std::string token_;
    std::map<std::string, metrics::LoadHistory> loadHistory_;  // per site, across reloads
    std::set<std::string> unreadLogged_;                       // "site\0key" reported but read by no stage
    uint64_t reports_ = 0, refused_ = 0;
    std::map<std::string, RttSiteStats> rttStats_;  // by site name, across reloads
};

/// Finds the end of an HTTP request head (request line and header fields, RFC 9112 §2.1) in bytes fed to it
/// in pieces, and any NUL byte before it. evhttp reads header lines as C strings: a NUL would silently cut
/// a header (an Authorization "Bearer TOKEN\0junk" arrives as "Bearer TOKEN"), so the control API refuses
/// the request instead (RFC 9110 §5.5 allows rejecting it). Line ends are "\n" or "\r\n", as evhttp reads
/// them; empty lines before the request line do not end the head (RFC 9112 §2.2: a server may skip them).
struct RequestHeadScanner {
    static constexpr size_t kMaxHead = 64 * 1024;  // a longer head is refused (431, RFC 6585 §5)
    size_t pos = 0;                                // bytes fed so far
    size_t end = 0;    // offset just past the empty line that ends the head; 0 while it has not come
    bool nul = false;  // a NUL byte came before the end (feeding stops there)
    /// Scans the next `chunk` of the connection's bytes (those from offset `pos` on). Stops at the end of
    /// the head or at a NUL; returns done().
    bool feed(std::string_view chunk);
    bool done() const { return end != 0 || nul; }

  private:
    size_t lineLen_ = 0;
    bool lineIsCr_ = false;  // the line so far is exactly "\r"
    bool content_ = false;   // a non-empty line has come
};

/// {"error": message} with `status`.
ApiResponse apiError(int status, const std::string& message);

/// Follows a chunked request body (RFC 9112 §7.1) as evhttp 2.1 reads it, for the one thing evhttp does not
/// say: whether the body it refuses as too large (413) declared more than the limit or was malformed. Each
/// chunk: a line with its size in hex (empty lines between chunks are skipped, as evhttp does), then that
/// many octets. `declared` sums the sizes so far (saturating at UINT64_MAX).
struct ChunkedBodyScanner {
    uint64_t declared = 0;
    void feed(std::string_view chunk);

  private:
    uint64_t dataLeft_ = 0;  // octets of the current chunk still to skip
    std::string line_;       // the size line so far (bounded: a longer one is not a size)
};

/// The control API's request body limit (evhttp_set_max_body_size): a larger body is refused with 413.
inline constexpr size_t kMaxRequestBody = 1 << 20;

/// The JSON error for a request evhttp refuses by itself, before any handler runs, with an HTML page: a
/// malformed request line, an HTTP version other than 1.x, a method it does not know, a Content-Length that
/// is not a number, a body over `maxBody` or a malformed chunked one, an Expect other than 100-continue. The
/// control connection's filter puts this in place of evhttp's page (api.cpp), so that every error of the API
/// is
/// {"error": …} as its handlers' are. `status` is evhttp's; `head` the request head as it came (empty if none
/// ended); `chunkedDeclared` the octets a chunked body declared so far (ChunkedBodyScanner). The status may
/// change: evhttp calls a malformed chunked body too large (413), so a 413 for a chunked body that declared
/// at most `maxBody` octets becomes 400. Sources: RFC 9112 §3 (request line), §2.3 (version), §6.2
/// (Content-Length), §7.1 (chunked); RFC 9110 §10.1.1 (Expect), §15.5.14 (413), §15.6.2 (501).
ApiResponse ownErrorResponse(int status, std::string_view head, uint64_t chunkedDeclared, size_t maxBody);

/// 405 {"error": message} with Allow: `allow` (e.g. "GET, HEAD"): the resource exists, not for this method.
ApiResponse methodNotAllowed(const std::string& allow, const std::string& message);

/// The reason phrase of an HTTP status code the control API sends (RFC 9110 §15; RFC 6585 §5 for 431);
/// "Error" for any other.
const char* reasonPhrase(int status);

/// `j` as JSON text (`indent` < 0: one line). Never throws: strings holding invalid UTF-8 (an echoed path,
/// a parse error quoting the bytes it choked on) get U+FFFD in place of each bad byte, where nlohmann's
/// dump() would throw type_error 316 and turn a 400/404 into a 500.
std::string jsonText(const nlohmann::json& j, int indent = -1);

/// The decoded key=value pairs of the query string of `path` ("/v1/events?since=3" -> {{"since","3"}}), in
/// order; empty when there is none or it is malformed.
std::vector<std::pair<std::string, std::string>> queryParams(const std::string& path);

/// "2026-12-01T09:30:00.123Z" for milliseconds since the epoch (UTC).
std::string isoTime(int64_t unixMs);

}  // namespace gslb::server
