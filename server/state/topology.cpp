#include "server/state/topology.hpp"

#include <fmt/format.h>
#include <strings.h>

#include <cctype>
#include <fstream>
#include <map>
#include <sstream>

#include "server/conf/config.hpp"

namespace gslb::server {

uint64_t packCode(const char* s, size_t n) noexcept {
    if (n == 0 || n > 8) return 0;
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v = (v << 8) | uint8_t(std::toupper(uint8_t(s[i])));
    return v;
}

double greatCircleKm(double lat1, double lon1, double lat2, double lon2) noexcept {
    constexpr double kRad = M_PI / 180.0;
    double dlat = (lat2 - lat1) * kRad, dlon = (lon2 - lon1) * kRad;
    double a = std::sin(dlat / 2) * std::sin(dlat / 2) +
               std::cos(lat1 * kRad) * std::cos(lat2 * kRad) * std::sin(dlon / 2) * std::sin(dlon / 2);
    return 2 * 6371.0 * std::asin(std::min(1.0, std::sqrt(a)));
}

namespace {

bool parseNet(const std::string& text, NetTable::Entry& e) {
    std::string addr = text;
    int bits = -1;
    auto slash = text.find('/');
    if (slash != std::string::npos) {
        addr = text.substr(0, slash);
        std::string b = text.substr(slash + 1);
        if (b.empty() || b.size() > 3 || b.find_first_not_of("0123456789") != std::string::npos) return false;
        bits = std::stoi(b);
    }
    uint8_t len = 0;
    if (!parseAddress(addr, e.addr, len)) return false;
    e.family = len == 4 ? zones::kFamilyIPv4 : zones::kFamilyIPv6;
    if (bits < 0) bits = len * 8;
    if (bits > len * 8) return false;
    e.bits = uint8_t(bits);
    e.text = text;
    return true;
}

}  // namespace

bool Topology::build(const TopologyConf& conf, const std::string& configPath, std::string& error) {
    std::map<std::string, uint32_t> ids;
    std::vector<NetTable::Entry> entries;
    auto regionId = [&](const std::string& name) {
        std::string k = name;
        for (auto& ch : k) ch = char(std::tolower(uint8_t(ch)));
        auto [it, fresh] = ids.emplace(k, uint32_t(regions_.size()));
        if (fresh) regions_.push_back(name);
        return it->second;
    };
    for (const auto& [net, region] : conf.nets) {
        NetTable::Entry e;
        if (!parseNet(net, e)) {
            error = fmt::format("{}:{}: [topology] nets: \"{}\" is not an address prefix", configPath,
                                conf.line, net);
            return false;
        }
        e.value = regionId(region);
        entries.push_back(std::move(e));
    }
    if (!conf.netsFile.empty()) {
        std::ifstream in(conf.netsFile);
        if (!in) {
            error = fmt::format("{}: cannot read (the [topology] nets_file)", conf.netsFile);
            return false;
        }
        std::string line;
        int n = 0;
        while (std::getline(in, line)) {
            ++n;
            auto hash = line.find('#');
            if (hash != std::string::npos) line.resize(hash);
            std::istringstream ss(line);
            std::string net, region, extra;
            if (!(ss >> net)) continue;
            NetTable::Entry e;
            if (!(ss >> region) || (ss >> extra) || !parseNet(net, e)) {
                error = fmt::format("{}:{}: expected \"PREFIX REGION\"", conf.netsFile, n);
                return false;
            }
            e.value = regionId(region);
            entries.push_back(std::move(e));
        }
    }
    std::string why;
    if (!nets_.build(std::move(entries), why)) {
        error = fmt::format("{}:{}: [topology] nets: {}", configPath, conf.line, why);
        return false;
    }
    if (!conf.geoip.empty()) {
        geoip_ = std::make_unique<GeoIp>();
        if (!geoip_->open(conf.geoip, why)) {
            error = fmt::format("{}:{}: [topology] geoip: {}", configPath, conf.line, why);
            return false;
        }
    }
    return true;
}

void Topology::locate(const zones::ClientSubnet& c, Location& out) const noexcept {
    out = Location{};
    if (c.family == 0 || c.bits == 0) return;  // RFC 7871 §7.1.2: a /0 asks for an answer for everyone
    if (!nets_.empty()) {
        NetTable::Match m = nets_.lookup(c);
        out.scope = m.scope;
        out.netEntry = m.entry;
        if (m.entry >= 0)
            out.labels[out.count++] = {RegionLabel::Net, nets_.entries()[size_t(m.entry)].value};
    }
    if (geoip_) {
        out.geo = geoip_->lookup(c);
        if (out.geo.scope > out.scope) out.scope = out.geo.scope;
        const GeoResult& g = out.geo;
        if (g.found) {
            if (g.asn) out.labels[out.count++] = {RegionLabel::Asn, g.asn};
            if (g.subdivision[0] && g.country[0]) {
                char sub[16];
                int n = snprintf(sub, sizeof sub, "%s-%s", g.country, g.subdivision);
                if (uint64_t v = packCode(sub, size_t(n)))
                    out.labels[out.count++] = {RegionLabel::Subdivision, v};
            }
            if (uint64_t v = packCode(g.country, strlen(g.country)))
                out.labels[out.count++] = {RegionLabel::Country, v};
            if (uint64_t v = packCode(g.continent, strlen(g.continent)))
                out.labels[out.count++] = {RegionLabel::Continent, v};
            if (g.hasLocation) {
                out.latitude = g.latitude;
                out.longitude = g.longitude;
            }
        }
    }
    // The scope never claims more than the client sent when nothing finer decided; a longer one (a nets
    // boundary inside the client's prefix) is kept: it tells the resolver its prefix was too short (§7.2.1).
}

bool Topology::parseKey(const std::string& text, std::vector<RegionLabel>& out, std::string& error) const {
    auto colon = text.find(':');
    std::string kind = colon == std::string::npos ? "" : text.substr(0, colon);
    std::string v = colon == std::string::npos ? text : text.substr(colon + 1);
    for (auto& ch : kind) ch = char(std::tolower(uint8_t(ch)));
    auto code = [&](RegionLabel::Kind k) {
        uint64_t p = packCode(v.data(), v.size());
        if (!p) {
            error = fmt::format("\"{}\": a code of 1 to 8 characters", text);
            return false;
        }
        out.push_back({k, p});
        return true;
    };
    auto asn = [&](const std::string& digits) {
        if (digits.empty() || digits.size() > 10 ||
            digits.find_first_not_of("0123456789") != std::string::npos) {
            error = fmt::format("\"{}\": an AS number", text);
            return false;
        }
        out.push_back({RegionLabel::Asn, std::stoull(digits)});
        return true;
    };
    if (kind == "continent") return code(RegionLabel::Continent);
    if (kind == "country") return code(RegionLabel::Country);
    if (kind == "subdivision") return code(RegionLabel::Subdivision);
    if (kind == "asn") return asn(v);
    if (kind == "net" || kind == "nets") {
        for (size_t i = 0; i < regions_.size(); ++i)
            if (strcasecmp(regions_[i].c_str(), v.c_str()) == 0) {
                out.push_back({RegionLabel::Net, i});
                return true;
            }
        error = fmt::format("\"{}\": no [topology] nets prefix maps to region \"{}\"", text, v);
        return false;
    }
    if (!kind.empty()) {
        error = fmt::format("\"{}\": unknown kind \"{}\" (continent, country, subdivision, asn, net)", text,
                            kind);
        return false;
    }
    // A plain name: everything it can be.
    size_t before = out.size();
    for (size_t i = 0; i < regions_.size(); ++i)
        if (strcasecmp(regions_[i].c_str(), v.c_str()) == 0) out.push_back({RegionLabel::Net, i});
    if ((v.size() > 2 && (v[0] == 'A' || v[0] == 'a') && (v[1] == 'S' || v[1] == 's')) &&
        v.find_first_not_of("0123456789", 2) == std::string::npos)
        out.push_back({RegionLabel::Asn, std::stoull(v.substr(2))});
    if (uint64_t p = packCode(v.data(), v.size())) {
        if (v.find('-') != std::string::npos) out.push_back({RegionLabel::Subdivision, p});
        if (v.size() == 2) {
            out.push_back({RegionLabel::Country, p});
            out.push_back({RegionLabel::Continent, p});
        }
    }
    if (out.size() == before) {
        error = fmt::format(
            "\"{}\" matches nothing: not a [topology] nets region, and not a country, continent, subdivision "
            "(\"US-NY\") or AS (\"AS64500\") code",
            text);
        return false;
    }
    return true;
}

std::string Topology::labelText(const RegionLabel& l) const {
    auto unpack = [](uint64_t v) {
        std::string s;
        for (int i = 7; i >= 0; --i)
            if (char ch = char((v >> (i * 8)) & 0xFF)) s += ch;
        return s;
    };
    switch (l.kind) {
        case RegionLabel::Net:
            return "nets " + (l.value < regions_.size() ? regions_[l.value] : "?");
        case RegionLabel::Asn:
            return fmt::format("asn {}", l.value);
        case RegionLabel::Subdivision:
            return "subdivision " + unpack(l.value);
        case RegionLabel::Country:
            return "country " + unpack(l.value);
        case RegionLabel::Continent:
            return "continent " + unpack(l.value);
        default:
            return "?";
    }
}

}  // namespace gslb::server
