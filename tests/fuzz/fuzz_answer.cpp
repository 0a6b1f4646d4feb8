// Query bytes -> zones::answer() over a compiled zone set that has every kind of node the answer path
// handles: wildcards (with CNAME and NODATA), CNAME chains, loops and chains across zones, delegations with
// glue and DS, DNAME, empty non-terminals, RRsets too large for UDP and for one TCP message, and GSLB names
// answered through the server's real Selector (several choosers, fallback "none" and a fixed fallback).
// f.test is DNSSEC-signed with NSEC (a fresh ECDSA CSK per run), other.test with NSEC3 (Ed25519 KSK + ZSK):
// queries with DO exercise RRSIGs, NSEC and NSEC3 proofs and the online signature cache.
// Every input is asked over UDP and over TCP; each response must hold the invariants of checkResponse, or the
// target aborts. AXFR responses are written out whole (XfrWriter) and checked message by message.
#include <arpa/inet.h>
#include <netinet/in.h>

#include <sys/stat.h>

#include <cstdint>
#include <ctime>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_util.hpp"
#include "server/state/gslb.hpp"
#include "server/state/snapshot.hpp"
#include "zones/answer.hpp"
#include "zones/axfr.hpp"
#include "zones/dnssec_keys.hpp"
#include "zones/ldns.hpp"

namespace {

std::string zoneF() {
    std::string z =
        "$ORIGIN f.test.\n"
        "$TTL 300\n"
        "@ IN SOA ns1 hostmaster 2024010101 3600 900 604800 120\n"
        "@ IN NS ns1\n"
        "@ IN NS ns2.other.test.\n"
        "@ IN MX 10 mail\n"
        "@ IN TXT \"v=spf1 -all\"\n"
        "ns1 IN A 192.0.2.53\n"
        "ns1 IN AAAA 2001:db8::53\n"
        "mail IN A 192.0.2.25\n"
        "static IN A 192.0.2.100\n"
        "static IN TXT \"hello\" \"world\"\n"
        "static IN HINFO cpu os\n"
        "Mixed.Case IN A 192.0.2.101\n"
        "*.wild IN A 192.0.2.200\n"
        "*.wild IN TXT \"wild\"\n"
        "*.cn IN CNAME www\n"
        "*.deep.wild IN MX 5 mail\n"
        "alias IN CNAME www\n"
        "chain1 IN CNAME chain2\n"
        "chain2 IN CNAME chain3\n"
        "chain3 IN CNAME static\n"
        "loop1 IN CNAME loop2\n"
        "loop2 IN CNAME loop1\n"
        "self IN CNAME self\n"
        "out IN CNAME www.other.test.\n"
        "outloop IN CNAME back.other.test.\n"
        "dangling IN CNAME nothere\n"
        "tosub IN CNAME host.sub\n"
        "dn IN DNAME other.test.\n"
        "dnself IN DNAME f.test.\n"
        "x.y.ent IN A 192.0.2.77\n"
        "sub IN NS ns.sub\n"
        "sub IN NS ns.other.test.\n"
        "sub IN DS 12345 8 2 49FD46E6C4B45C55D4AC69CBD3CD34AC1AFE51DE26F9C6DE1A2F6C4E0B1B2C3D\n"
        "ns.sub IN A 192.0.2.54\n"
        "ns.sub IN AAAA 2001:db8::54\n"
        "unglued IN NS ns.unglued\n"
        "_sip._tcp IN SRV 0 5 5060 static\n"
        "_sip._tcp IN SRV 1 5 5060 www\n"
        "ptr IN PTR static\n"
        "svc IN HTTPS 0 pool\n"
        "pool IN HTTPS 1 . alpn=h2\n"
        "pool IN HTTPS 2 www\n"
        "pool IN HTTPS 3 ns.sub\n"
        "pool IN A 192.0.2.80\n"
        "svcloop IN SVCB 0 svcloop2\n"
        "svcloop2 IN SVCB 0 svcloop\n"
        "caa IN CAA 0 issue \"ca.example\"\n"
        "unknown IN TYPE65280 \\# 4 01020304\n"
        "empty IN TYPE65281 \\# 0\n"
        "www IN A 192.0.2.1\n"
        "www IN A 192.0.2.2\n"
        "www IN A 192.0.2.3\n"
        "www IN AAAA 2001:db8::1\n"
        "www IN AAAA 2001:db8::2\n"
        "www IN TXT \"gslb\"\n"
        "rr IN A 192.0.2.11\n"
        "rr IN A 192.0.2.12\n"
        "wrr IN A 192.0.2.13\n"
        "wrr IN A 192.0.2.14\n"
        "bs IN A 192.0.2.15\n"
        "bs IN A 192.0.2.16\n"
        "ls IN AAAA 2001:db8::15\n"
        "ls IN AAAA 2001:db8::16\n"
        "lf IN A 192.0.2.17\n"
        "lf IN A 192.0.2.18\n"
        "none IN A 192.0.2.21\n"
        "fixed IN A 192.0.2.31\n"
        "fixed IN AAAA 2001:db8::31\n"
        "gslbcname IN CNAME www\n";
    // Larger than 512 and than 1232 octets: TC over UDP, all of it over TCP.
    for (int i = 1; i <= 100; ++i) z += "big IN AAAA 2001:db8:1::" + std::to_string(i) + "\n";
    for (int i = 1; i <= 40; ++i) z += "big IN A 10.0.0." + std::to_string(i) + "\n";
    // Larger than one TCP message (65535 octets).
    std::string word(250, 'x');
    for (int i = 0; i < 300; ++i) z += "huge IN TXT \"" + std::to_string(i) + word + "\"\n";
    for (int i = 0; i < 30; ++i) z += "mx IN MX " + std::to_string(i) + " www\n";
    return z;
}

const char* kZoneOther =
    "$ORIGIN other.test.\n"
    "$TTL 60\n"
    "@ IN SOA ns2 hostmaster 7 3600 900 604800 30\n"
    "@ IN NS ns2\n"
    "ns2 IN A 192.0.2.60\n"
    "www IN A 198.51.100.1\n"
    "*.x IN CNAME www.f.test.\n"
    "back IN CNAME loop1.f.test.\n"
    "below IN DNAME dn.f.test.\n";

std::string services(const std::string& host, std::initializer_list<const char*> addrs,
                     std::initializer_list<const char*> sites) {
    std::string s;
    auto site = sites.begin();
    for (const char* a : addrs) {
        s += "[[hostname.\"" + host + "\".service]]\naddress = \"" + a + "\"\nsite = \"" + *site + "\"\n";
        if (site + 1 != sites.end()) ++site;
    }
    return s;
}

std::string config() {
    return "[server]\n"
           "listen = [\"127.0.0.1:5353\"]\n"
           "udp_payload_max = 1232\n"
           "identity = \"fuzz\"\n"
           "version = \"gslbd-fuzz\"\n"
           "minimal_responses = false\n"
           "axfr_allow = [\"127.0.0.1\"]\n"
           "[[zone]]\nname = \"f.test.\"\nfile = \"f.zone\"\ndnssec = true\nkey_dir = \"keys\"\n"
           "[[zone]]\nname = \"other.test.\"\nfile = \"other.zone\"\ndnssec = true\nkey_dir = \"keys\"\n"
           "denial = \"nsec3\"\n"
           "[load]\n[load.metric.busy]\n"
           "[site.east]\n[site.west]\n[site.south]\n[site.dead]\n"
           "[hostname.\"www.f.test.\"]\nanswers = 2\n" +
           services("www.f.test.", {"192.0.2.1", "192.0.2.2", "192.0.2.3", "2001:db8::1", "2001:db8::2"},
                    {"east", "west", "south", "east", "west"}) +
           "[hostname.\"rr.f.test.\"]\npolicy = [\"health\", \"round-robin\"]\n" +
           services("rr.f.test.", {"192.0.2.11", "192.0.2.12"}, {"east", "west"}) +
           "[hostname.\"wrr.f.test.\"]\npolicy = [\"weighted-round-robin\"]\n" +
           services("wrr.f.test.", {"192.0.2.13", "192.0.2.14"}, {"east", "west"}) +
           "[hostname.\"bs.f.test.\"]\npolicy = [\"health\", \"best-server\"]\nanswers = 2\n" +
           services("bs.f.test.", {"192.0.2.15", "192.0.2.16"}, {"east", "west"}) +
           "[hostname.\"ls.f.test.\"]\npolicy = [\"preference\", \"least-selected\"]\n" +
           services("ls.f.test.", {"2001:db8::15", "2001:db8::16"}, {"east", "south"}) +
           "[hostname.\"lf.f.test.\"]\npolicy = [\"cpu\", \"load-factor\"]\n" +
           services("lf.f.test.", {"192.0.2.17", "192.0.2.18"}, {"east", "west"}) +
           "[hostname.\"none.f.test.\"]\nfallback = \"none\"\n" +
           services("none.f.test.", {"192.0.2.21"}, {"dead"}) +
           "[hostname.\"fixed.f.test.\"]\nfallback = \"192.0.2.99\"\n" +
           services("fixed.f.test.", {"192.0.2.31", "2001:db8::31"}, {"dead"});
}

struct World {
    std::shared_ptr<gslb::server::Snapshot> snap;
    gslb::server::Selector selector{0, 0x5eed};
    std::vector<uint8_t> out = std::vector<uint8_t>(65535);

    World() {
        fuzzutil::writeFile("f.zone", zoneF());
        fuzzutil::writeFile("other.zone", kZoneOther);
        // f.test is signed (doc/dnssec.md): queries with DO get RRSIGs, NSEC proofs and online GSLB
        // signatures.
        gslb::zones::DnssecKey key;
        std::string kerr;
        std::string keys = fuzzutil::scratchDir() + "/keys";
        mkdir(keys.c_str(), 0700);
        if (!gslb::zones::generateKey("f.test.", gslb::zones::kAlgEcdsaP256Sha256, 257, time(nullptr), key,
                                      kerr) ||
            !gslb::zones::writeKeyFiles(key, keys, kerr))
            fuzzutil::fail(__FILE__, __LINE__, "keygen", kerr);
        // other.test with NSEC3 and an Ed25519 KSK + ZSK pair.
        for (uint16_t flags : {uint16_t(257), uint16_t(256)})
            if (!gslb::zones::generateKey("other.test.", gslb::zones::kAlgEd25519, flags, time(nullptr), key,
                                          kerr) ||
                !gslb::zones::writeKeyFiles(key, keys, kerr))
                fuzzutil::fail(__FILE__, __LINE__, "keygen", kerr);
        std::string path = fuzzutil::writeFile("gslbd.toml", config());
        std::string error;
        snap = gslb::server::buildSnapshot(path, nullptr, error);
        if (!snap) fuzzutil::fail(__FILE__, __LINE__, "buildSnapshot", error);
        auto& t = *snap->gslb.table;
        // Site "dead" is drained: its hostnames' health stage leaves nothing and the fallback decides.
        t.setSiteEnabled(*t.findSite("dead"), false);
        selector.rebind(&snap->gslb);
    }
};

uint16_t get16(const uint8_t* p) {
    return uint16_t(p[0] << 8 | p[1]);
}

// The length of the (uncompressed) question at offset 12 of `q`, or 0 when it does not parse so.
size_t questionLen(const uint8_t* q, size_t n) {
    size_t i = 12;
    while (i < n && q[i] != 0) {
        if (q[i] & 0xC0) return 0;
        i += size_t(q[i]) + 1;
    }
    if (i >= n || n - i < 5) return 0;
    return i + 5 - 12;
}

// Where the records the header counts end, following compression pointers; SIZE_MAX when they run past
// the end.
size_t countedEnd(const uint8_t* p, size_t n) {
    auto skipName = [&](size_t i) -> size_t {
        for (int labels = 0; i < n && labels < 128; ++labels) {
            if ((p[i] & 0xC0) == 0xC0) return i + 2 <= n ? i + 2 : SIZE_MAX;
            if (p[i] & 0xC0) return SIZE_MAX;
            if (p[i] == 0) return i + 1;
            i += size_t(p[i]) + 1;
        }
        return SIZE_MAX;
    };
    size_t i = 12;
    size_t qd = get16(p + 4), rr = size_t(get16(p + 6)) + get16(p + 8) + get16(p + 10);
    for (size_t k = 0; k < qd; ++k) {
        i = skipName(i);
        if (i == SIZE_MAX || n - i < 4) return SIZE_MAX;
        i += 4;
    }
    for (size_t k = 0; k < rr; ++k) {
        i = skipName(i);
        if (i == SIZE_MAX || n - i < 10) return SIZE_MAX;
        size_t len = get16(p + i + 8);
        if (n - i - 10 < len) return SIZE_MAX;
        i += 10 + len;
    }
    return i;
}

std::string hex(const uint8_t* p, size_t n) {
    std::string s;
    char b[4];
    for (size_t i = 0; i < n && i < 600; ++i) {
        std::snprintf(b, sizeof b, "%02x", p[i]);
        s += b;
    }
    return s;
}

// What every response to `q` must be: a whole DNS message that ldns parses, with the query's ID and opcode,
// QR set, at most one question and that one the query's own, byte for byte (case kept); the records the
// header counts exactly filling it; no larger than `limit`.
void checkResponse(const uint8_t* q, size_t qn, const uint8_t* r, size_t rn, size_t limit, const char* what) {
    std::string ctx = std::string(what) + " query " + hex(q, qn) + "\nresponse " + hex(r, rn);
    FUZZ_CHECK(rn >= 12, ctx);
    FUZZ_CHECK(rn <= limit, ctx + "\nlimit " + std::to_string(limit));
    FUZZ_CHECK(r[0] == q[0] && r[1] == q[1], ctx);
    FUZZ_CHECK((r[2] & 0x80) != 0, ctx);
    FUZZ_CHECK((r[2] & 0x78) == (q[2] & 0x78), ctx);
    uint16_t qd = get16(r + 4);
    FUZZ_CHECK(qd <= 1, ctx);
    if (qd == 1) {
        size_t ql = questionLen(q, qn);
        FUZZ_CHECK(ql > 0 && rn >= 12 + ql && std::memcmp(q + 12, r + 12, ql) == 0, ctx);
    }
    FUZZ_CHECK(countedEnd(r, rn) == rn, ctx);
    ldns_pkt* pkt = nullptr;
    ldns_status s = ldns_wire2pkt(&pkt, r, rn);
    FUZZ_CHECK(s == LDNS_STATUS_OK, ctx + "\nldns: " + ldns_get_errorstr_by_id(s));
    ldns_pkt_free(pkt);
}

// The UDP size limit the response must keep to (RFC 6891 §6.2.3-5), judged by ldns' reading of the query:
// 512 without EDNS0, else the requestor's size (at least 512) capped by ours. When ldns cannot read the query
// the server may have: the cap alone.
size_t udpLimit(const uint8_t* q, size_t n, uint16_t ours) {
    ldns_pkt* pkt = nullptr;
    if (ldns_wire2pkt(&pkt, q, n) != LDNS_STATUS_OK) return ours;
    size_t limit = 512;
    if (ldns_pkt_edns(pkt))
        limit = std::max<size_t>(512, std::min<size_t>(ldns_pkt_edns_udp_size(pkt), ours));
    ldns_pkt_free(pkt);
    return limit;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static World w;
    if (size > 65535) return 0;
    const auto& snap = *w.snap;
    static const auto sources = [] {
        std::pair<sockaddr_in, sockaddr_in6> s{};
        s.first.sin_family = AF_INET;
        inet_pton(AF_INET, "198.51.100.7", &s.first.sin_addr);
        s.second.sin6_family = AF_INET6;
        inet_pton(AF_INET6, "2001:db8:100::7", &s.second.sin6_addr);
        return s;
    }();
    for (bool tcp : {false, true}) {
        gslb::zones::ClientInfo client;
        client.source = tcp ? reinterpret_cast<const sockaddr*>(&sources.second)
                            : reinterpret_cast<const sockaddr*>(&sources.first);
        auto res = gslb::zones::answer(snap.db, snap.answer, {data, size}, tcp, {w.out.data(), w.out.size()},
                                       &w.selector, client);
        const char* what = tcp ? "tcp" : "udp";
        switch (res.action) {
            case gslb::zones::Action::Drop:
                // Only runts and responses are dropped (RFC 1035 §4.1.1: everything else gets an answer).
                FUZZ_CHECK(size < 12 || (data[2] & 0x80), std::string(what) + " dropped " + hex(data, size));
                break;
            case gslb::zones::Action::Send:
                checkResponse(data, size, w.out.data(), res.len,
                              tcp ? 65535 : udpLimit(data, size, snap.answer.udpPayloadMax), what);
                break;
            case gslb::zones::Action::Transfer: {
                FUZZ_CHECK(tcp && res.zone != nullptr, std::string(what) + " axfr " + hex(data, size));
                size_t n = gslb::zones::refuse(snap.answer, {data, size}, {w.out.data(), w.out.size()});
                checkResponse(data, size, w.out.data(), n, 65535, "refuse");
                // Written one message at a time, as the server does (zones/axfr.hpp); the buffer is reused.
                gslb::zones::XfrWriter axfr(*res.zone, {data, size}, 65535);
                FUZZ_CHECK(axfr.ok(), "axfr writer refused " + hex(data, size));
                size_t messages = 0;
                std::vector<uint8_t> msg(65535);
                while (size_t len = axfr.next({msg.data(), msg.size()})) {
                    checkResponse(data, size, msg.data(), len, 65535, "axfr");
                    FUZZ_CHECK(++messages < 100000, "axfr does not end " + hex(data, size));
                }
                FUZZ_CHECK(axfr.done(), "axfr stopped before its end " + hex(data, size));
                FUZZ_CHECK(messages > 0, "axfr without a message " + hex(data, size));
                break;
            }
        }
    }
    return 0;
}
