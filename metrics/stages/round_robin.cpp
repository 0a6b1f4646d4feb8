// round-robin chooser (WebSphere plug-in, Brocade). Rules in stages.hpp.
#include "metrics/stages/choose_util.hpp"
#include "metrics/stages/stages.hpp"

namespace gslb::metrics {

int chooseRoundRobin(std::span<const Candidate> active, std::uint64_t taken, const Params&,
                     ChooserState& state, Rng& rng) {
    const auto untaken = [&](const Candidate& c) { return !detail::isTaken(taken, c.index); };
    int pos;
    if (!state.started_) {
        // A random first member, so that workers (each with its own state) don't all begin with the same
        // service after a start or reload.
        state.started_ = true;
        pos = detail::pickUniform(active, taken, rng);
    } else {
        // The cursor is a service index, not a position: when filters remove members, the turn goes to the
        // next surviving index after the one answered last.
        pos = detail::nextInTurn(active, state.last_, untaken);
    }
    if (pos >= 0) state.last_ = active[pos].index;
    return pos;
}

}  // namespace gslb::metrics
