// The SOA serials served for zones whose serial gslbd chooses ([[zone]] serial_policy other than "keep"),
// kept in `state_dir/zone-serials.json` so that a restart never serves a serial lower than (or equal to) one
// already transferred by a secondary: it would ignore the new zone (RFC 1982 / RFC 1996) and keep serving the
// old signatures until they expire. Knot keeps the same in its timer database, OpenDNSSEC in its enforcer's.
//
// File shape (JSON, written and read by us; deleting it only matters for "increment", whose serial then
// restarts from the file's): {"version": 1, "zones": {"gslb.example.com.": 1796083200}}
#pragma once
#include <cstdint>
#include <map>
#include <string>

namespace gslb::server::service {

inline constexpr const char* kZoneSerialsFile = "zone-serials.json";

/// Zone name (presentation, lower case, absolute) -> the serial last served.
using ZoneSerials = std::map<std::string, uint32_t>;

/// Reads `dir`/zone-serials.json into `out`. A missing file (or an empty `dir`) is no error: `out` is left
/// empty. False and "file: why" when it is unreadable or malformed.
bool loadZoneSerials(const std::string& dir, ZoneSerials& out, std::string& error);

/// Writes `serials` atomically (writeStateFile). False and `error` when it cannot.
bool saveZoneSerials(const std::string& dir, const ZoneSerials& serials, std::string& error);

}  // namespace gslb::server::service
