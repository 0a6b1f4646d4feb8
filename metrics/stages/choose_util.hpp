#pragma once
// Shared mechanics of the chooser stages (internal to metrics/stages/).

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>

#include "metrics/candidate.hpp"
#include "metrics/rng.hpp"

namespace gslb::metrics::detail {

inline bool isTaken(std::uint64_t taken, std::uint16_t index) {
    return (taken >> index) & 1U;
}

inline std::uint64_t maskOf(std::span<const Candidate> active) {
    std::uint64_t m = 0;
    for (const Candidate& c : active) m |= std::uint64_t{1} << c.index;
    return m;
}

// Uniform among the untaken candidates; -1 when all are taken.
inline int pickUniform(std::span<const Candidate> active, std::uint64_t taken, Rng& rng) {
    std::size_t free = 0;
    for (const Candidate& c : active) free += isTaken(taken, c.index) ? 0 : 1;
    if (free == 0) return -1;
    std::uint64_t k = rng.uniform(free);
    for (std::size_t i = 0; i < active.size(); ++i) {
        if (isTaken(taken, active[i].index)) continue;
        if (k-- == 0) return static_cast<int>(i);
    }
    return -1;  // unreachable
}

// The untaken candidate whose key(c) is best by `better(a, b)` (a strictly better than b), the lowest service
// index winning ties; -1 when all are taken. Deterministic: the seeds' tie-breaks (SiteMinder's "first wins",
// Brocade's least-selected) are "first in the list".
template <class Key, class Better>
int pickBest(std::span<const Candidate> active, std::uint64_t taken, Key key, Better better) {
    int best = -1;
    for (std::size_t i = 0; i < active.size(); ++i) {
        const Candidate& c = active[i];
        if (isTaken(taken, c.index)) continue;
        if (best < 0) {
            best = static_cast<int>(i);
            continue;
        }
        const Candidate& b = active[static_cast<std::size_t>(best)];
        const auto kc = key(c), kb = key(b);
        if (better(kc, kb) || (!better(kb, kc) && c.index < b.index)) best = static_cast<int>(i);
    }
    return best;
}

// Untaken candidate with probability weight(c) / sum; weights must be finite and >= 0. A zero total
// (every untaken weight 0) falls back to uniform. -1 when all are taken.
template <class Weight>
int pickWeighted(std::span<const Candidate> active, std::uint64_t taken, Rng& rng, Weight weight) {
    double total = 0;
    int lastPositive = -1;
    for (std::size_t i = 0; i < active.size(); ++i) {
        if (isTaken(taken, active[i].index)) continue;
        const double w = weight(active[i]);
        total += w;
        if (w > 0) lastPositive = static_cast<int>(i);
    }
    if (!(total > 0)) return pickUniform(active, taken, rng);
    const double r = rng.uniform01() * total;
    double acc = 0;
    for (std::size_t i = 0; i < active.size(); ++i) {
        if (isTaken(taken, active[i].index)) continue;
        const double w = weight(active[i]);
        acc += w;
        if (w > 0 && r < acc) return static_cast<int>(i);
    }
    return lastPositive;  // r == total after rounding: the last candidate that can be chosen
}

// Round robin cursor: position of the eligible candidate with the smallest index > last, else (wrapping) the
// smallest eligible index; -1 when none is eligible. Independent of the order of `active`.
template <class Eligible>
int nextInTurn(std::span<const Candidate> active, int last, Eligible eligible) {
    int after = -1, wrap = -1;
    for (std::size_t i = 0; i < active.size(); ++i) {
        const Candidate& c = active[i];
        if (!eligible(c)) continue;
        if (c.index > last && (after < 0 || c.index < active[after].index)) after = static_cast<int>(i);
        if (wrap < 0 || c.index < active[wrap].index) wrap = static_cast<int>(i);
    }
    return after >= 0 ? after : wrap;
}

}  // namespace gslb::metrics::detail
