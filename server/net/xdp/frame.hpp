// The AF_XDP fast path's frames (server/net/xdp/path.hpp): what a query frame holds, and its answer built in
// the same frame. Pure functions over bytes, no sockets: the fuzz target (tests/fuzz/fuzz_xdp_frame.cpp) and
// the unit tests call them directly, and gslbd builds them with or without libxdp.
#pragma once
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <span>

namespace gslb::server::xdp {

inline constexpr size_t kEthLen = 14;
inline constexpr size_t kIp4Len = 20;  // no options: the XDP program passes any other header to the kernel
inline constexpr size_t kIp6Len = 40;
inline constexpr size_t kUdpLen = 8;

/// A UDP datagram in an Ethernet frame, as parseFrame found it. Offsets count from the frame's first octet.
struct Frame {
    int family = 0;         // AF_INET or AF_INET6
    size_t payload = 0;     // where the UDP payload (the DNS message) starts: 42 (IPv4) or 62 (IPv6)
    size_t payloadLen = 0;  // octets of it, from the UDP length (Ethernet padding after it is not counted)
};

/// A frame the fast path may answer: Ethernet II without a VLAN tag; IPv4 (version 4, IHL 5, neither MF nor
/// a fragment offset, protocol 17) or IPv6 (next header 17: no extension header); a UDP length of at least 8
/// that fits in the IP payload, which fits in the frame. `frame` is untrusted: every length is compared with
/// what is left (DESIGN: `if (n > limit - len)`). The UDP checksum is not verified (as Knot's XDP path):
/// Linux leaves it partial on a veth (checksum offload), and a corrupt DNS message gets what any other
/// malformed message gets. True with `f` filled and the client's address and port in `peer`
/// (sockaddr_in / sockaddr_in6, the scope the interface index `ifindex` for a link-local IPv6 source).
bool parseFrame(std::span<const uint8_t> frame, Frame& f, sockaddr_storage& peer,
                uint32_t ifindex = 0) noexcept;

/// The most DNS octets an answer to `f` may hold in a frame of `room` octets on a link of `mtu` (the IP
/// packet's limit, RFC 894): an answer over it is sent truncated (TC) rather than fragmented.
size_t replyRoom(const Frame& f, size_t room, size_t mtu) noexcept;

/// Turns the query frame into its answer, in place: the DNS answer of `dnsLen` octets is already at
/// frame[f.payload]. Swaps the Ethernet addresses, the IP addresses and the UDP ports; IPv4: total length,
/// ID 0 with DF set (RFC 6864 §4.1: an atomic datagram; the socket path's IP_PMTUDISC_PROBE sends the same),
/// TTL 64, header checksum (RFC 791); IPv6: payload length, hop limit 64; UDP: length and checksum over the
/// pseudo-header (RFC 768; mandatory for IPv6, RFC 8200 §8.1; a sum of 0 is sent as 0xffff). `frame` must
/// hold f.payload + dnsLen octets (dnsLen at most replyRoom). Returns the frame's length.
size_t buildReply(std::span<uint8_t> frame, const Frame& f, size_t dnsLen) noexcept;

/// The one's complement sum of RFC 1071 over `data`, folded, not inverted, added to `sum`.
uint32_t checksumAdd(std::span<const uint8_t> data, uint32_t sum) noexcept;
uint16_t checksumFold(uint32_t sum) noexcept;

/// A key of the XDP program's gslbd_dests map (server/net/xdp/gslbd_xdp.bpf.c's struct gslbd_dest): the
/// frames to a listen address (all-zero for a wildcard one) and its UDP port go to the fast path.
struct Dest {
    uint8_t addr[16] = {};
    uint16_t port = 0;    // network order
    uint16_t family = 0;  // 4 or 6
};
static_assert(sizeof(Dest) == 20);

/// The Dest of a listen address (sockaddr_in / sockaddr_in6); false for another family.
bool destOf(const sockaddr_storage& listen, bool wildcard, Dest& d) noexcept;

/// The XDP program's gslbd_fast table (struct gslbd_fast): the listen addresses as a list it walks, cheaper
/// per frame than a lookup in gslbd_dests. With more than kFastDests of them `n` says so and the program
/// looks them up in gslbd_dests instead (which always holds them all).
inline constexpr size_t kFastDests = 8;
struct FastDests {
    uint32_t n = 0;  // listen addresses (the entries of `d` in use when n <= kFastDests)
    uint32_t pad = 0;
    Dest d[kFastDests];
};
static_assert(sizeof(FastDests) == 8 + kFastDests * sizeof(Dest));

/// The table for these listen addresses (the keys gslbd_dests gets).
FastDests fastDests(std::span<const Dest> dests) noexcept;

}  // namespace gslb::server::xdp
