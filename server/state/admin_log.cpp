// AdminLog and the merge rule (contract in admin_log.hpp).
#include "server/state/admin_log.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace gslb::server::cluster {

bool orderedAfter(const AdminChange& a, const AdminChange& b) {
    if (a.timeMs != b.timeMs) return a.timeMs > b.timeMs;
    if (a.origin != b.origin) return a.origin > b.origin;  // std::string compares as octets (char_traits)
    return !a.enabled && b.enabled;
}

bool adopts(const AdminChange* mine, const AdminChange& theirs, int64_t nowMs) {
    if (theirs.local) return false;
    if (theirs.timeMs > nowMs + kMaxAheadMs) return false;
    return mine == nullptr || orderedAfter(theirs, *mine);
}

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

std::string parseAdminChanges(std::string_view body, std::vector<RemoteChange>& out) {
    auto j = nlohmann::json::parse(body, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return "bad JSON: not an object";
    auto changes = j.find("changes");
    if (changes == j.end() || !changes->is_array()) return "bad JSON: no changes array";
    for (const auto& c : *changes)
        if (auto r = changeFromJson(c)) out.push_back(std::move(*r));
    return "";
}

const AdminChange& AdminLog::record(const AdminKey& key, bool enabled, int64_t nowMs,
                                    const std::string& origin, bool local) {
    clockMs_ = std::max(nowMs, clockMs_ + 1);
    AdminChange& c = entries_[key];
    c = AdminChange{enabled, clockMs_, origin, local};
    return c;
}

void AdminLog::put(const AdminKey& key, const AdminChange& change) {
    entries_[key] = change;
    clockMs_ = std::max(clockMs_, change.timeMs);
}

const AdminChange* AdminLog::find(const AdminKey& key) const {
    auto it = entries_.find(key);
    return it == entries_.end() ? nullptr : &it->second;
}

std::vector<RemoteChange> AdminLog::merge(const std::vector<RemoteChange>& theirs, int64_t nowMs) {
    std::vector<RemoteChange> taken;
    for (const auto& r : theirs) {
        if (!adopts(find(r.key), r.change, nowMs)) continue;
        put(r.key, r.change);
        auto same =
            std::find_if(taken.begin(), taken.end(), [&](const RemoteChange& t) { return t.key == r.key; });
        if (same != taken.end())
            same->change = r.change;
        else
            taken.push_back(r);
    }
    std::sort(taken.begin(), taken.end(),
              [](const RemoteChange& a, const RemoteChange& b) { return a.key < b.key; });
    return taken;
}

}  // namespace gslb::server::cluster
