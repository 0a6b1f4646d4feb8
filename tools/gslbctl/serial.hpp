// SOA serial numbers: the YYYYMMDDnn convention and RFC 1982 serial arithmetic.
#pragma once
#include <cstdint>

namespace gslb::ctl {

/// True when `a` is greater than `b` in RFC 1982 serial arithmetic (SERIAL_BITS = 32).
bool serialGreater(uint32_t a, uint32_t b);

/// The next serial after `old` on day `today` (YYYYMMDD): today × 100 + 1 when that is ahead of `old`;
/// `old` + 1 when `old` is already one of today's (nn < 99); otherwise `old` + 1 modulo 2^32 (RFC 1982 §3.1:
/// 4294967295 wraps to 0).
uint32_t bumpSerial(uint32_t old, uint32_t today);

/// The first serial of a new zone: today × 100 + 1 (YYYYMMDD01).
uint32_t initialSerial(uint32_t today);

/// Today's date as YYYYMMDD (UTC).
uint32_t todayUtc();

}  // namespace gslb::ctl
