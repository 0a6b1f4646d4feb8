// server/state/cookies.cpp: RFC 9018 server cookies (the Appendix A test vectors, byte for byte), their
// checking rules (§4.3), the secret file, and the rollover of secrets across reloads.
#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <netinet/in.h>

#include <cstring>
#include <string>
#include <vector>

#include "tests/server/helpers.hpp"
#include "server/state/cookies.hpp"
#include "server/state/snapshot.hpp"

using namespace gslb::server;

namespace {

std::vector<uint8_t> unhex(const std::string& h) {
    std::vector<uint8_t> v;
    for (size_t i = 0; i + 1 < h.size(); i += 2) v.push_back(uint8_t(std::stoi(h.substr(i, 2), nullptr, 16)));
    return v;
}

std::string hex(const uint8_t* p, size_t n) {
    std::string s;
    for (size_t i = 0; i < n; ++i) s += fmt::format("{:02x}", p[i]);
    return s;
}

CookieSecret secret(const std::string& h) {
    CookieSecret s{};
    auto v = unhex(h);
    REQUIRE(v.size() == 16);
    std::memcpy(s.data(), v.data(), 16);
    return s;
}

// A socket address for `ip` (IPv4 or IPv6 text), kept alive by the caller.
struct Addr {
    sockaddr_storage ss{};
    explicit Addr(const std::string& ip) {
        auto* s4 = reinterpret_cast<sockaddr_in*>(&ss);
        auto* s6 = reinterpret_cast<sockaddr_in6*>(&ss);
        if (inet_pton(AF_INET, ip.c_str(), &s4->sin_addr) == 1) {
            s4->sin_family = AF_INET;
        } else {
            REQUIRE(inet_pton(AF_INET6, ip.c_str(), &s6->sin6_addr) == 1);
            s6->sin6_family = AF_INET6;
        }
    }
    gslb::zones::ClientInfo at(uint32_t now) const { return {reinterpret_cast<const sockaddr*>(&ss), now}; }
};

const std::string kSecret1 = "e5e973e5a6b2a43f48e7dc849e37bfcf";  // RFC 9018 A.1 - A.3
const std::string kOld4 = "dd3bdf9344b678b185a6f5cb60fca715";     // A.4, before the rollover
const std::string kNew4 = "445536bcd2513298075a5d379663c962";     // A.4, after it

}  // namespace

TEST_CASE("RFC 9018 Appendix A: the server cookies are built byte for byte") {
    struct V {
        std::string key, client, ip;
        uint32_t ts;
        std::string want;
    };
    // A.1 (a new cookie), A.2 (the same client renewed), A.3 (another client), A.4 (IPv6, the new secret).
    V vs[] = {
        {kSecret1, "2464c4abcf10c957", "198.51.100.100", 1559731985, "010000005cf79f111f8130c3eee29480"},
        {kSecret1, "2464c4abcf10c957", "198.51.100.100", 1559734385, "010000005cf7a871d4a564a1442aca77"},
        {kSecret1, "fc93fc62807ddb86", "203.0.113.203", 1559734700, "010000005cf7a9acf73a7810aca2381e"},
        {kNew4, "22681ab97d52c298", "2001:db8:220:1:59de:d0f4:8769:82b8", 1559741961,
         "010000005cf7c609a6bb79d16625507a"}};
    for (const auto& v : vs) {
        CookieJar jar(secret(v.key), {});
        Addr a(v.ip);
        uint8_t out[32];
        auto cc = unhex(v.client);
        REQUIRE(jar.make(cc.data(), a.at(v.ts), out) == 16);
        CHECK_MESSAGE(hex(out, 16) == v.want, v.client);
    }
}

TEST_CASE("RFC 9018 Appendix A: the cookies clients send back are checked") {
    // A.2's query: A.1's cookie, 40 minutes later: valid, and older than half an hour, so renewed.
    CookieJar jar(secret(kSecret1), {});
    Addr a("198.51.100.100");
    auto q2 = unhex("2464c4abcf10c957010000005cf79f111f8130c3eee29480");
    bool renew = false;
    CHECK(jar.check(q2.data(), q2.data() + 8, 16, a.at(1559734385), renew));
    CHECK(renew);
    // Ten minutes after it was made: valid, sent back as it came.
    CHECK(jar.check(q2.data(), q2.data() + 8, 16, a.at(1559731985 + 600), renew));
    CHECK_FALSE(renew);
    // Over an hour old, from another address, or altered: not valid.
    CHECK_FALSE(jar.check(q2.data(), q2.data() + 8, 16, a.at(1559731985 + 3601), renew));
    Addr other("198.51.100.101");
    CHECK_FALSE(jar.check(q2.data(), q2.data() + 8, 16, other.at(1559731985 + 60), renew));
    auto bad = q2;
    bad.back() ^= 1;
    CHECK_FALSE(jar.check(bad.data(), bad.data() + 8, 16, a.at(1559731985 + 60), renew));
    // More than 5 minutes in the future: not valid; a little ahead of our clock is.
    CHECK_FALSE(jar.check(q2.data(), q2.data() + 8, 16, a.at(1559731985 - 301), renew));
    CHECK(jar.check(q2.data(), q2.data() + 8, 16, a.at(1559731985 - 299), renew));
    // Not version 1, or not 16 octets: not ours.
    auto v2 = q2;
    v2[8] = 2;
    CHECK_FALSE(jar.check(v2.data(), v2.data() + 8, 16, a.at(1559731985 + 60), renew));
    CHECK_FALSE(jar.check(q2.data(), q2.data() + 8, 8, a.at(1559731985 + 60), renew));

    // A.3's query carries reserved octets 0xabcdef: they are hashed as they came; the reply renews.
    Addr b("203.0.113.203");
    auto q3 = unhex("fc93fc62807ddb8601abcdef5cf78f71a314227b6679ebf5");
    CHECK(jar.check(q3.data(), q3.data() + 8, 16, b.at(0x5cf78f71 + 60), renew));
    CHECK(renew);

    // A.4: made with the old secret, checked after the rollover while the old one is still accepted.
    Addr c("2001:db8:220:1:59de:d0f4:8769:82b8");
    auto q4 = unhex("22681ab97d52c298010000005cf7c57926556bd0934c72f8");
    CookieJar rolled(secret(kNew4), {{secret(kOld4), 1559741961 + 10}});
    CHECK(rolled.check(q4.data(), q4.data() + 8, 16, c.at(1559741961), renew));
    CHECK(renew);  // the next one is made with the new secret
    CookieJar expired(secret(kNew4), {{secret(kOld4), 1559741961 - 1}});
    CHECK_FALSE(expired.check(q4.data(), q4.data() + 8, 16, c.at(1559741961), renew));
    CookieJar newOnly(secret(kNew4), {});
    CHECK_FALSE(newOnly.check(q4.data(), q4.data() + 8, 16, c.at(1559741961), renew));
}

TEST_CASE("cookie secret file: 32 hex digits a line, the first makes cookies; errors name file and line") {
    std::string dir = st::newDir();
    std::vector<CookieSecret> s;
    std::string err;
    REQUIRE(readCookieSecrets(st::writeFile(dir, "a", "# ours\n" + kSecret1 + "\n\n  " + kOld4 + "  \n"), s,
                              err));
    REQUIRE(s.size() == 2);
    CHECK(s[0] == secret(kSecret1));
    CHECK(s[1] == secret(kOld4));
    CHECK_FALSE(readCookieSecrets(st::writeFile(dir, "b", kSecret1 + "\nnot-hex\n"), s, err));
    CHECK_MESSAGE(
        err == dir + "/b:2: a cookie secret is 32 hexadecimal digits (16 octets, `openssl rand -hex 16`)",
        err);
    CHECK_FALSE(readCookieSecrets(st::writeFile(dir, "c", "abcd\n"), s, err));
    CHECK_FALSE(readCookieSecrets(st::writeFile(dir, "d", "# nothing\n"), s, err));
    CHECK(err.find("no cookie secret") != std::string::npos);
    CHECK_FALSE(readCookieSecrets(dir + "/missing", s, err));
    CHECK(err.find("cannot open") != std::string::npos);
}

TEST_CASE("cookie secrets across reloads: the random one is kept; a replaced one is accepted for a while") {
    auto config = [](const std::string& extra) {
        return "[server]\nlisten = [\"127.0.0.1:10053\"]\n" + extra +
               "\n[[zone]]\nname = \"t.test.\"\nfile = \"t.zone\"\n";
    };
    std::string error;
    SUBCASE("no file: a random secret, the same after a reload") {
        auto w = st::writeConfig(config(""));
        auto a = buildSnapshot(w.config, nullptr, error);
        REQUIRE_MESSAGE(a, error);
        auto b = buildSnapshot(w.config, a.get(), error);
        REQUIRE(b);
        CHECK(b->cookies->current() == a->cookies->current());
        CHECK(b->cookies->retired().empty());
        CHECK(b->answer.cookies == b->cookies.get());
        auto c = buildSnapshot(w.config, nullptr, error);
        CHECK(c->cookies->current() != a->cookies->current());
    }
    SUBCASE("a file: a new first line takes over; the one before is accepted for cookie_rollover") {
        auto w = st::writeConfig(config("cookie_secret_file = \"cookie.secret\"\ncookie_rollover = 600\n"));
        st::writeFile(w.dir, "cookie.secret", kOld4 + "\n");
        auto a = buildSnapshot(w.config, nullptr, error, 1000);
        REQUIRE_MESSAGE(a, error);
        CHECK(a->cookies->current() == secret(kOld4));
        st::writeFile(w.dir, "cookie.secret", kNew4 + "\n");
        auto b = buildSnapshot(w.config, a.get(), error, 2000);
        REQUIRE(b);
        CHECK(b->cookies->current() == secret(kNew4));
        REQUIRE(b->cookies->retired().size() == 1);
        CHECK(b->cookies->retired()[0].key == secret(kOld4));
        CHECK(b->cookies->retired()[0].until == 2600);
        // A reload with no change keeps the rollover going, and it ends on time.
        auto c = buildSnapshot(w.config, b.get(), error, 2300);
        REQUIRE(c->cookies->retired().size() == 1);
        auto d = buildSnapshot(w.config, c.get(), error, 2700);
        CHECK(d->cookies->retired().empty());
    }
    SUBCASE("a broken secret file fails the load, naming the file") {
        auto w = st::writeConfig(config("cookie_secret_file = \"cookie.secret\"\n"));
        st::writeFile(w.dir, "cookie.secret", "xyz\n");
        CHECK_FALSE(buildSnapshot(w.config, nullptr, error));
        CHECK_MESSAGE(error.find("cookie.secret:1:") != std::string::npos, error);
    }
}
