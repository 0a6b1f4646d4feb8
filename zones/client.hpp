// Who asked: the packet's source and the EDNS Client Subnet option (RFC 7871), for client-aware answers.
// Plain values that live on the stack of the query path: no allocation (doc/design.md "Principles" 7).
#pragma once
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>

namespace gslb::zones {

/// An address prefix in the RFC 7871 §6 shape: FAMILY (IANA address family numbers: 1 IPv4, 2 IPv6; 0 none),
/// a prefix length and the address octets, every bit past `bits` zero.
struct ClientSubnet {
    uint8_t family = 0;  // 0: unknown client
    uint8_t bits = 0;    // prefix length: 0..32 (IPv4), 0..128 (IPv6)
    uint8_t addr[16]{};  // network byte order; the first 4 octets for IPv4
    size_t octets() const { return family == 1 ? 4 : 16; }
};

inline constexpr uint8_t kFamilyIPv4 = 1;
inline constexpr uint8_t kFamilyIPv6 = 2;

/// What the listener knows of a query besides its bytes.
struct ClientInfo {
    const sockaddr* source = nullptr;  // the packet's source (sockaddr_in / sockaddr_in6); null: unknown
    uint32_t now = 0;  // wall-clock time, s since the Unix epoch (RFC 9018 server cookie timestamps)
    // The server admitted this client to transfer the zone asked for (axfr_allow, TSIG): an IXFR over UDP
    // may then carry the zone's differences (zones/answer.hpp answer()).
    bool transferAllowed = false;
};

/// The full-length prefix of a socket address; an IPv4-mapped IPv6 address becomes IPv4. Family 0 for
/// anything else (or null).
ClientSubnet subnetOf(const sockaddr* sa) noexcept;

/// The client's location for one query: the ECS prefix when the query carried one (and [server] ecs is on),
/// else the packet's source.
struct Client {
    ClientSubnet subnet;
    bool fromEcs = false;   // the answer's scope goes back in the ECS option
    ClientSubnet resolver;  // the packet's source, full length, whether or not ECS was sent (family 0:
                            // unknown): who caches the answer when its scope is 0
};

/// An ECS option as it came in a query (RFC 7871 §6).
struct EcsOption {
    ClientSubnet subnet;  // FAMILY, SOURCE PREFIX-LENGTH, ADDRESS (zero-padded to 16 octets)
    uint8_t scope = 0;    // SCOPE PREFIX-LENGTH as sent (queries must send 0; we ignore it)
};

/// Parses the OPTION-DATA of an EDNS0 option of code 8 (`len` octets at `data`). False when it is malformed
/// per RFC 7871 §7.1.2, which the server answers with FORMERR: shorter than 4 octets, a FAMILY other than
/// 1 or 2, a SOURCE PREFIX-LENGTH longer than the address, an ADDRESS that is not exactly
/// ceil(SOURCE PREFIX-LENGTH / 8) octets (§6: "truncated to the number of bits indicated"), or a non-zero
/// bit past the prefix. O(len); reads only [data, data + len).
bool parseEcs(const uint8_t* data, size_t len, EcsOption& out) noexcept;

inline constexpr uint16_t kOptionEcs = 8;  // RFC 7871 §6, the IANA EDNS0 option code

/// Writes the ECS option of a response (option code, length, FAMILY, SOURCE PREFIX-LENGTH copied from the
/// query, `scope`, ADDRESS truncated to the source prefix: §7.2.1) at `out`; returns its size (at most
/// 4 + 4 + 16 octets).
size_t writeEcs(const ClientSubnet& query, uint8_t scope, uint8_t* out) noexcept;
inline constexpr size_t kEcsMaxSize = 24;

}  // namespace gslb::zones
