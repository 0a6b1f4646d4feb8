#include "server/state/cookies.hpp"

#include <fmt/format.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <sys/random.h>

#include <cstring>
#include <sstream>

#include "zones/client.hpp"
#include "zones/read_file.hpp"

namespace gslb::server {
namespace {

constexpr uint8_t kVersion = 1;         // RFC 9018 §4.1
constexpr uint32_t kLifetime = 3600;    // s: §4.3, a cookie older than an hour is not valid
constexpr uint32_t kFutureSkew = 300;   // s: nor one more than 5 minutes ahead of our clock
constexpr uint32_t kRenewAfter = 1800;  // s: §4.3, after half an hour a fresh one is sent

// One SipHash context per thread: the jar is shared by every worker, an EVP_MAC_CTX is not thread-safe, and
// keeping it avoids an allocation per query (EVP_MAC_init re-keys it in place).
struct Mac {
    EVP_MAC* mac = EVP_MAC_fetch(nullptr, "SIPHASH", nullptr);
    EVP_MAC_CTX* ctx = mac ? EVP_MAC_CTX_new(mac) : nullptr;
    ~Mac() {
        EVP_MAC_CTX_free(ctx);
        EVP_MAC_free(mac);
    }
};

bool siphash24(const CookieSecret& key, const uint8_t* data, size_t len, uint8_t out[8]) noexcept {
    thread_local Mac m;
    if (!m.ctx) return false;
    // SipHash-2-4 with a 64-bit output (RFC 9018 §4.2). OpenSSL's defaults are 2 and 4 rounds and a 128-bit
    // output: the size must be set, the rounds are set too so that no default can change the format.
    size_t size = 8;
    unsigned c = 2, d = 4;
    OSSL_PARAM params[] = {OSSL_PARAM_construct_size_t(OSSL_MAC_PARAM_SIZE, &size),
                           OSSL_PARAM_construct_uint(OSSL_MAC_PARAM_C_ROUNDS, &c),
                           OSSL_PARAM_construct_uint(OSSL_MAC_PARAM_D_ROUNDS, &d),
                           OSSL_PARAM_construct_end()};
    size_t outLen = 0;
    return EVP_MAC_init(m.ctx, key.data(), key.size(), params) == 1 &&
           EVP_MAC_update(m.ctx, data, len) == 1 && EVP_MAC_final(m.ctx, out, &outLen, 8) == 1 && outLen == 8;
}

// The client address as it goes into the hash: 4 octets for IPv4 (an IPv4-mapped IPv6 source included), 16
// for IPv6. 0 when unknown.
size_t clientIp(const zones::ClientInfo& ci, uint8_t ip[16]) {
    zones::ClientSubnet s = zones::subnetOf(ci.source);
    if (s.family == 0) return 0;
    std::memcpy(ip, s.addr, s.octets());
    return s.octets();
}

uint32_t rd32(const uint8_t* p) {
    return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
}

}  // namespace

bool CookieJar::serverCookie(const CookieSecret& key, const uint8_t* client, const uint8_t reserved[3],
                             uint32_t ts, const uint8_t* ip, size_t ipLen, uint8_t out[16]) noexcept {
    uint8_t in[8 + 8 + 16];
    std::memcpy(in, client, 8);
    in[8] = kVersion;
    std::memcpy(in + 9, reserved, 3);
    in[12] = uint8_t(ts >> 24);
    in[13] = uint8_t(ts >> 16);
    in[14] = uint8_t(ts >> 8);
    in[15] = uint8_t(ts);
    std::memcpy(in + 16, ip, ipLen);
    std::memcpy(out, in + 8, 8);
    return siphash24(key, in, 16 + ipLen, out + 8);
}

bool CookieJar::check(const uint8_t* client, const uint8_t* server, size_t len, const zones::ClientInfo& ci,
                      bool& renew) const noexcept {
    renew = true;
    if (len != 16 || server[0] != kVersion) return false;
    uint32_t ts = rd32(server + 4);
    // Serial-number style difference (RFC 1982), as §4.3 asks, so that the 2106 wrap does not matter.
    int32_t age = int32_t(ci.now - ts);
    if (age > int32_t(kLifetime) || age < -int32_t(kFutureSkew)) return false;
    uint8_t ip[16];
    size_t ipLen = clientIp(ci, ip);
    if (!ipLen) return false;
    uint8_t want[16];
    // The reserved octets are hashed as they came (§4.2: a future version may use them).
    if (serverCookie(current_, client, server + 1, ts, ip, ipLen, want) &&
        std::memcmp(want + 8, server + 8, 8) == 0) {
        renew = age >= int32_t(kRenewAfter) || server[1] || server[2] || server[3];
        return true;
    }
    for (const auto& r : retired_) {
        if (r.until && int32_t(ci.now - r.until) > 0) continue;
        if (serverCookie(r.key, client, server + 1, ts, ip, ipLen, want) &&
            std::memcmp(want + 8, server + 8, 8) == 0)
            return true;  // renew: the next one is made with the current secret
    }
    return false;
}

size_t CookieJar::make(const uint8_t* client, const zones::ClientInfo& ci, uint8_t* out) const noexcept {
    uint8_t ip[16];
    size_t ipLen = clientIp(ci, ip);
    static const uint8_t kReserved[3] = {0, 0, 0};
    if (!serverCookie(current_, client, kReserved, ci.now, ip, ipLen, out)) {
        // No SipHash (an OpenSSL without it): still a well-formed cookie, never valid when it comes back.
        std::memset(out + 8, 0, 8);
    }
    return 16;
}

bool readCookieSecrets(const std::string& path, std::vector<CookieSecret>& out, std::string& error) {
    std::string text;
    if (!zones::readFile(path, text, error, zones::kSecretMax)) return false;
    out.clear();
    std::istringstream f(text);
    std::string line;
    int n = 0;
    while (std::getline(f, line)) {
        ++n;
        auto b = line.find_first_not_of(" \t\r");
        if (b == std::string::npos || line[b] == '#') continue;
        auto e = line.find_last_not_of(" \t\r");
        std::string hex = line.substr(b, e - b + 1);
        CookieSecret s{};
        bool ok = hex.size() == 32;
        for (size_t i = 0; ok && i < 16; ++i) {
            auto nib = [&](char c) -> int {
                if (c >= '0' && c <= '9') return c - '0';
                if (c >= 'a' && c <= 'f') return c - 'a' + 10;
                if (c >= 'A' && c <= 'F') return c - 'A' + 10;
                return -1;
            };
            int hi = nib(hex[2 * i]), lo = nib(hex[2 * i + 1]);
            if (hi < 0 || lo < 0) ok = false;
            s[i] = uint8_t(hi << 4 | lo);
        }
        if (!ok) {
            error = fmt::format(
                "{}:{}: a cookie secret is 32 hexadecimal digits (16 octets, `openssl rand -hex 16`)", path,
                n);
            return false;
        }
        out.push_back(s);
    }
    if (out.empty()) {
        error = fmt::format("{}: no cookie secret in the file (32 hexadecimal digits)", path);
        return false;
    }
    return true;
}

CookieSecret randomCookieSecret() {
    CookieSecret s{};
    size_t got = 0;
    while (got < s.size()) {
        ssize_t r = getrandom(s.data() + got, s.size() - got, 0);
        if (r > 0) got += size_t(r);
    }
    return s;
}

}  // namespace gslb::server
