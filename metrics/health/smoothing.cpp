#include "metrics/health/smoothing.hpp"

namespace gslb::metrics::health {

void RollingMedian::add(double sample) {
    if (std::isnan(sample)) return;
    samples_[next_] = sample;
    next_ = (next_ + 1) % kFlashbackWindow;
    if (count_ < kFlashbackWindow) ++count_;
}

double RollingMedian::value() const {
    if (count_ == 0) return kUnknown;
    // Insertion sort of at most kFlashbackWindow values.
    std::array<double, kFlashbackWindow> sorted{};
    for (std::size_t i = 0; i < count_; ++i) {
        std::size_t j = i;
        for (; j > 0 && sorted[j - 1] > samples_[i]; --j) sorted[j] = sorted[j - 1];
        sorted[j] = samples_[i];
    }
    // Lower median: with two samples, one outlier does not count for half.
    return sorted[(count_ - 1) / 2];
}

double slowest(std::span<const double> values) {
    double m = kUnknown;
    for (double v : values)
        if (!std::isnan(v) && (std::isnan(m) || v > m)) m = v;
    return m;
}

}  // namespace gslb::metrics::health
