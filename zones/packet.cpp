#include "zones/packet.hpp"

#include <algorithm>

#include "zones/rrtype.hpp"
#include "zones/read_name.hpp"

namespace gslb::zones {
namespace {

inline uint16_t rd16(const uint8_t* p) {
    return uint16_t((p[0] << 8) | p[1]);
}

// The one question of a query (RFC 1035 §4.1.2) at offset 12: QNAME uncompressed (nothing precedes it that
// a pointer could name), QTYPE, QCLASS. Fills the question fields of `q`; returns the offset after the
// question, or 0 when it is malformed.
size_t parseQuestion(std::span<const uint8_t> pkt, Query& q) {
    const size_t pos = 12;
    const size_t avail = pkt.size() - pos;
    // Each label must end inside the packet, with room for the next length octet, and the name within 255
    // octets: a label that brings the name to `bound` cannot be followed by even the root label.
    const size_t bound = std::min(avail, kMaxNameLen);
    if (avail == 0) return 0;
    const uint8_t* p = pkt.data() + pos;
    size_t n = 0;  // octets of the QNAME so far
    uint8_t labels = 0;
    for (;;) {
        uint8_t l = p[n];
        if (l == 0) {
            ++n;
            break;
        }
        if (l > kMaxLabelLen) return 0;  // a pointer, or an extended label type
        q.labelOff[labels++] = uint8_t(n);
        n += size_t(l) + 1;
        if (n >= bound) return 0;
    }
    // The whole name at once, length octets included: they are < 64, which lower-casing leaves alone.
    lowerCopy(q.lower, pkt.data() + pos, n);
    if (pkt.size() - pos - n < 4) return 0;
    q.qname = pkt.data() + pos;
    q.qnameLen = uint8_t(n);
    q.labels = labels;
    q.qtype = rd16(pkt.data() + pos + n);
    q.qclass = rd16(pkt.data() + pos + n + 2);
    q.questionEnd = pos + n + 4;
    q.questionOk = true;
    return q.questionEnd;
}

// The answer, authority and additional records from `pos`: skipped, except OPT (RFC 6891 §6.1.1: at most
// one, in the additional section, owned by the root), whose fields go to `q`. False on any malformed record;
// the EDNS fields of `q` count only when the whole message parsed (q.edns is set last).
bool parseRecords(std::span<const uint8_t> pkt, size_t pos, uint32_t an, uint32_t ns, uint32_t ar, Query& q) {
    bool edns = false;
    const uint32_t total = an + ns + ar;
    for (uint32_t i = 0; i < total; ++i) {
        size_t start = pos;
        pos = readName(pkt, pos);
        if (!pos || pkt.size() - pos < 10) return false;
        uint16_t type = rd16(pkt.data() + pos);
        uint16_t cls = rd16(pkt.data() + pos + 2);
        const uint8_t* ttl = pkt.data() + pos + 4;
        uint16_t rdlen = rd16(pkt.data() + pos + 8);
        pos += 10;
        if (rdlen > pkt.size() - pos) return false;
        if (type == kTypeTSIG) {
            if (i + 1 != total || i < an + ns) return false;  // RFC 8945 §5.1: the last record, additional
            q.tsigAt = start;
        }
        if (type == kTypeOPT) {
            if (i < an + ns || edns || pkt[start] != 0) return false;
            edns = true;
            q.ednsSize = cls;
            q.ednsVersion = ttl[1];
            q.ednsDo = ttl[2] & 0x80;
            if (!parseEdnsOptions(pkt.subspan(pos, rdlen), q)) return false;
        }
        pos += rdlen;
    }
    q.edns = edns;
    return true;
}

}  // namespace

bool parseEdnsOptions(std::span<const uint8_t> rdata, Query& q) noexcept {
    // Options must tile the rdata exactly; unknown ones are ignored (RFC 6891 §6.1.2).
    size_t o = 0, oe = rdata.size();
    while (o < oe) {
        if (oe - o < 4) return false;
        uint16_t code = rd16(rdata.data() + o);
        size_t olen = rd16(rdata.data() + o + 2);
        o += 4;
        if (olen > oe - o) return false;
        const uint8_t* data = rdata.data() + o;
        o += olen;
        if (code == kOptionEcs) {
            // ECS (RFC 7871): two of them make the location ambiguous (answer() then says FORMERR).
            if (q.ecsCount < 255) {
                ++q.ecsCount;
                q.ecsValid = q.ecsCount == 1 && parseEcs(data, olen, q.ecs);
            }
        } else if (code == kOptNsid) {
            q.nsid = true;  // RFC 5001 §2.1: a request's payload is empty; anything there is ignored
        } else if (code == kOptPadding) {
            q.padding = true;  // RFC 7830 §4: any length, contents ignored
        } else if (code == kOptCookie && !q.cookie) {
            // RFC 7873 §5.2.2: shorter than a client cookie, a server cookie shorter than 8 or longer than
            // 32 octets is malformed. Only the first COOKIE option counts (§5.2).
            bool clientOnly = olen == kClientCookieLen;
            bool withServer =
                olen >= kClientCookieLen + kServerCookieMin && olen <= kClientCookieLen + kServerCookieMax;
            if (!clientOnly && !withServer) return false;
            q.cookie = data;
            q.cookieLen = uint8_t(olen);
        }
    }
    return true;
}

ParseStatus parseQuery(std::span<const uint8_t> pkt, Query& q) noexcept {
    q.questionOk = false;
    q.questionEnd = 0;
    q.qtype = 0;
    q.qclass = 0;
    q.edns = false;
    q.ecsCount = 0;
    q.ecsValid = false;
    q.nsid = false;
    q.padding = false;
    q.cookie = nullptr;
    q.cookieLen = 0;
    q.tsigAt = 0;
    if (pkt.size() < 12) return ParseStatus::Drop;
    const uint8_t* h = pkt.data();
    q.id = rd16(h);
    if (h[2] & 0x80) return ParseStatus::Drop;  // QR=1: a response; answering it invites loops
    q.opcode = (h[2] >> 3) & 0x0F;
    q.rd = h[2] & 0x01;
    q.cd = h[3] & 0x10;
    uint16_t qd = rd16(h + 4), an = rd16(h + 6), ns = rd16(h + 8), ar = rd16(h + 10);
    q.qdcount = qd;

    // The question section. Only a single question is ever echoed; any other count is walked over (names may
    // then be compressed) so that the OPT behind it is still found.
    size_t pos = 12;
    if (qd == 1) {
        pos = parseQuestion(pkt, q);
    } else {
        for (uint32_t i = 0; i < qd && pos; ++i) {
            pos = readName(pkt, pos);
            pos = pos && pkt.size() - pos >= 4 ? pos + 4 : 0;
        }
    }
    const bool wellFormed = pos && parseRecords(pkt, pos, an, ns, ar, q);
    // RFC 1035 §4.1.1: an opcode we do not implement is NOTIMP whatever follows the header.
    if (q.opcode != 0) return ParseStatus::NotImp;
    if (!wellFormed) return ParseStatus::FormErr;
    // RFC 7873 §5.4: a QUERY without a question but with a COOKIE option asks for a server cookie.
    if (qd == 0 && q.edns && q.cookie) return ParseStatus::CookieOnly;
    if (qd != 1) return ParseStatus::FormErr;
    return ParseStatus::Ok;
}

}  // namespace gslb::zones
