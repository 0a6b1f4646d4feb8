#pragma once
// A hostname's compiled selection policy (doc/design.md "Selection: a pipeline of stages"): the operator's
// ordered stages (Brocade metric-order: any subset, any order, exactly one chooser, last) as function
// pointers, plus their parameters. Built once at config load; read-only and shareable between threads.

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "metrics/params.hpp"
#include "metrics/stage_registry.hpp"

namespace gslb::metrics {

class Policy {
  public:
    // The stages of a hostname that names no policy (policy.cpp says which, and why those).
    static const std::vector<std::string>& defaultStageNames();
    static Policy defaultPolicy();

    // Compiles stage names and parameters. Errors (one message, naming the config key or stage):
    //  - unknown stage:            unknown stage "leastconn" (known: health, session-threshold, ...)
    //  - the same stage twice:     stage "cpu" appears twice
    //  - no chooser / several / chooser not last: policy must end with exactly one chooser (...)
    //  - a parameter out of range: session_threshold = 120 is out of range 0..100 (percent)
    //    ranges: session_threshold, session_tolerance, flashback_tolerance 0..100 percent; factor >= 0 and
    //    finite; answers 1..kMaxServices.
    // The order is the operator's and is not rearranged: `health` is normally first; a keep-the-best stage
    // placed before it may keep only a down service, and then health reports AllDown.
    // True with `out`; false with `error`, `out` untouched (doc/design.md "Errors").
    static bool compile(const std::vector<std::string>& stageNames, const Params& params, Policy& out,
                        std::string& error);

    // Filter stages in order, then the chooser.
    std::span<const StageInfo* const> filters() const noexcept { return {filters_.data(), filterCount_}; }
    const StageInfo& chooser() const noexcept { return *chooser_; }
    const Params& params() const noexcept { return params_; }
    // "health, least-connections, random": for status output.
    std::string describe() const;

  private:
    Policy() = default;
    std::array<const StageInfo*, kStageCount> filters_{};
    std::size_t filterCount_ = 0;
    const StageInfo* chooser_ = nullptr;
    Params params_;
};

}  // namespace gslb::metrics
