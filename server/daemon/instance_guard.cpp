#include "server/daemon/instance_guard.hpp"

#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "server/net/bind_error.hpp"

namespace gslb::server::service {

bool StartLock::acquire(int waitMs, std::string& error) {
    static constexpr char kName[] = "gslbd-start-lock";
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    // sun_path[0] == 0: the abstract namespace; the name is the bytes after it, without a terminator.
    std::memcpy(sa.sun_path + 1, kName, sizeof kName - 1);
    socklen_t len = socklen_t(offsetof(sockaddr_un, sun_path) + 1 + sizeof kName - 1);
    for (int waited = 0;; waited += 20) {
        int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            error = fmt::format("start lock: unix socket: {}", strerror(errno));
            return false;
        }
        if (bind(fd, reinterpret_cast<const sockaddr*>(&sa), len) == 0) {
            fd_ = fd;
            return true;
        }
        int e = errno;
        close(fd);
        if (e != EADDRINUSE) {
            error = fmt::format("start lock: {}", strerror(e));
            return false;
        }
        if (waited >= waitMs) {
            error = fmt::format("another gslbd has been starting for {} ms and still holds the start lock",
                                waited);
            return false;
        }
        timespec ts{0, 20 * 1000000};
        nanosleep(&ts, nullptr);
    }
}

void StartLock::release() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
}

bool probeExclusive(const std::vector<ListenAddr>& listen, std::string& error) {
    for (const auto& a : listen) {
        for (int type : {SOCK_DGRAM, SOCK_STREAM}) {
            int fam = a.addr.ss_family;
            int fd = socket(fam, type | SOCK_CLOEXEC, 0);
            const char* proto = type == SOCK_DGRAM ? "udp" : "tcp";
            if (fd < 0) {
                error = fmt::format("{} ({}): socket: {}", a.text, proto, strerror(errno));
                return false;
            }
            int one = 1;
            // The workers' sockets are IPv6-only too: [::]:53 and 0.0.0.0:53 are separate listeners.
            if (fam == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
            // SO_REUSEADDR (never SO_REUSEPORT) on TCP only: it lets the bind pass over connections in
            // TIME_WAIT, but a socket in LISTEN still conflicts. On UDP it would let us share a port with
            // any other SO_REUSEADDR socket, which is the very thing to detect.
            if (type == SOCK_STREAM) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
            int rc = bind(fd, reinterpret_cast<const sockaddr*>(&a.addr), a.len);
            int e = errno;
            close(fd);
            if (rc != 0) {
                if (e == EADDRINUSE)
                    error = fmt::format(
                        "{} ({}) is already in use: another gslbd or another server listens there (only one "
                        "gslbd may serve an address)",
                        a.text, proto);
                else
                    error = bindError(a, proto, e, unprivilegedPortStart());
                return false;
            }
        }
    }
    return true;
}

}  // namespace gslb::server::service
