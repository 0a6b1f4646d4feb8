// libFuzzer target for the framing of DNS streams (server/net/stream_buffer.hpp): what a TCP client sends,
// and what TLS (DNS over TLS, XoT) decrypted, is fed to a StreamBuffer in reads of the sizes the socket or
// OpenSSL would give, and framed by its two-octet length prefixes (RFC 1035 §4.2.2, RFC 7766 §6.2.1). The
// input: the first octet chooses the read sizes (a seed), the rest is the stream.
//   - the messages come out whole and in order, exactly those a plain scan of the whole stream finds, up to
//     the first zero-length prefix (where the workers close the connection);
//   - whatever the stream, the buffer never holds more than 2 + 65535 octets, and shrinks back to 4 KiB once
//     a large message has been answered and what is left fits;
//   - every read has room (a connection never stalls with a message neither complete nor readable).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "fuzz_util.hpp"
#include "server/net/stream_buffer.hpp"

using gslb::server::StreamBuffer;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 1) return 0;
    uint32_t seed = data[0];
    std::vector<uint8_t> stream(data + 1, data + size);  // exactly these octets: ASan sees any read past them

    // The reference: a plain scan of the whole stream.
    std::vector<std::vector<uint8_t>> want;
    bool zero = false;
    for (size_t p = 0; stream.size() - p >= 2;) {
        size_t n = size_t(stream[p]) << 8 | stream[p + 1];
        if (n == 0) {
            zero = true;
            break;
        }
        if (stream.size() - p - 2 < n) break;
        want.emplace_back(stream.begin() + long(p + 2), stream.begin() + long(p + 2 + n));
        p += 2 + n;
    }

    StreamBuffer in;
    in.allocate();
    std::vector<std::vector<uint8_t>> got;
    bool sawZero = false;
    size_t at = 0;
    while (at < stream.size() && !sawZero) {
        FUZZ_CHECK(in.room() > 0, "a read with no room");
        // Read sizes as a socket or SSL_read gives them: 1 octet to a 16 KiB TLS record, from the seed.
        seed = seed * 1103515245u + 12345u;
        size_t chunk = 1 + (seed >> 8) % ((seed & 3) == 0 ? 16384 : 7);
        chunk = std::min({chunk, in.room(), stream.size() - at});
        std::memcpy(in.space(), stream.data() + at, chunk);
        in.commit(chunk);
        at += chunk;
        std::span<const uint8_t> m;
        for (;;) {
            StreamBuffer::Frame f = in.next(m);
            if (f == StreamBuffer::Frame::ZeroLength) {
                sawZero = true;
                break;
            }
            if (f != StreamBuffer::Frame::Message) break;
            got.emplace_back(m.begin(), m.end());
        }
        if (sawZero) break;
        in.compact();
        FUZZ_CHECK(in.capacity() <= StreamBuffer::kMax, "the buffer grew past one message");
        FUZZ_CHECK(in.size() <= in.capacity(), "size past capacity");
        if (in.size() < 2) FUZZ_CHECK(in.capacity() == StreamBuffer::kInitial, "not shrunk back");
    }
    FUZZ_CHECK(sawZero == zero, "zero-length prefix");
    FUZZ_CHECK(got == want, "messages differ from a plain scan");
    return 0;
}
