// The resumable AXFR writer (zones/axfr.cpp): RFC 5936 §2.2 message sequences produced one message per call.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "zones/axfr.hpp"
#include "zones/rrtype.hpp"

using namespace gslb::zones;
using testutil::makeQuery;
using testutil::Resp;

namespace {

std::string bigZone(int n, const std::string& extra = "") {
    std::string z =
        "$ORIGIN x.test.\n$TTL 300\n@ SOA ns1 host 7 3600 600 86400 60\n@ NS ns1\nns1 A 192.0.2.1\n"
        "a.b.c A 192.0.2.2\n";  // b.c and c are empty non-terminals: nodes without records
    for (int i = 0; i < n; ++i) z += "h" + std::to_string(i) + " TXT \"" + std::string(40, 'x') + "\"\n";
    return z + extra;
}

struct Transfer {
    std::vector<Resp> msgs;
    std::vector<std::string> records;  // every answer record, in order
    std::vector<std::vector<uint8_t>> raw;
};

Transfer run(XfrWriter& w, size_t msgMax) {
    Transfer t;
    std::vector<uint8_t> buf(msgMax);
    for (int guard = 0; guard < 100000 && !w.done(); ++guard) {
        size_t n = w.next({buf.data(), buf.size()});
        REQUIRE(n > 0);
        REQUIRE(n <= msgMax);
        CHECK(testutil::countedEnd(buf.data(), n) == n);  // strict: nothing past the counted records
        Resp r = testutil::decode(buf.data(), n);
        REQUIRE(r.ok);
        t.records.insert(t.records.end(), r.an.begin(), r.an.end());
        t.msgs.push_back(r);
        t.raw.emplace_back(buf.begin(), buf.begin() + long(n));
    }
    CHECK(w.next({buf.data(), buf.size()}) == 0);  // done stays done
    return t;
}

}  // namespace

TEST_CASE("AXFR writer: SOA first and last, every record once, the question only in the first message") {
    testutil::Server s;
    s.add("x.test.", bigZone(300));
    const Zone* z = s.db.zones().front().get();
    auto q = makeQuery("x.test.", kTypeAXFR);
    XfrWriter w(*z, {q.data(), q.size()}, 512);
    REQUIRE(w.ok());
    Transfer t = run(w, 512);
    REQUIRE(t.msgs.size() > 10);  // 512-octet messages force many
    CHECK(w.messages() == t.msgs.size());
    CHECK(t.records.size() == z->recordCount() + 1);
    CHECK(t.records.front().find(" SOA ") != std::string::npos);
    CHECK(t.records.back().find(" SOA ") != std::string::npos);
    CHECK(std::count_if(t.records.begin(), t.records.end(),
                        [](const std::string& r) { return r.find(" SOA ") != std::string::npos; }) == 2);
    auto body = std::vector<std::string>(t.records.begin() + 1, t.records.end() - 1);
    std::sort(body.begin(), body.end());
    CHECK(std::adjacent_find(body.begin(), body.end()) == body.end());
    for (size_t i = 0; i < t.raw.size(); ++i) {
        const auto& m = t.raw[i];
        CHECK((m[0] << 8 | m[1]) == 0x1234);  // the query's ID in every message
        CHECK((m[2] & 0x84) == 0x84);         // QR, AA
        CHECK((m[5] == 1) == (i == 0));       // QDCOUNT 1 in the first message only (RFC 5936 §2.2.1)
        CHECK(t.msgs[i].rcode == kRcodeNoError);
    }
}

TEST_CASE("AXFR writer: the message size only changes how records are grouped") {
    testutil::Server s;
    s.add("x.test.", bigZone(2000));
    const Zone* z = s.db.zones().front().get();
    auto q = makeQuery("x.test.", kTypeAXFR);
    XfrWriter small(*z, {q.data(), q.size()}, 512), large(*z, {q.data(), q.size()});
    Transfer a = run(small, 512), b = run(large, 65535);
    CHECK(a.records == b.records);
    CHECK(b.msgs.size() > 1);  // 2000 × ~50 octets > 64 KiB
    CHECK(b.msgs.size() < a.msgs.size());
}

TEST_CASE("AXFR writer: two transfers of one zone interleaved are independent cursors") {
    testutil::Server s;
    s.add("x.test.", bigZone(500));
    const Zone* z = s.db.zones().front().get();
    auto q = makeQuery("x.test.", kTypeAXFR);
    XfrWriter ref(*z, {q.data(), q.size()}, 512);
    Transfer whole = run(ref, 512);
    XfrWriter w1(*z, {q.data(), q.size()}, 512), w2(*z, {q.data(), q.size()}, 512);
    std::vector<uint8_t> b(512);
    std::vector<std::vector<uint8_t>> m1, m2;
    while (!w1.done() || !w2.done()) {
        if (size_t n = w1.next({b.data(), b.size()})) m1.emplace_back(b.begin(), b.begin() + long(n));
        if (m1.size() % 3 == 0)  // w2 runs at a third of w1's pace, then catches up
            if (size_t n = w2.next({b.data(), b.size()})) m2.emplace_back(b.begin(), b.begin() + long(n));
        if (w1.done())
            while (size_t n = w2.next({b.data(), b.size()})) m2.emplace_back(b.begin(), b.begin() + long(n));
    }
    CHECK(m1 == whole.raw);
    CHECK(m2 == whole.raw);
}

TEST_CASE("AXFR writer: the cursor holds a position, not the transfer") {
    // The whole point: a client that stops reading costs the server this object and its buffer, whatever the
    // size of the zone.
    CHECK(sizeof(XfrWriter) < 400);
}

TEST_CASE("AXFR writer: a record that fits in no message ends the transfer with SERVFAIL") {
    testutil::Server s;
    std::string txt;
    for (int i = 0; i < 4; ++i) txt += " \"" + std::string(200, 'y') + "\"";
    s.add("x.test.", bigZone(3, "huge TXT" + txt + "\n"));
    const Zone* z = s.db.zones().front().get();
    auto q = makeQuery("x.test.", kTypeAXFR);
    XfrWriter w(*z, {q.data(), q.size()}, 512);  // an 800-octet TXT cannot fit in 512
    Transfer t = run(w, 512);
    REQUIRE(!t.msgs.empty());
    CHECK(t.msgs.back().rcode == kRcodeServFail);
    CHECK(t.msgs.back().an.empty());
    for (size_t i = 0; i + 1 < t.msgs.size(); ++i) CHECK(t.msgs[i].rcode == kRcodeNoError);
    // The same zone transfers whole in 64 KiB messages.
    XfrWriter big(*z, {q.data(), q.size()});
    Transfer all = run(big, 65535);
    CHECK(all.msgs.back().rcode == kRcodeNoError);
    CHECK(all.records.size() == z->recordCount() + 1);
}

TEST_CASE("AXFR writer: a query that does not parse writes nothing") {
    testutil::Server s;
    s.add("x.test.", bigZone(1));
    const Zone* z = s.db.zones().front().get();
    std::vector<uint8_t> runt = {0x12, 0x34, 0, 0};
    XfrWriter w(*z, {runt.data(), runt.size()}, 512);
    CHECK_FALSE(w.ok());
    CHECK(w.done());
    std::vector<uint8_t> b(512);
    CHECK(w.next({b.data(), b.size()}) == 0);
    auto q = makeQuery("x.test.", kTypeAXFR);
    XfrWriter ok(*z, {q.data(), q.size()}, 512);
    CHECK(ok.ok());
    CHECK(ok.next({b.data(), 100}) == 0);  // a buffer smaller than msgMax: refused, nothing written
    CHECK_FALSE(ok.done());
}
