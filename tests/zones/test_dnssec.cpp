// Signing at load and signed answers (zones/dnssec.cpp, zones/answer.cpp): RRSIGs only with DO, denial
// proofs, the online signature cache of GSLB answers (each distinct set signed once), every signature checked
// with ldns' verifier.
#include <doctest/doctest.h>

#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "zones/dnssec.hpp"
#include "zones/journal.hpp"
#include "zones/loader.hpp"
#include "zones/rrtype.hpp"

using namespace gslb::zones;
using testutil::makeQuery;

namespace {

const std::string kZone =
    std::string() +
    "$ORIGIN s.test.\n$TTL 300\n@ SOA ns1 host 7 3600 600 86400 60\n@ NS ns1\nns1 A 192.0.2.1\n"
    "www A 192.0.2.10\nwww A 192.0.2.11\nwww A 192.0.2.12\nwww A 192.0.2.13\nstatic TXT \"t\"\n"
    "*.w TXT \"wild\"\n"
    "big TXT \"" +
    std::string(200, 'x') + "\" \"" + std::string(200, 'y') + "\"\n";

struct Signed {
    std::unique_ptr<Zone> zone;
    ZoneDb db;
    DnssecKey key;
};

std::unique_ptr<Signed> makeSigned() {
    auto s = std::make_unique<Signed>();
    std::string error;
    REQUIRE(generateKey("s.test.", kAlgEcdsaP256Sha256, 257, 1700000000, s->key, error));
    SourceSet set;
    REQUIRE_MESSAGE(readZoneFile(testutil::writeFile("s.test.zone", kZone), "s.test.", set, error), error);
    WireName apex;
    textToName("s.test.", {}, apex);
    SignOptions opt;
    opt.now = int64_t(time(nullptr));
    auto z = compileSigned(apex, set, "s.test.zone", {s->key}, opt, error);
    REQUIRE_MESSAGE(z, error);
    s->db.add(std::move(z));
    return s;
}

// Picks record `pick % count` of the static set: one chosen address, as a GSLB hostname with answers = 1.
struct PickHook : DynamicHook {
    unsigned pick = 0;
    void select(int32_t, uint16_t, const Zone& z, const RRset* set, const Client&,
                DynAnswer& out) noexcept override {
        out.ttl = 30;
        out.count = 0;
        if (!set) return;
        const Rdata& rd = z.rdata(set->first + pick % set->count);
        out.recs[0] = {z.bytes(rd), rd.len};
        out.count = 1;
    }
};

// Every RRSIG of the section verifies over the records of its type and owner in the same section.
int verifySection(ldns_rr_list* sec, ldns_rr_list* keys) {
    int verified = 0;
    for (size_t i = 0; i < ldns_rr_list_rr_count(sec); ++i) {
        ldns_rr* sig = ldns_rr_list_rr(sec, i);
        if (ldns_rr_get_type(sig) != LDNS_RR_TYPE_RRSIG) continue;
        ldns_rr_type covered = ldns_rdf2rr_type(ldns_rr_rrsig_typecovered(sig));
        ldns_rr_list* set = ldns_rr_list_new();
        for (size_t j = 0; j < ldns_rr_list_rr_count(sec); ++j) {
            ldns_rr* r = ldns_rr_list_rr(sec, j);
            if (ldns_rr_get_type(r) == covered &&
                ldns_dname_compare(ldns_rr_owner(r), ldns_rr_owner(sig)) == 0)
                ldns_rr_list_push_rr(set, r);
        }
        ldns_rr_list* good = ldns_rr_list_new();
        ldns_status st = ldns_verify_rrsig_keylist(set, sig, keys, good);
        CHECK_MESSAGE(st == LDNS_STATUS_OK, ldns_get_errorstr_by_id(st));
        verified += st == LDNS_STATUS_OK;
        ldns_rr_list_free(good);
        ldns_rr_list_free(set);
    }
    return verified;
}

struct Reply {
    ldns_pkt* pkt = nullptr;
    ~Reply() {
        if (pkt) ldns_pkt_free(pkt);
    }
};

void ask(const Signed& s, DynamicHook* hook, const std::string& name, uint16_t type, bool dnssecOk, Reply& r,
         uint16_t size = 4096) {
    auto q = makeQuery(name, type, true, size, dnssecOk);
    std::vector<uint8_t> out(65535);
    AnswerOptions opt;
    opt.udpPayloadMax = 4096;
    auto res = answer(s.db, opt, q, false, out, hook);
    REQUIRE(ldns_wire2pkt(&r.pkt, out.data(), res.len) == LDNS_STATUS_OK);
}

ldns_rr_list* dnskeys(const DnssecKey& k) {
    ldns_rr* rr = nullptr;
    std::string text = keyFileText(k);
    text = text.substr(text.rfind("\n", text.size() - 2) + 1);
    REQUIRE(ldns_rr_new_frm_str(&rr, text.c_str(), 3600, nullptr, nullptr) == LDNS_STATUS_OK);
    ldns_rr_list* l = ldns_rr_list_new();
    ldns_rr_list_push_rr(l, rr);
    return l;
}

size_t countType(ldns_rr_list* l, ldns_rr_type t) {
    size_t n = 0;
    for (size_t i = 0; i < ldns_rr_list_rr_count(l); ++i) n += ldns_rr_get_type(ldns_rr_list_rr(l, i)) == t;
    return n;
}

}  // namespace

TEST_CASE("canonical order of names (RFC 4034 §6.1's example)") {
    std::vector<std::string> texts = {"example.",         "a.example.",      "yljkjljk.a.example.",
                                      "Z.a.example.",     "zABC.a.EXAMPLE.", "z.example.",
                                      "\\001.z.example.", "*.z.example.",    "\\200.z.example."};
    std::vector<WireName> w;
    for (const auto& t : texts) {
        WireName n;
        REQUIRE(textToName(t, {}, n));
        lowerName(reinterpret_cast<uint8_t*>(n.data()), n.size());
        w.push_back(n);
    }
    for (size_t i = 0; i + 1 < w.size(); ++i) {
        CAPTURE(texts[i]);
        CHECK(canonicalCompare(w[i], w[i + 1]) < 0);
        CHECK(canonicalCompare(w[i + 1], w[i]) > 0);
        CHECK(canonicalCompare(w[i], w[i]) == 0);
    }
}

TEST_CASE("signed answers: RRSIGs only with DO, and every one verifies") {
    auto s = makeSigned();
    ldns_rr_list* keys = dnskeys(s->key);
    Reply plain, sig, nx, nodata, wild;
    ask(*s, nullptr, "static.s.test.", kTypeTXT, false, plain);
    CHECK(countType(ldns_pkt_answer(plain.pkt), LDNS_RR_TYPE_RRSIG) == 0);
    ask(*s, nullptr, "static.s.test.", kTypeTXT, true, sig);
    CHECK(countType(ldns_pkt_answer(sig.pkt), LDNS_RR_TYPE_RRSIG) == 1);
    CHECK(verifySection(ldns_pkt_answer(sig.pkt), keys) == 1);
    ask(*s, nullptr, "zzz.s.test.", kTypeA, true, nx);
    CHECK(ldns_pkt_get_rcode(nx.pkt) == LDNS_RCODE_NXDOMAIN);
    CHECK(countType(ldns_pkt_authority(nx.pkt), LDNS_RR_TYPE_NSEC) == 2);  // the name, the wildcard
    CHECK(verifySection(ldns_pkt_authority(nx.pkt), keys) == 3);
    ask(*s, nullptr, "static.s.test.", kTypeA, true, nodata);
    CHECK(countType(ldns_pkt_authority(nodata.pkt), LDNS_RR_TYPE_NSEC) == 1);
    CHECK(verifySection(ldns_pkt_authority(nodata.pkt), keys) == 2);
    ask(*s, nullptr, "x.w.s.test.", kTypeTXT, true, wild);
    CHECK(verifySection(ldns_pkt_answer(wild.pkt), keys) == 1);  // the wildcard's signature, at the qname
    CHECK(countType(ldns_pkt_authority(wild.pkt), LDNS_RR_TYPE_NSEC) == 1);
    ldns_rr_list_deep_free(keys);
}

TEST_CASE("GSLB answers: each distinct chosen set signed once, then from the cache") {
    auto s = makeSigned();
    const Zone& z = *s->db.zones()[0];
    WireName www;
    textToName("www.s.test.", {}, www);
    z.find(www);
    const_cast<Zone&>(z).mutableNode(z.find(www)).dynamic = 0;
    ldns_rr_list* keys = dnskeys(s->key);
    PickHook hook;
    std::set<std::string> answers;
    for (int round = 0; round < 3; ++round)
        for (unsigned i = 0; i < 4; ++i) {
            hook.pick = i;
            Reply r;
            ask(*s, &hook, "www.s.test.", kTypeA, true, r);
            REQUIRE(ldns_rr_list_rr_count(ldns_pkt_answer(r.pkt)) == 2);
            CHECK(verifySection(ldns_pkt_answer(r.pkt), keys) == 1);
            char* t = ldns_rr2str(ldns_rr_list_rr(ldns_pkt_answer(r.pkt), 0));
            answers.insert(t);
            free(t);
        }
    CHECK(answers.size() == 4);
    CHECK(z.signer()->onlineSigned() == 4);  // 4 services, answers = 1: 4 signatures, none after that
    // Without DO nothing is signed.
    Reply r;
    ask(*s, &hook, "www.s.test.", kTypeA, false, r);
    CHECK(countType(ldns_pkt_answer(r.pkt), LDNS_RR_TYPE_RRSIG) == 0);
    CHECK(z.signer()->onlineSigned() == 4);
    ldns_rr_list_deep_free(keys);
}

TEST_CASE("TC when a signed answer does not fit, never an RRset without its signature") {
    auto s = makeSigned();
    Reply r;
    ask(*s, nullptr, "big.s.test.", kTypeTXT, false, r, 512);
    CHECK_FALSE(ldns_pkt_tc(r.pkt));  // 400 octets of TXT fit without their signature
    Reply d;
    ask(*s, nullptr, "big.s.test.", kTypeTXT, true, d, 512);
    CHECK(ldns_pkt_tc(d.pkt));
    CHECK(ldns_rr_list_rr_count(ldns_pkt_answer(d.pkt)) == 0);
}

TEST_CASE("NSEC3 hash (RFC 9276 profile) agrees with ldns") {
    for (const char* text : {"s.test.", "www.s.test.", "*.w.s.test.", "a.b.c.d.s.test."}) {
        CAPTURE(text);
        WireName n;
        REQUIRE(textToName(text, {}, n));
        uint8_t h[20];
        nsec3Hash(n, h);
        ldns_rdf* name = ldns_dname_new_frm_str(text);
        ldns_rdf* hashed = ldns_nsec3_hash_name(name, 1, 0, 0, nullptr);
        REQUIRE(hashed);
        char* label = ldns_rdf2str(hashed);
        // ldns gives the base32hex label as a name: "<hash>."; compare with ours, encoded the same way.
        uint8_t withLen[21] = {20};  // ldns' B32_EXT rdf starts with its length octet
        std::memcpy(withLen + 1, h, 20);
        ldns_rdf* ours = ldns_rdf_new_frm_data(LDNS_RDF_TYPE_B32_EXT, 21, withLen);
        char* mine = ldns_rdf2str(ours);
        CHECK(std::string(label).substr(0, 32) == std::string(mine).substr(0, 32));
        free(label);
        free(mine);
        ldns_rdf_deep_free(ours);
        ldns_rdf_deep_free(hashed);
        ldns_rdf_deep_free(name);
    }
}

TEST_CASE("a reload re-signs only what changed; a re-sign renews only the signatures due") {
    std::string error;
    DnssecKey key;
    REQUIRE(generateKey("s.test.", kAlgEcdsaP256Sha256, 257, 1700000000, key, error));
    WireName apex;
    textToName("s.test.", {}, apex);
    auto sign = [&](const std::string& text, int64_t now, const Zone* previous) {
        SourceSet set;
        REQUIRE_MESSAGE(readZoneFile(testutil::writeFile("reuse.zone", text), "s.test.", set, error), error);
        SignOptions opt;
        opt.now = now;
        opt.previous = previous;
        auto z = compileSigned(apex, set, "reuse.zone", {key}, opt, error);
        REQUIRE_MESSAGE(z, error);
        return z;
    };
    const int64_t t = 1800000000;
    const uint32_t v = 14 * 86400;
    auto v1 = sign(kZone, t, nullptr);
    // Every signature expires within the last quarter of the validity; the first is due when half is left.
    CHECK(v1->signer()->refreshAt() >= t + v / 4);
    CHECK(v1->signer()->refreshAt() <= t + v / 2);
    // One record added a minute later: the SOA and its RRSIG, big's NSEC (its next name is now "new") and
    // its RRSIG go; the new SOA, A, NSECs and their four RRSIGs come. Every other signature is kept.
    std::string more = kZone;
    more.replace(more.find(" 7 3600"), 7, " 8 3600");
    more += "new A 192.0.2.99\n";
    auto v2 = sign(more, t + 60, v1.get());
    auto cs = diffZones(*v1, *v2);
    CHECK(cs->removed == 4);
    CHECK(cs->added == 8);
    // Signed from scratch instead, every RRSIG would be new.
    auto fresh = sign(more, t + 60, nullptr);
    size_t sigs = 0;
    for (uint32_t i = 0; i < fresh->nodeCount(); ++i)
        if (const RRset* s = fresh->rrset(fresh->node(i), kTypeRRSIG)) sigs += s->count;
    CHECK(diffZones(*v1, *fresh)->removed > sigs / 2);
    // The re-sign at refreshAt: the signatures due within the next sixteenth of the validity, not all.
    int64_t at = v2->signer()->refreshAt();
    CHECK(at >= t + 60 + v / 16);
    auto v3 = sign(more, at, v2.get());
    auto resign = diffZones(*v2, *v3);
    CHECK(resign->removed > 1);         // the SOA's and at least the one that was due
    CHECK(resign->removed - 1 < sigs);  // not every signature
    CHECK(v3->signer()->refreshAt() > at);
}
