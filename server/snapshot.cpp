#include "server/snapshot.hpp"

#include <fmt/format.h>
#include <malloc.h>

#include <ctime>

#include "zones/dnssec.hpp"
#include "zones/loader.hpp"

namespace gslb::server {

std::unique_ptr<zones::Zone> loadSignedZone(const ZoneConf& zc, std::string& error) {
    zones::SourceSet set;
    if (!zones::readZoneFile(zc.file, zc.name, set, error)) return nullptr;
    std::vector<zones::DnssecKey> keys;
    if (!zones::loadKeys(zc.keyDir, zc.name, keys, error)) return nullptr;
    zones::WireName apex;
    if (!zones::textToName(zc.name, {}, apex)) {
        error = fmt::format("{}: not a domain name", zc.name);
        return nullptr;
    }
    zones::SignOptions opt;
    opt.now = int64_t(time(nullptr));
    opt.validity = zc.signatureValidity;
    return zones::compileSigned(apex, set, zc.file, std::move(keys), opt, error);
}

std::shared_ptr<Snapshot> buildSnapshot(const std::string& path, const Snapshot* previous,
                                        std::string& error) {
    auto s = std::make_shared<Snapshot>();
    if (!loadConfig(path, s->config, error)) return nullptr;
    for (const auto& zc : s->config.zones) {
        std::unique_ptr<zones::Zone> z;
        if (zc.dnssec) {
            z = loadSignedZone(zc, error);
            if (z) {
                int64_t at = z->signer()->refreshAt();
                if (!s->resignAt || at < s->resignAt) s->resignAt = at;
            }
        } else {
            z = zones::loadZone(zc.file, zc.name, error);
        }
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
