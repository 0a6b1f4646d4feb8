// POST /v1/sites/{site}/drain|enable and /v1/sites/{site}/services/{address}/drain|enable: the admin state,
// which overrides health (a drained service is never chosen) and survives reloads (StateTable carries it).
#include <nlohmann/json.hpp>

#include "server/api.hpp"
#include "server/events.hpp"
#include "server/log.hpp"

namespace gslb::server {

ApiResponse ControlApi::admin(const Snapshot& s, const std::string& site, const std::string& address,
                              bool enable) {
    metrics::StateTable& t = *s.gslb.table;
    auto siteSlot = t.findSite(site);
    if (!siteSlot) return apiError(404, fmt::format("unknown site \"{}\"", site));
    const char* verb = enable ? "enabled" : "drained";
    if (address.empty()) {
        bool was = t.siteEnabled(*siteSlot);
        t.setSiteEnabled(*siteSlot, enable);
        if (was != enable) {
            log::info("site {} {} by the control API", site, verb);
            recordEvent(log::Level::Info, "admin", "site " + site,
                        fmt::format("{} by the control API", verb));
            if (adminChanged_) adminChanged_();
        }
        // Services drained one by one keep their own drain when the site is enabled: say which, so that
        // "enable SITE" does not read as "everything of SITE answers again".
        nlohmann::json still = nlohmann::json::array();
        for (uint32_t i = 0; i < t.serviceCount(); ++i)
            if (t.serviceKey(i).site == site && !t.serviceEnabled(i))
                still.push_back(t.serviceKey(i).address);
        return ApiResponse{
            200, jsonText(nlohmann::json{
                     {"ok", true}, {"site", site}, {"enabled", enable}, {"services_drained", still}}) +
                     "\n"};
    }
    auto slot = t.findService(site, address);
    if (!slot) return apiError(404, fmt::format("site \"{}\" has no service {}", site, address));
    bool was = t.serviceEnabled(*slot);
    t.setServiceEnabled(*slot, enable);
    if (was != enable) {
        log::info("service {} ({}) {} by the control API", address, site, verb);
        recordEvent(log::Level::Info, "admin", fmt::format("{} ({})", address, site),
                    fmt::format("{} by the control API", verb));
        if (adminChanged_) adminChanged_();
    }
    return ApiResponse{200, jsonText(nlohmann::json{
                                {"ok", true}, {"site", site}, {"address", address}, {"enabled", enable}}) +
                                "\n"};
}

}  // namespace gslb::server
