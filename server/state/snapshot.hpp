// What the query path reads: config + compiled zones, immutable once published, swapped whole on reload
// (doc/design.md "Principles" 3). Workers check a generation counter (one atomic load per batch) and take the
// mutex only when it moved, so the hot path has no lock; an old snapshot is freed when the last worker lets
// go of it.
#pragma once
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>
#include <utility>

#include "server/conf/config.hpp"
#include "server/state/tls_context.hpp"
#include "server/state/cookies.hpp"
#include "server/state/zone_serials.hpp"
#include "server/state/gslb.hpp"
#include "server/state/journal_store.hpp"
#include "zones/answer.hpp"
#include "zones/zonedb.hpp"

namespace gslb::server {

struct Snapshot {
    Config config;
    zones::ZoneDb db;
    zones::AnswerOptions answer;
    Gslb gslb;
    int64_t resignAt = 0;  // unix seconds: rebuild (re-sign) by then; 0 when no zone is signed
    // unix seconds: the earliest key event of a signed zone (ZoneSigner::keyEventAt), rebuilt then; 0: none
    int64_t keyEventAt = 0;
    // The key files of each signed zone as they were just before this snapshot read them
    // (zones::keyFilesStamp): a change (gslbctl dnssec rollover, dnssec-settime) is picked up by a rebuild.
    struct KeyFiles {
        std::string zone, dir;
        uint64_t stamp = 0;
    };
    std::vector<KeyFiles> keyFiles;
    std::shared_ptr<const CookieJar> cookies;  // answer.cookies points here
    // DNS over TLS / XoT (server/state/tls_context.hpp): the context new TLS connections are accepted with;
    // null without tls_listen. Taken over from the previous snapshot while the three files are unchanged (a
    // re-sign or a drain rebuilds snapshots too, and must not fail on a key file the dropped user cannot
    // read); built again from the files when one changed.
    std::shared_ptr<SSL_CTX> tls;
    std::string tlsStamp;      // paths and (device, inode, size, mtime) of the files `tls` was built from
    std::string configDigest;  // server/conf/digest.hpp: the same on every member with the same config
    // state_dir's zone-serials.json as it should be once this snapshot serves: what was read, with the serial
    // of every zone updated. main writes it before publishing.
    service::ZoneSerials servedSerials;
    // What the build has to tell the operator, for gslbd's log and `gslbctl check`: the zones' warnings
    // (zones::Zone::warnings, file:line), and a line for each zone whose served serial is not the file's.
    std::vector<zones::LoadWarning> warnings;
    std::vector<std::string> serialNotes;
    // The IXFR journals this snapshot changed (server/state/journal_store.hpp), for main to write into
    // state_dir before publishing it.
    std::vector<service::JournalWrite> journalWrites;
};

/// Reads zone `zc`, gives its SOA the serial of zc.serialPolicy (zones::nextServedSerial after `lastSerial`,
/// at `now`, unix seconds), and compiles it; with `dnssec = true` signed with the keys in zc.keyDir. nullptr
/// and `error` when the file, a key or the signing fails. `before` (may be null) is the zone the running
/// snapshot serves: with "keep" and a file serial that is not ahead of `lastSerial`, the served serial moves
/// on by one only when the data differs from it. `note` (may be null) gets a line saying which serial is
/// served and why when it is not the file's; `warn` is set when that is because the file is behind.
std::unique_ptr<zones::Zone> loadConfiguredZone(const ZoneConf& zc, std::optional<uint32_t> lastSerial,
                                                int64_t now, std::string& error,
                                                const zones::Zone* before = nullptr,
                                                std::string* note = nullptr, bool* warn = nullptr);

/// Loads the config at `path` and every zone it names, binds the GSLB hostnames, and checks them together.
/// `previous` (may be null) lends its service state (health, drain, reports) to the (site, address) pairs
/// that are still there, and its cookie secrets: without a secret file the random one is kept; a secret that
/// changed stays accepted for cookie_rollover seconds from `now` (s since the epoch). No zone's serial goes
/// back from the greater of `previous`'s and the one in [server] state_dir's zone-serials.json (a malformed
/// file is an error), whatever its serial_policy; nothing is written here (main saves servedSerials).
/// nullptr and `error`
/// ("file:line: message") when anything is wrong; nothing half-built escapes.
std::shared_ptr<Snapshot> buildSnapshot(const std::string& path, const Snapshot* previous, std::string& error,
                                        uint32_t now = 0);

/// The key changes (zones/dnssec_rollover.hpp keyChanges) from `previous` to `s`, for each signed zone of
/// both, as (zone, "zone Z: key 12345 (ZSK) becomes active") for the log and the events. Empty without
/// `previous`.
std::vector<std::pair<std::string, std::string>> keyEventLines(const Snapshot* previous, const Snapshot& s);

/// The signed zones whose key files changed since `s` read them (a log line each). `stamp` gets a digest of
/// the files as they are now, so a caller can tell one change from the next.
std::vector<std::string> changedKeyFiles(const Snapshot& s, uint64_t& stamp);

/// "149 records", or "149 records, 250 with DNSSEC" when signing added some: the zone files' records, then
/// what is served. The one wording of gslbd's reload line and `gslbctl check`.
std::string recordCountText(const zones::ZoneDb& db);

class SnapshotHolder {
  public:
    void publish(std::shared_ptr<const Snapshot> s) {
        std::lock_guard<std::mutex> g(m_);
        cur_ = std::move(s);
        gen_.fetch_add(1, std::memory_order_release);
    }
    std::shared_ptr<const Snapshot> get() const {
        std::lock_guard<std::mutex> g(m_);
        return cur_;
    }
    uint64_t generation() const { return gen_.load(std::memory_order_acquire); }

    /// Refreshes a worker's private copy when a new snapshot was published. Cheap when nothing changed.
    void refresh(std::shared_ptr<const Snapshot>& local, uint64_t& localGen) const {
        uint64_t g = generation();
        if (g == localGen) return;
        std::lock_guard<std::mutex> lk(m_);
        local = cur_;
        localGen = gen_.load(std::memory_order_relaxed);
    }

  private:
    mutable std::mutex m_;
    std::shared_ptr<const Snapshot> cur_;
    std::atomic<uint64_t> gen_{0};
};

}  // namespace gslb::server
