#include "metrics/balance.hpp"

#include <algorithm>
#include <cmath>
#include <new>
#include <type_traits>

#include "metrics/stages/choose_util.hpp"

namespace gslb::metrics {

namespace {

// The weight a weighted chooser reads (weighted-random's rule): NaN -> 1, negative -> 0, infinite -> large.
double sane(double w) noexcept {
    if (std::isnan(w)) return 1.0;
    if (!(w > 0)) return 0.0;
    return std::isfinite(w) ? w : 1e12;
}

// The square-root margin: beta = gamma x F / sum √C_i seats per √seat held back from each candidate's free
// seats, target_i = max(0, free_i - beta √C_i), where pass 2 left target_i = free_i and margin_i = √C_i
// (capacity basis), F = targetSum, sum √C_i = rootSum. Its sum is at least (1 - gamma) F, so it is positive
// whenever any seat is free and gamma < 1; F = 0 (all full) keeps headroomShares' fallback. At gamma = 1 the
// sum is 0 at the margin's own fixed point (free seats ∝ √C), up to rounding: then the free seats. Without a
// margin (weights, nothing free, gamma 0 or NaN) every margin is 0. Returns the targets' new sum.
double applySqrtMargin(std::span<const Candidate> active, std::uint64_t taken, double gammaParam,
                       double targetSum, double rootSum, ShareSummary& sum, std::span<Share> out) noexcept {
    const double gamma = gammaParam > 0 ? std::min(gammaParam, 1.0) : 0.0;  // NaN: 0
    if (!(sum.basis == ShareBasis::Capacity && targetSum > 0 && rootSum > 0 && gamma > 0)) {
        for (Share& s : out) s.margin = 0;
        return targetSum;
    }
    const double freeSum = targetSum;
    sum.beta = gamma * freeSum / rootSum;
    targetSum = 0;
    for (std::size_t i = 0; i < out.size(); ++i) {
        Share& s = out[i];
        if (detail::isTaken(taken, active[i].index)) continue;
        s.margin *= sum.beta;
        s.target = std::max(0.0, s.free - s.margin);
        targetSum += s.target;
    }
    if (!(targetSum > 1e-9 * freeSum)) {  // only near gamma 1: what is left is rounding
        for (Share& s : out) s.target = s.free;
        targetSum = freeSum;
    }
    return targetSum;
}

}  // namespace

double projectedLoad(double load, double flow, double pending, double sessionTime) noexcept {
    if (std::isnan(load)) return kUnknown;
    if (!(pending > 0) || !(flow > 0)) return load;
    // The sessions in flight arrive over hh = pending / flow seconds (the flow-weighted TTL left); of the
    // sessions in use, the share 1 - exp(-hh / S) ends meanwhile (exponential session times of mean S),
    // taken as its Padé approximant hh / (S + hh / 2): no exp per candidate and query, within 6 % of it for
    // hh <= S. S unknown: none ends (the safe side).
    const double hh = pending / flow;
    const double ends =
        sessionTime > 0 && std::isfinite(sessionTime) ? load * hh / (sessionTime + hh / 2) : 0;
    return std::max(0.0, load + pending - ends);
}

ShareSummary headroomShares(std::span<const Candidate> active, std::uint64_t taken, const Params& params,
                            std::span<Share> out) noexcept {
    ShareSummary sum;
    const std::size_t n = std::min(active.size(), out.size());
    // Pass 1: what is measured; the means that stand in for unknowns. Each share is constructed here (the
    // chooser hands in storage not yet constructed: it would cost more than the shares to fill 64 of them).
    double capSum = 0, capCount = 0, loadSum = 0, loadCap = 0, loadFlow = 0;
    double demand = kUnknown;
    std::size_t untaken = 0;
    for (std::size_t i = 0; i < n; ++i) {
        Share& s = *::new (static_cast<void*>(&out[i])) Share{};
        const Candidate& c = active[i];
        if (detail::isTaken(taken, c.index)) continue;
        ++untaken;
        s.measured = utilisationOf(c);
        s.flow = c.flow > 0 && std::isfinite(c.flow) ? c.flow : 0.0;
        s.pending = s.flow > 0 && c.pending > 0 && std::isfinite(c.pending) ? c.pending : 0.0;
        sum.totalFlow += s.flow;
        if (c.demand >= 0 && std::isfinite(c.demand)) demand = c.demand;
        if (!std::isnan(s.measured.capacity)) {
            capSum += s.measured.capacity;
            ++capCount;
            if (!std::isnan(s.measured.load)) {
                loadSum += s.measured.load;
                loadCap += s.measured.capacity;
                loadFlow += s.flow;
            }
        }
    }
    sum.demand = demand;
    if (untaken == 0) return sum;
    const double d = std::isnan(demand) ? 0.0 : demand;
    sum.basis = capCount > 0 ? ShareBasis::Capacity : ShareBasis::Weight;
    const double meanCap = capCount > 0 ? capSum / capCount : kUnknown;
    const double meanUtil = loadCap > 0 ? loadSum / loadCap : 0.0;
    // The mean session time by Little's law over the sites whose load is known (sessions in use ÷ the flow
    // sent there): what the projection needs for the sessions that end meanwhile.
    sum.sessionTime = loadFlow > 0 && loadSum > 0 ? loadSum / loadFlow : kUnknown;
    // Pass 2: targets, before the margin: each candidate's free seats (capacity x headroom).
    double targetSum = 0, capOnly = 0, rootSum = 0;
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
            s.projected = projectedLoad(s.measured.load, s.flow, s.pending, sum.sessionTime);
            s.utilisation = std::isnan(s.measured.value) ? meanUtil : s.projected / s.measured.capacity;
            s.headroom = std::max(0.0, 1.0 - s.utilisation);
            s.free = s.capacity * s.headroom;
            s.target = s.free;
            s.margin = std::sqrt(s.capacity);  // √C_i for now; x beta below
            capOnly += s.capacity;
            rootSum += s.margin;
        }
        targetSum += s.target;
    }
    targetSum = applySqrtMargin(active, taken, params.sqrtMargin, targetSum, rootSum, sum, out.first(n));
    // Every site full (or every weight 0): in proportion to capacity (or uniform) — the TTL rule shortens.
    const bool flat = !(targetSum > 0);
    const bool byCap = sum.basis == ShareBasis::Capacity && capOnly > 0;
    // Pass 3: normalised targets, the fit of the batch, deficits; the masses over the fitting candidates and
    // over all, since whether any fits is known only at the end.
    double defFit = 0, tgtFit = 0, mostFree = -1;
    std::size_t nFit = 0;
    for (std::size_t i = 0; i < n; ++i) {
        Share& s = out[i];
        if (detail::isTaken(taken, active[i].index)) continue;
        s.target = !flat ? s.target / targetSum : byCap ? s.capacity / capOnly : 1.0 / double(untaken);
        const double free = s.measured.free();
        s.fits = std::isnan(free) || !(d > 0) || 2 * d * double(params.ttlMin) <= free;
        if (!std::isnan(free)) mostFree = std::max(mostFree, free);
        s.deficit = std::max(0.0, s.target * (sum.totalFlow + d) - s.flow);
        if (s.fits) {
            defFit += s.deficit;
            tgtFit += s.target;
            ++nFit;
        }
    }
    sum.anyFits = nFit > 0;
    // Fits nowhere: the candidates with the most free seats, the nearest to fitting (every free seat count
    // is known then: an unknown one fits). Their masses, and they stand in for "those that fit" below.
    if (!sum.anyFits) {
        for (std::size_t i = 0; i < n; ++i) {
            Share& s = out[i];
            if (detail::isTaken(taken, active[i].index) || !(s.measured.free() >= mostFree)) continue;
            s.nearest = true;
            defFit += s.deficit;
            tgtFit += s.target;
            ++nFit;
        }
    }
    // Pass 4: probabilities ∝ the deficits of the candidates that may be picked (those that fit, or the
    // nearest); no deficit among them (no flow known yet and no demand): the targets themselves; every
    // target 0 too (only when they are all full): uniform over them.
    const std::size_t k = nFit;
    const bool byTarget = !(defFit > 0), uniform = byTarget && !(tgtFit > 0);
    for (std::size_t i = 0; i < n; ++i) {
        Share& s = out[i];
        if (detail::isTaken(taken, active[i].index) || !(s.fits || s.nearest)) continue;
        s.probability = uniform ? 1.0 / double(k) : byTarget ? s.target / tgtFit : s.deficit / defFit;
    }
    return sum;
}

int chooseHeadroom(std::span<const Candidate> active, std::uint64_t taken, const Params& params,
                   ChooserState&, Rng& rng) {
    // Only the n shares used are written (headroomShares assigns each): a plain array would first
    // default-construct all 64 on every query, more work than the shares themselves.
    union Buf {
        Buf() {}
        Share s[kMaxServices];
    } buf;
    static_assert(std::is_trivially_destructible_v<Share>);
    Share* shares = buf.s;
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
