// `gslbd --check` and `gslbctl check`: one checker, one summary.
#pragma once
#include <cstdio>
#include <string>

namespace gslb::server {

/// Loads the config at `configPath` and every zone as a start would, plus what a start checks on top (the
/// [control] token file, [server] user, state_dir and its admin state). Prints one line per problem
/// ("file:line: why") and per warning ("where: warning: why") to `out`, then the summary
/// ("FILE: ok: 2 zone(s), 40 records, 3 GSLB hostname(s), 1 warning(s)" or "FILE: N problem(s), M
/// warning(s)"). Returns 0 when there is no problem (warnings allowed), 1 otherwise.
/// `checker` says whose check it is: kStart (`gslbd --check`) stands for a gslbd about to start here, as this
/// user (a unit's ExecStartPre, doc/operating.md's check before `systemctl start`), so it also warns about
/// the user that gslbd would run as; kConfig (`gslbctl check`) checks the config for whoever edits it, on any
/// machine (a workstation, CI, a container), where the checker's own uid says nothing about how gslbd will be
/// started: it leaves those warnings out (an unset `[server] user` as root repeated on every check in a
/// container, where `gslbd --check` and gslbd's own log still say it).
enum class Checker { kStart, kConfig };
int checkConfig(const std::string& configPath, std::FILE* out, Checker checker = Checker::kStart);

/// checkConfig's warning about an unset `[server] user` (doc/operating.md), or empty: it is true only
/// where the gslbd this check stands for would stay root. `root`: the checker's effective uid is 0; `inUnit`:
/// it runs inside a systemd unit (INVOCATION_ID, systemd.exec(5): a unit's ExecStartPre runs as the unit's
/// User=, so root there means the unit keeps gslbd root); `systemdHost`: systemd is the init
/// (/run/systemd/system/, sd_booted(3)), where doc/operating.md has an unset user with the shipped unit,
/// which sets User= itself: a root check by hand there (doc/operating.md's `sudo gslbd --check`) says
/// nothing; a start by hand as root still warns in its own log. Elsewhere (no systemd: a container, another
/// supervisor, a shell) root without `user` stays root, and the check says so.
std::string unsetUserWarning(bool root, bool inUnit, bool systemdHost);

}  // namespace gslb::server
