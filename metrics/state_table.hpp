#pragma once
// Live state of sites and services (doc/design.md "Principles" 4; gdnsd plugins/mon.h, dnsdist Availability):
// written by the ONE control thread (health checks, reports, admin API), read by the worker threads on the
// query path without locks. Slots are dense indices assigned when the table is built from the config: one per
// (site, address) — hostnames that share a VIP share its slot (doc/design.md "Data model") — and one per
// site.
//
// Memory ordering: every field is its own std::atomic, written and read with memory_order_relaxed. That is
// enough because no reader derives a pointer or an invariant from one field that another must uphold: each
// value is a self-contained number. A reader racing with a report may combine the new cpu with the old
// sessions_used, or a fresh timestamp with the previous (equally recent) values, for one query — the next
// query sees the rest; a GSLB decision is a heuristic over values that are seconds old anyway. What
// relaxed atomics do guarantee is no torn double and no data race (no UB).

#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "metrics/candidate.hpp"

namespace gslb::metrics {

// A service's state key: its site name and its address in text form ("192.0.2.10", "2001:db8::1").
struct ServiceKey {
    std::string site;
    std::string address;
};

// One site report (doc/design.md "Reports"), pushed or scraped. NaN = not in this report: that field keeps
// its value and its age (an agent that sends connections and cpu separately must not erase one with the
// other). Each field has its own time stamp, so a value that stops coming still ages out after max_age.
// sessionsUsed and sessionsMax are one field (a use ratio needs both from the same moment): both or neither.
struct SiteReport {
    double cpu = kUnknown;           // percent 0..100
    double sessionsUsed = kUnknown;  // count
    double sessionsMax = kUnknown;   // count
    double loadFactor = kUnknown;    // 0..100, from LoadHistory::push at report time
};

inline constexpr std::int64_t kNeverMs = std::numeric_limits<std::int64_t>::min();

class StateTable {
  public:
    // Builds a table with one slot per site (in the given order) and per service key (in the given order:
    // slot i = services[i]). Errors: duplicate site, duplicate (site, address), a service on an unknown site.
    // `previous` (may be null): state of sites and (site, address) slots that exist in both is carried over
    // (a reload keeps health, admin state, metrics and their report times). Control thread only. True with
    // `out`; false with `error`, `out` untouched (doc/design.md "Errors").
    static bool build(const std::vector<std::string>& sites, const std::vector<ServiceKey>& services,
                      std::shared_ptr<StateTable>& out, std::string& error,
                      const StateTable* previous = nullptr);

    StateTable(const StateTable&) = delete;
    StateTable& operator=(const StateTable&) = delete;

    std::uint32_t serviceCount() const noexcept { return static_cast<std::uint32_t>(serviceKeys_.size()); }
    std::uint32_t siteCount() const noexcept { return static_cast<std::uint32_t>(siteNames_.size()); }
    std::optional<std::uint32_t> findSite(std::string_view site) const;
    std::optional<std::uint32_t> findService(std::string_view site, std::string_view address) const;
    const ServiceKey& serviceKey(std::uint32_t serviceSlot) const { return serviceKeys_[serviceSlot]; }
    const std::string& siteName(std::uint32_t siteSlot) const { return siteNames_[siteSlot]; }
    std::uint32_t siteOf(std::uint32_t serviceSlot) const { return serviceSite_[serviceSlot]; }

    // ---- Writers: control thread only. Slot out of range is a precondition violation. ----
    void setHealth(std::uint32_t service, Health h) noexcept;
    void setServiceEnabled(std::uint32_t service, bool enabled) noexcept;
    // A check of the service failed and has not reached `fall` yet (Candidate::suspect).
    void setSuspect(std::uint32_t service, bool suspect) noexcept;
    void reportConnections(std::uint32_t service, double connections, std::int64_t nowMs) noexcept;
    // FlashBack times in ms (NaN = none; health checks refresh them every interval, so they don't age).
    void setFlashback(std::uint32_t service, double l4Ms, double l7Ms) noexcept;
    void reportSite(std::uint32_t site, const SiteReport& report, std::int64_t nowMs) noexcept;
    void setSiteEnabled(std::uint32_t site, bool enabled) noexcept;
    void setSiteUp(std::uint32_t site, bool up) noexcept;
    void setSitePreference(std::uint32_t site, std::uint8_t preference) noexcept;

    // ---- Readers: any thread. ----
    /// Raw values as last written, for status pages (control thread); NaN = never reported.
    struct ServiceView {
        Health health;
        bool enabled;
        double connections;
        std::int64_t connectionsAtMs;  // kNeverMs when never reported
        double l4Ms, l7Ms;
    };
    struct SiteView {
        double cpu, sessionsUsed, sessionsMax, loadFactor;
        std::int64_t reportAtMs;  // the latest of the three below; kNeverMs when never reported
        std::int64_t cpuAtMs, sessionsAtMs, loadFactorAtMs;  // per field; kNeverMs when never reported
        bool enabled, up;
        std::uint8_t preference;
    };
    ServiceView serviceView(std::uint32_t service) const noexcept;
    SiteView siteView(std::uint32_t site) const noexcept;

    Health health(std::uint32_t service) const noexcept;
    bool serviceEnabled(std::uint32_t service) const noexcept;
    bool siteEnabled(std::uint32_t site) const noexcept;
    std::uint8_t sitePreference(std::uint32_t site) const noexcept;

    // Fills a Candidate (index left 0: the caller sets Candidate::index to the service's position in the
    // hostname). Reports older than maxAgeMs (nowMs - reportTime > maxAgeMs) read as NaN, never as 0
    // (doc/design.md "Stale metrics"); maxAgeMs <= 0 disables ageing. Times: steady clock, ms.
    friend Candidate fillCandidate(const StateTable& table, std::uint32_t serviceSlot, std::uint32_t siteSlot,
                                   double weight, std::int64_t nowMs, std::int64_t maxAgeMs) noexcept;

  private:
    struct ServiceState {
        std::atomic<std::uint8_t> health{static_cast<std::uint8_t>(Health::Unknown)};
        std::atomic<bool> enabled{true};
        std::atomic<bool> suspect{false};
        std::atomic<double> connections{kUnknown};
        std::atomic<std::int64_t> connectionsAtMs{kNeverMs};
        std::atomic<double> l4Ms{kUnknown};
        std::atomic<double> l7Ms{kUnknown};
    };
    struct SiteState {
        std::atomic<double> cpu{kUnknown};
        std::atomic<double> sessionsUsed{kUnknown};
        std::atomic<double> sessionsMax{kUnknown};
        std::atomic<double> loadFactor{kUnknown};
        std::atomic<std::int64_t> reportAtMs{kNeverMs};
        std::atomic<std::int64_t> cpuAtMs{kNeverMs};
        std::atomic<std::int64_t> sessionsAtMs{kNeverMs};
        std::atomic<std::int64_t> loadFactorAtMs{kNeverMs};
        std::atomic<bool> enabled{true};
        std::atomic<bool> up{true};
        std::atomic<std::uint8_t> preference{128};
    };
    static_assert(std::atomic<double>::is_always_lock_free && std::atomic<std::int64_t>::is_always_lock_free,
                  "the query path must not take a hidden lock");

    StateTable() = default;
    static void copyState(const ServiceState& from, ServiceState& to) noexcept;
    static void copyState(const SiteState& from, SiteState& to) noexcept;

    std::vector<std::string> siteNames_;
    std::vector<ServiceKey> serviceKeys_;
    std::vector<std::uint32_t> serviceSite_;
    std::unordered_map<std::string, std::uint32_t> siteIndex_;
    // (site, address) -> slot: open addressing over serviceKeys_, kNoSlot where empty, a power of two of at
    // least twice the services. 8 octets a service where a map of "site\0address" strings took about 72.
    static constexpr std::uint32_t kNoSlot = ~std::uint32_t{0};
    std::vector<std::uint32_t> serviceSlots_;
    std::size_t probe(std::string_view site, std::string_view address) const noexcept;
    std::unique_ptr<ServiceState[]> services_;
    std::unique_ptr<SiteState[]> sites_;
};

Candidate fillCandidate(const StateTable& table, std::uint32_t serviceSlot, std::uint32_t siteSlot,
                        double weight, std::int64_t nowMs, std::int64_t maxAgeMs) noexcept;

}  // namespace gslb::metrics
