// IXFR's differences (zones/journal.cpp) and their transfer (zones/axfr.cpp XfrWriter, answer() over UDP):
// worked examples with every record written out.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "helpers.hpp"
#include "zones/axfr.hpp"
#include "zones/journal.hpp"
#include "zones/rrtype.hpp"

using namespace gslb::zones;
using testutil::makeQuery;

namespace {

std::unique_ptr<Zone> load(const std::string& text, const std::string& origin = "x.test.") {
    static int n = 0;
    std::string err;
    auto z = loadZone(testutil::writeFile("journal" + std::to_string(++n) + ".zone", text), origin, err);
    REQUIRE_MESSAGE(z, err);
    return z;
}

std::string head(int serial) {
    return "$ORIGIN x.test.\n$TTL 300\n@ SOA ns1 host " + std::to_string(serial) +
           " 3600 600 86400 60\n@ NS ns1\n";
}

// Names no version changes: the zones of History are larger than their differences (else the whole zone
// is the smaller answer).
const std::string kSame = [] {
    std::string s;
    for (int i = 0; i < 12; ++i) s += "same" + std::to_string(i) + " A 192.0.2.200\n";
    return s;
}();

// One record in presentation form, as ldns prints it (tabs as spaces).
std::string text(const DiffRecord& r) {
    std::vector<uint8_t> w(r.owner.begin(), r.owner.end());
    uint8_t f[10] = {uint8_t(r.type >> 8),
                     uint8_t(r.type),
                     0,
                     1,
                     uint8_t(r.ttl >> 24),
                     uint8_t(r.ttl >> 16),
                     uint8_t(r.ttl >> 8),
                     uint8_t(r.ttl),
                     uint8_t(r.rdata.size() >> 8),
                     uint8_t(r.rdata.size())};
    w.insert(w.end(), f, f + 10);
    w.insert(w.end(), r.rdata.begin(), r.rdata.end());
    ldns_rr* rr = nullptr;
    size_t pos = 0;
    REQUIRE(ldns_wire2rr(&rr, w.data(), w.size(), &pos, LDNS_SECTION_ANSWER) == LDNS_STATUS_OK);
    char* s = ldns_rr2str(rr);
    std::string t(s);
    free(s);
    ldns_rr_free(rr);
    while (!t.empty() && t.back() == '\n') t.pop_back();
    for (auto& c : t)
        if (c == '\t') c = ' ';
    return t;
}

struct Lists {
    std::vector<std::string> removed, added;
};

Lists lists(const Changeset& cs) {
    Lists l;
    DiffReader rd(cs.records);
    DiffRecord r;
    uint32_t i = 0;
    while (rd.next(r)) (i++ < cs.removed ? l.removed : l.added).push_back(text(r));
    CHECK(!rd.bad());
    CHECK(i == cs.removed + cs.added);
    return l;
}

using V = std::vector<std::string>;

const std::string kV1 =
    head(1) + "ns1 A 192.0.2.1\nwww A 192.0.2.10\nold TXT \"gone\"\nttl 60 A 192.0.2.5\n" + kSame;
const std::string kV2 = head(2) +
                        "ns1 A 192.0.2.1\nwww A 192.0.2.10\nwww A 192.0.2.11\nttl 120 A 192.0.2.5\n"
                        "new AAAA 2001:db8::1\n" +
                        kSame;

// An IXFR request: the question, then the client's SOA in the authority section (RFC 1995 §3), its owner a
// pointer to the QNAME.
std::vector<uint8_t> ixfrQuery(const std::string& zone, uint32_t serial) {
    auto q = makeQuery(zone, kTypeIXFR);
    q[9] = 1;  // NSCOUNT
    uint8_t rr[] = {0xC0,
                    12,
                    0,
                    6,
                    0,
                    1,
                    0,
                    0,
                    0,
                    0,
                    0,
                    22,
                    0,
                    0,  // owner, SOA IN, TTL 0, RDLENGTH 22, ".", "."
                    uint8_t(serial >> 24),
                    uint8_t(serial >> 16),
                    uint8_t(serial >> 8),
                    uint8_t(serial),
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0};
    q.insert(q.end(), rr, rr + sizeof rr);
    return q;
}

std::vector<std::string> transfer(const Zone& z, const std::vector<uint8_t>& q, XfrStyle& style,
                                  size_t msgMax = 65535) {
    XfrWriter w(z, {q.data(), q.size()}, msgMax);
    REQUIRE(w.ok());
    style = w.style();
    std::vector<std::string> out;
    std::vector<uint8_t> buf(msgMax);
    for (int guard = 0; guard < 10000 && !w.done(); ++guard) {
        size_t n = w.next({buf.data(), buf.size()});
        REQUIRE(n > 0);
        auto r = testutil::decode(buf.data(), n);
        REQUIRE(r.ok);
        CHECK(r.rcode == 0);
        out.insert(out.end(), r.an.begin(), r.an.end());
    }
    return out;
}

// Three versions: 1 (kV1), 2 (kV2), 3 (kV2 without old's replacement and with "more").
struct History {
    std::unique_ptr<Zone> v1 = load(kV1), v2 = load(kV2),
                          v3 = load(head(3) +
                                    "ns1 A 192.0.2.1\nwww A 192.0.2.10\nttl 120 A 192.0.2.5\n"
                                    "new AAAA 2001:db8::1\nmore TXT \"m\"\n" +
                                    kSame);
    std::shared_ptr<const Journal> j;
    History() {
        JournalLimits lim;
        j = extendJournal(nullptr, v2->apex(), diffZones(*v1, *v2), zoneDigest(*v2), lim);
        j = extendJournal(j.get(), v3->apex(), diffZones(*v2, *v3), zoneDigest(*v3), lim);
        v3->setJournal(j);
    }
};

}  // namespace

TEST_CASE("diffZones: every removed and added record, the SOAs first, a TTL change as both") {
    auto a = load(kV1), b = load(kV2);
    auto cs = diffZones(*a, *b);
    CHECK(cs->from == 1);
    CHECK(cs->to == 2);
    Lists l = lists(*cs);
    CHECK(l.removed == V{"x.test. 300 IN SOA ns1.x.test. host.x.test. 1 3600 600 86400 60",
                         "ttl.x.test. 60 IN A 192.0.2.5", "old.x.test. 300 IN TXT \"gone\""});
    CHECK(l.added == V{"x.test. 300 IN SOA ns1.x.test. host.x.test. 2 3600 600 86400 60",
                       "www.x.test. 300 IN A 192.0.2.11", "ttl.x.test. 120 IN A 192.0.2.5",
                       "new.x.test. 300 IN AAAA 2001:db8::1"});
    // Nothing changed but the serial: the SOAs alone.
    auto c = load(head(3) +
                  "ns1 A 192.0.2.1\nwww A 192.0.2.10\nwww A 192.0.2.11\nttl 120 A 192.0.2.5\n"
                  "new AAAA 2001:db8::1\n" +
                  kSame);
    auto same = diffZones(*b, *c);
    CHECK(same->removed == 1);
    CHECK(same->added == 1);
    // The digest leaves the serial out: same data, same digest; other data, another.
    CHECK(zoneDigest(*b) == zoneDigest(*c));
    CHECK(zoneDigest(*a) != zoneDigest(*b));
}

TEST_CASE("condense: RFC 1995 §5, records added then removed vanish, the outer SOAs frame the result") {
    History h;
    REQUIRE(h.j->entries.size() == 2);
    std::vector<const Changeset*> seq = h.j->from(1);
    REQUIRE(seq.size() == 2);
    Changeset c = condense(seq);
    CHECK(c.from == 1);
    CHECK(c.to == 3);
    Lists l = lists(c);
    // www's 192.0.2.11 came in 2 and left in 3: in neither list.
    CHECK(l.removed == V{"x.test. 300 IN SOA ns1.x.test. host.x.test. 1 3600 600 86400 60",
                         "ttl.x.test. 60 IN A 192.0.2.5", "old.x.test. 300 IN TXT \"gone\""});
    CHECK(l.added == V{"x.test. 300 IN SOA ns1.x.test. host.x.test. 3 3600 600 86400 60",
                       "ttl.x.test. 120 IN A 192.0.2.5", "new.x.test. 300 IN AAAA 2001:db8::1",
                       "more.x.test. 300 IN TXT \"m\""});
    // Condensing is the same as diffing the ends.
    Lists direct = lists(*diffZones(*h.v1, *h.v3));
    CHECK(direct.removed == l.removed);
    CHECK(direct.added.size() == l.added.size());
    CHECK(h.j->from(2).size() == 1);
    CHECK(h.j->from(3).empty());  // the current serial starts nothing
    CHECK(h.j->from(7).empty());
    CHECK(h.j->covers(1));
    CHECK(!h.j->covers(3));
}

TEST_CASE("journal bounds: depth and size drop the oldest changesets") {
    History h;
    auto v4 = load(head(4) + "ns1 A 192.0.2.1\n");
    auto d34 = diffZones(*h.v3, *v4);
    JournalLimits depth2{2, 1u << 20};
    auto j = extendJournal(h.j.get(), v4->apex(), d34, zoneDigest(*v4), depth2);
    REQUIRE(j->entries.size() == 2);
    CHECK(j->entries[0]->from == 2);
    CHECK(j->entries[1]->to == 4);
    CHECK(j->serial == 4);
    // Size: room for the last changeset alone.
    JournalLimits small{20, d34->records.size()};
    j = extendJournal(h.j.get(), v4->apex(), d34, zoneDigest(*v4), small);
    REQUIRE(j->entries.size() == 1);
    CHECK(j->bytes() == d34->records.size());
    // One octet less: nothing is kept, the journal still knows where it ends.
    JournalLimits tiny{20, d34->records.size() - 1};
    j = extendJournal(h.j.get(), v4->apex(), d34, zoneDigest(*v4), tiny);
    CHECK(j->entries.empty());
    CHECK(j->serial == 4);
    // A change that does not start where the journal ends starts a new one (no gap is bridged).
    auto d14 = diffZones(*h.v1, *v4);
    j = extendJournal(h.j.get(), v4->apex(), d14, zoneDigest(*v4), JournalLimits{});
    REQUIRE(j->entries.size() == 1);
    CHECK(j->entries[0]->from == 1);
}

TEST_CASE("journal file: round trip, exact size, and corruption detected") {
    History h;
    std::string bytes = serializeJournal(*h.j);
    size_t records = h.j->entries[0]->records.size() + h.j->entries[1]->records.size();
    // magic 8, version 2, apex 1 + 8 ("x.test."), serial 4, digest 32, count 4, 20 per changeset, SHA-256 32
    CHECK(bytes.size() == 8 + 2 + 1 + 8 + 4 + 32 + 4 + 2 * 20 + records + 32);
    Journal back;
    std::string err;
    auto span = [](const std::string& s) {
        return std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), s.size());
    };
    REQUIRE_MESSAGE(parseJournal(span(bytes), back, err), err);
    CHECK(back.apex == h.j->apex);
    CHECK(back.serial == 3);
    CHECK(back.digest == h.j->digest);
    REQUIRE(back.entries.size() == 2);
    CHECK(back.entries[1]->records == h.j->entries[1]->records);
    CHECK(serializeJournal(back) == bytes);

    std::string flipped = bytes;
    flipped[60] ^= 1;
    CHECK(!parseJournal(span(flipped), back, err));
    CHECK(err.find("checksum mismatch") != std::string::npos);
    CHECK(back.entries.empty());
    CHECK(!parseJournal(span(bytes.substr(0, bytes.size() - 1)), back, err));
    std::string magic = bytes;
    magic[0] = 'X';
    CHECK(!parseJournal(span(magic), back, err));
    CHECK(err == "octet 0: not a gslbd IXFR journal (bad magic)");
    CHECK(!parseJournal(span(std::string()), back, err));

    CHECK(journalFileName("Example.COM.") == "example.com.ixfr");
    CHECK(journalFileName(".") == ".ixfr");
    CHECK(journalFileName("a/b.test.") == "a%2Fb.test.ixfr");
}

TEST_CASE("resumeJournal: kept when it ends at the zone loaded, dropped when the data differs") {
    History h;
    std::string why;
    auto same = load(head(3) +
                     "ns1 A 192.0.2.1\nwww A 192.0.2.10\nttl 120 A 192.0.2.5\n"
                     "new AAAA 2001:db8::1\nmore TXT \"m\"\n" +
                     kSame);
    CHECK(resumeJournal(h.j, *same, zoneDigest(*same), JournalLimits{}, why) == h.j);
    // Only the serial moved on (serial_policy increment at a restart): one more SOA-only changeset.
    auto later = load(head(9) +
                      "ns1 A 192.0.2.1\nwww A 192.0.2.10\nttl 120 A 192.0.2.5\n"
                      "new AAAA 2001:db8::1\nmore TXT \"m\"\n" +
                      kSame);
    auto r = resumeJournal(h.j, *later, zoneDigest(*later), JournalLimits{}, why);
    REQUIRE(r);
    REQUIRE(r->entries.size() == 3);
    CHECK(r->serial == 9);
    Lists l = lists(*r->entries[2]);
    CHECK(l.removed == V{"x.test. 300 IN SOA ns1.x.test. host.x.test. 3 3600 600 86400 60"});
    CHECK(l.added == V{"x.test. 300 IN SOA ns1.x.test. host.x.test. 9 3600 600 86400 60"});
    // Other data: dropped, and why.
    auto other = load(head(9) + "ns1 A 192.0.2.1\n");
    CHECK(!resumeJournal(h.j, *other, zoneDigest(*other), JournalLimits{}, why));
    CHECK(why == "it ends at serial 3 with other data than the zone loaded (serial 9)");
    // A journal of more than the limits now allow is trimmed.
    auto t = resumeJournal(h.j, *same, zoneDigest(*same), JournalLimits{1, 1u << 20}, why);
    REQUIRE(t);
    REQUIRE(t->entries.size() == 1);
    CHECK(t->entries[0]->from == 2);
}

TEST_CASE("IXFR over TCP: condensed differences, up to date, AXFR-style") {
    History h;
    const Zone& z = *h.v3;
    XfrStyle st;
    auto recs = transfer(z, ixfrQuery("x.test.", 1), st);
    CHECK(st == XfrStyle::Incremental);
    CHECK(recs == V{"x.test. 300 IN SOA ns1.x.test. host.x.test. 3 3600 600 86400 60",
                    "x.test. 300 IN SOA ns1.x.test. host.x.test. 1 3600 600 86400 60",
                    "ttl.x.test. 60 IN A 192.0.2.5", "old.x.test. 300 IN TXT \"gone\"",
                    "x.test. 300 IN SOA ns1.x.test. host.x.test. 3 3600 600 86400 60",
                    "ttl.x.test. 120 IN A 192.0.2.5", "new.x.test. 300 IN AAAA 2001:db8::1",
                    "more.x.test. 300 IN TXT \"m\"",
                    "x.test. 300 IN SOA ns1.x.test. host.x.test. 3 3600 600 86400 60"});
    // From 2: the one changeset as it is.
    recs = transfer(z, ixfrQuery("x.test.", 2), st);
    CHECK(st == XfrStyle::Incremental);
    CHECK(recs.size() == 1 + 2 + 2 + 1);  // removed: SOA 2, www's .11; added: SOA 3, more
    // Up to date (or ahead, RFC 1982): the SOA alone, in one message.
    for (uint32_t s : {3u, 4u}) {
        recs = transfer(z, ixfrQuery("x.test.", s), st);
        CHECK(st == XfrStyle::UpToDate);
        CHECK(recs == V{"x.test. 300 IN SOA ns1.x.test. host.x.test. 3 3600 600 86400 60"});
    }
    // Unknown serials, a request without its SOA and an AXFR: the whole zone.
    for (auto q :
         {ixfrQuery("x.test.", 0), ixfrQuery("x.test.", 4000000000u), makeQuery("x.test.", kTypeIXFR)}) {
        recs = transfer(z, q, st);
        CHECK(st == XfrStyle::AxfrStyle);
        CHECK(recs.size() == z.recordCount() + 1);
    }
    recs = transfer(z, makeQuery("x.test.", kTypeAXFR), st);
    CHECK(st == XfrStyle::Axfr);
    CHECK(recs.size() == z.recordCount() + 1);
    // Differences larger than the zone: AXFR-style (a zone of 3 records, a difference of 6 that take twice
    // its octets).
    auto small = load(head(4) + "ns1 A 192.0.2.1\n");
    auto j =
        extendJournal(h.j.get(), small->apex(), diffZones(z, *small), zoneDigest(*small), JournalLimits{});
    small->setJournal(j);
    CHECK(planIxfr(*small, 3).style == XfrStyle::AxfrStyle);
    CHECK(planIxfr(*small, 4).style == XfrStyle::UpToDate);
}

TEST_CASE("IXFR over UDP: the SOA until admitted, then the differences when they fit (RFC 1995 §2)") {
    History h;
    testutil::Server s;
    s.db.add(std::move(h.v3));
    const Zone& z = *s.db.zones().front();
    auto q = ixfrQuery("x.test.", 1);
    // Not admitted yet: the SOA-only answer is written and the server is asked (Action::Transfer).
    auto res =
        gslb::zones::answer(s.db, s.opt, {q.data(), q.size()}, false, {s.out.data(), s.out.size()}, nullptr);
    CHECK(res.action == Action::Transfer);
    CHECK(res.zone == &z);
    auto r = testutil::decode(s.out.data(), res.len);
    CHECK(r.an == V{"x.test. 300 IN SOA ns1.x.test. host.x.test. 3 3600 600 86400 60"});
    // Admitted: the nine records of the transfer above, in one datagram.
    ClientInfo ok;
    ok.transferAllowed = true;
    res = gslb::zones::answer(s.db, s.opt, {q.data(), q.size()}, false, {s.out.data(), s.out.size()}, nullptr,
                              ok);
    CHECK(res.action == Action::Send);
    r = testutil::decode(s.out.data(), res.len);
    CHECK(r.aa);
    CHECK(!r.tc);
    REQUIRE(r.an.size() == 9);
    CHECK(r.an[1] == "x.test. 300 IN SOA ns1.x.test. host.x.test. 1 3600 600 86400 60");
    CHECK(res.len <= 512);
    // Up to date, or not in the journal: the SOA, and nothing for the server to decide.
    for (uint32_t serial : {3u, 0u}) {
        auto q2 = ixfrQuery("x.test.", serial);
        res = gslb::zones::answer(s.db, s.opt, {q2.data(), q2.size()}, false, {s.out.data(), s.out.size()},
                                  nullptr);
        CHECK(res.action == Action::Send);
        CHECK(testutil::decode(s.out.data(), res.len).an.size() == 1);
    }
}

TEST_CASE("IXFR over UDP: differences larger than a datagram give the SOA alone") {
    std::string big1 = head(1), big2 = head(2);
    for (int i = 0; i < 40; ++i) big2 += "h" + std::to_string(i) + " TXT \"" + std::string(30, 'y') + "\"\n";
    for (int i = 0; i < 60; ++i) {
        big1 += "k" + std::to_string(i) + " A 192.0.2.1\n";
        big2 += "k" + std::to_string(i) + " A 192.0.2.1\n";
    }
    auto a = load(big1), b = load(big2);
    b->setJournal(extendJournal(nullptr, b->apex(), diffZones(*a, *b), zoneDigest(*b), JournalLimits{}));
    testutil::Server s;
    s.db.add(std::move(b));
    auto q = ixfrQuery("x.test.", 1);
    ClientInfo ok;
    ok.transferAllowed = true;
    auto res = gslb::zones::answer(s.db, s.opt, {q.data(), q.size()}, false, {s.out.data(), s.out.size()},
                                   nullptr, ok);
    auto r = testutil::decode(s.out.data(), res.len);
    CHECK(r.an == V{"x.test. 300 IN SOA ns1.x.test. host.x.test. 2 3600 600 86400 60"});
    CHECK(!r.tc);
    // Over TCP the same request gets all 40 of them.
    XfrStyle st;
    CHECK(transfer(*s.db.zones().front(), q, st).size() == 1 + 1 + 1 + 40 + 1);
    CHECK(st == XfrStyle::Incremental);
}
