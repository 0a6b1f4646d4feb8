// JSON values the control API's resources share (server/control/api_status.cpp, server/control/explain.cpp).
// One definition here, not a copy in each file's anonymous namespace: the server-only build compiles a
// library's files as a few unity units (tools/build --server), where two such copies are a redefinition.
#pragma once
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "metrics/state_table.hpp"

namespace gslb::server {

/// `v`, or null when it is unknown (NaN: a metric never reported or gone stale).
inline nlohmann::json jsonNumber(double v) {
    return std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v);
}

/// A float (a figure stored in 4 octets, e.g. an agent's RTT) as the decimal it came as: the shortest decimal
/// that reads back as the same float (fmt's "{}"), not the double nearest the float — 0.005f would print as
/// 0.004999999888241291. Null when `v` is NaN.
inline nlohmann::json jsonFloat(float v) {
    if (std::isnan(v)) return nullptr;
    return std::strtod(fmt::format("{}", v).c_str(), nullptr);
}

/// Seconds from `atMs` to `nowMs` (both monotonic ms), or null when `atMs` is metrics::kNeverMs.
inline nlohmann::json jsonAge(int64_t atMs, int64_t nowMs) {
    return atMs == metrics::kNeverMs ? nlohmann::json(nullptr)
                                     : nlohmann::json(double(nowMs - atMs) / 1000.0);
}

}  // namespace gslb::server
