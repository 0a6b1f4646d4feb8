// The config digest of /v1/status (doc/ns-set.md): what must be the same on every
// member of a [cluster], hashed, so `gslbctl status` can tell when one member runs another config.
#pragma once
#include <toml++/toml.h>

#include <string>

#include "server/conf/config.hpp"

namespace gslb::server {

/// SHA-256 (lower-case hex) over the config file as parsed, re-written canonically (keys in order, no
/// comments or layout) without the keys that differ from member to member by design ([server] listen and
/// state_dir, [control] listen, [cluster] self), then each [[zone]]'s name and file bytes in config order.
/// Files other than the config and the zone files themselves ($INCLUDEs, keys, nets_file, the token) are not
/// covered.
/// Empty when a file cannot be read (the config was loaded from it a moment ago, so: a race with an edit).
/// The config part comes from Config::tomlDigest (canonicalTomlDigest at load), not from a second parse.
std::string configDigest(const Config& c);

/// SHA-256 (lower-case hex) of `root` re-written canonically without the per-member keys; erases them from
/// `root`. loadConfig keeps it in Config::tomlDigest while it has the parsed table: parsing the file a second
/// time for the digest was 37 % of the start-up at 10,000 GSLB hostnames.
std::string canonicalTomlDigest(toml::table& root);

}  // namespace gslb::server
