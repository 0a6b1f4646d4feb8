// preference stage (Brocade ADX site preference; doc/design.md: 0..255, default 128, 0 takes a site out).
#include <algorithm>

#include "metrics/stages/filter_util.hpp"
#include "metrics/stages/stages.hpp"

namespace gslb::metrics {

std::size_t filterPreference(std::span<Candidate> in, const Params&) {
    // Preference 0 is the operator saying "not this site": hard, even when it is the only one left, so a
    // site being emptied for maintenance stops getting answers (select() then reports AllExcluded).
    const std::size_t n = detail::keepIf(
        in, [](const Candidate& c) { return c.preference != 0; }, true);
    if (n == 0) return 0;
    std::uint8_t top = 0;
    for (const Candidate& c : in.first(n)) top = std::max(top, c.preference);
    return detail::keepIf(
        in.first(n), [&](const Candidate& c) { return c.preference == top; }, true);
}

}  // namespace gslb::metrics
