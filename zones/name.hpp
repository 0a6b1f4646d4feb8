// Domain names in uncompressed wire form (RFC 1035 §3.1): a sequence of length-prefixed labels ending in the
// root label (a zero byte). The zone database keeps every owner name lower-cased in this form, so a lookup is
// a byte comparison; DNS names compare case-insensitively for ASCII only (RFC 4343 §3).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace gslb::zones {

inline constexpr size_t kMaxNameLen = 255;  // RFC 1035 §2.3.4, wire octets including the root label
inline constexpr size_t kMaxLabelLen = 63;  // RFC 1035 §2.3.4
inline constexpr size_t kMaxLabels = 128;   // 255 octets hold at most 127 labels plus the root

/// ASCII-only lower-casing (RFC 4343 §3): bytes outside A–Z are left as they are.
inline uint8_t lowerByte(uint8_t c) {
    return (c >= 'A' && c <= 'Z') ? uint8_t(c + 32) : c;
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

/// Parses a presentation name (absolute, or relative to `origin` when it does not end in a dot) into
/// lower-cased wire form. Returns false when it is not a valid name (label > 63, name > 255, bad escape).
bool textToName(std::string_view text, std::string_view originWire, WireName& out);

/// True when `name` equals `ancestor` or lies below it, on label boundaries (both lower-case wire).
bool isSubdomain(std::string_view name, std::string_view ancestor);

}  // namespace gslb::zones
