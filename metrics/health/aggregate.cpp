#include "metrics/health/aggregate.hpp"

namespace gslb::metrics::health {

std::optional<Health> combineChecks(std::span<const Health> checks) {
    bool any = false;
    for (Health h : checks) {
        if (h == Health::Down) return Health::Down;
        if (h == Health::Up) any = true;
    }
    if (!any) return std::nullopt;
    return Health::Up;
}

bool siteDown(std::span<const SiteService> services) {
    if (services.empty()) return false;
    for (const auto& s : services)
        if (!s.checked || s.health != Health::Down) return false;
    return true;
}

}  // namespace gslb::metrics::health
