#include "metrics/load_factor.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace gslb::metrics {

double aggregateLoad(std::span<const LoadMetric> metrics) noexcept {
    double total = 0, sum = 0;
    for (const LoadMetric& m : metrics) {
        if (!(m.capacity > 0) || !(m.weight >= 0) || std::isnan(m.load)) return std::nan("");
        total += m.weight;
        sum += std::min(std::max(m.load, 0.0) / m.capacity, 1.0) * m.weight;
    }
    if (!(total > 0)) return std::nan("");
    return sum / total;
}

double decayedLoad(std::span<const double> newestFirst, double decay) noexcept {
    // The seed prints (sum L_i/D^i) x (sum D^i), which grows without bound; MODCLUSTER-606 corrected it to
    // the normalised average, which keeps L in [0, 1] (doc/design.md).
    double num = 0, den = 0, w = 1;
    for (double l : newestFirst) {
        if (!std::isnan(l)) {
            num += l * w;
            den += w;
        }
        w /= decay;
    }
    return den > 0 ? num / den : std::nan("");
}

double loadFactor(double l) noexcept {
    if (std::isnan(l)) return l;
    return 100.0 - std::clamp(l, 0.0, 1.0) * 100.0;
}

std::optional<std::string> checkLoadParams(double decay, std::size_t history) {
    if (!(decay >= 1) || !std::isfinite(decay))
        return fmt::format("load_decay = {} is out of range (a number >= 1)", decay);
    if (history > kMaxLoadHistory)
        return fmt::format("load_history = {} is out of range 0..{}", history, kMaxLoadHistory);
    return std::nullopt;
}

LoadHistory::LoadHistory(double decay, std::size_t history) noexcept
    : decay_(decay >= 1 ? decay : 1.0), capacity_(std::min(history, kMaxLoadHistory) + 1) {}

double LoadHistory::push(double load) noexcept {
    head_ = (head_ + capacity_ - 1) % capacity_;
    ring_[head_] = load;
    size_ = std::min(size_ + 1, capacity_);
    return factor();
}

double LoadHistory::at(std::size_t age) const noexcept {
    return ring_[(head_ + age) % capacity_];
}

double LoadHistory::decayed() const noexcept {
    std::array<double, kMaxLoadHistory + 1> ordered{};
    for (std::size_t i = 0; i < size_; ++i) ordered[i] = at(i);
    return decayedLoad(std::span<const double>(ordered.data(), size_), decay_);
}

}  // namespace gslb::metrics
