#include "metrics/balance.hpp"

#include <algorithm>
#include <cmath>

#include "metrics/stages/choose_util.hpp"

namespace gslb::metrics {

namespace {

// The weight a weighted chooser reads (weighted-random's rule): NaN -> 1, negative -> 0, infinite -> large.
double sane(double w) noexcept {
    if (std::isnan(w)) return 1.0;
    if (!(w > 0)) return 0.0;
    return std::isfinite(w) ? w : 1e12;
}

}  // namespace

ShareSummary headroomShares(std::span<const Candidate> active, std::uint64_t taken, const Params& params,
                            std::span<Share> out) noexcept {
    ShareSummary sum;
    const std::size_t n = std::min(active.size(), out.size());
    // Pass 1: what is measured; the means that stand in for unknowns.
    double capSum = 0, capCount = 0, loadSum = 0, loadCap = 0;
    double demand = kUnknown;
    for (std::size_t i = 0; i < n; ++i) {
        Share& s = out[i];
        s = Share{};
        const Candidate& c = active[i];
        if (detail::isTaken(taken, c.index)) continue;
        s.measured = utilisationOf(c);
        s.flow = c.flow > 0 && std::isfinite(c.flow) ? c.flow : 0.0;
        sum.totalFlow += s.flow;
        if (c.demand >= 0 && std::isfinite(c.demand)) demand = c.demand;
        if (!std::isnan(s.measured.capacity)) {
            capSum += s.measured.capacity;
            ++capCount;
            if (!std::isnan(s.measured.load)) {
                loadSum += s.measured.load;
                loadCap += s.measured.capacity;
            }
        }
    }
    sum.demand = demand;
    const double d = std::isnan(demand) ? 0.0 : demand;
    sum.basis = capCount > 0 ? ShareBasis::Capacity : ShareBasis::Weight;
    const double meanCap = capCount > 0 ? capSum / capCount : kUnknown;
    const double meanUtil = loadCap > 0 ? loadSum / loadCap : 0.0;
    // Pass 2: targets.
    double targetSum = 0, capOnly = 0;
    for (std::size_t i = 0; i < n; ++i) {
        Share& s = out[i];
        const Candidate& c = active[i];
        if (detail::isTaken(taken, c.index)) continue;
        if (sum.basis == ShareBasis::Weight) {
            s.capacity = kUnknown;
            s.utilisation = 0;
            s.headroom = 1;
            s.target = sane(c.weight);
        } else {
            s.capacity = std::isnan(s.measured.capacity) ? meanCap : s.measured.capacity;
            s.utilisation = std::isnan(s.measured.value) ? meanUtil : s.measured.value;
            s.headroom = std::max(0.0, 1.0 - s.utilisation);
            s.target = s.capacity * s.headroom;
            capOnly += s.capacity;
        }
        targetSum += s.target;
    }
    // Every site full (or every weight 0): in proportion to capacity (or uniform) — the TTL rule shortens.
    const bool flat = !(targetSum > 0);
    std::size_t untaken = 0;
    for (std::size_t i = 0; i < n; ++i) untaken += detail::isTaken(taken, active[i].index) ? 0 : 1;
    if (untaken == 0) return sum;
    for (std::size_t i = 0; i < n; ++i) {
        Share& s = out[i];
        if (detail::isTaken(taken, active[i].index)) continue;
        if (!flat)
            s.target /= targetSum;
        else
            s.target = sum.basis == ShareBasis::Capacity && capOnly > 0 ? s.capacity / capOnly
                                                                        : 1.0 / double(untaken);
    }
    // Pass 3: fit of the batch, deficits, probabilities.
    sum.anyFits = false;
    for (std::size_t i = 0; i < n; ++i) {
        Share& s = out[i];
        if (detail::isTaken(taken, active[i].index)) continue;
        const double free = s.measured.free();
        s.fits = std::isnan(free) || !(d > 0) || d * double(params.ttlMin) <= free;
        sum.anyFits |= s.fits;
        s.deficit = std::max(0.0, s.target * (sum.totalFlow + d) - s.flow);
    }
    double mass = 0;
    for (std::size_t i = 0; i < n; ++i) {
        Share& s = out[i];
        if (detail::isTaken(taken, active[i].index)) continue;
        if (sum.anyFits && !s.fits) continue;
        mass += s.deficit;
    }
    // No deficit anywhere (no flow known yet and no demand): the targets themselves.
    const bool byTarget = !(mass > 0);
    if (byTarget) {
        mass = 0;
        for (std::size_t i = 0; i < n; ++i) {
            const Share& s = out[i];
            if (detail::isTaken(taken, active[i].index) || (sum.anyFits && !s.fits)) continue;
            mass += s.target;
        }
    }
    for (std::size_t i = 0; i < n; ++i) {
        Share& s = out[i];
        if (detail::isTaken(taken, active[i].index) || (sum.anyFits && !s.fits)) continue;
        const double m = byTarget ? s.target : s.deficit;
        s.probability = mass > 0 ? m / mass : 0.0;
    }
    if (!(mass > 0)) {
        // Every remaining target 0 (only possible when the fitting sites are all full): uniform over them.
        std::size_t k = 0;
        for (std::size_t i = 0; i < n; ++i)
            k += detail::isTaken(taken, active[i].index) || (sum.anyFits && !out[i].fits) ? 0 : 1;
        for (std::size_t i = 0; i < n; ++i)
            if (!detail::isTaken(taken, active[i].index) && !(sum.anyFits && !out[i].fits))
                out[i].probability = 1.0 / double(k);
    }
    return sum;
}

int chooseHeadroom(std::span<const Candidate> active, std::uint64_t taken, const Params& params,
                   ChooserState&, Rng& rng) {
    Share shares[kMaxServices];
    const std::size_t n = std::min(active.size(), kMaxServices);
    headroomShares(active.first(n), taken, params, {shares, n});
    // pickWeighted reads the weight through the candidate's position in `active`.
    const Candidate* base = active.data();
    return detail::pickWeighted(active.first(n), taken, rng,
                                [&](const Candidate& c) { return shares[&c - base].probability; });
}

const char* ttlReasonName(TtlReason r) noexcept {
    switch (r) {
        case TtlReason::Calm:
            return "calm";
        case TtlReason::Headroom:
            return "headroom";
        case TtlReason::Stale:
            return "stale";
        case TtlReason::Suspect:
            return "suspect";
        case TtlReason::Fixed:
            return "fixed";
    }
    return "?";
}

TtlDecision adaptiveTtl(const Candidate& chosen, std::uint32_t ttlMin, std::uint32_t ttl) noexcept {
    if (ttlMin >= ttl) return {ttl, TtlReason::Fixed};
    if (chosen.suspect) return {ttlMin, TtlReason::Suspect};
    const Utilisation u = utilisationOf(chosen);
    if (!std::isnan(u.capacity) && std::isnan(u.load)) return {std::max(ttlMin, ttl / 2), TtlReason::Stale};
    const double free = u.free(), d = chosen.demand;
    if (!std::isnan(free) && d > 0 && std::isfinite(d) && d * double(ttl) > free / 2) {
        const double t = std::floor(free / 2 / d);
        const auto clamped = t <= double(ttlMin) ? ttlMin : t >= double(ttl) ? ttl : std::uint32_t(t);
        return {clamped, TtlReason::Headroom};
    }
    return {ttl, TtlReason::Calm};
}

}  // namespace gslb::metrics
