// What the AF_XDP fast path can tell about an interface without privileges (server/net/xdp/path.hpp): built
// with or without libxdp, for the daemon's start and for `gslbd --check`, so both say the same words.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "server/conf/config.hpp"
#include "server/net/xdp/path.hpp"

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

std::string linkProblem(const std::string& ifname, uint32_t ourIndex, uint32_t ourProg,
                        const LinkFacts& now) {
    if (!now.exists) {
        if (now.indexByName == 0) return "the interface is gone";
        // A veth or VLAN made again under the same name is a new interface: the AF_XDP sockets were bound to
        // the queues of the old one, and re-making them means new sockets for the workers. A restart does.
        return fmt::format(
            "the interface is gone; a new {} (index {}, was {}) has its name: restart gslbd to serve it "
            "through "
            "AF_XDP; its UDP queries are answered on the sockets meanwhile",
            ifname, now.indexByName, ourIndex);
    }
    if (!now.up)
        return fmt::format(
            "the interface is down; the fast path serves again by itself once it is up "
            "(ip link set {} up)",
            ifname);
    if (!now.carrier)
        return "no carrier (the link is down: cable, switch port, a veth's peer); the fast path serves again "
               "by itself once the link is up";
    if (now.progId == ourProg) return {};
    // Someone took gslbd's program off (a bpf_link refuses `ip link set dev X xdp off`; `bpftool link
    // detach` does it) or put another in its place: attaching it again here would undo what an operator
    // did on purpose, so gslbd says so and leaves it; a restart attaches it again.
    if (now.progId == 0)
        return fmt::format(
            "gslbd's XDP program was detached from {} by someone else (bpftool link detach?): "
            "restart gslbd to attach it again; its UDP queries are answered on the sockets "
            "meanwhile",
            ifname);
    return fmt::format(
        "another XDP program (id {0}) is attached to {1} in place of gslbd's: `ip link show {1}`; "
        "restart gslbd once it is gone; the other program takes the frames it wants, the "
        "sockets answer what reaches them",
        now.progId, ifname);
}

std::vector<sockaddr_storage> interfaceAddresses(const std::string& ifname) {
    std::vector<sockaddr_storage> out;
    ifaddrs* all = nullptr;
    if (getifaddrs(&all) != 0) return out;
    for (ifaddrs* a = all; a; a = a->ifa_next) {
        if (!a->ifa_addr || !a->ifa_name || ifname != a->ifa_name) continue;
        int f = a->ifa_addr->sa_family;
        if (f != AF_INET && f != AF_INET6) continue;
        sockaddr_storage ss{};
        std::memcpy(&ss, a->ifa_addr, f == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6));
        out.push_back(ss);
    }
    freeifaddrs(all);
    return out;
}

namespace {

std::string addressText(const sockaddr_storage& ss) {
    char buf[INET6_ADDRSTRLEN] = "?";
    if (ss.ss_family == AF_INET)
        inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(ss).sin_addr, buf, sizeof buf);
    else if (ss.ss_family == AF_INET6)
        inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(ss).sin6_addr, buf, sizeof buf);
    return buf;
}

}  // namespace

std::string listenProblem(const std::string& ifname, const std::vector<ListenAddr>& listen,
                          const std::vector<sockaddr_storage>& addrs) {
    for (const auto& l : listen)
        for (const auto& a : addrs)
            if (l.addr.ss_family == a.ss_family && (l.wildcard || sameAddress(l.addr, a, false))) return {};
    std::string ls, as;
    for (const auto& l : listen) ls += (ls.empty() ? "" : ", ") + l.text;
    for (const auto& a : addrs) as += (as.empty() ? "" : ", ") + addressText(a);
    uint16_t port = 53;
    if (!listen.empty())
        port = ntohs(listen[0].addr.ss_family == AF_INET6
                         ? reinterpret_cast<const sockaddr_in6&>(listen[0].addr).sin6_port
                         : reinterpret_cast<const sockaddr_in&>(listen[0].addr).sin_port);
    return fmt::format(
        "none of the listen addresses ({}) is an address of {} ({}): the fast path takes only queries to a "
        "listen address, and clients reach it at its own; listen on one of them (or on 0.0.0.0:{} / [::]:{})",
        ls, ifname, as.empty() ? "it has none" : as, port, port);
}

}  // namespace gslb::server::xdp
