// Each zone's IXFR journal (zones/journal.hpp) through snapshots and restarts: a reload extends the journal
// the running zone has by the difference to the new one; at start the journal kept in
// `state_dir/journal/<zone>.ixfr` is read, checked against the zone just loaded and kept only when it ends
// exactly there (dropped otherwise: IXFR answers AXFR-style until the next change). Knot keeps the same in
// its journal database, NSD in its `.ixfr` files beside the zone file.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "server/conf/config.hpp"
#include "zones/journal.hpp"
#include "zones/zone.hpp"

namespace gslb::server::service {

inline constexpr const char* kJournalDir = "journal";

/// A journal for main to write into state_dir once the snapshot that holds it is published; nullptr:
/// remove the zone's file (the journal is off for it).
struct JournalWrite {
    std::string zone;  // presentation form
    std::shared_ptr<const zones::Journal> journal;
};

/// Gives `z` (zone `zc`, just loaded) its journal. `before` is the zone the running snapshot serves under
/// that name (nullptr at start or for a zone new to the config); `starting` says this is the first snapshot
/// of the process, which reads state_dir's file. With ixfr_journal_depth or ixfr_journal_size 0 the zone
/// gets none. What is to be written goes to `writes`; a journal file that cannot be used is a line in
/// `notes` (dropped because the zone changed while gslbd was down: normal for a signed zone) or in
/// `warnings` (unreadable or corrupt: file and why). Never fails: the worst case is no journal.
void attachJournal(const ZoneConf& zc, zones::Zone& z, const zones::Zone* before, bool starting,
                   const std::string& stateDir, std::vector<JournalWrite>& writes,
                   std::vector<zones::LoadWarning>& warnings, std::vector<std::string>& notes);

/// Writes (atomically) or removes each journal of `writes` under `stateDir`/journal/. False and `error` (the
/// first failure; the others are still tried) when one could not be.
bool saveJournals(const std::string& stateDir, const std::vector<JournalWrite>& writes, std::string& error);

/// The path of zone `name`'s journal file under `stateDir`.
std::string journalPath(const std::string& stateDir, const std::string& name);

}  // namespace gslb::server::service
