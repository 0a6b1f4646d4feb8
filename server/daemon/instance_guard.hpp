// One gslbd per DNS address (doc/operating.md). The workers bind with SO_REUSEPORT so the kernel spreads
// queries over them; the same option would let a second gslbd (same user) join those sockets silently and
// take part of the queries, so a drain on one instance would reach only some answers. Before the workers
// bind, every listen address is bound once *without* SO_REUSEPORT: that fails with EADDRINUSE when anything
// already holds the address, including an overlapping wildcard (0.0.0.0 vs 127.0.0.1, [::] vs [::1]).
#pragma once
#include <string>
#include <vector>

#include "server/conf/config.hpp"

namespace gslb::server::service {

/// Held from before the probe until the workers' sockets are bound, so two instances starting at the same
/// moment cannot both pass the probe. An abstract unix socket ("\0gslbd-start-lock"): one per network
/// namespace, like the ports it guards; the kernel drops it when the process exits, so a crash leaves no
/// stale lock.
class StartLock {
  public:
    StartLock() = default;
    ~StartLock() { release(); }
    StartLock(const StartLock&) = delete;
    StartLock& operator=(const StartLock&) = delete;

    /// Waits up to `waitMs` for another starting instance to finish binding. False and `error` on timeout
    /// or when unix sockets are not available.
    bool acquire(int waitMs, std::string& error);
    void release();

  private:
    int fd_ = -1;
};

/// Binds UDP and TCP on each address exclusively (no SO_REUSEPORT; TCP with SO_REUSEADDR so our own
/// connections in TIME_WAIT from a previous run do not count) and closes the sockets again. False and
/// `error` ("127.0.0.1:10053 (udp) is already in use: another gslbd or another DNS server listens there")
/// at the first address that is taken.
bool probeExclusive(const std::vector<ListenAddr>& listen, std::string& error);

}  // namespace gslb::server::service
