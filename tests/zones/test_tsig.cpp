// TSIG (zones/tsig.cpp, RFC 8945), checked against ldns' independent implementation in both directions:
// ldns signs requests we verify, and verifies the responses (single and AXFR multi-message) we sign.
#include <doctest/doctest.h>

#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "zones/ldns.hpp"  // not <ldns/ldns.h>: see there
#include "zones/axfr.hpp"
#include "zones/packet.hpp"
#include "zones/rrtype.hpp"
#include "zones/tsig.hpp"

using namespace gslb::zones;
using testutil::makeQuery;

namespace {

const char* kSecret = "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=";  // octets 1..32

TsigKey makeKey(const std::string& name, TsigAlgorithm alg, const char* b64 = kSecret) {
    TsigKey k;
    k.label = name;
    REQUIRE(textToName(name, std::string_view("\0", 1), k.name));
    k.algorithm = alg;
    REQUIRE(decodeBase64(b64, k.secret));
    return k;
}

// ldns' name for an algorithm.
const char* ldnsAlg(TsigAlgorithm a) {
    switch (a) {
        case TsigAlgorithm::HmacMd5:
            return "hmac-md5.sig-alg.reg.int.";
        case TsigAlgorithm::HmacSha1:
            return "hmac-sha1.";
        case TsigAlgorithm::HmacSha224:
            return "hmac-sha224.";
        case TsigAlgorithm::HmacSha256:
            return "hmac-sha256.";
        case TsigAlgorithm::HmacSha384:
            return "hmac-sha384.";
        case TsigAlgorithm::HmacSha512:
            return "hmac-sha512.";
    }
    return "";
}

// A query signed by ldns; `mac` gets a copy of its MAC rdf (for verifying the response with ldns).
std::vector<uint8_t> ldnsSignedQuery(const std::string& qname, ldns_rr_type type, const char* keyName,
                                     const char* alg, const char* secret, ldns_rdf** mac) {
    ldns_pkt* p = ldns_pkt_query_new(ldns_dname_new_frm_str(qname.c_str()), type, LDNS_RR_CLASS_IN, 0);
    ldns_pkt_set_id(p, 0x4242);
    REQUIRE(ldns_pkt_tsig_sign(p, keyName, secret, 300, alg, nullptr) == LDNS_STATUS_OK);
    uint8_t* wire = nullptr;
    size_t n = 0;
    REQUIRE(ldns_pkt2wire(&wire, p, &n) == LDNS_STATUS_OK);
    std::vector<uint8_t> out(wire, wire + n);
    free(wire);
    if (mac) *mac = ldns_rdf_clone(ldns_rr_rdf(ldns_pkt_tsig(p), 3));
    ldns_pkt_free(p);
    return out;
}

// ldns' verdict on a response we signed; `mac` is the prior MAC, replaced by this message's.
bool ldnsVerify(const uint8_t* wire, size_t n, const char* keyName, const char* secret, ldns_rdf** mac,
                bool timersOnly) {
    ldns_pkt* p = nullptr;
    if (ldns_wire2pkt(&p, wire, n) != LDNS_STATUS_OK) return false;
    bool ok = ldns_pkt_tsig_verify_next(p, wire, n, keyName, secret, *mac, timersOnly ? 1 : 0);
    if (ok) {
        ldns_rdf_deep_free(*mac);
        *mac = ldns_rdf_clone(ldns_rr_rdf(ldns_pkt_tsig(p), 3));
    }
    ldns_pkt_free(p);
    return ok;
}

uint64_t now() {
    return uint64_t(time(nullptr));
}

const char* kZone =
    "$ORIGIN x.test.\n$TTL 300\n@ SOA ns1 host 7 3600 600 86400 60\n@ NS ns1\nns1 A 192.0.2.1\n";

}  // namespace

TEST_CASE("base64 secrets: tsig-keygen's and keymgr's forms, and bad ones") {
    std::vector<uint8_t> out;
    CHECK(decodeBase64("c2VjcmV0", out));
    CHECK(std::string(out.begin(), out.end()) == "secret");
    CHECK(decodeBase64("c2VjcmV0cw==", out));
    CHECK(std::string(out.begin(), out.end()) == "secrets");
    CHECK(decodeBase64(" c2Vj\ncmV0c3M=\n", out));
    CHECK(std::string(out.begin(), out.end()) == "secretss");
    CHECK_FALSE(decodeBase64("c2Vj*mV0", out));
    CHECK_FALSE(decodeBase64("c2VjcmV0=", out));       // padding where none belongs
    CHECK_FALSE(decodeBase64("c2VjcmV0cw==cw", out));  // data after padding
    CHECK_FALSE(decodeBase64("", out));
    std::string err;
    CHECK(parseSecretText("key \"xfr\" {\n\talgorithm hmac-sha256;\n\tsecret \"c2VjcmV0\";\n};\n", out, err));
    CHECK(std::string(out.begin(), out.end()) == "secret");
    CHECK(
        parseSecretText("# hmac-sha256:xfr:c2VjcmV0\nkey:\n  - id: xfr\n    algorithm: hmac-sha256\n"
                        "    secret: c2VjcmV0\n",
                        out, err));
    CHECK(std::string(out.begin(), out.end()) == "secret");
    CHECK(parseSecretText("key \"secret-xfr\" {\n  secret \"c2VjcmV0\";\n};\n", out, err));
    CHECK(std::string(out.begin(), out.end()) == "secret");
    CHECK(parseSecretText("c2VjcmV0\n", out, err));
    CHECK_FALSE(parseSecretText("\n", out, err));
    CHECK(err == "holds no secret");
    CHECK_FALSE(parseSecretText("not base64!", out, err));
}

TEST_CASE("algorithm names as BIND and Knot write them") {
    TsigAlgorithm a;
    CHECK(tsigAlgorithmFromName("HMAC-SHA256", a));
    CHECK(a == TsigAlgorithm::HmacSha256);
    CHECK(tsigAlgorithmFromName("hmac-md5.sig-alg.reg.int.", a));
    CHECK(a == TsigAlgorithm::HmacMd5);
    CHECK_FALSE(tsigAlgorithmFromName("gss-tsig", a));
    CHECK(tsigMacSize(TsigAlgorithm::HmacSha512) == 64);
}

TEST_CASE("requests signed by ldns verify, for every algorithm; the response we sign verifies in ldns") {
    testutil::Server s;
    s.add("x.test.", kZone);
    // ldns 1.8 has no HMAC-SHA224 or -SHA384 (LDNS_STATUS_CRYPTO_UNKNOWN_ALGO); the NOTIFY case below
    // signs and verifies them on both sides here (and kdig agrees, by hand).
    for (auto alg : {TsigAlgorithm::HmacMd5, TsigAlgorithm::HmacSha1, TsigAlgorithm::HmacSha256,
                     TsigAlgorithm::HmacSha512}) {
        std::string name = tsigAlgorithmName(alg);
        CAPTURE(name);
        std::vector<TsigKey> keys = {makeKey("other.", TsigAlgorithm::HmacSha256), makeKey("xfr.", alg)};
        ldns_rdf* mac = nullptr;
        auto q = ldnsSignedQuery("x.test.", LDNS_RR_TYPE_SOA, "xfr.", ldnsAlg(alg), kSecret, &mac);
        auto res = s.raw(q);
        REQUIRE(res.tsigAt > 0);
        TsigSession ts;
        REQUIRE(verifyRequest({q.data(), q.size()}, res.tsigAt, keys, now(), ts));
        CHECK(ts.error == kTsigNoError);
        CHECK(ts.key == &keys[1]);
        CHECK(ts.originalId == 0x4242);
        size_t n = signResponse({s.out.data(), s.out.size()}, res.len, ts, now());
        REQUIRE(n > res.len);
        CHECK(n - res.len == tsigRecordSize(keys[1]));
        CHECK(ldnsVerify(s.out.data(), n, "xfr.", kSecret, &mac, false));
        auto r = testutil::decode(s.out.data(), n);
        CHECK(r.rcode == 0);
        CHECK(r.an.size() == 1);
        ldns_rdf_deep_free(mac);
    }
}

TEST_CASE("BADKEY, BADSIG, BADTIME (RFC 8945 §5.2) and their error responses") {
    testutil::Server s;
    s.add("x.test.", kZone);
    std::vector<TsigKey> keys = {makeKey("xfr.", TsigAlgorithm::HmacSha256)};
    const char* wrong = "AgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4fICE=";
    TsigSession ts;

    SUBCASE("an unknown key name") {
        auto q = ldnsSignedQuery("x.test.", LDNS_RR_TYPE_SOA, "nokey.", "hmac-sha256.", kSecret, nullptr);
        auto res = s.raw(q);
        REQUIRE(verifyRequest({q.data(), q.size()}, res.tsigAt, keys, now(), ts));
        CHECK(ts.error == kTsigBadKey);
        CHECK(signResponse({s.out.data(), s.out.size()}, res.len, ts, now()) == 0);  // never signed
    }
    SUBCASE("the right name with another algorithm is BADKEY too") {
        auto q = ldnsSignedQuery("x.test.", LDNS_RR_TYPE_SOA, "xfr.", "hmac-sha1.", kSecret, nullptr);
        REQUIRE(verifyRequest({q.data(), q.size()}, s.raw(q).tsigAt, keys, now(), ts));
        CHECK(ts.error == kTsigBadKey);
    }
    SUBCASE("a wrong secret: BADSIG, answered NOTAUTH with an unsigned TSIG RR") {
        auto q = ldnsSignedQuery("x.test.", LDNS_RR_TYPE_SOA, "xfr.", "hmac-sha256.", wrong, nullptr);
        auto res = s.raw(q);
        REQUIRE(verifyRequest({q.data(), q.size()}, res.tsigAt, keys, now(), ts));
        CHECK(ts.error == kTsigBadSig);
        size_t len =
            refuse(AnswerOptions{}, {q.data(), q.size()}, {s.out.data(), s.out.size()}, kRcodeNotAuth);
        TsigRecord req;
        REQUIRE(parseTsig({q.data(), q.size()}, res.tsigAt, req));
        size_t n = tsigErrorResponse({s.out.data(), s.out.size()}, len, req, ts, now());
        REQUIRE(n > len);
        TsigRecord r;
        REQUIRE(findTsig({s.out.data(), n}, r) == TsigFind::Found);
        CHECK(r.error == kTsigBadSig);
        CHECK(r.macLen == 0);
        CHECK(r.originalId == 0x4242);
        CHECK((s.out[3] & 0x0F) == kRcodeNotAuth);
        CHECK(s.out[7] == 0);  // no answer records
    }
    SUBCASE("a clock beyond the fudge: BADTIME, signed, with our time in Other Data") {
        ldns_rdf* mac = nullptr;
        auto q = ldnsSignedQuery("x.test.", LDNS_RR_TYPE_SOA, "xfr.", "hmac-sha256.", kSecret, &mac);
        auto res = s.raw(q);
        uint64_t later = now() + 301 + 5;  // ldns signed "now"; our clock is 5 minutes ahead
        REQUIRE(verifyRequest({q.data(), q.size()}, res.tsigAt, keys, later, ts));
        CHECK(ts.error == kTsigBadTime);
        CHECK(ts.skew >= 301);
        size_t len =
            refuse(AnswerOptions{}, {q.data(), q.size()}, {s.out.data(), s.out.size()}, kRcodeNotAuth);
        TsigRecord req;
        REQUIRE(parseTsig({q.data(), q.size()}, res.tsigAt, req));
        size_t n = tsigErrorResponse({s.out.data(), s.out.size()}, len, req, ts, later);
        TsigRecord r;
        REQUIRE(findTsig({s.out.data(), n}, r) == TsigFind::Found);
        CHECK(r.error == kTsigBadTime);
        CHECK(r.macLen == 32);
        CHECK(r.timeSigned == req.timeSigned);
        REQUIRE(r.otherLen == 6);
        uint64_t other = 0;
        for (int i = 0; i < 6; ++i) other = other << 8 | r.other[i];
        CHECK(other == later);
        ldns_rdf_deep_free(mac);
    }
    // The request signed by ldns with its MAC cut to its first `octets` (a truncation, RFC 8945 §5.2.2.1 4):
    // MAC Size, then the rest of the rdata moved down and RDLENGTH fixed.
    auto truncated = [&](size_t octets, size_t& at) {
        auto q = ldnsSignedQuery("x.test.", LDNS_RR_TYPE_SOA, "xfr.", "hmac-sha256.", kSecret, nullptr);
        at = s.raw(q).tsigAt;
        TsigRecord r;
        REQUIRE(parseTsig({q.data(), q.size()}, at, r));
        size_t macAt = size_t(r.mac - q.data());
        q[macAt - 2] = 0;
        q[macAt - 1] = uint8_t(octets);
        q.erase(q.begin() + long(macAt + octets), q.begin() + long(macAt + 32));
        size_t rdlenAt = at + r.keyNameLen + 8;
        uint16_t rdlen = uint16_t((q[rdlenAt] << 8 | q[rdlenAt + 1]) - (32 - octets));
        q[rdlenAt] = uint8_t(rdlen >> 8);
        q[rdlenAt + 1] = uint8_t(rdlen);
        return q;
    };
    SUBCASE("a MAC shorter than max(10, half the hash) is a format error (§5.2.2.1)") {
        size_t at = 0;
        auto q = truncated(15, at);
        CHECK_FALSE(verifyRequest({q.data(), q.size()}, at, keys, now(), ts));
    }
    SUBCASE("a truncated MAC below the key's min_mac_size: BADTRUNC, signed with the full MAC (§5.2.4)") {
        size_t at = 0;
        auto q = truncated(16, at);
        REQUIRE(verifyRequest({q.data(), q.size()}, at, keys, now(), ts));
        CHECK(ts.error == kTsigBadTrunc);  // the default policy: the full hash
        CHECK(ts.macLen == 16);            // the request MAC the signed error covers, as it came
        size_t len =
            refuse(AnswerOptions{}, {q.data(), q.size()}, {s.out.data(), s.out.size()}, kRcodeNotAuth);
        TsigRecord req;
        REQUIRE(parseTsig({q.data(), q.size()}, at, req));
        uint64_t t = now();
        size_t n = tsigErrorResponse({s.out.data(), s.out.size()}, len, req, ts, t);
        TsigRecord r;
        REQUIRE(findTsig({s.out.data(), n}, r) == TsigFind::Found);
        CHECK(r.error == kTsigBadTrunc);
        CHECK(r.macLen == 32);
        CHECK(r.timeSigned == t);
        CHECK(r.otherLen == 0);
        CHECK((s.out[3] & 0x0F) == kRcodeNotAuth);
        // The client (who holds the key and the truncated MAC it sent) verifies the signed error.
        TsigSession client;
        client.key = &keys[0];
        std::memcpy(client.mac, req.mac, 16);
        client.macLen = 16;
        CHECK(verifyResponse({s.out.data(), n}, client, t) == kTsigBadTrunc);
        // A wrong MAC stays BADSIG, and a late clock stays BADTIME: truncation is checked last.
        q[size_t(req.mac - q.data())] ^= 1;
        REQUIRE(verifyRequest({q.data(), q.size()}, at, keys, now(), ts));
        CHECK(ts.error == kTsigBadSig);
        q[size_t(req.mac - q.data())] ^= 1;
        REQUIRE(verifyRequest({q.data(), q.size()}, at, keys, now() + 400, ts));
        CHECK(ts.error == kTsigBadTime);
        // With min_mac_size = 16 the same request verifies.
        keys[0].minMacSize = 16;
        REQUIRE(verifyRequest({q.data(), q.size()}, at, keys, now(), ts));
        CHECK(ts.error == kTsigNoError);
    }
}

TEST_CASE(
    "an AXFR signed message by message, each MAC chained to the one before (§5.3.1), verifies in ldns") {
    testutil::Server s;
    std::string z = kZone;
    for (int i = 0; i < 400; ++i) z += "h" + std::to_string(i) + " TXT \"" + std::string(40, 'x') + "\"\n";
    s.add("x.test.", z);
    std::vector<TsigKey> keys = {makeKey("xfr.", TsigAlgorithm::HmacSha256)};
    ldns_rdf* mac = nullptr;
    auto q = ldnsSignedQuery("x.test.", LDNS_RR_TYPE_AXFR, "xfr.", "hmac-sha256.", kSecret, &mac);
    auto res = s.raw(q, true);
    REQUIRE(res.action == Action::Transfer);
    TsigSession ts;
    REQUIRE(verifyRequest({q.data(), q.size()}, res.tsigAt, keys, now(), ts));
    REQUIRE(ts.error == kTsigNoError);
    const size_t msgMax = 2048;
    XfrWriter w(*res.zone, {q.data(), q.size()}, msgMax - tsigRecordSize(keys[0]));
    std::vector<uint8_t> buf(msgMax);
    size_t messages = 0, records = 0;
    while (!w.done()) {
        size_t n = w.next({buf.data(), buf.size()});
        REQUIRE(n > 0);
        n = signResponse({buf.data(), buf.size()}, n, ts, now());
        REQUIRE(n > 0);
        REQUIRE(n <= msgMax);
        CHECK(ldnsVerify(buf.data(), n, "xfr.", kSecret, &mac, messages > 0));
        records += testutil::decode(buf.data(), n).an.size();
        ++messages;
    }
    CHECK(messages > 5);
    CHECK(records == res.zone->recordCount() + 1);
    ldns_rdf_deep_free(mac);
}

TEST_CASE("a signed NOTIFY verifies in ldns, and the signed reply verifies here; a forged one does not") {
    TsigKey key = makeKey("xfr.", TsigAlgorithm::HmacSha256);
    SUBCASE("hmac-sha256") {}
    SUBCASE("hmac-sha224") {
        key = makeKey("xfr.", TsigAlgorithm::HmacSha224);
    }
    SUBCASE("hmac-sha384") {
        key = makeKey("xfr.", TsigAlgorithm::HmacSha384);
    }
    std::vector<TsigKey> keys = {key};
    std::vector<uint8_t> msg = makeQuery("x.test.", kTypeSOA);
    const size_t len = msg.size();
    msg[2] = 0x24;  // NOTIFY, AA
    msg.resize(512);
    TsigSession req;
    size_t n = signRequest({msg.data(), msg.size()}, len, key, now(), req);
    REQUIRE(n > len);
    if (key.algorithm != TsigAlgorithm::HmacSha224 && key.algorithm != TsigAlgorithm::HmacSha384) {
        ldns_rdf* none = nullptr;
        CHECK(ldnsVerify(msg.data(), n, "xfr.", kSecret, &none, false));
        ldns_rdf_deep_free(none);
    }

    // The secondary's side: it verifies and signs its reply with the request's MAC.
    TsigRecord r;
    REQUIRE(findTsig({msg.data(), n}, r) == TsigFind::Found);
    TsigSession srv;
    REQUIRE(verifyRequest({msg.data(), n}, r.start, keys, now(), srv));
    REQUIRE(srv.error == kTsigNoError);
    std::vector<uint8_t> reply(msg.begin(), msg.begin() + long(len));
    reply[2] |= 0x80;
    reply[11] = 0;  // the copy's ARCOUNT counted the request's TSIG RR
    reply.resize(512);
    size_t m = signResponse({reply.data(), reply.size()}, len, srv, now());
    REQUIRE(m > 0);
    CHECK(verifyResponse({reply.data(), m}, req, now()) == kTsigNoError);
    CHECK(verifyResponse({reply.data(), len}, req, now()) == kTsigBadSig);  // unsigned: not believed
    reply[5] ^= 1;                                                          // altered in flight
    CHECK(verifyResponse({reply.data(), m}, req, now()) == kTsigBadSig);
    reply[5] ^= 1;
    CHECK(verifyResponse({reply.data(), m}, req, now() + 1000) == kTsigBadTime);
}

TEST_CASE("a TSIG RR that is not the last record is a format error (RFC 8945 §5.1)") {
    auto q = ldnsSignedQuery("x.test.", LDNS_RR_TYPE_SOA, "xfr.", "hmac-sha256.", kSecret, nullptr);
    Query pq;
    REQUIRE(parseQuery({q.data(), q.size()}, pq) == ParseStatus::Ok);
    CHECK(pq.tsigAt == 24);  // header, x.test. SOA IN
    // An OPT after it: ARCOUNT 2, the OPT appended.
    auto bad = q;
    bad[11] = 2;
    uint8_t opt[] = {0, 0, 41, 4, 0xd0, 0, 0, 0, 0, 0, 0};
    bad.insert(bad.end(), opt, opt + sizeof opt);
    CHECK(parseQuery({bad.data(), bad.size()}, pq) == ParseStatus::FormErr);
    TsigRecord r;
    CHECK(findTsig({bad.data(), bad.size()}, r) == TsigFind::Malformed);
    // In the answer section.
    bad = q;
    bad[7] = 1;
    bad[11] = 0;
    CHECK(parseQuery({bad.data(), bad.size()}, pq) == ParseStatus::FormErr);
    CHECK(findTsig({q.data(), 24}, r) == TsigFind::Malformed);  // ARCOUNT says a record follows
    // Truncated anywhere: never parses.
    for (size_t cut = 25; cut < q.size(); ++cut) CHECK_FALSE(parseTsig({q.data(), cut}, 24, r));
    auto plain = makeQuery("x.test.", kTypeSOA);
    CHECK(findTsig({plain.data(), plain.size()}, r) == TsigFind::None);
}
