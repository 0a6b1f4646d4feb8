// `gslbctl status`: GET /v1/status rendered as readable tables. Every field is optional: a missing key or a
// null prints "-", so an older or newer server still renders.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace gslb::ctl {

std::string renderStatus(const nlohmann::json& status);

/// A JSON value as table text: "-" for null/missing, integers without decimals, yes/no for booleans.
std::string cell(const nlohmann::json& obj, const char* key);

}  // namespace gslb::ctl
