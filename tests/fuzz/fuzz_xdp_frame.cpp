// libFuzzer target for the AF_XDP fast path's frames (server/net/xdp/frame.hpp): whatever arrives on an
// interface with `[server] xdp` that the XDP program lets through is parsed by parseFrame, and answered in
// place by buildReply. The input is a frame; the first byte, when the frame parses, sets the answer's length.
//   - parseFrame never reads past the frame and finds a payload inside it, inside the IP packet;
//   - the reply (the query's headers swapped, a payload of up to replyRoom octets) parses back, with the
//     client's address as destination and its port as the UDP destination port; its IPv4 header checksum and
//     its UDP checksum (IPv4 and IPv6) verify (RFC 1071: the sum over the covered octets is all ones);
//   - replyRoom keeps the reply within the MTU and the frame.
#include <netinet/in.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "fuzz_util.hpp"
#include "server/net/xdp/frame.hpp"

using namespace gslb::server::xdp;

namespace {

uint16_t get16(const uint8_t* p) {
    return uint16_t(p[0] << 8 | p[1]);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::vector<uint8_t> in(data, data + size);  // exactly `size` octets: ASan sees any read past them
    Frame f;
    sockaddr_storage peer;
    if (!parseFrame(in, f, peer, 7)) return 0;
    FUZZ_CHECK(f.family == AF_INET || f.family == AF_INET6, "family");
    FUZZ_CHECK(f.payload == (f.family == AF_INET ? 42u : 62u), "payload offset");
    FUZZ_CHECK(f.payload <= size && f.payloadLen <= size - f.payload, "payload inside the frame");
    FUZZ_CHECK(peer.ss_family == f.family, "peer family");

    // The answer goes in a 4 KiB frame, as in UMEM; its length from the first octet (scaled), at most the
    // room.
    std::vector<uint8_t> frame(4096, 0xa5);
    std::memcpy(frame.data(), in.data(), std::min<size_t>(size, frame.size()));
    if (f.payload > frame.size()) return 0;
    size_t mtu = 576 + size_t(data[0]) * 4;
    size_t room = replyRoom(f, frame.size(), mtu);
    FUZZ_CHECK(f.payload + room <= frame.size(), "reply within the frame");
    FUZZ_CHECK(f.payload - kEthLen + room <= mtu, "reply within the MTU");
    size_t dnsLen = std::min(room, size_t(data[size - 1]) * 7);
    for (size_t i = 0; i < dnsLen; ++i) frame[f.payload + i] = uint8_t(i * 31 + 7);
    size_t len = buildReply(frame, f, dnsLen);
    FUZZ_CHECK(len == f.payload + dnsLen, "reply length");

    Frame r;
    sockaddr_storage dst;
    FUZZ_CHECK(parseFrame({frame.data(), len}, r, dst, 7), "the reply parses");
    FUZZ_CHECK(r.family == f.family && r.payload == f.payload && r.payloadLen == dnsLen, "reply shape");
    FUZZ_CHECK(
        std::memcmp(frame.data(), in.data() + 6, 6) == 0 && std::memcmp(frame.data() + 6, in.data(), 6) == 0,
        "MAC addresses swapped");
    const uint8_t* ip = frame.data() + kEthLen;
    size_t udpAt = f.payload - kUdpLen;
    uint32_t sum;
    if (f.family == AF_INET) {
        FUZZ_CHECK(std::memcmp(ip + 16, &reinterpret_cast<sockaddr_in*>(&peer)->sin_addr, 4) == 0,
                   "to the client");
        FUZZ_CHECK(checksumFold(checksumAdd({ip, kIp4Len}, 0)) == 0xffff, "IPv4 header checksum");
        FUZZ_CHECK(get16(ip + 2) == kIp4Len + kUdpLen + dnsLen, "IPv4 total length");
        sum = checksumAdd({ip + 12, 8}, 17 + uint32_t(kUdpLen + dnsLen));
    } else {
        FUZZ_CHECK(std::memcmp(ip + 24, &reinterpret_cast<sockaddr_in6*>(&peer)->sin6_addr, 16) == 0,
                   "to the client");
        FUZZ_CHECK(get16(ip + 4) == kUdpLen + dnsLen, "IPv6 payload length");
        sum = checksumAdd({ip + 8, 32}, 17 + uint32_t(kUdpLen + dnsLen));
    }
    FUZZ_CHECK(std::memcmp(frame.data() + udpAt + 2, in.data() + udpAt, 2) == 0, "to the client's port");
    FUZZ_CHECK(get16(frame.data() + udpAt + 6) != 0, "a UDP checksum is always sent");
    FUZZ_CHECK(checksumFold(checksumAdd({frame.data() + udpAt, kUdpLen + dnsLen}, sum)) == 0xffff,
               "UDP checksum");
    return 0;
}
