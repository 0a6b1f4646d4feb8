// random chooser (HP SA9200 User Manual, p. 17, step 3; WebSphere V6 Scalability and Performance Handbook
// (SG24-6392), Random). Rules in stages.hpp.
#include "metrics/stages/choose_util.hpp"
#include "metrics/stages/stages.hpp"

namespace gslb::metrics {

int chooseRandom(std::span<const Candidate> active, std::uint64_t taken, const Params&, ChooserState&,
                 Rng& rng) {
    return detail::pickUniform(active, taken, rng);
}

}  // namespace gslb::metrics
