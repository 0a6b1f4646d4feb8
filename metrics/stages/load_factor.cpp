// load-factor chooser (JBoss mod_cluster User Guide, ch. 11 Load Metrics, p. 40). The factor itself is
// computed at report time on the control thread (metrics/load_factor.hpp); here it is only used as a weight.
// Rules in stages.hpp.
#include <algorithm>

#include "metrics/stages/choose_util.hpp"
#include "metrics/stages/stages.hpp"

namespace gslb::metrics {

int chooseLoadFactor(std::span<const Candidate> active, std::uint64_t taken, const Params&, ChooserState&,
                     Rng& rng) {
    double lowestKnown = kUnknown;
    for (const Candidate& c : active)
        if (!std::isnan(c.loadFactor))
            lowestKnown = std::isnan(lowestKnown) ? c.loadFactor : std::min(lowestKnown, c.loadFactor);
    if (std::isnan(lowestKnown)) return detail::pickUniform(active, taken, rng);
    return detail::pickWeighted(active, taken, rng, [&](const Candidate& c) {
        return std::clamp(std::isnan(c.loadFactor) ? lowestKnown : c.loadFactor, 0.0, 100.0);
    });
}

}  // namespace gslb::metrics
