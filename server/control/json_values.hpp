// JSON values the control API's resources share (server/control/api_status.cpp, server/control/explain.cpp).
// One definition here, not a copy in each file's anonymous namespace: the server-only build compiles a
// library's files as a few unity units (tools/build --server), where two such copies are a redefinition.
#pragma once
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>

#include "metrics/state_table.hpp"

namespace gslb::server {

/// `v`, or null when it is unknown (NaN: a metric never reported or gone stale).
inline nlohmann::json jsonNumber(double v) {
    return std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v);
}

/// Seconds from `atMs` to `nowMs` (both monotonic ms), or null when `atMs` is metrics::kNeverMs.
inline nlohmann::json jsonAge(int64_t atMs, int64_t nowMs) {
    return atMs == metrics::kNeverMs ? nlohmann::json(nullptr)
                                     : nlohmann::json(double(nowMs - atMs) / 1000.0);
}

}  // namespace gslb::server
