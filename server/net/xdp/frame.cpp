#include "server/net/xdp/frame.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

namespace gslb::server::xdp {
namespace {

uint16_t get16(const uint8_t* p) {
    return uint16_t(p[0] << 8 | p[1]);
}

void put16(uint8_t* p, uint16_t v) {
    p[0] = uint8_t(v >> 8);
    p[1] = uint8_t(v);
}

template <size_t N>
void swapBytes(uint8_t* a, uint8_t* b) {
    uint8_t t[N];
    std::memcpy(t, a, N);
    std::memcpy(a, b, N);
    std::memcpy(b, t, N);
}

}  // namespace

uint32_t checksumAdd(std::span<const uint8_t> data, uint32_t sum) noexcept {
    // 16-bit words in network order; an odd last octet is padded with zero (RFC 1071 §4.1). The words are
    // summed as they lie in memory, 32 bits at a time into 64, and the folded sum is byte-swapped once at the
    // end on a little-endian host: the one's complement sum does not depend on the byte order or the word
    // size, as long as the carries are folded back (RFC 1071 §2 (A), (B)). Half the instructions of swapping
    // every word (an answer's UDP checksum was 60 % of the fast path's own work beside answerDatagrams).
    constexpr bool little = std::endian::native == std::endian::little;
    const uint8_t* p = data.data();
    size_t n = data.size();
    uint64_t s = 0;
    for (; n >= 16; p += 16, n -= 16) {
        uint64_t a, b;
        std::memcpy(&a, p, 8);
        std::memcpy(&b, p + 8, 8);
        s += (a & 0xffffffff) + (a >> 32) + (b & 0xffffffff) + (b >> 32);
    }
    for (; n >= 4; p += 4, n -= 4) {
        uint32_t a;
        std::memcpy(&a, p, 4);
        s += a;
    }
    if (n >= 2) {
        uint16_t a;
        std::memcpy(&a, p, 2);
        s += a;
        p += 2;
        n -= 2;
    }
    if (n) s += little ? uint64_t(p[0]) : uint64_t(p[0]) << 8;  // the high half of its word in network order
    while (s >> 16) s = (s & 0xffff) + (s >> 16);
    uint64_t t = uint64_t(sum) + (little ? __builtin_bswap16(uint16_t(s)) : uint16_t(s));
    while (t >> 32) t = (t & 0xffffffff) + (t >> 32);
    return uint32_t(t);
}

uint16_t checksumFold(uint32_t sum) noexcept {
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    return uint16_t(sum);
}

bool parseFrame(std::span<const uint8_t> frame, Frame& f, sockaddr_storage& peer, uint32_t ifindex) noexcept {
    const uint8_t* p = frame.data();
    size_t n = frame.size();
    if (n < kEthLen) return false;
    uint16_t type = get16(p + 12);
    size_t ipAt = kEthLen, udpAt, ipEnd;
    std::memset(&peer, 0, sizeof(sockaddr_in6));  // what is read of it: the larger of the two families
    if (type == 0x0800) {
        if (n - kEthLen < kIp4Len) return false;
        const uint8_t* ip = p + ipAt;
        if (ip[0] != 0x45 || ip[9] != 17) return false;  // version 4, IHL 5; UDP
        if (get16(ip + 6) & 0x3fff) return false;        // MF or a fragment offset
        size_t total = get16(ip + 2);
        if (total < kIp4Len + kUdpLen || total > n - kEthLen) return false;
        udpAt = ipAt + kIp4Len;
        ipEnd = ipAt + total;
        auto* s4 = reinterpret_cast<sockaddr_in*>(&peer);
        s4->sin_family = AF_INET;
        std::memcpy(&s4->sin_addr, ip + 12, 4);
        std::memcpy(&s4->sin_port, p + udpAt, 2);
        f.family = AF_INET;
    } else if (type == 0x86dd) {
        if (n - kEthLen < kIp6Len) return false;
        const uint8_t* ip = p + ipAt;
        if ((ip[0] >> 4) != 6 || ip[6] != 17) return false;  // version 6; next header UDP
        size_t plen = get16(ip + 4);
        if (plen < kUdpLen || plen > n - kEthLen - kIp6Len) return false;
        udpAt = ipAt + kIp6Len;
        ipEnd = udpAt + plen;
        auto* s6 = reinterpret_cast<sockaddr_in6*>(&peer);
        s6->sin6_family = AF_INET6;
        std::memcpy(&s6->sin6_addr, ip + 8, 16);
        std::memcpy(&s6->sin6_port, p + udpAt, 2);
        if (IN6_IS_ADDR_LINKLOCAL(&s6->sin6_addr)) s6->sin6_scope_id = ifindex;
        f.family = AF_INET6;
    } else {
        return false;
    }
    size_t ulen = get16(p + udpAt + 4);
    if (ulen < kUdpLen || ulen > ipEnd - udpAt) return false;
    f.payload = udpAt + kUdpLen;
    f.payloadLen = ulen - kUdpLen;
    return true;
}

size_t replyRoom(const Frame& f, size_t room, size_t mtu) noexcept {
    size_t ipHeaders = f.payload - kEthLen;  // IP + UDP headers
    size_t byFrame = room > f.payload ? room - f.payload : 0;
    size_t byMtu = mtu > ipHeaders ? mtu - ipHeaders : 0;
    size_t r = byFrame < byMtu ? byFrame : byMtu;
    return r < 65535 - kUdpLen ? r : 65535 - kUdpLen;
}

size_t buildReply(std::span<uint8_t> frame, const Frame& f, size_t dnsLen) noexcept {
    uint8_t* p = frame.data();
    swapBytes<6>(p, p + 6);
    size_t udpAt = f.payload - kUdpLen;
    uint8_t* udp = p + udpAt;
    swapBytes<2>(udp, udp + 2);
    size_t ulen = kUdpLen + dnsLen;
    put16(udp + 4, uint16_t(ulen));
    put16(udp + 6, 0);
    uint32_t sum;
    if (f.family == AF_INET) {
        uint8_t* ip = p + kEthLen;
        swapBytes<4>(ip + 12, ip + 16);
        ip[1] = 0;  // DSCP/ECN: none of the query's carried over
        put16(ip + 2, uint16_t(kIp4Len + ulen));
        put16(ip + 4, 0);       // ID 0 ...
        put16(ip + 6, 0x4000);  // ... with DF: never fragmented
        ip[8] = 64;
        put16(ip + 10, 0);
        put16(ip + 10, uint16_t(~checksumFold(checksumAdd({ip, kIp4Len}, 0))));
        sum = checksumAdd({ip + 12, 8}, 17 + uint32_t(ulen));  // pseudo-header: addresses, protocol, length
    } else {
        uint8_t* ip = p + kEthLen;
        swapBytes<16>(ip + 8, ip + 24);
        put16(ip + 4, uint16_t(ulen));
        ip[7] = 64;
        sum = checksumAdd({ip + 8, 32}, 17 + uint32_t(ulen));
    }
    uint16_t c = uint16_t(~checksumFold(checksumAdd({udp, ulen}, sum)));
    put16(udp + 6, c == 0 ? 0xffff : c);  // RFC 768: a computed 0 is sent as all ones
    return f.payload + dnsLen;
}

bool destOf(const sockaddr_storage& listen, bool wildcard, Dest& d) noexcept {
    d = Dest{};
    if (listen.ss_family == AF_INET) {
        const auto* s4 = reinterpret_cast<const sockaddr_in*>(&listen);
        if (!wildcard) std::memcpy(d.addr, &s4->sin_addr, 4);
        d.port = s4->sin_port;
        d.family = 4;
        return true;
    }
    if (listen.ss_family == AF_INET6) {
        const auto* s6 = reinterpret_cast<const sockaddr_in6*>(&listen);
        if (!wildcard) std::memcpy(d.addr, &s6->sin6_addr, 16);
        d.port = s6->sin6_port;
        d.family = 6;
        return true;
    }
    return false;
}

FastDests fastDests(std::span<const Dest> dests) noexcept {
    FastDests t;
    t.n = uint32_t(dests.size());
    if (dests.size() <= kFastDests) std::copy(dests.begin(), dests.end(), t.d);
    return t;
}

}  // namespace gslb::server::xdp
