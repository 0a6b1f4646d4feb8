// AdminLog (contract in admin_log.hpp).
#include "server/state/admin_log.hpp"

#include <nlohmann/json.hpp>

namespace gslb::server::cluster {

nlohmann::json changeJson(const AdminKey& key, const AdminChange& c) {
    nlohmann::json j{{"site", key.site}};
    if (!key.address.empty()) j["address"] = key.address;
    j["enabled"] = c.enabled;
    j["time_ms"] = c.timeMs;
    j["origin"] = c.origin;
    j["local"] = c.local;
    return j;
}

std::optional<RemoteChange> changeFromJson(const nlohmann::json& j) {
    if (!j.is_object()) return std::nullopt;
    auto site = j.find("site"), address = j.find("address"), enabled = j.find("enabled"),
         time = j.find("time_ms"), origin = j.find("origin"), local = j.find("local");
    if (site == j.end() || !site->is_string() || site->get_ref<const std::string&>().empty())
        return std::nullopt;
    if (address != j.end() && !address->is_string()) return std::nullopt;
    if (enabled == j.end() || !enabled->is_boolean()) return std::nullopt;
    if (time == j.end() || !time->is_number()) return std::nullopt;
    if (origin == j.end() || !origin->is_string()) return std::nullopt;
    if (local != j.end() && !local->is_boolean()) return std::nullopt;
    // As a double first: a float or a huge unsigned number must not reach an int64_t conversion (UB).
    double t = time->get<double>();
    if (!(t >= 0) || t > double(kMaxTimeMs)) return std::nullopt;
    RemoteChange r;
    r.key.site = site->get<std::string>();
    if (address != j.end()) r.key.address = address->get<std::string>();
    r.change.enabled = enabled->get<bool>();
    r.change.timeMs = int64_t(t);
    r.change.origin = origin->get<std::string>();
    r.change.local = local != j.end() && local->get<bool>();
    return r;
}

const AdminChange& AdminLog::record(const AdminKey& key, bool enabled, int64_t nowMs,
                                    const std::string& origin, bool local) {
    AdminChange& c = entries_[key];
    c = AdminChange{enabled, nowMs, origin, local};
    return c;
}

const AdminChange* AdminLog::find(const AdminKey& key) const {
    auto it = entries_.find(key);
    return it == entries_.end() ? nullptr : &it->second;
}

}  // namespace gslb::server::cluster
