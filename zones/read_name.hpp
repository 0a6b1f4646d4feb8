// Names inside DNS messages (RFC 1035 §4.1.4: compression): the one decompressor of the tree.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

#include "zones/name.hpp"

namespace gslb::zones {

/// Reads the possibly compressed name at `pos` of the message `msg` (RFC 1035 §4.1.4): the tree's one
/// decompressor, for the query parse (zones/packet.cpp) and TSIG's key and algorithm names (zones/tsig.cpp).
/// Every pointer must point strictly before the name part that holds it, so a chain of pointers always moves
/// backwards and ends: no loops, at most kMaxLabels hops, bounded work. Extended label types (0x40 / 0x80,
/// obsolete: RFC 6891 §5) and names over kMaxNameLen octets are malformed. Returns the offset after the name
/// in the record (at most msg.size()), or 0 when malformed. With `out` (kMaxNameLen octets) the name is
/// written there uncompressed and lower-cased (RFC 4343 §3), its length in `*outLen`; without, it is only
/// skipped. Bounds are checked as "what is needed > what is left", which cannot wrap.
inline size_t readName(std::span<const uint8_t> msg, size_t pos, uint8_t* out = nullptr,
                       uint8_t* outLen = nullptr) noexcept {
    size_t end = 0;      // where the name ends in the record (set at the first pointer)
    size_t total = 0;    // decompressed length
    size_t limit = pos;  // pointers must go below this
    size_t hops = 0;
    for (;;) {
        if (pos >= msg.size()) return 0;
        uint8_t l = msg[pos];
        if ((l & 0xC0) == 0xC0) {
            if (msg.size() - pos < 2) return 0;
            size_t target = size_t(((l & 0x3F) << 8) | msg[pos + 1]);
            if (!end) end = pos + 2;
            if (target >= limit || ++hops > kMaxLabels) return 0;
            limit = target;
            pos = target;
            continue;
        }
        if (l & 0xC0) return 0;
        if (size_t(l) + 1 > kMaxNameLen - total) return 0;
        if (size_t(l) >= msg.size() - pos) return 0;  // the label (or the root octet) runs past the end
        if (out) {
            out[total] = l;
            for (size_t i = 1; i <= l; ++i) out[total + i] = lowerByte(msg[pos + i]);
        }
        total += size_t(l) + 1;
        if (l == 0) {
            if (outLen) *outLen = uint8_t(total);
            return end ? end : pos + 1;
        }
        pos += size_t(l) + 1;
    }
}

}  // namespace gslb::zones
