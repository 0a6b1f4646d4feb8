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
    return detail::keepBest(
        in, available, [](double a, double b) { return a > b; },
        [&](double v, double best) { return equalWithinTolerance(v, best, params.sessionTolerance); });
}

}  // namespace gslb::metrics
