#pragma once
// Small builders shared by the metrics tests.

#include <cmath>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "metrics/candidate.hpp"
#include "metrics/chooser_state.hpp"
#include "metrics/params.hpp"
#include "metrics/rng.hpp"
#include "metrics/stages/stages.hpp"

namespace gslb::metrics::test {

// Brocade's metric order with HP's last step: the default before `headroom` (doc/design.md), which the seeds'
// pipeline tests name as an operator would.
inline const std::vector<std::string>& brocadeStages() {
    static const std::vector<std::string> names{"health",    "session-threshold", "session-capacity",
                                                "flashback", "least-connections", "random"};
    return names;
}

// n healthy candidates with indices 0..n-1 and every metric unknown.
inline std::vector<Candidate> candidates(std::size_t n) {
    std::vector<Candidate> v(n);
    for (std::size_t i = 0; i < n; ++i) {
        v[i].index = static_cast<std::uint16_t>(i);
        v[i].health = Health::Up;
    }
    return v;
}

// Runs a filter and returns the kept indices in order.
inline std::vector<int> kept(FilterFn f, std::vector<Candidate> v, const Params& p = {}) {
    const std::size_t n = f(std::span<Candidate>(v), p);
    std::vector<int> out;
    for (std::size_t i = 0; i < n; ++i) out.push_back(v[i].index);
    return out;
}

// Picks `count` times (one answer each) and returns the picked indices as letters A, B, C, ...
inline std::string sequence(ChooserFn f, const std::vector<Candidate>& active, ChooserState& state, Rng& rng,
                            int count, const Params& p = {}) {
    std::string s;
    for (int i = 0; i < count; ++i) {
        const int pos = f(active, 0, p, state, rng);
        s += pos < 0 ? '-' : static_cast<char>('A' + active[static_cast<std::size_t>(pos)].index);
    }
    return s;
}

// Draws `draws` single picks and returns the share of each index (size = max index + 1).
inline std::vector<double> shares(ChooserFn f, const std::vector<Candidate>& active, std::uint64_t seed,
                                  int draws, const Params& p = {}) {
    Rng rng(seed);
    ChooserState state(active.size());
    std::vector<double> count(kMaxServices, 0.0);
    for (int i = 0; i < draws; ++i) {
        const int pos = f(active, 0, p, state, rng);
        if (pos >= 0) count[active[static_cast<std::size_t>(pos)].index] += 1;
    }
    for (auto& c : count) c /= draws;
    return count;
}

// Tolerance for a share p over n draws: 6 standard deviations of a binomial proportion, so a correct
// chooser fails with probability < 1e-8 (and, with a fixed seed, never).
inline double sixSigma(double p, int n) {
    return 6.0 * std::sqrt(p * (1 - p) / n);
}

}  // namespace gslb::metrics::test
