// flashback stage (Brocade Virtual ADX GSLB Guide, p. 10, "FlashBack speed"). Rules in stages.hpp.
#include "metrics/compare.hpp"
#include "metrics/stages/filter_util.hpp"
#include "metrics/stages/stages.hpp"

namespace gslb::metrics {

namespace {
std::size_t keepFastest(std::span<Candidate> in, double Candidate::*time, const Params& params) {
    return detail::keepBest(
        in, [&](const Candidate& c) { return c.*time; }, [](double a, double b) { return a < b; },
        [&](double v, double best) {
            return equalWithinToleranceOrFloor(v, best, params.flashbackTolerance, params.flashbackFloorMs);
        });
}
}  // namespace

std::size_t filterFlashback(std::span<Candidate> in, const Params& params) {
    // "it compares the Layer 7 (application-level) FlashBack speeds first, if applicable ... if the FlashBack
    // speeds are not equal, the Brocade Virtual ADX is through comparing" — i.e. L7 decided when it leaves
    // one; "if only the Layer 4 health check applies ... or if further tie-breaking is needed" — L4 among
    // those L7 left equal. keepBest passes everyone on when no one has an L7 time.
    std::size_t n = keepFastest(in, &Candidate::l7Ms, params);
    if (n > 1) n = keepFastest(in.first(n), &Candidate::l4Ms, params);
    return n;
}

}  // namespace gslb::metrics
