// Query parsing (zones/packet.cpp) on malformed input, as raw bytes: each case gets FORMERR or is dropped,
// with bounded work, and nothing crashes.
#include <doctest/doctest.h>

#include "helpers.hpp"
#include "zones/rrtype.hpp"
#include "zones/writer.hpp"

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

// The untrusted-input work: a header-only query with a non-zero opcode made answer() copy `questionEnd - 12`
// octets with questionEnd 0, and Writer::bytes' `len_ + n > limit_` wrapped around: a remote heap overwrite.
TEST_CASE("the 12-octet opcode-1, QDCOUNT-0 query gets a header-only NOTIMP, over UDP and TCP") {
    testutil::Server s;
    s.add("t.test.", "@ 300 IN SOA ns1 host 1 3600 600 86400 60\n@ NS ns1\n");
    const std::vector<uint8_t> q = {0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
    for (bool tcp : {false, true}) {
        auto res = s.raw(q, tcp);
        REQUIRE(res.action == Action::Send);
        CHECK(res.rcode == kRcodeNotImp);
        REQUIRE(res.len == 12);
        const std::vector<uint8_t> want = {0x00, 0x00, 0x88, 0x04, 0, 0, 0, 0, 0, 0, 0, 0};
        CHECK(std::vector<uint8_t>(s.out.begin(), s.out.begin() + 12) == want);
    }
    // dig +opcode=status +header-only: ID, RD and AD set.
    const std::vector<uint8_t> status = {0xBE, 0xEF, 0x11, 0x20, 0, 0, 0, 0, 0, 0, 0, 0};
    auto res = s.raw(status);
    REQUIRE(res.len == 12);
    const std::vector<uint8_t> want = {0xBE, 0xEF, 0x91, 0x04, 0, 0, 0, 0, 0, 0, 0, 0};
    CHECK(std::vector<uint8_t>(s.out.begin(), s.out.begin() + 12) == want);
}

TEST_CASE("Writer::bytes compares with the space left: a wrapped length fails, a lowered limit leaves none") {
    uint8_t buf[32] = {};
    Writer w(buf, sizeof buf);
    uint8_t src[16] = {};
    CHECK(w.bytes(src, 12));
    CHECK_FALSE(w.bytes(src, size_t(0) - 12));  // what `questionEnd - 12` with questionEnd 0 gives
    CHECK_FALSE(w.bytes(src, SIZE_MAX));
    CHECK(w.size() == 12);
    CHECK(w.bytes(nullptr, 0));  // nothing to copy: no memcpy from a null pointer (UBSan)
    w.setLimit(8);               // below what is written
    CHECK_FALSE(w.bytes(src, 1));
    CHECK(w.size() == 12);
    w.setLimit(sizeof buf);
    CHECK(w.bytes(src, 16));
    CHECK_FALSE(w.bytes(src, 5));
    CHECK(w.bytes(src, 4));
    CHECK(w.size() == 32);
}

TEST_CASE("Writer::rr copies rdata that lacks the names its type promises as it is, within its length") {
    uint8_t buf[128] = {};
    Writer w(buf, sizeof buf);
    const uint8_t owner[] = {1, 'a', 0};
    const uint8_t mx1[] = {0};              // MX with one octet: shorter than its preference
    const uint8_t ns[] = {5, 'a', 0};       // NS whose name runs past its rdata
    const uint8_t soa[] = {0, 0xC0, 0x0C};  // SOA with a pointer for its second name
    CHECK(w.rr(kAnswer, owner, sizeof owner, kTypeMX, 1, mx1, sizeof mx1));
    CHECK(w.rr(kAnswer, owner, sizeof owner, kTypeNS, 1, ns, sizeof ns));
    CHECK(w.rr(kAnswer, owner, sizeof owner, kTypeSOA, 1, soa, sizeof soa));
    CHECK(w.count(kAnswer) == 3);
    // Each record: owner (3 octets, or a 2-octet pointer after the first), 10 fixed, the rdata as given.
    CHECK(w.size() == (3 + 10 + 1) + (2 + 10 + 3) + (2 + 10 + 3));
}

namespace {
// A query with `qd` questions (www.t.test./A; the second compressed), opcode `op`, optionally an OPT.
std::vector<uint8_t> matrixQuery(uint8_t op, uint16_t qd, bool edns) {
    std::vector<uint8_t> p = {0x5A, 0xA5, uint8_t(op << 3 | 0x01), 0x00, 0, uint8_t(qd), 0, 0, 0,
                              0,    0,    uint8_t(edns ? 1 : 0)};
    if (qd >= 1) append(p, {3, 'W', 'w', 'w', 1, 't', 4, 't', 'e', 's', 't', 0, 0, 1, 0, 1});
    if (qd >= 2) append(p, {0xC0, 12, 0, 28, 0, 1});
    if (edns) append(p, {0, 0, 41, 0x04, 0xD0, 0, 0, 0x80, 0, 0, 0});
    return p;
}
}  // namespace

TEST_CASE("the RFC answer matrix: opcode 0-15 x QDCOUNT 0, 1, 2 x UDP, TCP x EDNS") {
    testutil::Server s;
    s.add("t.test.", "@ 300 IN SOA ns1 host 1 3600 600 86400 60\n@ NS ns1\nwww A 192.0.2.1\n");
    for (uint8_t op = 0; op < 16; ++op)
        for (uint16_t qd : {0, 1, 2})
            for (bool tcp : {false, true})
                for (bool edns : {false, true}) {
                    CAPTURE(op);
                    CAPTURE(qd);
                    CAPTURE(tcp);
                    CAPTURE(edns);
                    auto q = matrixQuery(op, qd, edns);
                    auto res = s.raw(q, tcp);
                    REQUIRE(res.action == Action::Send);
                    const uint8_t* r = s.out.data();
                    uint8_t want = op != 0 ? kRcodeNotImp : qd != 1 ? kRcodeFormErr : kRcodeNoError;
                    CHECK(res.rcode == want);
                    CHECK((r[3] & 0x0F) == want);
                    CHECK(r[0] == 0x5A);
                    CHECK(r[1] == 0xA5);
                    CHECK((r[2] & 0x80) == 0x80);       // QR
                    CHECK(((r[2] >> 3) & 0x0F) == op);  // opcode echoed
                    CHECK((r[2] & 0x01) == 0x01);       // RD echoed
                    uint16_t qdOut = uint16_t(r[4] << 8 | r[5]);
                    CHECK(qdOut == (qd == 1 ? 1 : 0));
                    CHECK(testutil::countedEnd(r, res.len) == res.len);
                    testutil::Resp d = testutil::decode(r, res.len);
                    REQUIRE(d.ok);
                    CHECK(d.edns == edns);
                    CHECK(d.an.size() == (want == kRcodeNoError ? 1u : 0u));
                    if (want != kRcodeNoError) CHECK(!d.aa);
                }
}

namespace {
// The QNAME rules as parseQuestion checked them octet by octet before it walked labels only: each label at
// most 63 octets and inside the packet, the name at most 255 octets with its root label.
bool qnameOkRef(const std::vector<uint8_t>& p, size_t& len) {
    size_t n = 0;
    for (;;) {
        if (n >= p.size() - 12) return false;
        uint8_t l = p[12 + n];
        if (l > 63 || size_t(l) + 1 > 255 - n) return false;
        if (l == 0) {
            len = n + 1;
            return true;
        }
        if (size_t(l) >= p.size() - 12 - n) return false;
        n += size_t(l) + 1;
    }
}
}  // namespace

TEST_CASE(
    "QNAME bounds: labels and lengths around 255 octets and the packet's end, as the octet-wise rules") {
    // Names of 1..5 labels whose lengths put the total on every side of 255, cut at every point.
    for (int total = 240; total <= 260; ++total)
        for (int labels = 1; labels <= 5; ++labels) {
            std::vector<uint8_t> name;
            int left = total - 1;  // octets before the root label
            for (int i = 0; i < labels; ++i) {
                int l = std::min(63, i + 1 == labels ? left - 1 : left / (labels - i) - 1);
                if (l < 1) l = 1;
                name.push_back(uint8_t(l));
                for (int k = 0; k < l; ++k) name.push_back(uint8_t(k % 2 ? 'A' + k % 26 : 'a' + k % 26));
                left -= l + 1;
            }
            name.push_back(0);
            for (size_t cut = 0; cut <= name.size() + 4; ++cut) {
                auto p = hdr();
                p.insert(p.end(), name.begin(), name.begin() + long(std::min(cut, name.size())));
                for (size_t k = name.size(); k < cut; ++k) p.push_back(k == name.size() + 1 ? 1 : 0);
                size_t refLen = 0;
                bool ref = qnameOkRef(p, refLen) && p.size() - 12 - refLen >= 4;
                Query q;
                ParseStatus st = parseQuery({p.data(), p.size()}, q);
                CAPTURE(total);
                CAPTURE(labels);
                CAPTURE(cut);
                CHECK((st == ParseStatus::Ok) == ref);
                if (ref) {
                    REQUIRE(q.qnameLen == refLen);
                    for (size_t i = 0; i < refLen; ++i) CHECK(q.lower[i] == lowerByte(p[12 + i]));
                }
            }
        }
    // A label length octet of 64..255 (a pointer or an extended label type) anywhere in the name.
    for (unsigned l = 64; l < 256; ++l) {
        auto p = hdr();
        append(p, {3, 'w', 'w', 'w', uint8_t(l), 0, 0, 1, 0, 1});
        CHECK(parse(p) == ParseStatus::FormErr);
    }
}
