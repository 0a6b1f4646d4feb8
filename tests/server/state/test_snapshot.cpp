// buildSnapshot's GSLB cross-checks between the config and the zone files: each names the config file and
// the line of the hostname or service at fault.
#include <doctest/doctest.h>

#include <set>

#include "server/base/clock.hpp"
#include "server/state/snapshot.hpp"
#include "tests/server/helpers.hpp"

using namespace gslb::server;

namespace {

std::string prefix(const st::Written& w, const std::string& text, const std::string& needle) {
    int line = st::lineOf(text, needle);
    REQUIRE(line > 0);
    return w.config + ":" + std::to_string(line) + ": ";
}

bool startsWith(const std::string& s, const std::string& p) {
    return s.rfind(p, 0) == 0;
}
bool has(const std::string& s, const std::string& p) {
    return s.find(p) != std::string::npos;
}

}  // namespace

TEST_CASE("a good config and zone build a snapshot with the hostname bound") {
    std::string text = st::baseConfig("[hostname.\"www.t.test.\"]\n" + st::threeServices("www.t.test."));
    auto s = st::snapshot(text);
    REQUIRE(s->gslb.hosts.size() == 1);
    CHECK(s->gslb.hosts[0].family[0].size() == 3);
    CHECK(s->gslb.hosts[0].family[1].empty());
    CHECK(s->gslb.table->siteCount() == 3);
    CHECK(s->gslb.table->serviceCount() == 3);
    CHECK(s->gslb.table->findService("west", "192.0.2.2").has_value());
}

TEST_CASE("a service address the zone does not hold") {
    std::string text = st::baseConfig("[hostname.\"www.t.test.\"]\n" + st::threeServices("www.t.test.") +
                                      "[[hostname.\"www.t.test.\".service]]\naddress = \"192.0.2.9\"\n"
                                      "site = \"east\"\n");
    st::Written w;
    std::string err = st::snapshotError(text, st::kZone, &w);
    // The line of the 4th [[service]] header (toml++ places an array-of-tables element at its header).
    int headerLine = st::lineOf(text, "address = \"192.0.2.9\"") - 1;
    CHECK(err == w.config + ":" + std::to_string(headerLine) +
                     ": hostname \"www.t.test.\": service address 192.0.2.9 is not among the A/AAAA records "
                     "of the name in " +
                     w.zone);
}

TEST_CASE("a zone address no service describes") {
    std::string text = st::baseConfig(
        "[hostname.\"www.t.test.\"]\n"
        "[[hostname.\"www.t.test.\".service]]\naddress = \"192.0.2.1\"\nsite = \"east\"\n"
        "[[hostname.\"www.t.test.\".service]]\naddress = \"192.0.2.2\"\nsite = \"west\"\n");
    st::Written w;
    std::string err = st::snapshotError(text, st::kZone, &w);
    CHECK_MESSAGE(
        startsWith(err, prefix(w, text, "[hostname.\"www.t.test.\"]") + "hostname \"www.t.test.\": "), err);
    CHECK_MESSAGE(has(err, "192.0.2.3"), err);
    CHECK_MESSAGE(has(err, w.zone), err);
    CHECK_MESSAGE(has(err, "has no [[service]]"), err);
}

TEST_CASE("a hostname in no served zone") {
    std::string text = st::baseConfig(
        "[hostname.\"www.other.test.\"]\n"
        "[[hostname.\"www.other.test.\".service]]\naddress = \"192.0.2.1\"\nsite = \"east\"\n");
    st::Written w;
    std::string err = st::snapshotError(text, st::kZone, &w);
    CHECK(err == prefix(w, text, "[hostname.\"www.other.test.\"]") +
                     "hostname \"www.other.test.\": is in none of the served zones");
}

TEST_CASE("a hostname with no records at all") {
    std::string text = st::baseConfig(
        "[hostname.\"nothing.t.test.\"]\n"
        "[[hostname.\"nothing.t.test.\".service]]\naddress = \"192.0.2.1\"\nsite = \"east\"\n");
    st::Written w;
    std::string err = st::snapshotError(text, st::kZone, &w);
    CHECK(err == prefix(w, text, "[hostname.\"nothing.t.test.\"]") +
                     "hostname \"nothing.t.test.\": has no records in zone t.test.");
}

TEST_CASE("a hostname without A/AAAA records") {
    std::string text = st::baseConfig(
        "[hostname.\"txt.t.test.\"]\n"
        "[[hostname.\"txt.t.test.\".service]]\naddress = \"192.0.2.1\"\nsite = \"east\"\n");
    st::Written w;
    std::string err = st::snapshotError(text, st::kZone, &w);
    // Named at the hostname or at its service, with file:line, and saying what is missing.
    bool atHost = startsWith(err, prefix(w, text, "[hostname.\"txt.t.test.\"]"));
    bool atService = startsWith(err, prefix(w, text, "[[hostname.\"txt.t.test.\".service]]"));
    CHECK_MESSAGE((atHost || atService), err);
    CHECK_MESSAGE(has(err, "hostname \"txt.t.test.\": "), err);
    CHECK_MESSAGE(has(err, "A/AAAA"), err);
}

TEST_CASE("a CNAME name cannot be a GSLB hostname") {
    std::string text = st::baseConfig(
        "[hostname.\"alias.t.test.\"]\n"
        "[[hostname.\"alias.t.test.\".service]]\naddress = \"192.0.2.1\"\nsite = \"east\"\n");
    st::Written w;
    std::string err = st::snapshotError(text, st::kZone, &w);
    CHECK_MESSAGE(
        startsWith(err, prefix(w, text, "[hostname.\"alias.t.test.\"]") + "hostname \"alias.t.test.\": "),
        err);
    CHECK_MESSAGE(has(err, "CNAME"), err);
}

TEST_CASE("a name at or below a zone cut") {
    std::string text = st::baseConfig(
        "[hostname.\"ns.sub.t.test.\"]\n"
        "[[hostname.\"ns.sub.t.test.\".service]]\naddress = \"192.0.2.54\"\nsite = \"east\"\n");
    st::Written w;
    std::string err = st::snapshotError(text, st::kZone, &w);
    CHECK(err ==
          prefix(w, text, "[hostname.\"ns.sub.t.test.\"]") +
              "hostname \"ns.sub.t.test.\": is at or below a zone cut: its addresses are not authoritative");
}

TEST_CASE("a bad policy is refused by buildSnapshot too, with file:line") {
    std::string text =
        st::baseConfig("[hostname.\"www.t.test.\"]\npolicy = [\"health\", \"fastest\", \"random\"]\n" +
                       st::threeServices("www.t.test."));
    st::Written w;
    std::string err = st::snapshotError(text, st::kZone, &w);
    CHECK_MESSAGE(startsWith(err, w.config + ":"), err);
    CHECK_MESSAGE(has(err, "fastest"), err);
}

TEST_CASE("a reload keeps the drained state of a (site, address) that is still there") {
    std::string text = st::baseConfig("[hostname.\"www.t.test.\"]\n" + st::threeServices("www.t.test."));
    st::Written w = st::writeConfig(text);
    std::string error;
    auto a = buildSnapshot(w.config, nullptr, error);
    REQUIRE(a);
    a->gslb.table->setServiceEnabled(*a->gslb.table->findService("west", "192.0.2.2"), false);
    a->gslb.table->reportConnections(*a->gslb.table->findService("east", "192.0.2.1"), 42, monotonicMs());
    auto b = buildSnapshot(w.config, a.get(), error);
    REQUIRE(b);
    CHECK(b->gslb.table != a->gslb.table);
    CHECK_FALSE(b->gslb.table->serviceEnabled(*b->gslb.table->findService("west", "192.0.2.2")));
    CHECK(b->gslb.table->serviceView(*b->gslb.table->findService("east", "192.0.2.1")).connections == 42);
}

// RFC 6672 §2.3: below a DNAME every name is redirected, so a GSLB hostname there would never answer.
TEST_CASE("a name at or below a DNAME owner is refused with file:line") {
    const std::string zone =
        st::kZone + "moved IN DNAME www.t.test.\nmoved IN A 192.0.2.7\nhost.moved IN A 192.0.2.8\n";
    for (const char* name : {"host.moved.t.test.", "moved.t.test."}) {
        CAPTURE(name);
        std::string n = name;
        std::string addr = n == "moved.t.test." ? "192.0.2.7" : "192.0.2.8";
        std::string text = st::baseConfig("[hostname.\"" + n + "\"]\n[[hostname.\"" + n +
                                          "\".service]]\naddress = \"" + addr + "\"\nsite = \"east\"\n");
        st::Written w;
        std::string err = st::snapshotError(text, zone, &w);
        CHECK_MESSAGE(startsWith(err, prefix(w, text, "[hostname.\"" + n + "\"]") + "hostname \"" + n +
                                          "\": is at or below the DNAME at moved.t.test. (RFC 6672 §2.3)"),
                      err);
    }
}

TEST_CASE("answer counters keep one row per answering thread, not kMaxWorkers, across reloads") {
    // 64 rows of 8 octets per service in each counter table were 1 KiB of the 1.8 KiB a GSLB service cost.
    // Each worker answers on its loop (TCP, AF_XDP) and on one UDP thread per listen address: a row each.
    std::string body = "[hostname.\"www.t.test.\"]\n" + st::threeServices("www.t.test.");
    std::string two = st::baseConfig(body);
    two.insert(two.find("listen"), "workers = 2\n");
    st::Written w = st::writeConfig(two);
    std::string error;
    auto a = buildSnapshot(w.config, nullptr, error);
    REQUIRE(a != nullptr);
    REQUIRE(a->config.server.listen.size() == 1);
    CHECK(answerRows(a->config.server) == 4);
    CHECK(a->gslb.answers->workers() == 4);
    CHECK(a->gslb.hostAnswers->workers() == 4);
    CHECK(a->gslb.fallbacks->workers() == 4);
    // Every (worker, thread) has a row of its own, the loops' first (row = worker id, as Shared::tcp).
    std::set<size_t> rows;
    for (int wk = 0; wk < 2; ++wk)
        for (size_t lane = 0; lane < 2; ++lane) rows.insert(answerRow(a->config.server, wk, lane));
    CHECK(rows == std::set<size_t>{0, 1, 2, 3});
    CHECK(answerRow(a->config.server, 1, 0) == 1);
    // The workers run from start-up: a reload that asks for more keeps the rows of those that run.
    std::string five = two;
    five.replace(five.find("workers = 2"), 11, "workers = 5");
    st::writeFile(w.dir, "gslbd.toml", five);
    auto b = buildSnapshot(w.config, a.get(), error);
    REQUIRE(b != nullptr);
    CHECK(b->gslb.answers->workers() == 4);
    CHECK(b->gslb.hostAnswers->slots() == 3);
    auto keys = hostAnswerKeys(b->gslb);
    REQUIRE(keys.size() == 3);
    CHECK(keys[0].find("www.t.test.") == 0);
}
