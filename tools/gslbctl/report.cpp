#include "tools/gslbctl/report.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

namespace gslb::ctl {
namespace {

// An integer when the text is one (35 → 35, not 35.0), otherwise a finite double.
bool parseNumber(const std::string& text, nlohmann::ordered_json& out) {
    if (text.empty()) return false;
    errno = 0;
    char* end = nullptr;
    long long i = std::strtoll(text.c_str(), &end, 10);
    if (errno == 0 && end && *end == '\0') {
        out = int64_t(i);
        return true;
    }
    errno = 0;
    double d = std::strtod(text.c_str(), &end);
    if (errno != 0 || !end || *end != '\0' || !std::isfinite(d)) return false;
    out = d;
    return true;
}

}  // namespace

bool buildReport(const std::vector<std::string>& words, std::string& json, std::string& error) {
    using J = nlohmann::ordered_json;
    J site[3];  // cpu, sessions_used, sessions_max
    const char* siteKeys[3] = {"cpu", "sessions_used", "sessions_max"};
    J loads = J::object(), services = J::object();
    if (words.empty()) {
        error = "nothing to report: give key=value pairs (cpu=35 sessions_used=… load.NAME=… conn.ADDRESS=…)";
        return false;
    }
    for (const auto& w : words) {
        auto eq = w.find('=');
        if (eq == std::string::npos || eq == 0) {
            error = fmt::format("\"{}\" is not key=value", w);
            return false;
        }
        std::string key = w.substr(0, eq), val = w.substr(eq + 1);
        J num;
        if (!parseNumber(val, num)) {
            error = fmt::format("{}: \"{}\" is not a number", key, val);
            return false;
        }
        bool done = false;
        for (int i = 0; i < 3 && !done; ++i)
            if (key == siteKeys[i]) {
                if (!site[i].is_null()) {
                    error = fmt::format("{} is given twice", key);
                    return false;
                }
                site[i] = num;
                done = true;
            }
        if (done) continue;
        auto sub = [&](const char* prefix, std::string& rest) {
            size_t n = std::char_traits<char>::length(prefix);
            if (key.size() > n && key.compare(0, n, prefix) == 0) {
                rest = key.substr(n);
                return true;
            }
            return false;
        };
        std::string rest;
        if (sub("load.", rest) || sub("loads.", rest)) {
            if (loads.contains(rest)) {
                error = fmt::format("{} is given twice", key);
                return false;
            }
            loads[rest] = num;
        } else if (sub("conn.", rest) || sub("connections.", rest)) {
            if (services.contains(rest)) {
                error = fmt::format("{} is given twice", key);
                return false;
            }
            services[rest] = J{{"connections", num}};
        } else {
            error = fmt::format(
                "unknown key \"{}\" (cpu, sessions_used, sessions_max, load.NAME, conn.ADDRESS)", key);
            return false;
        }
    }
    J out = J::object();
    for (int i = 0; i < 3; ++i)
        if (!site[i].is_null()) out[siteKeys[i]] = site[i];
    if (!loads.empty()) out["loads"] = loads;
    if (!services.empty()) out["services"] = services;
    json = out.dump();
    return true;
}

}  // namespace gslb::ctl
