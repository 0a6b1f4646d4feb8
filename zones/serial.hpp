// The SOA serial a zone is served with (doc/dnssec.md). A signed zone changes at every signing (new inception
// and expiry in every RRSIG), so a secondary must see a higher serial each time, or it keeps transferring
// nothing and ends up serving the old signatures past their expiry. The policies are Knot's `serial-policy`
// (increment | unixtime | dateserial) plus `keep` (the file's serial, for unsigned zones, as long as it does
// not go backwards); OpenDNSSEC's <Serial> offers the same three. All comparisons are RFC 1982 serial
// arithmetic (SERIAL_BITS = 32).
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

namespace gslb::zones {

enum class SerialPolicy { Keep, Increment, Unixtime, Dateserial };

/// "keep", "increment", "unixtime", "dateserial" -> the policy; nullopt for anything else.
std::optional<SerialPolicy> parseSerialPolicy(std::string_view text);
const char* serialPolicyName(SerialPolicy p);

/// True when `a` is greater than `b` in RFC 1982 §3.2 (a - b mod 2^32 in (0, 2^31)). Exactly half way round
/// (2^31 apart) is undefined there and is "not greater" here, both ways.
bool serialGreater(uint32_t a, uint32_t b);

/// The serial to serve at a load or re-sign at `now` (unix seconds). The rule every policy keeps: the served
/// serial never goes backwards (RFC 1982), whatever changed in between (the policy, `dnssec`, the file),
/// because a secondary that holds a greater serial ignores a smaller one and keeps serving its old copy,
/// signatures and all, until they expire.
///  - Keep: `fileSerial` when it is greater than `last` (or there is no `last`). When it is not (the zone was
///    signed with a policy's serial, or the file was restored from a backup): `last` + 1 when `changed` (the
///    zone's data differs from what was served with `last`), so secondaries transfer the change, else `last`
///    as it was, so an unchanged zone is not transferred again at every reload.
///  - Increment: `last` + 1; Unixtime: `now` (mod 2^32); Dateserial: YYYYMMDD00 of `now` (UTC);
///    then the greatest of that, `fileSerial` and `last` + 1, so the result is always greater than `last`
///    (RFC 1982): an operator's bump in the file still shows, and two signings in one second or one day still
///    differ (dateserial has 100 a day, then runs into tomorrow's, as Knot's does). `changed` is not read: a
///    signed zone changes at every signing.
/// `last` is the serial served before (by this process or, from state_dir, by an earlier one); none at the
/// first load ever.
uint32_t nextServedSerial(SerialPolicy policy, uint32_t fileSerial, std::optional<uint32_t> last, int64_t now,
                          bool changed = true);

/// The SOA serial of SOA rdata (the last 20 octets are serial, refresh, retry, expire, minimum: RFC 1035
/// §3.3.13), or nullopt when the rdata is too short.
std::optional<uint32_t> soaSerial(std::string_view rdata);
/// `rdata` with its serial replaced by `serial` (same length). `rdata` must be at least 20 octets.
void setSoaSerial(std::string& rdata, uint32_t serial);

}  // namespace gslb::zones
