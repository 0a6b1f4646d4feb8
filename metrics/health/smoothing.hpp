#pragma once
// FlashBack smoothing of health-check times (DESIGN.md "Metric sources": the check times are the FlashBack
// speeds). Pure logic, no I/O.
//
// Rules (decided for issue 4):
// - Each check keeps an exponentially weighted moving average per time (L4 connect, L7 response) with
//   alpha = 0.3: avg = 0.3 * sample + 0.7 * avg. The first sample is taken as is.
// - Only successful checks feed it: a refused connection or a timeout says nothing about speed (the health
//   state takes it out); the average keeps its last value while a check fails.
// - A service slot with several checks (several hostnames or applications on one VIP) is as fast as its
//   slowest check: slot time = max over its checks of their averages, unknown (NaN) values ignored, NaN when
//   none is known. L4 and L7 are taken separately.

#include <cmath>
#include <span>

#include "metrics/candidate.hpp"

namespace gslb::metrics::health {

inline constexpr double kFlashbackAlpha = 0.3;

class Ewma {
  public:
    explicit Ewma(double alpha = kFlashbackAlpha) : alpha_(alpha) {}
    void add(double sample) {
        if (std::isnan(sample)) return;
        value_ = std::isnan(value_) ? sample : alpha_ * sample + (1.0 - alpha_) * value_;
    }
    double value() const { return value_; }  // NaN until the first sample
    bool known() const { return !std::isnan(value_); }
    void reset() { value_ = kUnknown; }

  private:
    double alpha_;
    double value_ = kUnknown;
};

// The slowest known value (NaN ignored); NaN when none is known.
double slowest(std::span<const double> values);

}  // namespace gslb::metrics::health
