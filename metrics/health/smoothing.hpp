#pragma once
// FlashBack smoothing of health-check times (doc/design.md "Metric sources": the check times are the
// FlashBack speeds). Pure logic, no I/O.
//
// Rules (the median replaced an EWMA, see below):
// - Each check keeps the last kFlashbackWindow (5) successful samples per time (L4 connect, L7 response);
//   its FlashBack time is their median (the lower median while fewer than an odd count are known; the first
//   sample is taken as is). One sample — a scheduling hiccup, a retransmitted SYN — cannot move the median
//   past the others, so it cannot flip a ranking; a site that is really slower moves it after 3 of 5
//   samples. (The EWMA with alpha 0.3 it replaces let one 50 ms hiccup add 15 ms and push a site out for four
//   intervals.) Noise *between* equal sites is handled by the flashback stage's absolute floor
//   (Params::flashbackFloorMs), not here.
// - Only successful checks feed it: a refused connection or a timeout says nothing about speed (the health
//   state takes it out); the value keeps its last samples while a check fails.
// - A service slot with several checks (several hostnames or applications on one VIP) is as fast as its
//   slowest check: slot time = max over its checks of their values, unknown (NaN) values ignored, NaN when
//   none is known. L4 and L7 are taken separately.

#include <array>
#include <cmath>
#include <cstddef>
#include <span>

#include "metrics/candidate.hpp"

namespace gslb::metrics::health {

inline constexpr std::size_t kFlashbackWindow = 5;

class RollingMedian {
  public:
    void add(double sample);  // NaN samples (no time of that kind) are ignored
    double value() const;     // NaN until the first sample
    bool known() const { return count_ > 0; }
    void reset() { count_ = next_ = 0; }

  private:
    std::array<double, kFlashbackWindow> samples_{};
    std::size_t count_ = 0;  // samples held, <= kFlashbackWindow
    std::size_t next_ = 0;   // ring position of the next sample
};

// The slowest known value (NaN ignored); NaN when none is known.
double slowest(std::span<const double> values);

}  // namespace gslb::metrics::health
