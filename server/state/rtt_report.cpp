#include "server/state/rtt_report.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

namespace gslb::server {

bool parseClientPrefix(std::string_view text, zones::ClientSubnet& out) {
    const auto slash = text.find('/');
    if (slash == std::string_view::npos || slash == 0 || slash > INET6_ADDRSTRLEN) return false;
    const std::string_view len = text.substr(slash + 1);
    if (len.empty() || len.size() > 3 || len.find_first_not_of("0123456789") != std::string_view::npos)
        return false;
    const int bits = std::stoi(std::string(len));
    const std::string addr(text.substr(0, slash));
    zones::ClientSubnet s;
    if (inet_pton(AF_INET, addr.c_str(), s.addr) == 1) {
        if (bits > 32) return false;
        s.family = zones::kFamilyIPv4;
    } else if (inet_pton(AF_INET6, addr.c_str(), s.addr) == 1) {
        if (bits > 128) return false;
        s.family = zones::kFamilyIPv6;
    } else {
        return false;
    }
    s.bits = uint8_t(bits);
    for (size_t i = 0; i < s.octets(); ++i) {
        const int keep = std::clamp(bits - int(i) * 8, 0, 8);
        if (s.addr[i] & uint8_t(0xff >> keep)) return false;  // a host bit past the length
    }
    out = s;
    return true;
}

bool parseRttReport(std::string_view body, int v4Bits, int v6Bits, size_t maxPrefixes,
                    std::vector<RttReportEntry>& out, std::string& error) {
    out.clear();
    const auto fail = [&](std::string msg) {
        out.clear();
        error = std::move(msg);
        return false;
    };
    nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
    if (j.is_discarded()) return fail("the body is not JSON");
    if (!j.is_object()) return fail("the body must be a JSON object {\"prefixes\": [...]}");
    for (const auto& [key, v] : j.items())
        if (key != "prefixes") return fail(fmt::format("unknown key \"{}\" (only \"prefixes\")", key));
    auto it = j.find("prefixes");
    if (it == j.end() || !it->is_array()) return fail("\"prefixes\" must be an array");
    if (it->size() > maxPrefixes)
        return fail(fmt::format("{} prefixes: at most {} a report ([rtt] prefixes_max_per_report)",
                                it->size(), maxPrefixes));
    std::set<std::pair<uint8_t, std::string>> seen;
    out.reserve(it->size());
    for (size_t i = 0; i < it->size(); ++i) {
        const auto& e = (*it)[i];
        const auto where = [&](const std::string& msg) {
            return fail(fmt::format("prefixes[{}]: {}", i, msg));
        };
        if (!e.is_object()) return where("must be an object {\"prefix\", \"rtt_ms\", \"samples\"}");
        for (const auto& [key, v] : e.items())
            if (key != "prefix" && key != "rtt_ms" && key != "samples")
                return where(fmt::format("unknown key \"{}\"", key));
        auto p = e.find("prefix"), r = e.find("rtt_ms"), n = e.find("samples");
        if (p == e.end() || !p->is_string()) return where("\"prefix\" must be a string \"ADDR/LEN\"");
        RttReportEntry entry;
        const std::string text = p->get<std::string>();
        if (!parseClientPrefix(text, entry.prefix))
            return where(
                fmt::format("\"{}\" is not an address prefix with its host bits zero", text.substr(0, 64)));
        const int want = entry.prefix.family == zones::kFamilyIPv4 ? v4Bits : v6Bits;
        if (entry.prefix.bits != want)
            return where(
                fmt::format("\"{}\": this gslbd groups {} clients by /{} ([rtt] prefix_{}): run the "
                            "agent with --prefix-{} {}",
                            text, entry.prefix.family == zones::kFamilyIPv4 ? "IPv4" : "IPv6", want,
                            entry.prefix.family == zones::kFamilyIPv4 ? "v4" : "v6",
                            entry.prefix.family == zones::kFamilyIPv4 ? "v4" : "v6", want));
        if (r == e.end() || !r->is_number()) return where("\"rtt_ms\" must be a number");
        entry.rttMs = r->get<double>();
        if (!std::isfinite(entry.rttMs) || entry.rttMs <= 0 || entry.rttMs > kMaxRttMs)
            return where(fmt::format("\"rtt_ms\" = {} is out of range (0, {}]", r->dump(), kMaxRttMs));
        if (n == e.end() || !(n->is_number_unsigned() || n->is_number_integer()))
            return where("\"samples\" must be a whole number");
        if (n->is_number_integer() && n->get<int64_t>() < 1)
            return where(fmt::format("\"samples\" = {} is out of range [1, {}]", n->dump(), kMaxRttSamples));
        const uint64_t samples = n->get<uint64_t>();
        if (samples < 1 || samples > kMaxRttSamples)
            return where(fmt::format("\"samples\" = {} is out of range [1, {}]", n->dump(), kMaxRttSamples));
        entry.samples = uint32_t(samples);
        if (!seen.emplace(entry.prefix.family,
                          std::string(reinterpret_cast<const char*>(entry.prefix.addr), 16))
                 .second)
            return where(fmt::format("\"{}\" appears twice", text));
        out.push_back(entry);
    }
    return true;
}

}  // namespace gslb::server
