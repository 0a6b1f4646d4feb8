// Explain (server/control/explain.cpp): one simulated query shown stage by stage, against a snapshot whose
// state the test sets as the control thread would.
#include <arpa/inet.h>
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

#include "server/base/clock.hpp"
#include "server/control/explain.hpp"
#include "server/state/gslb.hpp"
#include "tests/server/helpers.hpp"
#include "zones/answer.hpp"
#include "zones/ldns.hpp"  // not <ldns/ldns.h>: see there
#include "zones/rrtype.hpp"

using namespace gslb::server;
using nlohmann::json;

namespace {

std::string zone() {
    std::string z =
        "$ORIGIN x.test.\n$TTL 300\n@ IN SOA ns1 hostmaster 7 3600 900 604800 120\n@ IN NS ns1\n"
        "ns1 IN A 192.0.2.53\nstatic IN A 192.0.2.77\nalias IN CNAME hash\n";
    for (const char* h : {"www", "hash", "down", "all", "lsel", "lc", "head"})
        for (const char* a : {"192.0.2.1", "192.0.2.2", "192.0.2.3"})
            z += std::string(h) + " IN A " + a + "\n";
    return z;
}

std::string config() {
    std::string c =
        "[server]\nlisten = [\"127.0.0.1:10053\"]\n[[zone]]\nname = \"x.test.\"\nfile = \"t.zone\"\n"
        "[topology]\nnets = { \"198.51.100.0/24\" = \"eu\" }\n"
        "[site.east]\n[site.west]\n[site.south]\n";
    auto host = [&](const std::string& h, const std::string& policy) {
        std::string n = h + ".x.test.";
        c += "[hostname.\"" + n + "\"]\n" + policy + st::threeServices(n);
    };
    host("www",
         "policy = [\"health\", \"topology\", \"least-connections\", \"random\"]\nfactor = 0.5\n"
         "topology = { eu = [\"west\", \"east\"], default = [\"east\", \"south\"] }\n");
    host("hash", "policy = [\"health\", \"hashed\"]\n");
    host("down", "policy = [\"health\", \"random\"]\nfallback = \"none\"\n");
    host("all", "policy = [\"health\", \"session-capacity\", \"flashback\", \"random\"]\n");
    host("lsel", "policy = [\"health\", \"least-selected\"]\n");
    host("lc", "policy = [\"health\", \"least-connections\", \"random\"]\n");
    host("head", "policy = [\"health\", \"headroom\"]\n");
    return c;
}

struct Fixture {
    std::shared_ptr<Snapshot> snap = st::snapshot(config(), zone());
    gslb::metrics::StateTable& t() { return *snap->gslb.table; }
    json run(const ExplainRequest& r) {
        json j;
        std::string err;
        REQUIRE_MESSAGE(explain(*snap, r, j, err), err);
        return j;
    }
};

}  // namespace

TEST_CASE("explain: every stage in order with what it received, read, set as the bar and dropped") {
    Fixture f;
    f.t().setHealth(*f.t().findService("south", "192.0.2.3"), gslb::metrics::Health::Down);
    f.t().reportConnections(*f.t().findService("east", "192.0.2.1"), 100, monotonicMs() - 2000);
    f.t().reportConnections(*f.t().findService("west", "192.0.2.2"), 900, monotonicMs());
    json j = f.run({"www.x.test", "A", "192.0.2.200", ""});
    REQUIRE(j["stages"].size() == 3);
    const json& health = j["stages"][0];
    CHECK(health["stage"] == "health");
    CHECK(health["received"].size() == 3);
    CHECK(health["dropped"][0]["service"] == "south/192.0.2.3");
    CHECK(health["dropped"][0]["why"] == "down");
    const json& topo = j["stages"][1];
    CHECK(topo["stage"] == "topology");
    // 192.0.2.200 is in no nets prefix: location unknown, so the table's default (east, south; south is
    // down) — it used to pass every candidate.
    CHECK(topo["bar"]["list_key"] == "default");
    CHECK(topo["note"] == "the client's location is unknown: the default list");
    CHECK(topo["kept"] == json::array({"east/192.0.2.1"}));
    const json& lc = j["stages"][2];
    CHECK(lc["bar"]["best"] == 100.0);
    CHECK(lc["bar"]["factor"] == 0.5);
    CHECK(lc["bar"]["limit"] == 150.0);
    CHECK(lc["values"][0]["age_s"].get<double>() >= 1.9);
    CHECK(j["chooser"]["picked"].size() == 1);
    CHECK(j["answer"]["records"].size() == 1);
    CHECK(j["answer"]["ecs_scope"].is_null());  // no ECS: nothing to scope
    std::string text = explainText(j);
    CHECK(text.find("1. health") != std::string::npos);
    CHECK(text.find("dropped south/192.0.2.3: down") != std::string::npos);
    CHECK(text.find("answer") != std::string::npos);
}

TEST_CASE("explain: ECS decides the location and the scope") {
    Fixture f;
    json j = f.run({"www.x.test.", "A", "10.0.0.1", "198.51.100.0/24"});
    CHECK(j["location"]["from"] == "ecs");
    CHECK(j["location"]["nets"]["prefix"] == "198.51.100.0/24");
    CHECK(j["location"]["labels"][0] == "nets eu");
    const json& topo = j["stages"][1];
    CHECK(topo["bar"]["list_key"] == "eu");
    CHECK(topo["kept"] == json::array({"west/192.0.2.2"}));
    CHECK(topo["dropped"].size() == 2);
    CHECK(j["answer"]["records"] == json::array({"192.0.2.2"}));
    CHECK(j["answer"]["ecs_scope"] == 24);
    json h = f.run({"hash.x.test.", "A", "", "100.64.1.0/24"});
    CHECK(h["chooser"]["stage"] == "hashed");
    CHECK(h["chooser"]["bar"]["hashed_prefix"] == "100.64.1.0/24");
    CHECK(h["answer"]["ecs_scope"] == 24);
}

TEST_CASE("explain: fallback, static names, bad requests") {
    Fixture f;
    for (const char* a : {"192.0.2.1", "192.0.2.2", "192.0.2.3"})
        for (const char* s : {"east", "west", "south"})
            if (auto slot = f.t().findService(s, a)) f.t().setHealth(*slot, gslb::metrics::Health::Down);
    json j = f.run({"down.x.test.", "A", "", ""});
    CHECK(j["fallback"]["why"] == "health left nothing");
    CHECK(j["fallback"]["fallback"] == "none");
    CHECK(j["answer"]["records"].empty());
    json s = f.run({"static.x.test.", "A", "", "198.51.100.0/24"});
    CHECK(s["hostname"].is_null());
    CHECK(s["answer"]["rcode"] == "NOERROR");
    CHECK(s["answer"]["records"][0].get<std::string>().find("192.0.2.77") != std::string::npos);
    CHECK(s["answer"]["ecs_scope"] == 0);
    json err;
    std::string e;
    CHECK_FALSE(explain(*f.snap, {"www.x.test.", "MX", "", ""}, err, e));
    CHECK_FALSE(explain(*f.snap, {"www.x.test.", "A", "not-an-ip", ""}, err, e));
    CHECK_FALSE(explain(*f.snap, {"www.x.test.", "A", "", "10.0.0.0/33"}, err, e));
}

TEST_CASE("explain: a static name that leads to a GSLB hostname counts no answer in any worker's row") {
    // The control thread simulating a query must not write worker 0's counters (a data race with that
    // worker, and an answer nobody got in /metrics).
    Fixture f;
    json j = f.run({"alias.x.test.", "A", "198.51.100.7", ""});
    CHECK(j["hostname"].is_null());
    REQUIRE(j["answer"]["records"].size() == 2);  // the CNAME and one address of `hash`
    CHECK(j["answer"]["records"][0].get<std::string>().find("CNAME") != std::string::npos);
    CHECK(j["answer"]["records"][1].get<std::string>().find("192.0.2.") != std::string::npos);
    const Gslb& g = f.snap->gslb;
    uint64_t counted = 0;
    for (uint32_t s = 0; s < g.answers->slots(); ++s) counted += g.answers->total(s);
    for (uint32_t s = 0; s < g.hostAnswers->slots(); ++s) counted += g.hostAnswers->total(s);
    for (uint32_t s = 0; s < g.fallbacks->slots(); ++s) counted += g.fallbacks->total(s);
    CHECK(counted == 0);
}

TEST_CASE("explain: a drain holds through the fallback: what is left out, and NODATA when nothing is left") {
    Fixture f;
    auto& t = f.t();
    t.setHealth(*t.findService("east", "192.0.2.1"), gslb::metrics::Health::Down);
    t.setSiteEnabled(*t.findSite("west"), false);
    t.setServiceEnabled(*t.findService("south", "192.0.2.3"), false);
    json j = f.run({"all.x.test.", "A", "", ""});
    CHECK(j["fallback"]["fallback"] == "all");
    CHECK(j["fallback"]["left_out"] == json::array({{{"service", "west/192.0.2.2"}, {"why", "site drained"}},
                                                    {{"service", "south/192.0.2.3"}, {"why", "drained"}}}));
    CHECK_FALSE(j["fallback"].contains("note"));
    CHECK(j["answer"]["records"] == json::array({"192.0.2.1"}));  // down, but not drained
    t.setSitePreference(*t.findSite("east"), 0);
    j = f.run({"all.x.test.", "A", "", ""});
    CHECK(j["stages"][0]["stage"] == "preference 0");      // before the policy's stages, as select() does
    CHECK(j["fallback"]["why"] == "health left nothing");  // west and south reached it, drained
    CHECK(j["fallback"]["left_out"][0]["why"] == "site at preference 0");
    CHECK(j["fallback"]["note"].get<std::string>().find("every candidate is drained") != std::string::npos);
    CHECK(j["answer"]["records"].empty());
    std::string text = explainText(j);
    CHECK(text.find("left out west/192.0.2.2: site drained") != std::string::npos);
    CHECK(text.find("so the answer is NODATA") != std::string::npos);
}

TEST_CASE("explain: unknown session capacity is null, FlashBack times rounded, a name with a NUL refused") {
    Fixture f;
    auto& t = f.t();
    gslb::metrics::SiteReport r;
    r.sessionsUsed = 1000;
    r.sessionsMax = 100000;
    t.reportSite(*t.findSite("east"), r, monotonicMs());  // west and south never reported
    t.setFlashback(*t.findService("east", "192.0.2.1"), 1.23456, 51.17535799741745);
    json j = f.run({"all.x.test.", "A", "", ""});
    const json& cap = j["stages"][1];
    REQUIRE(cap["stage"] == "session-capacity");
    CHECK(cap["values"][0]["value"] == 99000.0);
    CHECK(cap["values"][1]["value"].is_null());  // was 0.0 beside "nothing dropped"
    CHECK(cap["values"][2]["value"].is_null());
    CHECK(cap["bar"]["best_available"] == 99000.0);
    const json& fb = j["stages"][2];
    CHECK(fb["values"][0]["value"]["l7_ms"] == 51.18);
    CHECK(fb["values"][0]["value"]["l4_ms"] == 1.23);
    CHECK(fb["bar"]["fastest_l7_ms"] == 51.18);
    CHECK(explainText(j).find("51.17535") == std::string::npos);
    json err;
    std::string e;
    CHECK_FALSE(explain(*f.snap, {std::string("a\0b.x.test.", 11), "A", "", ""}, err, e));
    CHECK(e ==
          "name \"a\\000b.x.test.\" is not a domain name (a control octet or a space: write it as \\DDD)");
    CHECK_FALSE(explain(*f.snap, {"a b.x.test.", "A", "", ""}, err, e));
    CHECK_FALSE(explain(*f.snap, {"a..x.test.", "A", "", ""}, err, e));
    CHECK(e == "name \"a..x.test.\" is not a domain name");
    CHECK(explain(*f.snap, {"a\\000b.x.test.", "A", "", ""}, err, e));  // escaped: a name, not in the zone
}

TEST_CASE("explain: least-selected shows the answer counts it compares, not FlashBack times") {
    Fixture f;
    const GslbHost* h = nullptr;
    for (const auto& x : f.snap->gslb.hosts)
        if (x.name == "lsel.x.test.") h = &x;
    REQUIRE(h);
    for (int i = 0; i < 3; ++i) f.snap->gslb.hostAnswers->add(0, h->family[0][0].hostSlot);
    f.snap->gslb.hostAnswers->add(0, h->family[0][2].hostSlot);
    f.t().setFlashback(*f.t().findService("east", "192.0.2.1"), 1.5, 2.5);
    json j = f.run({"lsel.x.test.", "A", "", ""});
    const json& v = j["chooser"]["values"];
    CHECK(v[0]["value"] == json{{"answered", 3}});
    CHECK(v[1]["value"] == json{{"answered", 0}});
    CHECK(v[2]["value"] == json{{"answered", 1}});
}

TEST_CASE("explain: least-connections says whether it compares connections / capacity") {
    Fixture f;
    auto& t = f.t();
    t.reportConnections(*t.findService("east", "192.0.2.1"), 100, monotonicMs());
    t.reportConnections(*t.findService("west", "192.0.2.2"), 900, monotonicMs());
    json j = f.run({"lc.x.test.", "A", "", ""});
    const json& lc = j["stages"][1];
    CHECK(lc["bar"]["compares"] == "connections (not every candidate has a capacity)");
    CHECK(lc["kept"] == json::array({"east/192.0.2.1", "south/192.0.2.3"}));
    // With a capacity on every service: 900 of 3000 (0.3) beats 100 of 200 (0.5); south's connections are
    // unknown: kept, never the bar.
    for (auto& x : f.snap->gslb.hosts)
        for (auto& s : x.family[0]) s.capacity = s.address() == "192.0.2.2" ? 3000 : 200;
    j = f.run({"lc.x.test.", "A", "", ""});
    const json& rel = j["stages"][1];
    CHECK(rel["bar"]["compares"] == "connections / capacity");
    CHECK(rel["bar"]["best"] == 0.3);
    CHECK(rel["values"][0]["value"]["utilisation"] == 0.5);
    CHECK(rel["kept"] == json::array({"west/192.0.2.2", "south/192.0.2.3"}));
    CHECK(rel["dropped"][0]["why"] == "100 connections of capacity 200 = 0.500 > limit 0.3");
}

TEST_CASE("explain: headroom shows each candidate's utilisation, target and probability; unknown is null") {
    // east 400 of 500 sessions (0.8), west 100 of 300 (1/3), south never reported: its capacity counts as the
    // mean of the known (400) and its utilisation as theirs, 500 / 800 = 0.625. Free seats C x (1 - u): 100,
    // 200, 150 (F = 450); the square-root margin (gamma 0.25) takes beta = 112.5 / (√500 + √300 + √400) =
    // 1.885 seats per √seat: margins 42.2, 32.6, 37.7; targets 57.8, 167.4, 112.3 of 337.5. No answer
    // committed yet and the default demand (1/s): the deficits are the targets.
    Fixture f;
    auto& t = f.t();
    gslb::metrics::SiteReport r;
    r.sessionsUsed = 400;
    r.sessionsMax = 500;
    t.reportSite(*t.findSite("east"), r, monotonicMs());
    r.sessionsUsed = 100;
    r.sessionsMax = 300;
    t.reportSite(*t.findSite("west"), r, monotonicMs());
    json j = f.run({"head.x.test.", "A", "", ""});
    const json& ch = j["chooser"];
    REQUIRE(ch["stage"] == "headroom");
    const json& v = ch["values"];
    CHECK(v[0]["value"]["basis"] == "sessions");
    CHECK(v[0]["value"]["utilisation"] == doctest::Approx(0.8));
    const double beta = 112.5 / (std::sqrt(500.0) + std::sqrt(300.0) + 20);
    CHECK(ch["bar"]["sqrt_margin"]["gamma"] == 0.25);
    CHECK(ch["bar"]["sqrt_margin"]["beta"] == doctest::Approx(beta));
    CHECK(v[0]["value"]["free"] == doctest::Approx(100));
    CHECK(v[0]["value"]["margin"] == doctest::Approx(beta * std::sqrt(500.0)));
    CHECK(v[0]["value"]["probability"] == doctest::Approx((100 - beta * std::sqrt(500.0)) / 337.5));
    CHECK(v[1]["value"]["probability"] == doctest::Approx((200 - beta * std::sqrt(300.0)) / 337.5));
    CHECK(v[2]["value"]["basis"].is_null());  // nothing known of south: null, not an error
    CHECK(v[2]["value"]["utilisation"].is_null());
    CHECK(v[2]["value"]["utilisation_used"] == doctest::Approx(0.625));
    CHECK(v[2]["value"]["margin"] == doctest::Approx(beta * 20));  // √ of the mean capacity
    CHECK(v[2]["value"]["probability"] == doctest::Approx((150 - beta * 20) / 337.5));
    // Nothing answered yet: nothing in flight, the projected load is the measured one (null when unknown),
    // and no session time can be inferred.
    CHECK(v[0]["value"]["pending"] == 0);
    CHECK(v[0]["value"]["projected_load"] == 400);
    CHECK(v[2]["value"]["projected_load"].is_null());
    CHECK(v[0]["value"]["nearest"] == false);
    CHECK(ch["bar"]["session_time_s"].is_null());
    CHECK(ch["bar"]["demand_source"] == "default");
    CHECK(ch["bar"]["resolver_demand"] == 1.0);
    CHECK(j["answer"]["ttl"] == 30);  // every site can take 1/s over 30 s within half its free seats
    CHECK(j["answer"]["ttl_reason"] == "calm");
    CHECK(explainText(j).find("headroom (chooser)") != std::string::npos);
}

TEST_CASE("explain: an empty answer is NODATA with the zone's SOA at its negative TTL, as the server sends") {
    Fixture f;
    // www has A services only: AAAA is NODATA, and the TTL a resolver caches is the SOA's in authority,
    // min(SOA TTL 300, MINIMUM 120) = 120 (RFC 2308 §3), not the hostname's ttl 30.
    json j = f.run({"www.x.test.", "AAAA", "192.0.2.1", ""});
    CHECK(j["answer"]["records"] == json::array());
    CHECK(j["answer"]["nodata"] == true);
    CHECK(j["answer"]["ttl"] == 120);
    CHECK(j["answer"]["authority"] == json{{"soa", "x.test."}, {"ttl", 120}});
    std::string text = explainText(j);
    CHECK(text.substr(text.find("\nanswer")) ==
          "\nanswer   NOERROR NODATA, SOA x.test. ttl 120 in authority\n");

    // What the query path answers: the same SOA at the same TTL in authority, nothing in answer.
    auto q = st::makeQuery("www.x.test.", gslb::zones::kTypeAAAA);
    Selector sel(0, 1, Selector::Mode::Explain);
    sel.rebind(&f.snap->gslb);
    std::vector<uint8_t> out(65535);
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    inet_pton(AF_INET, "192.0.2.1", &sin.sin_addr);
    auto r = gslb::zones::answer(f.snap->db, f.snap->answer, q, false, out, &sel,
                                 gslb::zones::ClientInfo{reinterpret_cast<const sockaddr*>(&sin)});
    REQUIRE(r.len > 12);
    ldns_pkt* p = nullptr;
    REQUIRE(ldns_wire2pkt(&p, out.data(), r.len) == LDNS_STATUS_OK);
    CHECK(ldns_pkt_get_rcode(p) == LDNS_RCODE_NOERROR);
    CHECK(ldns_pkt_ancount(p) == 0);
    REQUIRE(ldns_pkt_nscount(p) == 1);
    ldns_rr* soa = ldns_rr_list_rr(ldns_pkt_authority(p), 0);
    CHECK(ldns_rr_get_type(soa) == LDNS_RR_TYPE_SOA);
    CHECK(json(ldns_rr_ttl(soa)) == j["answer"]["ttl"]);
    ldns_pkt_free(p);

    // The fallback "none" with every service down: NODATA the same way.
    for (const char* a : {"192.0.2.1", "192.0.2.2", "192.0.2.3"})
        for (const char* s : {"east", "west", "south"})
            if (auto slot = f.t().findService(s, a)) f.t().setHealth(*slot, gslb::metrics::Health::Down);
    j = f.run({"down.x.test.", "A", "", ""});
    CHECK(j["answer"]["ttl"] == 120);
    CHECK(explainText(j).find("answer   NOERROR NODATA, SOA x.test. ttl 120 in authority\n") !=
          std::string::npos);
    // A non-empty answer keeps the hostname's ttl.
    CHECK(f.run({"hash.x.test.", "A", "", ""})["answer"]["ttl"] == 30);
}

TEST_CASE("explain: the rtt stage shows figures and rtt_explore as the decimals they came as") {
    std::string z = zone();
    for (const char* a : {"192.0.2.1", "192.0.2.2", "192.0.2.3"}) z += std::string("rtt IN A ") + a + "\n";
    auto snap =
        st::snapshot(config() + "[hostname.\"rtt.x.test.\"]\npolicy = [\"health\", \"rtt\", \"random\"]\n" +
                         "rtt_explore = 5\nrtt_floor = 0\n" + st::threeServices("rtt.x.test."),
                     z);
    REQUIRE(snap->gslb.rtt);
    RttTable& rtt = *snap->gslb.rtt;
    gslb::zones::ClientSubnet net{};
    net.family = gslb::zones::kFamilyIPv4;
    net.bits = 24;
    const uint8_t a[] = {198, 51, 100, 0};
    std::memcpy(net.addr, a, 4);
    // A loopback RTT is a few µs: 0.005 ms, which a float holds as 0.004999999888241291.
    REQUIRE(rtt.update(rtt.prefixKey(net), *snap->gslb.table->findSite("east"), 0.005f, 3, monotonicMs()));
    REQUIRE(rtt.update(rtt.prefixKey(net), *snap->gslb.table->findSite("west"), 0.3f, 7, monotonicMs()));
    json j;
    std::string err;
    REQUIRE_MESSAGE(explain(*snap, {"rtt.x.test.", "A", "198.51.100.7", ""}, j, err), err);
    const json& st = j["stages"][1];
    REQUIRE(st["stage"] == "rtt");
    CHECK(st["bar"]["explore_percent"].dump() == "5.0");
    CHECK(st["bar"]["fastest_ms"].dump() == "0.005");
    CHECK(st["values"][0]["service"] == "east/192.0.2.1");
    CHECK(st["values"][0]["value"].dump() == R"({"rtt_ms":0.005,"samples":3})");
    CHECK(st["values"][1]["value"].dump() == R"({"rtt_ms":0.3,"samples":7})");
    CHECK(st["dropped"][0]["why"].get<std::string>().rfind("0.3 ms from the client's prefix: slower than the "
                                                           "fastest 0.005 ms",
                                                           0) == 0);
}
