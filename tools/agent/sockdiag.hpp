// The kernel's own round-trip times of a site's live TCP connections, read through NETLINK_SOCK_DIAG
// (sock_diag(7), the inet_diag dump that `ss -ti` prints): no packet capture and no privilege beyond reading
// socket diagnostics, which Linux gives every user for TCP sockets.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace gslb::agent {

/// One established TCP connection on a watched local port.
struct TcpConn {
    uint8_t family = 4;    // 4 or 6; an IPv4-mapped IPv6 peer (::ffff:a.b.c.d) is given as 4
    uint8_t remote[16]{};  // the client's address (4 or 16 octets used)
    uint8_t local[16]{};
    uint16_t localPort = 0, remotePort = 0;
    uint32_t rttUs = 0;     // tcpi_rtt: the smoothed RTT, µs (RFC 6298 SRTT)
    uint32_t minRttUs = 0;  // tcpi_min_rtt: the minimum RTT seen (a windowed minimum, tcp_min_rtt_wlen
                            // seconds, 300 by default); 0 when the kernel's tcp_info is too old to carry it
    /// One sample of this connection's round-trip time, µs: the smoothed RTT, else the minimum. Not the
    /// kernel's minimum first: it is a minimum over tcp_min_rtt_wlen (five minutes by default), so after a
    /// path grows longer (a cable cut re-routing the traffic) it would go on reporting the old, short path
    /// for minutes. The sampler takes the minimum of these samples over one report interval instead, which
    /// drops queueing bursts as the kernel's minimum does but follows a change within an interval.
    uint32_t sampleUs() const { return rttUs ? rttUs : minRttUs; }
};

/// An inet_diag bytecode program (INET_DIAG_REQ_BYTECODE) that accepts a socket whose local port is one of
/// `ports` (at most 64, each 1..65535), so the kernel sends only those and not every socket of the host.
/// The layout is `ss`'s for `sport = :P`: per port an S_GE and an S_LE test, ORed by their jumps; a "no" past
/// the end (the program's length + 4) rejects, landing exactly on the end accepts (inet_diag_bc_run in
/// net/ipv4/inet_diag.c).
std::vector<uint8_t> portFilter(std::span<const uint16_t> ports);

/// Runs `program` over a socket with local port `sport` as the kernel does. For tests: the kernel only says
/// EINVAL for a program it refuses.
bool runPortFilter(std::span<const uint8_t> program, uint16_t sport);

/// Parses one buffer of a NETLINK_SOCK_DIAG dump (nlmsghdr-framed SOCK_DIAG_BY_FAMILY messages), appending
/// the ESTABLISHED connections whose local port is in `ports` to `out` (the port is checked again here, so a
/// kernel that ignored the filter changes nothing). Returns 1 when the buffer ended the dump (NLMSG_DONE), 0
/// when more follows, -1 with `error` for NLMSG_ERROR or a malformed message (lengths are checked against the
/// octets left before anything is read).
int parseDump(std::span<const uint8_t> buf, std::span<const uint16_t> ports, std::vector<TcpConn>& out,
              std::string& error);

/// Dumps the established TCP connections (IPv4 and IPv6) whose local port is in `ports`, with tcp_info.
/// False and `error` ("sock_diag: …") when the netlink socket cannot be opened or the kernel refuses. A
/// kernel that refuses the port filter (EINVAL) is asked again without it; `kernelFiltered`, when given, says
/// whether the kernel applied the filter to every family.
bool dumpConnections(std::span<const uint16_t> ports, std::vector<TcpConn>& out, std::string& error,
                     bool* kernelFiltered = nullptr);

}  // namespace gslb::agent
