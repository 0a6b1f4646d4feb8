#include "server/snapshot.hpp"

#include <fmt/format.h>

#include "zones/loader.hpp"

namespace gslb::server {

std::shared_ptr<Snapshot> buildSnapshot(const std::string& path, const Snapshot* previous,
                                        std::string& error) {
    auto s = std::make_shared<Snapshot>();
    if (!loadConfig(path, s->config, error)) return nullptr;
    for (const auto& zc : s->config.zones) {
        auto z = zones::loadZone(zc.file, zc.name, error);
        if (!z) return nullptr;
        if (!s->db.add(std::move(z))) {
            error = fmt::format("{}: zone {} is configured twice", path, zc.name);
            return nullptr;
        }
    }
    if (!buildGslb(s->config, s->db, previous ? &previous->gslb : nullptr, kMaxWorkers, s->gslb, error))
        return nullptr;
    s->answer.udpPayloadMax = s->config.server.udpPayloadMax;
    s->answer.identity = s->config.server.identity;
    s->answer.version = s->config.server.version;
    return s;
}

}  // namespace gslb::server
