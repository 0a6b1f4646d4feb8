#pragma once
// One candidate of a GSLB hostname on the query path: a plain value the server fills per query from the
// StateTable (see fillCandidate in state_table.hpp) and the selection pipeline filters in place.

#include <cstddef>
#include <cstdint>
#include <limits>

namespace gslb::metrics {

// Most services one hostname may have. Choosers keep per-service state in fixed arrays of this size (no heap
// on the query path, doc/design.md "Principles" 7) and `select` tracks answered services in a 64-bit mask, so
// the config loader must refuse a hostname with more services than this.
inline constexpr std::size_t kMaxServices = 64;

// Health of a service as its checks see it. Unknown = the first check has not finished yet, or the service
// has no check (`check = "none"` or absent).
enum class Health : std::uint8_t { Unknown = 0, Up = 1, Down = 2 };

// NaN: the value of every metric that is unknown (never reported, or reported longer ago than max_age —
// doc/design.md "Stale metrics": stale counts as unknown, never as zero).
inline constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();

// Candidate::topoRank of a site that is not in the client's list (or a client whose region is unknown).
inline constexpr std::uint8_t kNoRank = 255;

struct Candidate {
    std::uint16_t index =
        0;  // position in the hostname's service list, < kMaxServices; what select() returns
    Health health = Health::Unknown;
    bool enabled = true;             // admin state of the service (false = drained)
    bool siteUp = true;              // the site is up
    bool siteEnabled = true;         // admin state of the site (false = drained)
    std::uint8_t preference = 128;   // site admin preference 0..255, higher wins; 0 takes the site out
    double connections = kUnknown;   // reported connections of the service (count)
    double cpu = kUnknown;           // site load balancer CPU, percent 0..100
    double sessionsUsed = kUnknown;  // site session table entries in use (count)
    double sessionsMax = kUnknown;   // site session table size (count)
    double l7Ms = kUnknown;          // FlashBack L7 (application) time, ms; slowest application if several
    double l4Ms = kUnknown;          // FlashBack L4 (TCP connect) time, ms; slowest if several
    double weight = 1.0;             // configured service weight (weighted choosers), >= 0
    double loadFactor = kUnknown;    // mod_cluster load balance factor 0..100, higher = less loaded
    // Client-aware values, filled per query by the server only for hostnames whose policy uses them:
    std::uint8_t topoRank = kNoRank;  // topology: position of the site in the client's region list (0 first)
    double distanceKm = kUnknown;     // topology "nearest": great-circle distance client -> site, km
    double hashScore = kUnknown;      // hashed: weighted rendezvous score of (client prefix, service)
    double rttMs = kUnknown;  // rtt: the round-trip time site agents learned from the client's prefix to this
                              // candidate's site, ms (unknown: no figure, or older than rtt_max_age)
    // The service's configured `capacity` (sessions or connections it can hold, > 0); NaN when not set. What
    // utilisationOf (metrics/utilisation.hpp) divides connections by when the site reports no session table.
    double capacity = kUnknown;
    // A health check of the service failed but has not reached `fall` yet: still up, but uncertain. The
    // headroom TTL rule (metrics/balance.hpp) gives such answers ttl_min, so a failure confirmed a few checks
    // later leaves fewer clients cached on the site.
    bool suspect = false;
    // Filled per query by the server for the `headroom` chooser only (metrics/balance.hpp):
    double flow = 0;           // committed flow: sum of the demand of answers naming this service still
                               // cached by resolvers (sessions/s, >= 0), as this gslbd gave them
    double pending = 0;        // the sessions those answers are still to bring (sum of demand x the TTL
                               // they have left, >= 0): in flight, not yet in the site's metrics
    double demand = kUnknown;  // the querying resolver's estimated demand (sessions/s), the same in every
                               // candidate of one query; NaN: unknown
};

}  // namespace gslb::metrics
