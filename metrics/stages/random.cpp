// random chooser (HP SA9200 step 3, WebSphere plug-in "Random", seed 003). Rules in stages.hpp.
#include "metrics/stages/choose_util.hpp"
#include "metrics/stages/stages.hpp"

namespace gslb::metrics {

int chooseRandom(std::span<const Candidate> active, std::uint64_t taken, const Params&, ChooserState&,
                 Rng& rng) {
    return detail::pickUniform(active, taken, rng);
}

}  // namespace gslb::metrics
