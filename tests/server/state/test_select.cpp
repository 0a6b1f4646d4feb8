// Selection through the real answer path: zones::answer with a Selector bound to a snapshot built from a
// config and a zone, the state table written as the control thread would.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>

#include "server/base/clock.hpp"
#include "server/state/gslb.hpp"
#include "server/state/snapshot.hpp"
#include "tests/server/helpers.hpp"
#include "zones/answer.hpp"

using namespace gslb::server;
using gslb::metrics::Health;

namespace {

const char* kAddr[] = {"192.0.2.1", "192.0.2.2", "192.0.2.3"};  // east, west, south
const char* kSite[] = {"east", "west", "south"};

// Every GSLB hostname of these tests has the same three addresses (shared (site, address) state).
const std::vector<std::pair<std::string, std::string>> kHosts = {
    {"lc0", "policy = [\"health\", \"least-connections\", \"random\"]\nfactor = 0\n"},
    {"lc125", "policy = [\"health\", \"least-connections\", \"random\"]\nfactor = 1.25\n"},
    {"cap", "policy = [\"health\", \"session-capacity\", \"random\"]\nsession_tolerance = 10\n"},
    {"thr", "policy = [\"health\", \"session-threshold\", \"random\"]\nsession_threshold = 90\n"},
    {"cpu", "policy = [\"health\", \"cpu\", \"random\"]\nmax_age = 60\n"},
    {"rnd", "policy = [\"health\", \"random\"]\nttl = 17\n"},
    {"two", "policy = [\"health\", \"random\"]\nanswers = 2\n"},
    {"many", "policy = [\"health\", \"random\"]\nanswers = 5\n"},
    {"fball", "policy = [\"health\", \"random\"]\nfallback = \"all\"\n"},
    {"fbnone", "policy = [\"health\", \"random\"]\nfallback = \"none\"\n"},
    {"fbaddr", "policy = [\"health\", \"random\"]\nfallback = \"192.0.2.99\"\n"},
    {"stale", "policy = [\"health\", \"least-connections\", \"random\"]\nmax_age = 60\n"},
    {"*.wild",
     "policy = [\"health\", \"random\"]\nttl = 11\n"},  // gslbd.toml(5): a wildcard owner as a hostname
};

std::string zoneText() {
    std::string z =
        "$ORIGIN s.test.\n$TTL 300\n@ IN SOA ns1 hostmaster 7 3600 900 604800 120\n@ IN NS ns1\n"
        "ns1 IN A 192.0.2.53\n"
        "dual IN A 192.0.2.1\ndual IN AAAA 2001:db8::1\n";
    for (const auto& [h, _] : kHosts)
        for (const char* a : kAddr) z += h + " IN A " + a + "\n";
    return z;
}

std::string configText() {
    std::string c =
        "[server]\nlisten = [\"127.0.0.1:10053\"]\n[[zone]]\nname = \"s.test.\"\nfile = \"t.zone\"\n"
        "[site.east]\n[site.west]\n[site.south]\n";
    for (const auto& [h, policy] : kHosts) {
        std::string name = h + ".s.test.";
        c += "[hostname.\"" + name + "\"]\n" + policy + st::threeServices(name);
    }
    c += "[hostname.\"dual.s.test.\"]\n"
         "[[hostname.\"dual.s.test.\".service]]\naddress = \"192.0.2.1\"\nsite = \"east\"\n"
         "[[hostname.\"dual.s.test.\".service]]\naddress = \"2001:db8::1\"\nsite = \"west\"\n";
    return c;
}

struct Fixture {
    std::shared_ptr<Snapshot> snap = st::snapshot(configText(), zoneText());
    Selector sel{0, 12345};
    Fixture() { sel.rebind(&snap->gslb); }
    gslb::metrics::StateTable& t() { return *snap->gslb.table; }
    uint32_t svc(int i) { return *t().findService(kSite[i], kAddr[i]); }
    uint32_t site(int i) { return *t().findSite(kSite[i]); }

    st::Msg ask(const std::string& host, uint16_t type = 1) {
        auto q = st::makeQuery(host + ".s.test.", type);
        std::vector<uint8_t> out(65535);
        auto r = gslb::zones::answer(snap->db, snap->answer, q, false, out, &sel);
        REQUIRE(r.action == gslb::zones::Action::Send);
        out.resize(r.len);
        return st::decode(out);
    }
    /// How often each address was answered in n queries (answers = 1: one address each).
    std::map<std::string, int> tally(const std::string& host, int n) {
        std::map<std::string, int> seen;
        for (int i = 0; i < n; ++i) {
            auto m = ask(host);
            REQUIRE(m.rcode == 0);
            for (const auto& a : m.addresses()) ++seen[a];
        }
        return seen;
    }
};

std::set<std::string> keys(const std::map<std::string, int>& m) {
    std::set<std::string> s;
    for (const auto& [k, _] : m) s.insert(k);
    return s;
}

}  // namespace

TEST_CASE("least-connections follows the HP example: 900 vs 400") {
    Fixture f;
    int64_t now = monotonicMs();
    f.t().reportConnections(f.svc(0), 900, now);
    f.t().reportConnections(f.svc(1), 400, now);
    f.t().reportConnections(f.svc(2), 5000, now);
    // factor 0: only the best.
    auto seen = f.tally("lc0", 200);
    CHECK(seen == std::map<std::string, int>{{"192.0.2.2", 200}});
    // factor 1.25: 900 <= 400 x 2.25 is close enough; 5000 is not. Both appear.
    seen = f.tally("lc125", 400);
    CHECK(keys(seen) == std::set<std::string>{"192.0.2.1", "192.0.2.2"});
    CHECK(seen["192.0.2.1"] > 100);
    CHECK(seen["192.0.2.2"] > 100);
    // The switch: west grows to 2000, east (900) is now the best.
    f.t().reportConnections(f.svc(1), 2000, monotonicMs());
    CHECK(f.tally("lc0", 50) == std::map<std::string, int>{{"192.0.2.1", 50}});
}

TEST_CASE("a wildcard hostname answers every name it synthesizes by selection, with its ttl") {
    Fixture f;
    for (const char* q : {"a.wild", "b.c.wild"}) {
        auto m = f.ask(q);
        REQUIRE(m.rcode == 0);
        REQUIRE(m.answer.size() == 1);  // answers = 1: a choice, not the three candidates of the zone
        CHECK(m.answer[0].owner == std::string(q) + ".s.test.");
        CHECK(m.answer[0].ttl == 11);
    }
    CHECK(keys(f.tally("x.wild", 300)) == std::set<std::string>{"192.0.2.1", "192.0.2.2", "192.0.2.3"});
    // Health applies as to any hostname: east down, never east.
    f.t().setHealth(f.svc(0), Health::Down);
    CHECK(keys(f.tally("y.wild", 200)) == std::set<std::string>{"192.0.2.2", "192.0.2.3"});
}

TEST_CASE("least-connections with nothing reported passes all three on") {
    Fixture f;
    CHECK(keys(f.tally("lc0", 300)) == std::set<std::string>{"192.0.2.1", "192.0.2.2", "192.0.2.3"});
}

TEST_CASE("session-capacity: 1,000,000 / 800,000 / 950,000 available at 10 % — never the 800,000 site") {
    Fixture f;
    int64_t now = monotonicMs();
    auto rep = [](double used, double max) {
        gslb::metrics::SiteReport r;
        r.sessionsUsed = used;
        r.sessionsMax = max;
        return r;
    };
    f.t().reportSite(f.site(0), rep(1000000, 2000000), now);  // 1,000,000 available
    f.t().reportSite(f.site(1), rep(1200000, 2000000), now);  // 800,000
    f.t().reportSite(f.site(2), rep(1050000, 2000000), now);  // 950,000
    auto seen = f.tally("cap", 400);
    CHECK(keys(seen) == std::set<std::string>{"192.0.2.1", "192.0.2.3"});
    CHECK(seen["192.0.2.1"] > 100);
    CHECK(seen["192.0.2.3"] > 100);
}

TEST_CASE("session-threshold: a site over 90 % of its session table drops out") {
    Fixture f;
    int64_t now = monotonicMs();
    gslb::metrics::SiteReport full, light;
    full.sessionsUsed = 950000;
    full.sessionsMax = 1000000;
    light.sessionsUsed = 100000;
    light.sessionsMax = 1000000;
    f.t().reportSite(f.site(0), full, now);
    f.t().reportSite(f.site(1), light, now);
    f.t().reportSite(f.site(2), light, now);
    CHECK(keys(f.tally("thr", 300)) == std::set<std::string>{"192.0.2.2", "192.0.2.3"});
}

TEST_CASE("a drained service or site never answers; enabled again, it does") {
    Fixture f;
    f.t().setServiceEnabled(f.svc(1), false);
    CHECK(keys(f.tally("rnd", 300)) == std::set<std::string>{"192.0.2.1", "192.0.2.3"});
    f.t().setSiteEnabled(f.site(2), false);
    CHECK(keys(f.tally("rnd", 100)) == std::set<std::string>{"192.0.2.1"});
    // Whatever the metrics say: the drained west has the fewest connections.
    int64_t now = monotonicMs();
    f.t().reportConnections(f.svc(0), 900, now);
    f.t().reportConnections(f.svc(1), 1, now);
    f.t().reportConnections(f.svc(2), 1, now);
    CHECK(keys(f.tally("lc0", 100)) == std::set<std::string>{"192.0.2.1"});
    f.t().setServiceEnabled(f.svc(1), true);
    f.t().setSiteEnabled(f.site(2), true);
    CHECK(keys(f.tally("rnd", 300)) == std::set<std::string>{"192.0.2.1", "192.0.2.2", "192.0.2.3"});
    // A service down by its health check is out too.
    f.t().setHealth(f.svc(0), Health::Down);
    CHECK(keys(f.tally("rnd", 300)) == std::set<std::string>{"192.0.2.2", "192.0.2.3"});
}

TEST_CASE("all down: fallback all answers every address, none gives NODATA with SOA, or a fixed address") {
    Fixture f;
    SUBCASE("down by health") {
        for (int i = 0; i < 3; ++i) f.t().setHealth(f.svc(i), Health::Down);
    }
    SUBCASE("down by health, west's site down") {
        f.t().setHealth(f.svc(0), Health::Down);
        f.t().setSiteUp(f.site(1), false);
        f.t().setHealth(f.svc(2), Health::Down);
    }
    for (int i = 0; i < 5; ++i) {
        auto m = f.ask("fball");
        CHECK(m.rcode == 0);
        CHECK(m.aa);
        auto a = m.addresses();
        std::sort(a.begin(), a.end());
        CHECK(a == std::vector<std::string>{"192.0.2.1", "192.0.2.2", "192.0.2.3"});

        m = f.ask("fbnone");
        CHECK(m.rcode == 0);  // NOERROR, not NXDOMAIN
        CHECK(m.aa);
        CHECK(m.answer.empty());
        REQUIRE(m.authority.size() == 1);
        CHECK(m.authority[0].type == 6);
        CHECK(m.authority[0].owner == "s.test.");

        m = f.ask("fbaddr");
        CHECK(m.rcode == 0);
        CHECK(m.addresses() == std::vector<std::string>{"192.0.2.99"});
    }
}

namespace {

// The per-hostname counter of (host, site, address) and the fallback counter of host.
uint64_t hostAnswers(const Gslb& g, const std::string& host, const std::string& site,
                     const std::string& addr) {
    auto keys = hostAnswerKeys(g);
    for (uint32_t i = 0; i < keys.size(); ++i)
        if (keys[i] == host + '\0' + site + '\0' + addr) return g.hostAnswers->total(i);
    FAIL("no counter for " << host << " " << site << " " << addr);
    return 0;
}
uint64_t fallbacks(const Gslb& g, const std::string& host) {
    for (uint32_t i = 0; i < g.hosts.size(); ++i)
        if (g.hosts[i].name == host) return g.fallbacks->total(i);
    FAIL("no hostname " << host);
    return 0;
}

}  // namespace

namespace {
uint64_t drainedFallbacks(const Gslb& g, const std::string& host) {
    for (uint32_t i = 0; i < g.hosts.size(); ++i)
        if (g.hosts[i].name == host) return g.drainedFallbacks->total(i);
    FAIL("no hostname " << host);
    return 0;
}
}  // namespace

TEST_CASE("a drain holds through the fallback: all gives the candidates not drained, none left is NODATA") {
    // The new-user trial: site a drained held api's only AAAA, and fallback "all" answered it anyway.
    Fixture f;
    const Gslb& g = f.snap->gslb;
    SUBCASE("east down by health, west and south drained: all gives east alone") {
        f.t().setHealth(f.svc(0), Health::Down);
        f.t().setSiteEnabled(f.site(1), false);
        f.t().setServiceEnabled(f.svc(2), false);
        for (int i = 0; i < 5; ++i)
            CHECK(f.ask("fball").addresses() == std::vector<std::string>{"192.0.2.1"});
        CHECK(f.ask("fbnone").answer.empty());
        CHECK(f.ask("fbaddr").addresses() == std::vector<std::string>{"192.0.2.99"});
        CHECK(fallbacks(g, "fball.s.test.") == 5);
        CHECK(drainedFallbacks(g, "fball.s.test.") == 0);
        // Only east carried the fallback's answers.
        CHECK(hostAnswers(g, "fball.s.test.", "east", "192.0.2.1") == 5);
        CHECK(hostAnswers(g, "fball.s.test.", "west", "192.0.2.2") == 0);
    }
    auto nothing = [&] {
        for (int i = 0; i < 3; ++i) {
            auto m = f.ask("fball");
            CHECK(m.rcode == 0);
            CHECK(m.aa);
            CHECK(m.answer.empty());  // NODATA, as none gives
            REQUIRE(m.authority.size() == 1);
            CHECK(m.authority[0].type == 6);
            CHECK(f.ask("fbnone").answer.empty());
            CHECK(f.ask("fbaddr").addresses() == std::vector<std::string>{"192.0.2.99"});
        }
        CHECK(fallbacks(g, "fball.s.test.") == 0);
        CHECK(drainedFallbacks(g, "fball.s.test.") == 3);
        CHECK(drainedFallbacks(g, "fbaddr.s.test.") == 3);
        for (int i = 0; i < 3; ++i) CHECK(hostAnswers(g, "fball.s.test.", kSite[i], kAddr[i]) == 0);
        for (const auto& h : g.hosts)
            if (h.name == "fball.s.test.") CHECK(nothingUndrained(f.t(), h.family[0]));
    };
    SUBCASE("every service drained") {
        for (int i = 0; i < 3; ++i) f.t().setServiceEnabled(f.svc(i), false);
        nothing();
    }
    SUBCASE("every site drained, some also down") {
        for (int i = 0; i < 3; ++i) f.t().setSiteEnabled(f.site(i), false);
        f.t().setHealth(f.svc(1), Health::Down);
        nothing();
    }
    SUBCASE("one way each: a service drained, a site drained, a site at preference 0") {
        f.t().setServiceEnabled(f.svc(0), false);
        f.t().setSiteEnabled(f.site(1), false);
        f.t().setSitePreference(f.site(2), 0);
        nothing();
    }
    SUBCASE("every site at preference 0, every service up") {
        for (int i = 0; i < 3; ++i) f.t().setSitePreference(f.site(i), 0);
        nothing();
    }
}

TEST_CASE("AAAA on a v4-only GSLB name is NODATA with the SOA, never an A") {
    Fixture f;
    for (const char* h : {"rnd", "fball", "fbnone", "fbaddr"}) {
        CAPTURE(h);
        auto m = f.ask(h, 28);
        CHECK(m.rcode == 0);
        CHECK(m.aa);
        CHECK(m.answer.empty());
        REQUIRE(m.authority.size() == 1);
        CHECK(m.authority[0].type == 6);
    }
    // All down does not change that.
    for (int i = 0; i < 3; ++i) f.t().setHealth(f.svc(i), Health::Down);
    auto m = f.ask("fball", 28);
    CHECK(m.answer.empty());
    CHECK(m.authority.size() == 1);
    // A name with both families answers each with its own.
    auto d6 = f.ask("dual", 28);
    CHECK(d6.addresses() == std::vector<std::string>{"2001:db8::1"});
    CHECK(d6.answer.at(0).type == 28);
}

TEST_CASE("answers = 2 gives 2 distinct addresses; answers = 5 of 3 gives the 3") {
    Fixture f;
    std::set<std::string> all;
    for (int i = 0; i < 100; ++i) {
        auto m = f.ask("two");
        auto a = m.addresses();
        REQUIRE(a.size() == 2);
        CHECK(a[0] != a[1]);
        all.insert(a.begin(), a.end());
    }
    CHECK(all == std::set<std::string>{"192.0.2.1", "192.0.2.2", "192.0.2.3"});
    auto a = f.ask("many").addresses();
    std::sort(a.begin(), a.end());
    CHECK(a == std::vector<std::string>{"192.0.2.1", "192.0.2.2", "192.0.2.3"});
    // With one of three drained, answers = 2 still gives the two that are left.
    f.t().setServiceEnabled(f.svc(0), false);
    for (int i = 0; i < 20; ++i) {
        a = f.ask("two").addresses();
        std::sort(a.begin(), a.end());
        CHECK(a == std::vector<std::string>{"192.0.2.2", "192.0.2.3"});
    }
}

TEST_CASE("the answer: TTL of the policy, AA set, owner the query name, the question's id") {
    Fixture f;
    for (int i = 0; i < 10; ++i) {
        auto m = f.ask("rnd");
        CHECK(m.id == 0x1234);
        CHECK(m.qr);
        CHECK(m.aa);
        CHECK_FALSE(m.tc);
        CHECK(m.rcode == 0);
        REQUIRE(m.answer.size() == 1);
        CHECK(m.answer[0].owner == "rnd.s.test.");
        CHECK(m.answer[0].type == 1);
        CHECK(m.answer[0].cls == 1);
        CHECK(m.answer[0].ttl == 17);
    }
    // The default TTL (30) elsewhere, also on a fallback answer.
    CHECK(f.ask("lc0").answer.at(0).ttl == 30);
    for (int i = 0; i < 3; ++i) f.t().setHealth(f.svc(i), Health::Down);
    auto m = f.ask("fball");
    REQUIRE(m.answer.size() == 3);
    for (const auto& rr : m.answer) CHECK(rr.ttl == 30);
    CHECK(f.ask("fbaddr").answer.at(0).ttl == 30);
}

TEST_CASE("a stale report (older than max_age) counts as unknown: kept, never as its old value") {
    Fixture f;
    int64_t now = monotonicMs();
    f.t().reportConnections(f.svc(0), 100, now - 120000);  // the best, but 120 s old (max_age 60)
    f.t().reportConnections(f.svc(1), 400, now);
    f.t().reportConnections(f.svc(2), 900, now);
    // .1 is unknown (kept, no evidence against it), .2 is the best known, .3 (900) is dropped.
    auto stale = f.tally("stale", 200);
    CHECK(stale.count("192.0.2.1") == 1);
    CHECK(stale.count("192.0.2.2") == 1);
    CHECK(stale.count("192.0.2.3") == 0);
    // Fresh again: it wins.
    f.t().reportConnections(f.svc(0), 100, monotonicMs());
    CHECK(f.tally("stale", 100) == std::map<std::string, int>{{"192.0.2.1", 100}});
    // A stale site report likewise: east's cpu 10 is old, west's 50 is fresh.
    gslb::metrics::SiteReport r;
    r.cpu = 10;
    f.t().reportSite(f.site(0), r, now - 120000);
    r.cpu = 50;
    f.t().reportSite(f.site(1), r, now);
    r.cpu = 80;
    f.t().reportSite(f.site(2), r, now);
    auto cpu =
        f.tally("cpu", 200);  // east stale: kept as unknown; west 50 is the best known; south 80 dropped
    CHECK(cpu.count("192.0.2.1") == 1);
    CHECK(cpu.count("192.0.2.2") == 1);
    CHECK(cpu.count("192.0.2.3") == 0);
    // Everything stale: unknown for all, so all pass.
    f.t().reportConnections(f.svc(0), 100, now - 120000);
    f.t().reportConnections(f.svc(1), 400, now - 120000);
    f.t().reportConnections(f.svc(2), 900, now - 120000);
    CHECK(keys(f.tally("stale", 300)) == std::set<std::string>{"192.0.2.1", "192.0.2.2", "192.0.2.3"});
}

TEST_CASE("answer counters: each answered address is counted once per answer") {
    Fixture f;
    auto total = [&] {
        uint64_t n = 0;
        for (uint32_t s = 0; s < f.t().serviceCount(); ++s) n += f.snap->gslb.answers->total(s);
        return n;
    };
    uint64_t before = total();
    auto seen = f.tally("rnd", 60);
    CHECK(total() == before + 60);
    for (int i = 0; i < 3; ++i) CHECK(f.snap->gslb.answers->total(f.svc(i)) == uint64_t(seen[kAddr[i]]));
    f.ask("two");
    CHECK(total() == before + 62);
}

TEST_CASE("per-hostname answer counters count each hostname's answers apart; fallbacks count per hostname") {
    Fixture f;
    const Gslb& g = f.snap->gslb;
    auto seen = f.tally("rnd", 40);
    for (int i = 0; i < 3; ++i) {
        CHECK(hostAnswers(g, "rnd.s.test.", kSite[i], kAddr[i]) == uint64_t(seen[kAddr[i]]));
        CHECK(hostAnswers(g, "lc0.s.test.", kSite[i], kAddr[i]) == 0);  // shares the VIPs, not the counts
    }
    CHECK(fallbacks(g, "rnd.s.test.") == 0);
    f.ask("two");
    uint64_t two = 0;
    for (int i = 0; i < 3; ++i) two += hostAnswers(g, "two.s.test.", kSite[i], kAddr[i]);
    CHECK(two == 2);

    for (int i = 0; i < 3; ++i) f.t().setHealth(f.svc(i), Health::Down);
    f.ask("fball");
    f.ask("fball");
    f.ask("fbnone");
    f.ask("fbaddr");
    CHECK(fallbacks(g, "fball.s.test.") == 2);
    CHECK(fallbacks(g, "fbnone.s.test.") == 1);
    CHECK(fallbacks(g, "fbaddr.s.test.") == 1);
    CHECK(fallbacks(g, "rnd.s.test.") == 0);
    // fallback "all" answers every candidate: each counted as an answer that carried it.
    for (int i = 0; i < 3; ++i) CHECK(hostAnswers(g, "fball.s.test.", kSite[i], kAddr[i]) == 2);
    CHECK(f.ask("fball", 28).answer.empty());  // no AAAA at all: not a fallback, nothing to fall back from
    CHECK(fallbacks(g, "fball.s.test.") == 2);
}

TEST_CASE("per-hostname counters carry over a reload by (hostname, site, address)") {
    Fixture f;
    f.tally("rnd", 30);
    for (int i = 0; i < 3; ++i) f.t().setHealth(f.svc(i), Health::Down);
    f.ask("fbnone");
    uint64_t before[3];
    for (int i = 0; i < 3; ++i) before[i] = hostAnswers(f.snap->gslb, "rnd.s.test.", kSite[i], kAddr[i]);
    st::Written w = st::writeConfig(configText(), zoneText());
    std::string error;
    auto next = buildSnapshot(w.config, f.snap.get(), error);
    REQUIRE_MESSAGE(next, error);
    for (int i = 0; i < 3; ++i)
        CHECK(hostAnswers(next->gslb, "rnd.s.test.", kSite[i], kAddr[i]) == before[i]);
    CHECK(fallbacks(next->gslb, "fbnone.s.test.") == 1);
}

TEST_CASE("ANY at a GSLB name answers with the chosen address, not every candidate (RFC 8482 minimal ANY)") {
    Fixture f;
    int64_t now = monotonicMs();
    f.t().reportConnections(f.svc(0), 900, now);
    f.t().reportConnections(f.svc(1), 400, now);
    f.t().reportConnections(f.svc(2), 5000, now);
    for (int i = 0; i < 20; ++i) {
        auto m = f.ask("lc0", 255);
        REQUIRE(m.rcode == 0);
        CHECK(m.addresses() == std::vector<std::string>{"192.0.2.2"});
    }
}

TEST_CASE("rebind keeps chooser state for hostnames whose services did not change, by name") {
    // Two least-selected hostnames (deterministic: a fresh state answers A, B, C, A, ...) and a random one.
    auto cfg = [](const std::string& second) {
        std::string c =
            "[server]\nlisten = [\"127.0.0.1:10053\"]\n[[zone]]\nname = \"s.test.\"\nfile = \"t.zone\"\n"
            "[site.east]\n[site.west]\n[site.south]\n";
        c += "[hostname.\"keep.s.test.\"]\npolicy = [\"least-selected\"]\n" +
             st::threeServices("keep.s.test.");
        c += "[hostname.\"change.s.test.\"]\npolicy = [\"least-selected\"]\n" + second;
        c += "[hostname.\"rnd.s.test.\"]\npolicy = [\"random\"]\n" + st::threeServices("rnd.s.test.");
        return c;
    };
    std::string zone =
        "$ORIGIN s.test.\n$TTL 300\n@ IN SOA ns1 hostmaster 7 3600 900 604800 120\n@ IN NS ns1\n"
        "ns1 IN A 192.0.2.53\n";
    for (const char* h : {"keep", "change", "rnd"})
        for (const char* a : kAddr) zone += std::string(h) + " IN A " + a + "\n";
    auto a = st::snapshot(cfg(st::threeServices("change.s.test.")), zone);
    Selector sel{0, 7};
    sel.rebind(&a->gslb);
    auto ask = [&](const Snapshot& s, const std::string& host) {
        auto q = st::makeQuery(host + ".s.test.", 1);
        std::vector<uint8_t> out(65535);
        auto r = gslb::zones::answer(s.db, s.answer, q, false, out, &sel);
        REQUIRE(r.action == gslb::zones::Action::Send);
        out.resize(r.len);
        auto m = st::decode(out);
        REQUIRE(m.addresses().size() == 1);
        return m.addresses()[0];
    };
    CHECK(ask(*a, "keep") == "192.0.2.1");
    CHECK(ask(*a, "keep") == "192.0.2.2");
    CHECK(ask(*a, "change") == "192.0.2.1");
    CHECK(ask(*a, "change") == "192.0.2.2");
    // Only stateful choosers own a state, sized to the hostname's services; `rnd` and the empty AAAA none.
    REQUIRE(sel.state(0, 0) != nullptr);
    CHECK(sel.state(0, 0)->serviceCount() == 3);
    CHECK(sel.state(0, 1) == nullptr);
    CHECK(sel.state(2, 0) == nullptr);

    // The reload: `change` swaps the sites of two addresses (a different service set), and a hostname that
    // sorts first is added, so every other one moves: state is found by name, not by position.
    std::string swapped =
        "[[hostname.\"change.s.test.\".service]]\naddress = \"192.0.2.1\"\nsite = \"west\"\n"
        "[[hostname.\"change.s.test.\".service]]\naddress = \"192.0.2.2\"\nsite = \"east\"\n"
        "[[hostname.\"change.s.test.\".service]]\naddress = \"192.0.2.3\"\nsite = \"south\"\n";
    std::string zone2 = zone;
    for (const char* ad : kAddr) zone2 += std::string("added IN A ") + ad + "\n";
    st::Written w =
        st::writeConfig(cfg(swapped) + "[hostname.\"added.s.test.\"]\npolicy = [\"least-selected\"]\n" +
                            st::threeServices("added.s.test."),
                        zone2);
    std::string error;
    auto b = buildSnapshot(w.config, a.get(), error);
    REQUIRE_MESSAGE(b != nullptr, error);
    REQUIRE(b->gslb.hosts[0].name == "added.s.test.");
    REQUIRE(b->gslb.hosts[2].name == "keep.s.test.");
    sel.rebind(&b->gslb);
    CHECK(ask(*b, "keep") == "192.0.2.3");    // went on where it was
    CHECK(ask(*b, "change") == "192.0.2.1");  // started afresh
}

TEST_CASE("an all-down answer says so: EDE 0 with the hostname and the fallback (RFC 8914 §4.1)") {
    Fixture f;
    const Gslb& g = f.snap->gslb;
    const auto& zone = *f.snap->db.zone(std::string_view("\1s\4test\0", 8));
    auto pick = [&](const std::string& host, uint16_t type = 1) {
        for (size_t i = 0; i < g.hosts.size(); ++i)
            if (g.hosts[i].name == host) {
                gslb::zones::DynAnswer da;
                f.sel.select(int32_t(i), type, zone, nullptr, gslb::zones::Client{}, da);
                return std::make_pair(da.ede.code, std::string(da.ede.text));
            }
        FAIL("no hostname " << host);
        return std::make_pair(-2, std::string());
    };
    // Up: no EDE.
    CHECK(pick("fball.s.test.").first == gslb::zones::Ede::kNone);
    for (int i = 0; i < 3; ++i) f.t().setHealth(f.svc(i), Health::Down);
    using P = std::pair<int32_t, std::string>;
    CHECK(pick("fball.s.test.") == P{0, "all services of fball.s.test. are down: fallback all"});
    CHECK(pick("fbnone.s.test.") == P{0, "all services of fbnone.s.test. are down: fallback none"});
    CHECK(pick("fbaddr.s.test.") == P{0, "all services of fbaddr.s.test. are down: fallback 192.0.2.99"});
    for (int i = 0; i < 3; ++i) f.t().setServiceEnabled(f.svc(i), false);
    CHECK(pick("fball.s.test.") == P{0, "all services of fball.s.test. are drained: fallback all"});
    // An AAAA query of a hostname whose fixed fallback is IPv4 falls back to all (of its AAAA: none here).
    CHECK(pick("fbaddr.s.test.", 28).first == gslb::zones::Ede::kNone);
}
