// The config of metric sources (doc/design.md "Metric sources"): [source.NAME] tables, a site's
// `sources` and explicit mappings (`cpu = { source = …, metric = … }`), a service's `connections`.
// Internal to server/conf/config.cpp.
#pragma once
#include "server/conf/config.hpp"
#include "server/conf/schema.hpp"

namespace gslb::server {

/// Reads one [source.NAME].
SourceConf readSource(TableReader& t, const std::string& name);

/// Reads the inline table `key` of `t` as a mapping onto a configured source (`sources`); an absent key
/// leaves `set` false. The mapping must suit its source's type (metric for scrape, query for prometheus).
MappingConf readMapping(TableReader& t, const std::string& key,
                        const std::map<std::string, SourceConf>& sources);

/// Reads a site's `sources`, `cpu`, `sessions_used`, `sessions_max` and `loads` into `sc`.
void readSiteSources(TableReader& t, SiteConf& sc, const Config& cfg);

}  // namespace gslb::server
