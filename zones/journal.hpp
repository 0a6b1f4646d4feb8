// Differences between successive versions of a zone, for IXFR (RFC 1995): what each published snapshot
// deleted and added, per zone, in a bounded journal kept in memory with the zone and on disk in state_dir
// across restarts (as Knot's journal and NSD's ixfr files keep them). The differences are computed from the
// compiled zones themselves, so every change is one — an edited record, a changed TTL, a new RRSIG or NSEC
// from a re-sign — and the journal is never trusted beyond what it proves: its file carries a digest of the
// zone it ends at, and a journal whose end is not the zone loaded at start is dropped (IXFR then answers
// AXFR-style, RFC 1995 §4), never applied to a zone it was not made from.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "zones/zone.hpp"

namespace gslb::zones {

/// One difference sequence of RFC 1995 §4, from serial `from` to serial `to`: `removed` records, the old
/// SOA first, then `added` records, the new SOA first. `records` holds them in that order, each as
/// owner (lower-case uncompressed wire) | type (16 bits) | TTL (32) | RDLENGTH (16) | RDATA, integers in
/// network order, class IN. A TTL change is a removal and an addition (a record is its owner, type, TTL
/// and data here). RRSIGs carry the TTL they are transferred with: their Original TTL (RFC 4034 §3).
struct Changeset {
    uint32_t from = 0;
    uint32_t to = 0;
    uint32_t removed = 0;  // records, the old SOA included
    uint32_t added = 0;    // records, the new SOA included
    std::string records;
};

/// One record of a Changeset, viewing its bytes.
struct DiffRecord {
    std::string_view owner;  // lower-case wire
    uint16_t type = 0;
    uint32_t ttl = 0;
    std::string_view rdata;
    std::string_view whole;  // the encoded record (its identity: owner, type, TTL and data)
};

/// Reads the records of a Changeset (or of any buffer in its encoding) one after another. next() is false
/// at the end and on malformed bytes (then bad() is true); the parser checks every length against what is
/// left, so it is safe on untrusted input.
class DiffReader {
  public:
    explicit DiffReader(std::string_view bytes) : p_(bytes) {}
    bool next(DiffRecord& r);
    bool bad() const { return bad_; }
    size_t offset() const { return off_; }

  private:
    std::string_view p_;
    size_t off_ = 0;
    bool bad_ = false;
};

/// Appends one record in the Changeset encoding. `owner` must be a valid uncompressed wire name.
void appendDiffRecord(std::string& out, std::string_view owner, uint16_t type, uint32_t ttl,
                      std::string_view rdata);

/// The differences from `before` to `after` (two versions of one zone, same apex): every record of
/// `before` that `after` does not hold (same owner, type, TTL and data) is removed, every record of `after`
/// that `before` does not hold is added; the SOAs always (from = before's serial, to = after's). Records are
/// in `after`'s node order (then `before`'s names that are gone), RRsets by type. O(records); allocates.
std::shared_ptr<Changeset> diffZones(const Zone& before, const Zone& after);

/// RFC 1995 §5's condensation of consecutive changesets (each one's `to` the next one's `from`) into one
/// from the first's `from` to the last's `to`: a record added and then removed again (or removed and added
/// back, the same TTL) is in neither list; the old SOA is the first's, the new SOA the last's. Empty input:
/// an empty Changeset.
Changeset condense(std::span<const Changeset* const> seq);

/// A digest of a zone's records in transfer order (every record as an AXFR sends it, the SOA with its
/// serial field zeroed): two loads of the same data have the same digest whatever serial they serve, so a
/// restart that only moved the serial on keeps its journal. SHA-256.
using ZoneDigest = std::array<uint8_t, 32>;
ZoneDigest zoneDigest(const Zone& zone);

/// How much history a zone keeps: at most `depth` changesets and `bytes` octets of them (the encoded
/// records), the oldest dropped first ([[zone]] ixfr_journal_depth, ixfr_journal_size: Knot's
/// journal-max-depth and journal-max-usage, NSD's ixfr-number and ixfr-size). Either 0: no journal.
struct JournalLimits {
    size_t depth = 20;
    size_t bytes = 10u << 20;
};

/// The differences of one zone up to its current version (`serial`, whose records have `digest`), oldest
/// first and consecutive. Immutable once built; snapshots share it and each of its changesets.
struct Journal {
    std::string apex;  // lower-case wire
    uint32_t serial = 0;
    ZoneDigest digest{};
    std::vector<std::shared_ptr<const Changeset>> entries;

    /// Octets of encoded records held.
    size_t bytes() const;
    /// The changesets that lead from `serial` to the current version, oldest first; empty when no entry
    /// starts at `serial` (older than the journal, or a serial this server never served).
    std::vector<const Changeset*> from(uint32_t serial) const;
    /// Whether some entry starts at `serial` (from() would not be empty). No allocation.
    bool covers(uint32_t serial) const;
};

/// The journal of zone `apex` after `change` (whose `to` is the version now served, with `digest`): `old`'s
/// entries when they end where `change` starts (else none: a gap cannot be bridged), then `change`, trimmed
/// to `limits` from the oldest. With limits of 0 the result holds no entry (the digest and serial still say
/// where it ends).
std::shared_ptr<const Journal> extendJournal(const Journal* old, std::string_view apex,
                                             std::shared_ptr<const Changeset> change,
                                             const ZoneDigest& digest, const JournalLimits& limits);

/// The on-disk form of a journal (state_dir/journal/, see journalFileName): a magic, a version, the apex,
/// the serial and digest it ends at, the changesets, and a SHA-256 of everything before it, so a torn or
/// altered file is detected rather than applied.
std::string serializeJournal(const Journal& j);

/// Parses what serializeJournal wrote. The file is untrusted: false and `error` (what is wrong, and at
/// which octet) when the magic, version, digest, lengths, record encoding, the chain of serials (each
/// changeset's `to` the next one's `from`, the last one's `to` the journal's serial, every step forwards
/// in RFC 1982 arithmetic) or the SOAs that open each list (at the apex, with the changeset's serials) are
/// not right, or an owner is outside the apex. Work is O(size).
bool parseJournal(std::span<const uint8_t> bytes, Journal& out, std::string& error);

/// The file name of zone `nameText`'s journal (presentation form, absolute): the lower-cased name with a
/// ".ixfr" suffix ("example.com.ixfr"), every octet outside [a-z0-9._-] written %XX, the root zone ".ixfr".
std::string journalFileName(std::string_view nameText);

/// The journal to serve `zone` with at start, from a journal read from disk: `disk` itself when it ends at
/// the zone's serial with its digest; extended by an SOA-only changeset when the data is the same and only
/// the serial moved on (a restart under serial_policy increment or unixtime); nullptr (dropped) otherwise,
/// with `why` saying so.
std::shared_ptr<const Journal> resumeJournal(std::shared_ptr<const Journal> disk, const Zone& zone,
                                             const ZoneDigest& digest, const JournalLimits& limits,
                                             std::string& why);

}  // namespace gslb::zones
