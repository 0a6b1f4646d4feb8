// The state every thread of the daemon shares: the snapshot holder the workers answer from, the counters
// they write (one row per answering thread) and the control API reads, the RRL table, the per-client
// connection and transfer counts, and each worker's TCP slot. The workers (server/net/worker.hpp), the
// AF_XDP path (server/net/xdp/path.hpp) and the control API (server/control/api.hpp) all take it by
// reference; it lives here, below all of them, so that none has to include another to reach it.
#pragma once
#include <event2/event.h>

#include <atomic>
#include <cstdint>
#include <memory>

#include "server/conf/config.hpp"
#include "server/responder/client_limits.hpp"
#include "server/responder/rrl.hpp"
#include "server/responder/stats.hpp"
#include "server/state/snapshot.hpp"

namespace gslb::server {

namespace xdp {
class Path;
}

/// What a worker publishes of its TCP connections so that another can ask it to make room when the table
/// is full (tcp_max_connections counts all workers together).
struct TcpSlot {
    std::atomic<int64_t> oldest{INT64_MAX};  // steady-clock µs of its least recently active connection
    std::atomic<int> evict{0};               // connections other workers asked it to close
    event* wake = nullptr;                   // made active (from any thread) after `evict` is raised
};

/// State every worker shares.
struct Shared {
    SnapshotHolder holder;
    std::atomic<int> tcpConnections{0};
    std::atomic<int> axfrActive{0};  // transfers in flight (axfr_max_concurrent caps it)
    // [answerRow()]: one row per answering thread, each written by that thread alone; read (summed) by the
    // control API. Sized by sizeStats() before the workers are made.
    std::unique_ptr<WorkerStats[]> stats{new WorkerStats[kMaxWorkers]};
    size_t statRows = kMaxWorkers;
    void sizeStats(size_t rows) {
        stats.reset(new WorkerStats[rows]);
        statRows = rows;
    }
    TcpSlot tcp[kMaxWorkers];                        // [worker id]
    std::atomic<int> workers{0};                     // how many of `tcp` are in use
    std::atomic<int> xdpSockets{0};                  // AF_XDP sockets serving (server/net/xdp/path.hpp)
    std::atomic<const xdp::Path*> xdpPath{nullptr};  // set while the path serves (its kernel drop counts)
    std::unique_ptr<RateLimiter> rrl;     // made at start-up, its size from the first config; null: no RRL
    std::atomic<uint64_t> rrlLimited{0};  // buckets limited at the last sweep (GET /metrics)
    ClientCounter tcpPerClient;           // open TCP connections by client (tcp_max_connections_per_client)
    ClientCounter axfrPerClient;          // transfers in flight by client (axfr_max_concurrent_per_client)
    // Reloads, [trigger: kReloadSighup, kReloadApi][result: 0 ok, 1 failed]; counted on the control thread,
    // read by /metrics and /v1/status.
    std::atomic<uint64_t> reloads[2][2]{};
};

enum ReloadTrigger { kReloadSighup = 0, kReloadApi = 1 };

}  // namespace gslb::server
