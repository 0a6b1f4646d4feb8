#pragma once
// mod_cluster load balance factor (JBoss mod_cluster User Guide, ch. 11 Load Metrics, p. 40, corrected per
// doc/design.md / MODCLUSTER-606). Computed on the control thread when a site reports its named loads; the
// result (0..100, higher = less loaded) is stored in the StateTable and used as a weight by the `load-factor`
// chooser.

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string>

namespace gslb::metrics {

// One named load metric of a site report ("loads": {"busy": 0.3}) with its configured capacity and weight.
struct LoadMetric {
    double load = 0;      // reported load, same unit as capacity, >= 0
    double capacity = 1;  // > 0: the load at which the metric counts as fully loaded
    double weight = 1;  // >= 0: significance relative to the other metrics (JBoss mod_cluster User Guide, ch.
                        // 11 Load Metrics, p. 40: default 1)
};

// Current aggregate load L0 in [0, 1]: sum over metrics of min(load / capacity, 1) * weight / total weight.
// The clamp at 1 keeps one overloaded metric from pushing L past "fully loaded". Negative loads count as 0.
// Returns NaN when there is no metric, the total weight is 0, or a capacity is <= 0 / a weight < 0 (the
// config and report validation refuse those; NaN then means "unknown", never "idle").
double aggregateLoad(std::span<const LoadMetric> metrics) noexcept;

// Time-decayed load: the normalised average L = sum_i L_i / D^i / sum_i 1 / D^i over the values given,
// newest first (L_0 = current). With fewer values than history + 1 (a new site), the average is over those
// present. NaN values are skipped (a missed report is not a zero load); empty or all NaN -> NaN.
// decay D >= 1 (D = 1: plain average).
double decayedLoad(std::span<const double> newestFirst, double decay) noexcept;

// Load balance factor 100 - L * 100 (JBoss mod_cluster User Guide, ch. 11 Load Metrics, p. 40), L clamped to
// [0, 1]; NaN stays NaN (unknown).
double loadFactor(double decayedLoadValue) noexcept;

inline constexpr std::size_t kMaxLoadHistory = 64;

// Range check for the config keys load_decay / load_history: nullopt when fine, else the message.
std::optional<std::string> checkLoadParams(double decay, std::size_t history);

// The last history + 1 aggregate loads of one site, newest first (a ring; no allocation). Defaults D = 2,
// H = 9 as mod_cluster's DynamicLoadBalanceFactorProvider. History 0 keeps only the current value.
class LoadHistory {
  public:
    // Preconditions (checkLoadParams): decay >= 1, history <= kMaxLoadHistory (clamped otherwise).
    explicit LoadHistory(double decay = 2.0, std::size_t history = 9) noexcept;

    // Records the newest aggregate load (aggregateLoad of a report) and returns the new factor 0..100
    // (NaN while no value is known).
    double push(double load) noexcept;

    double decayed() const noexcept;  // decayedLoad over the stored values
    double factor() const noexcept { return loadFactor(decayed()); }
    std::size_t size() const noexcept { return size_; }
    double at(std::size_t age) const noexcept;  // 0 = newest; precondition age < size()

  private:
    double decay_;
    std::size_t capacity_;  // history + 1
    std::size_t size_ = 0;
    std::size_t head_ = 0;  // slot of the newest value
    std::array<double, kMaxLoadHistory + 1> ring_{};
};

}  // namespace gslb::metrics
