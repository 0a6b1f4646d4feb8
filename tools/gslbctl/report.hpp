// `gslbctl report SITE key=value…`: the report body of POST /v1/sites/SITE/report (doc/design.md "Reports").
#pragma once
#include <string>
#include <vector>

namespace gslb::ctl {

/// Builds the JSON report from key=value words: cpu, sessions_used, sessions_max (site numbers),
/// load.NAME (a named load for the load-factor policy), conn.ADDRESS or connections.ADDRESS (a service's
/// connections). Keys come out in a fixed order (cpu, sessions_used, sessions_max, loads, services), so
/// `cpu=35 sessions_used=200000 sessions_max=1000000 load.busy=0.3 conn.192.0.2.10=900` gives
/// {"cpu":35,"sessions_used":200000,"sessions_max":1000000,"loads":{"busy":0.3},
///  "services":{"192.0.2.10":{"connections":900}}}.
/// False with `error` on an unknown key, a value that is not a number, a key given twice or no key at all.
bool buildReport(const std::vector<std::string>& words, std::string& json, std::string& error);

}  // namespace gslb::ctl
