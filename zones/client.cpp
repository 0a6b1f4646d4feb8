#include "zones/client.hpp"

#include <netinet/in.h>

#include <cstring>

namespace gslb::zones {

ClientSubnet subnetOf(const sockaddr* sa) noexcept {
    ClientSubnet s;
    if (!sa) return s;
    if (sa->sa_family == AF_INET) {
        s.family = kFamilyIPv4;
        s.bits = 32;
        std::memcpy(s.addr, &reinterpret_cast<const sockaddr_in*>(sa)->sin_addr, 4);
    } else if (sa->sa_family == AF_INET6) {
        const auto* a6 = &reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr;
        if (IN6_IS_ADDR_V4MAPPED(a6)) {
            // A dual-stack socket reports IPv4 peers as ::ffff:a.b.c.d; the client is an IPv4 client.
            s.family = kFamilyIPv4;
            s.bits = 32;
            std::memcpy(s.addr, a6->s6_addr + 12, 4);
        } else {
            s.family = kFamilyIPv6;
            s.bits = 128;
            std::memcpy(s.addr, a6->s6_addr, 16);
        }
    }
    return s;
}

bool parseEcs(const uint8_t* data, size_t len, EcsOption& out) noexcept {
    out = EcsOption{};
    if (len < 4) return false;
    uint16_t family = uint16_t(data[0] << 8 | data[1]);
    uint8_t source = data[2];
    size_t maxBits;
    if (family == kFamilyIPv4)
        maxBits = 32;
    else if (family == kFamilyIPv6)
        maxBits = 128;
    else
        return false;  // §7.1.2: an unknown FAMILY
    if (source > maxBits) return false;
    size_t octets = (size_t(source) + 7) / 8;
    if (len - 4 != octets) return false;
    const uint8_t* a = data + 4;
    // §7.1.2: the ADDRESS must not have bits set past SOURCE PREFIX-LENGTH (a resolver that leaks more of
    // the client than it says it does is broken, and caching on its prefix would be wrong).
    if (source % 8 != 0 && (a[octets - 1] & uint8_t(0xFF >> (source % 8))) != 0) return false;
    out.subnet.family = uint8_t(family);
    out.subnet.bits = source;
    std::memcpy(out.subnet.addr, a, octets);
    out.scope = data[3];
    return true;
}

size_t writeEcs(const ClientSubnet& q, uint8_t scope, uint8_t* out) noexcept {
    size_t octets = (size_t(q.bits) + 7) / 8;
    size_t len = 4 + octets;
    out[0] = 0;
    out[1] = uint8_t(kOptionEcs);
    out[2] = uint8_t(len >> 8);
    out[3] = uint8_t(len);
    out[4] = 0;
    out[5] = q.family;
    out[6] = q.bits;
    out[7] = scope;
    std::memcpy(out + 8, q.addr, octets);
    return 4 + len;
}

}  // namespace gslb::zones
