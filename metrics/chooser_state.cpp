#include "metrics/chooser_state.hpp"

#include <algorithm>

namespace gslb::metrics {

ChooserState::ChooserState(std::size_t serviceCount, std::uint8_t needs) : needs_(needs) {
    reset(serviceCount);
}

void ChooserState::reset(std::size_t serviceCount) {
    // A fresh state is all zeros: best-server then recalibrates on its first pick ("initially, the
    // distribution variables of the policy servers are reset to 0", CA SiteMinder Web Agent technote on the
    // Best Server Algorithm).
    serviceCount_ = std::min(serviceCount, kMaxServices);
    started_ = false;
    last_ = kNoLast;
    cycleStart_ = kNoLast;
    filled_ = 0;
    prevActive_ = 0;
    recalibrations_ = 0;
    auto size = [&](auto& v, std::uint8_t bit) {
        v.assign((needs_ & bit) ? serviceCount_ : 0, {});
        v.shrink_to_fit();
    };
    size(remaining_, kNeedsWeights);
    size(selected_, kNeedsCounts);
    size(capacity_, kNeedsTable);
    size(throughput_, kNeedsTable);
}

void ChooserState::startAt(std::uint16_t index) noexcept {
    started_ = true;
    const int n = static_cast<int>(serviceCount_);
    // last_ is the member answered before `index`, so "next after last_" is `index`.
    last_ = n == 0 ? kNoLast : (static_cast<int>(index) + n - 1) % n;
    cycleStart_ = index;
}

}  // namespace gslb::metrics
