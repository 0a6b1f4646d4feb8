#include "metrics/stage_registry.hpp"

#include <array>

#include "metrics/balance.hpp"

namespace gslb::metrics {
namespace {

// Order matches StageKind, so stageInfo(kind) is an index.
constexpr std::array<StageInfo, kStageCount> kStages{{
    {"health", StageKind::Health, false, &filterHealth, nullptr,
     "services that are up (or not checked yet), enabled, on an up and enabled site"},
    {"session-threshold", StageKind::SessionThreshold, false, &filterSessionThreshold, nullptr,
     "sites whose session table use is at most session_threshold percent"},
    {"session-capacity", StageKind::SessionCapacity, false, &filterSessionCapacity, nullptr,
     "sites whose available sessions are within session_tolerance percent of the most available"},
    {"flashback", StageKind::Flashback, false, &filterFlashback, nullptr,
     "services whose health-check time is within flashback_tolerance percent of the fastest (L7, then L4)"},
    {"least-connections", StageKind::LeastConnections, false, &filterLeastConnections, nullptr,
     "services with connections <= fewest * (1 + factor)"},
    {"cpu", StageKind::Cpu, false, &filterCpu, nullptr, "sites with cpu <= lowest * (1 + factor)"},
    {"preference", StageKind::Preference, false, &filterPreference, nullptr,
     "sites with the highest preference; preference 0 takes a site out"},
    {"topology", StageKind::Topology, false, &filterTopology, nullptr,
     "the client's region's first site that has candidates (or the nearest sites, within nearest_tolerance)"},
    {"rtt", StageKind::Rtt, false, &filterRtt, nullptr,
     "sites whose round-trip time from the client's prefix is within rtt_tolerance percent of the fastest"},
    {"random", StageKind::Random, true, nullptr, &chooseRandom, "uniformly random"},
    {"weighted-random", StageKind::WeightedRandom, true, nullptr, &chooseWeightedRandom,
     "random in proportion to weight"},
    {"round-robin", StageKind::RoundRobin, true, nullptr, &chooseRoundRobin, "next in turn", kNeedsTurn},
    {"weighted-round-robin", StageKind::WeightedRoundRobin, true, nullptr, &chooseWeightedRoundRobin,
     "round robin, each member answered weight times per cycle", kNeedsTurn | kNeedsWeights},
    {"least-selected", StageKind::LeastSelected, true, nullptr, &chooseLeastSelected,
     "the service answered least often", kNeedsCounts},
    {"best-server", StageKind::BestServer, true, nullptr, &chooseBestServer,
     "capacity/throughput table on response times (SiteMinder)", kNeedsTable},
    {"load-factor", StageKind::LoadFactor, true, nullptr, &chooseLoadFactor,
     "random in proportion to the mod_cluster load factor"},
    {"hashed", StageKind::Hashed, true, nullptr, &chooseHashed,
     "the same client prefix gets the same service while it survives (weighted rendezvous hashing)"},
    {"headroom", StageKind::Headroom, true, nullptr, &chooseHeadroom,
     "random toward shares of capacity x headroom, counting the demand of answers still cached"},
}};

}  // namespace

const StageInfo* findStage(std::string_view name) noexcept {
    for (const auto& s : kStages)
        if (s.name == name) return &s;
    return nullptr;
}

std::span<const StageInfo> allStages() noexcept {
    return kStages;
}

const StageInfo& stageInfo(StageKind kind) noexcept {
    return kStages[static_cast<std::size_t>(kind)];
}

std::string knownStageNames() {
    std::string out;
    for (const auto& s : kStages) {
        if (!out.empty()) out += ", ";
        out += s.name;
    }
    return out;
}

}  // namespace gslb::metrics
