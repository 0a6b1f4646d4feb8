// Settings the policy never reads (doc/design.md "Metric sources"): a `preference` without a `preference`
// stage, a `factor` without `least-connections` or `cpu`, `[load.metric]` without `load-factor`, a service
// `weight` under a chooser that does not weigh (not weighted-random, weighted-round-robin or hashed), a
// report key no stage at that site looks at, a [cluster] of several members without `etcd` (which shares
// nothing between them). Each is valid config, so it is not an error; but silently
// ignoring it misled a new user
// ("preference = 0 does nothing"), so `gslbd` logs each at load and reload, and `gslbctl check` and
// `gslbd --check` print them as warnings.
#pragma once
#include <string>
#include <vector>

#include "server/conf/config.hpp"

namespace gslb::server {

/// What the stages of one policy read, as bits.
enum MetricRead : unsigned {
    kReadsCpu = 1u << 0,          // cpu
    kReadsSessions = 1u << 1,     // session-threshold, session-capacity, headroom
    kReadsLoads = 1u << 2,        // load-factor
    kReadsConnections = 1u << 3,  // least-connections, headroom
    kReadsPreference = 1u << 4,   // preference
    kReadsFlashback = 1u << 5,    // flashback
    kReadsFactor = 1u << 6,       // least-connections, cpu
};

/// The bits read by a policy (stage names; empty: the default policy).
unsigned metricsReadBy(const std::vector<std::string>& stages);

/// The bits read by the policy of any hostname with a service at `site`.
unsigned metricsReadAtSite(const Config& cfg, const std::string& site);

struct UnreadSetting {
    std::string where;    // "file:line" of the table that sets it
    std::string message;  // "[site.east] preference = 200 is not read: …"
};

/// Every setting of `cfg` that no policy reads, each [check.NAME] no service uses, and a [cluster] without
/// etcd, in config order.
std::vector<UnreadSetting> unreadSettings(const Config& cfg);

}  // namespace gslb::server
