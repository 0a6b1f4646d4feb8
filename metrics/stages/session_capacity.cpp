// session-capacity stage (Brocade Virtual ADX GSLB Guide, p. 10, "available session capacity tolerance").
// Rules in stages.hpp.
#include <algorithm>

#include "metrics/compare.hpp"
#include "metrics/stages/filter_util.hpp"
#include "metrics/stages/stages.hpp"

namespace gslb::metrics {

namespace {
// Available = unused entries of the session table. Clamped at 0: a site reporting more used than max is
// full, not "negatively" available (which would make the tolerance of the larger meaningless).
double available(const Candidate& c) {
    if (std::isnan(c.sessionsUsed) || std::isnan(c.sessionsMax)) return kUnknown;
    return std::max(0.0, c.sessionsMax - c.sessionsUsed);
}
}  // namespace

std::size_t filterSessionCapacity(std::span<Candidate> in, const Params& params) {
    // The most available sets the bar; the floor is taken against that site's table and the other's,
    // whichever is smaller (the seats a difference is small against).
    const Candidate* best = nullptr;
    for (const Candidate& c : in) {
        const double a = available(c);
        if (!std::isnan(a) && (best == nullptr || a > available(*best))) best = &c;
    }
    if (best == nullptr) return in.size();
    const double bestAvail = available(*best), bestMax = best->sessionsMax;
    return detail::keepIf(
        in,
        [&](const Candidate& c) {
            const double a = available(c);
            if (std::isnan(a)) return true;  // unknown: kept, never the bar
            if (equalWithinTolerance(a, bestAvail, params.sessionTolerance)) return true;
            const double table = std::min(c.sessionsMax, bestMax);
            return table > 0 && bestAvail - a <= table * params.sessionFloor / 100.0;
        },
        false);
}

}  // namespace gslb::metrics
