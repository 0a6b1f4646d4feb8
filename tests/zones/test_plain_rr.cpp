// The loader's fast path for plain one-line records (zones/plain_rr.cpp): exact wire bytes for the forms it
// takes, NotPlain for everything it must leave to ldns, and a differential test against ldns itself over a
// generated corpus of good and bad lines (same records, or the same error, either way).
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <random>

#include "helpers.hpp"
#include "zones/loader.hpp"
#include "zones/plain_rr.hpp"
#include "zones/rrtype.hpp"

using namespace gslb::zones;
using testutil::writeFile;

namespace {

const std::string kOrigin("\1t\4test\0", 8);
const std::string kPrev("\3www\1t\4test\0", 12);

std::string bytes(std::initializer_list<int> b) {
    std::string s;
    for (int c : b) s.push_back(char(c));
    return s;
}

PlainResult parse(const std::string& line, PlainRecord& r, uint32_t ttl = 100) {
    return parsePlainLine(line, PlainContext{kOrigin, kPrev, ttl}, r);
}

}  // namespace

TEST_CASE("plain records: owner, TTL, class and rdata in wire form") {
    PlainRecord r;
    REQUIRE(parse("a 300 IN A 192.0.2.7", r) == PlainResult::Record);
    CHECK(std::string(reinterpret_cast<char*>(r.owner), r.ownerLen) == std::string("\1a\1t\4test\0", 10));
    CHECK(r.ownerChanged);
    CHECK(r.type == kTypeA);
    CHECK(r.ttl == 300);
    CHECK(r.rdata == bytes({192, 0, 2, 7}));

    // No TTL: the $TTL in force; blank owner: the previous one; '@': the origin.
    REQUIRE(parse("\tAAAA 2001:db8::1 ; comment", r) == PlainResult::Record);
    CHECK(std::string(reinterpret_cast<char*>(r.owner), r.ownerLen) == kPrev);
    CHECK_FALSE(r.ownerChanged);
    CHECK(r.ttl == 100);
    CHECK(r.rdata == bytes({0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}));
    REQUIRE(parse("@ in mx 10 Mail", r) == PlainResult::Record);
    CHECK(std::string(reinterpret_cast<char*>(r.owner), r.ownerLen) == kOrigin);
    CHECK(r.type == kTypeMX);
    CHECK(r.rdata == bytes({0, 10, 4, 'M', 'a', 'i', 'l', 1, 't', 4, 't', 'e', 's', 't', 0}));

    REQUIRE(parse("_sip._tcp SRV 1 2 5060 sip.example.", r) == PlainResult::Record);
    CHECK(r.rdata ==
          bytes({0, 1, 0, 2, 0x13, 0xc4, 3, 's', 'i', 'p', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 0}));
    REQUIRE(parse("c CNAME @", r) == PlainResult::Record);
    CHECK(r.rdata == kOrigin);
    REQUIRE(parse("t TXT \"a ; b\" word", r) == PlainResult::Record);
    CHECK(r.rdata == bytes({5, 'a', ' ', ';', ' ', 'b', 4, 'w', 'o', 'r', 'd'}));
    // "$TTL 0" means 0 (RFC 1035 §5.1, RFC 2308 §4), not ldns' default of 3600.
    REQUIRE(parse("z A 192.0.2.1", r, 0) == PlainResult::Record);
    CHECK(r.ttl == 0);

    CHECK(parse("", r) == PlainResult::Empty);
    CHECK(parse("   ; only a comment", r) == PlainResult::Empty);
}

TEST_CASE("plain records: everything else is left to ldns") {
    PlainRecord r;
    for (const char* line : {"$TTL 300",
                             "$ORIGIN x.",
                             "a 1h A 192.0.2.1",
                             "a IN 300 A 192.0.2.1",
                             "a CH A 192.0.2.1",
                             "a ( A 192.0.2.1 )",
                             "a\\.b A 192.0.2.1",
                             "a HINFO cpu os",
                             "a TYPE1 \\# 4 c0000201",
                             "a A 192.0.2.1 extra",
                             "a A 192.0.2",
                             "a A \"192.0.2.1\"",
                             "a..b A 192.0.2.1",
                             "a@b A 192.0.2.1",
                             "a MX 65536 m",
                             "a MX -1 m",
                             "a TXT \"\"",
                             "a TXT \"unterminated",
                             "a TXT \"x\"y",
                             "a A 192.0.2.1\r",
                             "a 2147483648 A 192.0.2.1",
                             "a CNAME x@y"})
        CHECK_MESSAGE(parse(line, r) == PlainResult::NotPlain, line);
    std::string longLabel(64, 'x');
    CHECK(parse(longLabel + " A 192.0.2.1", r) == PlainResult::NotPlain);
}

TEST_CASE("plain records: a line with a control byte is ldns' (it drops NUL, splits at FF and VT)") {
    // Found by tests/fuzz/fuzz_loader: "z\0 A …" kept the NUL inside the owner, where ldns drops it.
    PlainRecord r;
    CHECK(parse(std::string("z\0 A 192.0.2.2", 14), r) == PlainResult::NotPlain);
    CHECK(parse(std::string("\0\0 TXT x", 9), r) == PlainResult::NotPlain);
    for (const char* line :
         {"v A 192.0.2.3\v", "f\fA 192.0.2.3", "c A 192.0.2.3\r", "t TXT \"a\x01\"", "x A 192.0.2.1 ; \x1b"})
        CHECK_MESSAGE(parse(line, r) == PlainResult::NotPlain, line);
    CHECK(parse("t\tA\t192.0.2.3", r) == PlainResult::Record);  // the tab is a blank
}

TEST_CASE("$TTL 0 gives records without a TTL a TTL of 0 on both paths") {
    // One line the fast path takes, one multi-line record ldns reads, one with an explicit TTL.
    std::string text =
        "$ORIGIN t.test.\n$TTL 0\n@ SOA ns1 host ( 1 3600 600 86400 60 )\n@ NS ns1\nns1 A 192.0.2.1\n"
        "m MX ( 10\n ns1 )\nx 5 A 192.0.2.2\n";
    for (bool fast : {true, false}) {
        CAPTURE(fast);
        setPlainFastPath(fast);
        SourceSet set;
        std::string err;
        REQUIRE_MESSAGE(readZoneFile(writeFile("ttl0.zone", text), "t.test.", set, err), err);
        REQUIRE(set.records.size() == 5);
        for (const SourceRecord& r : set.records) {
            CAPTURE(r.line);
            CHECK(r.ttl == (r.owner.substr(0, 2) == "\1x" ? 5u : 0u));
        }
    }
    setPlainFastPath(true);
}

TEST_CASE("plain records: the fast path and ldns read every line of a generated corpus the same") {
    // Good and bad tokens of every field, combined at random: for each line, both paths must give the same
    // records, or both the same error.
    const std::vector<std::string> owners = {"@",       "www",     "WwW.t.test.", "a.b",   "*.w",  "_s._tcp",
                                             "",        "x..y",    "1",           "a@b",   "ü",    "-",
                                             "a.b.c.d", "t.test.", ".",           "nope.", "x\\.y"};
    const std::vector<std::string> ttls = {"",           "",   "0",  "300",       "2147483647",
                                           "2147483648", "1h", "01", "4294967296"};
    const std::vector<std::string> classes = {"", "", "IN", "in", "CH"};
    const std::vector<std::string> types = {"A",   "a",   "AAAA",  "NS",    "CNAME", "PTR",   "MX",
                                            "SRV", "TXT", "DNAME", "HINFO", "TYPE1", "BOGUS", "txt"};
    const std::vector<std::string> rdatas = {
        "192.0.2.1",     "192.0.2.256",    "1.2.3",   "2001:db8::5",  "::ffff:192.0.2.1",
        "mail",          "mail.example.",  "@",       "10 mail",      "65535 Mx.Example.",
        "65536 mx",      "1 2 3 target",   "1 2 3 .", "0 0 0 @",      "\"quoted text\" more",
        "\"a;b\" \"c\"", "\"\"",           "\"\" x",  "\"a\"\t\"b\"", "word",
        "cpu os",        "\\# 4 c0000201", "",        "a..b",         "1 2",
        "x ; comment"};
    std::mt19937 rng(20261130);
    auto pick = [&](const std::vector<std::string>& v) { return v[rng() % v.size()]; };
    int records = 0, errors = 0;
    for (int i = 0; i < 1500; ++i) {
        std::string line = pick(owners);
        if (line.empty()) line = "\t";
        for (const std::string& f : {pick(ttls), pick(classes), pick(types), pick(rdatas)})
            if (!f.empty()) line += (line == "\t" ? "" : " ") + f;
        std::string head = i % 5 == 0 ? "$ORIGIN t.test.\n$TTL 0\n" : "$ORIGIN t.test.\n$TTL 100\n";
        std::string text = head + "prev A 192.0.2.9\n" + line + "\n  A 192.0.2.10\n";
        std::string path = writeFile("plain-diff.zone", text);
        CAPTURE(line);
        SourceSet fast, slow;
        std::string efast, eslow;
        setPlainFastPath(false);
        bool okSlow = readZoneFile(path, "t.test.", slow, eslow);
        setPlainFastPath(true);
        bool okFast = readZoneFile(path, "t.test.", fast, efast);
        REQUIRE(okFast == okSlow);
        if (!okSlow) {
            CHECK(efast == eslow);
            ++errors;
            continue;
        }
        REQUIRE(fast.records.size() == slow.records.size());
        for (size_t k = 0; k < fast.records.size(); ++k) {
            CAPTURE(k);
            CHECK(fast.records[k].owner == slow.records[k].owner);
            CHECK(fast.records[k].type == slow.records[k].type);
            CHECK(fast.records[k].ttl == slow.records[k].ttl);
            CHECK(fast.records[k].rdata == slow.records[k].rdata);
            CHECK(fast.records[k].line == slow.records[k].line);
        }
        ++records;
    }
    // The corpus exercises both outcomes.
    CHECK(records > 200);
    CHECK(errors > 200);
}
