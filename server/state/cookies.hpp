// DNS Cookies (RFC 7873) with server cookies in the interoperable format of RFC 9018: version 1, three
// reserved octets, a 32-bit timestamp and SipHash-2-4 (OpenSSL's EVP_MAC "SIPHASH", 8-octet output) over
// client cookie | version | reserved | timestamp | client IP. Servers of one NS set that share the secret
// accept each other's cookies, as BIND and Knot do among themselves.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "zones/answer.hpp"

namespace gslb::server {

using CookieSecret = std::array<uint8_t, 16>;  // a SipHash-2-4 key (RFC 9018 §4.2)

/// A secret still accepted for checking, but no longer used to make cookies.
struct RetiredSecret {
    CookieSecret key;
    uint32_t until = 0;  // s since the epoch; 0: for as long as it is listed in the secret file
};

/// Immutable once built: one per snapshot, shared by every worker (the SipHash state is per thread).
class CookieJar final : public zones::CookieHook {
  public:
    CookieJar(const CookieSecret& current, std::vector<RetiredSecret> retired)
        : current_(current), retired_(std::move(retired)) {}

    /// RFC 9018 §4.3: a server cookie is ours when it is 16 octets of version 1 whose hash matches under the
    /// current secret or a retired one still accepted at ci.now, and its timestamp is at most an hour old and
    /// at most 5 minutes ahead. `renew` stays false while it is younger than half an hour and was made with
    /// the current secret (it can go back as it came).
    bool check(const uint8_t* client, const uint8_t* server, size_t len, const zones::ClientInfo& ci,
               bool& renew) const noexcept override;
    /// A fresh 16-octet server cookie with timestamp ci.now, made with the current secret.
    size_t make(const uint8_t* client, const zones::ClientInfo& ci, uint8_t* out) const noexcept override;

    const CookieSecret& current() const { return current_; }
    const std::vector<RetiredSecret>& retired() const { return retired_; }

    /// The RFC 9018 server cookie for (key, client cookie, reserved octets, timestamp, client address of 4 or
    /// 16 octets) into `out` (16 octets). False only when OpenSSL has no SipHash.
    static bool serverCookie(const CookieSecret& key, const uint8_t* client, const uint8_t reserved[3],
                             uint32_t timestamp, const uint8_t* ip, size_t ipLen, uint8_t out[16]) noexcept;

  private:
    CookieSecret current_;
    std::vector<RetiredSecret> retired_;
};

/// Reads a cookie secret file: one secret per line as 32 hexadecimal digits (16 octets, as
/// `openssl rand -hex 16` prints them); the first makes cookies, the others are still accepted (a secret on
/// its way out, shared by every server of the NS set). Blank lines and lines starting with '#' are skipped.
/// False and `error` ("file:line: why") when the file cannot be read, a line is not 32 hex digits, or there
/// is no secret.
bool readCookieSecrets(const std::string& path, std::vector<CookieSecret>& out, std::string& error);

/// A random secret from the system's generator (getrandom): the default when no file is configured.
CookieSecret randomCookieSecret();

}  // namespace gslb::server
