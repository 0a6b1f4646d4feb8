#include <arpa/inet.h>
#include <doctest/doctest.h>

#include <atomic>
#include <thread>

#include "server/state/rtt_report.hpp"
#include "server/state/rtt_table.hpp"

using namespace gslb::server;
using gslb::zones::ClientSubnet;

namespace {

ClientSubnet addr(const char* text, int bits = -1) {
    ClientSubnet c;
    bool v6 = std::string(text).find(':') != std::string::npos;
    c.family = v6 ? gslb::zones::kFamilyIPv6 : gslb::zones::kFamilyIPv4;
    inet_pton(v6 ? AF_INET6 : AF_INET, text, c.addr);
    c.bits = uint8_t(bits < 0 ? (v6 ? 128 : 32) : bits);
    return c;
}

ClientSubnet prefix(const char* text) {
    ClientSubnet c;
    REQUIRE(parseClientPrefix(text, c));
    return c;
}

}  // namespace

TEST_CASE("parseClientPrefix: address/length with the host bits zero") {
    ClientSubnet c;
    REQUIRE(parseClientPrefix("198.51.100.0/24", c));
    CHECK(c.family == gslb::zones::kFamilyIPv4);
    CHECK(c.bits == 24);
    CHECK(c.addr[2] == 100);
    REQUIRE(parseClientPrefix("2001:db8:0:100::/56", c));
    CHECK(c.family == gslb::zones::kFamilyIPv6);
    CHECK(c.bits == 56);
    CHECK(parseClientPrefix("0.0.0.0/0", c));
    for (const char* bad : {"198.51.100.1/24", "198.51.100.0", "198.51.100.0/33", "198.51.100.0/-1",
                            "198.51.100.0/ 24", "198.51.100.0/24x", "/24", "example.com/24", "2001:db8::1/56",
                            "2001:db8::/129", "198.51.100.0/0024"})
        CHECK_MESSAGE(!parseClientPrefix(bad, c), bad);
}

TEST_CASE("parseRttReport: a whole report, every bound, nothing half-read") {
    std::vector<RttReportEntry> out;
    std::string err;
    REQUIRE(parseRttReport(R"({"prefixes":[{"prefix":"198.51.100.0/24","rtt_ms":12.5,"samples":17},)"
                           R"({"prefix":"2001:db8:0:100::/56","rtt_ms":80,"samples":1}]})",
                           24, 56, 100, out, err));
    REQUIRE(out.size() == 2);
    CHECK(out[0].rttMs == 12.5);
    CHECK(out[0].samples == 17);
    CHECK(out[1].prefix.bits == 56);
    REQUIRE(parseRttReport(R"({"prefixes":[]})", 24, 56, 100, out, err));
    CHECK(out.empty());

    struct Case {
        const char* body;
        const char* error;
    } cases[] = {
        {"nope", "the body is not JSON"},
        {"[]", "the body must be a JSON object {\"prefixes\": [...]}"},
        {R"({"prefixes":[],"cpu":3})", "unknown key \"cpu\" (only \"prefixes\")"},
        {R"({"prefixes":{}})", "\"prefixes\" must be an array"},
        {R"({"prefixes":[1]})", "prefixes[0]: must be an object {\"prefix\", \"rtt_ms\", \"samples\"}"},
        {R"({"prefixes":[{"prefix":"198.51.100.0/24","rtt_ms":1,"samples":1,"x":0}]})",
         "prefixes[0]: unknown key \"x\""},
        {R"({"prefixes":[{"prefix":"198.51.100.7/24","rtt_ms":1,"samples":1}]})",
         "prefixes[0]: \"198.51.100.7/24\" is not an address prefix with its host bits zero"},
        {R"({"prefixes":[{"prefix":"198.48.0.0/20","rtt_ms":1,"samples":1}]})",
         "prefixes[0]: \"198.48.0.0/20\": this gslbd groups IPv4 clients by /24 ([rtt] prefix_v4): run the "
         "agent with --prefix-v4 24"},
        {R"({"prefixes":[{"prefix":"198.51.100.0/24","rtt_ms":0,"samples":1}]})",
         "prefixes[0]: \"rtt_ms\" = 0 is out of range (0, 60000]"},
        {R"({"prefixes":[{"prefix":"198.51.100.0/24","rtt_ms":60001,"samples":1}]})",
         "prefixes[0]: \"rtt_ms\" = 60001 is out of range (0, 60000]"},
        {R"({"prefixes":[{"prefix":"198.51.100.0/24","rtt_ms":"5","samples":1}]})",
         "prefixes[0]: \"rtt_ms\" must be a number"},
        {R"({"prefixes":[{"prefix":"198.51.100.0/24","rtt_ms":5,"samples":1.5}]})",
         "prefixes[0]: \"samples\" must be a whole number"},
        {R"({"prefixes":[{"prefix":"198.51.100.0/24","rtt_ms":5,"samples":0}]})",
         "prefixes[0]: \"samples\" = 0 is out of range [1, 1000000000]"},
        {R"({"prefixes":[{"prefix":"198.51.100.0/24","rtt_ms":5,"samples":-3}]})",
         "prefixes[0]: \"samples\" = -3 is out of range [1, 1000000000]"},
        {R"({"prefixes":[{"prefix":"198.51.100.0/24","rtt_ms":5,"samples":1},)"
         R"({"prefix":"198.51.100.0/24","rtt_ms":6,"samples":1}]})",
         "prefixes[1]: \"198.51.100.0/24\" appears twice"},
        {R"({"prefixes":[{"prefix":"1.0.0.0/24","rtt_ms":5,"samples":1},{"prefix":"1.0.1.0/24","rtt_ms":5,"samples":1},)"
         R"({"prefix":"1.0.2.0/24","rtt_ms":5,"samples":1}]})",
         "3 prefixes: at most 2 a report ([rtt] prefixes_max_per_report)"},
    };
    for (const auto& c : cases) {
        out.assign(1, RttReportEntry{});
        CHECK_FALSE_MESSAGE(parseRttReport(c.body, 24, 56, 2, out, err), c.body);
        CHECK(err == c.error);
        CHECK(out.empty());
    }
}

TEST_CASE("RttTable: keys at the table's prefix length; an ECS prefix shorter than it places no one") {
    RttTable t(64, 3, 24, 56);
    CHECK(t.key(addr("198.51.100.7")) == t.key(addr("198.51.100.250")));
    CHECK(t.key(addr("198.51.100.7")) == t.prefixKey(prefix("198.51.100.0/24")));
    CHECK_FALSE(t.key(addr("198.51.100.7")) == t.key(addr("198.51.101.7")));
    CHECK(t.key(addr("2001:db8:0:1ff::1")) == t.prefixKey(prefix("2001:db8:0:100::/56")));
    CHECK(bool(t.key(addr("198.51.100.0", 24))));  // ECS /24: placed
    CHECK_FALSE(t.key(addr("198.51.96.0", 20)));   // ECS /20: which /24 is unknown
    CHECK_FALSE(t.key(ClientSubnet{}));
    CHECK_FALSE(t.prefixKey(prefix("198.51.100.128/25")));  // not the table's length
    // 0.0.0.0/24 is a network like any other (the family tells it from an empty slot).
    CHECK(bool(t.prefixKey(prefix("0.0.0.0/24"))));
    CHECK_FALSE(t.key(addr("0.0.0.7")) == t.key(addr("::7")));
}

TEST_CASE("RttTable: figures per site, replaced by newer ones; least recently reported evicted when full") {
    RttTable t(16, 2, 24, 56);  // 16 slots: one probe window
    CHECK(t.capacity() == 16);
    CHECK(t.memoryBytes() == 16 * (3 + 2 * 2) * 8);
    RttTable::Figure f[2];
    const uint32_t both[] = {0, 1};
    auto k = t.prefixKey(prefix("198.51.100.0/24"));
    CHECK_FALSE(t.lookup(k, both, f));
    REQUIRE(t.update(k, 1, 42.5f, 9, 1000));
    REQUIRE(t.lookup(k, both, f));
    CHECK(f[0].atMs == 0);
    CHECK(f[1].rttMs == doctest::Approx(42.5));
    CHECK(f[1].samples == 9);
    CHECK(f[1].atMs == 1000);
    REQUIRE(t.update(k, 0, 7.25f, 3, 2000));
    REQUIRE(t.update(k, 1, 40.0f, 11, 2000));
    REQUIRE(t.lookup(k, both, f));
    CHECK(f[0].rttMs == doctest::Approx(7.25));
    CHECK(f[1].rttMs == doctest::Approx(40.0));
    CHECK(f[1].samples == 11);
    CHECK(t.used() == 1);
    // Only the sites asked for, in the order asked; a site out of range has no figure.
    const uint32_t some[] = {1, 7};
    RttTable::Figure g[2];
    REQUIRE(t.lookup(k, some, g));
    CHECK(g[0].rttMs == doctest::Approx(40.0));
    CHECK(g[1].atMs == 0);
    CHECK_FALSE(t.update(k, 2, 1, 1, 3000));  // no such site
    // Fill the window: 15 more prefixes, each reported later than the first (2000 ms).
    for (int i = 1; i <= 15; ++i) {
        ClientSubnet p = prefix("10.0.0.0/24");
        p.addr[2] = uint8_t(i);
        REQUIRE(t.update(t.prefixKey(p), 0, float(i), 1, 3000 + i));
    }
    CHECK(t.used() == 16);
    CHECK(t.evictions() == 0);
    // One more: the least recently reported (198.51.100.0/24, at 2000) gives up its slot.
    auto k2 = t.prefixKey(prefix("203.0.113.0/24"));
    REQUIRE(t.update(k2, 1, 99, 2, 5000));
    CHECK(t.evictions() == 1);
    CHECK_FALSE(t.lookup(k, both, f));
    REQUIRE(t.lookup(k2, both, f));
    CHECK(f[0].atMs == 0);  // the slot's earlier figures went with its prefix
    CHECK(f[1].rttMs == doctest::Approx(99));
}

TEST_CASE("RttTable: a reload carries figures by site; other prefix lengths carry nothing") {
    RttTable old(64, 3, 24, 56);
    auto k = old.prefixKey(prefix("198.51.100.0/24"));
    old.update(k, 0, 10, 1, 100);
    old.update(k, 2, 30, 3, 300);
    RttTable now(64, 2, 24, 56);
    now.carryFrom(old, {-1, -1, 0});  // site 2 is now site 0; site 0 is gone
    RttTable::Figure f[2];
    const uint32_t both[] = {0, 1};
    REQUIRE(now.lookup(now.prefixKey(prefix("198.51.100.0/24")), both, f));
    CHECK(f[0].rttMs == doctest::Approx(30));
    CHECK(f[0].samples == 3);
    CHECK(f[0].atMs == 300);
    CHECK(f[1].atMs == 0);
    RttTable other(64, 2, 20, 56);
    other.carryFrom(old, {0, 1, -1});
    CHECK(other.used() == 0);
}

TEST_CASE("RttTable: readers never see half an update while the control thread writes") {
    RttTable t(1024, 2, 24, 56);
    auto k = t.prefixKey(prefix("198.51.100.0/24"));
    t.update(k, 0, 1, 1, 1);
    t.update(k, 1, 1, 1, 1);
    std::atomic<bool> stop{false};
    std::atomic<long> torn{0}, reads{0};
    std::thread reader([&] {
        RttTable::Figure f[2];
        const uint32_t both[] = {0, 1};
        while (!stop.load(std::memory_order_relaxed)) {
            if (!t.lookup(k, both, f)) continue;
            ++reads;
            // Each update writes one site with rtt == samples == its time: a torn read would mix them.
            for (auto& x : f)
                if (uint32_t(x.rttMs) != x.samples || int64_t(x.samples) != x.atMs) ++torn;
            std::this_thread::yield();
        }
    });
    // At least 50,000 updates, and on until the reader has read 200 times (a loaded machine may not run
    // it before the first 50,000 are done); bounded at 50 million. Figures stay under the table's 4e6 ms.
    for (uint32_t i = 2; i < 50000000 && (i < 50000 || reads.load(std::memory_order_relaxed) < 200); ++i)
        t.update(k, i & 1, float(1 + i % 4000000), 1 + i % 4000000, 1 + i % 4000000);
    stop = true;
    reader.join();
    CHECK(torn == 0);
    CHECK(reads > 0);
}
