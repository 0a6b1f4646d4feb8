// SOA serial numbers: the YYYYMMDDnn convention and RFC 1982 serial arithmetic.
#pragma once
#include <cstdint>

#include "zones/serial.hpp"

namespace gslb::ctl {

/// RFC 1982 serial arithmetic as the server compares serials (zones/serial.hpp): one definition for both.
using zones::serialGreater;

/// The next serial after `old` on day `today` (YYYYMMDD): today × 100 + 1 when that is ahead of `old`;
/// `old` + 1 when `old` is already one of today's (nn < 99); otherwise `old` + 1 modulo 2^32 (RFC 1982 §3.1:
/// 4294967295 wraps to 0).
uint32_t bumpSerial(uint32_t old, uint32_t today);

/// The first serial of a new zone: today × 100 + 1 (YYYYMMDD01).
uint32_t initialSerial(uint32_t today);

/// Today's date as YYYYMMDD (UTC).
uint32_t todayUtc();

}  // namespace gslb::ctl
