// A zone master file as text that can be edited without losing its layout: the file is split into entries
// (one record, possibly over several lines in parentheses; a directive; or blank/comment lines), and each
// record is parsed with ldns (ldns_rr_new_frm_fp_l, as the loader does) under the $ORIGIN, $TTL and
// previous owner in force at that point, so relative names, inherited owners and multi-line records are
// understood. Edits produce new text; untouched lines stay byte for byte.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "zones/ldns.hpp"

namespace gslb::ctl {

struct RrDeleter {
    void operator()(ldns_rr* r) const { ldns_rr_free(r); }
};
using RrPtr = std::shared_ptr<ldns_rr>;

struct ZoneEntry {
    enum Kind { Blank, Directive, Include, Record } kind = Blank;
    size_t begin = 0, end = 0;  // byte range in the text, line ends included
    int firstLine = 0, lastLine = 0;
    RrPtr rr;                    // Record only
    bool inheritsOwner = false;  // Record: the line starts with a blank (owner = previous owner)
    std::string ownerToken;      // Record: the owner as written (empty when inherited)
    bool originChanged = false;  // Directive: $ORIGIN
};

class ZoneText {
  public:
    /// Splits and parses `text` (the content of `file`). `origin` is the zone's name; when empty it is the
    /// owner of the SOA record, which must then be absolute or relative to a $ORIGIN written before it.
    /// False with `error` ("file:line: message") when a line does not parse or the origin is unknown.
    bool parse(const std::string& file, std::string text, const std::string& origin, std::string& error);

    const std::string& file() const { return file_; }
    const std::string& text() const { return text_; }
    const std::string& origin() const { return origin_; }  // absolute presentation form
    const std::vector<ZoneEntry>& entries() const { return entries_; }
    /// Index of the SOA entry (-1: none) and its serial.
    int soa() const { return soa_; }
    uint32_t serial() const { return serial_; }
    bool hasIncludes() const { return includes_; }

    /// Entries whose record has owner `owner` (zone-file syntax relative to the zone origin, "@" = apex),
    /// and when given, type `type` and rdata `rdata` (compared in canonical wire form, so "www" and
    /// "www.ORIGIN." and case differences match). False with `error` when the query does not parse.
    bool match(const std::string& owner, const std::string& type, const std::string& rdata,
               std::vector<size_t>& out, std::string& error) const;

    /// The text without entries `drop`. A following record that inherited its owner from a dropped one gets
    /// the owner written out (as written when no $ORIGIN lies between, absolute otherwise).
    std::string without(const std::vector<size_t>& drop) const;

    /// The text with `line` appended as a new record: a line end is added first when the file lacks one,
    /// and "$ORIGIN <zone>" when the origin in force at the end of the file is not the zone's.
    std::string withAppended(const std::string& line) const;

    /// The text with the SOA serial token rewritten in place. False when there is no SOA or its serial is
    /// not written as a plain decimal number.
    bool withSerial(uint32_t serial, std::string& out, std::string& error) const;

    /// One key per record (owner, type, TTL, rdata in canonical wire form; the SOA serial masked), sorted:
    /// two texts with the same keys hold the same records.
    std::vector<std::string> keys() const;
    /// The key of entry `i` ignoring the TTL (for duplicate detection).
    std::string keyNoTtl(size_t i) const;

  private:
    void splitEntries();
    bool parseEntries(const std::string& startOrigin, std::string& error);

    std::string file_, text_, origin_;
    std::vector<ZoneEntry> entries_;
    int soa_ = -1;
    uint32_t serial_ = 0;
    bool includes_ = false;
    std::shared_ptr<ldns_rdf> endOrigin_;
    uint32_t endTtl_ = 0xFFFFFFFFu;
};

/// A record's key: lower-case owner, type, TTL (unless `withTtl` is false) and canonical rdata (RFC 4034
/// §6.2), the SOA serial replaced by zero when `maskSerial`.
std::string recordKey(const ldns_rr* rr, bool withTtl, bool maskSerial);

/// Presentation form of a record (ldns_rr2str, without the line end).
std::string recordText(const ldns_rr* rr);

}  // namespace gslb::ctl
