// Explain (server/explain.cpp): one simulated query shown stage by stage, against a snapshot whose state the
// test sets as the control thread would.
#include <doctest/doctest.h>

#include "server/explain.hpp"
#include "server/gslb.hpp"
#include "tests/server/helpers.hpp"

using namespace gslb::server;
using nlohmann::json;

namespace {

std::string zone() {
    std::string z =
        "$ORIGIN x.test.\n$TTL 300\n@ IN SOA ns1 hostmaster 7 3600 900 604800 120\n@ IN NS ns1\n"
        "ns1 IN A 192.0.2.53\nstatic IN A 192.0.2.77\nalias IN CNAME hash\n";
    for (const char* h : {"www", "hash", "down"})
        for (const char* a : {"192.0.2.1", "192.0.2.2", "192.0.2.3"})
            z += std::string(h) + " IN A " + a + "\n";
    return z;
}

std::string config() {
    std::string c =
        "[server]\nlisten = [\"127.0.0.1:5353\"]\n[[zone]]\nname = \"x.test.\"\nfile = \"t.zone\"\n"
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
    CHECK_FALSE(topo["bar"].contains("list_key"));  // 192.0.2.200 is in no nets prefix: location unknown
    CHECK(topo["note"].get<std::string>().find("unknown") != std::string::npos);
    CHECK(topo["kept"].size() == 2);
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
