#include "server/config.hpp"

#include <arpa/inet.h>

#include <cstring>

#include "server/schema.hpp"

namespace gslb::server {

bool Prefix::matches(const sockaddr* sa) const {
    const uint8_t* a;
    if (sa->sa_family == AF_INET && family == AF_INET) {
        a = reinterpret_cast<const uint8_t*>(&reinterpret_cast<const sockaddr_in*>(sa)->sin_addr);
    } else if (sa->sa_family == AF_INET6) {
        const auto* a6 = &reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr;
        if (family == AF_INET6) {
            a = a6->s6_addr;
        } else if (IN6_IS_ADDR_V4MAPPED(a6)) {
            a = a6->s6_addr + 12;
        } else {
            return false;
        }
    } else {
        return false;
    }
    int full = bits / 8, rest = bits % 8;
    if (std::memcmp(a, bytes, size_t(full)) != 0) return false;
    if (rest == 0) return true;
    uint8_t mask = uint8_t(0xFF << (8 - rest));
    return (a[full] & mask) == (bytes[full] & mask);
}

namespace {

bool parsePrefix(const std::string& text, Prefix& p) {
    std::string addr = text;
    int bits = -1;
    auto slash = text.find('/');
    if (slash != std::string::npos) {
        addr = text.substr(0, slash);
        try {
            size_t used = 0;
            bits = std::stoi(text.substr(slash + 1), &used);
            if (used != text.size() - slash - 1) return false;
        } catch (...) {
            return false;
        }
    }
    if (inet_pton(AF_INET, addr.c_str(), p.bytes) == 1) {
        p.family = AF_INET;
        if (bits < 0) bits = 32;
        if (bits > 32) return false;
    } else if (inet_pton(AF_INET6, addr.c_str(), p.bytes) == 1) {
        p.family = AF_INET6;
        if (bits < 0) bits = 128;
        if (bits > 128) return false;
    } else {
        return false;
    }
    p.bits = bits;
    return true;
}

std::string dirOf(const std::string& path) {
    auto slash = path.rfind('/');
    return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

std::string resolvePath(const std::string& base, const std::string& p) {
    if (!p.empty() && p[0] == '/') return p;
    return dirOf(base) + "/" + p;
}

}  // namespace

bool parseListen(const std::string& text, ListenAddr& out) {
    std::string host, port;
    if (!text.empty() && text[0] == '[') {
        auto close = text.find(']');
        if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') return false;
        host = text.substr(1, close - 1);
        port = text.substr(close + 2);
    } else {
        auto colon = text.rfind(':');
        if (colon == std::string::npos || text.find(':') != colon) return false;
        host = text.substr(0, colon);
        port = text.substr(colon + 1);
    }
    if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos)
        return false;
    int portNum = std::stoi(port);
    if (portNum > 65535) return false;
    out = ListenAddr{};
    out.text = text;
    auto* s4 = reinterpret_cast<sockaddr_in*>(&out.addr);
    auto* s6 = reinterpret_cast<sockaddr_in6*>(&out.addr);
    if (inet_pton(AF_INET, host.c_str(), &s4->sin_addr) == 1) {
        s4->sin_family = AF_INET;
        s4->sin_port = htons(uint16_t(portNum));
        out.len = sizeof(sockaddr_in);
        out.wildcard = s4->sin_addr.s_addr == INADDR_ANY;
    } else if (inet_pton(AF_INET6, host.c_str(), &s6->sin6_addr) == 1) {
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons(uint16_t(portNum));
        out.len = sizeof(sockaddr_in6);
        out.wildcard = IN6_IS_ADDR_UNSPECIFIED(&s6->sin6_addr);
    } else {
        return false;
    }
    return true;
}

bool loadConfig(const std::string& path, Config& out, std::string& error) {
    out = Config{};
    out.path = path;
    toml::table root;
    try {
        root = toml::parse_file(path);
    } catch (const toml::parse_error& e) {
        error = fmt::format("{}:{}: {}", path, e.source().begin.line, e.description());
        return false;
    } catch (const std::exception& e) {
        error = fmt::format("{}: {}", path, e.what());
        return false;
    }
    try {
        TableReader top(root, path, "");
        // [server]
        const toml::table* st = top.getTable("server");
        toml::table empty;
        TableReader s(st ? *st : empty, path, "[server]");
        auto listen = s.getStrings("listen", {"127.0.0.1:5353"});
        if (listen.empty()) s.fail(s.raw("listen"), "listen", "needs at least one address");
        for (const auto& l : listen) {
            ListenAddr a;
            if (!parseListen(l, a))
                s.fail(s.raw("listen"), "listen",
                       fmt::format("\"{}\" is not ADDRESS:PORT or [ADDRESS]:PORT", l));
            out.server.listen.push_back(a);
        }
        out.server.workers = int(s.getInt("workers", 2, 1, 64));
        out.server.udpPayloadMax = uint16_t(s.getInt("udp_payload_max", 1232, 512, 65535));
        out.server.tcpIdleTimeout = int(s.getInt("tcp_idle_timeout", 10, 1, 3600));
        out.server.tcpMaxConnections = int(s.getInt("tcp_max_connections", 1024, 1, 1000000));
        for (const auto& a : s.getStrings("axfr_allow", {})) {
            Prefix p;
            if (!parsePrefix(a, p))
                s.fail(s.raw("axfr_allow"), "axfr_allow",
                       fmt::format("\"{}\" is not an address or prefix", a));
            out.server.axfrAllow.push_back(p);
        }
        out.server.identity = s.getString("identity", "");
        out.server.version = s.getString("version", "");
        s.finish();

        // [control]
        if (const toml::table* ct = top.getTable("control")) {
            TableReader c(*ct, path, "[control]");
            out.control.enabled = true;
            std::string l = c.getString("listen", "127.0.0.1:8053");
            if (!parseListen(l, out.control.listen))
                c.fail(c.raw("listen"), "listen", fmt::format("\"{}\" is not ADDRESS:PORT", l));
            std::string tf = c.getString("token_file", "");
            if (tf.empty()) c.fail(nullptr, "token_file", "is required: every change needs the bearer token");
            out.control.tokenFile = resolvePath(path, tf);
            c.finish();
        }

        // [[zone]]
        if (const toml::node* zn = top.raw("zone")) {
            const toml::array* za = zn->as_array();
            if (!za) top.fail(zn, "zone", "must be an array of tables ([[zone]])");
            int i = 0;
            for (const auto& e : *za) {
                ++i;
                const toml::table* zt = e.as_table();
                if (!zt) top.fail(&e, "zone", "must be an array of tables ([[zone]])");
                TableReader z(*zt, path, fmt::format("zone {}", i));
                ZoneConf zc;
                zc.name = z.getString("name", "");
                if (zc.name.empty()) z.fail(nullptr, "name", "is required");
                if (zc.name.back() != '.') zc.name += '.';
                std::string f = z.getString("file", "");
                if (f.empty()) z.fail(nullptr, "file", "is required");
                zc.file = resolvePath(path, f);
                for (const auto& other : out.zones)
                    if (strcasecmp(other.name.c_str(), zc.name.c_str()) == 0)
                        z.fail(z.raw("name"), "name", fmt::format("zone {} is configured twice", zc.name));
                z.finish();
                out.zones.push_back(zc);
            }
        }
        if (out.zones.empty()) top.fail(nullptr, "zone", "no [[zone]] configured: nothing to serve");
        top.finish();
    } catch (const ConfigError& e) {
        error = e.what();
        return false;
    }
    return true;
}

}  // namespace gslb::server
