// Drains that survive a restart ([server] state_dir, the service work; gdnsd's admin_state file is the
// model). The admin state of sites and services (drained / enabled) lives in the StateTable; this writes its
// drained entries to `state_dir/admin-state.json` after every change and applies them at start.
//
// File shape (JSON, written by us, read back by us; an operator may delete it to forget every drain):
//   {"version": 1, "drained_sites": ["east"],
//    "drained_services": [{"site": "west", "address": "192.0.2.20"}],
//    "changes": [{"site": "east", "enabled": false, "time_ms": 1764624000123, "origin": "http://…", "local":
//    false}]}
// "changes" (server/state/admin_log.hpp) says who took each drain and enable and whether it was this member's
// alone (`?scope=member`); when present it decides, and the two lists stay for readers of the first version
// of the file. A file without it (written before) gives its drains the time 0 and this member's scope.
#pragma once
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "metrics/state_table.hpp"
#include "server/state/admin_log.hpp"

namespace gslb::server::service {

inline constexpr const char* kAdminStateFile = "admin-state.json";

/// What load() did: each entry applied, and each dropped because its site or service has left the config
/// (one human-readable line each, for the log).
struct AdminStateLoad {
    size_t applied = 0;
    std::vector<std::string> dropped;
};

/// Writes the drained sites and services of `table` to `dir`/admin-state.json atomically: a temp file in the
/// same directory, fsync, rename over the old file, fsync of the directory. A crash at any point leaves the
/// old file or the new one, never a mix. False and `error` (the file and errno) when a step fails; the old
/// file is then untouched. With `log`, its changes of the sites and services in `table` are written too.
bool saveAdminState(const metrics::StateTable& table, const std::string& dir, std::string& error,
                    const cluster::AdminLog* log = nullptr);

/// Writes `text` to `dir`/`name` in the same atomic way (temp file, fsync, rename, directory fsync). Shared
/// by every file of state_dir (zone-serials.json too).
bool writeStateFile(const std::string& dir, const char* name, const std::string& text, std::string& error);

/// Reads `dir`/`name`, a JSON object writeStateFile wrote with "version": 1, and hands it to `apply`, which
/// throws (any std::exception, its what() the reason) on content it refuses. Shared by every file of
/// state_dir. A missing file is no error and `apply` is not called. False and "file: why" when the file
/// cannot be read, is not JSON, is not a version 1 object ("not a version 1 " + `what`), or `apply` threw;
/// `hint`, when not empty, follows those last three (" (fix or delete it)").
bool loadStateFile(const std::string& dir, const char* name, const char* what, const char* hint,
                   const std::function<void(const nlohmann::json&)>& apply, std::string& error);

/// Reads `dir`/admin-state.json and drains what it names in `table`. A missing file is no error (nothing
/// was ever drained, or it was deleted). An unreadable or malformed file is an error ("file: why"): the
/// caller decides (at start: refuse to start rather than serve a site the operator drained). With `log`,
/// the file's changes are put in it (those of sites and services `table` has).
bool loadAdminState(metrics::StateTable& table, const std::string& dir, AdminStateLoad& out,
                    std::string& error, cluster::AdminLog* log = nullptr);

/// Creates `dir` (mode 0750) when it does not exist and hands it to `uid`/`gid` when those are not -1, so the
/// state can still be written after privileges are dropped. False and `error` when it cannot.
bool prepareStateDir(const std::string& dir, int uid, int gid, std::string& error);

}  // namespace gslb::server::service
