// Domain names in uncompressed wire form (RFC 1035 §3.1): a sequence of length-prefixed labels ending in the
// root label (a zero byte). The zone database keeps every owner name lower-cased in this form, so a lookup is
// a byte comparison; DNS names compare case-insensitively for ASCII only (RFC 4343 §3).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace gslb::zones {

inline constexpr size_t kMaxNameLen = 255;  // RFC 1035 §2.3.4, wire octets including the root label
inline constexpr size_t kMaxLabelLen = 63;  // RFC 1035 §2.3.4
inline constexpr size_t kMaxLabels = 128;   // 255 octets hold at most 127 labels plus the root

/// Length of the uncompressed wire name at `p`, reading at most `max` octets, or 0 when there is none there:
/// a label over 63 octets (a compression pointer among them), a name over 255 octets, or no root label before
/// `max` (RFC 1035 §3.1). O(labels).
inline size_t wireNameLen(const uint8_t* p, size_t max) {
    size_t i = 0;
    while (i < max) {
        if (p[i] == 0) return i + 1;
        if (p[i] > kMaxLabelLen) return 0;
        i += size_t(p[i]) + 1;
        if (i >= kMaxNameLen) return 0;  // the root label would make it longer than 255
    }
    return 0;
}

/// ASCII-only lower-casing (RFC 4343 §3): bytes outside A–Z are left as they are.
inline uint8_t lowerByte(uint8_t c) {
    return (c >= 'A' && c <= 'Z') ? uint8_t(c + 32) : c;
}

/// lowerByte on each of the 8 octets of `x` at once (SWAR): an octet 0x41..0x5A gets 0x20 added, every
/// other octet (length octets, 0x80..0xFF) stays. The sums below never carry out of an octet (at most
/// 0x7F + 0x3F), so each octet's top bit says only its own comparison.
inline uint64_t lower8(uint64_t x) {
    constexpr uint64_t k7f = 0x7F7F7F7F7F7F7F7Full, kHigh = 0x8080808080808080ull;
    uint64_t low7 = x & k7f;
    uint64_t aboveZ = low7 + 0x2525252525252525ull;  // top bit: low7 > 'Z'
    uint64_t fromA = low7 + 0x3F3F3F3F3F3F3F3Full;   // top bit: low7 >= 'A'
    uint64_t upper = (fromA ^ aboveZ) & ~x & kHigh;  // 'A' <= x <= 'Z' (and x < 0x80)
    return x | (upper >> 2);
}

inline uint64_t load8(const uint8_t* p) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
}

/// Copies `n` octets from `src` to `dst` lower-cased (lowerByte), 8 at a time. Reads and writes exactly
/// [0, n) of each.
inline void lowerCopy(uint8_t* dst, const uint8_t* src, size_t n) {
    if (n < 8) {
        for (size_t i = 0; i < n; ++i) dst[i] = lowerByte(src[i]);
        return;
    }
    for (size_t i = 0;; i += 8) {
        if (i + 8 > n) i = n - 8;  // the last word overlaps the one before: the same octets, written alike
        uint64_t v = lower8(load8(src + i));
        std::memcpy(dst + i, &v, 8);
        if (i + 8 == n) return;
    }
}

/// True when the `n` octets at `a` and `b` are equal once lower-cased (RFC 1035 §2.3.3 / RFC 4343 §3: ASCII
/// case is ignored; a wire name's length octets are < 64 and so compare as themselves). Reads [0, n) only.
inline bool sameNoCase(const uint8_t* a, const uint8_t* b, size_t n) {
    if (n < 8) {
        for (size_t i = 0; i < n; ++i)
            if (lowerByte(a[i]) != lowerByte(b[i])) return false;
        return true;
    }
    for (size_t i = 0;; i += 8) {
        if (i + 8 > n) i = n - 8;  // the last word overlaps the one before
        if (lower8(load8(a + i)) != lower8(load8(b + i))) return false;
        if (i + 8 == n) return true;
    }
}

/// Hash of a lower-case wire name for the zone and apex indexes (32 bits): 8 octets a step, the length
/// mixed in. Not a keyed hash: the names it indexes are the zone's own, and a query only looks them up.
inline uint32_t hashName(const uint8_t* p, size_t n) {
    constexpr uint64_t kMul = 0x9E3779B97F4A7C15ull;
    uint64_t h = uint64_t(n) * kMul;
    if (n < 8) {
        uint64_t t = 0;
        for (size_t k = 0; k < n; ++k) t |= uint64_t(p[k]) << (8 * k);
        h = (h ^ t) * kMul;
    } else {
        size_t i = 0;
        for (; i + 8 < n; i += 8) h = (h ^ load8(p + i)) * kMul;
        h = (h ^ load8(p + n - 8)) * kMul;  // the last 8 octets, overlapping the word before
    }
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    return uint32_t(h ^ (h >> 32));
}
inline uint32_t hashName(std::string_view s) {
    return hashName(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

/// Wire name as a byte string (std::string used as a byte container).
using WireName = std::string;

/// Lower-cases a wire name in place (labels' length octets are < 64, so they are never touched).
void lowerName(uint8_t* name, size_t len);

/// Number of labels before the root label. Precondition: a valid wire name.
size_t labelCount(std::string_view wire);

/// Presentation form ("www.example.com.") of a valid wire name, with RFC 1035 §5.1 escapes; for logs and
/// tests.
std::string nameToText(std::string_view wire);

/// True when a presentation name ends in a dot that is not escaped, i.e. it is absolute (RFC 1035 §5.1):
/// "a." and "a\\." (a label ending in a backslash, then the root) are, "a" and "a\." (a label ending in a
/// dot) are not; "." is.
bool endsInDot(std::string_view text) noexcept;

/// Parses a presentation name (absolute, or relative to `origin` when it does not end in a dot) into
/// lower-cased wire form. Returns false when it is not a valid name (label > 63, name > 255, bad escape).
bool textToName(std::string_view text, std::string_view originWire, WireName& out);

/// True when `name` equals `ancestor` or lies below it, on label boundaries (both lower-case wire).
bool isSubdomain(std::string_view name, std::string_view ancestor);

}  // namespace gslb::zones
