#include "zones/packet.hpp"

#include "zones/rrtype.hpp"

namespace gslb::zones {
namespace {

inline uint16_t rd16(const uint8_t* p) {
    return uint16_t((p[0] << 8) | p[1]);
}

// Skips a possibly compressed name starting at `pos`. Every pointer must point strictly before the name part
// that holds it, so a chain of pointers always moves backwards and ends: no loops, bounded work. Returns the
// offset after the name in the record, or 0 on a malformed name.
size_t skipName(std::span<const uint8_t> pkt, size_t pos) {
    size_t end = 0;      // where the name ends in the record (set at the first pointer)
    size_t total = 0;    // decompressed length
    size_t limit = pos;  // pointers must go below this
    size_t hops = 0;
    for (;;) {
        if (pos >= pkt.size()) return 0;
        uint8_t l = pkt[pos];
        if ((l & 0xC0) == 0xC0) {
            if (pos + 1 >= pkt.size()) return 0;
            size_t target = size_t(((l & 0x3F) << 8) | pkt[pos + 1]);
            if (!end) end = pos + 2;
            if (target >= limit || ++hops > kMaxLabels) return 0;
            limit = target;
            pos = target;
            continue;
        }
        if (l & 0xC0) return 0;  // 0x40 / 0x80: extended label types, obsolete (RFC 6891 §5)
        total += size_t(l) + 1;
        if (total > kMaxNameLen) return 0;
        if (l == 0) return end ? end : pos + 1;
        pos += size_t(l) + 1;
    }
}

}  // namespace

ParseStatus parseQuery(std::span<const uint8_t> pkt, Query& q) noexcept {
    q.questionOk = false;
    q.edns = false;
    q.ecsCount = 0;
    q.ecsValid = false;
    if (pkt.size() < 12) return ParseStatus::Drop;
    const uint8_t* h = pkt.data();
    q.id = rd16(h);
    if (h[2] & 0x80) return ParseStatus::Drop;  // QR=1: a response; answering it invites loops
    q.opcode = (h[2] >> 3) & 0x0F;
    q.rd = h[2] & 0x01;
    q.cd = h[3] & 0x10;
    uint16_t qd = rd16(h + 4), an = rd16(h + 6), ns = rd16(h + 8), ar = rd16(h + 10);
    if (qd != 1) return q.opcode != 0 ? ParseStatus::NotImp : ParseStatus::FormErr;

    // QNAME: uncompressed labels only.
    size_t pos = 12;
    size_t n = 0;
    uint8_t labels = 0;
    for (;;) {
        if (pos + n >= pkt.size()) return ParseStatus::FormErr;
        uint8_t l = pkt[pos + n];
        if (l > kMaxLabelLen) return ParseStatus::FormErr;  // a pointer, or an extended label type
        if (n + l + 1 > kMaxNameLen) return ParseStatus::FormErr;
        if (l == 0) {
            ++n;
            break;
        }
        q.labelOff[labels++] = uint8_t(n);
        for (size_t i = 1; i <= l; ++i) {
            if (pos + n + i >= pkt.size()) return ParseStatus::FormErr;
            q.lower[n + i] = lowerByte(pkt[pos + n + i]);
        }
        q.lower[n] = l;
        n += size_t(l) + 1;
    }
    q.lower[n - 1] = 0;
    q.qname = pkt.data() + pos;
    q.qnameLen = uint8_t(n);
    q.labels = labels;
    pos += n;
    if (pos + 4 > pkt.size()) return ParseStatus::FormErr;
    q.qtype = rd16(pkt.data() + pos);
    q.qclass = rd16(pkt.data() + pos + 2);
    pos += 4;
    q.questionEnd = pos;
    q.questionOk = true;
    if (q.opcode != 0) return ParseStatus::NotImp;

    // Answer, authority and additional records.
    uint32_t total = uint32_t(an) + ns + ar;
    for (uint32_t i = 0; i < total; ++i) {
        size_t start = pos;
        pos = skipName(pkt, pos);
        if (!pos || pos + 10 > pkt.size()) return ParseStatus::FormErr;
        uint16_t type = rd16(pkt.data() + pos);
        uint16_t cls = rd16(pkt.data() + pos + 2);
        const uint8_t* ttl = pkt.data() + pos + 4;
        uint16_t rdlen = rd16(pkt.data() + pos + 8);
        pos += 10;
        if (pos + rdlen > pkt.size()) return ParseStatus::FormErr;
        if (type == kTypeOPT) {
            // RFC 6891 §6.1.1: one OPT at most, in the additional section, owned by the root.
            if (i < uint32_t(an) + ns || q.edns || pkt[start] != 0) return ParseStatus::FormErr;
            q.edns = true;
            q.ednsSize = cls;
            q.ednsVersion = ttl[1];
            q.ednsDo = ttl[2] & 0x80;
            // Options must tile the rdata exactly; unknown ones are ignored (§6.1.2).
            size_t o = pos, oe = pos + rdlen;
            while (o < oe) {
                if (o + 4 > oe) return ParseStatus::FormErr;
                uint16_t code = rd16(pkt.data() + o);
                size_t olen = rd16(pkt.data() + o + 2);
                if (olen > oe - o - 4) return ParseStatus::FormErr;
                if (code == kOptionEcs && q.ecsCount < 255) {
                    ++q.ecsCount;
                    q.ecsValid = q.ecsCount == 1 && parseEcs(pkt.data() + o + 4, olen, q.ecs);
                }
                o += 4 + olen;
            }
        }
        pos += rdlen;
    }
    return ParseStatus::Ok;
}

}  // namespace gslb::zones
