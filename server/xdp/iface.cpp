// What the AF_XDP fast path can tell about an interface without privileges (server/xdp/path.hpp): built with
// or without libxdp, for the daemon's start and for `gslbd --check`, so both say the same words.
#include <fmt/format.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "server/xdp/path.hpp"

namespace gslb::server::xdp {
namespace {

// IFF_LOOPBACK from SIOCGIFFLAGS (lo, or any interface the kernel flags as a loopback).
bool isLoopback(const std::string& ifname) {
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    ifreq r{};
    std::snprintf(r.ifr_name, sizeof r.ifr_name, "%s", ifname.c_str());
    bool loop = ioctl(fd, SIOCGIFFLAGS, &r) == 0 && (r.ifr_flags & IFF_LOOPBACK);
    close(fd);
    return loop;
}

}  // namespace

std::string fallbackLine(const std::string& ifname, const std::string& why) {
    return fmt::format("xdp on {}: {}; its UDP queries are answered on the sockets", ifname, why);
}

std::string interfaceProblem(const std::string& ifname, uint32_t* ifindex) {
    uint32_t i = if_nametoindex(ifname.c_str());
    if (ifindex) *ifindex = i;
    if (i == 0) return fmt::format("no such interface ({})", strerror(errno));
    // A loopback device has no link to answer over: frames sent from an AF_XDP socket on lo come back into
    // lo's own receive path, where IPv4 answers were lost (tried by a new user: IPv4 timed out, IPv6
    // answered, the counters said both were sent). Loopback traffic stays on the sockets.
    if (isLoopback(ifname)) return "a loopback interface, which the fast path does not serve";
    return {};
}

}  // namespace gslb::server::xdp
