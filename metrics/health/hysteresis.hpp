#pragma once
// Rise/fall hysteresis of one health check (doc/design.md "Metric sources", "Start-up"). Pure logic, no I/O.
//
// Rules (decided for the health checks):
// - A check starts Unknown. Its FIRST result decides at once (success: Up, failure: Down): the start-up round
//   must give every service an answer ("no first answer is a guess"), so rise/fall do not delay it.
// - After that, Up goes Down after `fall` consecutive failures and Down goes Up after `rise` consecutive
//   successes. A result of the other kind resets the run: Up, 2 failures, 1 success, 2 failures stays Up with
//   fall 3.
// - rise/fall may change on reload (setLimits); the current runs are kept, and a run already long enough
//   flips the state at the next result of the same kind.

#include <cstdint>

#include "metrics/candidate.hpp"

namespace gslb::metrics::health {

class Hysteresis {
  public:
    struct Step {
        bool changed = false;  // the state changed with this result
        bool first = false;    // ...and it was the first result (Unknown before)
        Health state = Health::Unknown;
        std::uint32_t run = 0;  // consecutive results of this kind, this one included
    };

    Hysteresis(int rise, int fall) { setLimits(rise, fall); }
    void setLimits(int rise, int fall) {
        rise_ = rise < 1 ? 1 : std::uint32_t(rise);
        fall_ = fall < 1 ? 1 : std::uint32_t(fall);
    }

    // Feeds one check result; returns the new state and whether it changed.
    Step feed(bool success);

    Health state() const { return state_; }
    std::uint32_t successRun() const { return okRun_; }
    std::uint32_t failureRun() const { return failRun_; }
    int rise() const { return int(rise_); }
    int fall() const { return int(fall_); }

  private:
    Health state_ = Health::Unknown;
    std::uint32_t rise_ = 2, fall_ = 3;
    std::uint32_t okRun_ = 0, failRun_ = 0;
};

}  // namespace gslb::metrics::health
