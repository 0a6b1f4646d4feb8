#include "tools/agent/sockdiag.hpp"

#include <fmt/format.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>

namespace gslb::agent {

namespace {

constexpr int kTcpEstablished = 1;  // TCP_ESTABLISHED in the kernel's tcp_states.h

void putOp(std::vector<uint8_t>& p, uint8_t code, uint8_t yes, uint16_t no) {
    inet_diag_bc_op op{code, yes, no};
    auto* b = reinterpret_cast<const uint8_t*>(&op);
    p.insert(p.end(), b, b + sizeof op);
}

bool portWatched(std::span<const uint16_t> ports, uint16_t port) {
    return std::find(ports.begin(), ports.end(), port) != ports.end();
}

// v4-mapped IPv6 (::ffff:a.b.c.d, RFC 4291 §2.5.5.2): a dual-stack listener's IPv4 clients.
bool v4Mapped(const uint8_t* a) {
    static const uint8_t kPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return std::memcmp(a, kPrefix, 12) == 0;
}

}  // namespace

std::vector<uint8_t> portFilter(std::span<const uint16_t> ports) {
    // Per port a block of 20 octets: S_GE P (8), S_LE P (8), JMP to the end (4). A port test that fails jumps
    // to the next block (past the end from the last block: reject); both passing reach the JMP, which accepts
    // by landing exactly on the end. `yes` is one octet, so the long jump is the JMP's 16-bit `no`.
    std::vector<uint8_t> p;
    const size_t n = std::min<size_t>(ports.size(), 64);
    const size_t total = n * 20;
    for (size_t i = 0; i < n; ++i) {
        const size_t at = i * 20;
        const bool last = i + 1 == n;
        putOp(p, INET_DIAG_BC_S_GE, 8, uint16_t(last ? total - at + 4 : 20));
        putOp(p, 0, 0, ports[i]);  // the operand: op[1].no holds the port
        putOp(p, INET_DIAG_BC_S_LE, 8, uint16_t(last ? total - (at + 8) + 4 : 12));
        putOp(p, 0, 0, ports[i]);
        putOp(p, INET_DIAG_BC_JMP, 4, uint16_t(total - (at + 16)));
    }
    return p;
}

bool runPortFilter(std::span<const uint8_t> program, uint16_t sport) {
    long len = long(program.size());
    const uint8_t* bc = program.data();
    while (len > 0) {
        if (size_t(len) < sizeof(inet_diag_bc_op)) return false;
        inet_diag_bc_op op;
        std::memcpy(&op, bc, sizeof op);
        bool yes = true;
        switch (op.code) {
            case INET_DIAG_BC_NOP:
                break;
            case INET_DIAG_BC_JMP:
                yes = false;
                break;
            case INET_DIAG_BC_S_GE:
            case INET_DIAG_BC_S_LE: {
                if (size_t(len) < 2 * sizeof op) return false;
                inet_diag_bc_op arg;
                std::memcpy(&arg, bc + sizeof op, sizeof arg);
                yes = op.code == INET_DIAG_BC_S_GE ? sport >= arg.no : sport <= arg.no;
                break;
            }
            default:
                return false;
        }
        const int step = yes ? op.yes : op.no;
        if (step <= 0) return false;  // the kernel's audit refuses such a program; never loop here
        len -= step;
        bc += step;
    }
    return len == 0;
}

int parseDump(std::span<const uint8_t> buf, std::span<const uint16_t> ports, std::vector<TcpConn>& out,
              std::string& error) {
    size_t off = 0;
    while (buf.size() - off >= sizeof(nlmsghdr)) {
        nlmsghdr h;
        std::memcpy(&h, buf.data() + off, sizeof h);
        if (h.nlmsg_len < sizeof h || h.nlmsg_len > buf.size() - off) {
            error = fmt::format("sock_diag: a message of {} octets where {} are left", h.nlmsg_len,
                                buf.size() - off);
            return -1;
        }
        const uint8_t* body = buf.data() + off + sizeof h;
        const size_t bodyLen = h.nlmsg_len - sizeof h;
        off += std::min<size_t>(NLMSG_ALIGN(h.nlmsg_len), buf.size() - off);
        if (h.nlmsg_type == NLMSG_DONE) return 1;
        if (h.nlmsg_type == NLMSG_ERROR) {
            nlmsgerr e{};
            if (bodyLen >= sizeof e) std::memcpy(&e, body, sizeof e);
            error = fmt::format("sock_diag: the kernel refused the dump: {}", std::strerror(-e.error));
            errno = -e.error;
            return -1;
        }
        if (h.nlmsg_type != SOCK_DIAG_BY_FAMILY || bodyLen < sizeof(inet_diag_msg)) continue;
        inet_diag_msg m;
        std::memcpy(&m, body, sizeof m);
        if (m.idiag_state != kTcpEstablished) continue;
        TcpConn c;
        c.localPort = ntohs(m.id.idiag_sport);
        c.remotePort = ntohs(m.id.idiag_dport);
        if (!portWatched(ports, c.localPort)) continue;
        const auto* dst = reinterpret_cast<const uint8_t*>(m.id.idiag_dst);
        const auto* src = reinterpret_cast<const uint8_t*>(m.id.idiag_src);
        if (m.idiag_family == AF_INET) {
            c.family = 4;
            std::memcpy(c.remote, dst, 4);
            std::memcpy(c.local, src, 4);
        } else if (m.idiag_family == AF_INET6) {
            if (v4Mapped(dst)) {
                c.family = 4;
                std::memcpy(c.remote, dst + 12, 4);
                std::memcpy(c.local, v4Mapped(src) ? src + 12 : src, 4);
            } else {
                c.family = 6;
                std::memcpy(c.remote, dst, 16);
                std::memcpy(c.local, src, 16);
            }
        } else {
            continue;
        }
        // The attributes after the message: INET_DIAG_INFO holds struct tcp_info, as long as the kernel's
        // (an older kernel's is shorter: read only what it sent).
        size_t a = NLMSG_ALIGN(sizeof m);
        bool info = false;
        while (a + sizeof(rtattr) <= bodyLen) {
            rtattr ra;
            std::memcpy(&ra, body + a, sizeof ra);
            if (ra.rta_len < sizeof ra || ra.rta_len > bodyLen - a) break;
            if (ra.rta_type == INET_DIAG_INFO) {
                const size_t len = ra.rta_len - RTA_LENGTH(0);
                tcp_info ti{};
                std::memcpy(&ti, body + a + RTA_LENGTH(0), std::min(len, sizeof ti));
                if (len >= offsetof(tcp_info, tcpi_rtt) + sizeof ti.tcpi_rtt) c.rttUs = ti.tcpi_rtt;
                if (len >= offsetof(tcp_info, tcpi_min_rtt) + sizeof ti.tcpi_min_rtt) {
                    // ~0U: no sample yet (tcp_get_info reports the min-filter's initial value)
                    c.minRttUs = ti.tcpi_min_rtt == ~0U ? 0 : ti.tcpi_min_rtt;
                }
                info = true;
            }
            a += RTA_ALIGN(ra.rta_len);
        }
        if (info && c.sampleUs() > 0) out.push_back(c);
    }
    return 0;
}

namespace {

// One family's dump; `filter` empty: every established socket (the port is checked in parseDump).
bool dumpFamily(int fd, int family, const std::vector<uint8_t>& filter, std::span<const uint16_t> ports,
                std::vector<TcpConn>& out, std::string& error) {
    struct {
        nlmsghdr h;
        inet_diag_req_v2 r;
    } req{};
    rtattr ra{};
    req.h.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
    req.r.sdiag_family = uint8_t(family);
    req.r.sdiag_protocol = IPPROTO_TCP;
    req.r.idiag_states = 1U << kTcpEstablished;
    req.r.idiag_ext = 1U << (INET_DIAG_INFO - 1);
    iovec iov[3] = {{&req, sizeof req}, {&ra, 0}, {nullptr, 0}};
    req.h.nlmsg_len = sizeof req;
    if (!filter.empty()) {
        ra.rta_type = INET_DIAG_REQ_BYTECODE;
        ra.rta_len = uint16_t(RTA_LENGTH(filter.size()));
        iov[1].iov_len = sizeof ra;
        iov[2] = {const_cast<uint8_t*>(filter.data()), filter.size()};
        req.h.nlmsg_len += RTA_SPACE(filter.size());
    }
    sockaddr_nl nl{};
    nl.nl_family = AF_NETLINK;
    msghdr msg{};
    msg.msg_name = &nl;
    msg.msg_namelen = sizeof nl;
    msg.msg_iov = iov;
    msg.msg_iovlen = 3;
    if (sendmsg(fd, &msg, 0) < 0) {
        error = fmt::format("sock_diag: send: {}", std::strerror(errno));
        return false;
    }
    std::vector<uint8_t> buf(64 * 1024);
    for (;;) {
        ssize_t n = recv(fd, buf.data(), buf.size(), 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            error = fmt::format("sock_diag: receive: {}", std::strerror(errno));
            return false;
        }
        if (n == 0) return true;
        int r = parseDump({buf.data(), size_t(n)}, ports, out, error);
        if (r < 0) return false;
        if (r > 0) return true;
    }
}

}  // namespace

bool dumpConnections(std::span<const uint16_t> ports, std::vector<TcpConn>& out, std::string& error,
                     bool* kernelFiltered) {
    if (kernelFiltered) *kernelFiltered = true;
    int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (fd < 0) {
        error = fmt::format("sock_diag: cannot open a NETLINK_SOCK_DIAG socket: {}", std::strerror(errno));
        return false;
    }
    timeval tv{5, 0};  // a kernel that never answers must not hang the agent
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    const std::vector<uint8_t> filter = portFilter(ports);
    bool ok = true;
    for (int family : {AF_INET, AF_INET6}) {
        size_t before = out.size();
        if (dumpFamily(fd, family, filter, ports, out, error)) continue;
        // A kernel that refuses the filter program (EINVAL from its audit): dump unfiltered instead, the
        // ports are checked here anyway. Any other failure is reported.
        if (errno != EINVAL) {
            ok = false;
            break;
        }
        out.resize(before);
        if (kernelFiltered) *kernelFiltered = false;
        close(fd);
        fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
        if (fd < 0 || !dumpFamily(fd, family, {}, ports, out, error)) {
            ok = false;
            break;
        }
    }
    if (fd >= 0) close(fd);
    return ok;
}

}  // namespace gslb::agent
