// The transport of converging drains (server/state/admin_log.hpp has the rule): every [cluster] member
// polls each other member's GET /v1/admin on the control thread (HttpClient) every kIntervalSec and hands
// the changes it reads to the daemon, which adopts the newer ones (ControlApi::adoptChanges).
//
// - Any [cluster] polls, with or without health_quorum: a drain is the operator's word for the NS set.
// - At start, before the first answer, runInitialRound() asks every peer at once and waits for them (at most
//   kInitialWaitSec), so a member that was down during a drain comes back drained instead of answering with
//   the drained site until its first poll. A peer that is down (connection refused) costs nothing, and one
//   that is starting at the same moment answers GET /v1/admin while it starts (ControlApi::setStarting);
//   a peer that does not answer in time (hung, cut off) costs the wait, logged once per peer.
// - A member that was stopped (SIGSTOP, a hung VM) polls as soon as it runs again: its poll timer is due.
// - A poll that fails leaves everything as it is; the next round tries again. One log line when a peer
//   starts failing and one when it answers again; status() has each peer's last success, last error and the
//   changes taken from it (GET /v1/status "cluster"."admin_sync", /metrics gslbd_cluster_admin_sync_*).
#pragma once
#include <event2/event.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "server/cluster/peer_poller.hpp"
#include "server/conf/config.hpp"
#include "server/state/admin_log.hpp"

namespace gslb::server::cluster {

inline constexpr double kIntervalSec = 1.0;     // s between two polls of one peer
inline constexpr double kTimeoutSec = 1.0;      // s for one poll
inline constexpr double kInitialWaitSec = 1.0;  // s: the longest runInitialRound() waits

/// One peer's GET /v1/admin polls, and what they changed here.
struct AdminSyncStatus : PollStatus {
    uint64_t changesApplied = 0;  // site or service states changed by its answers, since the start
};

class AdminSync {
  public:
    /// `adopt` gets each answered poll's changes and the peer's URL (control thread), and returns how many
    /// states they changed.
    using Adopt = std::function<size_t(const std::vector<RemoteChange>& changes, const std::string& peer)>;
    AdminSync(event_base* base, Adopt adopt);
    ~AdminSync();
    AdminSync(const AdminSync&) = delete;
    AdminSync& operator=(const AdminSync&) = delete;

    /// After every publish, with the published snapshot's [cluster]: the peers are its members but this
    /// one; a peer kept by URL keeps its rhythm, a new one is polled at once. No [cluster] (or no self):
    /// nothing is polled.
    void apply(const ClusterConf& cluster);
    /// Polls every peer now and runs `base` until each has answered or failed, or kInitialWaitSec passed.
    void runInitialRound();
    /// Every peer, by URL.
    std::vector<AdminSyncStatus> status() const;

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace gslb::server::cluster
