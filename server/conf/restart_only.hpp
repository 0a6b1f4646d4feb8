// Settings a reload reads but cannot apply: the sockets, threads and tables made once at start. A reload that
// changes one says so by name (a new user changed `workers` 2 -> 3, sent SIGHUP, got "reloaded" and the same
// threads, with no word).
#pragma once
#include <string>
#include <vector>

#include "server/conf/config.hpp"

namespace gslb::server {

/// Each restart-only setting that differs between `old` and `now`, in config order, as
/// "[server] workers (2 -> 3)": [server] listen, workers, user, state_dir, log, xdp; [control] (added or
/// removed) and its listen; [rrl] table_size. Empty when none changed. doc/operating.md "Upgrade" lists the
/// same keys.
std::vector<std::string> restartOnlyChanges(const Config& old, const Config& now);

}  // namespace gslb::server
