// topology stage (F5 BIG-IP DNS topology records, gdnsd geoip datacenter lists). Rules in stages.hpp.
#include "metrics/stages/filter_util.hpp"
#include "metrics/stages/stages.hpp"

namespace gslb::metrics {

std::size_t filterTopology(std::span<Candidate> in, const Params& params) {
    std::uint8_t best = kNoRank;
    for (const Candidate& c : in)
        if (c.topoRank < best) best = c.topoRank;
    if (best != kNoRank)
        return detail::keepIf(
            in, [&](const Candidate& c) { return c.topoRank == best; }, false);
    // Nearest: the closest known distance sets the bar; an unknown distance (a site without a location) is
    // kept, as every keep-the-best stage keeps what it has no evidence against.
    return detail::keepBest(
        in, [](const Candidate& c) { return c.distanceKm; }, [](double a, double b) { return a < b; },
        [&](double v, double nearest) { return v <= nearest + params.nearestTolerance; });
}

}  // namespace gslb::metrics
