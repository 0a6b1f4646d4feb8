#include "server/snapshot.hpp"

#include <fmt/format.h>
#include <malloc.h>

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
    // The parsed records are gone; give their memory back to the system instead of keeping it in malloc's
    // free lists for the life of the process (a 1M-record zone leaves over 100 MB there otherwise).
    malloc_trim(0);
    s->answer.udpPayloadMax = s->config.server.udpPayloadMax;
    s->answer.identity = s->config.server.identity;
    s->answer.version = s->config.server.version;
    s->answer.minimalResponses = s->config.server.minimalResponses;
    s->answer.ecs = s->config.server.ecs;
    return s;
}

}  // namespace gslb::server
