// Report forwarding between [cluster] members (doc/ns-set.md): a site report a
// member accepted is sent once to each peer, so an agent needs one address. On the control loop, never in the
// way of the original request: its answer does not wait, and a slow or dead peer only fills its own queue.
#pragma once
#include <event2/event.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace gslb::server {

class HttpClient;

/// Marks a request a member sends to its peers (value: the sender's member URL) and one gslbctl sends to
/// each member itself (value "gslbctl"): a marked report is never forwarded again, so there are no loops and
/// no storms, whatever the members' lists say.
inline constexpr const char* kForwardedHeader = "X-Gslbd-Forwarded";

/// One request to one peer.
struct PeerRequest {
    std::string peer;  // the member URL, "http://ADDRESS:PORT"
    std::string path;  // "/v1/sites/east/report"
    std::string body;
    std::string token;   // bearer token: every member has the same [control] token_file contents
    std::string origin;  // this member's URL, sent in kForwardedHeader
};

/// Per-peer counters, kept across reloads (a peer left out of [cluster] keeps its numbers until restart).
struct PeerCounters {
    uint64_t ok = 0;       // the peer answered 2xx
    uint64_t failed = 0;   // no answer within the timeout, refused, or not 2xx
    uint64_t dropped = 0;  // not sent: the peer's queue was full (the oldest waiting request goes)
    std::string lastError;
};

class PeerForwarder {
  public:
    /// Sends `r`; calls `done(ok, error)` exactly once, later, on the same loop.
    using Done = std::function<void(bool ok, const std::string& error)>;
    using SendFn = std::function<void(const PeerRequest& r, Done done)>;

    static constexpr size_t kMaxQueued = 64;  // per peer, waiting behind the one in flight
    static constexpr int kTimeoutMs = 2000;   // per request (connect and answer)

    /// `send` empty: HTTP POST with libevent's evhttp client on `base` (the unit tests give their own).
    explicit PeerForwarder(event_base* base, SendFn send = {});
    ~PeerForwarder();
    PeerForwarder(const PeerForwarder&) = delete;
    PeerForwarder& operator=(const PeerForwarder&) = delete;

    /// Queues `r` for its peer. One request per peer is in flight at a time, so a peer applies a site's
    /// reports in the order this member took them.
    void forward(PeerRequest r);

    const std::map<std::string, PeerCounters>& counters() const { return counters_; }
    /// Requests waiting or in flight for `peer`.
    size_t pending(const std::string& peer) const;

  private:
    struct Peer {
        std::deque<PeerRequest> queue;
        bool busy = false;
    };
    void pump(const std::string& peer);
    void httpSend(const PeerRequest& r, Done done);

    event_base* base_;
    SendFn send_;
    std::map<std::string, Peer> peers_;
    std::map<std::string, PeerCounters> counters_;
    std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // callbacks after destruction do nothing
    // httpSend's, by peer URL; each sends "Connection: close", so every request has a connection of its own.
    // Declared last, so it goes first: its requests are cancelled before anything they would touch.
    std::map<std::string, std::unique_ptr<HttpClient>> clients_;
};

}  // namespace gslb::server
