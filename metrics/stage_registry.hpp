#pragma once
// Stages registered by name (doc/design.md "Principles" 5; dnsdist getBuiltInPolicies): the config names
// stages with these strings, Policy::compile turns them into function pointers once, the query path never
// sees a string.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "metrics/stages/stages.hpp"

namespace gslb::metrics {

enum class StageKind : std::uint8_t {
    Health,
    SessionThreshold,
    SessionCapacity,
    Flashback,
    LeastConnections,
    Cpu,
    Preference,
    Topology,
    Rtt,
    Random,
    WeightedRandom,
    RoundRobin,
    WeightedRoundRobin,
    LeastSelected,
    BestServer,
    LoadFactor,
    Hashed,
    Headroom,
};

inline constexpr std::size_t kStageCount = 18;

struct StageInfo {
    std::string_view name;  // the config name, e.g. "session-threshold"
    StageKind kind;
    bool isChooser;
    FilterFn filter;           // set for filter stages, nullptr for choosers
    ChooserFn chooser;         // set for choosers, nullptr for filters
    std::string_view summary;  // one line for error messages and docs
    std::uint8_t state = 0;    // choosers: the ChooserNeeds bits of what it keeps between queries
};

// The stage called `name` (exact, case-sensitive), or nullptr.
const StageInfo* findStage(std::string_view name) noexcept;

// Every stage, filters first, in doc/design.md's table order.
std::span<const StageInfo> allStages() noexcept;

// The stage of a kind (never nullptr for a valid kind).
const StageInfo& stageInfo(StageKind kind) noexcept;

// "health, session-threshold, ..." — for "unknown stage" errors.
std::string knownStageNames();

}  // namespace gslb::metrics
