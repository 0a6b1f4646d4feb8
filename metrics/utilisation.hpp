#pragma once
// How full a candidate is: load ÷ capacity, the one comparison of load across sites of unequal size. The HP
// SA9200 text names the trap of comparing raw counts ("Server B is the site with the least number of
// connections, although it is already 80% loaded while Server A is only 30% loaded", HP Multi-Site Traffic
// Director SA9200 User Manual, p. 17). Pure, no allocation.

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "metrics/candidate.hpp"

namespace gslb::metrics {

// Where a utilisation came from.
enum class LoadBasis : std::uint8_t {
    None,         // no capacity known: neither a session table nor a configured capacity
    Sessions,     // the site's session table: sessionsUsed / sessionsMax (reports or a [source])
    Connections,  // the service: connections / its configured `capacity`
};

struct Utilisation {
    LoadBasis basis = LoadBasis::None;
    double capacity = kUnknown;  // seats (sessions or connections), > 0; NaN when unknown
    double load = kUnknown;      // seats in use, >= 0; NaN when unknown (a capacity without a fresh load)
    double value = kUnknown;     // load / capacity, >= 0 (may exceed 1: more in use than the table holds);
                                 // NaN when either is unknown
    // Free seats, capacity - load clamped at 0; NaN when unknown.
    double free() const noexcept {
        if (std::isnan(capacity) || std::isnan(load)) return kUnknown;
        return std::max(0.0, capacity - load);
    }
};

// The utilisation of a candidate. The site's session table wins when both it and the service's capacity are
// known: it is measured (each report or scrape), counts every hostname and client the site's load balancer
// carries, and follows a site that loses capacity; `capacity` is a static number an operator wrote. So:
//  1. sessionsMax > 0 (known): basis Sessions, capacity = sessionsMax, load = sessionsUsed (NaN if unknown).
//  2. else capacity > 0: basis Connections, capacity = capacity, load = connections (NaN if unknown).
//  3. else basis None, everything NaN.
// Stale values are NaN already (fillCandidate: older than max_age counts as unknown, never as zero).
// Inline: the headroom chooser and its TTL rule call it per candidate and query.
inline Utilisation utilisationOf(const Candidate& c) noexcept {
    Utilisation u;
    if (c.sessionsMax > 0) {
        u.basis = LoadBasis::Sessions;
        u.capacity = c.sessionsMax;
        u.load = c.sessionsUsed >= 0 ? c.sessionsUsed : kUnknown;
    } else if (c.capacity > 0) {
        u.basis = LoadBasis::Connections;
        u.capacity = c.capacity;
        u.load = c.connections >= 0 ? c.connections : kUnknown;
    } else {
        return u;
    }
    if (!std::isfinite(u.capacity)) return Utilisation{};
    if (!std::isnan(u.load)) u.value = u.load / u.capacity;
    return u;
}

}  // namespace gslb::metrics
