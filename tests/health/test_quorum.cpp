#include <doctest/doctest.h>

#include <vector>

#include "metrics/health/quorum.hpp"

using namespace gslb::metrics;
using namespace gslb::metrics::health;
using H = Health;

namespace {
constexpr int64_t kMax = 3000;  // ms
PeerVerdict fresh(H h) {
    return {h, 100};
}
PeerVerdict stale(H h) {
    return {h, kMax + 1};
}
QuorumOutcome q(H own, std::vector<PeerVerdict> peers, int quorum) {
    return combineQuorum(own, peers, quorum, kMax);
}
}  // namespace

TEST_CASE("2 members, quorum 2: one member seeing it down keeps it up; both down drains it") {
    auto o = q(H::Down, {fresh(H::Up)}, 2);
    CHECK(o.health == H::Up);
    CHECK_FALSE(o.ownView);
    CHECK(o.voters == 2);
    CHECK(o.downVotes == 1);
    CHECK(q(H::Up, {fresh(H::Down)}, 2).health == H::Up);  // the peer is the one cut off
    o = q(H::Down, {fresh(H::Down)}, 2);
    CHECK(o.health == H::Down);
    CHECK(o.downVotes == 2);
    CHECK(q(H::Up, {fresh(H::Up)}, 2).health == H::Up);
}

TEST_CASE("peer stale or never heard from: the own view, flagged") {
    for (auto p : {stale(H::Up), PeerVerdict{H::Up, -1}}) {
        auto o = q(H::Down, {p}, 2);
        CHECK(o.health == H::Down);
        CHECK(o.ownView);
        CHECK(o.voters == 1);
        o = q(H::Up, {p}, 2);
        CHECK(o.health == H::Up);
        CHECK(o.ownView);
    }
    // Exactly max age is still fresh.
    CHECK_FALSE(q(H::Down, {PeerVerdict{H::Up, kMax}}, 2).ownView);
    // A fresh peer without a verdict of its own (Unknown) is no vote either.
    auto o = q(H::Down, {fresh(H::Unknown)}, 2);
    CHECK(o.ownView);
    CHECK(o.health == H::Down);
}

TEST_CASE("3 members, quorum 2") {
    CHECK(q(H::Down, {fresh(H::Up), fresh(H::Up)}, 2).health == H::Up);
    CHECK(q(H::Down, {fresh(H::Down), fresh(H::Up)}, 2).health == H::Down);
    // Two others see it down: down here too, although this member reaches it.
    CHECK(q(H::Up, {fresh(H::Down), fresh(H::Down)}, 2).health == H::Down);
    // One peer out of reach: the two left still make a quorum, and must agree.
    auto o = q(H::Down, {fresh(H::Up), stale(H::Down)}, 2);
    CHECK(o.health == H::Up);
    CHECK_FALSE(o.ownView);
    CHECK(q(H::Down, {fresh(H::Down), stale(H::Up)}, 2).health == H::Down);
    // Both peers out of reach: own view.
    o = q(H::Down, {stale(H::Up), stale(H::Up)}, 2);
    CHECK(o.health == H::Down);
    CHECK(o.ownView);
}

TEST_CASE("quorum = members: down only when everyone sees it down") {
    CHECK(q(H::Down, {fresh(H::Down), fresh(H::Up)}, 3).health == H::Up);
    CHECK(q(H::Down, {fresh(H::Down), fresh(H::Down)}, 3).health == H::Down);
    CHECK(q(H::Down, {fresh(H::Down), stale(H::Down)}, 3).ownView);
}

TEST_CASE("no quorum set (0): the own verdict, never flagged") {
    auto o = q(H::Down, {fresh(H::Up)}, 0);
    CHECK(o.health == H::Down);
    CHECK_FALSE(o.ownView);
    CHECK(q(H::Up, {stale(H::Down)}, 0).health == H::Up);
    CHECK(q(H::Up, {fresh(H::Down)}, 0).health == H::Up);
}

TEST_CASE("quorum 1: down when any member sees it down") {
    CHECK(q(H::Up, {fresh(H::Down)}, 1).health == H::Down);
    CHECK(q(H::Down, {fresh(H::Up)}, 1).health == H::Down);
    CHECK(q(H::Up, {fresh(H::Up)}, 1).health == H::Up);
    auto o = q(H::Up, {stale(H::Down)}, 1);  // the own vote alone reaches quorum 1: not a fallback
    CHECK(o.health == H::Up);
    CHECK_FALSE(o.ownView);
}

TEST_CASE("own verdict unknown (first check not finished)") {
    // Peers alone may reach the quorum.
    CHECK(q(H::Unknown, {fresh(H::Down), fresh(H::Down)}, 2).health == H::Down);
    CHECK(q(H::Unknown, {fresh(H::Down), fresh(H::Up)}, 2).health == H::Up);
    auto o = q(H::Unknown, {fresh(H::Down)}, 2);
    CHECK(o.health == H::Unknown);
    CHECK(o.ownView);
}
