// The state the members of an NS set share, kept in etcd (doc/ns-set.md "Shared state in etcd"; the keys are
// in server/cluster/etcd_wire.hpp). Control thread only; the query path never waits for it: everything read
// here lands in the StateTable and the snapshot the workers already read, and everything written goes out
// asynchronously.
//
// - Connecting: a lease of `ttl` seconds (this member's liveness: its verdicts, probe ownership and member
//   entry are attached to it), this member's entry, the writes taken while etcd was away, then one range read
//   of the whole prefix (every drain, report, verdict, owner, member), then a watch from the revision after
//   it. The member is "live" once the watch is created. Every step that fails moves to the next endpoint at
//   once; after each endpoint has failed once the member is "cut" and tries again every kRetrySec.
// - Live: watch events apply in etcd's revision order (a drain and an enable of one site written through two
//   members end as the later revision says: no clock of ours orders them). The lease is renewed every
//   min(1 s, ttl/3); a renewal that fails, a watch that ends, or a write that fails cuts the member off.
// - Writes (a drain or enable taken by this member's API, a report) are applied here first, then queued and
//   written in order; the queue survives a cut (one entry per key: the latest), so nothing taken while etcd
//   is away is lost: it is written when etcd is back, before the full read, and orders after what others
//   wrote meanwhile.
// - Cut: the member keeps serving with the last state it read (drains also mirrored in state_dir, read at
//   start) and its own checks; it says so once in the log and as an event, and in status(). When etcd
//   returns it converges within kRetrySec plus one round trip.
// - At start, runInitial() connects before the first DNS answer, bounded by its wait: a member that starts
//   while etcd is down answers with its mirrored state after every endpoint failed once (or the wait ended).
// - Bad data (etcd_wire.hpp decodeSharedKey refuses it) is logged once per key and reason, counted, and never
//   applied.
#pragma once
#include <event2/event.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "server/cluster/etcd_wire.hpp"

namespace gslb::server {
struct Snapshot;
}

namespace gslb::server::cluster {

inline constexpr double kRetrySec = 0.5;  // s between two rounds of connection attempts when cut off
inline constexpr double kRequestTimeoutSec =
    1.0;  // s for one request (a hung endpoint costs this, then the next)
inline constexpr size_t kMaxQueuedWrites = 10000;  // writes kept while cut off (the oldest go beyond)

/// What /v1/status "cluster"."etcd", /metrics gslbd_etcd_* and the status page show.
struct EtcdStatus {
    bool configured = false;
    std::string state = "off";  // off | connecting | live | cut
    std::string endpoint;       // the endpoint in use (or tried last)
    std::string prefix;
    int64_t revision = 0;     // the last revision read
    int64_t sinceUnixMs = 0;  // when `state` last changed
    std::string lastError;    // why the last attempt or the cut
    int64_t leaseId = 0, ttlSec = 0;
    uint64_t applied = 0;  // drains, enables and reports read from etcd that changed something here
    uint64_t refused = 0;  // keys refused (bad or hostile data)
    uint64_t written = 0;  // writes etcd took
    uint64_t cuts = 0;     // times this member was cut off since the start
    size_t queued = 0;     // writes waiting for etcd
};

class EtcdSync {
  public:
    struct Hooks {
        /// A drain or enable read from etcd (full read or watch); true when it changed a state here.
        std::function<bool(const SharedAdmin&)> admin;
        /// A report another member took (watch only: a report is a sample of its moment).
        std::function<void(const SharedReport&)> report;
        /// This member's entry (PREFIX member/SELF), built when it is written.
        std::function<SharedMember()> member;
        /// After the state switched between live and not, and after every change of the shared verdicts or
        /// owners (the health monitor re-decides).
        std::function<void()> changed;
    };

    EtcdSync(event_base* base, Hooks hooks);
    ~EtcdSync();
    EtcdSync(const EtcdSync&) = delete;
    EtcdSync& operator=(const EtcdSync&) = delete;

    /// After every publish: [cluster] etcd, etcd_prefix, the TLS files and this member's URL. A change of any
    /// of them reconnects; none: nothing changes. No etcd: stops (and forgets the shared cache).
    /// `ttlSec`: the lease's TTL (at least 2: etcd's own minimum is about 1.5 s).
    void apply(const Snapshot& snap, int64_t ttlSec);
    bool configured() const;
    bool live() const;
    const std::string& self() const;

    /// Connects now and runs `base` until live, or every endpoint failed once, or `maxWaitSec` passed.
    void runInitial(double maxWaitSec);

    /// Queues a write of `item` (its lease: this member's for verdicts, owners and the member entry; none
    /// for drains and reports) and sends it when live. A later write of the same key replaces a queued one.
    void publish(const SharedItem& item);
    /// Deletes `key` (this member's verdict or ownership it gives up), when live; dropped when not.
    void remove(const SharedItem& item);
    /// Claims `owner` (a txn: put under this member's lease when nobody holds it); `done(true)` when this
    /// member holds it now. Not live: done(false) at once.
    void claim(const SharedOwner& owner, std::function<void(bool)> done);
    /// Gives up `owner` (a key this member holds): a txn deletes it only while it still holds this member's
    /// value (EtcdClient::deleteIfValue), so a key another member holds by then stays. `done(true)` when it
    /// was deleted. Not live: done(false) at once (the lease's expiry frees the key then).
    void release(const SharedOwner& owner, std::function<void(bool)> done);
    /// Rewrites this member's entry soon (debounced to once per renewal period).
    void memberChanged();

    /// Verdicts, owners and member entries as last read (key -> item): the live ones (etcd deletes a key
    /// whose lease expired, and the watch says so).
    const std::map<std::string, SharedItem>& cache() const;
    EtcdStatus status() const;

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace gslb::server::cluster
