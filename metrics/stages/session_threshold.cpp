// session-threshold stage (Brocade ADX). Rules in stages.hpp.
#include "metrics/stages/filter_util.hpp"
#include "metrics/stages/stages.hpp"

namespace gslb::metrics {

std::size_t filterSessionThreshold(std::span<Candidate> in, const Params& params) {
    return detail::keepIf(
        in,
        [&](const Candidate& c) {
            // Unknown use (no report, stale, or no table size) can't be shown to be over: keep it.
            if (std::isnan(c.sessionsUsed) || std::isnan(c.sessionsMax) || !(c.sessionsMax > 0)) return true;
            return c.sessionsUsed / c.sessionsMax * 100.0 <= params.sessionThreshold;
        },
        false);  // every site over the threshold: answering one of them beats answering nothing
}

}  // namespace gslb::metrics
