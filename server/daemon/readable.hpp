// What a reload reads again, and whether the user gslbd runs as may read it. gslbd reads every file at start
// as root, then drops to [server] user; a file only root can read (a TSIG secret at 0600, the control token
// made under `umask 077`, DNSSEC .private files) made the start and `gslbd --check` pass and every later
// reload fail
// ("[key.xfr] secret_file: cannot read ./xfr.key: Permission denied"), found by a new user. So the start says
// it at once, and `gslbd --check` run as root checks as that user.
#pragma once
#include <string>
#include <vector>

#include "server/conf/config.hpp"
#include "server/daemon/privileges.hpp"

namespace gslb::server::service {

struct ReadPath {
    std::string what;  // the setting that names it: "[key.xfr] secret_file", "zone gslb.example.com. file"
    std::string path;
    bool dir = false;  // a directory gslbd lists (a signed zone's key_dir): it needs read and search
};

/// Every file and directory a reload of `cfg` reads: the config itself, each zone's file, each signed zone's
/// key_dir and the .key/.private files in it, [control] token_file, [server] cookie_secret_file, each
/// [key.NAME] secret_file, [topology] geoip and nets_file, each [check.NAME] ca_file. In that order; paths
/// that do not exist are listed too (the reload reports them as it would).
std::vector<ReadPath> pathsReadAtReload(const Config& cfg);

/// One path the caller may not read: `name` "[key.xfr] secret_file /etc/gslbd/xfr.key", `why` strerror
/// ("Permission denied").
struct Unreadable {
    std::string name, why;
};

/// Those of `paths` the calling process may not read: access(2) with R_OK (R_OK|X_OK for a directory), which
/// tests the real ids — after dropPrivileges the real ids are the user's. A missing path is not listed.
std::vector<Unreadable> unreadable(const std::vector<ReadPath>& paths);

/// unreadable() as `user` sees it, for a process running as root: a child drops to `user`
/// (dropPrivileges), checks, and writes them back through a pipe (a line each, name and why split by a tab).
/// False and `error` when the child cannot be made or cannot become `user`. Call it from a single-threaded
/// process (`gslbd --check`).
bool unreadableAs(const UserInfo& user, const std::vector<ReadPath>& paths, std::vector<Unreadable>& out,
                  std::string& error);

}  // namespace gslb::server::service
