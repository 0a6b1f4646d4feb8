#pragma once
// Health quorum across the members of an NS set (doc/design.md "Several instances as one NS set";
// Route 53's idea of several health checkers): a service counts as down when at least `quorum` members see
// it down. Pure logic, no I/O: server/cluster/etcd_sync.hpp reads the members' verdicts,
// server/probes/health.cpp feeds this function and writes the outcome into the StateTable the selector reads.
//
// Rules:
// - Votes are this member's own verdict plus each peer's verdict that is fresh (0 <= ageMs <= maxAgeMs). A
//   verdict of Unknown (a peer that does not check this service, or has not finished its first check) is no
//   vote either way.
// - When the votes reach the quorum (voters >= quorum): Down when at least `quorum` of them are Down, else
// Up.
//   So with 2 members and quorum 2, one member that cannot reach a back end (a partition between that member
//   and the back end) keeps it in its answers; a back end down for both is drained.
// - When they cannot (fewer voters than the quorum: peers out of reach or their verdicts stale), the member
//   falls back on its own verdict and says so (ownView = true): single-member behaviour, never a decision
//   nobody made.
// - quorum <= 0 (health_quorum not set): the own verdict, ownView false — every member decides alone, as
//   without a cluster. quorum 1 is "down when any member sees it down" (a member's own failing check is
//   enough, and so is a peer's).
// - An Unknown own verdict with no quorum reached stays Unknown (the caller leaves the slot as it is).

#include <cstdint>
#include <span>

#include "metrics/candidate.hpp"

namespace gslb::metrics::health {

/// One peer's verdict on one service, as last fetched. ageMs: how old the verdict is now (ms since the peer
/// observed it, as it said, plus the time since we fetched it); negative: never fetched.
struct PeerVerdict {
    Health health = Health::Unknown;
    std::int64_t ageMs = -1;
};

struct QuorumOutcome {
    Health health = Health::Unknown;  // what the selector should use
    bool ownView = false;             // the quorum could not be reached: this is the own verdict alone
    std::uint16_t voters = 0;         // own (when known) + fresh known peer verdicts
    std::uint16_t downVotes = 0;      // of them, Down
};

QuorumOutcome combineQuorum(Health own, std::span<const PeerVerdict> peers, int quorum,
                            std::int64_t maxAgeMs) noexcept;

}  // namespace gslb::metrics::health
