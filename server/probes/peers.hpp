// The peers' health verdicts for [cluster] health_quorum (metrics/health/quorum.hpp has the
// rule): every other member's GET /v1/verdicts, polled on the control thread's libevent loop with libevent's
// evhttp client, kept with the time each verdict was observed so stale ones stop counting.
//
// - Poll interval: the shortest health-check interval of the config (each member checks on that rhythm, so
//   polling faster would only fetch the same verdicts), at least 0.1 s, at most 10 s, 5 s when there are no
//   checks. Timeout: the interval, within 0.5..1 s (a peer slower than 1 s is as good as out of reach; below
//   0.5 s one busy moment of a peer would count as out of reach).
// - A verdict's age (PeerVerdict::ageMs) = the age the peer gave ("age_ms": since its last check result for
//   that service) + the time since we fetched it. Nothing else ages: a failing poll just leaves the old
//   verdicts to grow old, and HealthMonitor treats them as stale past its max age (health.hpp).
// - Only [cluster] with health_quorum polls; without it apply() stops everything.
// - After each poll (answered or failed) the round callback runs: HealthMonitor re-combines every slot, so
//   both a new verdict and a verdict turning stale reach the StateTable within one poll interval.
#pragma once
#include <event2/event.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "metrics/health/quorum.hpp"
#include "server/cluster/peer_poller.hpp"

namespace gslb::server {

struct Snapshot;

/// One peer as the poller sees it (control thread only; GET /v1/status "health_quorum", /metrics).
struct PeerStatus : cluster::PollStatus {
    size_t verdicts = 0;  // services in its last answer
};

/// One verdict of a peer's answer, its observation time moved onto our monotonic clock.
struct ParsedVerdict {
    metrics::Health health = metrics::Health::Unknown;
    int64_t observedMonoMs = 0;  // nowMonoMs - age_ms
};

/// Maximum age_ms taken from a peer (about 31 years): a larger one is clamped, so it still reads as stale.
inline constexpr int64_t kMaxPeerAgeMs = 1'000'000'000'000;

/// Parses one peer's GET /v1/verdicts body (api.hpp ControlApi::verdicts) into `out`, keyed
/// "site\0address". Entries without a string site and address or a numeric age_ms are skipped (a verdict
/// without a result yet has "age_ms": null); a negative age reads as 0, a larger one than kMaxPeerAgeMs as
/// that; a health other than "up"/"down" is Unknown. Returns "" or why the whole body is unusable (not JSON,
/// no "services" array). Never throws: the body comes from the network.
std::string parsePeerVerdicts(std::string_view body, int64_t nowMonoMs,
                              std::map<std::string, ParsedVerdict>& out);

class PeerMonitor {
  public:
    explicit PeerMonitor(event_base* base);
    ~PeerMonitor();
    PeerMonitor(const PeerMonitor&) = delete;
    PeerMonitor& operator=(const PeerMonitor&) = delete;

    /// After every publish: the peers are [cluster] members except this one (selfIndex); a member kept by
    /// URL keeps its verdicts. Starts polling new peers at once.
    void apply(const Snapshot& snap);
    /// Called after every poll result (control thread).
    void setOnRound(std::function<void()> fn) { onRound_ = std::move(fn); }

    int quorum() const { return quorum_; }                // 0: health_quorum not set
    size_t members() const { return members_; }           // [cluster] members, this one included
    double pollIntervalSec() const { return interval_; }  // s
    double pollTimeoutSec() const { return timeout_; }    // s
    /// Appends, for each peer, its verdict on (site, address) and that verdict's age at `nowMonoMs`
    /// (monotonicMs()); ageMs -1 when the peer never gave one.
    void verdicts(const std::string& site, const std::string& address, int64_t nowMonoMs,
                  std::vector<metrics::health::PeerVerdict>& out) const;
    std::vector<PeerStatus> status() const;

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    std::function<void()> onRound_;
    int quorum_ = 0;
    size_t members_ = 0;
    double interval_ = 5, timeout_ = 1;
};

}  // namespace gslb::server
