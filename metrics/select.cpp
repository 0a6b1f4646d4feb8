#include "metrics/select.hpp"

#include <algorithm>
#include <cassert>

namespace gslb::metrics {

SelectResult select(const Policy& policy, std::span<Candidate> candidates, ChooserState& state, Rng& rng,
                    std::span<std::uint16_t> out) noexcept {
    if (candidates.empty()) return {0, SelectStatus::NoCandidates};
    const Params& params = policy.params();
    std::size_t n = candidates.size();
    // Indices are bits of a 64-bit mask and subscripts of ChooserState's arrays.
    assert(std::all_of(candidates.begin(), candidates.end(),
                       [](const Candidate& c) { return c.index < kMaxServices; }));
    // Preference 0 takes a site out whatever the policy (select.hpp).
    {
        std::size_t w = 0;
        for (std::size_t r = 0; r < n; ++r) {
            if (candidates[r].preference == 0) continue;
            if (w != r) candidates[w] = candidates[r];  // a Candidate is ~120 octets: no copy onto itself
            ++w;
        }
        n = w;
        if (n == 0) return {0, SelectStatus::AllExcluded};
    }
    for (const StageInfo* stage : policy.filters()) {
        n = stage->filter(candidates.first(n), params);
        if (n == 0) {
            // Only the hard exclusions can empty the set (see stages.hpp); say which one did.
            return {0, stage->kind == StageKind::Health ? SelectStatus::AllDown : SelectStatus::AllExcluded};
        }
    }
    const std::span<const Candidate> active = candidates.first(n);
    const std::size_t want = std::min({static_cast<std::size_t>(params.answers), n, out.size()});
    std::uint64_t taken = 0;
    std::size_t count = 0;
    while (count < want) {
        const int pos = policy.chooser().chooser(active, taken, params, state, rng);
        if (pos < 0) break;
        const std::uint16_t index = active[static_cast<std::size_t>(pos)].index;
        out[count++] = index;
        taken |= std::uint64_t{1} << index;
    }
    return {count, count > 0 ? SelectStatus::Ok : SelectStatus::NoChoice};
}

}  // namespace gslb::metrics
