#pragma once
// The `headroom` chooser and its TTL rule: answers that spread the load of caching resolvers over sites in
// proportion to their free capacity, not all to the momentary best.
//
// Why not "the least loaded": the metrics are a scrape old and every answer stays in a resolver's cache for
// its TTL, so sending each answer to the momentary best herds — the best flips once per TTL and the sites
// swing between idle and full (Mitzenmacher, "How useful is old information?", IEEE TPDS 11(1), 2000). What
// gslbd knows that its metrics do not yet show is its own answers: which resolver it sent where, until when,
// and how much demand that resolver brings (metrics/demand.hpp). So:
//  1. A target share per candidate, proportional to capacity x headroom: C_i * max(0, 1 - u_i) (u = load ÷
//     capacity, metrics/utilisation.hpp). Equal utilisation is its fixed point (shares ∝ capacity), and it is
//     stable: a site fuller than the others gets less than its capacity share, an emptier one more. The load
//     is the one projected to when the sessions in flight have arrived (projectedLoad): the metrics are a
//     scrape old and the answers cached bring sessions for up to a TTL more, so a site that has just been
//     given many answers looks emptier than it will be.
//     Less a square-root safety margin: equal utilisation is not equal risk. A site's load is a Poisson-like
//     count of sd ≈ √(load), so at 80 % a 30-seat site (24 ± 4.9) is above 95 % (28.5) far more often than a
//     400-seat one (320 ± 18 against 380). Square-root staffing leaves each site free seats ∝ √capacity,
//     which equalises the probability of overflow instead (Halfin & Whitt, "Heavy-traffic limits for queues
//     with many exponential servers", Operations Research 29(3), 1981; Borst, Mandelbaum & Reiman,
//     "Dimensioning large call centers", Operations Research 52(1), 2004). With free_i = C_i x headroom_i,
//     F = sum free_i and beta = gamma x F / sum √C_i, the target is ∝ max(0, free_i - beta √C_i) (gamma =
//     Params::sqrtMargin, 0.25: a blend; 0 is the plain C_i x headroom_i). Its fixed point, with L the load
//     and a = L / ((1 - gamma) F), leaves free_i = (C_i + a beta √C_i) / (1 + a): free seats between ∝ C_i
//     and ∝ √C_i. Worked example: 400, 100 and 25 seats, 320, 80 and 20 in use (80 % each): free 80, 20, 5,
//     F = 105, sum √C = 35, beta = 0.25 x 105 / 35 = 0.75, margins 15, 7.5, 3.75, targets 65, 12.5, 1.25
//     of 78.75 (0.825, 0.159, 0.016 against 16 : 4 : 1). The fixed point (a = 420 / 78.75 = 16/3): free
//     3 (C_i + 4 √C_i) / 19 = 75.8, 22.1, 7.1 (utilisation 81 %, 78 %, 72 %). Stability: a site's share falls
//     by 1 / ((1 - gamma) F) per seat it fills, 1 / (1 - gamma) times the plain rule's slope; the deficit
//     below damps it. gamma 0.25 is what the closed-loop lab measured as no worse anywhere and better on the
//     time above 95 %; 0.5 refused more after a health failure, 0.75 oscillated in a discrete-event
//     model (doc/lab.md). The TTL rule and the batch's fit (3., 4.) read the free seats without the margin.
//  2. The committed flow F_i (metrics/flow.hpp): the demand of the answers still cached that name candidate
//  i.
//     The pick is random with probability ∝ the deficit max(0, T_i * (F + d) - F_i), where F = sum F_i and
//     d is this resolver's demand: the flow after this answer moves toward the target shares. A big resolver
//     just sent to site A counts at once, so the next ones go elsewhere; several gslbd instances of one NS
//     set each steer their own resolvers toward the same shares, and proportional shares add up.
//  3. A resolver's batch: over ttlMin it brings d * ttlMin sessions. A site where that batch would take more
//     than half the free seats (the TTL rule's half, below: others send there too, and the batch is a
//     random number) is not given to it while another site can take it ("does not fit"): the largest
//     resolver is never handed the small site for a whole TTL. When it fits nowhere, only the sites with the
//     most free seats are drawn from (the nearest to fitting), never the smallest.
//  4. The TTL (adaptiveTtl): shorter when the chosen site's free seats are few for this resolver's batch, or
//     its state is uncertain; the configured ttl when calm (Colajanni, Yu, Dias, "Scheduling algorithms for
//     distributed Web servers", ICDCS 1997: TTL adapted to the client domain's load and server capacity).
// Measured in a discrete-event model of three sites of 500, 300 and 100 sessions, 40 resolvers with Zipf
// client shares, TTL 5 s, sessions of 8 s at 80 % load: static 5/3/1 weights refuse 3.4 % and keep some site
// above 95 % for 37 % of the time; target shares alone 1.9 % / 20 %; with the deficit 0.3 % / 4.5 %; with the
// TTL rule too 0.02 % / 1.9 %, the mean TTL 4.6 s of 5. The projected load, the batch's half and the
// nearest fit, in the same model over 16 seeds (5 s answers, one scrape 0.5 s late): 0.14 -> 0.04 % refused,
// 4.6 -> 2.6 % above 95 %; five sites of 400/300/200/120/30, Zipf 1.3 over 60 resolvers, TTL 10 s, 12 s
// sessions: 0.26 -> 0.10 %, 10.1 -> 7.2 % (each of the three alone: within the seeds' spread).
//
// Unknowns. Utilisation: a candidate whose capacity is unknown counts as the mean capacity of those known;
// one whose load is unknown (stale, never reported) as the capacity-weighted mean utilisation of the known —
// never as empty. No capacity known at all: target ∝ `weight` (static weights). Demand unknown (no estimate
// at all): the deficit uses 0 for it and nothing is excluded for its batch. Pure functions, no allocation;
// the chooser is the registered stage `headroom`.

#include <cstdint>
#include <span>

#include "metrics/candidate.hpp"
#include "metrics/chooser_state.hpp"
#include "metrics/params.hpp"
#include "metrics/rng.hpp"
#include "metrics/utilisation.hpp"

namespace gslb::metrics {

// What the headroom chooser computed for one candidate (explain shows each field).
struct Share {
    Utilisation measured;         // as read (basis, capacity, load, utilisation; NaN where unknown)
    double capacity = kUnknown;   // seats the target is proportional to: measured, or the known mean
    double utilisation = 0;       // projected ÷ capacity, or the measured mean when the load is unknown
    double headroom = 1;          // max(0, 1 - utilisation)
    double free = 0;              // capacity x headroom: free seats once the sessions in flight arrived
    double margin = 0;            // beta x √capacity: the seats of `free` the target leaves unused
    double target = 0;            // share of the flow this candidate should carry, 0..1 (sums to 1)
    double flow = 0;              // committed flow (sessions/s)
    double pending = 0;           // sessions in flight (Candidate::pending; 0 without flow)
    double projected = kUnknown;  // load once they arrived (projectedLoad); NaN when the load is unknown
    double deficit = 0;           // max(0, target * (F + d) - flow), sessions/s
    bool fits = true;             // free seats >= 2 x demand x ttlMin (or either unknown)
    bool nearest = false;         // fits nowhere, and this has the most free seats: drawn from
    double probability = 0;       // of this pick, 0..1 (0 for a taken candidate)
};

enum class ShareBasis : std::uint8_t {
    Capacity,  // targets from capacity x headroom
    Weight,    // no candidate's capacity known: targets from `weight`
};

struct ShareSummary {
    ShareBasis basis = ShareBasis::Weight;
    double totalFlow = 0;      // F, sessions/s, over the untaken candidates
    double demand = kUnknown;  // d, as the candidates carried it
    bool anyFits = true;       // false: no site can take this resolver's batch; the nearest are drawn from
    double sessionTime = kUnknown;  // S, s: sessions in use ÷ flow over the sites whose load is known
    double beta = 0;  // seats per √seat of the square-root margin (0 on the weight basis or when all full)
};

// The load a site is projected to once the sessions in flight have arrived: load + pending - the sessions
// that end meanwhile. Those arrive over hh = pending / flow s, and a share 1 - exp(-hh / S) of the sessions
// in use ends in that time (exponential session times of mean S = sessionTime, s), taken as hh / (S + hh/2).
// S is Little's law over the hostname's sites (in use ÷ the flow gslbd sent there): at equilibrium every
// site's load is its flow x S and the projection is the load itself; a site given more than its flow's
// share (herded) projects fuller, one given less emptier. Load NaN: NaN; no flow or nothing pending: the
// load; S unknown or not > 0: nothing ends (the safe side). Several gslbd instances of one NS set each see
// only their own answers: S comes out longer, and fewer sessions end in the projection (the safe side).
// Worked example: 80 in use, flow 4/s, 20 sessions pending (hh = 5 s), S = 20 s: 80 x 5 / 22.5 = 17.8 end,
// 80 + 20 - 17.8 = 82.2.
double projectedLoad(double load, double flow, double pending, double sessionTime) noexcept;

// Fills out[i] for active[i] (out.size() >= active.size()); taken candidates (bit Candidate::index of
// `taken`) get probability 0 and take no part. Probabilities of the untaken sum to 1 (when any is untaken).
ShareSummary headroomShares(std::span<const Candidate> active, std::uint64_t taken, const Params& params,
                            std::span<Share> out) noexcept;

// The `headroom` chooser: one draw with headroomShares' probabilities; -1 when all are taken.
int chooseHeadroom(std::span<const Candidate> active, std::uint64_t taken, const Params& params,
                   ChooserState& state, Rng& rng);

// Why an answer got the TTL it got.
enum class TtlReason : std::uint8_t {
    Calm,      // the configured ttl: enough free seats for the resolver's batch, metrics fresh
    Headroom,  // the site's free seats are few for this resolver's demand over ttl
    Stale,     // the site's capacity is known but its load is not (stale or never reported): ttl / 2
    Suspect,   // a health check of the service failed and has not reached `fall`: ttlMin
    Fixed,     // ttlMin >= ttl: nothing to adapt
};
const char* ttlReasonName(TtlReason r) noexcept;  // "calm", "headroom", "stale", "suspect", "fixed"

struct TtlDecision {
    std::uint32_t ttl = 0;  // s, within [ttlMin, ttl] (ttl when ttlMin >= ttl)
    TtlReason reason = TtlReason::Fixed;
};

// The TTL of an answer naming `chosen` for a resolver of demand `demand` (sessions/s, NaN unknown):
//  - ttlMin >= ttl: ttl (Fixed).
//  - chosen.suspect: ttlMin (Suspect).
//  - capacity known, load unknown: max(ttlMin, ttl / 2) (Stale).
//  - demand and free seats known and demand * ttl > free / 2: clamp(floor(free / 2 / demand), ttlMin, ttl)
//    (Headroom) — the resolver may take at most half of the seats left, since others are sending there too.
//  - else ttl (Calm).
// Worked example: ttl 30, ttlMin 6, a site with 40 free seats, demand 2/s: 2 * 30 = 60 > 20, so
// floor(20 / 2) = 10 s; demand 0.5/s: 15 <= 20, 30 s; demand 10/s: 2 s -> 6 s (ttlMin).
// At steady state most answers are Calm (a resolver is sent where its batch fits), so the mean TTL stays near
// ttl and resolvers' queries grow little (the bar: mean >= ttl / 2, queries at most doubled).
TtlDecision adaptiveTtl(const Candidate& chosen, std::uint32_t ttlMin, std::uint32_t ttl) noexcept;

}  // namespace gslb::metrics
