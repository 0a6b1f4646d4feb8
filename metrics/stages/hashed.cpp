// hashed chooser (persistence by client prefix, weighted rendezvous hashing). Rules in stages.hpp.
#include <cmath>

#include "metrics/stages/stages.hpp"

namespace gslb::metrics {

int chooseHashed(std::span<const Candidate> active, std::uint64_t taken, const Params&, ChooserState&, Rng&) {
    int best = -1;
    double bestScore = 0;
    for (std::size_t i = 0; i < active.size(); ++i) {
        if (taken & (std::uint64_t{1} << active[i].index)) continue;
        const double s = std::isnan(active[i].hashScore) ? -2.0 : active[i].hashScore;
        if (best < 0 || s > bestScore) {
            best = static_cast<int>(i);
            bestScore = s;
        }
    }
    return best;
}

}  // namespace gslb::metrics
