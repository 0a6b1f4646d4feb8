// weighted-random chooser (HP SA9200). Rules in stages.hpp.
#include "metrics/stages/choose_util.hpp"
#include "metrics/stages/stages.hpp"

namespace gslb::metrics {

int chooseWeightedRandom(std::span<const Candidate> active, std::uint64_t taken, const Params&, ChooserState&,
                         Rng& rng) {
    return detail::pickWeighted(active, taken, rng, [](const Candidate& c) {
        // The config guarantees a finite weight >= 0; be safe on the query path anyway.
        if (std::isnan(c.weight)) return 1.0;
        if (!(c.weight > 0)) return 0.0;
        return std::isfinite(c.weight) ? c.weight : 1e12;
    });
}

}  // namespace gslb::metrics
