// rtt stage (the RTT metric of Brocade ADX's GSLB, measured passively at the sites and cached per client
// network; Amazon Route 53's latency records). Rules in stages.hpp.
#include "metrics/compare.hpp"
#include "metrics/stages/filter_util.hpp"
#include "metrics/stages/stages.hpp"

namespace gslb::metrics {

std::size_t filterRtt(std::span<Candidate> in, const Params& params) {
    return detail::keepBest(
        in, [](const Candidate& c) { return c.rttMs; }, [](double a, double b) { return a < b; },
        [&](double v, double best) {
            return equalWithinToleranceOrFloor(v, best, params.rttTolerance, params.rttFloorMs);
        });
}

}  // namespace gslb::metrics
