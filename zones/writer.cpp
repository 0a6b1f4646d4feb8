#include "zones/writer.hpp"

#include "zones/name.hpp"
#include "zones/rrtype.hpp"

namespace gslb::zones {
namespace {

// Case-insensitive equality of two wire names of the same length. Length octets are < 64 and so never in
// 'A'..'Z': lower-casing every octet compares labels and structure at once.
inline bool sameName(const uint8_t* a, const uint8_t* b, size_t n) {
    for (size_t i = 0; i < n; ++i)
        if (lowerByte(a[i]) != lowerByte(b[i])) return false;
    return true;
}

// Length of the uncompressed wire name at `p` within `max` octets, or 0 when there is none: a label over 63
// octets (or a compression pointer, which zone data never holds), a name over 255 octets, or no root label
// before `max`.
inline size_t nameLen(const uint8_t* p, size_t max) {
    size_t i = 0;
    while (i < max) {
        if (p[i] == 0) return i + 1;
        if (p[i] > kMaxLabelLen) return 0;
        i += size_t(p[i]) + 1;
        if (i >= kMaxNameLen) return 0;  // the root label would make it longer than 255
    }
    return 0;
}

}  // namespace

void Writer::remember(const uint8_t* n, size_t len, size_t off, size_t upto) {
    if (len > kMaxNameLen) return;  // entries keep a length octet
    for (size_t p = 0; p < len && p < upto && n[p] != 0; p += size_t(n[p]) + 1) {
        // A compression pointer holds 14 bits of offset (RFC 1035 §4.1.4).
        if (nent_ >= kMaxEntries || off >= 0x3FFF || p >= 0x3FFF - off) return;
        ents_[nent_++] = Entry{n + p, uint16_t(off + p), uint8_t(len - p)};
    }
}

bool Writer::name(const uint8_t* n, size_t len, bool compress) {
    size_t start = len_;
    size_t p = 0;
    if (len > kMaxNameLen) compress = false;
    if (compress) {
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
    if (!name(owner, ownerLen)) return false;
    if (!u16(type) || !u16(cls) || !u32(ttl)) return false;
    size_t lenAt = len_;
    if (!u16(0)) return false;
    size_t rdStart = len_;
    // Names that RFC 1035 defines inside rdata may be compressed (RFC 3597 §4); the rest are copied. Rdata
    // that does not hold what its type promises (generic `\#` data in a zone file can be anything) is
    // copied as it is: every offset below stays within `rdlen`.
    size_t names = 0, skipBefore = 0;
    switch (type) {
        case kTypeNS:
        case kTypeMD:
        case kTypeMF:
        case kTypeCNAME:
        case kTypeMB:
        case kTypeMG:
        case kTypeMR:
        case kTypePTR:
            names = 1;
            break;
        case kTypeMX:
            names = 1;
            skipBefore = 2;
            break;
        case kTypeSOA:
        case kTypeMINFO:
            names = 2;
            break;
        default:
            break;
    }
    if (names && rdlen >= skipBefore) {
        size_t end = skipBefore;
        for (size_t i = 0; i < names; ++i) {
            size_t l = nameLen(rd + end, rdlen - end);
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
        if (!bytes(rd, skipBefore)) return false;
        p = skipBefore;
        for (size_t i = 0; i < names; ++i) {
            size_t l = nameLen(rd + p, rdlen - p);
            if (!name(rd + p, l)) return false;
            p += l;
        }
    }
    if (!bytes(rd + p, rdlen - p)) return false;
    size_t written = len_ - rdStart;
    buf_[lenAt] = uint8_t(written >> 8);
    buf_[lenAt + 1] = uint8_t(written);
    ++counts_[section];
    return true;
}

}  // namespace gslb::zones
