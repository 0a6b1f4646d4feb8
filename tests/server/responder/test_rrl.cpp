// server/responder/rrl.cpp: token buckets per (client prefix, response kind, name), slip, and the sweep's log
// lines.
#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <netinet/in.h>

#include <string>
#include <vector>

#include "server/responder/rrl.hpp"

using namespace gslb::server;
using gslb::zones::AnswerResult;
using gslb::zones::ResponseKind;

namespace {

constexpr uint64_t kS = 1000000000;

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
    const sockaddr* sa() const { return reinterpret_cast<const sockaddr*>(&ss); }
};

AnswerResult answerFor(const char* name, size_t len, ResponseKind kind = ResponseKind::Answer,
                       uint16_t qtype = 1) {
    AnswerResult r;
    r.kind = kind;
    r.qtype = qtype;
    r.kindName = reinterpret_cast<const uint8_t*>(name);
    r.kindNameLen = uint8_t(len);
    return r;
}

const char kWww[] = "\3www\1t\4test";  // 12 octets with the root
const char kMail[] = "\4mail\1t\4test";

RrlConf conf(int rps, int slip) {
    RrlConf c;
    c.enabled = true;
    c.responsesPerSecond = rps;
    c.slip = slip;
    c.window = 2;
    return c;
}

// Counts the verdicts of `n` responses at `now`.
struct Tally {
    int pass = 0, drop = 0, slip = 0;
};
Tally run(RateLimiter& r, const RrlConf& c, const Addr& a, const AnswerResult& res, int n, uint64_t now,
          uint32_t& slipCount) {
    Tally t;
    for (int i = 0; i < n; ++i) {
        switch (r.account(c, a.sa(), res, now, slipCount)) {
            case RateLimiter::Verdict::Pass:
                ++t.pass;
                break;
            case RateLimiter::Verdict::Drop:
                ++t.drop;
                break;
            case RateLimiter::Verdict::Slip:
                ++t.slip;
                break;
        }
    }
    return t;
}

}  // namespace

TEST_CASE(
    "RRL: a second's worth of responses at once, then one per 1/rate; every slip-th limited one slips") {
    RateLimiter r(4096, 42);
    auto c = conf(10, 2);
    Addr a("192.0.2.7");
    auto www = answerFor(kWww, 12);
    uint32_t sc = 0;
    uint64_t t0 = 100 * kS;
    Tally t = run(r, c, a, www, 30, t0, sc);
    CHECK(t.pass == 10);
    CHECK(t.slip == 10);  // 20 limited, every 2nd slips
    CHECK(t.drop == 10);
    // A tenth of a second later: one more token.
    t = run(r, c, a, www, 5, t0 + kS / 10, sc);
    CHECK(t.pass == 1);
    // A sustained flood of 10 x the rate for 5 s gets the rate through, no more.
    int pass = 0;
    for (int ms = 200; ms < 5200; ms += 10)
        pass += run(r, c, a, www, 1, t0 + uint64_t(ms) * kS / 1000, sc).pass;
    CHECK(pass >= 49);
    CHECK(pass <= 51);
}

TEST_CASE("RRL: buckets are per prefix, kind and name; hosts of one /24 share one") {
    RateLimiter r(4096, 7);
    auto c = conf(5, 0);
    uint32_t sc = 0;
    uint64_t t0 = 10 * kS;
    auto www = answerFor(kWww, 12);
    CHECK(run(r, c, Addr("198.51.100.1"), www, 20, t0, sc).pass == 5);
    CHECK(run(r, c, Addr("198.51.100.200"), www, 20, t0, sc).pass == 0);  // same /24
    CHECK(run(r, c, Addr("198.51.101.1"), www, 20, t0, sc).pass == 5);    // another /24
    CHECK(run(r, c, Addr("198.51.100.1"), answerFor(kMail, 13), 20, t0, sc).pass == 5);
    CHECK(run(r, c, Addr("198.51.100.1"), answerFor(kWww, 12, ResponseKind::Answer, 28), 20, t0, sc).pass ==
          5);
    CHECK(run(r, c, Addr("198.51.100.1"), answerFor(kWww, 12, ResponseKind::NxDomain), 20, t0, sc).pass == 5);
    CHECK(run(r, c, Addr("198.51.100.1"), answerFor(nullptr, 0, ResponseKind::Error), 20, t0, sc).pass == 5);
    // IPv6: a /56 is one client.
    CHECK(run(r, c, Addr("2001:db8:0:1100::1"), www, 20, t0, sc).pass == 5);
    CHECK(run(r, c, Addr("2001:db8:0:11ff::2"), www, 20, t0, sc).pass == 0);
    CHECK(run(r, c, Addr("2001:db8:0:1200::1"), www, 20, t0, sc).pass == 5);
    CHECK(RateLimiter::prefixText(c, Addr("2001:db8:0:11ff::2").sa()) == "2001:db8:0:1100::/56");
    CHECK(RateLimiter::prefixText(c, Addr("198.51.100.200").sa()) == "198.51.100.0/24");
    // slip 0: nothing slips; slip 1: every limited response does.
    auto one = conf(5, 1);
    Tally t = run(r, one, Addr("203.0.113.9"), www, 20, t0, sc);
    CHECK(t.pass == 5);
    CHECK(t.slip == 15);
}

TEST_CASE("RRL sweep: one line when a prefix starts being limited, one when it has stopped for a window") {
    RateLimiter r(4096, 9);
    auto c = conf(5, 2);
    uint32_t sc = 0;
    std::vector<std::string> lines;
    auto log = [&](const std::string& m) { lines.push_back(m); };
    uint64_t t0 = 50 * kS;
    run(r, c, Addr("192.0.2.99"), answerFor(kWww, 12), 20, t0, sc);
    CHECK(r.sweep(c, t0 + kS / 2, log) == 1);
    REQUIRE(lines.size() == 1);
    CHECK(lines[0] == "rrl: 192.0.2.0/24 (answer responses) limited to 5 responses/s");
    CHECK(r.sweep(c, t0 + kS, log) == 1);  // still limited: no new line
    CHECK(lines.size() == 1);
    CHECK(r.sweep(c, t0 + 3 * kS, log) == 0);  // window 2 s without a limited response
    REQUIRE(lines.size() == 2);
    CHECK(lines[1] == "rrl: 192.0.2.0/24 (answer responses) no longer limited");
    CHECK(r.sweep(c, t0 + 4 * kS, log) == 0);
    CHECK(lines.size() == 2);
    // Many prefixes at once: at most maxLines lines, then a count.
    lines.clear();
    for (int i = 0; i < 30; ++i)
        run(r, c, Addr("10.0." + std::to_string(i) + ".1"), answerFor(kWww, 12), 10, t0 + 5 * kS, sc);
    CHECK(r.sweep(c, t0 + 5 * kS, log, 20) == 30);
    CHECK(lines.size() == 21);
    CHECK(lines.back() == "rrl: and 10 more started, 0 more stopped being limited");
}

TEST_CASE("RRL sweep: the table is read only while something is or was just limited") {
    RateLimiter r(4096, 10);
    auto c = conf(5, 2);
    uint32_t sc = 0;
    std::vector<std::string> lines;
    auto log = [&](const std::string& m) { lines.push_back(m); };
    uint64_t t0 = 60 * kS;
    CHECK(r.sweep(c, t0, log) == 0);
    CHECK(r.scanned() == 0);                                       // nothing was ever limited
    run(r, c, Addr("192.0.2.7"), answerFor(kWww, 12), 4, t0, sc);  // under the rate: nothing limited
    CHECK(r.sweep(c, t0 + kS / 2, log) == 0);
    CHECK(r.scanned() == 0);
    run(r, c, Addr("192.0.2.7"), answerFor(kWww, 12), 20, t0 + kS / 2, sc);
    CHECK(r.sweep(c, t0 + kS, log) == 1);  // limited since the last sweep: read, and reported
    CHECK(r.scanned() == 4096);
    CHECK(lines.size() == 1);
    CHECK(r.sweep(c, t0 + 2 * kS, log) == 1);  // still within its window: read again, no new line
    CHECK(r.scanned() == 4096);
    CHECK(r.sweep(c, t0 + 4 * kS, log) == 0);  // stopped: read once more to say so
    CHECK(r.scanned() == 4096);
    REQUIRE(lines.size() == 2);
    CHECK(lines[1] == "rrl: 192.0.2.0/24 (answer responses) no longer limited");
    CHECK(r.sweep(c, t0 + 5 * kS, log) == 0);  // and then left alone
    CHECK(r.scanned() == 0);
    // Limited again later: the next sweep reads it.
    run(r, c, Addr("192.0.2.7"), answerFor(kWww, 12), 20, t0 + 6 * kS, sc);
    CHECK(r.sweep(c, t0 + 6 * kS + kS / 2, log) == 1);
    CHECK(lines.size() == 3);
}

TEST_CASE("RRL: a new rate applies at once (the limiter remembers the interval with its rate)") {
    RateLimiter r(4096, 11);
    uint32_t sc = 0;
    uint64_t t0 = 20 * kS;
    auto www = answerFor(kWww, 12);
    Addr a("192.0.2.50");
    CHECK(run(r, conf(10, 0), a, www, 30, t0, sc).pass == 10);
    // A reload raises the rate to 100: a tenth of a second later ten more tokens, not one.
    CHECK(run(r, conf(100, 0), a, www, 30, t0 + kS / 10, sc).pass == 10);
    CHECK(run(r, conf(10, 0), a, www, 30, t0 + kS / 10 + kS / 10, sc).pass == 1);
}

TEST_CASE("RRL: short names (under 8 octets) and names that differ only in their last octets count apart") {
    RateLimiter r(4096, 13);
    auto c = conf(5, 0);
    uint32_t sc = 0;
    uint64_t t0 = 30 * kS;
    Addr a("192.0.2.60");
    const char a1[] = "\1a\0", b1[] = "\1b\0";
    const char long1[] = "\13abcdefghijk\4test", long2[] = "\13abcdefghijl\4test";
    CHECK(run(r, c, a, answerFor(a1, 3), 20, t0, sc).pass == 5);
    CHECK(run(r, c, a, answerFor(b1, 3), 20, t0, sc).pass == 5);
    CHECK(run(r, c, a, answerFor(long1, 18), 20, t0, sc).pass == 5);
    CHECK(run(r, c, a, answerFor(long2, 18), 20, t0, sc).pass == 5);
    CHECK(run(r, c, a, answerFor(long1, 18), 20, t0, sc).pass == 0);
}
