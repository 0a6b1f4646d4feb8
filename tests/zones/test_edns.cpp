// EDNS options on the answer path: NSID (RFC 5001), COOKIE (RFC 7873) parsing and echo through a CookieHook,
// the response kinds rate limiting counts by, and slip() (the truncated / BADCOOKIE stand-in).
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>
#include <map>

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
www     A   192.0.2.10
*.wild  A   192.0.2.11
sub     NS  ns.sub
ns.sub  A   192.0.2.53
)";

testutil::Server& server() {
    static testutil::Server s = [] {
        testutil::Server s;
        s.add("e.test.", kZone);
        return s;
    }();
    return s;
}

// A query for (name, type) with an OPT record holding `options` (each: code, data).
std::vector<uint8_t> queryWith(const std::string& name, uint16_t type,
                               const std::vector<std::pair<uint16_t, std::vector<uint8_t>>>& options) {
    auto q = makeQuery(name, type, false);
    q[11] = 1;
    std::vector<uint8_t> rdata;
    for (const auto& [code, data] : options) {
        rdata.push_back(uint8_t(code >> 8));
        rdata.push_back(uint8_t(code));
        rdata.push_back(uint8_t(data.size() >> 8));
        rdata.push_back(uint8_t(data.size()));
        rdata.insert(rdata.end(), data.begin(), data.end());
    }
    uint8_t opt[] = {0, 0, 41, 0x04, 0xD0, 0, 0, 0, 0, uint8_t(rdata.size() >> 8), uint8_t(rdata.size())};
    q.insert(q.end(), opt, opt + sizeof opt);
    q.insert(q.end(), rdata.begin(), rdata.end());
    return q;
}

std::vector<uint8_t> bytes(size_t n, uint8_t v) {
    return std::vector<uint8_t>(n, v);
}

// The options of the response's OPT record (at res.optStart), by code.
std::map<uint16_t, std::vector<uint8_t>> optionsOf(const std::vector<uint8_t>& out, const AnswerResult& res) {
    std::map<uint16_t, std::vector<uint8_t>> m;
    REQUIRE(res.optStart > 0);
    const uint8_t* p = out.data() + res.optStart;
    REQUIRE(p[0] == 0);
    REQUIRE((p[1] << 8 | p[2]) == kTypeOPT);
    size_t rdlen = size_t(p[9]) << 8 | p[10];
    REQUIRE(res.optStart + 11 + rdlen == res.len);
    for (size_t o = 11; o < 11 + rdlen;) {
        uint16_t code = uint16_t(p[o] << 8 | p[o + 1]);
        size_t len = size_t(p[o + 2]) << 8 | p[o + 3];
        m[code] = std::vector<uint8_t>(p + o + 4, p + o + 4 + len);
        o += 4 + len;
    }
    return m;
}

// A stand-in for the server's cookie maker: the server cookie is 16 octets of 0xAB, valid when it is that.
struct FakeCookies : CookieHook {
    mutable int made = 0;
    bool renewValid = false;
    bool check(const uint8_t*, const uint8_t* server, size_t len, const ClientInfo&,
               bool& renew) const noexcept override {
        renew = renewValid;
        return len == 16 && std::memcmp(server, std::vector<uint8_t>(16, 0xAB).data(), 16) == 0;
    }
    size_t make(const uint8_t*, const ClientInfo&, uint8_t* out) const noexcept override {
        ++made;
        std::memset(out, 0xCD, 16);
        return 16;
    }
};

}  // namespace

TEST_CASE("NSID: the identity is sent when asked for and enabled (RFC 5001 §2.1)") {
    auto& s = server();
    s.opt.identity = "ns1.example";
    s.opt.nsid = true;
    auto q = queryWith("www.e.test.", kTypeA, {{kOptNsid, {}}});
    auto res = s.raw(q);
    auto opts = optionsOf(s.out, res);
    REQUIRE(opts.count(kOptNsid));
    CHECK(std::string(opts[kOptNsid].begin(), opts[kOptNsid].end()) == "ns1.example");
    CHECK(testutil::decode(s.out.data(), res.len).an.size() == 1);

    SUBCASE("not asked for: no NSID") {
        auto r2 = s.raw(queryWith("www.e.test.", kTypeA, {}));
        CHECK(optionsOf(s.out, r2).empty());
    }
    SUBCASE("nsid off: none, though identity is set") {
        s.opt.nsid = false;
        CHECK(optionsOf(s.out, s.raw(q)).empty());
    }
    SUBCASE("a payload in the request is ignored; errors carry NSID too") {
        auto r3 = s.raw(queryWith("nowhere.test.", kTypeA, {{kOptNsid, {1, 2, 3}}}));
        CHECK(r3.rcode == kRcodeRefused);
        CHECK(optionsOf(s.out, r3).count(kOptNsid));
    }
    s.opt.nsid = false;
    s.opt.identity.clear();
}

TEST_CASE("NSID: the OPT record's room is kept, so a full answer truncates instead of losing NSID") {
    auto& s = server();
    s.opt.identity = std::string(300, 'x');  // sent as its first 255 octets
    s.opt.nsid = true;
    auto res = s.raw(queryWith("www.e.test.", kTypeA, {{kOptNsid, {}}}));
    auto opts = optionsOf(s.out, res);
    CHECK(opts[kOptNsid].size() == 255);
    CHECK(res.len <= 1232);
    s.opt.nsid = false;
    s.opt.identity.clear();
}

TEST_CASE("COOKIE lengths: 8 or 16..40 octets; anything else is FORMERR (RFC 7873 §5.2.2)") {
    auto& s = server();
    for (size_t len : {size_t(8), size_t(16), size_t(24), size_t(40)}) {
        auto res = s.raw(queryWith("www.e.test.", kTypeA, {{kOptCookie, bytes(len, 1)}}));
        CHECK_MESSAGE(res.rcode == kRcodeNoError, len);
    }
    for (size_t len : {size_t(0), size_t(7), size_t(9), size_t(15), size_t(41), size_t(200)}) {
        auto res = s.raw(queryWith("www.e.test.", kTypeA, {{kOptCookie, bytes(len, 1)}}));
        CHECK_MESSAGE(res.rcode == kRcodeFormErr, len);
    }
    // Only the first COOKIE option counts (§5.2): a bad second one is not looked at.
    auto res =
        s.raw(queryWith("www.e.test.", kTypeA, {{kOptCookie, bytes(8, 1)}, {kOptCookie, bytes(3, 1)}}));
    CHECK(res.rcode == kRcodeNoError);
    // An option that runs past the OPT RDATA.
    auto q = queryWith("www.e.test.", kTypeA, {{kOptCookie, bytes(8, 1)}});
    q[q.size() - 9] = 9;
    CHECK(s.raw(q).rcode == kRcodeFormErr);
}

TEST_CASE("COOKIE: the reply echoes the client cookie with a server cookie; the verdict is reported") {
    auto& s = server();
    FakeCookies fc;
    s.opt.cookies = &fc;
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(0xC0000207);
    ClientInfo ci{reinterpret_cast<const sockaddr*>(&sin), 1700000000};
    auto ask = [&](const std::vector<uint8_t>& cookie) {
        auto q = queryWith("www.e.test.", kTypeA, {{kOptCookie, cookie}});
        return gslb::zones::answer(s.db, s.opt, {q.data(), q.size()}, false, {s.out.data(), s.out.size()},
                                   nullptr, ci);
    };
    std::vector<uint8_t> cc = {1, 2, 3, 4, 5, 6, 7, 8};
    std::vector<uint8_t> fresh = cc, ours = cc, other = cc;
    fresh.insert(fresh.end(), 16, 0xCD);
    ours.insert(ours.end(), 16, 0xAB);
    other.insert(other.end(), 16, 0x11);

    auto r1 = ask(cc);
    CHECK(r1.cookie == Cookie::ClientOnly);
    CHECK(optionsOf(s.out, r1)[kOptCookie] == fresh);
    CHECK(r1.rcode == kRcodeNoError);  // answered normally (§5.2.3 choice 3)

    auto r2 = ask(other);
    CHECK(r2.cookie == Cookie::Invalid);
    CHECK(optionsOf(s.out, r2)[kOptCookie] == fresh);  // treated as if only the client cookie came (§5.2.4)
    CHECK(r2.rcode == kRcodeNoError);

    fc.renewValid = false;
    auto r3 = ask(ours);
    CHECK(r3.cookie == Cookie::Valid);
    CHECK(optionsOf(s.out, r3)[kOptCookie] == ours);  // recent enough: sent back as it came
    fc.renewValid = true;
    auto r4 = ask(ours);
    CHECK(r4.cookie == Cookie::Valid);
    CHECK(optionsOf(s.out, r4)[kOptCookie] == fresh);

    SUBCASE("without a client address (or without cookies) the option is only checked for form") {
        auto q = queryWith("www.e.test.", kTypeA, {{kOptCookie, cc}});
        auto r = s.raw(q);
        CHECK(r.cookie == Cookie::None);
        CHECK(optionsOf(s.out, r).empty());
    }
    s.opt.cookies = nullptr;
}

TEST_CASE("response kinds and the names rate limiting counts them by") {
    auto& s = server();
    auto kindOf = [&](const std::string& n, uint16_t t, std::string* name) {
        auto res = s.raw(makeQuery(n, t));
        name->assign(reinterpret_cast<const char*>(res.kindName), res.kindNameLen);
        return res.kind;
    };
    std::string nm;
    CHECK(kindOf("WWW.e.test.", kTypeA, &nm) == ResponseKind::Answer);
    CHECK(nm == std::string("\3www\1e\4test", 12));
    CHECK(kindOf("www.e.test.", kTypeTXT, &nm) == ResponseKind::NoData);
    CHECK(nm == std::string("\3www\1e\4test", 12));
    CHECK(kindOf("random1.wild.e.test.", kTypeA, &nm) == ResponseKind::Answer);
    CHECK(nm == std::string("\1*\4wild\1e\4test", 15));  // every name under the wildcard counts as one
    CHECK(kindOf("nope.e.test.", kTypeA, &nm) == ResponseKind::NxDomain);
    CHECK(nm == std::string("\1e\4test", 8));  // per zone
    CHECK(kindOf("a.b.sub.e.test.", kTypeA, &nm) == ResponseKind::Referral);
    CHECK(nm == std::string("\3sub\1e\4test", 12));
    CHECK(kindOf("elsewhere.test.", kTypeA, &nm) == ResponseKind::Error);
    CHECK(nm.empty());
}

TEST_CASE("slip: header and question with TC and the OPT record; BADCOOKIE keeps the fresh cookie") {
    auto& s = server();
    FakeCookies fc;
    s.opt.cookies = &fc;
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(0xC0000207);
    ClientInfo ci{reinterpret_cast<const sockaddr*>(&sin), 1700000000};
    auto q = queryWith("www.e.test.", kTypeA, {{kOptCookie, {1, 2, 3, 4, 5, 6, 7, 8}}});
    auto res = gslb::zones::answer(s.db, s.opt, {q.data(), q.size()}, false, {s.out.data(), s.out.size()},
                                   nullptr, ci);
    auto full = s.out;

    size_t n = slip({s.out.data(), s.out.size()}, res, false);
    auto r = testutil::decode(s.out.data(), n);
    REQUIRE(r.ok);
    CHECK(r.tc);
    CHECK(r.rcode == 0);
    CHECK(r.an.empty());
    CHECK(r.ns.empty());
    CHECK(r.edns);
    CHECK(testutil::countedEnd(s.out.data(), n) == n);

    s.out = full;
    n = slip({s.out.data(), s.out.size()}, res, true);
    r = testutil::decode(s.out.data(), n);
    REQUIRE(r.ok);
    CHECK(!r.tc);
    CHECK(r.rcode == 23);  // BADCOOKIE
    CHECK(r.an.empty());
    AnswerResult moved = res;
    moved.optStart = res.questionEnd;
    moved.len = n;
    std::vector<uint8_t> cookie = {1, 2, 3, 4, 5, 6, 7, 8};
    cookie.insert(cookie.end(), 16, 0xCD);
    CHECK(optionsOf(s.out, moved)[kOptCookie] == cookie);

    SUBCASE("without EDNS: TC, no records at all") {
        auto plain = makeQuery("www.e.test.", kTypeA);
        auto pr = s.raw(plain);
        size_t m = slip({s.out.data(), s.out.size()}, pr, true);  // no OPT: BADCOOKIE cannot be said
        auto d = testutil::decode(s.out.data(), m);
        CHECK(d.tc);
        CHECK(d.ar.empty());
        CHECK(!d.edns);
        CHECK(m == plain.size());
    }
    s.opt.cookies = nullptr;
}

TEST_CASE(
    "QDCOUNT 0 with only a COOKIE: NOERROR and the cookie; BADCOOKIE for a foreign server cookie "
    "(RFC 7873 §5.4)") {
    auto& s = server();
    FakeCookies fc;
    s.opt.cookies = &fc;
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(0xC0000207);
    ClientInfo ci{reinterpret_cast<const sockaddr*>(&sin), 1700000000};
    auto noQuestion = [](const std::vector<uint8_t>& cookie) {
        std::vector<uint8_t> q = {0x12, 0x34, 0x00, 0x00, 0, 0, 0, 0, 0, 0, 0, 1};
        uint8_t opt[] = {0,
                         0,
                         41,
                         0x04,
                         0xD0,
                         0,
                         0,
                         0,
                         0,
                         0,
                         uint8_t(4 + cookie.size()),
                         0,
                         10,
                         0,
                         uint8_t(cookie.size())};
        q.insert(q.end(), opt, opt + sizeof opt);
        q.insert(q.end(), cookie.begin(), cookie.end());
        return q;
    };
    std::vector<uint8_t> cc = {1, 2, 3, 4, 5, 6, 7, 8};
    auto q = noQuestion(cc);
    auto res = gslb::zones::answer(s.db, s.opt, {q.data(), q.size()}, false, {s.out.data(), s.out.size()},
                                   nullptr, ci);
    REQUIRE(res.action == Action::Send);
    CHECK(res.rcode == kRcodeNoError);
    CHECK(s.out[5] == 0);  // QDCOUNT 0
    CHECK(s.out[7] == 0);  // no answer
    std::vector<uint8_t> fresh = cc;
    fresh.insert(fresh.end(), 16, 0xCD);
    CHECK(optionsOf(s.out, res)[kOptCookie] == fresh);
    CHECK(testutil::decode(s.out.data(), res.len).rcode == 0);

    std::vector<uint8_t> foreign = cc;
    foreign.insert(foreign.end(), 16, 0x11);
    q = noQuestion(foreign);
    res = gslb::zones::answer(s.db, s.opt, {q.data(), q.size()}, false, {s.out.data(), s.out.size()}, nullptr,
                              ci);
    CHECK(res.rcode == kRcodeBadCookie);
    CHECK(testutil::decode(s.out.data(), res.len).rcode == 23);
    CHECK(optionsOf(s.out, res)[kOptCookie] == fresh);

    std::vector<uint8_t> ours = cc;
    ours.insert(ours.end(), 16, 0xAB);
    q = noQuestion(ours);
    res = gslb::zones::answer(s.db, s.opt, {q.data(), q.size()}, false, {s.out.data(), s.out.size()}, nullptr,
                              ci);
    CHECK(res.rcode == kRcodeNoError);
    CHECK(res.cookie == Cookie::Valid);

    SUBCASE("without cookies, or without the option: FORMERR, the header and an empty OPT") {
        s.opt.cookies = nullptr;
        auto r = s.raw(noQuestion(cc));
        CHECK(r.rcode == kRcodeFormErr);
        CHECK(r.len == 12 + 11);  // RFC 6891 §7: the query's OPT was sound, so the reply has one
        s.opt.cookies = &fc;
        std::vector<uint8_t> bare = {0x12, 0x34, 0,  0, 0,    0, 0, 0, 0, 0, 0, 1,
                                     0,    0,    41, 4, 0xD0, 0, 0, 0, 0, 0, 0};
        r = gslb::zones::answer(s.db, s.opt, {bare.data(), bare.size()}, false, {s.out.data(), s.out.size()},
                                nullptr, ci);
        CHECK(r.rcode == kRcodeFormErr);
    }
    s.opt.cookies = nullptr;
}

namespace {

// The EDE options of a response (RFC 8914 §2): (INFO-CODE, EXTRA-TEXT) each; the message must be whole.
std::vector<std::pair<int, std::string>> edeOf(const std::vector<uint8_t>& out, const AnswerResult& res) {
    std::vector<std::pair<int, std::string>> v;
    REQUIRE(testutil::countedEnd(out.data(), res.len) == res.len);
    if (!res.optStart) return v;
    const uint8_t* p = out.data() + res.optStart;
    size_t rdlen = size_t(p[9]) << 8 | p[10];
    REQUIRE(res.optStart + 11 + rdlen == res.len);
    for (size_t o = 11; o < 11 + rdlen;) {
        uint16_t code = uint16_t(p[o] << 8 | p[o + 1]);
        size_t len = size_t(p[o + 2]) << 8 | p[o + 3];
        REQUIRE(o + 4 + len <= 11 + rdlen);
        if (code == kOptEde) {
            REQUIRE(len >= 2);
            v.emplace_back(p[o + 4] << 8 | p[o + 5], std::string(p + o + 6, p + o + 4 + len));
        }
        o += 4 + len;
    }
    return v;
}
using EdeList = std::vector<std::pair<int, std::string>>;

// A GSLB name whose hook answers `count` addresses with an EDE of `text` (as an all-down fallback does).
struct FallbackHook : DynamicHook {
    std::string text;
    uint16_t count = 1;
    uint8_t rd[kMaxDynRecords][4];
    void select(int32_t, uint16_t, const Zone&, const RRset*, const Client&,
                DynAnswer& out) noexcept override {
        out.ttl = 30;
        out.count = count;
        for (uint16_t i = 0; i < count; ++i) {
            rd[i][0] = 192, rd[i][1] = 0, rd[i][2] = 2, rd[i][3] = uint8_t(i);
            out.recs[i] = {rd[i], 4};
        }
        if (!text.empty()) out.ede = {Ede::kOther, text};
    }
};

}  // namespace

TEST_CASE("EDE (RFC 8914): each error path's INFO-CODE, only when the query had EDNS") {
    auto& s = server();
    auto ask = [&](std::vector<uint8_t> q, bool tcp = false) {
        auto res = s.raw(q, tcp);
        return std::make_tuple(int(res.rcode), edeOf(s.out, res), res.ede);
    };
    auto edns = [](std::vector<uint8_t> q) {
        q[11] = 1;
        uint8_t opt[] = {0, 0, 41, 0x04, 0xD0, 0, 0, 0, 0, 0, 0};
        q.insert(q.end(), opt, opt + sizeof opt);
        return q;
    };
    using R = std::tuple<int, EdeList, int32_t>;
    // §4.21 Not Authoritative: a name outside our zones; an AXFR of a name in our zone that is not an apex
    // (NOTAUTH, RFC 5936 §2.2.1) or outside it (REFUSED); another class.
    CHECK(ask(queryWith("nowhere.test.", kTypeA, {})) == R{kRcodeRefused, {{20, ""}}, 20});
    CHECK(ask(edns(makeQuery("www.e.test.", kTypeAXFR)), true) == R{kRcodeNotAuth, {{20, ""}}, 20});
    CHECK(ask(edns(makeQuery("other.test.", kTypeAXFR)), true) == R{kRcodeRefused, {{20, ""}}, 20});
    CHECK(ask(edns(makeQuery("www.e.test.", kTypeA, false, 1232, false, 4))) ==
          R{kRcodeRefused, {{20, ""}}, 20});
    // §4.22 Not Supported: AXFR over UDP; an opcode other than QUERY (UPDATE here).
    CHECK(ask(queryWith("e.test.", kTypeAXFR, {})) == R{kRcodeNotImp, {{21, ""}}, 21});
    auto update = queryWith("e.test.", kTypeSOA, {});
    update[2] = 5 << 3;
    CHECK(ask(update) == R{kRcodeNotImp, {{21, ""}}, 21});
    // §4.19 Prohibited: an identity name the operator did not configure; any other CH name is not ours.
    CHECK(ask(edns(makeQuery("version.bind.", kTypeTXT, false, 1232, false, 3))) ==
          R{kRcodeRefused, {{18, ""}}, 18});
    CHECK(ask(edns(makeQuery("foo.bind.", kTypeTXT, false, 1232, false, 3))) ==
          R{kRcodeRefused, {{20, ""}}, 20});
    // Without EDNS: the same RCODE, no OPT, no EDE (§3: it is an EDNS option).
    CHECK(ask(makeQuery("nowhere.test.", kTypeA)) == R{kRcodeRefused, {}, Ede::kNone});
    // Answers and negative answers from our zones carry none.
    CHECK(ask(queryWith("www.e.test.", kTypeA, {})) == R{kRcodeNoError, {}, Ede::kNone});
    CHECK(ask(queryWith("nx.e.test.", kTypeA, {})) == R{kRcodeNxDomain, {}, Ede::kNone});
    // No code fits a FORMERR (a malformed ECS option here), nor BADVERS.
    CHECK(std::get<1>(ask(queryWith("www.e.test.", kTypeA, {{8, {0, 1}}}))).empty());
    auto v1 = queryWith("www.e.test.", kTypeA, {});
    v1[v1.size() - 5] = 1;  // EDNS version 1
    CHECK(std::get<1>(ask(v1)).empty());
}

TEST_CASE("EDE beside NSID and a cookie: all three fit, in that order") {
    auto& s = server();
    FakeCookies fc;
    s.opt.cookies = &fc;
    s.opt.identity = "ns1.example";
    s.opt.nsid = true;
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    ClientInfo ci{reinterpret_cast<const sockaddr*>(&sin), 1700000000};
    auto q = queryWith("nowhere.test.", kTypeA, {{kOptNsid, {}}, {kOptCookie, {1, 2, 3, 4, 5, 6, 7, 8}}});
    auto res = gslb::zones::answer(s.db, s.opt, {q.data(), q.size()}, false, {s.out.data(), s.out.size()},
                                   nullptr, ci);
    auto opts = optionsOf(s.out, res);
    CHECK(opts.size() == 3);
    CHECK(std::string(opts[kOptNsid].begin(), opts[kOptNsid].end()) == "ns1.example");
    CHECK(opts[kOptCookie].size() == 24);
    CHECK(opts[kOptEde] == std::vector<uint8_t>{0, 20});
    // slip() keeps the OPT record whole, EDE included.
    size_t n = slip({s.out.data(), s.out.size()}, res, false);
    CHECK(testutil::countedEnd(s.out.data(), n) == n);
    s.opt.cookies = nullptr;
    s.opt.nsid = false;
    s.opt.identity.clear();
}

TEST_CASE("refuse() carries the EDE it is given: Prohibited for axfr_allow, text for the rest") {
    std::vector<uint8_t> out(65535);
    AnswerOptions opt;
    auto q = queryWith("e.test.", kTypeAXFR, {});
    size_t n =
        refuse(opt, {q.data(), q.size()}, {out.data(), out.size()}, kRcodeRefused, {Ede::kProhibited, {}});
    AnswerResult res;
    res.len = n;
    res.optStart = n - 17;  // OPT (11) + EDE (6)
    CHECK(edeOf(out, res) == EdeList{{18, ""}});
    n = refuse(opt, {q.data(), q.size()}, {out.data(), out.size()}, kRcodeServFail, {Ede::kOther, "busy"});
    res.len = n;
    res.optStart = n - 21;
    CHECK(edeOf(out, res) == EdeList{{0, "busy"}});
    // Too long for 512 octets: the reply goes without it, whole.
    std::string big(600, 'x');
    n = refuse(opt, {q.data(), q.size()}, {out.data(), out.size()}, kRcodeServFail, {Ede::kOther, big});
    CHECK(n == q.size());  // header, question, OPT: as the query
    CHECK(testutil::countedEnd(out.data(), n) == n);
    // No EDNS: no OPT, no EDE.
    auto plain = makeQuery("e.test.", kTypeAXFR);
    CHECK(refuse(opt, {plain.data(), plain.size()}, {out.data(), out.size()}, 5, {Ede::kProhibited, {}}) ==
          plain.size());
}

TEST_CASE("EDE of a GSLB fallback answer: sent when it fits the client's size, else left out (never TC)") {
    testutil::Server s;
    s.add("e.test.", kZone);
    Zone& z = *s.db.zones()[0];
    WireName w;
    REQUIRE(textToName("www.e.test.", {}, w));
    z.mutableNode(z.find(w)).dynamic = 0;
    FallbackHook hook;
    hook.text = "all services of www.e.test. are down: fallback all";
    s.hook = &hook;
    auto res = s.raw(queryWith("www.e.test.", kTypeA, {}));
    CHECK(res.rcode == 0);
    CHECK(edeOf(s.out, res) == EdeList{{0, hook.text}});
    CHECK(testutil::decode(s.out.data(), res.len).an.size() == 1);
    // 20 addresses fit 512 octets (28 + 20 x 16 + 11 = 359) but not with a 300-octet text: the answer goes
    // whole, without TC, without the option; with room (bufsize 1232) it has both.
    hook.count = 20;
    hook.text = std::string(300, 't');
    auto q512 = queryWith("www.e.test.", kTypeA, {});
    q512[q512.size() - 8] = 0x02, q512[q512.size() - 7] = 0x00;  // UDP payload size 512
    res = s.raw(q512);
    auto d = testutil::decode(s.out.data(), res.len);
    CHECK(res.len <= 512);
    CHECK(!d.tc);
    CHECK(d.an.size() == 20);
    CHECK(edeOf(s.out, res).empty());
    CHECK(res.ede == Ede::kNone);
    res = s.raw(queryWith("www.e.test.", kTypeA, {}));
    CHECK(res.len > 512);
    CHECK(res.len <= 1232);
    CHECK(testutil::decode(s.out.data(), res.len).an.size() == 20);
    CHECK(edeOf(s.out, res) == EdeList{{0, hook.text}});
    // No EDNS: never.
    res = s.raw(makeQuery("www.e.test.", kTypeA));
    CHECK(res.optStart == 0);
    CHECK(res.ede == Ede::kNone);
}

namespace {

// A zone whose TXT records make responses of exact sizes: "nNNN.p.test." TXT answered with EDNS (no other
// option) is NNN octets: header 12, question 17, the TXT RR 12 + its strings (1 + k each), OPT 11.
testutil::Server& padServer() {
    static testutil::Server s = [] {
        testutil::Server s;
        std::string zone =
            "$ORIGIN p.test.\n$TTL 300\n@ IN SOA ns1 host 1 3600 600 86400 60\n@ NS ns1\n"
            "ns1 A 192.0.2.1\n";
        for (size_t n : {100, 464, 465, 468, 470}) {
            zone += "n" + std::to_string(n) + " TXT ";
            if (n > 309)  // 12 + 17 + 12 + (1 + 255) + (1 + k) + 11
                zone += "\"" + std::string(255, 'a') + "\" \"" + std::string(n - 309, 'b') + "\"\n";
            else  // 12 + 17 + 12 + (1 + k) + 11
                zone += "\"" + std::string(n - 53, 'a') + "\"\n";
        }
        s.add("p.test.", zone);
        return s;
    }();
    return s;
}

}  // namespace

TEST_CASE("pad: a response with the Padding option grows to the next 468-octet block (RFC 8467 §4.1)") {
    auto& s = padServer();
    auto padded = [&](size_t n, size_t trailer, size_t limit, bool option = true) {
        auto q = queryWith("n" + std::to_string(n) + ".p.test.", kTypeTXT,
                           option ? std::vector<std::pair<uint16_t, std::vector<uint8_t>>>{{kOptPadding, {}}}
                                  : std::vector<std::pair<uint16_t, std::vector<uint8_t>>>{});
        auto res = s.raw(q, true);
        REQUIRE(res.rcode == kRcodeNoError);
        REQUIRE(res.len == n);  // the zone above makes it so
        CHECK(res.padding == option);
        res.len = pad({s.out.data(), s.out.size()}, res.len, res.optStart, trailer, limit);
        return res;
    };
    // Exact sizes: N octets become the smallest multiple of 468 that holds N + 4 (the option's header).
    // Not a structured binding: CAPTURE is a lambda, and clang 14 does not capture bindings.
    for (auto nw : {std::pair<size_t, size_t>{100, 468}, {464, 468}, {465, 936}, {468, 936}, {470, 936}}) {
        const size_t n = nw.first, want = nw.second;
        CAPTURE(n);
        auto res = padded(n, 0, 65535);
        CHECK(res.len == want);
        auto opts = optionsOf(s.out, res);  // the OPT record's RDLENGTH covers the option: it is still last
        REQUIRE(opts.count(kOptPadding));
        CHECK(opts[kOptPadding] == bytes(want - n - 4, 0));  // RFC 7830 §4: zeros
        auto r = testutil::decode(s.out.data(), res.len);    // still a well-formed message, answer intact
        CHECK(r.an.size() == 1);
    }
    // A TSIG RR of 61 octets will follow: the signed message is the block's multiple, 468.
    CHECK(padded(100, 61, 65535).len == 407);
    // The limit wins over the block: padded up to it, or not at all when the header does not fit.
    CHECK(padded(470, 0, 500).len == 500);
    CHECK(padded(470, 0, 474).len == 474);  // an empty Padding option
    CHECK(padded(470, 0, 473).len == 470);
    CHECK(padded(464, 10, 480).len == 470);  // 470 + the 10-octet trailer = the limit
    // pad() is only called for a query that carried the option (AnswerResult::padding); a response without
    // an OPT record (optStart 0) is left as it is.
    CHECK(pad({s.out.data(), s.out.size()}, 100, 0, 0, 65535) == 100);
    auto plain = s.raw(makeQuery("n100.p.test.", kTypeTXT, false), true);
    CHECK(plain.optStart == 0);
    CHECK_FALSE(plain.padding);
    CHECK(padded(100, 0, 65535, false).len == 468);  // pad() itself does not look at the query
}
