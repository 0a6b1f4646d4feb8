#include "metrics/state_table.hpp"

#include <fmt/format.h>

#include <cmath>
#include <functional>

namespace gslb::metrics {

namespace {
constexpr auto kRelaxed = std::memory_order_relaxed;

std::uint64_t serviceHash(std::string_view site, std::string_view address) {
    const std::uint64_t h = std::hash<std::string_view>{}(site)*0x9E3779B97F4A7C15ULL;
    return (h ^ std::hash<std::string_view>{}(address)) * 0xBF58476D1CE4E5B9ULL;
}

bool fresh(std::int64_t atMs, std::int64_t nowMs, std::int64_t maxAgeMs) {
    if (atMs == kNeverMs) return false;
    return maxAgeMs <= 0 || nowMs - atMs <= maxAgeMs;
}
}  // namespace

bool StateTable::build(const std::vector<std::string>& sites, const std::vector<ServiceKey>& services,
                       std::shared_ptr<StateTable>& out, std::string& error, const StateTable* previous) {
    const auto fail = [&](std::string why) {
        error = std::move(why);
        return false;
    };
    std::shared_ptr<StateTable> t(new StateTable());
    t->siteNames_ = sites;
    t->serviceKeys_ = services;
    for (std::uint32_t i = 0; i < sites.size(); ++i)
        if (!t->siteIndex_.emplace(sites[i], i).second)
            return fail(fmt::format("duplicate site \"{}\"", sites[i]));
    for (std::uint32_t i = 0; i < services.size(); ++i) {
        const auto site = t->siteIndex_.find(services[i].site);
        if (site == t->siteIndex_.end())
            return fail(
                fmt::format("service {} is on unknown site \"{}\"", services[i].address, services[i].site));
        t->serviceSite_.push_back(site->second);
    }
    std::size_t buckets = 16;
    while (buckets < services.size() * 2) buckets *= 2;
    t->serviceSlots_.assign(buckets, kNoSlot);
    for (std::uint32_t i = 0; i < services.size(); ++i) {
        std::uint32_t& b = t->serviceSlots_[t->probe(services[i].site, services[i].address)];
        if (b != kNoSlot)
            return fail(
                fmt::format("duplicate service {} on site \"{}\"", services[i].address, services[i].site));
        b = i;
    }
    t->services_ = std::make_unique<ServiceState[]>(services.size());
    t->sites_ = std::make_unique<SiteState[]>(sites.size());
    if (previous != nullptr) {
        // Runs on the control thread, the only writer of `previous`, so these reads see its latest values.
        for (std::uint32_t i = 0; i < sites.size(); ++i)
            if (auto old = previous->findSite(sites[i])) copyState(previous->sites_[*old], t->sites_[i]);
        for (std::uint32_t i = 0; i < services.size(); ++i)
            if (auto old = previous->findService(services[i].site, services[i].address))
                copyState(previous->services_[*old], t->services_[i]);
    }
    out = std::move(t);
    return true;
}

void StateTable::copyState(const ServiceState& from, ServiceState& to) noexcept {
    to.health.store(from.health.load(kRelaxed), kRelaxed);
    to.enabled.store(from.enabled.load(kRelaxed), kRelaxed);
    to.suspect.store(from.suspect.load(kRelaxed), kRelaxed);
    to.connections.store(from.connections.load(kRelaxed), kRelaxed);
    to.connectionsAtMs.store(from.connectionsAtMs.load(kRelaxed), kRelaxed);
    to.l4Ms.store(from.l4Ms.load(kRelaxed), kRelaxed);
    to.l7Ms.store(from.l7Ms.load(kRelaxed), kRelaxed);
}

void StateTable::copyState(const SiteState& from, SiteState& to) noexcept {
    to.cpu.store(from.cpu.load(kRelaxed), kRelaxed);
    to.sessionsUsed.store(from.sessionsUsed.load(kRelaxed), kRelaxed);
    to.sessionsMax.store(from.sessionsMax.load(kRelaxed), kRelaxed);
    to.loadFactor.store(from.loadFactor.load(kRelaxed), kRelaxed);
    to.reportAtMs.store(from.reportAtMs.load(kRelaxed), kRelaxed);
    to.cpuAtMs.store(from.cpuAtMs.load(kRelaxed), kRelaxed);
    to.sessionsAtMs.store(from.sessionsAtMs.load(kRelaxed), kRelaxed);
    to.loadFactorAtMs.store(from.loadFactorAtMs.load(kRelaxed), kRelaxed);
    to.enabled.store(from.enabled.load(kRelaxed), kRelaxed);
    to.up.store(from.up.load(kRelaxed), kRelaxed);
    to.preference.store(from.preference.load(kRelaxed), kRelaxed);
}

std::optional<std::uint32_t> StateTable::findSite(std::string_view site) const {
    const auto it = siteIndex_.find(std::string(site));
    if (it == siteIndex_.end()) return std::nullopt;
    return it->second;
}

std::optional<std::uint32_t> StateTable::findService(std::string_view site, std::string_view address) const {
    if (serviceSlots_.empty()) return std::nullopt;
    const std::uint32_t slot = serviceSlots_[probe(site, address)];
    if (slot == kNoSlot) return std::nullopt;
    return slot;
}

std::size_t StateTable::probe(std::string_view site, std::string_view address) const noexcept {
    // The bucket that holds (site, address), or the empty one where it would go: linear probing, and the
    // table is at most half full, so a probe ends soon.
    const std::size_t mask = serviceSlots_.size() - 1;
    for (std::size_t b = serviceHash(site, address) & mask;; b = (b + 1) & mask) {
        const std::uint32_t slot = serviceSlots_[b];
        if (slot == kNoSlot || (serviceKeys_[slot].site == site && serviceKeys_[slot].address == address))
            return b;
    }
}

void StateTable::setHealth(std::uint32_t s, Health h) noexcept {
    services_[s].health.store(static_cast<std::uint8_t>(h), kRelaxed);
}
void StateTable::setServiceEnabled(std::uint32_t s, bool e) noexcept {
    services_[s].enabled.store(e, kRelaxed);
}
void StateTable::setSuspect(std::uint32_t s, bool suspect) noexcept {
    services_[s].suspect.store(suspect, kRelaxed);
}
void StateTable::reportConnections(std::uint32_t s, double connections, std::int64_t nowMs) noexcept {
    services_[s].connections.store(connections, kRelaxed);
    services_[s].connectionsAtMs.store(nowMs, kRelaxed);
}
void StateTable::setFlashback(std::uint32_t s, double l4Ms, double l7Ms) noexcept {
    services_[s].l4Ms.store(l4Ms, kRelaxed);
    services_[s].l7Ms.store(l7Ms, kRelaxed);
}
void StateTable::reportSite(std::uint32_t s, const SiteReport& r, std::int64_t nowMs) noexcept {
    // Only the fields the report carries: the others keep their values and their (older) time stamps.
    SiteState& site = sites_[s];
    bool any = false;
    if (!std::isnan(r.cpu)) {
        site.cpu.store(r.cpu, kRelaxed);
        site.cpuAtMs.store(nowMs, kRelaxed);
        any = true;
    }
    if (!std::isnan(r.sessionsUsed) && !std::isnan(r.sessionsMax)) {
        site.sessionsUsed.store(r.sessionsUsed, kRelaxed);
        site.sessionsMax.store(r.sessionsMax, kRelaxed);
        site.sessionsAtMs.store(nowMs, kRelaxed);
        any = true;
    }
    if (!std::isnan(r.loadFactor)) {
        site.loadFactor.store(r.loadFactor, kRelaxed);
        site.loadFactorAtMs.store(nowMs, kRelaxed);
        any = true;
    }
    if (any) site.reportAtMs.store(nowMs, kRelaxed);
}
void StateTable::setSiteEnabled(std::uint32_t s, bool e) noexcept {
    sites_[s].enabled.store(e, kRelaxed);
}
void StateTable::setSiteUp(std::uint32_t s, bool up) noexcept {
    sites_[s].up.store(up, kRelaxed);
}
void StateTable::setSitePreference(std::uint32_t s, std::uint8_t p) noexcept {
    sites_[s].preference.store(p, kRelaxed);
}

StateTable::ServiceView StateTable::serviceView(std::uint32_t s) const noexcept {
    const ServiceState& v = services_[s];
    return ServiceView{static_cast<Health>(v.health.load(kRelaxed)),
                       v.enabled.load(kRelaxed),
                       v.connections.load(kRelaxed),
                       v.connectionsAtMs.load(kRelaxed),
                       v.l4Ms.load(kRelaxed),
                       v.l7Ms.load(kRelaxed)};
}
StateTable::SiteView StateTable::siteView(std::uint32_t s) const noexcept {
    const SiteState& v = sites_[s];
    SiteView out;
    out.cpu = v.cpu.load(kRelaxed);
    out.sessionsUsed = v.sessionsUsed.load(kRelaxed);
    out.sessionsMax = v.sessionsMax.load(kRelaxed);
    out.loadFactor = v.loadFactor.load(kRelaxed);
    out.reportAtMs = v.reportAtMs.load(kRelaxed);
    out.cpuAtMs = v.cpuAtMs.load(kRelaxed);
    out.sessionsAtMs = v.sessionsAtMs.load(kRelaxed);
    out.loadFactorAtMs = v.loadFactorAtMs.load(kRelaxed);
    out.enabled = v.enabled.load(kRelaxed);
    out.up = v.up.load(kRelaxed);
    out.preference = v.preference.load(kRelaxed);
    return out;
}

Health StateTable::health(std::uint32_t s) const noexcept {
    return static_cast<Health>(services_[s].health.load(kRelaxed));
}
bool StateTable::serviceEnabled(std::uint32_t s) const noexcept {
    return services_[s].enabled.load(kRelaxed);
}
bool StateTable::siteEnabled(std::uint32_t s) const noexcept {
    return sites_[s].enabled.load(kRelaxed);
}
std::uint8_t StateTable::sitePreference(std::uint32_t s) const noexcept {
    return sites_[s].preference.load(kRelaxed);
}

Candidate fillCandidate(const StateTable& table, std::uint32_t serviceSlot, std::uint32_t siteSlot,
                        double weight, std::int64_t nowMs, std::int64_t maxAgeMs) noexcept {
    const auto& svc = table.services_[serviceSlot];
    const auto& site = table.sites_[siteSlot];
    Candidate c;
    c.health = static_cast<Health>(svc.health.load(kRelaxed));
    c.enabled = svc.enabled.load(kRelaxed);
    c.suspect = svc.suspect.load(kRelaxed);
    c.siteUp = site.up.load(kRelaxed);
    c.siteEnabled = site.enabled.load(kRelaxed);
    c.preference = site.preference.load(kRelaxed);
    c.weight = weight;
    c.l4Ms = svc.l4Ms.load(kRelaxed);
    c.l7Ms = svc.l7Ms.load(kRelaxed);
    if (fresh(svc.connectionsAtMs.load(kRelaxed), nowMs, maxAgeMs))
        c.connections = svc.connections.load(kRelaxed);
    if (fresh(site.cpuAtMs.load(kRelaxed), nowMs, maxAgeMs)) c.cpu = site.cpu.load(kRelaxed);
    if (fresh(site.sessionsAtMs.load(kRelaxed), nowMs, maxAgeMs)) {
        c.sessionsUsed = site.sessionsUsed.load(kRelaxed);
        c.sessionsMax = site.sessionsMax.load(kRelaxed);
    }
    if (fresh(site.loadFactorAtMs.load(kRelaxed), nowMs, maxAgeMs))
        c.loadFactor = site.loadFactor.load(kRelaxed);
    return c;
}

}  // namespace gslb::metrics
