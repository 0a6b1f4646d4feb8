#include "metrics/health/quorum.hpp"

namespace gslb::metrics::health {

QuorumOutcome combineQuorum(Health own, std::span<const PeerVerdict> peers, int quorum,
                            std::int64_t maxAgeMs) noexcept {
    QuorumOutcome out;
    auto vote = [&out](Health h) {
        if (h == Health::Unknown) return;
        ++out.voters;
        if (h == Health::Down) ++out.downVotes;
    };
    vote(own);
    if (quorum <= 0) {
        out.health = own;
        return out;
    }
    for (const auto& p : peers)
        if (p.ageMs >= 0 && p.ageMs <= maxAgeMs) vote(p.health);
    if (out.voters < quorum) {
        out.health = own;
        out.ownView = true;
        return out;
    }
    out.health = out.downVotes >= quorum ? Health::Down : Health::Up;
    return out;
}

}  // namespace gslb::metrics::health
