#pragma once
// Shared mechanics of the filter stages (internal to metrics/stages/). See stages.hpp for the rules.

#include <cmath>
#include <cstddef>
#include <span>

#include "metrics/candidate.hpp"

namespace gslb::metrics::detail {

// Compacts the candidates for which keep(c) holds to the front, stable; returns their number.
// hard == false: when none would be kept, keeps all (soft exclusion; the input is untouched).
template <class Keep>
std::size_t keepIf(std::span<Candidate> in, Keep keep, bool hard) {
    std::size_t count = 0;
    for (const Candidate& c : in) count += keep(c) ? 1 : 0;
    if (count == in.size() || (count == 0 && !hard)) return in.size();
    std::size_t w = 0;
    for (std::size_t r = 0; r < in.size(); ++r) {
        if (!keep(in[r])) continue;
        if (w != r) in[w] = in[r];
        ++w;
    }
    return w;
}

// Keep-the-best filter. better(a, b): a is strictly better than b. close(v, best): v is close enough to
// best. Unknown (NaN) values never set the best, and are kept: the stage has no evidence against them (a site
// whose agent has not reported, a service without a health check, a stale report). All unknown: all kept.
template <class Get, class Better, class Close>
std::size_t keepBest(std::span<Candidate> in, Get get, Better better, Close close) {
    double best = kUnknown;
    for (const Candidate& c : in) {
        const double v = get(c);
        if (!std::isnan(v) && (std::isnan(best) || better(v, best))) best = v;
    }
    if (std::isnan(best)) return in.size();
    return keepIf(
        in,
        [&](const Candidate& c) {
            const double v = get(c);
            return std::isnan(v) || close(v, best);
        },
        false);
}

}  // namespace gslb::metrics::detail
