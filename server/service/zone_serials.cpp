#include "server/service/zone_serials.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "server/service/admin_state.hpp"

namespace gslb::server::service {

bool loadZoneSerials(const std::string& dir, ZoneSerials& out, std::string& error) {
    out.clear();
    if (dir.empty()) return true;
    std::string file = dir + "/" + kZoneSerialsFile;
    std::ifstream in(file);
    if (!in) {
        if (errno == ENOENT) return true;
        error = fmt::format("{}: {}", file, strerror(errno));
        return false;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    try {
        nlohmann::json j = nlohmann::json::parse(ss.str());
        if (!j.is_object() || j.value("version", 0) != 1)
            throw std::runtime_error("not a version 1 zone serial file");
        for (const auto& [name, v] : j.at("zones").items()) {
            if (!v.is_number_unsigned() || v.get<uint64_t>() > UINT32_MAX)
                throw std::runtime_error(
                    fmt::format("zone {}: the serial is not a number 0..4294967295", name));
            out[name] = v.get<uint32_t>();
        }
    } catch (const std::exception& e) {
        error = fmt::format("{}: {} (fix or delete it)", file, e.what());
        return false;
    }
    return true;
}

bool saveZoneSerials(const std::string& dir, const ZoneSerials& serials, std::string& error) {
    nlohmann::json zones = nlohmann::json::object();
    for (const auto& [name, s] : serials) zones[name] = s;
    return writeStateFile(dir, kZoneSerialsFile,
                          nlohmann::json{{"version", 1}, {"zones", zones}}.dump(1) + "\n", error);
}

}  // namespace gslb::server::service
