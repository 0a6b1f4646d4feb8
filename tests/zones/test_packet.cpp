// Query parsing (zones/packet.cpp) on malformed input, as raw bytes: each case gets FORMERR or is dropped,
// with bounded work, and nothing crashes.
#include <doctest/doctest.h>

#include "helpers.hpp"
#include "zones/rrtype.hpp"

using namespace gslb::zones;

namespace {
ParseStatus parse(std::vector<uint8_t> p) {
    Query q;
    return parseQuery({p.data(), p.size()}, q);
}
std::vector<uint8_t> hdr(uint8_t flags2 = 0x00, uint16_t qd = 1, uint16_t ar = 0) {
    return {0xAB, 0xCD, flags2, 0x00, 0, uint8_t(qd), 0, 0, 0, 0, 0, uint8_t(ar)};
}
void append(std::vector<uint8_t>& v, std::initializer_list<uint8_t> b) {
    v.insert(v.end(), b);
}
}  // namespace

TEST_CASE("a well-formed query parses, QNAME lower-cased, labels indexed") {
    auto p = hdr();
    append(p, {3, 'W', 'w', 'W', 1, 't', 0, 0, 1, 0, 1});
    Query q;
    REQUIRE(parseQuery({p.data(), p.size()}, q) == ParseStatus::Ok);
    CHECK(q.qnameLen == 7);
    CHECK(q.labels == 2);
    CHECK(std::string(reinterpret_cast<char*>(q.lower), 7) == std::string("\3www\1t\0", 7));
    CHECK(q.qtype == 1);
}

TEST_CASE("runts and responses are dropped") {
    CHECK(parse({1, 2, 3}) == ParseStatus::Drop);
    auto p = hdr(0x80);  // QR=1
    append(p, {0, 0, 1, 0, 1});
    CHECK(parse(p) == ParseStatus::Drop);
}

TEST_CASE("opcodes other than QUERY: NOTIMP") {
    for (uint8_t op : {1, 2, 4, 5}) {
        auto p = hdr(uint8_t(op << 3));
        append(p, {0, 0, 6, 0, 1});
        CHECK(parse(p) == ParseStatus::NotImp);
    }
}

TEST_CASE("QDCOUNT other than 1: FORMERR") {
    auto p0 = hdr(0, 0);
    CHECK(parse(p0) == ParseStatus::FormErr);
    auto p2 = hdr(0, 2);
    append(p2, {0, 0, 1, 0, 1, 0, 0, 1, 0, 1});
    CHECK(parse(p2) == ParseStatus::FormErr);
}

TEST_CASE("malformed names: FORMERR") {
    SUBCASE("compression pointer in the QNAME (it can only point into the header or loop)") {
        auto p = hdr();
        append(p, {0xC0, 12, 0, 1, 0, 1});
        CHECK(parse(p) == ParseStatus::FormErr);
    }
    SUBCASE("label longer than 63") {
        auto p = hdr();
        p.push_back(64);
        p.insert(p.end(), 64, 'a');
        append(p, {0, 0, 1, 0, 1});
        CHECK(parse(p) == ParseStatus::FormErr);
    }
    SUBCASE("name longer than 255") {
        auto p = hdr();
        for (int i = 0; i < 5; ++i) {
            p.push_back(60);
            p.insert(p.end(), 60, 'a');
        }
        append(p, {0, 0, 1, 0, 1});
        CHECK(parse(p) == ParseStatus::FormErr);
    }
    SUBCASE("label running past the end") {
        auto p = hdr();
        append(p, {10, 'a', 'b'});
        CHECK(parse(p) == ParseStatus::FormErr);
    }
    SUBCASE("question cut short") {
        auto p = hdr();
        append(p, {0, 0, 1});
        CHECK(parse(p) == ParseStatus::FormErr);
    }
    SUBCASE("compression loop in an additional record") {
        auto p = hdr(0, 1, 1);
        append(p, {0, 0, 1, 0, 1});
        size_t at = p.size();
        append(p, {0xC0, uint8_t(at), 0, 41, 4, 0, 0, 0, 0, 0, 0, 0});  // points at itself
        CHECK(parse(p) == ParseStatus::FormErr);
    }
    SUBCASE("pointer past the end") {
        auto p = hdr(0, 1, 1);
        append(p, {0, 0, 1, 0, 1, 0xC0, 200, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0});
        CHECK(parse(p) == ParseStatus::FormErr);
    }
    SUBCASE("record data past the end") {
        auto p = hdr(0, 1, 1);
        append(p, {0, 0, 1, 0, 1, 0, 0, 41, 4, 0, 0, 0, 0, 0, 0, 9, 1});
        CHECK(parse(p) == ParseStatus::FormErr);
    }
    SUBCASE("OPT owned by a name other than the root") {
        auto p = hdr(0, 1, 1);
        append(p, {0, 0, 1, 0, 1, 1, 'x', 0, 0, 41, 4, 0, 0, 0, 0, 0, 0, 0});
        CHECK(parse(p) == ParseStatus::FormErr);
    }
}

TEST_CASE("a FORMERR response echoes the ID and only a question that parsed") {
    testutil::Server s;
    s.add("t.test.", "@ 300 IN SOA ns1 host 1 3600 600 86400 60\n@ NS ns1\n");
    auto p = hdr(0, 2);
    append(p, {0, 0, 1, 0, 1});
    auto res = s.raw(p);
    REQUIRE(res.action == Action::Send);
    CHECK(res.rcode == kRcodeFormErr);
    CHECK(s.out[0] == 0xAB);
    CHECK(s.out[1] == 0xCD);
    CHECK((s.out[3] & 0x0F) == kRcodeFormErr);
}

TEST_CASE("fuzz-ish: every truncation and single-byte flip of a query is handled without a crash") {
    testutil::Server s;
    s.add("t.test.", "@ 300 IN SOA ns1 host 1 3600 600 86400 60\n@ NS ns1\nwww A 192.0.2.1\n*.w CNAME www\n");
    auto base = testutil::makeQuery("a.w.t.test.", kTypeA, true);
    size_t answered = 0;
    for (size_t cut = 0; cut <= base.size(); ++cut) {
        std::vector<uint8_t> q(base.begin(), base.begin() + long(cut));
        answered += s.raw(q).action == Action::Send;
    }
    for (size_t i = 0; i < base.size(); ++i)
        for (int v : {0x00, 0x3F, 0x40, 0xC0, 0xFF}) {
            auto q = base;
            q[i] = uint8_t(v);
            auto res = s.raw(q);
            if (res.action == Action::Send) CHECK(res.len >= 12);
        }
    CHECK(answered > 0);
}
