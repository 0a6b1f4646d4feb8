// Zone-file edits shared by `zone add|del|serial` and `service add|del`: edit the text, check that exactly
// the intended records changed, bump the SOA serial in place, and validate the result with the server's own
// loader (zones::loadZone) on a temp file beside the original before anything replaces it.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tools/gslbctl/fileio.hpp"
#include "tools/gslbctl/zonetext.hpp"

namespace gslb::ctl {

struct ZoneEdit {
    std::string file;  // as the user named it (messages)
    ZoneText before;
    std::string candidate;                  // edited text, serial not yet bumped
    std::vector<std::string> expectedKeys;  // ZoneText::keys() the candidate must have
    std::string finalText;
    uint32_t oldSerial = 0, newSerial = 0;
    TempFile temp;  // the validated final text, ready to commit
};

/// Reads and parses `file`; `origin` may be empty (then the SOA owner; see ZoneText::parse).
bool openZone(const std::string& file, const std::string& origin, ZoneEdit& ed, std::string& error);

/// Appends "OWNER [TTL] IN TYPE RDATA". Refuses a record that is already there (any TTL).
bool addRecord(ZoneEdit& ed, const std::string& owner, const std::string& ttl, const std::string& type,
               const std::string& rdata, std::string& error);

/// Removes the records matching (owner[, type[, rdata]]). `removed` gets "file:line: record" for each.
/// Refuses to remove the SOA and fails when nothing matches.
bool deleteRecords(ZoneEdit& ed, const std::string& owner, const std::string& type, const std::string& rdata,
                   std::vector<std::string>& removed, std::string& error);

/// No record change: only the serial (for `zone serial`).
void keepRecords(ZoneEdit& ed);

/// Checks the candidate holds exactly the expected records, sets the serial (`setSerial`, or the YYYYMMDDnn
/// bump of today), writes the temp file and validates it with zones::loadZone. Nothing is committed.
bool prepareZone(ZoneEdit& ed, std::optional<uint32_t> setSerial, std::string& error);

/// Replaces every occurrence of `from` in `s` by `to` (temp paths in the loader's messages).
std::string replaceAll(std::string s, const std::string& from, const std::string& to);

/// Splits "[TTL] [IN] TYPE RDATA…" words: TTL is a leading number (or BIND units: 1h30m). For TXT and SPF a
/// word with a space or tab and no '"' in it is quoted, so it stays one string (RFC 1035 §5.1 would split
/// it).
bool splitRecordWords(const std::vector<std::string>& words, std::string& ttl, std::string& type,
                      std::string& rdata, std::string& error);

}  // namespace gslb::ctl
