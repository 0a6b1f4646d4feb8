// `gslbctl status` with a [cluster]: every member's GET /v1/status side by side, and where their views differ
// (doc/ns-set.md). Pure functions over the parsed answers, for the unit tests.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gslb::ctl {

struct MemberStatus {
    std::string url;
    bool reached = false;  // false: `error` says why (unreachable, refused, not JSON)
    std::string error;
    nlohmann::json status;  // /v1/status when reached
};

/// One line per difference among the reached members, plus one per member not reached; empty when all
/// members were reached and agree. Compared: the config digest, each zone's serial, each site's and service's
/// drain, each service's health, and each site's metric age (never / fresh / stale against its max_age, or
/// fresh ages more than 10 s apart). Members with the same value are grouped: "down on A; up on B, C".
std::vector<std::string> clusterDifferences(const std::vector<MemberStatus>& members);

/// With [cluster] etcd: each of `listed` (the [cluster] members) as one member's /v1/status
/// `cluster.etcd.members` says (the entries each member keeps in etcd under its lease: config digest, zone
/// serials, drains, service health), shaped as a /v1/status for clusterDifferences: "config_digest", "zones"
/// (name, serial), "sites" (name, enabled) and "services" (site, address, enabled, health), the sites and
/// services being those any entry names. A listed member without an entry is not reached ("no entry in
/// etcd: …"); an entry of a member not listed is added after them.
std::vector<MemberStatus> membersFromEtcd(const nlohmann::json& status,
                                          const std::vector<std::string>& listed);

/// A MEMBERS table (URL, reached or why not, config digest, zone serials) and the DIFFERENCES section
/// ("DIFFERENCES: none, all N members agree" when there are none).
std::string renderClusterSummary(const std::vector<MemberStatus>& members);

}  // namespace gslb::ctl
