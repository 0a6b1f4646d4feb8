// weighted-round-robin chooser (WebSphere V6 Scalability and Performance Handbook (SG24-6392), Workload
// management policies, "Weighted round robin"). Rules in stages.hpp.
#include <algorithm>

#include "metrics/stages/choose_util.hpp"
#include "metrics/stages/stages.hpp"

namespace gslb::metrics {

namespace {
std::int64_t configuredWeight(const Candidate& c, bool allZero) {
    if (allZero || std::isnan(c.weight)) return 1;
    if (!(c.weight > 0)) return 0;
    return static_cast<std::int64_t>(std::llround(std::min(c.weight, 1e9)));
}
}  // namespace

int chooseWeightedRoundRobin(std::span<const Candidate> active, std::uint64_t taken, const Params&,
                             ChooserState& state, Rng& rng) {
    bool allZero = true;
    for (const Candidate& c : active) allZero = allZero && configuredWeight(c, false) == 0;
    // Members seen for the first time in this cycle get their configured weight.
    const auto fill = [&] {
        for (const Candidate& c : active) {
            const std::uint64_t bit = std::uint64_t{1} << c.index;
            if (state.filled_ & bit) continue;
            state.remaining_[c.index] = configuredWeight(c, allZero);
            state.filled_ |= bit;
        }
    };
    fill();
    const auto untaken = [&](const Candidate& c) { return !detail::isTaken(taken, c.index); };
    const auto eligible = [&](const Candidate& c) { return untaken(c) && state.remaining_[c.index] > 0; };

    int pos = -1;
    if (!state.started_) {
        // "the plug-in selects a cluster member at random from which to start" (WebSphere V6 Scalability and
        // Performance Handbook (SG24-6392), Workload management policies).
        std::uint64_t free = 0;
        for (const Candidate& c : active) free += eligible(c) ? 1 : 0;
        std::uint64_t k = rng.uniform(free);
        for (std::size_t i = 0; i < active.size() && pos < 0; ++i)
            if (eligible(active[i]) && k-- == 0) pos = static_cast<int>(i);
        if (pos >= 0) {
            state.started_ = true;
            state.cycleStart_ = active[pos].index;
        }
    } else {
        pos = detail::nextInTurn(active, state.last_, eligible);
    }
    if (pos < 0) {
        bool anyLeft = false;
        for (const Candidate& c : active) anyLeft = anyLeft || state.remaining_[c.index] > 0;
        if (anyLeft) {
            // Only members already in this answer have weight left (answers > 1): answer the next untaken
            // member in turn without charging it, so the cycle's accounting stays that of the weights.
            pos = detail::nextInTurn(active, state.last_, untaken);
            if (pos >= 0) state.last_ = active[pos].index;
            return pos;
        }
        // "all weights reset when all reach 0": a new cycle, started at the member the first one started at
        // (or the next active one after it), so every cycle repeats the same order.
        state.filled_ = 0;
        fill();
        state.last_ = state.cycleStart_ - 1;
        pos = detail::nextInTurn(active, state.last_, eligible);
        if (pos < 0) return -1;  // everything is taken
    }
    state.last_ = active[pos].index;
    --state.remaining_[active[pos].index];
    return pos;
}

}  // namespace gslb::metrics
