#include "server/net/bind_error.hpp"

#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace gslb::server {

int unprivilegedPortStart() {
    int start = 1024;
    if (FILE* f = fopen("/proc/sys/net/ipv4/ip_unprivileged_port_start", "re")) {
        if (fscanf(f, "%d", &start) != 1) start = 1024;
        fclose(f);
    }
    return start;
}

std::string bindError(const ListenAddr& a, const char* proto, int err, int unprivilegedStart) {
    const auto* sin = reinterpret_cast<const sockaddr_in*>(&a.addr);
    const auto* sin6 = reinterpret_cast<const sockaddr_in6*>(&a.addr);
    const int port = ntohs(a.addr.ss_family == AF_INET6 ? sin6->sin6_port : sin->sin_port);
    std::string m = fmt::format("{} ({}): bind: {}", a.text, proto, strerror(err));
    if (err == EACCES && port < unprivilegedStart)
        m += fmt::format(
            ": port {} is below {} and needs root or CAP_NET_BIND_SERVICE: start gslbd as root with [server] "
            "user = \"gslbd\" (it binds, then drops to that user), run it from the shipped systemd unit "
            "(which "
            "grants the capability), give the binary the capability (setcap cap_net_bind_service=+ep), or "
            "listen on a port of {} or above",
            port, unprivilegedStart, unprivilegedStart);
    return m;
}

}  // namespace gslb::server
