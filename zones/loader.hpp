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
/// and RFC 3597 TYPEnnn / \# rdata. A record without a TTL and no $TTL before it gets the last TTL written
/// before it (RFC 1035 §5.1: RFC 2308 §4 moved the default to $TTL, not to the MINIMUM; BIND and NSD do
/// this), or the SOA MINIMUM when none was (BIND's fallback), with a warning once per file. A TTL above
/// 2^31 - 1 is 0 with a warning (RFC 2181 §8, BIND); one that is not a 32-bit number is an error.
/// Warnings go to `out.warnings` ("file:line"). $INCLUDE nesting is limited to 16 levels (an include loop is
/// an error). Returns false with `error` = "file:line: message" on the first problem. One-line records of the
/// common types are decoded by the fast path of plain_rr.hpp; every other line goes to ldns
/// (ldns_rr_new_frm_fp_l) unchanged. `out` gets the records in file order.
bool readZoneFile(const std::string& path, const std::string& origin, SourceSet& out, std::string& error);

/// Where a line of a master file leaves the record it belongs to, as ldns reads it (RFC 1035 §5.1): open
/// parentheses continue it on the next line, and so does a backslash that escapes the line end; a quoted
/// string continues over a line end only inside parentheses (or after such a backslash). Comments end the
/// line; a '(' or ';' inside quotes counts for nothing.
struct LineScan {
    int depth = 0;            // open parentheses
    bool inQuote = false;     // inside a quoted string
    bool escapedEnd = false;  // the line ended with a backslash: its line end is part of the record
    bool quoteCut = false;    // the line ended the record inside a quoted string, which ldns closes there
    /// The next line continues the record (it is not a record, directive or $INCLUDE of its own).
    bool open() const { return depth > 0 || inQuote || escapedEnd; }
};

/// Advances `scan` over one line (with or without its '\n').
void scanZoneLine(std::string_view line, LineScan& scan);

/// What is wrong in the text of one record (from its first line to where ldns stopped reading it) that ldns
/// lets pass or words badly; empty when nothing is. A quoted string still open at a line end that ends the
/// record (outside parentheses, not escaped): ldns closes it there and the record is served (`txt TXT
/// "unterminated`); BIND refuses it ("unbalanced quotes"), NSD too ("syntax error"). A '(' never closed: the
/// record runs to the end of the file, where ldns said "superfluous text present". `line` gets the line of
/// `text` (0: its first) the problem starts on.
std::string recordTextProblem(std::string_view text, int& line);

/// ldns' message for a record it refused (`status` an ldns_status), with what an operator needs on top: the
/// address types' rdata shape (ldns says only "could not parse the RR's rdata"), and for gdnsd's DYNA / DYNC
/// what gslbd uses instead. `text` is the record's text; `ownerWritten`: it starts with its owner (not a
/// blank). The loader and `gslbctl zone add` say the same.
std::string recordError(int status, std::string_view text, bool ownerWritten);

/// Files (or the pieces between $INCLUDEs) of at least this many octets are cut at record boundaries and
/// parsed on up to 4 threads (default 4 MB). For tests and tuning; the records come out the same either way.
void setParallelParseThreshold(size_t octets);

/// Turns the fast path off (every line through ldns) or on (the default). For tests that compare the two.
void setPlainFastPath(bool on);

/// readZoneFile + Zone::compile. nullptr and `error` on failure.
std::unique_ptr<Zone> loadZone(const std::string& path, const std::string& origin, std::string& error);

}  // namespace gslb::zones
