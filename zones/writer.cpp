#include "zones/writer.hpp"

#include "zones/name.hpp"
#include "zones/rrtype.hpp"

namespace gslb::zones {
namespace {

// Case-insensitive equality of two wire names of the same length. Length octets are < 64 and so never in
// 'A'..'Z': lower-casing every octet compares labels and structure at once. The same bytes (an owner that is
// the remembered QNAME) need no comparison.
inline bool sameName(const uint8_t* a, const uint8_t* b, size_t n) {
    return a == b || sameNoCase(a, b, n);
}

// The names RFC 1035 defines inside the rdata of `type` (which a server may compress, RFC 3597 §4) and the
// octets before the first of them.
inline size_t rdataNames(uint16_t type, size_t& skipBefore) {
    skipBefore = 0;
    switch (type) {
        case kTypeNS:
        case kTypeMD:
        case kTypeMF:
        case kTypeCNAME:
        case kTypeMB:
        case kTypeMG:
        case kTypeMR:
        case kTypePTR:
            return 1;
        case kTypeMX:
            skipBefore = 2;
            return 1;
        case kTypeSOA:
        case kTypeMINFO:
            return 2;
        default:
            return 0;
    }
}

}  // namespace

void Writer::addSuffixes(const uint8_t* n, size_t len, size_t off, size_t upto, size_t from) {
    for (size_t p = from; p < len && p < upto && n[p] != 0; p += size_t(n[p]) + 1) {
        // A compression pointer holds 14 bits of offset (RFC 1035 §4.1.4).
        if (nent_ >= kMaxEntries || off >= 0x3FFF || p >= 0x3FFF - off) return;
        ents_[nent_++] = Entry{n + p, uint16_t(off + p), uint8_t(len - p)};
    }
}

void Writer::remember(const uint8_t* n, size_t len, size_t off, size_t upto) {
    if (len > kMaxNameLen) return;  // entries keep a length octet
    enterPending();
    if (nent_ == 0 && upto == SIZE_MAX) {
        // The whole name alone, under addSuffixes' rules for its first step; the rest waits.
        if (len == 0 || n[0] == 0 || off >= 0x3FFF) return;
        ents_[0] = Entry{n, uint16_t(off), uint8_t(len)};
        nent_ = firstEntries_ = 1;
        if (size_t(n[0]) + 1 < len) pending_ = size_t(n[0]) + 1;
        return;
    }
    addSuffixes(n, len, off, upto, 0);
}

bool Writer::name(const uint8_t* n, size_t len, bool compress) {
    size_t start = len_;
    size_t p = 0;
    if (len > kMaxNameLen) compress = false;
    if (compress) {
        // The first name itself (an owner that is the QNAME): the search below finds it first, at its first
        // entry, and enters nothing.
        if (nent_ && ents_[0].name == n && ents_[0].len == len && n[0] != 0)
            return u16(uint16_t(0xC000 | ents_[0].off));
        enterPending();
        for (; p < len && n[p] != 0; p += size_t(n[p]) + 1) {
            size_t slen = len - p;
            for (size_t e = 0; e < nent_; ++e) {
                if (ents_[e].len != slen || !sameName(ents_[e].name, n + p, slen)) continue;
                if (!bytes(n, p)) return false;
                if (!u16(uint16_t(0xC000 | ents_[e].off))) return false;
                remember(n, len, start, p);  // the literal labels just written
                return true;
            }
        }
    }
    if (!bytes(n, len)) return false;
    if (compress) remember(n, len, start);
    return true;
}

bool Writer::rr(Section section, const uint8_t* owner, size_t ownerLen, uint16_t type, uint32_t ttl,
                const uint8_t* rd, size_t rdlen, uint16_t cls) {
    size_t skipBefore = 0;
    size_t names = rdataNames(type, skipBefore);
    // The owner is the name remembered first (the QNAME, at hop 0 of an answer) and nothing in the rdata is
    // to be compressed: what the general path below writes is a pointer to that name and the rdata as it
    // is; written here in one bounds check.
    if (names == 0 && cls == kClassIN && nent_ && owner == ents_[0].name && ownerLen == ents_[0].len &&
        rdlen <= 0xFFFF) {
        const size_t need = 12 + rdlen;
        if (len_ > limit_ || need > limit_ - len_) return false;
        const uint16_t off = ents_[0].off;
        const uint8_t head[12] = {uint8_t(0xC0 | (off >> 8)),
                                  uint8_t(off),
                                  uint8_t(type >> 8),
                                  uint8_t(type),
                                  0,
                                  1,
                                  uint8_t(ttl >> 24),
                                  uint8_t(ttl >> 16),
                                  uint8_t(ttl >> 8),
                                  uint8_t(ttl),
                                  uint8_t(rdlen >> 8),
                                  uint8_t(rdlen)};
        std::memcpy(buf_ + len_, head, 12);
        if (rdlen) std::memcpy(buf_ + len_ + 12, rd, rdlen);
        len_ += need;
        ++counts_[section];
        return true;
    }
    enterPending();  // before startEntries: a failure must not drop them
    const size_t start = len_, startEntries = nent_;
    auto fail = [&] {
        len_ = start;  // nothing of a record that did not fit stays behind
        nent_ = startEntries;
        return false;
    };
    if (!name(owner, ownerLen)) return fail();
    if (!u16(type) || !u16(cls) || !u32(ttl)) return fail();
    size_t lenAt = len_;
    if (!u16(0)) return fail();
    size_t rdStart = len_;
    // Names that RFC 1035 defines inside rdata may be compressed (RFC 3597 §4); the rest are copied. Rdata
    // that does not hold what its type promises (generic `\#` data in a zone file can be anything) is
    // copied as it is: every offset below stays within `rdlen`.
    if (names && rdlen >= skipBefore) {
        size_t end = skipBefore;
        for (size_t i = 0; i < names; ++i) {
            size_t l = wireNameLen(rd + end, rdlen - end);
            if (!l) {
                names = 0;
                break;
            }
            end += l;
        }
    } else {
        names = 0;
    }
    size_t p = 0;
    if (names) {
        if (!bytes(rd, skipBefore)) return fail();
        p = skipBefore;
        for (size_t i = 0; i < names; ++i) {
            size_t l = wireNameLen(rd + p, rdlen - p);
            if (!name(rd + p, l)) return fail();
            p += l;
        }
    }
    if (!bytes(rd + p, rdlen - p)) return fail();
    size_t written = len_ - rdStart;
    buf_[lenAt] = uint8_t(written >> 8);
    buf_[lenAt + 1] = uint8_t(written);
    ++counts_[section];
    return true;
}

}  // namespace gslb::zones
