// Helpers of the server unit tests: config and zone files in a temp dir, raw DNS queries, a small response
// decoder, and a dump of the state table to compare "before" and "after" exactly.
#pragma once
#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "metrics/state_table.hpp"
#include "server/conf/config.hpp"
#include "server/state/snapshot.hpp"
#include "tests/server/world.hpp"

namespace st {

inline std::string tempDir() {
    static std::string dir;
    if (dir.empty()) {
        char tmpl[] = "/tmp/gslbd-server-test-XXXXXX";
        char* d = mkdtemp(tmpl);
        REQUIRE(d != nullptr);
        dir = d;
    }
    return dir;
}

/// A fresh directory for one test's files.
inline std::string newDir() {
    static int n = 0;
    std::string d = tempDir() + "/" + std::to_string(++n);
    REQUIRE(mkdir(d.c_str(), 0700) == 0);
    return d;
}

inline std::string writeFile(const std::string& dir, const std::string& name, const std::string& text) {
    std::string path = dir + "/" + name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
}

/// writeFile, readable by its owner only: a control token, which gslbd refuses when others may read it.
inline std::string writeSecret(const std::string& dir, const std::string& name, const std::string& text) {
    std::string path = writeFile(dir, name, text);
    chmod(path.c_str(), 0600);
    return path;
}

/// 1-based number of the first line of `text` holding `needle` (0 when none).
inline int lineOf(const std::string& text, const std::string& needle) {
    auto pos = text.find(needle);
    if (pos == std::string::npos) return 0;
    int line = 1;
    for (size_t i = 0; i < pos; ++i) line += text[i] == '\n';
    return line;
}

// kZone, the zone every test serves, is in world.hpp (the fuzz targets share it).

/// [server], [[zone]] t.test. and three sites, then `rest`.
inline std::string baseConfig(const std::string& rest) {
    return "[server]\n"
           "listen = [\"127.0.0.1:10053\"]\n"
           "\n"
           "[[zone]]\n"
           "name = \"t.test.\"\n"
           "file = \"t.zone\"\n"
           "\n"
           "[site.east]\n"
           "[site.west]\n"
           "[site.south]\n"
           "\n" +
           rest;
}

/// The three services of `name` (www's addresses, one per site), with `extra` lines in each.
inline std::string threeServices(const std::string& name, const std::string& extra = "") {
    std::string s;
    const char* addr[] = {"192.0.2.1", "192.0.2.2", "192.0.2.3"};
    const char* site[] = {"east", "west", "south"};
    for (int i = 0; i < 3; ++i)
        s += "[[hostname.\"" + name + "\".service]]\naddress = \"" + addr[i] + "\"\nsite = \"" + site[i] +
             "\"\n" + extra;
    return s;
}

struct Written {
    std::string dir, config, zone;
};

inline Written writeConfig(const std::string& configText, const std::string& zoneText = kZone) {
    Written w;
    w.dir = newDir();
    w.zone = writeFile(w.dir, "t.zone", zoneText);
    w.config = writeFile(w.dir, "gslbd.toml", configText);
    return w;
}

/// loadConfig's error for `configText` (the test fails when it loads).
inline std::string configError(const std::string& configText, std::string* path = nullptr) {
    Written w = writeConfig(configText);
    if (path) *path = w.config;
    gslb::server::Config cfg;
    std::string error;
    bool ok = gslb::server::loadConfig(w.config, cfg, error);
    CHECK_MESSAGE(!ok, "loadConfig accepted:\n" << configText);
    return error;
}

/// loadConfig's message for a refusal at `needle`'s line of `text` (written to `path`): "PATH:LINE: rest".
inline std::string errorAt(const std::string& path, const std::string& text, const std::string& needle,
                           const std::string& rest) {
    int line = lineOf(text, needle);
    REQUIRE(line > 0);
    return path + ":" + std::to_string(line) + ": " + rest;
}

/// loadConfig refuses `text` with exactly `message` at `needle`'s line.
inline void refusedAt(const std::string& text, const std::string& needle, const std::string& message) {
    std::string path;
    std::string err = configError(text, &path);
    CHECK(err == errorAt(path, text, needle, message));
}

/// loadConfig's Config for `text` (the test stops when it is refused).
inline gslb::server::Config loadedConfig(const std::string& text) {
    Written w = writeConfig(text);
    gslb::server::Config cfg;
    std::string error;
    REQUIRE_MESSAGE(gslb::server::loadConfig(w.config, cfg, error), error);
    return cfg;
}

/// buildSnapshot's error for `configText` + `zoneText`.
inline std::string snapshotError(const std::string& configText, const std::string& zoneText = kZone,
                                 Written* out = nullptr) {
    Written w = writeConfig(configText, zoneText);
    if (out) *out = w;
    std::string error;
    auto s = gslb::server::buildSnapshot(w.config, nullptr, error);
    CHECK_MESSAGE(s == nullptr, "buildSnapshot accepted:\n" << configText);
    return error;
}

inline std::shared_ptr<gslb::server::Snapshot> snapshot(const std::string& configText,
                                                        const std::string& zoneText = kZone) {
    Written w = writeConfig(configText, zoneText);
    std::string error;
    auto s = gslb::server::buildSnapshot(w.config, nullptr, error);
    INFO("buildSnapshot: " << error);
    REQUIRE(s != nullptr);
    return s;
}

// ---------------------------------------------------------------------------------------------- DNS wire

inline std::vector<uint8_t> makeQuery(const std::string& name, uint16_t type, uint16_t id = 0x1234) {
    std::vector<uint8_t> q = {uint8_t(id >> 8), uint8_t(id), 0x00, 0x00, 0, 1, 0, 0, 0, 0, 0, 0};
    std::string n = name;
    if (n.back() != '.') n += '.';
    size_t start = 0;
    for (size_t i = 0; i < n.size(); ++i)
        if (n[i] == '.') {
            q.push_back(uint8_t(i - start));
            q.insert(q.end(), n.begin() + long(start), n.begin() + long(i));
            start = i + 1;
        }
    q.push_back(0);
    q.insert(q.end(), {uint8_t(type >> 8), uint8_t(type), 0, 1});
    return q;
}

struct Rr {
    std::string owner;
    uint16_t type = 0, cls = 0;
    uint32_t ttl = 0;
    std::vector<uint8_t> rdata;
    /// A / AAAA rdata as text.
    std::string address() const {
        char buf[INET6_ADDRSTRLEN] = "?";
        if (rdata.size() == 4) inet_ntop(AF_INET, rdata.data(), buf, sizeof buf);
        if (rdata.size() == 16) inet_ntop(AF_INET6, rdata.data(), buf, sizeof buf);
        return buf;
    }
};

struct Msg {
    uint16_t id = 0, flags = 0;
    int rcode = -1;
    bool aa = false, tc = false, qr = false;
    std::vector<Rr> answer, authority, additional;
    std::vector<std::string> addresses() const {
        std::vector<std::string> out;
        for (const auto& r : answer)
            if (r.type == 1 || r.type == 28) out.push_back(r.address());
        return out;
    }
};

inline std::string readName(const std::vector<uint8_t>& m, size_t& off) {
    std::string out;
    size_t p = off;
    bool jumped = false;
    for (int guard = 0; guard < 128; ++guard) {
        REQUIRE(p < m.size());
        uint8_t len = m[p];
        if ((len & 0xC0) == 0xC0) {
            REQUIRE(p + 1 < m.size());
            if (!jumped) off = p + 2;
            jumped = true;
            p = size_t((len & 0x3F) << 8 | m[p + 1]);
            continue;
        }
        ++p;
        if (len == 0) break;
        REQUIRE(p + len <= m.size());
        for (size_t i = 0; i < len; ++i) out += char(std::tolower(m[p + i]));
        out += '.';
        p += len;
    }
    if (!jumped) off = p;
    return out.empty() ? "." : out;
}

inline Msg decode(const std::vector<uint8_t>& m) {
    Msg r;
    REQUIRE(m.size() >= 12);
    r.id = uint16_t(m[0] << 8 | m[1]);
    r.flags = uint16_t(m[2] << 8 | m[3]);
    r.qr = m[2] & 0x80;
    r.aa = m[2] & 0x04;
    r.tc = m[2] & 0x02;
    r.rcode = m[3] & 0x0F;
    uint16_t counts[4];
    for (int i = 0; i < 4; ++i) counts[i] = uint16_t(m[4 + 2 * i] << 8 | m[5 + 2 * i]);
    size_t off = 12;
    for (int i = 0; i < counts[0]; ++i) {
        readName(m, off);
        off += 4;
    }
    std::vector<Rr>* sec[3] = {&r.answer, &r.authority, &r.additional};
    for (int s = 0; s < 3; ++s)
        for (int i = 0; i < counts[s + 1]; ++i) {
            Rr rr;
            rr.owner = readName(m, off);
            REQUIRE(off + 10 <= m.size());
            rr.type = uint16_t(m[off] << 8 | m[off + 1]);
            rr.cls = uint16_t(m[off + 2] << 8 | m[off + 3]);
            rr.ttl = uint32_t(m[off + 4]) << 24 | uint32_t(m[off + 5]) << 16 | uint32_t(m[off + 6]) << 8 |
                     m[off + 7];
            uint16_t len = uint16_t(m[off + 8] << 8 | m[off + 9]);
            off += 10;
            REQUIRE(off + len <= m.size());
            rr.rdata.assign(m.begin() + long(off), m.begin() + long(off + len));
            off += len;
            sec[s]->push_back(rr);
        }
    return r;
}

// ---------------------------------------------------------------------------------------------- state

inline std::string num(double v) {
    return std::isnan(v) ? "nan" : std::to_string(v);
}

/// Every site's and service's view, as text: equal dumps mean an unchanged state table.
inline std::string dumpState(const gslb::metrics::StateTable& t) {
    std::string s;
    for (uint32_t i = 0; i < t.siteCount(); ++i) {
        auto v = t.siteView(i);
        s += "site " + t.siteName(i) + " cpu=" + num(v.cpu) + " used=" + num(v.sessionsUsed) +
             " max=" + num(v.sessionsMax) + " lf=" + num(v.loadFactor) +
             " at=" + std::to_string(v.reportAtMs) + " enabled=" + std::to_string(v.enabled) +
             " up=" + std::to_string(v.up) + " pref=" + std::to_string(v.preference) + "\n";
    }
    for (uint32_t i = 0; i < t.serviceCount(); ++i) {
        auto v = t.serviceView(i);
        const auto& k = t.serviceKey(i);
        s += "service " + k.site + "/" + k.address + " health=" + std::to_string(int(v.health)) +
             " enabled=" + std::to_string(v.enabled) + " conns=" + num(v.connections) +
             " at=" + std::to_string(v.connectionsAtMs) + " l4=" + num(v.l4Ms) + " l7=" + num(v.l7Ms) + "\n";
    }
    return s;
}

}  // namespace st
