// POST /v1/sites/{site}/drain|enable and /v1/sites/{site}/services/{address}/drain|enable: the admin state,
// which overrides health (a drained service is never chosen) and survives reloads (StateTable carries it).
// Each change is recorded with who took it (server/state/admin_log.hpp, mirrored in state_dir); with
// [cluster] etcd it is written there and every member applies it from etcd's watch (applySharedAdmin), in
// etcd's revision order.
#include <nlohmann/json.hpp>

#include <chrono>

#include "server/control/api.hpp"
#include "server/base/events.hpp"
#include "server/base/log.hpp"

namespace gslb::server {

namespace {

int64_t unixMs() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

std::string selfUrl(const Snapshot& s) {
    const ClusterConf& c = s.config.cluster;
    return c.enabled && c.selfIndex >= 0 ? c.members[size_t(c.selfIndex)].url : "";
}

// The slot of a site (address empty) or a service, if the table has it.
std::optional<uint32_t> slotOf(const metrics::StateTable& t, const cluster::AdminKey& k) {
    return k.address.empty() ? t.findSite(k.site) : t.findService(k.site, k.address);
}

std::string subjectOf(const cluster::AdminKey& k) {
    return k.address.empty() ? "site " + k.site : fmt::format("{} ({})", k.address, k.site);
}

// The hostnames and families that a drain of `site` (or of one of its services, `serviceSlot`) leaves with
// no candidate that is not drained: a drain holds through the fallback, so they answer NODATA (or the fixed
// address). Said in the response, logged and recorded as a warning event (the status page's warnings), so an
// operator sees at once that the drain emptied a name rather than moved its traffic. Up to 100 named.
nlohmann::json drainWarnings(const Snapshot& s, uint32_t site, std::optional<uint32_t> serviceSlot,
                             const std::string& subject) {
    nlohmann::json out = nlohmann::json::array();
    size_t total = 0;
    std::string first;
    for (const auto& h : s.gslb.hosts)
        for (int f = 0; f < 2; ++f) {
            bool touched = false;
            for (const auto& sv : h.family[f])
                touched |= serviceSlot ? sv.slot == *serviceSlot : sv.site == site;
            if (!touched || !nothingUndrained(*s.gslb.table, h.family[f])) continue;
            std::string answer = drainedOutAnswer(h, f);
            const char* type = f == 0 ? "A" : "AAAA";
            if (first.empty()) first = fmt::format("{} {} ({})", h.name, type, answer);
            if (++total <= 100) out.push_back({{"hostname", h.name}, {"type", type}, {"answer", answer}});
        }
    if (total) {
        std::string msg =
            fmt::format("the drain of {} leaves {} with no candidate that is not drained{}", subject, first,
                        total > 1 ? fmt::format(" (and {} more hostname/type)", total - 1) : "");
        log::warn("{}", msg);
        recordEvent(log::Level::Warn, "admin", subject, msg);
    }
    return out;
}

}  // namespace

ApiResponse ControlApi::admin(const Snapshot& s, const std::string& site, const std::string& address,
                              bool enable, bool local) {
    metrics::StateTable& t = *s.gslb.table;
    auto siteSlot = t.findSite(site);
    if (!siteSlot) return apiError(404, fmt::format("unknown site \"{}\"", site));
    std::optional<uint32_t> slot;
    if (!address.empty()) {
        slot = t.findService(site, address);
        if (!slot) return apiError(404, fmt::format("site \"{}\" has no service {}", site, address));
    }
    const cluster::AdminKey key{site, address};
    adminLog_->record(key, enable, unixMs(), selfUrl(s), local);
    if (etcdOn() && !local) etcd_->publish(cluster::SharedAdmin{site, address, enable, selfUrl(s)});
    const char* verb = enable ? "enabled" : "drained";
    const char* by = local ? "by the control API, on this member only" : "by the control API";
    bool was = slot ? t.serviceEnabled(*slot) : t.siteEnabled(*siteSlot);
    if (slot)
        t.setServiceEnabled(*slot, enable);
    else
        t.setSiteEnabled(*siteSlot, enable);
    if (was != enable) {
        log::info("{} {} {}", slot ? "service " + subjectOf(key) : subjectOf(key), verb, by);
        recordEvent(log::Level::Info, "admin", subjectOf(key), fmt::format("{} {}", verb, by));
    }
    if (adminChanged_) adminChanged_();
    nlohmann::json emptied = nlohmann::json::array();
    if (!enable) emptied = drainWarnings(s, *siteSlot, slot, subjectOf(key));
    if (slot)
        return ApiResponse{200, jsonText(nlohmann::json{{"ok", true},
                                                        {"site", site},
                                                        {"address", address},
                                                        {"enabled", enable},
                                                        {"nothing_undrained", emptied}}) +
                                    "\n"};
    // Services drained one by one keep their own drain when the site is enabled: say which, so that
    // "enable SITE" does not read as "everything of SITE answers again".
    nlohmann::json still = nlohmann::json::array();
    for (uint32_t i = 0; i < t.serviceCount(); ++i)
        if (t.serviceKey(i).site == site && !t.serviceEnabled(i)) still.push_back(t.serviceKey(i).address);
    return ApiResponse{200, jsonText(nlohmann::json{{"ok", true},
                                                    {"site", site},
                                                    {"enabled", enable},
                                                    {"services_drained", still},
                                                    {"nothing_undrained", emptied}}) +
                                "\n"};
}

bool ControlApi::applySharedAdmin(const Snapshot& s, const cluster::SharedAdmin& a) {
    metrics::StateTable& t = *s.gslb.table;
    const cluster::AdminKey key{a.site, a.address};
    auto slot = slotOf(t, key);
    if (!slot) return false;  // another config's site or service: nothing here to drain
    bool was = a.address.empty() ? t.siteEnabled(*slot) : t.serviceEnabled(*slot);
    const cluster::AdminChange* mine = adminLog_->find(key);
    // The admin log mirrors the shared state into state_dir (a restart while etcd is away keeps it).
    const bool logChanged = !mine || mine->enabled != a.enabled || mine->local;
    if (logChanged) adminLog_->record(key, a.enabled, unixMs(), a.origin, false);
    if (was == a.enabled) {
        if (logChanged && adminChanged_) adminChanged_();
        return false;
    }
    if (a.address.empty())
        t.setSiteEnabled(*slot, a.enabled);
    else
        t.setServiceEnabled(*slot, a.enabled);
    std::string why =
        fmt::format("{} through etcd (taken by {})", a.enabled ? "enabled" : "drained", a.origin);
    log::info("{} {}", a.address.empty() ? "site " + a.site : "service " + subjectOf(key), why);
    recordEvent(log::Level::Info, "admin", subjectOf(key), why);
    if (adminChanged_) adminChanged_();
    return true;
}

void ControlApi::applySharedReport(const Snapshot& s, const cluster::SharedReport& r) {
    ApiResponse res = report(s, r.site, r.body);
    if (res.status != 200)
        log::warn("etcd: the report of site {} taken by {} is refused here: {}", r.site, r.origin, res.body);
}

}  // namespace gslb::server
