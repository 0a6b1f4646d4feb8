// Reading RFC 1035 master files (§5) with ldns into SourceRecords, and from them a compiled Zone.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "zones/zone.hpp"

namespace gslb::zones {

/// Reads `path` as the master file of zone `origin` (presentation form, e.g. "gslb.example.com.").
/// Handles $ORIGIN, $TTL, $INCLUDE (ldns' reader does not: done here, the included file getting its own
/// $ORIGIN scope as RFC 1035 §5.1 says), relative names, multi-line records, escapes, every type ldns knows
/// and RFC 3597 TYPEnnn / \# rdata. Records without a TTL and no $TTL before them get the SOA MINIMUM (RFC
/// 2308 §4, BIND's behaviour). $INCLUDE nesting is limited to 16 levels (an include loop is an error).
/// Returns false with `error` = "file:line: message" on the first problem.
/// One-line records of the common types are decoded by the fast path of plain_rr.hpp; every other line goes
/// to ldns (ldns_rr_new_frm_fp_l) unchanged. `out` gets the records in file order.
bool readZoneFile(const std::string& path, const std::string& origin, SourceSet& out, std::string& error);

/// Follows one line of a master file: parentheses (a record spanning lines, RFC 1035 §5.1) and quotes, so
/// that a
/// "$INCLUDE" or a ';' inside a record is not taken for a directive or a comment. Comments end the line.
/// `depth` and `inQuote` carry over from line to line.
void scanZoneLine(std::string_view line, int& depth, bool& inQuote);

/// Files (or the pieces between $INCLUDEs) of at least this many octets are cut at record boundaries and
/// parsed on up to 4 threads (default 4 MB). For tests and tuning; the records come out the same either way.
void setParallelParseThreshold(size_t octets);

/// Turns the fast path off (every line through ldns) or on (the default). For tests that compare the two.
void setPlainFastPath(bool on);

/// readZoneFile + Zone::compile. nullptr and `error` on failure.
std::unique_ptr<Zone> loadZone(const std::string& path, const std::string& origin, std::string& error);

}  // namespace gslb::zones
