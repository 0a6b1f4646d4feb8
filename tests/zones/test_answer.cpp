// The answer path (zones/answer.cpp): RFC 1034 §4.3.2 lookup with wildcards (RFC 4592), empty non-terminals,
// CNAME chasing, referrals with glue, DS on the parent side, negative answers (RFC 2308), EDNS0 (RFC 6891),
// truncation, CH class, REFUSED outside our zones.
#include <doctest/doctest.h>

#include <algorithm>

#include "helpers.hpp"
#include "zones/rrtype.hpp"

using namespace gslb::zones;
using testutil::makeQuery;
using testutil::Resp;

namespace {

const char* kZone = R"($ORIGIN t.test.
$TTL 300
@       IN SOA ns1 host 5 3600 600 86400 60
@       NS  ns1
@       NS  ns.elsewhere.test.
ns1     A   192.0.2.1
www     A   192.0.2.10
www     AAAA 2001:db8::10
mx      MX  10 www
srv     SRV 0 0 80 www
c1      CNAME c2
c2      CNAME www
cout    CNAME www.elsewhere.test.
cnx     CNAME nothere
loop1   CNAME loop2
loop2   CNAME loop1
*.w     A   192.0.2.99
*.w     TXT "wild"
x.w     A   192.0.2.98
sub.w   TXT "sub"
*.wc    CNAME www
a.b.c   A   192.0.2.50
sub     NS  ns.sub
sub     NS  ns.elsewhere.test.
sub     DS  12345 8 2 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
ns.sub  A   192.0.2.53
ns.sub  AAAA 2001:db8::53
deep.sub A  192.0.2.54
big     TXT "0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789"
big     TXT "1123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789"
big     TXT "2123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789"
big     TXT "3123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789"
big     TXT "4123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789"
big     TXT "5123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789"
)";

testutil::Server& server() {
    static testutil::Server s = [] {
        testutil::Server s;
        s.opt.minimalResponses = false;  // NSD's default: most cases below compare with NSD's answers
        s.add("t.test.", kZone);
        return s;
    }();
    return s;
}

bool has(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

const std::string kSoaNeg = "t.test. 60 IN SOA ns1.t.test. host.t.test. 5 3600 600 86400 60";

}  // namespace

TEST_CASE("positive answer: AA, the RRset, apex NS in authority, NS addresses in additional") {
    Resp r = server().ask("www.t.test.", kTypeA);
    CHECK(r.rcode == 0);
    CHECK(r.aa);
    CHECK(r.an == std::vector<std::string>{"www.t.test. 300 IN A 192.0.2.10"});
    CHECK(r.ns.size() == 2);
    CHECK(has(r.ar, "ns1.t.test. 300 IN A 192.0.2.1"));
}

TEST_CASE("NXDOMAIN and NODATA carry the SOA with the negative TTL") {
    Resp nx = server().ask("nothere.t.test.", kTypeA);
    CHECK(nx.rcode == kRcodeNxDomain);
    CHECK(nx.aa);
    CHECK(nx.an.empty());
    CHECK(nx.ns == std::vector<std::string>{kSoaNeg});
    Resp nd = server().ask("www.t.test.", kTypeTXT);
    CHECK(nd.rcode == 0);
    CHECK(nd.aa);
    CHECK(nd.an.empty());
    CHECK(nd.ns == std::vector<std::string>{kSoaNeg});
}

TEST_CASE("an empty non-terminal is NODATA, not NXDOMAIN (RFC 4592 §2.2.2)") {
    for (const char* n : {"b.c.t.test.", "c.t.test."}) {
        Resp r = server().ask(n, kTypeA);
        CHECK(r.rcode == 0);
        CHECK(r.ns == std::vector<std::string>{kSoaNeg});
    }
}

TEST_CASE("wildcards (RFC 4592)") {
    SUBCASE("synthesised with the QNAME as owner") {
        Resp r = server().ask("foo.w.t.test.", kTypeA);
        CHECK(r.aa);
        CHECK(r.an == std::vector<std::string>{"foo.w.t.test. 300 IN A 192.0.2.99"});
    }
    SUBCASE("more labels below the wildcard's parent match too") {
        Resp r = server().ask("a.b.w.t.test.", kTypeTXT);
        CHECK(r.an == std::vector<std::string>{"a.b.w.t.test. 300 IN TXT \"wild\""});
    }
    SUBCASE("an existing name is not overridden") {
        Resp r = server().ask("x.w.t.test.", kTypeA);
        CHECK(r.an == std::vector<std::string>{"x.w.t.test. 300 IN A 192.0.2.98"});
        Resp nd = server().ask("x.w.t.test.", kTypeTXT);  // x.w exists: no wildcard for its other types
        CHECK(nd.an.empty());
        CHECK(nd.ns == std::vector<std::string>{kSoaNeg});
    }
    SUBCASE("closest encloser: below an existing name the wildcard of that name applies, not *.w") {
        Resp r = server().ask("y.sub.w.t.test.", kTypeA);
        CHECK(r.rcode == kRcodeNxDomain);
    }
    SUBCASE("wildcard NODATA") {
        Resp r = server().ask("foo.w.t.test.", kTypeMX);
        CHECK(r.rcode == 0);
        CHECK(r.an.empty());
        CHECK(r.ns == std::vector<std::string>{kSoaNeg});
    }
    SUBCASE("wildcard CNAME is synthesised and chased") {
        Resp r = server().ask("q.wc.t.test.", kTypeA);
        CHECK(r.an == std::vector<std::string>{"q.wc.t.test. 300 IN CNAME www.t.test.",
                                               "www.t.test. 300 IN A 192.0.2.10"});
    }
}

TEST_CASE("CNAME chasing") {
    SUBCASE("a chain inside the zone") {
        Resp r = server().ask("c1.t.test.", kTypeA);
        CHECK(r.aa);
        CHECK(r.an == std::vector<std::string>{"c1.t.test. 300 IN CNAME c2.t.test.",
                                               "c2.t.test. 300 IN CNAME www.t.test.",
                                               "www.t.test. 300 IN A 192.0.2.10"});
    }
    SUBCASE("QTYPE CNAME is not chased") {
        Resp r = server().ask("c1.t.test.", kTypeCNAME);
        CHECK(r.an == std::vector<std::string>{"c1.t.test. 300 IN CNAME c2.t.test."});
    }
    SUBCASE("leaving our zones ends the chase") {
        Resp r = server().ask("cout.t.test.", kTypeA);
        CHECK(r.rcode == 0);
        CHECK(r.an == std::vector<std::string>{"cout.t.test. 300 IN CNAME www.elsewhere.test."});
    }
    SUBCASE("a target that does not exist: NXDOMAIN with the CNAME (RFC 6604)") {
        Resp r = server().ask("cnx.t.test.", kTypeA);
        CHECK(r.rcode == kRcodeNxDomain);
        CHECK(r.an.size() == 1);
        CHECK(r.ns == std::vector<std::string>{kSoaNeg});
    }
    SUBCASE("a loop ends with every RR once") {
        Resp r = server().ask("loop1.t.test.", kTypeA);
        CHECK(r.rcode == 0);
        CHECK(r.an == std::vector<std::string>{"loop1.t.test. 300 IN CNAME loop2.t.test.",
                                               "loop2.t.test. 300 IN CNAME loop1.t.test."});
    }
}

TEST_CASE("delegation: referral with AA clear, NS in authority, glue in additional") {
    for (const char* n : {"sub.t.test.", "deep.sub.t.test.", "x.y.sub.t.test."}) {
        CAPTURE(n);
        Resp r = server().ask(n, kTypeA);
        CHECK(r.rcode == 0);
        CHECK_FALSE(r.aa);
        CHECK(r.an.empty());  // occluded data (deep.sub A) is never returned
        CHECK(r.ns.size() == 2);
        CHECK(has(r.ns, "sub.t.test. 300 IN NS ns.sub.t.test."));
        CHECK(has(r.ar, "ns.sub.t.test. 300 IN A 192.0.2.53"));
        CHECK(has(r.ar, "ns.sub.t.test. 300 IN AAAA 2001:db8::53"));
    }
}

TEST_CASE("DS is answered from the parent side of the cut, authoritatively") {
    Resp r = server().ask("sub.t.test.", kTypeDS);
    CHECK(r.aa);
    REQUIRE(r.an.size() == 1);
    CHECK(r.an[0].rfind("sub.t.test. 300 IN DS 12345 8 2", 0) == 0);
}

TEST_CASE("additional section for MX and SRV targets") {
    Resp mx = server().ask("mx.t.test.", kTypeMX);
    CHECK(has(mx.ar, "www.t.test. 300 IN A 192.0.2.10"));
    CHECK(has(mx.ar, "www.t.test. 300 IN AAAA 2001:db8::10"));
    Resp srv = server().ask("srv.t.test.", kTypeSRV);
    CHECK(has(srv.ar, "www.t.test. 300 IN A 192.0.2.10"));
}

TEST_CASE("outside our zones: REFUSED, on label boundaries") {
    for (const char* n : {"example.org.", "xt.test.", "t.test.evil.", "test."}) {
        CAPTURE(n);
        Resp r = server().ask(n, kTypeA);
        CHECK(r.rcode == kRcodeRefused);
        CHECK_FALSE(r.aa);
    }
}

TEST_CASE("the most specific of nested zones answers, whatever the apex lengths (findZone's length filter)") {
    testutil::Server s;
    const char* soa = "@ 300 IN SOA ns hostmaster 1 7200 3600 1209600 300\n@ NS ns\nns A 192.0.2.53\n";
    s.add("t.", std::string("$ORIGIN t.\n") + soa + "a.b A 192.0.2.1\nx A 192.0.2.2\n");
    s.add("b.t.", std::string("$ORIGIN b.t.\n") + soa + "a A 192.0.2.3\n");
    s.add("long-apex-name.t.", std::string("$ORIGIN long-apex-name.t.\n") + soa + "a A 192.0.2.4\n");
    CHECK(s.ask("a.b.t.", kTypeA).an == std::vector<std::string>{"a.b.t. 300 IN A 192.0.2.3"});
    CHECK(s.ask("x.t.", kTypeA).an == std::vector<std::string>{"x.t. 300 IN A 192.0.2.2"});
    CHECK(s.ask("a.long-apex-name.t.", kTypeA).an ==
          std::vector<std::string>{"a.long-apex-name.t. 300 IN A 192.0.2.4"});
    // A suffix as long as an apex but not one: looked up, not found, the next shorter one is.
    CHECK(s.ask("a.c.t.", kTypeA).rcode == kRcodeNxDomain);
    CHECK(s.ask("a.long-apex-namf.t.", kTypeA).rcode == kRcodeNxDomain);
    CHECK(s.ask("a.u.", kTypeA).rcode == kRcodeRefused);
}

TEST_CASE("QNAME case is preserved in the question and in owners equal to it") {
    auto& s = server();
    auto q = makeQuery("WwW.T.tEsT.", kTypeA);
    auto res = s.raw(q);
    REQUIRE(res.action == Action::Send);
    std::string out(reinterpret_cast<const char*>(s.out.data()), res.len);
    CHECK(out.find(std::string("\3WwW\1T\4tEsT", 11)) == 12);
    Resp r = testutil::decode(s.out.data(), res.len);
    CHECK(r.an == std::vector<std::string>{"WwW.T.tEsT. 300 IN A 192.0.2.10"});
}

TEST_CASE("EDNS0 (RFC 6891)") {
    auto& s = server();
    SUBCASE("no OPT unless asked") {
        CHECK_FALSE(s.ask("www.t.test.", kTypeA).edns);
        CHECK(s.ask(makeQuery("www.t.test.", kTypeA, true)).edns);
    }
    SUBCASE("DO is copied") {
        auto res = s.raw(makeQuery("www.t.test.", kTypeA, true, 1232, true));
        // OPT is the last record: its TTL is octets -6..-3, DO is the top bit of the third.
        CHECK((s.out[res.len - 4] & 0x80) != 0);
        res = s.raw(makeQuery("www.t.test.", kTypeA, true, 1232, false));
        CHECK((s.out[res.len - 4] & 0x80) == 0);
    }
    SUBCASE("version 1 gets BADVERS") {
        auto q = makeQuery("www.t.test.", kTypeA, true);
        q[q.size() - 5] = 1;  // OPT TTL: version octet
        Resp r = s.ask(q);
        CHECK(r.rcode == kRcodeBadVers);
        CHECK(r.an.empty());
    }
    SUBCASE("two OPT records: FORMERR") {
        auto q = makeQuery("www.t.test.", kTypeA, true);
        uint8_t opt[] = {0, 0, 41, 4, 0, 0, 0, 0, 0, 0, 0};
        q.insert(q.end(), opt, opt + sizeof opt);
        q[11] = 2;
        CHECK(s.ask(q).rcode == kRcodeFormErr);
    }
    SUBCASE("an OPT in the authority section: FORMERR") {
        auto q = makeQuery("www.t.test.", kTypeA, true);
        q[11] = 0;
        q[9] = 1;  // NSCOUNT
        CHECK(s.ask(q).rcode == kRcodeFormErr);
    }
    SUBCASE("an unknown option is ignored") {
        auto q = makeQuery("www.t.test.", kTypeA, true);
        q[q.size() - 1] = 6;  // RDLENGTH
        uint8_t o[] = {0xFE, 0xED, 0, 2, 0xAB, 0xCD};
        q.insert(q.end(), o, o + sizeof o);
        Resp r = s.ask(q);
        CHECK(r.rcode == 0);
        CHECK(r.an.size() == 1);
    }
}

TEST_CASE("truncation: TC and never a partial RRset") {
    auto& s = server();
    Resp udp = s.ask("big.t.test.", kTypeTXT);  // ~630 octets of TXT: over 512 without EDNS
    CHECK(udp.tc);
    CHECK(udp.an.empty());
    CHECK(udp.size <= 512);
    Resp small = s.ask(makeQuery("big.t.test.", kTypeTXT, true, 100));  // below 512 counts as 512
    CHECK(small.tc);
    Resp edns = s.ask(makeQuery("big.t.test.", kTypeTXT, true, 4096));
    CHECK_FALSE(edns.tc);
    CHECK(edns.an.size() == 6);
    Resp tcp = s.ask("big.t.test.", kTypeTXT, true);
    CHECK_FALSE(tcp.tc);
    CHECK(tcp.an.size() == 6);
}

TEST_CASE("udp_payload_max caps what the requestor offers") {
    testutil::Server s;
    s.add("t.test.", kZone);
    s.opt.udpPayloadMax = 600;
    Resp r = s.ask(makeQuery("big.t.test.", kTypeTXT, true, 4096));
    CHECK(r.tc);
    CHECK(r.size <= 600);
}

TEST_CASE("CH class: REFUSED unless configured, then TXT") {
    testutil::Server s;
    s.add("t.test.", kZone);
    CHECK(s.ask(makeQuery("version.bind.", kTypeTXT, false, 0, false, kClassCH)).rcode == kRcodeRefused);
    s.opt.version = "gslbd 1";
    Resp r = s.ask(makeQuery("VERSION.bind.", kTypeTXT, false, 0, false, kClassCH));
    CHECK(r.rcode == 0);
    REQUIRE(r.an.size() == 1);
    CHECK(r.an[0].find("\"gslbd 1\"") != std::string::npos);
}

TEST_CASE("ANY is answered with one RRset on every transport (RFC 8482 §4.1); the SOA at the apex") {
    Resp u = server().ask("www.t.test.", kTypeANY);
    CHECK(u.an == std::vector<std::string>{"www.t.test. 300 IN A 192.0.2.10"});
    Resp t = server().ask("www.t.test.", kTypeANY, true);
    CHECK(t.an.size() == 1);
    Resp apex = server().ask("t.test.", kTypeANY);
    REQUIRE(apex.an.size() == 1);
    CHECK(apex.an[0].find(" SOA ") != std::string::npos);
}

TEST_CASE("additional section: no repeat of the answer, nothing for CNAME answers, no apex NS for DS") {
    Resp ns1 = server().ask("ns1.t.test.", kTypeA);
    CHECK(ns1.an.size() == 1);
    CHECK_FALSE(has(ns1.ar, "ns1.t.test. 300 IN A 192.0.2.1"));
    Resp c = server().ask("c2.t.test.", kTypeCNAME);
    CHECK_FALSE(has(c.ar, "www.t.test. 300 IN A 192.0.2.10"));
    CHECK(has(c.ar, "ns1.t.test. 300 IN A 192.0.2.1"));  // the apex NS's address, as NSD
    Resp ds = server().ask("sub.t.test.", kTypeDS);
    CHECK(ds.ns.empty());
}

TEST_CASE("AXFR: Axfr action over TCP at an apex; NOTIMP over UDP") {
    auto& s = server();
    auto res = s.raw(makeQuery("t.test.", kTypeAXFR), true);
    CHECK(res.action == Action::Transfer);
    REQUIRE(res.zone);
    CHECK(res.zone->name() == "t.test.");  // the transfer itself: tests/zones/test_axfr.cpp
    CHECK(s.ask("t.test.", kTypeAXFR).rcode == kRcodeNotImp);
}

TEST_CASE("refuse(): the question echoed with the rcode asked for") {
    auto q = makeQuery("t.test.", kTypeAXFR);
    std::vector<uint8_t> out(512);
    AnswerOptions opt;
    Resp r = testutil::decode(out.data(), refuse(opt, {q.data(), q.size()}, {out.data(), out.size()}));
    CHECK(r.rcode == kRcodeRefused);
    r = testutil::decode(out.data(),
                         refuse(opt, {q.data(), q.size()}, {out.data(), out.size()}, kRcodeServFail));
    CHECK(r.rcode == kRcodeServFail);
    CHECK_FALSE(r.aa);
}

TEST_CASE("refuse(): the OPT record offers the configured payload size, not the default") {
    auto q = makeQuery("t.test.", kTypeAXFR, true);
    std::vector<uint8_t> out(512);
    AnswerOptions opt;
    opt.udpPayloadMax = 1400;
    size_t n = refuse(opt, {q.data(), q.size()}, {out.data(), out.size()});
    REQUIRE(n == q.size());  // the same question, an empty OPT
    CHECK(out[3] == kRcodeRefused);
    size_t optAt = n - 11;
    CHECK(out[optAt + 2] == 41);    // OPT
    CHECK(out[optAt + 3] == 0x05);  // 1400 = 0x0578 in the OPT's CLASS field
    CHECK(out[optAt + 4] == 0x78);
}

TEST_CASE("the most specific zone answers; DS for a child apex comes from the parent") {
    testutil::Server s;
    s.add("t.test.", kZone);
    s.add("sub.t.test.",
          "@ 300 IN SOA ns.sub host 9 3600 600 86400 60\n@ NS ns.sub\nns A 192.0.2.53\ndeep A 192.0.2.77\n");
    Resp r = s.ask("deep.sub.t.test.", kTypeA);
    CHECK(r.aa);
    // No $TTL: the SOA's TTL, the last written before it (RFC 1035 §5.1), not the MINIMUM.
    CHECK(r.an == std::vector<std::string>{"deep.sub.t.test. 300 IN A 192.0.2.77"});
    Resp ds = s.ask("sub.t.test.", kTypeDS);
    CHECK(ds.aa);
    CHECK(ds.an.size() == 1);
}

TEST_CASE(
    "minimal_responses (the default): no NS RRset in authority of positive answers; referrals unchanged") {
    testutil::Server s;
    s.add("t.test.", kZone);
    Resp r = s.ask("www.t.test.", kTypeA);
    CHECK(r.aa);
    CHECK(r.an.size() == 1);
    CHECK(r.ns.empty());
    CHECK(r.ar.empty());
    Resp mx = s.ask("mx.t.test.", kTypeMX);  // additional data for MX targets stays
    CHECK(has(mx.ar, "www.t.test. 300 IN A 192.0.2.10"));
    Resp ref = s.ask("deep.sub.t.test.", kTypeA);
    CHECK_FALSE(ref.aa);
    CHECK(ref.ns.size() == 2);
    CHECK(has(ref.ar, "ns.sub.t.test. 300 IN A 192.0.2.53"));
    Resp nx = s.ask("nothere.t.test.", kTypeA);
    CHECK(nx.ns == std::vector<std::string>{kSoaNeg});
}

// DNAME (RFC 6672): records below a DNAME owner are redirected; the owner's own data is ordinary.
namespace {
const char* kDnameZone = R"($ORIGIN d.test.
$TTL 300
@       SOA ns1 host 1 3600 600 86400 60
@       NS  ns1
ns1     A   192.0.2.1
old 600 DNAME new
old     A   192.0.2.5
below.old A 192.0.2.6
www.new A   192.0.2.10
ext     DNAME example.net.
loopa   DNAME loopb
loopb   DNAME loopa
long    DNAME aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.
)";
testutil::Server& dserver() {
    static testutil::Server s = [] {
        testutil::Server s;
        s.add("d.test.", kDnameZone);
        return s;
    }();
    return s;
}
const std::string kDSoa = "d.test. 60 IN SOA ns1.d.test. host.d.test. 1 3600 600 86400 60";
}  // namespace

TEST_CASE("DNAME: the DNAME, a CNAME synthesised with its TTL, and the chain followed in the zone") {
    Resp r = dserver().ask("www.old.d.test.", kTypeA);
    CHECK(r.rcode == 0);
    CHECK(r.aa);
    CHECK(r.an == std::vector<std::string>{"old.d.test. 600 IN DNAME new.d.test.",
                                           "www.old.d.test. 600 IN CNAME www.new.d.test.",
                                           "www.new.d.test. 300 IN A 192.0.2.10"});
    CHECK(r.ns.empty());
}

TEST_CASE("DNAME: at the QNAME itself it is ordinary data") {
    Resp a = dserver().ask("old.d.test.", kTypeA);
    CHECK(a.an == std::vector<std::string>{"old.d.test. 300 IN A 192.0.2.5"});
    Resp d = dserver().ask("old.d.test.", kTypeDNAME);
    CHECK(d.an == std::vector<std::string>{"old.d.test. 600 IN DNAME new.d.test."});
}

TEST_CASE("DNAME: data below the owner is occluded; a chain that ends nowhere is NXDOMAIN (RFC 6604)") {
    Resp r = dserver().ask("below.old.d.test.", kTypeA);
    CHECK(r.rcode == kRcodeNxDomain);
    CHECK(r.an == std::vector<std::string>{"old.d.test. 600 IN DNAME new.d.test.",
                                           "below.old.d.test. 600 IN CNAME below.new.d.test."});
    CHECK(r.ns == std::vector<std::string>{kDSoa});
}

TEST_CASE("DNAME: a target outside our zones ends the answer; a CNAME query stops at the CNAME") {
    Resp r = dserver().ask("x.ext.d.test.", kTypeA);
    CHECK(r.rcode == 0);
    CHECK(r.an == std::vector<std::string>{"ext.d.test. 300 IN DNAME example.net.",
                                           "x.ext.d.test. 300 IN CNAME x.example.net."});
    Resp c = dserver().ask("www.old.d.test.", kTypeCNAME);
    CHECK(c.an == std::vector<std::string>{"old.d.test. 600 IN DNAME new.d.test.",
                                           "www.old.d.test. 600 IN CNAME www.new.d.test."});
}

TEST_CASE("DNAME: a loop ends with every DNAME once") {
    Resp r = dserver().ask("x.loopa.d.test.", kTypeA);
    CHECK(r.rcode == 0);
    CHECK(r.an == std::vector<std::string>{"loopa.d.test. 300 IN DNAME loopb.d.test.",
                                           "x.loopa.d.test. 300 IN CNAME x.loopb.d.test.",
                                           "loopb.d.test. 300 IN DNAME loopa.d.test.",
                                           "x.loopb.d.test. 300 IN CNAME x.loopa.d.test."});
}

TEST_CASE("DNAME: YXDOMAIN when the substituted name would exceed 255 octets (RFC 6672 §2.2)") {
    const std::string target =
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa."
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa."
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa."
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.";
    Resp ok = dserver().ask("a.long.d.test.", kTypeA, true);  // 2 + 241 octets: fits (over TCP: > 512)
    CHECK(ok.rcode == 0);
    REQUIRE(ok.an.size() == 2);
    CHECK(ok.an[1] == "a.long.d.test. 300 IN CNAME a." + target);
    std::string label(63, 'b');
    Resp yx = dserver().ask(label + ".long.d.test.", kTypeA);  // 64 + 241 octets
    CHECK(yx.rcode == kRcodeYxDomain);
    CHECK(yx.aa);
    CHECK(yx.an == std::vector<std::string>{"long.d.test. 300 IN DNAME " + target});
}

TEST_CASE("DNAME: a synthesised CNAME that does not fit leaves nothing of itself behind (TC)") {
    // Over UDP without EDNS (512 octets): the 253-octet DNAME fits after the question, the 255-octet CNAME
    // does not. The message ends where its counted records end: no half-written record before the end.
    auto& s = dserver();
    auto q = testutil::makeQuery("a.long.d.test.", kTypeA);
    auto res = s.raw(q);
    REQUIRE(res.action == Action::Send);
    Resp r = testutil::decode(s.out.data(), res.len);
    CHECK(r.tc);
    CHECK(r.an.size() == 1);
    CHECK(testutil::countedEnd(s.out.data(), res.len) == res.len);
    CHECK(res.len == 12 + 15 + 4 + 2 + 10 + 241);
}

// SVCB/HTTPS (RFC 9460 §4.1): the A/AAAA of TargetNames in the zone go in the additional section, and for
// AliasMode the target's own SVCB/HTTPS RRset (the client's next question). Compared with Knot 3.2.6, which
// does the same except that it also adds a ServiceMode target's HTTPS (a client never asks for it, §2.4.3)
// and leaves out the owner's addresses for ServiceMode "." (which names the owner, §2.5.2); NSD 4.6 adds
// nothing.
namespace {
const char* kSvcZone = R"($ORIGIN s.test.
$TTL 300
@       SOA ns1 h 1 3600 600 86400 60
@       NS  ns1
ns1     A   192.0.2.53
svc     A   192.0.2.1
svc     AAAA 2001:db8::1
svc     HTTPS 1 . alpn=h2
svc2    A   192.0.2.2
alias   HTTPS 0 svc
alias2  HTTPS 0 pool
pool    HTTPS 1 svc2 alpn=h2
pool    HTTPS 2 svc
multi   HTTPS 1 svc2
multi   HTTPS 2 svc
out     HTTPS 1 www.example.net.
self    HTTPS 0 self
none    HTTPS 0 .
sv      SVCB 0 svc
sv2     SVCB 1 svc2 port=8443
cut     NS  ns.cut
ns.cut  A   192.0.2.7
occl    HTTPS 1 ns.cut
)";
}  // namespace

TEST_CASE("additional section for SVCB and HTTPS targets (RFC 9460 §4.1)") {
    testutil::Server s;
    s.add("s.test.", kSvcZone);
    using V = std::vector<std::string>;
    Resp r = s.ask("alias.s.test.", kTypeHTTPS);
    CHECK(r.aa);
    CHECK(r.an == V{"alias.s.test. 300 IN HTTPS 0 svc.s.test."});
    CHECK(r.ns.empty());
    CHECK(r.ar == V{"svc.s.test. 300 IN A 192.0.2.1", "svc.s.test. 300 IN AAAA 2001:db8::1",
                    "svc.s.test. 300 IN HTTPS 1 . alpn=h2"});
    // ServiceMode ".": the owner is the target, its addresses follow.
    r = s.ask("svc.s.test.", kTypeHTTPS);
    CHECK(r.an == V{"svc.s.test. 300 IN HTTPS 1 . alpn=h2"});
    CHECK(r.ar == V{"svc.s.test. 300 IN A 192.0.2.1", "svc.s.test. 300 IN AAAA 2001:db8::1"});
    // An alias to a ServiceMode RRset: that RRset, and the addresses of its own targets.
    r = s.ask("alias2.s.test.", kTypeHTTPS);
    CHECK(r.an == V{"alias2.s.test. 300 IN HTTPS 0 pool.s.test."});
    CHECK(r.ar == V{"svc2.s.test. 300 IN A 192.0.2.2", "svc.s.test. 300 IN A 192.0.2.1",
                    "svc.s.test. 300 IN AAAA 2001:db8::1", "pool.s.test. 300 IN HTTPS 1 svc2.s.test. alpn=h2",
                    "pool.s.test. 300 IN HTTPS 2 svc.s.test."});
    // ServiceMode targets: their addresses, A first then AAAA, not their HTTPS.
    r = s.ask("multi.s.test.", kTypeHTTPS);
    CHECK(r.an.size() == 2);
    CHECK(r.ar == V{"svc2.s.test. 300 IN A 192.0.2.2", "svc.s.test. 300 IN A 192.0.2.1",
                    "svc.s.test. 300 IN AAAA 2001:db8::1"});
    // SVCB itself, both modes.
    r = s.ask("sv.s.test.", kTypeSVCB);
    CHECK(r.an == V{"sv.s.test. 300 IN SVCB 0 svc.s.test."});
    CHECK(r.ar == V{"svc.s.test. 300 IN A 192.0.2.1", "svc.s.test. 300 IN AAAA 2001:db8::1"});
    r = s.ask("sv2.s.test.", kTypeSVCB);
    CHECK(r.ar == V{"svc2.s.test. 300 IN A 192.0.2.2"});
    // Nothing to add: a target outside the zone, an alias to itself (already the answer), AliasMode "."
    // (no service), a target below a zone cut (occluded, not glue).
    for (const char* n : {"out.s.test.", "self.s.test.", "none.s.test.", "occl.s.test."}) {
        CAPTURE(n);
        r = s.ask(n, kTypeHTTPS);
        CHECK(r.rcode == kRcodeNoError);
        CHECK(r.an.size() == 1);
        CHECK(r.ar.empty());
    }
    // A/AAAA queries are unchanged.
    r = s.ask("svc.s.test.", kTypeA);
    CHECK(r.ar.empty());
}

TEST_CASE("SVCB/HTTPS additional data is optional: it is left out, never truncating, when it does not fit") {
    testutil::Server s;
    std::string zone = std::string(kSvcZone);
    for (int i = 0; i < 40; ++i) zone += "svc AAAA 2001:db8::" + std::to_string(100 + i) + "\n";
    s.add("s.test.", zone);
    Resp r = s.ask("alias.s.test.", kTypeHTTPS);  // plain UDP: 512 octets
    CHECK_FALSE(r.tc);
    CHECK(r.an.size() == 1);
    CHECK(r.ar ==
          std::vector<std::string>{"svc.s.test. 300 IN A 192.0.2.1", "svc.s.test. 300 IN HTTPS 1 . alpn=h2"});
    CHECK(r.size <= 512);
}
