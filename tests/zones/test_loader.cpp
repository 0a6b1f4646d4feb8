// Zone loading (zones/loader.cpp, zones/zone.cpp): directives, and each rejection naming file and line.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "helpers.hpp"
#include "zones/rrtype.hpp"

using namespace gslb::zones;
using testutil::writeFile;

namespace {

const char* kSoa = "@ 300 IN SOA ns1 host 1 3600 600 86400 60\n@ NS ns1\nns1 A 192.0.2.1\n";

std::string loadError(const std::string& file, const std::string& text,
                      const std::string& origin = "t.test.") {
    std::string err;
    auto z = loadZone(writeFile(file, text), origin, err);
    CHECK(z == nullptr);
    return err;
}

}  // namespace

TEST_CASE("directives: $ORIGIN, $TTL, relative names, multi-line records, escapes, TYPEnnn") {
    std::string text =
        "$ORIGIN t.test.\n"
        "$TTL 120\n"
        "@ IN SOA ns1 host (\n  7 ; serial\n  3600 600 86400 60 )\n"
        "  NS ns1\n"
        "ns1 A 192.0.2.1\n"
        "$ORIGIN sub.t.test.\n"
        "www 60 A 192.0.2.2\n"
        "a\\.b TXT \"x\\\"y\"\n"
        "unk TYPE65534 \\# 3 010203\n";
    std::string err;
    auto z = loadZone(writeFile("d.zone", text), "t.test.", err);
    REQUIRE_MESSAGE(z, err);
    CHECK(z->serial() == 7);
    WireName n;
    REQUIRE(textToName("www.sub.t.test.", {}, n));
    uint32_t idx = z->find(n);
    REQUIRE(idx != kNone);
    const RRset* a = z->rrset(z->node(idx), kTypeA);
    REQUIRE(a);
    CHECK(a->ttl == 60);
    REQUIRE(textToName("ns1.t.test.", {}, n));
    CHECK(z->rrset(z->node(z->find(n)), kTypeA)->ttl == 120);
    // "a\.b" is one label holding a dot.
    WireName esc = std::string("\3a.b\3sub\1t\4test\0", 16);
    CHECK(z->find(esc) != kNone);
    REQUIRE(textToName("unk.sub.t.test.", {}, n));
    const RRset* u = z->rrset(z->node(z->find(n)), 65534);
    REQUIRE(u);
    CHECK(z->rdata(u->first).len == 3);
    // sub.t.test. is an empty non-terminal: a node without RRsets.
    REQUIRE(textToName("sub.t.test.", {}, n));
    REQUIRE(z->find(n) != kNone);
    CHECK(z->node(z->find(n)).setCount == 0);
}

TEST_CASE("without $TTL and no TTL written before it, a record takes the SOA MINIMUM (BIND's fallback)") {
    std::string err;
    auto z = loadZone(
        writeFile("nottl.zone", "@ IN SOA ns1 host 1 3600 600 86400 77\n@ NS ns1\nns1 A 192.0.2.1\n"),
        "t.test.", err);
    REQUIRE_MESSAGE(z, err);
    CHECK(z->soa().ttl == 77);
    CHECK(z->negativeTtl() == 77);
}

TEST_CASE("negative TTL is min(SOA TTL, MINIMUM) (RFC 2308 §3)") {
    std::string err;
    auto z = loadZone(writeFile("neg.zone", "@ 30 IN SOA ns1 host 1 3600 600 86400 300\n@ 300 NS ns1\n"),
                      "t.test.", err);
    REQUIRE_MESSAGE(z, err);
    CHECK(z->negativeTtl() == 30);
}

TEST_CASE("$INCLUDE with its own origin, which does not leak back (RFC 1035 §5.1)") {
    writeFile("inc-child.zone", "host A 192.0.2.5\n");
    std::string text = std::string(kSoa) + "$INCLUDE inc-child.zone sub.t.test.\nafter A 192.0.2.6\n";
    std::string err;
    auto z = loadZone(writeFile("inc-parent.zone", text), "t.test.", err);
    REQUIRE_MESSAGE(z, err);
    WireName n;
    REQUIRE(textToName("host.sub.t.test.", {}, n));
    CHECK(z->find(n) != kNone);
    REQUIRE(textToName("after.t.test.", {}, n));
    CHECK(z->find(n) != kNone);
}

TEST_CASE("$INCLUDE of a missing file and an include loop are errors with file and line") {
    std::string err = loadError("inc-missing.zone", std::string(kSoa) + "$INCLUDE nothere.zone\n");
    CHECK(err.find("inc-missing.zone:4") != std::string::npos);
    CHECK(err.find("cannot open") != std::string::npos);
    err = loadError("inc-loop.zone", std::string(kSoa) + "$INCLUDE inc-loop.zone\n");
    CHECK(err.find("nested") != std::string::npos);
}

TEST_CASE("rejections name file and line") {
    SUBCASE("no SOA") {
        std::string err = loadError("nosoa.zone", "$TTL 60\n@ NS ns1\nns1 A 192.0.2.1\n");
        CHECK(err.find("nosoa.zone:2: no SOA") != std::string::npos);
    }
    SUBCASE("two SOA records") {
        std::string err =
            loadError("twosoa.zone", std::string(kSoa) + "@ 300 IN SOA ns2 host 2 3600 600 86400 60\n");
        CHECK(err.find("twosoa.zone:4: a second SOA") != std::string::npos);
    }
    SUBCASE("SOA owner not the apex") {
        std::string err = loadError("soaowner.zone", "x 300 IN SOA ns1 host 1 3600 600 86400 60\n@ NS ns1\n");
        CHECK(err.find("soaowner.zone:1: SOA owner x.t.test. is not the zone apex") != std::string::npos);
    }
    SUBCASE("no NS at the apex") {
        std::string err =
            loadError("nons.zone", "@ 300 IN SOA ns1 host 1 3600 600 86400 60\nns1 A 192.0.2.1\n");
        CHECK(err.find("nons.zone:1: no NS records at the apex") != std::string::npos);
    }
    SUBCASE("CNAME beside other data") {
        std::string err = loadError("cname.zone", std::string(kSoa) + "www CNAME ns1\nwww A 192.0.2.9\n");
        CHECK(err.find("cname.zone:5: CNAME beside other data at www.t.test.") != std::string::npos);
    }
    SUBCASE("record outside the zone") {
        std::string err = loadError("outside.zone", std::string(kSoa) + "www.other.test. A 192.0.2.9\n");
        CHECK(err.find("outside.zone:4: www.other.test. is outside the zone t.test.") != std::string::npos);
    }
    SUBCASE("a name that only shares a suffix is outside (label boundary)") {
        std::string err = loadError("suffix.zone", std::string(kSoa) + "xt.test. A 192.0.2.9\n");
        CHECK(err.find("suffix.zone:4:") != std::string::npos);
    }
    SUBCASE("syntax error") {
        std::string err = loadError("syntax.zone", std::string(kSoa) + "www A 999.1.1.1\n");
        CHECK(err.find("syntax.zone:4:") != std::string::npos);
    }
}

TEST_CASE("duplicate records are one; differing TTLs in an RRset become the lowest (RFC 2181 §5)") {
    std::string err;
    auto z = loadZone(
        writeFile("dup.zone", std::string(kSoa) + "w 100 A 192.0.2.7\nw 50 A 192.0.2.7\nw 70 A 192.0.2.8\n"),
        "t.test.", err);
    REQUIRE_MESSAGE(z, err);
    WireName n;
    REQUIRE(textToName("w.t.test.", {}, n));
    const RRset* a = z->rrset(z->node(z->find(n)), kTypeA);
    CHECK(a->count == 2);
    CHECK(a->ttl == 50);
}

TEST_CASE("a large file parsed in parts on several threads gives exactly the records of a sequential parse") {
    // Directives, relative names, blank-owner lines and multi-line records all around the cut points.
    std::string text =
        "$ORIGIN t.test.\n$TTL 100\n@ IN SOA ns1 host ( 1 3600\n 600 86400 60 )\n@ NS ns1\nns1 A 192.0.2.1\n";
    for (int i = 0; i < 3000; ++i) {
        if (i % 500 == 250) text += fmt::format("$ORIGIN s{}.t.test.\n", i);
        if (i % 700 == 350) text += fmt::format("$TTL {}\n", 1000 + i);
        text += fmt::format("h{} A 192.0.2.{}\n", i, i % 250);
        text += "   AAAA 2001:db8::1\n";  // blank owner: the previous one
        if (i % 97 == 0) text += fmt::format("m{} MX ( 10\n   mail{} )\n", i, i);
        if (i % 131 == 0) text += fmt::format("t{} TXT \"a ; b\" \"(c\"\n", i);
    }
    std::string path = writeFile("parallel.zone", text);
    // The reference: one thread, every line through ldns.
    SourceSet ref;
    std::string err;
    setParallelParseThreshold(SIZE_MAX);
    setPlainFastPath(false);
    REQUIRE_MESSAGE(readZoneFile(path, "t.test.", ref, err), err);
    setPlainFastPath(true);
    REQUIRE(ref.records.size() > 6000);
    for (size_t threshold : {size_t(SIZE_MAX), size_t(1024)}) {
        CAPTURE(threshold);
        SourceSet par;
        setParallelParseThreshold(threshold);
        REQUIRE_MESSAGE(readZoneFile(path, "t.test.", par, err), err);
        REQUIRE(par.records.size() == ref.records.size());
        for (size_t i = 0; i < ref.records.size(); ++i) {
            CAPTURE(i);
            const SourceRecord &a = par.records[i], &b = ref.records[i];
            CHECK(a.owner == b.owner);
            CHECK(a.type == b.type);
            CHECK(a.ttl == b.ttl);
            CHECK(a.rdata == b.rdata);
            CHECK(a.line == b.line);
            CHECK(par.file(a) == ref.file(b));
            if (a.owner != b.owner || a.line != b.line) break;
        }
    }
    setParallelParseThreshold(4u << 20);
    // An error in a later part is still reported with its own line.
    std::string bad = text + "oops A 999.1.1.1\n";
    size_t lines = size_t(std::count(bad.begin(), bad.end(), '\n'));
    setParallelParseThreshold(1024);
    SourceSet none;
    CHECK_FALSE(readZoneFile(writeFile("parallel-bad.zone", bad), "t.test.", none, err));
    setParallelParseThreshold(4u << 20);
    CHECK(err.find(fmt::format("parallel-bad.zone:{}:", lines)) != std::string::npos);
}

// The untrusted-input work (UBSan): two records with empty rdata made Zone::compile call memcmp with a null
// pointer.
TEST_CASE("two records with empty rdata are one record, with no memcmp of a null pointer") {
    std::string err;
    auto z = loadZone(writeFile("empty.zone", std::string(kSoa) + "x TYPE65534 \\# 0\nx TYPE65534 \\# 0\n"),
                      "t.test.", err);
    REQUIRE_MESSAGE(z, err);
    WireName n;
    REQUIRE(textToName("x.t.test.", {}, n));
    const RRset* s = z->rrset(z->node(z->find(n)), 65534);
    REQUIRE(s);
    CHECK(s->count == 1);
    CHECK(z->rdata(s->first).len == 0);
}

// ldns accepts generic data for an SOA; its serial and MINIMUM were read from before the rdata.
TEST_CASE("an SOA whose rdata is not two names and five numbers is refused with file and line") {
    std::string err = loadError("shortsoa.zone", "@ 300 IN SOA \\# 2 0000\n@ NS ns1\n");
    CHECK(err.find("shortsoa.zone:1: SOA rdata is not two names") != std::string::npos);
}

namespace {

// A wire name as dotted text, other bytes than letters, digits, '-' and '_' as \DDD.
std::string nameText(std::string_view w) {
    std::string s;
    for (size_t i = 0; i < w.size() && w[i] != 0; i += size_t(uint8_t(w[i])) + 1) {
        for (size_t k = 1; k <= size_t(uint8_t(w[i])) && i + k < w.size(); ++k) {
            unsigned char c = uint8_t(w[i + k]);
            s += std::isalnum(c) || c == '-' || c == '_' ? std::string(1, char(c))
                                                         : fmt::format("\\{:03}", int(c));
        }
        s += '.';
    }
    return s.empty() ? "." : s;
}

std::string hexText(std::string_view b) {
    std::string s;
    for (unsigned char c : b) s += fmt::format("{:02x}", c);
    return s;
}

// One way of reading a master file: the fast path on or off, in one piece or cut into parts on threads.
struct ReadResult {
    bool ok = false;
    std::string error;
    std::vector<std::string> records;  // owner, type, TTL, rdata, file and line of each, as text
};

ReadResult readWith(const std::string& path, bool fast, bool parallel) {
    setPlainFastPath(fast);
    setParallelParseThreshold(parallel ? 1 : SIZE_MAX);
    SourceSet set;
    ReadResult r;
    r.ok = readZoneFile(path, "t.test.", set, r.error);
    // After an error the records read so far are no result (a parallel read stops elsewhere).
    if (r.ok)
        for (const SourceRecord& rec : set.records)
            r.records.push_back(fmt::format("{} {} {} {} {}:{}", nameText(rec.owner), rec.type, rec.ttl,
                                            hexText(rec.rdata), set.file(rec), rec.line));
    setPlainFastPath(true);
    setParallelParseThreshold(4u << 20);
    return r;
}

// Reads `text` the four ways and checks they agree (same records or the same error); returns the result.
ReadResult readAllWays(const std::string& name, const std::string& text) {
    std::string path = writeFile(name, text);
    ReadResult ref = readWith(path, false, false);
    for (bool fast : {true, false})
        for (bool parallel : {false, true}) {
            CAPTURE(fast);
            CAPTURE(parallel);
            ReadResult r = readWith(path, fast, parallel);
            CHECK(r.ok == ref.ok);
            CHECK(r.error == ref.error);
            CHECK(r.records == ref.records);
        }
    return ref;
}

// The line of each record read from `text`, in file order.
std::vector<int> lines(const ReadResult& r) {
    std::vector<int> out;
    for (const auto& rec : r.records) out.push_back(std::stoi(rec.substr(rec.rfind(':') + 1)));
    return out;
}

}  // namespace

TEST_CASE(
    "the fast path takes no line with a control byte: ldns drops NUL, splits at FF/VT, reads CR as a blank") {
    // Found by tests/fuzz/fuzz_loader: the fast path kept a NUL byte inside the owner name, where ldns drops
    // it.
    std::string nul =
        std::string(kSoa) + std::string("z\0 A 192.0.2.2\n", 15) + std::string("\0\0 TXT x\n", 9);
    ReadResult r = readAllWays("ctl-nul.zone", nul);
    REQUIRE_MESSAGE(r.ok, r.error);
    CHECK(r.records[3].find("z.t.test. 1 ") == 0);
    CHECK(r.records[4].find("z.t.test. 16 ") == 0);  // the NULs are no owner: the line inherits z
    // Found by fuzz_loader too: a line "\f" made the fast path start an ldns run there, which read the next
    // line's owner differently from ldns reading the whole file.
    readAllWays("ctl-ff.zone", std::string(kSoa) + "\n\f\n\f SRV 0 5 5060 x\n");
    for (const char* line :
         {"f A 192.0.2.3\f\n", "v A 192.0.2.3\v\n", "c A 192.0.2.3\r\n", "w\fA 192.0.2.3\n"}) {
        CAPTURE(line);
        readAllWays("ctl-misc.zone", std::string(kSoa) + line + "after A 192.0.2.4\n");
    }
}

TEST_CASE("a CR that starts a line: ldns skips it after a line that held anything, on every path") {
    // Found by tests/fuzz/fuzz_loader (crash-70afad…, "\t\n\r\r0\r\r\r\x8d"): when ldns ends a line it
    // skips the CRs that follow, so "\r\r0" names the owner 0; the fast path had taken the "\t" line itself
    // and started an ldns run at "\r\r0", which read the CRs as blanks and gave the record the origin.
    ReadResult r = readAllWays("cr-fuzz.zone", std::string("\t\n\r\r0\r\r\r\x8d", 9));
    REQUIRE_MESSAGE(r.ok, r.error);
    REQUIRE(r.records.size() == 1);
    CHECK(r.records[0].find("0.t.test. 0 ") == 0);
    r = readAllWays("cr-owner.zone", std::string(kSoa) + "a A 192.0.2.1\n\r\rb A 192.0.2.2\n");
    REQUIRE_MESSAGE(r.ok, r.error);
    CHECK(r.records[4].find("b.t.test. 1 ") == 0);  // not a second record of a
    CHECK(lines(r).back() == 5);
    // Empty lines are skipped the same way ("\n\n\rA" names the owner A), but after a line with only a
    // comment ldns reads on into the next line, where the CR is a blank: the line inherits the owner.
    r = readAllWays("cr-empty.zone", std::string(kSoa) + "a A 192.0.2.1\n\n\rA A 192.0.2.2\n");
    REQUIRE_MESSAGE(r.ok, r.error);
    CHECK(r.records[4].find("a.t.test. 1 ") == 0);
    r = readAllWays("cr-inherit.zone", std::string(kSoa) + "a A 192.0.2.1\n; c\n\rA 192.0.2.2\n");
    REQUIRE_MESSAGE(r.ok, r.error);
    CHECK(r.records[4].find("a.t.test. 1 ") == 0);
    // CRLF lines with blank lines between them, the way such a file is written.
    r = readAllWays("crlf.zone", std::string(kSoa) + "c A 192.0.2.1\r\n\r\n\tA 192.0.2.2\r\nd A 192.0.2.3\n");
    REQUIRE_MESSAGE(r.ok, r.error);
    CHECK(r.records[4].find("c.t.test. 1 ") == 0);
    CHECK(r.records[5].find("d.t.test. 1 ") == 0);
}

TEST_CASE("a backslash before a line end continues the record on the next line, on every path") {
    // Found by fuzz_loader: the fast path took the second line as a record of its own, where ldns reads the
    // escaped line end as part of the first; and a $ORIGIN continued that way was replayed cut short when the
    // file was parsed in parts.
    ReadResult r =
        readAllWays("esc-nl.zone", std::string(kSoa) + "q TXT a\\\nb\n A 192.0.2.3\nlast A 192.0.2.4\n");
    REQUIRE_MESSAGE(r.ok, r.error);
    CHECK(lines(r) == std::vector<int>{1, 2, 3, 4, 6, 7});
    r = readAllWays("esc-origin.zone",
                    std::string(kSoa) + "$ORIGIN s\\\nub.t.test.\nw A 192.0.2.1\n" + "x A 192.0.2.2\n");
    REQUIRE_MESSAGE(r.ok, r.error);
    CHECK(r.records[3].find("w.sub.t.test. 1 ") == 0);  // "s\<line end>ub": ldns reads "s\ub", \u is u
    // A backslash pair is a backslash: the line end is not escaped; nor is one in a comment.
    r = readAllWays("esc-pair.zone", std::string(kSoa) + "p TXT a\\\\\nq A 192.0.2.1 ; c\\\nr A 192.0.2.2\n");
    REQUIRE_MESSAGE(r.ok, r.error);
    CHECK(lines(r) == std::vector<int>{1, 2, 3, 4, 5, 6});
    LineScan scan;
    scanZoneLine("a TXT x\\", scan);
    CHECK(scan.open());
    scanZoneLine("y", scan);
    CHECK_FALSE(scan.open());
    scanZoneLine("a TXT \"open", scan);
    CHECK_FALSE(scan.open());  // outside parentheses ldns ends a quoted string at the line end
    scanZoneLine("a TXT ( \"open", scan);
    CHECK(scan.open());
}

TEST_CASE("a file is cut into parts only where a line names its owner, as ldns reads it") {
    // Found by fuzz_loader: a line that starts with '(' inherits the previous owner (ldns drops the
    // parenthesis, the line then starts with a blank), but the parallel parser started a part there.
    for (const char* line : {"( A 192.0.2.7 )", "(((((( 5 506\"", ")A 192.0.2.7", "\"q\" A 192.0.2.7"}) {
        CAPTURE(line);
        // Blank lines put the half of the file, where the parallel parser looks for a cut, before the line.
        readAllWays("cut.zone",
                    std::string("$TTL 0\n") + kSoa + "h NS ns\n" + std::string(120, '\n') + line + "\n");
    }
}

TEST_CASE("a record and an error name the record's own first line, not the blank lines after it") {
    // ldns counts the blank lines it skips after a record into the record's line: a record followed by
    // blank lines was reported on the last of them, by the serial parser and one off by the parallel one.
    std::string text = std::string(kSoa) +
                       "m MX ( 10\n"  // 4
                       "  ns1 )\n"
                       "\n"
                       "; a comment\n"
                       "\n"
                       "h HINFO cpu os\n"  // 9
                       "\n"
                       "\n"
                       "x A 192.0.2.2\n";  // 12
    ReadResult r = readAllWays("lines.zone", text);
    REQUIRE_MESSAGE(r.ok, r.error);
    CHECK(lines(r) == std::vector<int>{1, 2, 3, 4, 9, 12});

    for (const auto& badLine : std::vector<std::pair<std::string, int>>{
             {"bad HINFO\n\n\n; after\n\n", 4},                   // ldns' error, blank lines after it
             {"\n\n  ; before\nbad A 999.1.1.1\n\n", 7},          // after blank lines and a comment
             {"bad MX ( 10\n\n  x..y )\n\n", 4},                  // a multi-line record: its first line
             {"ok A 192.0.2.1\n\n\nbad CH A 192.0.2.1\n", 7}}) {  // the class check after the parse
        // Not a structured binding: CAPTURE's lambda cannot capture one in clang 14 (the fuzz build).
        const std::string& bad = badLine.first;
        const int line = badLine.second;
        CAPTURE(bad);
        r = readAllWays("line-err.zone", std::string(kSoa) + bad);
        CHECK_FALSE(r.ok);
        CHECK(r.error.find(fmt::format("line-err.zone:{}: ", line)) != std::string::npos);
    }
    // In an included file: that file's line; the $INCLUDE's own line when it cannot be opened.
    writeFile("line-inc.zone", "\n\nbad A 1.2.3\n\n\n");
    r = readAllWays("line-top.zone", std::string(kSoa) + "\n$INCLUDE line-inc.zone\n");
    CHECK_FALSE(r.ok);
    CHECK(r.error.find("line-inc.zone:3: ") != std::string::npos);
}

namespace {

uint32_t ttlOf(const Zone& z, const std::string& name, uint16_t type) {
    WireName n;
    REQUIRE(textToName(name, {}, n));
    uint32_t idx = z.find(n);
    REQUIRE(idx != kNone);
    const RRset* s = z.rrset(z.node(idx), type);
    REQUIRE(s);
    return s->ttl;
}

std::string allWarnings(const Zone& z) {
    std::string out;
    for (const auto& w : z.warnings()) out += w.where + ": " + w.message + "\n";
    return out;
}

}  // namespace

TEST_CASE("without $TTL a record takes the last TTL written before it (RFC 1035 §5.1, as BIND and NSD)") {
    // The trial's zone: SOA 1h with MINIMUM 5m, ns1 1d, then caa without a TTL. BIND serves 86400 there
    // (named-checkzone -D), gslbd served 300 (the MINIMUM). Both paths: the fast one and ldns alone.
    const std::string text =
        "@ 1h IN SOA ns1 host 1 3600 600 86400 5m\n"
        "@ NS ns1\n"
        "ns1 1d A 192.0.2.1\n"
        "caa CAA 0 issue \"ca.example.net\"\n"
        "www A 192.0.2.2\n"
        "$TTL 120\n"
        "after A 192.0.2.3\n";
    for (bool fast : {true, false}) {
        setPlainFastPath(fast);
        std::string err;
        auto z = loadZone(writeFile("rfc1035ttl.zone", text), "t.test.", err);
        setPlainFastPath(true);
        REQUIRE_MESSAGE(z, err);
        CHECK(ttlOf(*z, "t.test.", kTypeNS) == 3600);  // the SOA's 1h, written just before
        CHECK(ttlOf(*z, "caa.t.test.", 257) == 86400);
        CHECK(ttlOf(*z, "www.t.test.", kTypeA) == 86400);
        CHECK(ttlOf(*z, "after.t.test.", kTypeA) == 120);  // $TTL takes over (RFC 2308 §4)
        // Said once per file, at the first record it applies to.
        std::string w = allWarnings(*z);
        CHECK_MESSAGE(w.find("rfc1035ttl.zone:2: no $TTL: a record without a TTL gets the last TTL written "
                             "before it") != std::string::npos,
                      w);
        CHECK(z->warnings().size() == 1);
    }
}

TEST_CASE("TTLs above 2^31 - 1 are served as 0 with a warning; TTLs that are not 32-bit numbers are errors") {
    // RFC 2181 §8, BIND's loader: 2147483648 and 4294967295 (which gslbd read as "no TTL" and gave the SOA
    // MINIMUM) become 0; 99999999999 wrapped to 1215752191.
    const std::string text = std::string("$TTL 3600\n") + kSoa +
                             "big1 2147483648 IN A 192.0.2.7\n"
                             "big2 4294967295 IN A 192.0.2.8\n"
                             "ok 2147483647 IN A 192.0.2.9\n"
                             "unit 1h30m IN A 192.0.2.10\n";
    std::string err;
    auto z = loadZone(writeFile("bigttl.zone", text), "t.test.", err);
    REQUIRE_MESSAGE(z, err);
    CHECK(ttlOf(*z, "big1.t.test.", kTypeA) == 0);
    CHECK(ttlOf(*z, "big2.t.test.", kTypeA) == 0);
    CHECK(ttlOf(*z, "ok.t.test.", kTypeA) == 2147483647u);
    CHECK(ttlOf(*z, "unit.t.test.", kTypeA) == 5400);
    std::string w = allWarnings(*z);
    CHECK_MESSAGE(w.find("bigttl.zone:5: TTL 2147483648 is above 2147483647 (2^31 - 1): served as 0") !=
                      std::string::npos,
                  w);
    CHECK_MESSAGE(w.find("bigttl.zone:6: TTL 4294967295 is above") != std::string::npos, w);
    CHECK(z->warnings().size() == 2);

    err = loadError("wrapttl.zone", std::string(kSoa) + "w 99999999999 IN A 192.0.2.7\n");
    CHECK_MESSAGE(err.find("wrapttl.zone:4: TTL 99999999999 is not a 32-bit number") != std::string::npos,
                  err);
    err = loadError("wrapttl2.zone", std::string(kSoa) + "w IN 4294967296 A 192.0.2.7\n");
    CHECK_MESSAGE(err.find("wrapttl2.zone:4: TTL 4294967296 is not a 32-bit number") != std::string::npos,
                  err);
    err = loadError("wrapttl3.zone", std::string(kSoa) + "$TTL 5000000000\nw A 192.0.2.7\n");
    CHECK_MESSAGE(err.find("wrapttl3.zone:4: $TTL 5000000000 is not a 32-bit number") != std::string::npos,
                  err);

    // A $TTL above 2^31 - 1 is 0 as well (BIND: "setting $TTL to 0"), not the "no TTL" mark it used to hit.
    z = loadZone(writeFile("bigdefttl.zone", std::string(kSoa) + "$TTL 4294967295\nw A 192.0.2.7\n"),
                 "t.test.", err);
    REQUIRE_MESSAGE(z, err);
    CHECK(ttlOf(*z, "w.t.test.", kTypeA) == 0);
    CHECK(allWarnings(*z).find("bigdefttl.zone:4: $TTL 4294967295 is above") != std::string::npos);
}

TEST_CASE("data below a DNAME or below a zone cut (not glue) loads, with a warning naming file and line") {
    const std::string text = std::string("$TTL 300\n") + kSoa +
                             "old DNAME new\n"
                             "nested.old A 192.0.2.5\n"
                             "sub NS ns.sub\n"
                             "ns.sub A 192.0.2.53\n"
                             "x.sub A 192.0.2.54\n"
                             "y.sub TXT \"hidden\"\n";
    std::string err;
    auto z = loadZone(writeFile("hidden.zone", text), "t.test.", err);
    REQUIRE_MESSAGE(z, err);
    std::string w = allWarnings(*z);
    CHECK_MESSAGE(w.find("hidden.zone:6: nested.old.t.test. is below the DNAME at old.t.test. and is never "
                         "served") != std::string::npos,
                  w);
    CHECK_MESSAGE(
        w.find("hidden.zone:9: x.sub.t.test. is below the zone cut at sub.t.test. and is not glue") !=
            std::string::npos,
        w);
    CHECK_MESSAGE(w.find("hidden.zone:10: y.sub.t.test.") != std::string::npos, w);
    CHECK_MESSAGE(w.find("ns.sub.t.test.") == std::string::npos, w);  // glue: the cut's name server
    CHECK(z->warnings().size() == 3);
}

TEST_CASE("a record ldns refuses says what is wrong: an IPv4 address, gdnsd's DYNA") {
    std::string err = loadError("badip.zone", std::string(kSoa) + "mx1 IN A 192.0.2.300\n");
    CHECK_MESSAGE(err.find("badip.zone:4: ") != std::string::npos, err);
    CHECK_MESSAGE(err.find("\"192.0.2.300\" is not an IPv4 address") != std::string::npos, err);
    err = loadError("badip6.zone", std::string(kSoa) + "h AAAA 2001:db8::g\n");
    CHECK_MESSAGE(err.find("\"2001:db8::g\" is not an IPv6 address") != std::string::npos, err);
    err = loadError("dyna.zone", std::string(kSoa) + "www IN DYNA weighted!www\n");
    CHECK_MESSAGE(err.find("dyna.zone:4: ") != std::string::npos, err);
    CHECK_MESSAGE(err.find("DYNA is gdnsd's dynamic record; gslbd answers a name from the services of a "
                           "[hostname.\"NAME\"] table") != std::string::npos,
                  err);
    err = loadError("dync.zone", std::string(kSoa) + "www 60 DYNC metafo!www\n");
    CHECK_MESSAGE(err.find("DYNC is gdnsd's") != std::string::npos, err);
}

TEST_CASE("sameData: equal for the same file, not after a change or against a signed zone") {
    std::string err;
    std::string text = std::string("$TTL 300\n") + kSoa + "w A 192.0.2.7\n";
    auto a = loadZone(writeFile("same1.zone", text), "t.test.", err);
    auto b = loadZone(writeFile("same2.zone", text), "t.test.", err);
    auto c = loadZone(writeFile("same3.zone", text + "w2 A 192.0.2.8\n"), "t.test.", err);
    auto d = loadZone(writeFile("same4.zone", std::string("$TTL 301\n") + kSoa + "w A 192.0.2.7\n"),
                      "t.test.", err);
    REQUIRE(a);
    REQUIRE(b);
    REQUIRE(c);
    REQUIRE(d);
    CHECK(a->sameData(*b));
    CHECK_FALSE(a->sameData(*c));
    CHECK_FALSE(a->sameData(*d));
}

TEST_CASE("an unterminated quoted string and an unclosed '(' are refused with their line, both paths alike") {
    // ldns closed the string at the line end and served "unterminated"; BIND: "unbalanced quotes", NSD:
    // "syntax error". The fast path leaves such a line to ldns; every way of reading refuses it the same.
    ReadResult r =
        readAllWays("quote.zone",
                    std::string(kSoa) + "ok TXT \"fine\"\ntxt IN TXT \"unterminated\n" + "after TXT \"x\"\n");
    CHECK_FALSE(r.ok);
    CHECK(r.error.find("quote.zone:5: unbalanced quotes: a quoted string is not closed before the end of the "
                       "line") != std::string::npos);
    r = readAllWays("quote2.zone", std::string(kSoa) + "txt IN TXT \"a\" \"b\n");
    CHECK(r.error.find("quote2.zone:4: unbalanced quotes") != std::string::npos);
    // Inside parentheses a quoted string goes on over the line end (ldns, BIND's multi-line strings); an
    // escaped quote or one in a comment opens nothing.
    r = readAllWays("quote3.zone",
                    std::string(kSoa) + "a TXT ( \"one\n two\" )\nb TXT \"say \\\"hi\\\"\" ; it's \"\n");
    CHECK_MESSAGE(r.ok, r.error);
    CHECK(r.records.size() == 5);
    // A '(' never closed: the record ran to the end of the file ("superfluous text present").
    std::string err =
        loadError("paren.zone", "@ 300 IN SOA ns1 host (\n 1 3600 600 86400 60\n@ NS ns1\nns1 A 192.0.2.1\n");
    CHECK_MESSAGE(
        err.find("paren.zone:1: a '(' is not closed: the record runs on to the end of the file (close "
                 "it with ')')") != std::string::npos,
        err);
}
