#include "server/state/zone_serials.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "server/state/admin_state.hpp"

namespace gslb::server::service {

bool loadZoneSerials(const std::string& dir, ZoneSerials& out, std::string& error) {
    out.clear();
    if (dir.empty()) return true;
    return loadStateFile(
        dir, kZoneSerialsFile, "zone serial file", " (fix or delete it)",
        [&](const nlohmann::json& j) {
            for (const auto& [name, v] : j.at("zones").items()) {
                if (!v.is_number_unsigned() || v.get<uint64_t>() > UINT32_MAX)
                    throw std::runtime_error(
                        fmt::format("zone {}: the serial is not a number 0..4294967295", name));
                out[name] = v.get<uint32_t>();
            }
        },
        error);
}

bool saveZoneSerials(const std::string& dir, const ZoneSerials& serials, std::string& error) {
    nlohmann::json zones = nlohmann::json::object();
    for (const auto& [name, s] : serials) zones[name] = s;
    return writeStateFile(dir, kZoneSerialsFile,
                          nlohmann::json{{"version", 1}, {"zones", zones}}.dump(1) + "\n", error);
}

}  // namespace gslb::server::service
