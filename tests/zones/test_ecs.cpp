// EDNS Client Subnet (RFC 7871) on the answer path: parsing (zones/client.cpp), FORMERR for malformed
// options (§7.1.2), the client handed to the dynamic hook, and the echo with its scope (§7.2.1), checked
// octet by octet.
#include <doctest/doctest.h>
#include <netinet/in.h>

#include <cstring>

#include "helpers.hpp"
#include "zones/rrtype.hpp"

using namespace gslb::zones;
using testutil::makeQuery;

namespace {

const char* kZone = R"($ORIGIN e.test.
$TTL 300
@       IN SOA ns1 host 5 3600 600 86400 60
@       NS  ns1
ns1     A   192.0.2.1
gslb    A   192.0.2.10
gslb    A   192.0.2.20
alias   CNAME gslb
static  A   192.0.2.30
)";

// A query for (name, A) with an OPT record holding `options` (raw option octets).
std::vector<uint8_t> withOptions(const std::string& name, const std::vector<uint8_t>& options) {
    auto q = makeQuery(name, kTypeA, true);
    q[q.size() - 2] = uint8_t(options.size() >> 8);
    q[q.size() - 1] = uint8_t(options.size());
    q.insert(q.end(), options.begin(), options.end());
    return q;
}
// An ECS option: code 8, length, FAMILY, SOURCE, SCOPE, ADDRESS.
std::vector<uint8_t> ecs(uint16_t family, uint8_t source, uint8_t scope, std::vector<uint8_t> addr) {
    std::vector<uint8_t> o = {
        0, 8, 0, uint8_t(4 + addr.size()), uint8_t(family >> 8), uint8_t(family), source, scope};
    o.insert(o.end(), addr.begin(), addr.end());
    return o;
}

// Records what it was called with; answers 192.0.2.10 with a fixed scope.
struct Hook : DynamicHook {
    Client last;
    int calls = 0;
    uint8_t scope = 24;
    uint8_t rd[4] = {192, 0, 2, 10};
    void select(int32_t, uint16_t, const Zone&, const RRset*, const Client& client,
                DynAnswer& out) noexcept override {
        last = client;
        ++calls;
        out.ttl = 30;
        out.count = 1;
        out.scope = scope;
        out.recs[0] = {rd, 4};
    }
};

struct Fixture {
    testutil::Server s;
    Hook hook;
    sockaddr_in src{};
    Fixture() {
        s.add("e.test.", kZone);
        Zone& z = *s.db.zones()[0];
        WireName w;
        REQUIRE(textToName("gslb.e.test.", {}, w));
        z.mutableNode(z.find(w)).dynamic = 0;
        s.hook = &hook;
        src.sin_family = AF_INET;
        src.sin_addr.s_addr = htonl(0x0A000001);  // 10.0.0.1: the resolver
    }
    AnswerResult run(const std::vector<uint8_t>& q) {
        return answer(s.db, s.opt, {q.data(), q.size()}, false, {s.out.data(), s.out.size()}, s.hook,
                      ClientInfo{reinterpret_cast<const sockaddr*>(&src)});
    }
    // The response's last `n` octets (the OPT record's end, where the ECS option sits).
    std::vector<uint8_t> tail(const AnswerResult& r, size_t n) {
        return {s.out.begin() + long(r.len - n), s.out.begin() + long(r.len)};
    }
};

}  // namespace

TEST_CASE("parseEcs accepts the RFC 7871 §6 shape and refuses what §7.1.2 calls malformed") {
    EcsOption e;
    const uint8_t v4[] = {0, 1, 24, 0, 198, 51, 100};
    REQUIRE(parseEcs(v4, sizeof v4, e));
    CHECK(e.subnet.family == kFamilyIPv4);
    CHECK(e.subnet.bits == 24);
    CHECK(e.subnet.addr[0] == 198);
    CHECK(e.subnet.addr[2] == 100);
    CHECK(e.subnet.addr[3] == 0);
    const uint8_t v6[] = {0, 2, 56, 0, 0x20, 0x01, 0x0d, 0xb8, 0x01, 0x00, 0x00};
    REQUIRE(parseEcs(v6, sizeof v6, e));
    CHECK(e.subnet.family == kFamilyIPv6);
    CHECK(e.subnet.bits == 56);
    const uint8_t zero[] = {0, 1, 0, 0};  // source 0: no address octets at all
    REQUIRE(parseEcs(zero, sizeof zero, e));
    CHECK(e.subnet.bits == 0);
    const uint8_t odd[] = {0, 1, 23, 0, 198, 51, 100};  // /23: the last bit of 100 (0x64) is 0
    CHECK(parseEcs(odd, sizeof odd, e));

    const uint8_t shortOpt[] = {0, 1, 24};
    CHECK_FALSE(parseEcs(shortOpt, sizeof shortOpt, e));
    const uint8_t family3[] = {0, 3, 8, 0, 10};
    CHECK_FALSE(parseEcs(family3, sizeof family3, e));
    const uint8_t tooLong4[] = {0, 1, 33, 0, 1, 2, 3, 4, 5};
    CHECK_FALSE(parseEcs(tooLong4, sizeof tooLong4, e));
    const uint8_t tooLong6[] = {0, 2, 129, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17};
    CHECK_FALSE(parseEcs(tooLong6, sizeof tooLong6, e));
    const uint8_t bitsPast[] = {0, 1, 22, 0, 198, 51, 101};  // /22 but bit 23 (0x01 of 101... 0x65) set
    CHECK_FALSE(parseEcs(bitsPast, sizeof bitsPast, e));
    const uint8_t extraOctet[] = {0, 1, 24, 0, 198, 51, 100, 0};  // a fourth octet for a /24
    CHECK_FALSE(parseEcs(extraOctet, sizeof extraOctet, e));
    const uint8_t missingOctet[] = {0, 1, 24, 0, 198, 51};
    CHECK_FALSE(parseEcs(missingOctet, sizeof missingOctet, e));
}

TEST_CASE("ECS: the option is the client's location and comes back with the hook's scope") {
    Fixture f;
    auto r = f.run(withOptions("gslb.e.test.", ecs(1, 24, 0, {198, 51, 100})));
    REQUIRE(r.rcode == kRcodeNoError);
    REQUIRE(f.hook.calls == 1);
    CHECK(f.hook.last.fromEcs);
    CHECK(f.hook.last.subnet.family == kFamilyIPv4);
    CHECK(f.hook.last.subnet.bits == 24);
    CHECK(f.hook.last.subnet.addr[0] == 198);
    // OPT RDLENGTH 11, then code 8, length 7, family 1, source 24, scope 24, 198.51.100.
    CHECK(f.tail(r, 13) == std::vector<uint8_t>{0, 11, 0, 8, 0, 7, 0, 1, 24, 24, 198, 51, 100});

    SUBCASE("a scope the hook did not set is 0") {
        f.hook.scope = 0;
        r = f.run(withOptions("gslb.e.test.", ecs(1, 24, 0, {198, 51, 100})));
        CHECK(f.tail(r, 13) == std::vector<uint8_t>{0, 11, 0, 8, 0, 7, 0, 1, 24, 0, 198, 51, 100});
    }
    SUBCASE("IPv6 /56, a scope longer than the source is allowed (§7.2.1)") {
        f.hook.scope = 64;
        r = f.run(withOptions("gslb.e.test.", ecs(2, 56, 0, {0x20, 0x01, 0x0d, 0xb8, 0x01, 0x00, 0x00})));
        CHECK(f.hook.last.subnet.family == kFamilyIPv6);
        CHECK(f.tail(r, 17) == std::vector<uint8_t>{0, 15, 0, 8, 0, 11, 0, 2, 56, 64, 0x20, 0x01, 0x0d, 0xb8,
                                                    0x01, 0x00, 0x00});
    }
    SUBCASE("through a CNAME, the GSLB name's scope") {
        r = f.run(withOptions("alias.e.test.", ecs(1, 24, 0, {198, 51, 100})));
        CHECK(f.hook.calls == 2);
        CHECK(f.tail(r, 13) == std::vector<uint8_t>{0, 11, 0, 8, 0, 7, 0, 1, 24, 24, 198, 51, 100});
    }
    SUBCASE("source prefix 0: an answer for every client, scope 0") {
        r = f.run(withOptions("gslb.e.test.", ecs(1, 0, 0, {})));
        CHECK(f.hook.last.fromEcs);
        CHECK(f.hook.last.subnet.bits == 0);
        CHECK(f.tail(r, 10) == std::vector<uint8_t>{0, 8, 0, 8, 0, 4, 0, 1, 0, 0});
    }
    SUBCASE("other options beside ECS are skipped") {
        std::vector<uint8_t> opts = {0, 10, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8};  // a client cookie
        auto e = ecs(1, 24, 0, {198, 51, 100});
        opts.insert(opts.end(), e.begin(), e.end());
        r = f.run(withOptions("gslb.e.test.", opts));
        CHECK(r.rcode == kRcodeNoError);
        CHECK(f.hook.last.fromEcs);
    }
}

TEST_CASE("ECS: answers that do not depend on the client carry scope 0") {
    Fixture f;
    auto r = f.run(withOptions("static.e.test.", ecs(1, 24, 0, {198, 51, 100})));
    CHECK(r.rcode == kRcodeNoError);
    CHECK(f.hook.calls == 0);
    CHECK(f.tail(r, 13) == std::vector<uint8_t>{0, 11, 0, 8, 0, 7, 0, 1, 24, 0, 198, 51, 100});
    r = f.run(withOptions("nothere.e.test.", ecs(1, 24, 0, {198, 51, 100})));
    CHECK(r.rcode == kRcodeNxDomain);
    CHECK(f.tail(r, 13) == std::vector<uint8_t>{0, 11, 0, 8, 0, 7, 0, 1, 24, 0, 198, 51, 100});
}

TEST_CASE("ECS: without the option the packet's source is the client, and nothing is echoed") {
    Fixture f;
    auto r = f.run(makeQuery("gslb.e.test.", kTypeA, true));
    REQUIRE(f.hook.calls == 1);
    CHECK_FALSE(f.hook.last.fromEcs);
    CHECK(f.hook.last.subnet.family == kFamilyIPv4);
    CHECK(f.hook.last.subnet.bits == 32);
    CHECK(f.hook.last.subnet.addr[0] == 10);
    CHECK(f.tail(r, 2) == std::vector<uint8_t>{0, 0});  // OPT RDLENGTH 0

    SUBCASE("an IPv4-mapped IPv6 source is an IPv4 client") {
        sockaddr_in6 s6{};
        s6.sin6_family = AF_INET6;
        const uint8_t mapped[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 203, 0, 113, 9};
        std::memcpy(&s6.sin6_addr, mapped, 16);
        auto q = makeQuery("gslb.e.test.", kTypeA);
        answer(f.s.db, f.s.opt, {q.data(), q.size()}, false, {f.s.out.data(), f.s.out.size()}, f.s.hook,
               ClientInfo{reinterpret_cast<const sockaddr*>(&s6)});
        CHECK(f.hook.last.subnet.family == kFamilyIPv4);
        CHECK(f.hook.last.subnet.addr[0] == 203);
    }
}

TEST_CASE("ECS: a malformed option is FORMERR (RFC 7871 §7.1.2), with OPT and without ECS") {
    Fixture f;
    std::vector<std::vector<uint8_t>> bad = {
        ecs(1, 33, 0, {1, 2, 3, 4, 5}),  // source longer than the address
        ecs(1, 22, 0, {198, 51, 101}),   // a bit set past the prefix
        ecs(3, 8, 0, {10}),              // an unknown family
        ecs(1, 24, 0, {198, 51}),        // too few address octets
    };
    auto two = ecs(1, 24, 0, {198, 51, 100});
    auto again = ecs(1, 16, 0, {198, 51});
    two.insert(two.end(), again.begin(), again.end());
    bad.push_back(two);  // two ECS options: which one is the client?
    for (const auto& o : bad) {
        auto r = f.run(withOptions("gslb.e.test.", o));
        CHECK(r.rcode == kRcodeFormErr);
        CHECK(f.hook.calls == 0);
        CHECK(f.s.out[7] == 0);                                                            // no answer
        CHECK(f.tail(r, 11) == std::vector<uint8_t>{0, 0, 41, 4, 208, 0, 0, 0, 0, 0, 0});  // OPT, no options
    }
    SUBCASE("with [server] ecs = false the option is unknown: ignored") {
        f.s.opt.ecs = false;
        auto r = f.run(withOptions("gslb.e.test.", ecs(3, 8, 0, {10})));
        CHECK(r.rcode == kRcodeNoError);
        CHECK_FALSE(f.hook.last.fromEcs);
        r = f.run(withOptions("gslb.e.test.", ecs(1, 24, 0, {198, 51, 100})));
        CHECK_FALSE(f.hook.last.fromEcs);
        CHECK(f.tail(r, 2) == std::vector<uint8_t>{0, 0});
    }
}

TEST_CASE("ECS: an option that overruns the OPT rdata is FORMERR") {
    Fixture f;
    auto r = f.run(withOptions("gslb.e.test.", {0, 8, 0, 9, 0, 1, 24, 0, 198, 51, 100}));
    CHECK(r.rcode == kRcodeFormErr);
}
