#pragma once
// Per-(worker thread, hostname, address family) memory of the stateful choosers (round-robin,
// weighted-round-robin, least-selected, best-server). Owned by the caller; one per worker, so plain fields,
// no atomics. Only what the hostname's chooser reads is allocated (ChooserNeeds, from StageInfo::state),
// sized to the hostname's service count: 10,000 hostnames with fixed 64-entry arrays for every chooser cost
// 42 MB per worker, most of it for random choosers that keep nothing.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "metrics/candidate.hpp"

namespace gslb::metrics {

// What a chooser keeps between queries, as bits. A server holds no ChooserState at all for kNeedsNothing.
enum ChooserNeeds : std::uint8_t {
    kNeedsNothing = 0,  // random, weighted-random, load-factor, hashed
    kNeedsTurn = 1,     // round-robin: whose turn it is (the fixed fields only, no per-service array)
    kNeedsWeights = 2,  // weighted-round-robin: the turn and the weight left per service
    kNeedsCounts = 4,   // least-selected: answers given per service
    kNeedsTable = 8,    // best-server: the capacity/throughput table per service
    kNeedsAll = 15,
};

class ChooserState {
  public:
    // State for a hostname with `serviceCount` services (indices 0..serviceCount-1), with the per-service
    // arrays `needs` names (all of them by default: tests and callers that run any chooser on it).
    // Precondition: serviceCount <= kMaxServices (larger values are clamped; the config loader refuses them).
    explicit ChooserState(std::size_t serviceCount = 0, std::uint8_t needs = kNeedsAll);

    // The hostname's service set changed (reload with different services): forget everything, as at start,
    // keeping the same needs. doc/design.md: state survives a reload only when the service set is unchanged —
    // then keep the old object.
    void reset(std::size_t serviceCount);

    std::size_t serviceCount() const noexcept { return serviceCount_; }
    std::uint8_t needs() const noexcept { return needs_; }

    // Make the next round-robin / weighted-round-robin pick start at service `index` instead of a random
    // member (tests, and a server that wants all workers to start at different members).
    void startAt(std::uint16_t index) noexcept;

    // Inspection (status pages, tests): 0 for an index past serviceCount() or an array not kept.
    std::uint64_t selectedCount(std::uint16_t index) const noexcept { return at(selected_, index); }
    double capacity(std::uint16_t index) const noexcept { return at(capacity_, index); }
    double throughput(std::uint16_t index) const noexcept { return at(throughput_, index); }
    std::int64_t remainingWeight(std::uint16_t index) const noexcept { return at(remaining_, index); }
    std::uint64_t recalibrations() const noexcept { return recalibrations_; }

    // ---- Below: owned by the chooser files in metrics/stages/; not part of the API contract. A chooser
    // indexes only the arrays its needs name, by Candidate::index < serviceCount(). ----
    static constexpr int kNoLast = -1;
    std::size_t serviceCount_ = 0;
    std::uint8_t needs_ = kNeedsAll;
    bool started_ = false;          // round-robin / wrr: a start member has been drawn (or set by startAt)
    int last_ = kNoLast;            // round-robin / wrr: index answered last
    int cycleStart_ = kNoLast;      // wrr: the member each weight cycle starts at
    std::uint64_t filled_ = 0;      // wrr: bit i set = remaining_[i] holds a weight of the current cycle
    std::uint64_t prevActive_ = 0;  // least-selected, best-server: candidate set of the previous pick
    std::uint64_t recalibrations_ = 0;
    std::vector<std::int64_t> remaining_;  // wrr (kNeedsWeights): weight left in this cycle
    std::vector<std::uint64_t> selected_;  // least-selected (kNeedsCounts): answers given per service
    std::vector<double> capacity_;         // best-server (kNeedsTable): distribution table
    std::vector<double> throughput_;

  private:
    template <class T>
    static T at(const std::vector<T>& v, std::uint16_t i) noexcept {
        return i < v.size() ? v[i] : T{};
    }
};

}  // namespace gslb::metrics
