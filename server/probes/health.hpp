// Active health checks of every site service (doc/design.md "Metric sources"), run on the control thread's
// libevent loop: non-blocking TCP connects and HTTP GETs, rise/fall hysteresis, smoothed FlashBack times.
// Results are written into the snapshot's lock-free StateTable (health, FlashBack l4/l7), which the query
// path reads.
//
// Contract with the rest of the server (server/daemon/main.cpp, server/control/api.cpp):
// - constructed once with the control event_base;
// - apply(snapshot) after every publish (start-up and each reload): starts checks for new (service slot,
// check)
//   pairs, keeps state and history of unchanged ones, stops removed ones;
// - runInitialRound(): at start-up, before the listeners open, runs one round of every check and returns when
// all
//   finished or timed out (bounded by the largest timeout), so the first answer is not a guess;
// - status(slot): what GET /v1/status and GET /metrics show for one service slot.
//
// Health quorum ([cluster] health_quorum, which needs [cluster] etcd; doc/ns-set.md "Shared state in etcd"):
// the checks give this member's own verdict per slot; each member writes it to etcd (PREFIX
// verdict/SITE/ADDRESS/MEMBER, with its FlashBack times) under its lease, whose TTL is the verdict's
// freshness (a member that dies or loses etcd loses its votes when the lease expires, without anyone polling
// it), and the health written into the StateTable, and used for the site flag, is metrics/health/quorum.hpp's
// combination of the own verdict with the other members' live verdicts as etcd holds them. A verdict is
// written when it changes, or when a FlashBack time moves by more than a quarter (a steady back end costs
// etcd no write per check). refreshQuorum() re-combines every slot (after each change of etcd's verdicts);
// the switch to and from the own view is logged once and recorded as an event. Cut off from etcd, a member
// has no other verdicts: it decides on its own view (and says so).
#pragma once
#include <event2/event.h>

#include <cstdint>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "metrics/health/quorum.hpp"

namespace gslb::server {

struct Snapshot;
namespace cluster {
class EtcdSync;
}

/// Upper bounds (seconds) of the check-duration histogram of GET /metrics (gslbd_check_duration_seconds):
/// from a loopback connect (~0.1 ms) to the longest timeout worth having; +Inf is implied.
inline constexpr double kCheckDurationBuckets[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                   0.1,    0.25,  0.5,    1,     2.5,  5,     10};
inline constexpr size_t kCheckDurationBucketCount = std::size(kCheckDurationBuckets);

/// What one service slot's checks look like now (control thread only).
struct CheckStatus {
    bool checked = false;              // a check is configured for this slot
    std::string check;                 // check name(s), comma-separated when several hostnames check the slot
    std::string type;                  // tcp | http | https
    std::string target;                // "addr:port" actually checked
    std::string state = "unknown";     // up | down | unknown: what the selector uses (quorum applied)
    std::string ownState = "unknown";  // up | down | unknown: this member's checks alone
    bool quorum = false;               // health_quorum is on: the three below mean something
    metrics::health::QuorumOutcome votes;
    int64_t quorumMaxAgeMs = 0;  // peers' verdicts older than this do not count
    std::string lastError;       // last failure reason ("http 503", "connect: Connection refused", "timeout")
    int64_t lastChangeUnixMs = 0;  // wall clock of the last up/down change (0: never)
    std::string
        lastChangeReason;  // why it changed last: "down: http 503 after 3 failures", "up after 2 successes"
    uint64_t flaps = 0;    // state changes since start
    uint64_t successes = 0, failures = 0;
    double lastLatencyMs = -1;     // last check's time, -1 when none
    double l4Ms = -1, l7Ms = -1;   // smoothed FlashBack times, -1 when unknown
    int64_t certNotAfterUnix = 0;  // https: the server certificate's notAfter (s since the epoch), 0: unknown
    // Probe ownership (live on [cluster] etcd; false otherwise: this member probes everything itself):
    // whether this member runs the checks, and the members holding the service's owner keys (this one
    // included when it holds one), whose verdicts a member that does not probe uses.
    bool ownership = false;
    bool probedHere = true;
    std::vector<std::string> owners;
    // Every finished check's duration (successes and failures, a timeout counts its full time), cumulative
    // over the slot's checks: durationBuckets[i] counts runs <= kCheckDurationBuckets[i] (not cumulative
    // across buckets; GET /metrics sums them), count and sum (seconds) cover every run.
    uint64_t durationBuckets[kCheckDurationBucketCount] = {};
    uint64_t durationCount = 0;
    double durationSumSec = 0;
};

/// Probe ownership's rendezvous rank of `member` for owner key `n` of a service (doc/ns-set.md "Shared state
/// in etcd"): FNV-1a, 64 bits, over "SITE\0ADDRESS\0N\0MEMBER" (N in decimal). The highest-ranked of a key's
/// candidates holds it. A fixed function rather than std::hash, whose values belong to one standard library:
/// members built apart must rank alike (Thaler and Ravishankar's highest random weight).
uint64_t ownerRank(const std::string& site, const std::string& address, int n, const std::string& member);

/// How long (s) a holder keeps an owner key it had to take back (the higher-ranked candidate it released it
/// for did not claim it within a check interval) before releasing it again: a candidate that never claims
/// (cut off from etcd, yet its lease alive) costs one hand-over per this.
inline constexpr double kRebalanceSpacingSec = 30;

/// Seconds from the end of the start-up round (where every check ran at once) to a check's first periodic
/// run: 0.5 to 1.5 intervals by its `stagger` (0..1, its rank among the checks started together). From then
/// on each check repeats one interval after its last start, so the checks cover the whole interval evenly,
/// and none runs again sooner than half an interval after its start-up run.
double firstPeriodicDelay(double intervalSec, double stagger);

/// The member-level quorum state (GET /v1/status "health_quorum", /metrics).
struct QuorumStatus {
    int quorum = 0;        // 0: health_quorum not set
    size_t members = 0;    // [cluster] members, this one included
    bool ownView = false;  // at least one checked service is decided on this member's view alone
    size_t ownViewServices = 0;
    int64_t sinceUnixMs = 0;    // when ownView last changed (0: never)
    size_t votingMembers = 0;   // members with a live verdict in etcd, this one included
    int64_t verdictTtlSec = 0;  // the lease TTL that bounds a verdict's life
};

class HealthMonitor {
  public:
    explicit HealthMonitor(event_base* base);
    ~HealthMonitor();
    HealthMonitor(const HealthMonitor&) = delete;
    HealthMonitor& operator=(const HealthMonitor&) = delete;

    void apply(const Snapshot& snap);
    void runInitialRound();
    CheckStatus status(uint32_t serviceSlot) const;

    /// [cluster] etcd: own verdicts written there, the others' read from there (may be null; not owned; must
    /// outlive this monitor's use of it). Used while etcd->configured().
    void setEtcd(cluster::EtcdSync* etcd);
    /// Re-combines every slot with the other members' verdicts as etcd holds them now (after each change of
    /// etcd's verdicts or owners).
    void refreshQuorum();
    QuorumStatus quorumStatus() const;

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace gslb::server
