// server/net/xdp/frame.cpp: the AF_XDP fast path's frame parser and in-place reply builder.
#include <arpa/inet.h>
#include <doctest/doctest.h>

#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "server/net/xdp/frame.hpp"

using namespace gslb::server::xdp;

namespace {

const uint8_t kServerMac[6] = {2, 0, 0, 0, 0, 1}, kClientMac[6] = {2, 0, 0, 0, 0, 2};

// An Ethernet frame with an IPv4 (or IPv6) UDP datagram from the client (port 40000) to the server (53).
std::vector<uint8_t> frame(bool v6, size_t dnsLen, size_t pad = 0) {
    std::vector<uint8_t> f(kEthLen);
    std::memcpy(f.data(), kServerMac, 6);
    std::memcpy(f.data() + 6, kClientMac, 6);
    f[12] = v6 ? 0x86 : 0x08;
    f[13] = v6 ? 0xdd : 0x00;
    size_t ulen = kUdpLen + dnsLen;
    if (!v6) {
        uint8_t ip[kIp4Len] = {0x45, 0x10, uint8_t((20 + ulen) >> 8), uint8_t(20 + ulen), 0x12, 0x34, 0, 0,
                               63,   17};
        inet_pton(AF_INET, "198.51.100.7", ip + 12);
        inet_pton(AF_INET, "192.0.2.53", ip + 16);
        f.insert(f.end(), ip, ip + kIp4Len);
    } else {
        uint8_t ip[kIp6Len] = {0x60, 0, 0, 0, uint8_t(ulen >> 8), uint8_t(ulen), 17, 63};
        inet_pton(AF_INET6, "2001:db8::7", ip + 8);
        inet_pton(AF_INET6, "2001:db8::53", ip + 24);
        f.insert(f.end(), ip, ip + kIp6Len);
    }
    uint8_t udp[kUdpLen] = {0x9c, 0x40, 0, 53, uint8_t(ulen >> 8), uint8_t(ulen), 0, 0};
    f.insert(f.end(), udp, udp + kUdpLen);
    for (size_t i = 0; i < dnsLen; ++i) f.push_back(uint8_t(i));
    f.resize(f.size() + pad);  // Ethernet padding of a short frame
    return f;
}

}  // namespace

TEST_CASE("checksumAdd is RFC 1071's one's complement sum") {
    // RFC 1071 §3's example: 00 01 f2 03 f4 f5 f6 f7 sums to 0xddf2.
    const uint8_t b[] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
    CHECK(checksumFold(checksumAdd(b, 0)) == 0xddf2);
    const uint8_t odd[] = {0x01};  // an odd octet is the high half of a word
    CHECK(checksumFold(checksumAdd(odd, 0)) == 0x0100);
}

TEST_CASE("checksumAdd equals the word-by-word sum at every length, offset and carry") {
    // The sum is taken 32 bits at a time in host order and swapped at the end: against RFC 1071 §4.1's
    // loop, over lengths 0..80 from every offset of a buffer (odd starts too), with all-ones octets (the
    // most carries) and a running sum near 2^32 passed in (the pseudo-header's).
    auto reference = [](const uint8_t* p, size_t n, uint32_t sum) {
        uint64_t s = sum;
        for (; n >= 2; p += 2, n -= 2) s += uint32_t(p[0]) << 8 | p[1];
        if (n) s += uint32_t(p[0]) << 8;
        while (s >> 16) s = (s & 0xffff) + (s >> 16);
        return uint16_t(s);
    };
    uint8_t buf[96];
    for (int fill = 0; fill < 2; ++fill) {
        for (size_t i = 0; i < sizeof buf; ++i) buf[i] = fill ? 0xff : uint8_t(i * 37 + 11);
        for (size_t off = 0; off < 8; ++off)
            for (size_t len = 0; len + off <= 88; ++len)
                for (uint32_t sum : {0u, 17u + 100u, 0xfffffff0u}) {
                    CAPTURE(fill);
                    CAPTURE(off);
                    CAPTURE(len);
                    CHECK(checksumFold(checksumAdd({buf + off, len}, sum)) == reference(buf + off, len, sum));
                }
    }
}

TEST_CASE("parseFrame finds the client and the DNS payload of IPv4 and IPv6 frames") {
    for (bool v6 : {false, true}) {
        CAPTURE(v6);
        auto f = frame(v6, 29, v6 ? 0 : 5);
        Frame fr;
        sockaddr_storage peer;
        REQUIRE(parseFrame(f, fr, peer));
        CHECK(fr.payload == (v6 ? 62u : 42u));
        CHECK(fr.payloadLen == 29);  // padding after the UDP datagram is not DNS
        CHECK(peer.ss_family == (v6 ? AF_INET6 : AF_INET));
        char text[64];
        if (v6) {
            auto* s6 = reinterpret_cast<sockaddr_in6*>(&peer);
            CHECK(std::string(inet_ntop(AF_INET6, &s6->sin6_addr, text, sizeof text)) == "2001:db8::7");
            CHECK(ntohs(s6->sin6_port) == 40000);
        } else {
            auto* s4 = reinterpret_cast<sockaddr_in*>(&peer);
            CHECK(std::string(inet_ntop(AF_INET, &s4->sin_addr, text, sizeof text)) == "198.51.100.7");
            CHECK(ntohs(s4->sin_port) == 40000);
        }
    }
}

TEST_CASE("parseFrame refuses what the fast path does not answer") {
    Frame fr;
    sockaddr_storage peer;
    auto ok = frame(false, 12);
    REQUIRE(parseFrame(ok, fr, peer));
    for (size_t n = 0; n < 42; ++n) CHECK_FALSE(parseFrame({ok.data(), n}, fr, peer));  // cut short
    auto f = ok;
    f[12] = 0x81;  // a VLAN tag
    CHECK_FALSE(parseFrame(f, fr, peer));
    f = ok;
    f[14] = 0x46;  // IPv4 options
    CHECK_FALSE(parseFrame(f, fr, peer));
    f = ok;
    f[20] = 0x20;  // more fragments
    CHECK_FALSE(parseFrame(f, fr, peer));
    f = ok;
    f[21] = 0x01;  // a fragment offset
    CHECK_FALSE(parseFrame(f, fr, peer));
    f = ok;
    f[23] = 6;  // TCP
    CHECK_FALSE(parseFrame(f, fr, peer));
    f = ok;
    f[17] += 1;  // IP total length past the frame
    CHECK_FALSE(parseFrame(f, fr, peer));
    f = ok;
    f[39] += 1;  // UDP length past the IP packet
    CHECK_FALSE(parseFrame(f, fr, peer));
    f = ok;
    f[38] = 0, f[39] = 7;  // UDP length under its header
    CHECK_FALSE(parseFrame(f, fr, peer));
    auto g = frame(true, 12);
    REQUIRE(parseFrame(g, fr, peer));
    g[20] = 0;  // a hop-by-hop extension header
    CHECK_FALSE(parseFrame(g, fr, peer));
    g = frame(true, 12);
    g[19] += 1;  // IPv6 payload length past the frame
    CHECK_FALSE(parseFrame(g, fr, peer));
}

TEST_CASE("buildReply answers in place: addresses and ports swapped, lengths and checksums right") {
    for (bool v6 : {false, true}) {
        CAPTURE(v6);
        auto q = frame(v6, 30);
        Frame fr;
        sockaddr_storage peer;
        REQUIRE(parseFrame(q, fr, peer));
        std::vector<uint8_t> f = q;
        f.resize(fr.payload + 100);
        for (size_t i = 0; i < 100; ++i) f[fr.payload + i] = uint8_t(200 - i);
        size_t len = buildReply(f, fr, 100);
        CHECK(len == fr.payload + 100);
        CHECK(std::memcmp(f.data(), kClientMac, 6) == 0);
        CHECK(std::memcmp(f.data() + 6, kServerMac, 6) == 0);
        size_t udp = fr.payload - kUdpLen;
        CHECK(f[udp] == 0);  // from port 53 ...
        CHECK(f[udp + 1] == 53);
        CHECK(f[udp + 2] == 0x9c);  // ... to 40000
        CHECK(f[udp + 3] == 0x40);
        CHECK(f[udp + 5] == 108);  // UDP length
        uint32_t pseudo;
        if (!v6) {
            CHECK(std::memcmp(f.data() + 26, q.data() + 30, 4) == 0);
            CHECK(std::memcmp(f.data() + 30, q.data() + 26, 4) == 0);
            CHECK(f[17] == 128);   // total length 20 + 108
            CHECK(f[20] == 0x40);  // DF
            CHECK(f[18] == 0);     // ID 0
            CHECK(f[19] == 0);
            CHECK(f[22] == 64);  // TTL
            CHECK(checksumFold(checksumAdd({f.data() + 14, 20}, 0)) == 0xffff);
            pseudo = checksumAdd({f.data() + 26, 8}, 17 + 108);
        } else {
            CHECK(std::memcmp(f.data() + 22, q.data() + 38, 16) == 0);
            CHECK(f[19] == 108);  // payload length
            CHECK(f[21] == 64);   // hop limit
            pseudo = checksumAdd({f.data() + 22, 32}, 17 + 108);
        }
        CHECK(checksumFold(checksumAdd({f.data() + udp, 108}, pseudo)) == 0xffff);
        Frame back;
        sockaddr_storage to;
        REQUIRE(parseFrame({f.data(), len}, back, to));
        CHECK(back.payloadLen == 100);
    }
}

TEST_CASE("replyRoom: the MTU and the frame bound an answer") {
    Frame v4{AF_INET, 42, 0}, v6{AF_INET6, 62, 0};
    CHECK(replyRoom(v4, 4096, 1500) == 1500 - 28);
    CHECK(replyRoom(v6, 4096, 1500) == 1500 - 48);
    CHECK(replyRoom(v4, 1000, 9000) == 1000 - 42);
    CHECK(replyRoom(v4, 30, 1500) == 0);
    CHECK(replyRoom(v4, 1 << 20, 1 << 20) == 65535 - 8);
}

TEST_CASE("destOf: a listen address as the XDP program's key") {
    sockaddr_storage ss{};
    auto* s4 = reinterpret_cast<sockaddr_in*>(&ss);
    s4->sin_family = AF_INET;
    s4->sin_port = htons(53);
    inet_pton(AF_INET, "192.0.2.53", &s4->sin_addr);
    Dest d;
    REQUIRE(destOf(ss, false, d));
    CHECK(d.family == 4);
    CHECK(d.port == htons(53));
    CHECK(d.addr[0] == 192);
    CHECK(d.addr[4] == 0);
    REQUIRE(destOf(ss, true, d));
    CHECK(d.addr[0] == 0);  // a wildcard: any address
}

TEST_CASE(
    "fastDests: up to kFastDests listen addresses in the program's own list, more left to its hash map") {
    std::vector<Dest> dests(kFastDests + 1);
    for (size_t i = 0; i < dests.size(); ++i) {
        dests[i].addr[0] = uint8_t(10 + i);
        dests[i].port = htons(uint16_t(5300 + i));
        dests[i].family = i % 2 ? 6 : 4;
    }
    FastDests none = fastDests({});
    CHECK(none.n == 0);  // nothing listened: every frame passes
    FastDests some = fastDests(std::span(dests).first(3));
    CHECK(some.n == 3);
    CHECK(some.d[2].addr[0] == 12);
    CHECK(some.d[2].port == htons(5302));
    CHECK(some.d[2].family == 4);
    CHECK(some.d[3].port == 0);  // unused entries stay zero
    FastDests full = fastDests(std::span(dests).first(kFastDests));
    CHECK(full.n == kFastDests);
    CHECK(full.d[kFastDests - 1].addr[0] == 10 + kFastDests - 1);
    // One more than the list holds: n says so, and the program looks every address up in gslbd_dests.
    FastDests over = fastDests(dests);
    CHECK(over.n == kFastDests + 1);
    // The program reads the address as four 32-bit words: the entries must lie where struct gslbd_fast's do.
    CHECK(offsetof(FastDests, d) == 8);
    CHECK(sizeof(Dest) == 20);
}
