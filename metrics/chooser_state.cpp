#include "metrics/chooser_state.hpp"

#include <algorithm>

namespace gslb::metrics {

ChooserState::ChooserState(std::size_t serviceCount) noexcept
    : serviceCount_(std::min(serviceCount, kMaxServices)) {}

void ChooserState::reset(std::size_t serviceCount) noexcept {
    // A fresh state is all zeros: best-server then recalibrates on its first pick ("initially, the
    // distribution variables of the policy servers are reset to 0", seed 000).
    serviceCount_ = std::min(serviceCount, kMaxServices);
    started_ = false;
    last_ = kNoLast;
    cycleStart_ = kNoLast;
    filled_ = 0;
    remaining_.fill(0);
    selected_.fill(0);
    capacity_.fill(0.0);
    throughput_.fill(0.0);
    prevActive_ = 0;
    recalibrations_ = 0;
}

void ChooserState::startAt(std::uint16_t index) noexcept {
    started_ = true;
    const int n = static_cast<int>(serviceCount_);
    // last_ is the member answered before `index`, so "next after last_" is `index`.
    last_ = n == 0 ? kNoLast : (static_cast<int>(index) + n - 1) % n;
    cycleStart_ = index;
}

}  // namespace gslb::metrics
