// The zone loader's fast path: one-line records of the common types in their plain presentation form, turned
// into wire form without ldns. ldns_rr_new_frm_fp_l reads a character at a time and makes about a dozen heap
// allocations per record (two of them 64 KB buffers); on a zone of a million records that is most of the load
// time. This path takes only what it can decode exactly as ldns does and answers NotPlain for everything
// else, which the loader then hands to ldns unchanged: ldns stays the parser of record, and a differential
// test (tests/zones/test_plain_rr.cpp) checks that both give the same bytes for the same text.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace gslb::zones {

/// The state a master-file line is read in (RFC 1035 §5.1).
struct PlainContext {
    std::string_view origin;  // the $ORIGIN in force, absolute wire name (case as written)
    std::string_view prev;    // the previous record's owner, wire; empty when there is none yet
    uint32_t defaultTtl;      // the $TTL in force (s), or the loader's "none yet" marker
};

/// One record decoded by parsePlainLine.
struct PlainRecord {
    uint8_t owner[255];
    size_t ownerLen = 0;
    bool ownerChanged = false;  // the line named its owner (or '@'): it becomes the next `prev`
    uint16_t type = 0;
    uint32_t ttl = 0;
    bool ttlWritten = false;  // the line had a TTL field (else `ttl` is the context's default)
    std::string rdata;        // uncompressed wire rdata; names in the case written (reused between calls)
};

enum class PlainResult {
    Record,    // `out` holds the record
    Empty,     // blank or comment-only line
    NotPlain,  // anything else: a directive, parentheses, escapes, control characters (NUL, CR, FF, VT: ldns
               // drops or splits on them), another class or type, a TTL with units,
               // a value this path does not check exactly as ldns would, or an error: ldns decides
};

/// Decodes one line of a master file that starts a record (not inside parentheses or quotes): `[owner]
/// [ttl] [IN] type rdata [; comment]` with the owner "@", a name, or blanks (the previous owner); ttl in
/// plain decimal seconds; type one of A, AAAA, NS, CNAME, PTR, DNAME, MX, SRV, TXT; rdata as RFC 1035 §5.1
/// without escapes or parentheses (names relative to the origin unless they end in a dot, "@" for the
/// origin; TXT as unquoted words or quoted strings). A record without a TTL takes `defaultTtl` (0 included:
/// the loader corrects ldns, which would give 3600 there). Never fails: whatever it does not take is
/// NotPlain.
PlainResult parsePlainLine(std::string_view line, const PlainContext& ctx, PlainRecord& out);

/// Turns a presentation name without escapes ("www", "www.example.com.", "@", ".") into wire form relative to
/// `origin` (wire), case kept. Returns the length, or 0 when the text is not such a name (empty label, label
/// over 63 octets, name over 255 octets, a backslash, an '@' inside a name).
size_t plainNameToWire(std::string_view text, std::string_view origin, uint8_t* out);

}  // namespace gslb::zones
