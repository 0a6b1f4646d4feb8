// best-server chooser (CA SiteMinder Web Agent technote on the Best Server Algorithm).
//
// Distribution table per service (ChooserState::capacity_ / throughput_), "active" = in the candidate set
// that survived the filters of this query:
//  recalibrate: zero every entry; for active i, throughput_i = (sum_j 1/rt_j) / (1/rt_i) — total throughput
//    divided by the server's own, so a slow server has a large "throughput" and is charged more per pick —
//    and capacity_i = 100. Inactive entries stay 0.
//  pick: recalibrate if a service became active since the previous pick (the seed's management thread) or an
//    inactive one still has capacity > 0; best = highest capacity, lowest index wins ties ("initially sets
//    the first policy server as the best ... if subsequent PS has greater capacity"); if best <= 0:
//    recalibrate and look again, still <= 0 -> none; else capacity_best -= throughput_best.
// A fresh state is all zeros, so the first pick recalibrates ("Initially ... reset to 0").
#include <algorithm>

#include "metrics/stages/choose_util.hpp"
#include "metrics/stages/stages.hpp"

namespace gslb::metrics {

namespace {

// Response time (ms) per active candidate: L7 when any active candidate has one (as flashback compares L7
// first), else L4, else all equal. An unknown time among known ones counts as the slowest known one
// (unknown never beats known). Times <= 0 are floored at 1 us to keep 1/rt finite.
double responseTime(const Candidate& c, double Candidate::*field, double slowest) {
    if (field == nullptr) return 1.0;
    const double t = c.*field;
    return std::max(std::isnan(t) ? slowest : t, 0.001);
}

void recalibrate(std::span<const Candidate> active, ChooserState& state) {
    std::fill(state.capacity_.begin(), state.capacity_.end(), 0.0);
    std::fill(state.throughput_.begin(), state.throughput_.end(), 0.0);
    ++state.recalibrations_;
    double Candidate::*field = nullptr;
    double slowest = kUnknown;
    for (double Candidate::*f : {&Candidate::l7Ms, &Candidate::l4Ms}) {
        for (const Candidate& c : active)
            if (!std::isnan(c.*f)) slowest = std::isnan(slowest) ? c.*f : std::max(slowest, c.*f);
        if (!std::isnan(slowest)) {
            field = f;
            break;
        }
    }
    double fastest = 0;
    for (const Candidate& c : active) {
        const double rt = responseTime(c, field, slowest);
        fastest = fastest == 0 ? rt : std::min(fastest, rt);
    }
    // total/(1/rt_i) = sum_j rt_i/rt_j, computed as (rt_i/fastest) * sum_j (fastest/rt_j): the same value,
    // O(N), and exact when the ratios are powers of two (10/20/40 ms -> 1.75, 3.5, 7), so ties in the
    // capacity table are real ties and not rounding noise.
    double sum = 0;
    for (const Candidate& c : active) sum += fastest / responseTime(c, field, slowest);
    for (const Candidate& c : active) {
        state.throughput_[c.index] = responseTime(c, field, slowest) / fastest * sum;
        state.capacity_[c.index] = 100.0;
    }
}

int highest(std::span<const Candidate> active, std::uint64_t taken, const ChooserState& state) {
    return detail::pickBest(
        active, taken, [&](const Candidate& c) { return state.capacity_[c.index]; },
        [](double a, double b) { return a > b; });
}

}  // namespace

int chooseBestServer(std::span<const Candidate> active, std::uint64_t taken, const Params&,
                     ChooserState& state, Rng&) {
    const std::uint64_t mask = detail::maskOf(active);
    bool recal = (mask & ~state.prevActive_) != 0;  // a server came into the active state
    state.prevActive_ = mask;
    for (std::size_t i = 0; i < state.capacity_.size() && !recal; ++i)
        recal = !((mask >> i) & 1U) && state.capacity_[i] > 0;  // an inactive server still has capacity
    if (recal) recalibrate(active, state);

    int best = highest(active, taken, state);
    if (best < 0) return -1;
    if (state.capacity_[active[best].index] <= 0) {
        recalibrate(active, state);
        best = highest(active, taken, state);
        if (best < 0 || state.capacity_[active[best].index] <= 0) return -1;
    }
    state.capacity_[active[best].index] -= state.throughput_[active[best].index];
    return best;
}

}  // namespace gslb::metrics
