// least-selected chooser (Brocade ADX "least response selection"). Rules in stages.hpp.
#include <algorithm>
#include <limits>

#include "metrics/stages/choose_util.hpp"
#include "metrics/stages/stages.hpp"

namespace gslb::metrics {

int chooseLeastSelected(std::span<const Candidate> active, std::uint64_t taken, const Params&,
                        ChooserState& state, Rng&) {
    const std::uint64_t mask = detail::maskOf(active);
    const std::uint64_t joined = mask & ~state.prevActive_;
    const std::uint64_t stayed = mask & state.prevActive_;
    if (joined != 0 && stayed != 0) {
        // A newcomer (or one back from an outage) starts level with the least-selected of those that were
        // already answering instead of at its old, far lower count.
        std::uint64_t floor = std::numeric_limits<std::uint64_t>::max();
        for (const Candidate& c : active)
            if ((stayed >> c.index) & 1U) floor = std::min(floor, state.selected_[c.index]);
        for (const Candidate& c : active)
            if ((joined >> c.index) & 1U)
                state.selected_[c.index] = std::max(state.selected_[c.index], floor);
    }
    state.prevActive_ = mask;

    const int best = detail::pickBest(
        active, taken, [&](const Candidate& c) { return state.selected_[c.index]; },
        [](std::uint64_t a, std::uint64_t b) { return a < b; });
    if (best >= 0) ++state.selected_[active[best].index];
    return best;
}

}  // namespace gslb::metrics
