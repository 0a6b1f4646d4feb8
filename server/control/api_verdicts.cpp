// GET /v1/verdicts (doc/ns-set.md): this member's own health verdicts, what its [cluster] peers combine under
// health_quorum (server/probes/peers.hpp reads this). Ages, not only times, so that the peers need no
// synchronised clock:
//   {"services": [{"site": "east", "address": "192.0.2.10", "health": "down", "age_ms": 130,
//                  "observed": "2026-12-01T15:30:00.123Z"}, …]}
// age_ms is null (and observed absent) while the service's first check has not finished. A read endpoint:
// no token, as /v1/status.
#include <nlohmann/json.hpp>

#include "server/control/api.hpp"

namespace gslb::server {

ApiResponse ControlApi::verdicts() {
    nlohmann::json services = nlohmann::json::array();
    if (verdicts_)
        for (const auto& v : verdicts_()) {
            nlohmann::json o{{"site", v.site},
                             {"address", v.address},
                             {"health", v.health == metrics::Health::Up     ? "up"
                                        : v.health == metrics::Health::Down ? "down"
                                                                            : "unknown"},
                             {"age_ms", v.ageMs < 0 ? nlohmann::json(nullptr) : nlohmann::json(v.ageMs)}};
            if (v.observedUnixMs) o["observed"] = isoTime(v.observedUnixMs);
            services.push_back(std::move(o));
        }
    return ApiResponse{200, jsonText(nlohmann::json{{"services", services}}) + "\n"};
}

}  // namespace gslb::server
