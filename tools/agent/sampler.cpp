#include "tools/agent/sampler.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>

namespace gslb::agent {

bool Prefix::operator==(const Prefix& o) const {
    return family == o.family && bits == o.bits && std::memcmp(addr, o.addr, 16) == 0;
}

std::string prefixText(const Prefix& p) {
    char buf[INET6_ADDRSTRLEN];
    inet_ntop(p.family == 4 ? AF_INET : AF_INET6, p.addr, buf, sizeof buf);
    return fmt::format("{}/{}", buf, p.bits);
}

bool Sampler::Key::operator==(const Key& o) const {
    return family == o.family && remotePort == o.remotePort && localPort == o.localPort &&
           std::memcmp(remote, o.remote, 16) == 0 && std::memcmp(local, o.local, 16) == 0;
}

size_t Sampler::KeyHash::operator()(const Key& k) const noexcept {
    // FNV-1a over the tuple: the agent's own table, keyed by what the kernel reported.
    uint64_t h = 1469598103934665603ULL;
    auto mix = [&](const uint8_t* p, size_t n) {
        for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ULL;
    };
    mix(&k.family, 1);
    mix(k.remote, 16);
    mix(k.local, 16);
    mix(reinterpret_cast<const uint8_t*>(&k.remotePort), 2);
    mix(reinterpret_cast<const uint8_t*>(&k.localPort), 2);
    return size_t(h);
}

Prefix Sampler::prefixOf(const TcpConn& c) const {
    Prefix p;
    p.family = c.family;
    p.bits = uint8_t(c.family == 4 ? v4Bits_ : v6Bits_);
    const size_t octets = c.family == 4 ? 4 : 16;
    std::memcpy(p.addr, c.remote, octets);
    for (size_t i = 0; i < octets; ++i) {
        const int keep = std::clamp(int(p.bits) - int(i) * 8, 0, 8);
        p.addr[i] &= uint8_t(0xff00 >> keep);
    }
    return p;
}

void Sampler::observe(const std::vector<TcpConn>& conns) {
    for (const auto& c : conns) {
        Key k{};
        k.family = c.family;
        std::memcpy(k.remote, c.remote, 16);
        std::memcpy(k.local, c.local, 16);
        k.remotePort = c.remotePort;
        k.localPort = c.localPort;
        auto [it, fresh] = conns_.try_emplace(k, c.sampleUs());
        if (!fresh) it->second = std::min(it->second, c.sampleUs());
    }
}

double median(std::vector<uint32_t>& v) {
    if (v.empty()) return 0;
    const size_t mid = v.size() / 2;
    std::nth_element(v.begin(), v.begin() + long(mid), v.end());
    double hi = v[mid];
    if (v.size() % 2) return hi;
    double lo = *std::max_element(v.begin(), v.begin() + long(mid));
    return (lo + hi) / 2;
}

std::vector<Figure> Sampler::take(size_t maxPrefixes) {
    // Ordered by prefix so that ties in activity are broken the same way every time.
    struct ByPrefix {
        bool operator()(const Prefix& a, const Prefix& b) const {
            if (a.family != b.family) return a.family < b.family;
            return std::memcmp(a.addr, b.addr, 16) < 0;
        }
    };
    std::map<Prefix, std::vector<uint32_t>, ByPrefix> groups;
    for (const auto& [k, us] : conns_) {
        TcpConn c;
        c.family = k.family;
        std::memcpy(c.remote, k.remote, 16);
        groups[prefixOf(c)].push_back(us);
    }
    conns_.clear();
    std::vector<Figure> out;
    out.reserve(groups.size());
    for (auto& [p, v] : groups) out.push_back({p, std::round(median(v)) / 1000.0, uint32_t(v.size())});
    std::stable_sort(out.begin(), out.end(),
                     [](const Figure& a, const Figure& b) { return a.samples > b.samples; });
    if (out.size() > maxPrefixes) out.resize(maxPrefixes);
    return out;
}

std::string rttReportJson(const std::vector<Figure>& figures) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& f : figures)
        list.push_back({{"prefix", prefixText(f.prefix)}, {"rtt_ms", f.rttMs}, {"samples", f.samples}});
    return nlohmann::json{{"prefixes", std::move(list)}}.dump();
}

}  // namespace gslb::agent
