// One [cluster] peer polled with a GET on a rhythm: what PeerMonitor (GET /v1/verdicts, probes/peers.hpp)
// and AdminSync (GET /v1/admin, admin_sync.hpp) share. The member's numeric address, one HttpClient (one
// poll in flight at a time), PollTimers (the next round, and this round's deadline, past which the poll is
// cancelled), and what the polls got (PollStatus). The owner says what a 200's body means and what follows
// a result (its log lines and events); the next round is due `intervalSec` after every result, answered or
// failed, so a failing peer is tried on the same rhythm and a member stopped (SIGSTOP) polls as soon as it
// runs again (its round timer is due).
#pragma once
#include <event2/event.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "server/conf/config.hpp"

namespace gslb::server {
class HttpClient;
class PollTimers;
struct HttpAnswer;
}  // namespace gslb::server

namespace gslb::server::cluster {

/// What one peer's polls got (control thread; GET /v1/status and /metrics show it).
struct PollStatus {
    std::string url;
    std::string state = "unknown";  // unknown (not polled yet) | ok | failing
    int64_t lastSuccessMonoMs = 0;  // 0: never (monotonicMs clock, for ages)
    int64_t lastSuccessUnixMs = 0;
    std::string
        lastError;  // the last failure's: "connect or read failed", "timeout after 1 s", "http 404", …
    uint64_t polls = 0, failures = 0;
};

struct PollTiming {
    double timeoutSec = 1;  // s: evhttp's timeout for one poll (the connect, and each wait for the peer)
    double deadlineSec =
        1;  // s after a poll starts: it is cancelled, an error "timeout after <timeoutSec> s"
    double intervalSec = 1;  // s from a result to the next poll
};

class PeerPoller {
  public:
    /// A 200 answer's body: returns "" when it was taken, else why not (the poll then failed with that).
    using TakeBody = std::function<std::string(const std::string& body)>;
    /// After every result, once status() has it: `error` ("" on success) and the state before it.
    using Done = std::function<void(const std::string& error, const std::string& stateBefore)>;

    /// GET `path` of `member`, answers up to `maxBody` octets. Null when the member's address cannot be
    /// written numerically (the config checked it). Nothing is sent before poll().
    static std::unique_ptr<PeerPoller> make(event_base* base, const ClusterMember& member, std::string path,
                                            size_t maxBody, PollTiming timing, TakeBody take, Done done);
    ~PeerPoller();  // cancels the poll in flight: no callback follows
    PeerPoller(const PeerPoller&) = delete;
    PeerPoller& operator=(const PeerPoller&) = delete;

    /// For the polls that follow (a round already due keeps its time).
    void setTiming(const PollTiming& t) { timing_ = t; }
    /// Polls now, unless a poll is in flight.
    void poll();
    const PollStatus& status() const { return st_; }

  private:
    PeerPoller() = default;
    void answered(const HttpAnswer& a);
    void finish(std::string error, const std::string* body);

    std::string path_;
    PollTiming timing_;
    TakeBody take_;
    Done done_;
    PollStatus st_;
    std::unique_ptr<HttpClient> http_;
    std::unique_ptr<PollTimers> timers_;
};

}  // namespace gslb::server::cluster
