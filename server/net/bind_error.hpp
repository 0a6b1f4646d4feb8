// What a failed bind says: shared by the workers (server/net/worker.cpp), which bind for real, and the
// start-up probe (server/daemon/instance_guard.cpp), which binds first to find an address already taken.
#pragma once
#include <string>

#include "server/conf/config.hpp"

namespace gslb::server {

/// The message for a failed bind of `a` ("udp" or "tcp"; `err` its errno): strerror, and for EACCES on a port
/// below net.ipv4.ip_unprivileged_port_start (1024 unless set, `unprivilegedStart`) what lets gslbd bind it:
/// starting as root with `[server] user` (it binds, then drops to that user), the capability
/// CAP_NET_BIND_SERVICE (the shipped systemd unit grants it; setcap on the binary), or a port of 1024 and up.
/// "Permission denied" alone said none of it.
std::string bindError(const ListenAddr& a, const char* proto, int err, int unprivilegedStart);

/// net.ipv4.ip_unprivileged_port_start (Linux 4.11+), or 1024 when it cannot be read.
int unprivilegedPortStart();

}  // namespace gslb::server
