// The responder (server/responder/responder.hpp): one message in, the response out, whatever the transport;
// zone-transfer admission (the ACL, the per-client and total caps) and the slots a transfer gives back.
#include <doctest/doctest.h>
#include <netinet/in.h>

#include <cstring>
#include <vector>

#include "server/responder/responder.hpp"
#include "server/responder/transfer.hpp"
#include "tests/server/helpers.hpp"
#include "zones/ldns.hpp"  // not <ldns/ldns.h>: see there
#include "zones/answer.hpp"

using namespace gslb::server;
namespace zones = gslb::zones;

namespace {

sockaddr_in ipv4(const char* addr, uint16_t port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    inet_pton(AF_INET, addr, &a.sin_addr);
    return a;
}

// [server] with `server` lines, and the t.test. zone.
std::string xfrConfig(const std::string& server) {
    return "[server]\nlisten = [\"127.0.0.1:10053\"]\n" + server +
           "\n[[zone]]\nname = \"t.test.\"\nfile = \"t.zone\"\n";
}

struct Bench {
    Shared shared;
    Responder responder{shared, 0, 7};
    explicit Bench(const std::string& config) { shared.holder.publish(st::snapshot(config)); }
    explicit Bench(std::shared_ptr<Snapshot> snap) { shared.holder.publish(std::move(snap)); }
};

// The secret of [key.xfr] ("secret"), as ldns wants it.
constexpr const char* kSecret = "c2VjcmV0";

// The base config with [key.xfr] (hmac-sha256, kSecret) beside it.
std::shared_ptr<Snapshot> keyedSnapshot() {
    st::Written w = st::writeConfig(st::baseConfig("[key.xfr]\nsecret_file = \"xfr.key\"\n"));
    st::writeFile(w.dir, "xfr.key", std::string(kSecret) + "\n");
    std::string error;
    auto s = buildSnapshot(w.config, nullptr, error);
    INFO("buildSnapshot: " << error);
    REQUIRE(s != nullptr);
    return s;
}

// A query for `qname` A signed by ldns with `keyName` (RFC 8945 §4), its MAC in `mac`.
std::vector<uint8_t> signedQuery(const char* qname, const char* keyName, ldns_rdf** mac) {
    ldns_pkt* p = ldns_pkt_query_new(ldns_dname_new_frm_str(qname), LDNS_RR_TYPE_A, LDNS_RR_CLASS_IN, 0);
    ldns_pkt_set_id(p, 0x4242);
    REQUIRE(ldns_pkt_tsig_sign(p, keyName, kSecret, 300, "hmac-sha256.", nullptr) == LDNS_STATUS_OK);
    uint8_t* wire = nullptr;
    size_t n = 0;
    REQUIRE(ldns_pkt2wire(&wire, p, &n) == LDNS_STATUS_OK);
    std::vector<uint8_t> out(wire, wire + n);
    free(wire);
    *mac = ldns_rdf_clone(ldns_rr_rdf(ldns_pkt_tsig(p), 3));
    ldns_pkt_free(p);
    return out;
}

// ldns' verdict on a response signed for the request whose MAC is `mac` (RFC 8945 §5.3).
bool ldnsVerifies(const uint8_t* wire, size_t n, ldns_rdf* mac) {
    ldns_pkt* p = nullptr;
    if (ldns_wire2pkt(&p, wire, n) != LDNS_STATUS_OK) return false;
    bool ok = ldns_pkt_tsig_verify_next(p, wire, n, "xfr.", kSecret, mac, 0);
    ldns_pkt_free(p);
    return ok;
}

// The TSIG error of a response's TSIG RR (RFC 8945 §4.2), -1 when it has none.
int tsigError(const uint8_t* wire, size_t n) {
    ldns_pkt* p = nullptr;
    if (ldns_wire2pkt(&p, wire, n) != LDNS_STATUS_OK) return -1;
    int e = ldns_pkt_tsig(p) ? int(ldns_rdf2native_int16(ldns_rr_rdf(ldns_pkt_tsig(p), 5))) : -1;
    ldns_pkt_free(p);
    return e;
}

}  // namespace

TEST_CASE("responder: a TCP or TLS message gets zones::answer()'s octets, counted by transport") {
    Bench b(st::baseConfig(""));
    const Snapshot& snap = b.responder.snapshot();
    auto q = st::makeQuery("www.t.test.", 1);
    sockaddr_in a = ipv4("192.0.2.9", 40000);
    const Client client{reinterpret_cast<const sockaddr*>(&a),
                        ClientCounter::keyOf(reinterpret_cast<sockaddr*>(&a))};
    std::vector<uint8_t> want(65535);
    auto res = zones::answer(snap.db, snap.answer, q, true, want, nullptr,
                             zones::ClientInfo{client.addr, uint32_t(time(nullptr))});
    REQUIRE(res.len > 12);
    for (Transport t : {Transport::Tcp, Transport::Tls}) {
        std::vector<uint8_t> out(65535);
        Reply r = b.responder.answer(snap, q, out, client, t);
        REQUIRE(r.kind == Reply::Kind::Send);
        REQUIRE(r.len == res.len);
        CHECK(std::memcmp(out.data(), want.data(), r.len) == 0);
    }
    CHECK(b.shared.stats[0].tcp.load() == 1);
    CHECK(b.shared.stats[0].tls.load() == 1);
    CHECK(b.shared.stats[0].udp.load() == 0);
}

TEST_CASE("responder: a datagram through answer() is the batch of one: same octets as UDP, counted as udp") {
    Bench b(st::baseConfig(""));
    const Snapshot& snap = b.responder.snapshot();
    auto q = st::makeQuery("www.t.test.", 1);
    sockaddr_storage peer{};
    sockaddr_in a = ipv4("192.0.2.9", 40000);
    std::memcpy(&peer, &a, sizeof a);
    Datagram dg{q, &peer, nullptr, {}};
    b.responder.answerDatagrams(snap, &dg, 1);
    REQUIRE(dg.res.len > 12);
    std::vector<uint8_t> batched(dg.out, dg.out + dg.res.len);
    std::vector<uint8_t> out(Responder::kAnswerRoom);
    Reply r =
        b.responder.answer(snap, q, out, Client{reinterpret_cast<const sockaddr*>(&a), {}}, Transport::Udp);
    REQUIRE(r.kind == Reply::Kind::Send);
    REQUIRE(r.len == batched.size());
    CHECK(std::memcmp(out.data(), batched.data(), r.len) == 0);
    CHECK(b.shared.stats[0].udp.load() == 2);
}

TEST_CASE(
    "responder: AXFR admission: REFUSED by the ACL, SERVFAIL over a cap, a transfer gives its slots back") {
    Bench b(xfrConfig(
        "axfr_allow = [\"127.0.0.0/8\"]\naxfr_max_concurrent = 1\naxfr_max_concurrent_per_client = 1\n"));
    const Snapshot& snap = b.responder.snapshot();
    auto q = st::makeQuery("t.test.", 252);
    sockaddr_in lo = ipv4("127.0.0.1", 40000), other = ipv4("192.0.2.9", 40000);
    const Client allowed{reinterpret_cast<const sockaddr*>(&lo),
                         ClientCounter::keyOf(reinterpret_cast<sockaddr*>(&lo))};
    const Client refused{reinterpret_cast<const sockaddr*>(&other),
                         ClientCounter::keyOf(reinterpret_cast<sockaddr*>(&other))};
    std::vector<uint8_t> out(65535);

    Reply r = b.responder.answer(snap, q, out, refused, Transport::Tcp);
    REQUIRE(r.kind == Reply::Kind::Send);
    CHECK((out[3] & 0x0F) == 5);  // REFUSED
    CHECK(b.shared.axfrActive.load() == 0);

    Reply t = b.responder.answer(snap, q, out, allowed, Transport::Tcp);
    REQUIRE(t.kind == Reply::Kind::Transfer);
    REQUIRE(t.transfer);
    CHECK(b.shared.axfrActive.load() == 1);
    CHECK(b.shared.axfrPerClient.held(allowed.key) == 1);

    // The same client again: over its own cap (SERVFAIL), and nothing more is held.
    Reply again = b.responder.answer(snap, q, out, allowed, Transport::Tcp);
    REQUIRE(again.kind == Reply::Kind::Send);
    CHECK((out[3] & 0x0F) == 2);
    CHECK(b.shared.stats[0].axfrRefusedPerClient.load() == 1);
    CHECK(b.shared.axfrActive.load() == 1);
    // Another client: over axfr_max_concurrent (SERVFAIL), its unit given back.
    sockaddr_in lo2 = ipv4("127.0.0.2", 40000);
    const Client second{reinterpret_cast<const sockaddr*>(&lo2),
                        ClientCounter::keyOf(reinterpret_cast<sockaddr*>(&lo2))};
    Reply busy = b.responder.answer(snap, q, out, second, Transport::Tcp);
    REQUIRE(busy.kind == Reply::Kind::Send);
    CHECK((out[3] & 0x0F) == 2);
    CHECK(b.shared.axfrActive.load() == 1);
    CHECK(b.shared.axfrPerClient.held(second.key) == 0);

    // The messages: the first one opens with the SOA, the last closes with it; then done.
    std::vector<uint8_t> msg(Transfer::kMessageMax);
    size_t n = t.transfer->next(msg);
    CHECK(n > 12);
    while (!t.transfer->done()) REQUIRE(t.transfer->next(msg) > 0);
    CHECK(t.transfer->next(msg) == 0);
    CHECK(t.transfer->messages() >= 1);
    t.transfer.reset();
    CHECK(b.shared.axfrActive.load() == 0);
    CHECK(b.shared.axfrPerClient.held(allowed.key) == 0);

    // Over UDP an AXFR is no transfer (NOTIMP, RFC 5936 §4.2).
    std::vector<uint8_t> udp(Responder::kAnswerRoom);
    Reply u = b.responder.answer(snap, q, udp, allowed, Transport::Udp);
    CHECK(u.kind != Reply::Kind::Transfer);
}

TEST_CASE(
    "responder: TSIG over every transport: a signed query's response is signed, an unknown key NOTAUTH") {
    Bench b(keyedSnapshot());
    const Snapshot& snap = b.responder.snapshot();
    sockaddr_in a = ipv4("192.0.2.9", 40000);
    const Client client{reinterpret_cast<const sockaddr*>(&a),
                        ClientCounter::keyOf(reinterpret_cast<sockaddr*>(&a))};
    for (Transport t : {Transport::Udp, Transport::Tcp, Transport::Tls}) {
        CAPTURE(int(t));
        ldns_rdf* mac = nullptr;
        auto q = signedQuery("www.t.test.", "xfr.", &mac);
        std::vector<uint8_t> out(Responder::kAnswerRoom);
        Reply r = b.responder.answer(snap, q, out, client, t);
        REQUIRE(r.kind == Reply::Kind::Send);
        CHECK((out[3] & 0x0F) == 0);
        CHECK(tsigError(out.data(), r.len) == zones::kTsigNoError);
        CHECK(ldnsVerifies(out.data(), r.len, mac));
        ldns_rdf_deep_free(mac);

        // A key the server does not hold: NOTAUTH with BADKEY in an unsigned TSIG RR (RFC 8945 §5.2.1).
        auto bad = signedQuery("www.t.test.", "nokey.", &mac);
        r = b.responder.answer(snap, bad, out, client, t);
        REQUIRE(r.kind == Reply::Kind::Send);
        CHECK((out[3] & 0x0F) == zones::kRcodeNotAuth);
        CHECK(tsigError(out.data(), r.len) == zones::kTsigBadKey);
        ldns_rdf_deep_free(mac);
    }
    // Counted under the rcode sent: NOERROR and NOTAUTH once per transport.
    CHECK(b.shared.stats[0].udp.load() == 2);
    CHECK(b.shared.stats[0].tcp.load() == 2);
    CHECK(b.shared.stats[0].tls.load() == 2);
}

namespace {

// `q` with an OPT record (1232 octets) that carries an empty Padding option (RFC 7830 §4), as kdig +padding.
std::vector<uint8_t> withPadding(std::vector<uint8_t> q) {
    q[11] = 1;  // ARCOUNT
    const uint8_t opt[] = {0, 0, 41, 0x04, 0xD0, 0, 0, 0, 0, 0, 4, 0, zones::kOptPadding, 0, 0};
    q.insert(q.end(), opt, opt + sizeof opt);
    return q;
}

// The length of the Padding option in a response, -1 when it has none.
int paddingOf(const uint8_t* wire, size_t n) {
    ldns_pkt* p = nullptr;
    REQUIRE(ldns_wire2pkt(&p, wire, n) == LDNS_STATUS_OK);
    int len = -1;
    if (ldns_rdf* d = ldns_pkt_edns_data(p)) {
        const uint8_t* o = ldns_rdf_data(d);
        for (size_t i = 0; i + 4 <= ldns_rdf_size(d); i += 4 + size_t(o[i + 2] << 8 | o[i + 3]))
            if ((o[i] << 8 | o[i + 1]) == zones::kOptPadding) len = o[i + 2] << 8 | o[i + 3];
    }
    ldns_pkt_free(p);
    return len;
}

}  // namespace

TEST_CASE("responder: padding (RFC 7830 §3) over TLS only, to 468-octet blocks with the TSIG RR counted") {
    Bench b(keyedSnapshot());
    const Snapshot& snap = b.responder.snapshot();
    sockaddr_in a = ipv4("192.0.2.9", 40000);
    const Client client{reinterpret_cast<const sockaddr*>(&a),
                        ClientCounter::keyOf(reinterpret_cast<sockaddr*>(&a))};
    auto q = withPadding(st::makeQuery("www.t.test.", 1));
    std::vector<uint8_t> out(Responder::kAnswerRoom);
    Reply tcp = b.responder.answer(snap, q, out, client, Transport::Tcp);
    REQUIRE(tcp.kind == Reply::Kind::Send);
    REQUIRE(tcp.len < 464);
    CHECK(paddingOf(out.data(), tcp.len) == -1);  // in clear: never padded (RFC 7830 §6)
    Reply udp = b.responder.answer(snap, q, out, client, Transport::Udp);
    CHECK(udp.len == tcp.len);
    CHECK(paddingOf(out.data(), udp.len) == -1);
    Reply tls = b.responder.answer(snap, q, out, client, Transport::Tls);
    REQUIRE(tls.kind == Reply::Kind::Send);
    CHECK(tls.len == 468);
    CHECK(paddingOf(out.data(), tls.len) == int(468 - tcp.len - 4));
    // Without the option, TLS answers as TCP does.
    Reply none = b.responder.answer(snap, st::makeQuery("www.t.test.", 1), out, client, Transport::Tls);
    CHECK(paddingOf(out.data(), none.len) == -1);

    // Signed (RFC 8945): the OPT with its padding before the TSIG RR, which still verifies; the whole
    // message, TSIG included, is the block.
    ldns_pkt* p = nullptr;
    REQUIRE(ldns_wire2pkt(&p, q.data(), q.size()) == LDNS_STATUS_OK);
    ldns_pkt_set_id(p, 0x4242);
    REQUIRE(ldns_pkt_tsig_sign(p, "xfr.", kSecret, 300, "hmac-sha256.", nullptr) == LDNS_STATUS_OK);
    uint8_t* wire = nullptr;
    size_t n = 0;
    REQUIRE(ldns_pkt2wire(&wire, p, &n) == LDNS_STATUS_OK);
    std::vector<uint8_t> sq(wire, wire + n);
    free(wire);
    ldns_rdf* mac = ldns_rdf_clone(ldns_rr_rdf(ldns_pkt_tsig(p), 3));
    ldns_pkt_free(p);
    tls = b.responder.answer(snap, sq, out, client, Transport::Tls);
    REQUIRE(tls.kind == Reply::Kind::Send);
    CHECK(tls.len == 468);
    CHECK(paddingOf(out.data(), tls.len) > 0);
    CHECK(tsigError(out.data(), tls.len) == zones::kTsigNoError);
    CHECK(ldnsVerifies(out.data(), tls.len, mac));
    tcp = b.responder.answer(snap, sq, out, client, Transport::Tcp);
    CHECK(tcp.len < 468);
    CHECK(paddingOf(out.data(), tcp.len) == -1);
    CHECK(ldnsVerifies(out.data(), tcp.len, mac));
    ldns_rdf_deep_free(mac);
}

namespace {

// An IXFR request for t.test. from `serial` (RFC 1995 §3): the client's SOA in the authority section, its
// owner a pointer to the QNAME, MNAME and RNAME the root.
std::vector<uint8_t> ixfrQuery(uint32_t serial) {
    auto q = st::makeQuery("t.test.", zones::kTypeIXFR);
    q[9] = 1;  // NSCOUNT
    const uint8_t rr[] = {0xC0, 12, 0, 6, 0, 1, 0, 0, 0, 0, 0, 22, 0, 0};
    q.insert(q.end(), rr, rr + sizeof rr);
    for (uint32_t v : {serial, 0u, 0u, 0u, 0u})
        for (int s = 24; s >= 0; s -= 8) q.push_back(uint8_t(v >> s));
    return q;
}

// The types of a response's answer section, in order.
std::vector<int> answerTypes(const uint8_t* wire, size_t n) {
    ldns_pkt* p = nullptr;
    REQUIRE(ldns_wire2pkt(&p, wire, n) == LDNS_STATUS_OK);
    std::vector<int> out;
    for (size_t i = 0; i < ldns_rr_list_rr_count(ldns_pkt_answer(p)); ++i)
        out.push_back(int(ldns_rr_get_type(ldns_rr_list_rr(ldns_pkt_answer(p), i))));
    ldns_pkt_free(p);
    return out;
}

}  // namespace

TEST_CASE(
    "responder: IXFR from the journal: differences over UDP to a client the ACL admits, the SOA to "
    "anyone else; over TCP the transfer says which kind went out") {
    // Serial 2024010101, then a reload of the same file with one record more and serial 2024010102: the
    // journal holds that difference (server/state/journal_store.hpp).
    st::Written w = st::writeConfig(xfrConfig("axfr_allow = [\"127.0.0.0/8\"]\n"));
    std::string error;
    auto v1 = buildSnapshot(w.config, nullptr, error);
    REQUIRE_MESSAGE(v1, error);
    std::string z2 = st::kZone;
    z2.replace(z2.find("2024010101"), 10, "2024010102");
    st::writeFile(w.dir, "t.zone", z2 + "new IN A 192.0.2.77\n");
    auto v2 = buildSnapshot(w.config, v1.get(), error);
    REQUIRE_MESSAGE(v2, error);
    Bench b(v2);
    const Snapshot& snap = b.responder.snapshot();
    const zones::Zone* zone = snap.db.zone(std::string_view("\x01t\x04test", 8));  // the NUL ends it
    REQUIRE(zone);
    REQUIRE(zone->serial() == 2024010102u);

    sockaddr_storage lo{}, other{};
    sockaddr_in a = ipv4("127.0.0.1", 40000), o = ipv4("192.0.2.9", 40000);
    std::memcpy(&lo, &a, sizeof a);
    std::memcpy(&other, &o, sizeof o);
    auto q = ixfrQuery(2024010101);
    // RFC 1995 §4 over one datagram: new SOA, old SOA, (nothing removed), new SOA, new's A, new SOA.
    Datagram dg[2] = {{q, &lo, nullptr, {}}, {q, &other, nullptr, {}}};
    b.responder.answerDatagrams(snap, dg, 2);
    CHECK(answerTypes(dg[0].out, dg[0].res.len) == std::vector<int>{6, 6, 6, 1, 6});
    // Not admitted: the SOA alone, as before there was a journal (RFC 1995 §2).
    CHECK(answerTypes(dg[1].out, dg[1].res.len) == std::vector<int>{6});
    // Up to date: the SOA alone to anyone.
    auto current = ixfrQuery(2024010102);
    Datagram up{current, &lo, nullptr, {}};
    b.responder.answerDatagrams(snap, &up, 1);
    CHECK(answerTypes(up.out, up.res.len) == std::vector<int>{6});
    CHECK(b.shared.stats[0].udp.load() == 3);
    CHECK(b.shared.stats[0].dropped.load() == 0);

    // Over TCP: an admitted IXFR is a transfer of the differences; from a serial the journal never held,
    // the whole zone (AXFR-style, RFC 1995 §4).
    const Client admitted{reinterpret_cast<const sockaddr*>(&a),
                          ClientCounter::keyOf(reinterpret_cast<sockaddr*>(&a))};
    std::vector<uint8_t> out(65535);
    Reply t = b.responder.answer(snap, q, out, admitted, Transport::Tcp);
    REQUIRE(t.kind == Reply::Kind::Transfer);
    CHECK(t.transfer->writer().style() == zones::XfrStyle::Incremental);
    CHECK(t.transfer->writer().requestSerial() == 2024010101u);
    t.transfer.reset();
    Reply whole = b.responder.answer(snap, ixfrQuery(2023000000), out, admitted, Transport::Tcp);
    REQUIRE(whole.kind == Reply::Kind::Transfer);
    CHECK(whole.transfer->writer().style() == zones::XfrStyle::AxfrStyle);
}
