// health stage (all the vendor manuals; doc/design.md "Start-up"). Rules in stages.hpp.
#include "metrics/stages/filter_util.hpp"
#include "metrics/stages/stages.hpp"

namespace gslb::metrics {

std::size_t filterHealth(std::span<Candidate> in, const Params&) {
    // Hard exclusion: a down or drained service must never be answered by this stage; when none is left,
    // select() reports AllDown and the hostname's fallback decides (doc/design.md "All down").
    return detail::keepIf(
        in,
        [](const Candidate& c) { return c.health != Health::Down && c.enabled && c.siteUp && c.siteEnabled; },
        true);
}

}  // namespace gslb::metrics
