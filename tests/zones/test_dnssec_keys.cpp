// DNSSEC keys (zones/dnssec_keys.cpp): BIND key files made, parsed and cross-checked with ldns' own key tag,
// DS and signature verification.
#include <doctest/doctest.h>

#include <string>

#include "zones/dnssec_keys.hpp"
#include "zones/ldns.hpp"

using namespace gslb::zones;

namespace {

ldns_rr* dnskeyRr(const DnssecKey& k) {
    ldns_rr* rr = nullptr;
    std::string text = keyFileText(k);
    text = text.substr(text.rfind("\n", text.size() - 2) + 1);
    REQUIRE(ldns_rr_new_frm_str(&rr, text.c_str(), 3600, nullptr, nullptr) == LDNS_STATUS_OK);
    return rr;
}

}  // namespace

TEST_CASE("generated keys: tag and DS agree with ldns, signatures verify with ldns") {
    for (uint8_t alg : {kAlgEcdsaP256Sha256, kAlgEd25519}) {
        CAPTURE(int(alg));
        DnssecKey k;
        std::string error;
        REQUIRE_MESSAGE(generateKey("Gslb.Example.COM.", alg, 257, 1700000000, k, error), error);
        CHECK(k.zone == "gslb.example.com.");
        CHECK(k.flags == 257);
        CHECK(k.sep());
        ldns_rr* rr = dnskeyRr(k);
        CHECK(ldns_calc_keytag(rr) == k.tag);
        ldns_rr* ds = ldns_key_rr2ds(rr, LDNS_SHA256);
        REQUIRE(ds);
        std::string want;
        for (size_t i = 0; i < ldns_rr_rd_count(ds); ++i)
            want.append(reinterpret_cast<const char*>(ldns_rdf_data(ldns_rr_rdf(ds, i))),
                        ldns_rdf_size(ldns_rr_rdf(ds, i)));
        CHECK(dsRdata(k) == want);
        // A raw signature over some bytes verifies with ldns' verifier for the algorithm.
        uint8_t sig[64];
        REQUIRE(signData(k, "hello", sig));
        ldns_buffer* data = ldns_buffer_new(16);
        ldns_buffer_write(data, "hello", 5);  // ldns verifies [begin, position): not flipped
        ldns_buffer* sb = ldns_buffer_new(64);
        ldns_buffer* kb = ldns_buffer_new(64);
        ldns_buffer_write(kb, k.dnskey.data() + 4, k.dnskey.size() - 4);
        ldns_buffer_flip(kb);
        if (alg == kAlgEcdsaP256Sha256) {
            // ldns verifies ECDSA in its DER form (it converts the RRSIG's r||s itself before this call).
            ldns_rdf* raw = ldns_rdf_new_frm_data(LDNS_RDF_TYPE_B64, 64, sig);
            REQUIRE(ldns_convert_ecdsa_rrsig_rdf2asn1(sb, raw) == LDNS_STATUS_OK);
            ldns_rdf_deep_free(raw);
        } else {
            ldns_buffer_write(sb, sig, 64);
        }
        ldns_buffer_flip(sb);
        CHECK(ldns_verify_rrsig_buffers_raw(ldns_buffer_begin(sb), ldns_buffer_limit(sb), data,
                                            ldns_buffer_begin(kb), ldns_buffer_limit(kb),
                                            alg) == LDNS_STATUS_OK);
        ldns_buffer_free(data);
        ldns_buffer_free(sb);
        ldns_buffer_free(kb);
        ldns_rr_free(ds);
        ldns_rr_free(rr);
        // The files round-trip.
        DnssecKey back;
        REQUIRE_MESSAGE(parseKey(keyFileText(k), privateFileText(k), "gslb.example.com", back, error), error);
        CHECK(back.dnskey == k.dnskey);
        CHECK(back.timing.activate == 1700000000);
        CHECK(back.active(1700000000));
        CHECK_FALSE(back.active(1699999999));
    }
}

TEST_CASE("parseKey refuses what it cannot sign with") {
    DnssecKey k, other;
    std::string error;
    REQUIRE(generateKey("a.test.", kAlgEcdsaP256Sha256, 256, 1, k, error));
    REQUIRE(generateKey("a.test.", kAlgEcdsaP256Sha256, 256, 1, other, error));
    CHECK_FALSE(parseKey(keyFileText(k), privateFileText(other), "", k, error));
    CHECK(error.find("does not match") != std::string::npos);
    CHECK_FALSE(parseKey(keyFileText(k), privateFileText(k), "b.test.", other, error));
    CHECK(error.find("not b.test.") != std::string::npos);
    CHECK_FALSE(parseKey("a.test. IN DNSKEY 257 3 8 AwEAAa==", privateFileText(k), "", other, error));
    CHECK_FALSE(parseKey("; nothing\n", privateFileText(k), "", other, error));
    CHECK_FALSE(parseKey(keyFileText(k), "Private-key-format: v1.2\nAlgorithm: 13 (ECDSAP256SHA256)\n", "",
                         other, error));
    CHECK_FALSE(parseKey(keyFileText(k), std::string(70000, 'x'), "", other, error));
}

TEST_CASE("timing metadata decides published and active") {
    DnssecKey k;
    k.pkey = nullptr;
    k.timing.publish = 100;
    k.timing.activate = 200;
    k.timing.inactive = 300;
    k.timing.remove = 400;
    CHECK_FALSE(k.published(99));
    CHECK(k.published(100));
    CHECK(k.published(399));
    CHECK_FALSE(k.published(400));
    CHECK_FALSE(k.active(250));  // no private key: never signs
}

TEST_CASE("a .private text that would make ldns write past its buffer is refused (fuzz finding)") {
    // The fuzz finding crash-eee88dea… of CI's dnssec_key run: an AddressSanitizer CHECK failure in an
    // innocent input, long after an input like these had made ldns write a NUL one octet past its 32-octet
    // keyword buffer (a line ending inside parentheses just as the buffer filled). Repeated, the write
    // corrupts an ASan heap header within a few hundred parses, so the ASan suite fails without the check.
    DnssecKey k, back;
    std::string error;
    REQUIRE(generateKey("example.com.", kAlgEcdsaP256Sha256, 257, 1, k, error));
    const std::string key = keyFileText(k), good = privateFileText(k);
    for (const std::string& priv :
         {"(" + std::string(31, 'x') + "\ny: z\n", "(" + std::string(31, 'x') + "\n",
          good + "Created: (\n1)\n", std::string("Algorithm: 13 (ECDSAP256SHA256\n"), good + ")(\n",
          good + "; a comment\n", "\"" + good, good + "\\\n"}) {
        CAPTURE(priv);
        for (int i = 0; i < 2000; ++i) {
            CHECK_FALSE(parseKey(key, priv, "", back, error));
            if (i == 0) CHECK_MESSAGE(error.rfind(".private line ", 0) == 0, error);
        }
        CHECK((error.find("parentheses") != std::string::npos ||
               error.find("not part of") != std::string::npos));
    }
    // What BIND, ldns and keymgr write still reads (its Algorithm line has the one pair of parentheses).
    CHECK(good.find("(ECDSAP256SHA256)") != std::string::npos);
    REQUIRE_MESSAGE(parseKey(key, good, "", back, error), error);
    CHECK(back.dnskey == k.dnskey);
}

TEST_CASE("a key whose owner name is too long as text for ldns is refused (fuzz finding)") {
    // 60 octets of 0xff are 240 characters as \255 escapes: the .key file gslbctl would write for such a
    // key (keyFileText) has an owner ldns does not read back (it reads at most 254 characters).
    DnssecKey k, back;
    std::string error;
    REQUIRE(generateKey("example.com.", kAlgEcdsaP256Sha256, 257, 1, k, error));
    std::string key = keyFileText(k);
    std::string line = key.substr(key.rfind('\n', key.size() - 2) + 1);
    std::string odd = std::string(60, '\xff') + ".example.c" + std::string(40, 'v') + "om.";
    std::string oddKey = odd + line.substr(line.find(' '));
    CHECK_FALSE(parseKey(oddKey, privateFileText(k), "", back, error));
    CHECK_MESSAGE(error.find("ldns reads at most 254") != std::string::npos, error);
    // The same name in fewer octets reads, and round-trips through the files gslbctl writes.
    std::string shortKey = std::string(20, '\xff') + ".example.com." + line.substr(line.find(' '));
    REQUIRE_MESSAGE(parseKey(shortKey, privateFileText(k), "", back, error), error);
    DnssecKey again;
    REQUIRE_MESSAGE(parseKey(keyFileText(back), privateFileText(back), back.zone, again, error), error);
    CHECK(again.dnskey == back.dnskey);
}

TEST_CASE("a key whose owner's last label ends in a backslash round-trips (fuzz finding)") {
    // The owner "a\\." is the label `a\` and the root: its text ends in a backslash escaped by another
    // before the dot. textToName took that dot for an escaped one, read the name as relative and dropped
    // its root, so the key refused its own zone ("the key is for a\\., not a\\.").
    DnssecKey k, back;
    std::string error;
    REQUIRE(generateKey("example.com.", kAlgEd25519, 257, 1, k, error));
    std::string key = keyFileText(k);
    std::string line = key.substr(key.rfind('\n', key.size() - 2) + 1);
    std::string oddKey = "a\\\\." + line.substr(line.find(' '));
    REQUIRE_MESSAGE(parseKey(oddKey, privateFileText(k), "", back, error), error);
    CHECK(back.zone == "a\\\\.");
    DnssecKey again;
    REQUIRE_MESSAGE(parseKey(keyFileText(back), privateFileText(back), back.zone, again, error), error);
    CHECK(again.dnskey == back.dnskey);
}
