// POST /v1/sites/{site}/report: a site agent's metrics (doc/design.md "Metric sources"). The whole body is
// checked before anything is written, so a refused report changes nothing.
#include <nlohmann/json.hpp>

#include <cmath>
#include <vector>

#include "server/base/clock.hpp"
#include "server/control/api.hpp"
#include "server/state/gslb.hpp"
#include "server/base/log.hpp"
#include "server/conf/unread_settings.hpp"

namespace gslb::server {

namespace {

// A JSON number in [lo, hi], or an error message naming the key.
bool number(const nlohmann::json& v, const std::string& key, double lo, double hi, double& out,
            std::string& err) {
    if (!v.is_number()) {
        err = fmt::format("\"{}\" must be a number", key);
        return false;
    }
    out = v.get<double>();
    if (!std::isfinite(out) || out < lo || out > hi) {
        err = fmt::format("\"{}\" = {} is out of range [{}, {}]", key, jsonText(v), lo, hi);
        return false;
    }
    return true;
}

}  // namespace

ApiResponse ControlApi::report(const Snapshot& s, const std::string& site, const std::string& body) {
    const metrics::StateTable& table = *s.gslb.table;
    auto siteSlot = table.findSite(site);
    if (!siteSlot) return apiError(404, fmt::format("unknown site \"{}\"", site));
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(body);
    } catch (const std::exception& e) {
        return apiError(400, fmt::format("the body is not JSON: {}", e.what()));
    }
    if (!j.is_object()) return apiError(400, "the body must be a JSON object");

    metrics::SiteReport rep;
    std::vector<metrics::LoadMetric> loads;
    std::vector<std::pair<uint32_t, double>> conns;
    std::string err;
    constexpr double kMaxCount = 1e15;
    for (const auto& [key, v] : j.items()) {
        if (key == "cpu") {
            if (!number(v, key, 0, 100, rep.cpu, err)) return apiError(400, err);
        } else if (key == "sessions_used") {
            if (!number(v, key, 0, kMaxCount, rep.sessionsUsed, err)) return apiError(400, err);
        } else if (key == "sessions_max") {
            if (!number(v, key, 1, kMaxCount, rep.sessionsMax, err)) return apiError(400, err);
        } else if (key == "loads") {
            if (!v.is_object()) return apiError(400, "\"loads\" must be an object of name: load");
            for (const auto& [name, lv] : v.items()) {
                const LoadMetricConf* mc = nullptr;
                for (const auto& m : s.config.load.metrics)
                    if (m.name == name) mc = &m;
                if (!mc)
                    return apiError(
                        400,
                        fmt::format("unknown load metric \"{}\" (configure [load.metric.{}])", name, name));
                double load;
                if (!number(lv, "loads." + name, 0, kMaxCount, load, err)) return apiError(400, err);
                loads.push_back(metrics::LoadMetric{load, mc->capacity, mc->weight});
            }
        } else if (key == "services") {
            if (!v.is_object())
                return apiError(400, "\"services\" must be an object of address: {connections}");
            for (const auto& [addr, sv] : v.items()) {
                auto slot = table.findService(site, addr);
                if (!slot) return apiError(404, fmt::format("site \"{}\" has no service {}", site, addr));
                if (!sv.is_object()) return apiError(400, fmt::format("services.{} must be an object", addr));
                for (const auto& [k2, cv] : sv.items()) {
                    if (k2 != "connections")
                        return apiError(400, fmt::format("services.{}: unknown key \"{}\"", addr, k2));
                    double c;
                    if (!number(cv, "services." + addr + ".connections", 0, kMaxCount, c, err))
                        return apiError(400, err);
                    conns.emplace_back(*slot, c);
                }
            }
        } else {
            return apiError(
                400,
                fmt::format("unknown key \"{}\" (cpu, sessions_used, sessions_max, loads, services)", key));
        }
    }
    if (!std::isnan(rep.sessionsUsed) && !std::isnan(rep.sessionsMax) && rep.sessionsUsed > rep.sessionsMax)
        return apiError(400, "sessions_used is larger than sessions_max");
    if (!std::isnan(rep.sessionsUsed) != !std::isnan(rep.sessionsMax))
        return apiError(400, "sessions_used and sessions_max come together");

    // Valid: write. The load factor is mod_cluster's time-decayed aggregate (metrics/load_factor.hpp).
    int64_t now = monotonicMs();
    if (!loads.empty()) {
        auto it = loadHistory_.find(site);
        if (it == loadHistory_.end())
            it = loadHistory_
                     .emplace(site, metrics::LoadHistory(s.config.load.decay, size_t(s.config.load.history)))
                     .first;
        rep.loadFactor = it->second.push(metrics::aggregateLoad(loads));
    }
    metrics::StateTable& w = *s.gslb.table;
    w.reportSite(*siteSlot, rep, now);
    for (const auto& [slot, c] : conns) w.reportConnections(slot, c, now);
    ++reports_;

    // Stored either way (a reload may add the stage), but a key no policy at this site reads is said to be
    // ignored: in the answer, and once in the log (doc/design.md "Metric sources").
    const unsigned reads = metricsReadAtSite(s.config, site);
    nlohmann::json ignored = nlohmann::json::array();
    const std::pair<bool, std::pair<const char*, unsigned>> keys[] = {
        {!std::isnan(rep.cpu), {"cpu", kReadsCpu}},
        {!std::isnan(rep.sessionsUsed), {"sessions", kReadsSessions}},
        {!loads.empty(), {"loads", kReadsLoads}},
        {!conns.empty(), {"connections", kReadsConnections}}};
    for (const auto& [present, kb] : keys) {
        if (!present || (reads & kb.second)) continue;
        ignored.push_back(kb.first);
        if (unreadLogged_.insert(site + '\0' + kb.first).second)
            log::warn(
                "site {}: {} reported, but no hostname with a service at this site has a stage that reads "
                "it; ignored",
                site, kb.first);
    }
    nlohmann::json out{{"ok", true}};
    if (!ignored.empty()) out["ignored"] = ignored;
    return ApiResponse{200, jsonText(out) + "\n"};
}

}  // namespace gslb::server
