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
int checkConfig(const std::string& configPath, std::FILE* out);

}  // namespace gslb::server
