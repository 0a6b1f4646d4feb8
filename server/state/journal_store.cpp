#include "server/state/journal_store.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "server/state/admin_state.hpp"
#include "zones/read_file.hpp"

namespace gslb::server::service {

std::string journalPath(const std::string& stateDir, const std::string& name) {
    return fmt::format("{}/{}/{}", stateDir, kJournalDir, zones::journalFileName(name));
}

void attachJournal(const ZoneConf& zc, zones::Zone& z, const zones::Zone* before, bool starting,
                   const std::string& stateDir, std::vector<JournalWrite>& writes,
                   std::vector<zones::LoadWarning>& warnings, std::vector<std::string>& notes) {
    const bool keep = zc.journal.depth > 0 && zc.journal.bytes > 0;
    const bool disk = !stateDir.empty();
    if (!keep) {
        if (disk && (starting || (before && before->journal()))) writes.push_back({zc.name, nullptr});
        return;
    }
    // A digest of the zone's data goes into the file, to check it against the zone loaded at the next
    // start; without state_dir nothing is written and it is not needed.
    auto digest = [&] { return disk ? zones::zoneDigest(z) : zones::ZoneDigest{}; };
    if (before) {
        if (before->serial() == z.serial()) {
            // The same serial is the same data (zones/serial.hpp: a change always moves it on).
            z.setJournal(before->sharedJournal());
            return;
        }
        auto j = zones::extendJournal(before->journal(), z.apex(), zones::diffZones(*before, z), digest(),
                                      zc.journal);
        z.setJournal(j);
        if (disk) writes.push_back({zc.name, std::move(j)});
        return;
    }
    zones::ZoneDigest d = digest();
    std::shared_ptr<const zones::Journal> read;
    if (starting && disk) {
        std::string path = journalPath(stateDir, zc.name), text, error;
        if (zones::readFile(path, text, error)) {
            auto j = std::make_shared<zones::Journal>();
            if (zones::parseJournal({reinterpret_cast<const uint8_t*>(text.data()), text.size()}, *j, error))
                read = std::move(j);
            else
                warnings.push_back({path, fmt::format("IXFR journal dropped, it is not sound ({}); IXFR is "
                                                      "answered AXFR-style until the zone changes",
                                                      error)});
        } else if (errno != ENOENT) {
            warnings.push_back({path, fmt::format("IXFR journal not read: {}", error)});
        }
    }
    std::string why;
    auto resumed = zones::resumeJournal(read, z, d, zc.journal, why);
    if (read && !resumed)
        notes.push_back(
            fmt::format("zone {}: IXFR journal dropped: {}; IXFR is answered AXFR-style until the "
                        "zone changes",
                        zc.name, why));
    if (!resumed) {
        // A journal with no entry yet: it says where the next difference starts.
        auto j = std::make_shared<zones::Journal>();
        j->apex = z.apex();
        j->serial = z.serial();
        j->digest = d;
        resumed = std::move(j);
    }
    z.setJournal(resumed);
    if (disk && resumed != read) writes.push_back({zc.name, std::move(resumed)});
}

bool saveJournals(const std::string& stateDir, const std::vector<JournalWrite>& writes, std::string& error) {
    if (stateDir.empty() || writes.empty()) return true;
    std::string dir = fmt::format("{}/{}", stateDir, kJournalDir);
    if (mkdir(dir.c_str(), 0750) != 0 && errno != EEXIST) {
        error = fmt::format("{}: {}", dir, strerror(errno));
        return false;
    }
    bool ok = true;
    for (const auto& w : writes) {
        std::string name = zones::journalFileName(w.zone), e;
        if (!w.journal) {
            std::string path = dir + "/" + name;
            if (unlink(path.c_str()) != 0 && errno != ENOENT && ok) {
                error = fmt::format("{}: {}", path, strerror(errno));
                ok = false;
            }
            continue;
        }
        if (!service::writeStateFile(dir, name.c_str(), zones::serializeJournal(*w.journal), e) && ok) {
            error = e;
            ok = false;
        }
    }
    return ok;
}

}  // namespace gslb::server::service
