#pragma once
// Per-(worker thread, hostname) memory of the stateful choosers (round-robin, weighted-round-robin,
// least-selected, best-server). Owned by the caller; one per worker, so plain fields, no atomics, no heap:
// fixed arrays of kMaxServices entries (about 2 KiB).

#include <array>
#include <cstddef>
#include <cstdint>

#include "metrics/candidate.hpp"

namespace gslb::metrics {

class ChooserState {
  public:
    // State for a hostname with `serviceCount` services (indices 0..serviceCount-1).
    // Precondition: serviceCount <= kMaxServices (larger values are clamped; the config loader refuses them).
    explicit ChooserState(std::size_t serviceCount = 0) noexcept;

    // The hostname's service set changed (reload with different services): forget everything, as at start.
    // DESIGN.md: state survives a reload only when the service set is unchanged — then keep the old object.
    void reset(std::size_t serviceCount) noexcept;

    std::size_t serviceCount() const noexcept { return serviceCount_; }

    // Make the next round-robin / weighted-round-robin pick start at service `index` instead of a random
    // member (tests, and a server that wants all workers to start at different members).
    void startAt(std::uint16_t index) noexcept;

    // Inspection (status pages, tests). Index >= kMaxServices is a precondition violation.
    std::uint64_t selectedCount(std::uint16_t index) const noexcept { return selected_[index]; }
    double capacity(std::uint16_t index) const noexcept { return capacity_[index]; }
    double throughput(std::uint16_t index) const noexcept { return throughput_[index]; }
    std::int64_t remainingWeight(std::uint16_t index) const noexcept { return remaining_[index]; }
    std::uint64_t recalibrations() const noexcept { return recalibrations_; }

    // ---- Below: owned by the chooser files in metrics/stages/; not part of the API contract. ----
    static constexpr int kNoLast = -1;
    std::size_t serviceCount_ = 0;
    bool started_ = false;      // round-robin / wrr: a start member has been drawn (or set by startAt)
    int last_ = kNoLast;        // round-robin / wrr: index answered last
    int cycleStart_ = kNoLast;  // wrr: the member each weight cycle starts at
    std::uint64_t filled_ = 0;  // wrr: bit i set = remaining_[i] holds a weight of the current cycle
    std::array<std::int64_t, kMaxServices> remaining_{};  // wrr: weight left in this cycle
    std::array<std::uint64_t, kMaxServices> selected_{};  // least-selected: answers given per service
    std::array<double, kMaxServices> capacity_{};         // best-server distribution table
    std::array<double, kMaxServices> throughput_{};
    std::uint64_t prevActive_ = 0;  // least-selected, best-server: candidate set of the previous pick
    std::uint64_t recalibrations_ = 0;
};

}  // namespace gslb::metrics
