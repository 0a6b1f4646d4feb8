// The GSLB side of a snapshot: every GSLB hostname bound to its zone node, its services (one per A/AAAA
// record of the name), its compiled selection policy; the lock-free state table of sites and services shared
// with the control thread; and the per-worker DynamicHook that runs the pipeline on the query path.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "metrics/balance.hpp"
#include "metrics/chooser_state.hpp"
#include "metrics/demand.hpp"
#include "metrics/flow.hpp"
#include "metrics/policy.hpp"
#include "metrics/rng.hpp"
#include "metrics/state_table.hpp"
#include "server/state/rtt_table.hpp"
#include "server/state/topology.hpp"
#include "server/conf/config.hpp"
#include "zones/answer.hpp"
#include "zones/zonedb.hpp"

namespace gslb::server {

/// One candidate address of a hostname at a site.
struct GslbService {
    uint8_t rdata[16];
    uint8_t rdlen = 0;      // 4 (A) or 16 (AAAA)
    uint32_t slot = 0;      // service slot in the StateTable: (site, address)
    uint32_t site = 0;      // site slot
    uint32_t hostSlot = 0;  // this (hostname, service)'s row in Gslb::hostAnswers
    double weight = 1;
    double capacity = metrics::kUnknown;  // the service's `capacity` (> 0), NaN when not set
    uint64_t hashKey = 0;                 // `hashed`: rendezvous key of the address
    const ServiceConf* conf = nullptr;    // never null once built: the snapshot's config holds it
    /// The address as configured (kept once, in the config; the answer path reads rdata).
    const std::string& address() const { return conf->address; }
};

/// A hostname's `topology` stage, compiled: how the client's location ranks its sites.
struct HostTopology {
    enum class Mode : uint8_t { Region, Map, Nearest };
    Mode mode = Mode::Region;
    std::vector<std::pair<RegionLabel, uint16_t>> keys;  // Map: region label -> lists index
    std::vector<std::string> keyText;                    // Map: the key as written, per lists index
    std::vector<std::vector<uint32_t>> lists;            // Map: site slots in order of preference
    int32_t defaultList = -1;                            // Map: the `default` list, -1 none
};

/// Per site: what topology matches it on.
struct SiteGeo {
    std::vector<RegionLabel> region;  // the site's `region`, parsed (empty: none)
    bool hasLocation = false;
    double latitude = 0, longitude = 0;
};

/// What the client-aware part of a hostname decided for one query (filled into the candidates).
struct ClientDecision {
    bool located = false;   // the client's location was looked up (topology stage present)
    int32_t list = -1;      // Map: the list used (-1: no label matched and the map has no default)
    int32_t label = -1;     // Map / Region: index into Location::labels of the label that matched
    uint8_t scope = 0;      // ECS scope these decisions need
    uint8_t hashBits = 0;   // `hashed`: the client prefix length hashed
    bool rttKeyed = false;  // `rtt`: the client's prefix was looked up in the RTT table
    uint8_t rttKnown = 0;   // `rtt`: candidates that got a figure (fresh enough)
};

enum class Fallback : uint8_t { All, None, Address };

/// The operator took this service out: it is drained, its site is drained, or its site is at preference 0.
/// Such a service stays out of every answer, the all-down fallback's included (gslbd.toml(5) `fallback`): an
/// operator who drains a site for maintenance expects no traffic there, as F5 and Citrix never answer a
/// disabled member. Any thread (relaxed reads of the state table).
inline bool drainedOut(const metrics::StateTable& t, uint32_t serviceSlot, uint32_t siteSlot) noexcept {
    return !t.serviceEnabled(serviceSlot) || !t.siteEnabled(siteSlot) || t.sitePreference(siteSlot) == 0;
}

struct GslbHost {
    std::string name;      // presentation form, as configured
    zones::WireName wire;  // lower-case wire
    const HostnameConf* conf = nullptr;
    metrics::Policy policy = metrics::Policy::defaultPolicy();
    uint32_t ttl = 30;
    uint32_t ttlMin = 6;    // `headroom`'s adaptive TTL range [ttlMin, ttl]
    bool headroom = false;  // the chooser is `headroom`: resolver demand, committed flow, adaptive TTL
    uint64_t nameKey =
        0;  // a hash of the lower-case name: the demand table's key part, stable across reloads
    uint16_t answers = 1;
    int64_t maxAgeMs = 60000;
    Fallback fallback = Fallback::All;
    uint8_t fallbackRdata[16];
    uint8_t fallbackLen = 0;             // 4 or 16: the family it answers; the other family falls back to all
    std::vector<GslbService> family[2];  // [0]: A, [1]: AAAA, in zone RRset order
    bool usesTopology = false;           // the policy has a `topology` stage
    bool hashed = false;                 // the chooser is `hashed`
    uint8_t hashBits[2] = {24, 56};      // hash_prefix_v4, hash_prefix_v6
    HostTopology topology;
    bool usesRtt = false;          // the policy has an `rtt` stage
    int64_t rttMaxAgeMs = 120000;  // rtt_max_age
    uint64_t rttExplore = 0;       // rtt_explore as a fraction of 2^32: answers that skip the stage
};

/// Answer counts per (worker, service slot): each worker writes only its own row, so the rows do not share
/// cache lines between workers (relaxed atomics: statistics, read by the control thread).
class AnswerCounters {
  public:
    AnswerCounters(size_t workers, size_t slots);
    /// Only worker `worker` writes its row: a relaxed load and store, no locked instruction on the query
    /// path.
    void add(size_t worker, uint32_t slot) {
        auto& c = rows_[worker * stride_ + slot];
        c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }
    uint64_t total(uint32_t slot) const;
    size_t workers() const { return workers_; }
    size_t slots() const { return slots_; }
    /// Carries counts over from `old` for the service keys both tables have.
    void carryFrom(const AnswerCounters& old, const metrics::StateTable& oldTable,
                   const metrics::StateTable& table);
    /// Carries counts over from `old` by key: slot i of `old` (key oldKeys[i]) adds to the slot whose key in
    /// `keys` is the same. Counters keep counting across a reload, as Prometheus expects of a `_total`.
    void carryByKey(const AnswerCounters& old, const std::vector<std::string>& oldKeys,
                    const std::vector<std::string>& keys);

  private:
    size_t workers_, slots_, stride_;
    std::unique_ptr<std::atomic<uint64_t>[]> rows_;
};

struct Gslb {
    std::vector<GslbHost> hosts;                 // index = Node::dynamic
    std::shared_ptr<metrics::StateTable> table;  // shared with the previous snapshot's carried state
    std::shared_ptr<AnswerCounters> answers;     // per service slot (site, address), over every hostname
    // Per (hostname, service): GslbService::hostSlot (keys for carrying over: hostAnswerKeys()).
    std::shared_ptr<AnswerCounters> hostAnswers;
    // Per hostname (index = Node::dynamic): queries answered by the all-down fallback (doc/design.md "All
    // down"), whatever it gave (every candidate not drained, NODATA or the fixed address), except those
    // counted in drainedFallbacks.
    std::shared_ptr<AnswerCounters> fallbacks;
    // Per hostname: fallbacks that found every candidate of the family drained (drainedOut), so a fallback
    // `all` had nothing to give (NODATA) and a fixed address answered alone
    // (gslbd_hostname_fallbacks_total{fallback="drained"}).
    std::shared_ptr<AnswerCounters> drainedFallbacks;
    // `headroom` (null when no hostname's chooser is headroom): each resolver's demand per hostname, kept
    // across reloads (keyed by name, not position), and the committed flow per service slot, carried across a
    // reload for the (site, address) pairs both snapshots have.
    std::shared_ptr<metrics::DemandTable> demand;
    std::shared_ptr<metrics::FlowLedger> flow;
    std::vector<std::string> sites;
    std::shared_ptr<const Topology> topology;  // [topology]; never null (empty when not configured)
    // The learned round-trip times ([rtt], POST /v1/sites/SITE/rtt): written by the control thread, read by
    // the workers. Null when no hostname's policy has an `rtt` stage. Carried across reloads by site name.
    std::shared_ptr<RttTable> rtt;
    std::vector<SiteGeo> siteGeo;  // [site slot]
};

/// The key of each row of g.hostAnswers, "hostname\0site\0address", by GslbService::hostSlot: made when a
/// reload carries the counts over, not kept (80 octets per service at 10,000 hostnames x 8).
std::vector<std::string> hostAnswerKeys(const Gslb& g);

/// Fills the client-aware fields of `c[0..n)` (services `svcs`, positions in Candidate::index) for host `h`
/// and a client at `loc` (already located when h.usesTopology): topology ranks and distances, the `hashed`
/// score, and — unless `rttSkip` (an answer that explores) — each candidate's learned RTT from the client's
/// prefix, a figure reported at most h.rttMaxAgeMs before `nowMs` (monotonic). noexcept, no allocation: the
/// query path and explain share it.
ClientDecision applyClient(const Gslb& g, const GslbHost& h, const std::vector<GslbService>& svcs,
                           const zones::Client& client, const Location& loc, metrics::Candidate* c, size_t n,
                           int64_t nowMs = 0, bool rttSkip = false) noexcept;

/// Binds the config's hostnames to the zones in `db` (setting Node::dynamic), builds the state table
/// (carrying over the state of (site, address) pairs from `previous`, which may be null) and compiles every
/// policy. Errors ("file:line: hostname "…" …: message"): a hostname in no zone or without A/AAAA records, a
/// service address the zone does not hold, a zone address no service describes, a CNAME or delegated name,
/// more than 64 services of one family, a bad policy.
bool buildGslb(const Config& cfg, zones::ZoneDb& db, const Gslb* previous, size_t workers, Gslb& out,
               std::string& error);

/// A family of a hostname that has services but none that is not drainedOut: its answers are the
/// fallback's with nothing to give (NODATA, or the fixed address of that family). Any thread.
bool nothingUndrained(const metrics::StateTable& t, const std::vector<GslbService>& svcs) noexcept;
/// What a fully drained (hostname, family) answers: "NODATA" or "fallback ADDRESS".
std::string drainedOutAnswer(const GslbHost& h, int family);

/// The demand table key of the resolver of `client` for hostname `h`, family `f` (0 A, 1 AAAA): the ECS
/// prefix when the answer is scoped to it (scope > 0: the resolver caches per prefix), else the packet's
/// source (its cache is one for all its clients).
uint64_t resolverDemandKey(const GslbHost& h, int f, const zones::Client& client, uint8_t scope) noexcept;

/// What `headroom` decided beyond the records (the query path sets the TTL from it; explain shows it).
struct HeadroomQuery {
    metrics::DemandEstimate demand;
    uint64_t key = 0;
};
/// Fills Candidate::demand and ::flow of c[0..n) for a headroom hostname; `learn`: the query path (the
/// demand table learns from this query), else explain (reads only). `view`: the answering thread's cached
/// view of g.flow (metrics::FlowView), bound to it; null: the ledger read exactly (explain).
HeadroomQuery fillHeadroom(const Gslb& g, const GslbHost& h, int f, const zones::Client& client,
                           uint8_t scope, metrics::Candidate* c, size_t n, int64_t nowMs, bool learn,
                           metrics::FlowView* view = nullptr) noexcept;
/// The TTL of an answer of `count` records picked[] from c[0..n) (compacted by select, any order): the
/// shortest of the picked candidates' adaptiveTtl.
metrics::TtlDecision headroomTtl(const GslbHost& h, const metrics::Candidate* c, size_t n,
                                 const uint16_t* picked, size_t count) noexcept;

/// The per-worker selection hook: its own random generator and chooser state per hostname and family.
class Selector : public zones::DynamicHook {
  public:
    enum class Mode : uint8_t {
        Worker,   // a worker thread's: counts answers into row `worker` of the snapshot's counters
        Explain,  // the control thread's simulated query (server/control/explain.hpp): counts nothing, keeps
                  // no state per hostname (a stateful chooser picks from a fresh state, as explain says)
    };
    Selector(size_t worker, uint64_t seed, Mode mode = Mode::Worker)
        : worker_(worker), mode_(mode), rng_(seed) {}
    /// Points the selector at a new snapshot, keeping chooser state for hostnames (by name) whose service set
    /// and chooser are the same; linear in hostnames. Precondition: the Gslb bound before (if any) is still
    /// alive — rebind compares with it (Responder::snapshot keeps the old snapshot until it returns).
    void rebind(const Gslb* gslb);
    void select(int32_t dynamic, uint16_t qtype, const zones::Zone& zone, const zones::RRset* set,
                const zones::Client& client, zones::DynAnswer& out) noexcept override;
    /// The chooser state kept for (host, family): null when its chooser keeps none (random, weighted-random,
    /// hashed, load-factor), in Explain mode, or for a family without services. Tests and status.
    const metrics::ChooserState* state(size_t host, int family) const {
        size_t i = host * 2 + size_t(family);
        return i < states_.size() ? states_[i].get() : nullptr;
    }

  private:
    size_t worker_;
    Mode mode_;
    metrics::Rng rng_;
    const Gslb* gslb_ = nullptr;
    // Recently located clients, when a GeoIP database is configured (its lookups walk an mmap'd tree and
    // decode map keys; a resolver's clients repeat). Direct-mapped on the client prefix; rebuilt per
    // snapshot.
    struct CacheEntry {
        zones::ClientSubnet key;
        bool valid = false;
        Location loc;
    };
    const Location& locate(const zones::ClientSubnet& client) noexcept;
    std::vector<CacheEntry> cache_;
    Location scratch_;
    // [host * 2 + family]; null where nothing is kept. Only hostnames with a stateful chooser own one, sized
    // to their service count (ChooserState: per-service arrays only for what the chooser reads).
    std::vector<std::unique_ptr<metrics::ChooserState>> states_;
    metrics::ChooserState none_{0, metrics::kNeedsNothing};  // passed to choosers that keep nothing
    metrics::FlowView flowView_;  // Worker: the committed flows this thread reads, bound to gslb_->flow
    std::unique_ptr<metrics::ChooserState> fresh_;  // Explain: reset before each pick
    // The EXTRA-TEXT of the last all-down answer (DynAnswer::ede points here until the next select).
    // 16 + 255 (the longest name) + 40 (the rest, an IPv6 address included) octets.
    char edeText_[320];
    size_t fallbackText(const GslbHost& h, bool drained, bool all) noexcept;
};

}  // namespace gslb::server
