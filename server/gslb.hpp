// The GSLB side of a snapshot: every GSLB hostname bound to its zone node, its services (one per A/AAAA
// record of the name), its compiled selection policy; the lock-free state table of sites and services shared
// with the control thread; and the per-worker DynamicHook that runs the pipeline on the query path.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "metrics/chooser_state.hpp"
#include "metrics/policy.hpp"
#include "metrics/rng.hpp"
#include "metrics/state_table.hpp"
#include "server/config.hpp"
#include "zones/answer.hpp"
#include "zones/zonedb.hpp"

namespace gslb::server {

/// One candidate address of a hostname at a site.
struct GslbService {
    std::string address;
    uint8_t rdata[16];
    uint8_t rdlen = 0;  // 4 (A) or 16 (AAAA)
    uint32_t slot = 0;  // service slot in the StateTable: (site, address)
    uint32_t site = 0;  // site slot
    double weight = 1;
    const ServiceConf* conf = nullptr;
};

enum class Fallback : uint8_t { All, None, Address };

struct GslbHost {
    std::string name;      // presentation form, as configured
    zones::WireName wire;  // lower-case wire
    const HostnameConf* conf = nullptr;
    metrics::Policy policy = metrics::Policy::defaultPolicy();
    uint32_t ttl = 30;
    uint16_t answers = 1;
    int64_t maxAgeMs = 60000;
    Fallback fallback = Fallback::All;
    uint8_t fallbackRdata[16];
    uint8_t fallbackLen = 0;             // 4 or 16: the family it answers; the other family falls back to all
    std::vector<GslbService> family[2];  // [0]: A, [1]: AAAA, in zone RRset order
    std::string signature[2];            // the service set, to carry chooser state across reloads
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

  private:
    size_t workers_, slots_, stride_;
    std::unique_ptr<std::atomic<uint64_t>[]> rows_;
};

struct Gslb {
    std::vector<GslbHost> hosts;                 // index = Node::dynamic
    std::shared_ptr<metrics::StateTable> table;  // shared with the previous snapshot's carried state
    std::shared_ptr<AnswerCounters> answers;
    std::vector<std::string> sites;
};

/// Binds the config's hostnames to the zones in `db` (setting Node::dynamic), builds the state table
/// (carrying over the state of (site, address) pairs from `previous`, which may be null) and compiles every
/// policy. Errors ("file:line: hostname "…" …: message"): a hostname in no zone or without A/AAAA records, a
/// service address the zone does not hold, a zone address no service describes, a CNAME or delegated name,
/// more than 64 services of one family, a bad policy.
bool buildGslb(const Config& cfg, zones::ZoneDb& db, const Gslb* previous, size_t workers, Gslb& out,
               std::string& error);

/// Monotonic milliseconds (CLOCK_MONOTONIC_COARSE: a vDSO read, cheap enough per query).
int64_t monotonicMs();

/// The per-worker selection hook: its own random generator and chooser state per hostname and family.
class Selector : public zones::DynamicHook {
  public:
    Selector(size_t worker, uint64_t seed) : worker_(worker), rng_(seed) {}
    /// Points the selector at a new snapshot, keeping chooser state for hostnames whose service set is the
    /// same.
    void rebind(const Gslb* gslb);
    void select(int32_t dynamic, uint16_t qtype, const zones::Zone& zone, const zones::RRset* set,
                const zones::Client& client, zones::DynAnswer& out) noexcept override;

  private:
    size_t worker_;
    metrics::Rng rng_;
    const Gslb* gslb_ = nullptr;
    std::vector<metrics::ChooserState> states_;  // [host * 2 + family]
    std::vector<std::string> signatures_;
    std::vector<std::string> names_;
};

}  // namespace gslb::server
