#pragma once
// Every selection stage, one file each in metrics/stages/ named after the stage (doc/design.md "Selection: a
// pipeline of stages"). Normally reached through the registry (stage_registry.hpp) and select(); declared
// here so each can be tested alone.
//
// FILTER stages: (candidates, params) -> kept. They compact `in` in place, stable (kept candidates keep
// their relative order), and return how many of the first elements are kept. Shared rules:
//  * A metric that is unknown (NaN) for every candidate: all are kept (doc/design.md).
//  * Keep-the-best filters (session-capacity, flashback, least-connections, cpu): the best KNOWN value sets
//    the bar; a candidate whose metric is unknown is kept — the stage drops only what it knows to be worse.
//    Unknown never wins (it cannot set the bar, so it cannot push a measured candidate out), and it is never
//    treated as zero. Dropping it instead would move every answer to the sites that report as soon as one
//    agent or one health check is deployed, or as one agent stops — a silent shift an operator would not
//    expect.
//  * Threshold filter (session-threshold): only what is known to be over the threshold is dropped; unknown
//    is kept (the threshold can't say it is over).
//  * Soft exclusion: a filter that would leave nothing keeps its whole input instead (Brocade falls through
//    to the next metric when no site qualifies; answering nothing because every site is over 90 % is worse
//    than answering one of them). Keep-the-best filters can't leave nothing anyway (the best is kept).
//  * Hard exclusion: `health` and preference 0 are the operator's and the checks' "never answer this";
//    they may leave nothing. select() reports that as AllDown / AllExcluded.
//
// CHOOSER stages: (active, taken, params, state, rng) -> position in `active` of the pick, or -1 for none.
// `active` is every candidate that survived the filters (stateful choosers treat it as the active set);
// `taken` is a mask of Candidate::index bits already answered in this response (answers > 1): those are
// not picked again. Each pick advances the chooser's state as if it were one answer of its own.

#include <cstddef>
#include <cstdint>
#include <span>

#include "metrics/candidate.hpp"
#include "metrics/chooser_state.hpp"
#include "metrics/params.hpp"
#include "metrics/rng.hpp"

namespace gslb::metrics {

using FilterFn = std::size_t (*)(std::span<Candidate> in, const Params& params);
using ChooserFn = int (*)(std::span<const Candidate> active, std::uint64_t taken, const Params& params,
                          ChooserState& state, Rng& rng);

// health (all the vendor manuals): keeps services whose health is Up or Unknown, that are enabled, and whose
// site is up and enabled. Unknown counts as up: the server runs one round of checks before it answers
// (doc/design.md "Start-up"), so Unknown on the query path means "no check configured" or "service added by a
// reload and not checked yet" — in both cases answering with it is what the operator configured. Hard: may
// keep 0.
std::size_t filterHealth(std::span<Candidate> in, const Params& params);

// session-threshold (Brocade): keeps sites whose sessionsUsed / sessionsMax * 100 <= sessionThreshold
// (percent). Unknown use (NaN, or sessionsMax <= 0) is kept. If every site is over: keeps all (soft).
std::size_t filterSessionThreshold(std::span<Candidate> in, const Params& params);

// session-capacity (Brocade Virtual ADX GSLB Guide, p. 10): keeps sites whose available sessions (sessionsMax
// - sessionsUsed, clamped at 0) are equal to the most available: within sessionTolerance percent of the
// larger (the guide's 1,000,000 and 950,000 at 10 % are equal, 1,000,000 and 800,000 are not), or within
// sessionFloor percent of the smaller of the two sites' session tables (sessionsMax). The floor is ours: a
// tolerance relative to the seats left shrinks to nothing as sites fill, so near full one seat decided every
// answer ("2 available is more than 10 % below the best 3"); a difference smaller than a few percent of a
// table is within what one scrape interval changes. The stage still compares ABSOLUTE seats (a large site
// wins while it has more free seats, however full): `gslbd --check` says so when it is named.
std::size_t filterSessionCapacity(std::span<Candidate> in, const Params& params);

// flashback (Brocade Virtual ADX GSLB Guide, p. 10): keeps services whose FlashBack time (ms, lower is
// better) is equal to the fastest: within flashbackTolerance percent of the larger, or within
// flashbackFloorMs (default 5 ms) whatever the percentage (compare.hpp). L7 is compared first when any
// candidate has an L7 time; if that keeps more than one, L4 is compared among those kept (also when no one
// has L7).
std::size_t filterFlashback(std::span<Candidate> in, const Params& params);

// least-connections (HP SA9200 User Manual, p. 17): keeps services with connections <= fewest * (1 + factor).
// When every candidate whose connections are known has a configured capacity (Candidate::capacity > 0), it
// compares connections / capacity instead: the manual's own example of the trap ("Server B is the site with
// the least number of connections, although it is already 80% loaded while Server A is only 30% loaded", HP
// Multi-Site Traffic Director SA9200 User Manual, p. 17) — 900 of 3,000 beats 400 of 500. Without capacities
// (the SA9200 "has no knowledge of the actual load potential"), raw counts, as the manual describes; `gslbd
// --check` warns then. Unknown connections: kept, never the bar (the keep-the-best rule above).
std::size_t filterLeastConnections(std::span<Candidate> in, const Params& params);
// Whether filterLeastConnections compares connections / capacity for this input (explain shows which).
bool connectionsRelativeToCapacity(std::span<const Candidate> in) noexcept;

// cpu (HP SA9200 User Manual, p. 17): keeps services whose site cpu (percent) <= lowest * (1 + factor).
std::size_t filterCpu(std::span<Candidate> in, const Params& params);

// preference (Brocade): drops sites with preference 0 (hard: even the only one), then keeps the highest.
// select() drops preference 0 before any stage, whatever the policy (see select.hpp); here it stays so the
// stage is right when called alone.
std::size_t filterPreference(std::span<Candidate> in, const Params& params);

// topology (F5 topology, gdnsd geoip, Route 53 geolocation): the server fills topoRank from the client's
// region (the position of the candidate's site in that region's ordered list; kNoRank when not listed) and
// keeps the candidates of the lowest rank present: the first listed site that still has candidates wins. With
// distances instead ("nearest"), keeps sites within distanceKm <= nearest + nearestTolerance. No rank and
// no distance known (an unknown client, or a site listed nowhere for it): all kept (soft).
std::size_t filterTopology(std::span<Candidate> in, const Params& params);

// rtt (Brocade ADX's RTT metric, Route 53 latency records): keeps the sites whose round-trip time from the
// client's prefix, as the site agents learned it (Candidate::rttMs), equals the fastest known one: within
// rttTolerance percent of the larger or within rttFloorMs (compare.hpp). A site with no figure for the prefix
// is kept beside the best known (unknown is never zero, never a loss); no figure at all: all kept, and the
// stages after it decide (topology, for a prefix never learned).
std::size_t filterRtt(std::span<Candidate> in, const Params& params);

// random (HP, WebSphere V6 Scalability and Performance Handbook (SG24-6392), Workload management policies):
// uniform among the untaken active candidates.
int chooseRandom(std::span<const Candidate> active, std::uint64_t taken, const Params& params,
                 ChooserState& state, Rng& rng);

// weighted-random (HP): probability proportional to Candidate::weight (NaN -> 1, negative -> 0); weight 0 is
// never chosen unless every untaken candidate has weight 0, then uniform.
int chooseWeightedRandom(std::span<const Candidate> active, std::uint64_t taken, const Params& params,
                         ChooserState& state, Rng& rng);

// round-robin (WebSphere, Brocade): the first untaken active index after the last answered one, wrapping.
// The first pick of a fresh state starts at a random active member (WebSphere), unless startAt() was used.
int chooseRoundRobin(std::span<const Candidate> active, std::uint64_t taken, const Params& params,
                     ChooserState& state, Rng& rng);

// weighted-round-robin (WebSphere V6 Scalability and Performance Handbook (SG24-6392), Workload management
// policies): round robin that skips members whose weight left in this cycle is 0 and decrements the picked
// one's. Weight = round(Candidate::weight) (NaN -> 1); if every active weight is 0 they all count as 1. When
// every active member is at 0 all weights are refilled and the new cycle starts again at the cycle's first
// member (the random start), so each cycle repeats the same order: 3/1 starting at A gives A B A A | A B A A.
// A member that (re)joins mid-cycle gets its full weight. answers > 1 and only taken members have weight
// left: the next untaken member in turn is answered without being charged (distinct records beat exact
// weights).
int chooseWeightedRoundRobin(std::span<const Candidate> active, std::uint64_t taken, const Params& params,
                             ChooserState& state, Rng& rng);

// least-selected (Brocade "least response selection"): the untaken active candidate answered least often by
// this state; ties go to the lowest index (deterministic; equal counts then behave as round robin). A
// member that joins the active set is raised to the lowest count of the others, so a service back from a
// long outage does not take every answer until it has caught up.
int chooseLeastSelected(std::span<const Candidate> active, std::uint64_t taken, const Params& params,
                        ChooserState& state, Rng& rng);

// best-server (CA SiteMinder Web Agent technote on the Best Server Algorithm). See best_server.cpp for the
// table; response time per candidate = l7Ms if any active candidate has an L7 time, else l4Ms, else all equal
// (1 ms); an unknown time among known ones counts as the slowest known one.
int chooseBestServer(std::span<const Candidate> active, std::uint64_t taken, const Params& params,
                     ChooserState& state, Rng& rng);

// load-factor (JBoss mod_cluster User Guide, ch. 11 Load Metrics, p. 40): probability proportional to
// Candidate::loadFactor (clamped to 0..100). Unknown factors count as the lowest known one (unknown never
// beats known); all unknown or all 0
// -> uniform.
int chooseLoadFactor(std::span<const Candidate> active, std::uint64_t taken, const Params& params,
                     ChooserState& state, Rng& rng);

// hashed (F5 static persist, PowerDNS pickchashed, CoreDNS-GSLB ip-hash): the untaken candidate with the
// highest hashScore, which the server computes as weighted rendezvous hashing (HRW) of the client prefix and
// the service: score = weight / -ln(u), u = hash(prefix, service) in (0, 1). So a client prefix keeps its
// service while that service survives, a service leaving moves only its own clients, and each service wins
// for a share of prefixes proportional to its weight. Ties and unknown scores: the lowest position wins.
int chooseHashed(std::span<const Candidate> active, std::uint64_t taken, const Params& params,
                 ChooserState& state, Rng& rng);

}  // namespace gslb::metrics
