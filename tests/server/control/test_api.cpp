// ControlApi::handle, socket-free: tokens, refusals that change nothing, reports, drain/enable, status,
// Prometheus text, methods.
#include <doctest/doctest.h>
#include <event2/event.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <cstring>
#include <sstream>

#include "server/base/clock.hpp"
#include "server/conf/token.hpp"
#include "server/control/api.hpp"
#include "tests/server/helpers.hpp"

using namespace gslb::server;
using gslb::metrics::StateTable;

namespace {

const std::string kApiConfig = st::baseConfig(
    "[load]\ndecay = 2\nhistory = 9\n[load.metric.busy]\ncapacity = 1\n\n"
    "[hostname.\"www.t.test.\"]\npolicy = [\"health\", \"least-connections\", \"random\"]\n" +
    st::threeServices("www.t.test.") +
    "[hostname.\"dual.t.test.\"]\n"
    "[[hostname.\"dual.t.test.\".service]]\naddress = \"192.0.2.1\"\nsite = \"east\"\n"
    "[[hostname.\"dual.t.test.\".service]]\naddress = \"2001:db8::1\"\nsite = \"west\"\n");

struct Api {
    event_base* base = event_base_new();
    std::unique_ptr<Shared> shared = std::make_unique<Shared>();
    std::shared_ptr<Snapshot> snap;
    std::string token = "s3cret-token-0123";
    int reloads = 0;
    bool reloadOk = true;
    std::string reloadMsg = "reloaded";
    std::unique_ptr<ControlApi> api;

    Api() {
        snap = st::snapshot(kApiConfig);
        shared->holder.publish(snap);
        api = std::make_unique<ControlApi>(
            base, *shared,
            [this](std::string& m) {
                ++reloads;
                m = reloadMsg;
                return reloadOk;
            },
            nullptr);
        std::string tf = st::writeSecret(st::newDir(), "control.token", "  " + token + "\n");
        std::string error;
        REQUIRE_MESSAGE(api->readToken(tf, error), error);
    }
    ~Api() {
        api.reset();
        event_base_free(base);
    }
    ApiResponse post(const std::string& path, const std::string& body = "", std::string auth = "-") {
        if (auth == "-") auth = "Bearer " + token;
        return api->handle("POST", path, auth, body);
    }
    ApiResponse get(const std::string& path) { return api->handle("GET", path, "", ""); }
    StateTable& t() { return *snap->gslb.table; }
    uint32_t svc(const char* site, const char* addr) {
        auto s = t().findService(site, addr);
        REQUIRE(s.has_value());
        return *s;
    }
    uint32_t site(const char* name) {
        auto s = t().findSite(name);
        REQUIRE(s.has_value());
        return *s;
    }
    std::string dump() { return st::dumpState(t()); }
};

std::string errorOf(const ApiResponse& r) {
    auto j = nlohmann::json::parse(r.body, nullptr, false);
    if (j.is_object() && j.contains("error") && j["error"].is_string()) return j["error"];
    return "<no JSON error in: " + r.body + ">";
}

const std::string kGoodReport =
    R"({"cpu": 35, "sessions_used": 200000, "sessions_max": 1000000, "loads": {"busy": 0.3},
        "services": {"192.0.2.1": {"connections": 900}}})";

}  // namespace

TEST_CASE("401 without or with a wrong token, and nothing changes") {
    Api a;
    std::string before = a.dump();
    const std::string auths[] = {"",
                                 "Bearer",
                                 "Bearer ",
                                 "Bearer wrong-token-0000",
                                 "Bearer " + a.token + "x",
                                 "Bearer " + a.token.substr(0, a.token.size() - 1),
                                 a.token,
                                 "Basic " + a.token,
                                 "Bearer" + a.token,
                                 "Bearer\t" + a.token};
    for (const auto& auth : auths) {
        CAPTURE(auth);
        auto r = a.post("/v1/sites/east/report", kGoodReport, auth);
        CHECK(r.status == 401);
        CHECK(errorOf(r).find("bearer token") != std::string::npos);
        CHECK(a.post("/v1/sites/east/drain", "", auth).status == 401);
        CHECK(a.post("/v1/sites/east/services/192.0.2.1/drain", "", auth).status == 401);
        CHECK(a.post("/v1/reload", "", auth).status == 401);
        // A refused token wins over a bad site or body: nothing is revealed.
        CHECK(a.post("/v1/sites/nowhere/report", "not json", auth).status == 401);
    }
    CHECK(a.reloads == 0);
    CHECK(a.dump() == before);
}

TEST_CASE("readToken: too short or missing keeps the old token") {
    Api a;
    std::string dir = st::newDir();
    std::string error;
    CHECK_FALSE(a.api->readToken(st::writeSecret(dir, "short", "1234567\n"), error));
    CHECK(error.find("at least 8 characters") != std::string::npos);
    CHECK_FALSE(a.api->readToken(dir + "/missing", error));
    CHECK(a.post("/v1/sites/east/drain").status == 200);
    CHECK(a.api->readToken(st::writeSecret(dir, "new", "another-token\n"), error));
    CHECK(a.post("/v1/sites/east/enable").status == 401);
    CHECK(a.post("/v1/sites/east/enable", "", "Bearer another-token").status == 200);
}

TEST_CASE("404: unknown site, unknown service, unknown endpoint — nothing changes") {
    Api a;
    CHECK(a.post("/v1/sites/east/report", R"({"cpu": 10})").status == 200);
    std::string before = a.dump();
    auto r = a.post("/v1/sites/nowhere/report", R"({"cpu": 10})");
    CHECK(r.status == 404);
    CHECK(errorOf(r) == "unknown site \"nowhere\"");
    CHECK(a.post("/v1/sites/nowhere/drain").status == 404);
    CHECK(a.post("/v1/sites/nowhere/enable").status == 404);
    // 192.0.2.2 is west's, not east's.
    r = a.post("/v1/sites/east/services/192.0.2.2/drain");
    CHECK(r.status == 404);
    CHECK(errorOf(r) == "site \"east\" has no service 192.0.2.2");
    CHECK(a.post("/v1/sites/east/services/192.0.2.99/enable").status == 404);
    // A report naming an unknown service is refused whole: its valid cpu is not written either.
    r = a.post(
        "/v1/sites/east/report",
        R"({"cpu": 77, "services": {"192.0.2.1": {"connections": 5}, "192.0.2.99": {"connections": 1}}})");
    CHECK(r.status == 404);
    CHECK(errorOf(r) == "site \"east\" has no service 192.0.2.99");
    CHECK(a.post("/v1/nothing").status == 404);
    CHECK(a.post("/v1/sites/east/bogus").status == 404);
    CHECK(a.post("/v1/sites/east/services/192.0.2.1/bogus").status == 404);
    CHECK(a.dump() == before);
}

TEST_CASE("400 for a bad body, each leaving the state table exactly as before") {
    Api a;
    REQUIRE(a.post("/v1/sites/east/report", kGoodReport).status == 200);
    REQUIRE(a.post("/v1/sites/west/report", R"({"cpu": 5, "services": {"192.0.2.2": {"connections": 4}}})")
                .status == 200);
    std::string before = a.dump();
    struct Case {
        const char* body;
        const char* error;  // a part of the message
    };
    const Case cases[] = {
        {"", "not JSON"},
        {"{cpu: 3}", "not JSON"},
        {R"({"cpu": 3)", "not JSON"},
        {"[1, 2]", "must be a JSON object"},
        {"42", "must be a JSON object"},
        {R"("cpu")", "must be a JSON object"},
        {R"({"cpuu": 3})", "unknown key \"cpuu\""},
        {R"({"cpu": 50, "extra": 1})", "unknown key \"extra\""},
        {R"({"cpu": 101})", "\"cpu\" = 101 is out of range [0, 100]"},
        {R"({"cpu": -1})", "\"cpu\" = -1 is out of range"},
        {R"({"cpu": "35"})", "\"cpu\" must be a number"},
        {R"({"cpu": null})", "\"cpu\" must be a number"},
        {R"({"cpu": 50, "services": {"192.0.2.1": {"connections": -1}}})",
         "connections\" = -1 is out of range"},
        {R"({"services": {"192.0.2.1": {"connections": "many"}}})", "must be a number"},
        {R"({"services": {"192.0.2.1": {"conections": 3}}})", "unknown key \"conections\""},
        {R"({"services": {"192.0.2.1": 3}})", "must be an object"},
        {R"({"services": [1]})", "must be an object"},
        {R"({"sessions_used": 11, "sessions_max": 10})", "sessions_used is larger than sessions_max"},
        {R"({"cpu": 20, "sessions_used": 10})", "come together"},
        {R"({"sessions_max": 10})", "come together"},
        {R"({"sessions_used": 10, "sessions_max": 0})", "sessions_max"},
        {R"({"loads": {"idle": 0.5}})", "unknown load metric \"idle\""},
        {R"({"loads": {"busy": -0.5}})", "out of range"},
        {R"({"loads": [0.5]})", "\"loads\" must be an object"},
    };
    for (const auto& c : cases) {
        CAPTURE(c.body);
        auto r = a.post("/v1/sites/east/report", c.body);
        CHECK(r.status == 400);
        CHECK_MESSAGE(errorOf(r).find(c.error) != std::string::npos, errorOf(r));
        CHECK(a.dump() == before);
    }
}

TEST_CASE("a valid report writes cpu, sessions, load factor and connections") {
    Api a;
    int64_t t0 = monotonicMs();
    auto r = a.post("/v1/sites/east/report", kGoodReport);
    REQUIRE(r.status == 200);
    CHECK(nlohmann::json::parse(r.body)["ok"] == true);
    auto sv = a.t().siteView(a.site("east"));
    CHECK(sv.cpu == 35);
    CHECK(sv.sessionsUsed == 200000);
    CHECK(sv.sessionsMax == 1000000);
    CHECK(sv.loadFactor == doctest::Approx(70));  // mod_cluster: 100 - 0.3 x 100, first value
    CHECK(sv.reportAtMs >= t0);
    CHECK(sv.reportAtMs <= monotonicMs());
    auto v = a.t().serviceView(a.svc("east", "192.0.2.1"));
    CHECK(v.connections == 900);
    CHECK(v.connectionsAtMs >= t0);
    // Other sites and services untouched.
    CHECK(std::isnan(a.t().siteView(a.site("west")).cpu));
    CHECK(std::isnan(a.t().serviceView(a.svc("west", "192.0.2.2")).connections));
    // An IPv6 service, by its address; a second report updates only the keys it carries.
    REQUIRE(a.post("/v1/sites/west/report", R"({"services": {"2001:db8::1": {"connections": 7}}})").status ==
            200);
    CHECK(a.t().serviceView(a.svc("west", "2001:db8::1")).connections == 7);
    REQUIRE(a.post("/v1/sites/east/report", R"({"cpu": 0, "sessions_used": 0, "sessions_max": 1})").status ==
            200);
    sv = a.t().siteView(a.site("east"));
    CHECK(sv.cpu == 0);
    CHECK(sv.sessionsUsed == 0);
    CHECK(sv.sessionsMax == 1);
    CHECK(sv.loadFactor == doctest::Approx(70));  // not in this report: kept, with its age
    CHECK(a.t().serviceView(a.svc("east", "192.0.2.1")).connections == 900);  // not in this report
    // The empty object is a valid (empty) report.
    CHECK(a.post("/v1/sites/south/report", "{}").status == 200);
}

TEST_CASE("a report key no stage at the site reads is stored but said to be ignored") {
    Api a;
    // east: www (least-connections) and dual (the default policy, headroom: sessions, connections). No cpu.
    auto r = a.post("/v1/sites/east/report",
                    R"({"cpu": 20, "sessions_used": 1, "sessions_max": 2, "loads": {"busy": 0.5}})");
    REQUIRE(r.status == 200);
    auto j = nlohmann::json::parse(r.body);
    CHECK(j["ignored"] == nlohmann::json{"cpu", "loads"});
    CHECK(a.t().siteView(a.site("east")).cpu == 20);  // a reload may add the stage
    r = a.post("/v1/sites/east/report", R"({"sessions_used": 1, "sessions_max": 2})");
    CHECK_FALSE(nlohmann::json::parse(r.body).contains("ignored"));
}

TEST_CASE("a partial report keeps the keys it lacks (an agent sending connections and cpu apart)") {
    Api a;
    REQUIRE(a.post("/v1/sites/east/report", R"({"services": {"192.0.2.1": {"connections": 12}}})").status ==
            200);
    REQUIRE(a.post("/v1/sites/east/report", R"({"cpu": 20})").status == 200);
    REQUIRE(a.post("/v1/sites/east/report", R"({"sessions_used": 5, "sessions_max": 100})").status == 200);
    auto sv = a.t().siteView(a.site("east"));
    CHECK(sv.cpu == 20);
    CHECK(sv.sessionsUsed == 5);
    CHECK(sv.cpuAtMs != gslb::metrics::kNeverMs);
    CHECK(sv.sessionsAtMs >= sv.cpuAtMs);
    CHECK(sv.loadFactorAtMs == gslb::metrics::kNeverMs);  // never reported: still unknown
    CHECK(a.t().serviceView(a.svc("east", "192.0.2.1")).connections == 12);
    auto st = nlohmann::json::parse(a.get("/v1/status").body);
    for (const auto& site : st["sites"])
        if (site["name"] == "east") {
            CHECK(site["ages_s"]["cpu"].is_number());
            CHECK(site["ages_s"]["sessions"].is_number());
            CHECK(site["ages_s"]["load_factor"].is_null());
        }
}

TEST_CASE("drain / enable of a site and of a service flip enabled") {
    Api a;
    uint32_t east = a.site("east"), s1 = a.svc("east", "192.0.2.1"), s6 = a.svc("west", "2001:db8::1");
    auto r = a.post("/v1/sites/east/drain");
    REQUIRE(r.status == 200);
    // dual's only A is east's: the drain says it leaves that name's A with nothing undrained (NODATA).
    CHECK(nlohmann::json::parse(r.body) ==
          nlohmann::json{{"ok", true},
                         {"site", "east"},
                         {"enabled", false},
                         {"services_drained", nlohmann::json::array()},
                         {"nothing_undrained",
                          nlohmann::json::array(
                              {{{"hostname", "dual.t.test."}, {"type", "A"}, {"answer", "NODATA"}}})}});
    CHECK_FALSE(a.t().siteView(east).enabled);
    CHECK(a.t().serviceView(s1).enabled);                 // the site's state, not its services'
    CHECK(a.post("/v1/sites/east/drain").status == 200);  // idempotent
    CHECK_FALSE(a.t().siteEnabled(east));
    CHECK(a.post("/v1/sites/east/enable").status == 200);
    CHECK(a.t().siteView(east).enabled);

    r = a.post("/v1/sites/east/services/192.0.2.1/drain");
    REQUIRE(r.status == 200);
    CHECK(nlohmann::json::parse(r.body)["address"] == "192.0.2.1");
    CHECK(nlohmann::json::parse(r.body)["nothing_undrained"].size() == 1);  // dual A again, www keeps two
    auto events = nlohmann::json::parse(a.get("/v1/events?since=0").body)["events"];
    bool warned = false;
    for (const auto& e : events)
        warned |= e["level"] == "warning" &&
                  e["message"].get<std::string>().find("leaves dual.t.test. A (NODATA) with no candidate") !=
                      std::string::npos;
    CHECK(warned);
    CHECK_FALSE(a.t().serviceView(s1).enabled);
    CHECK(a.t().siteView(east).enabled);
    CHECK(a.t().serviceView(a.svc("west", "192.0.2.2")).enabled);
    CHECK(a.post("/v1/sites/east/services/192.0.2.1/enable").status == 200);
    CHECK(a.t().serviceView(s1).enabled);
    // IPv6 addresses in the path, plain and percent-encoded.
    CHECK(a.post("/v1/sites/west/services/2001:db8::1/drain").status == 200);
    CHECK_FALSE(a.t().serviceEnabled(s6));
    CHECK(a.post("/v1/sites/west/services/2001%3Adb8%3A%3A1/enable").status == 200);
    CHECK(a.t().serviceEnabled(s6));
}

TEST_CASE("enabling a site names its services that stay drained on their own") {
    Api a;
    REQUIRE(a.post("/v1/sites/east/services/192.0.2.1/drain").status == 200);
    REQUIRE(a.post("/v1/sites/east/drain").status == 200);
    auto r = a.post("/v1/sites/east/enable");
    REQUIRE(r.status == 200);
    CHECK(nlohmann::json::parse(r.body)["services_drained"] == nlohmann::json{"192.0.2.1"});
    CHECK_FALSE(a.t().serviceEnabled(a.svc("east", "192.0.2.1")));
    REQUIRE(a.post("/v1/sites/east/services/192.0.2.1/enable").status == 200);
    CHECK(nlohmann::json::parse(a.post("/v1/sites/east/enable").body)["services_drained"].empty());
}

TEST_CASE("405 for the wrong method, and nothing changes") {
    Api a;
    std::string before = a.dump();
    for (const char* p : {"/v1/sites/east/report", "/v1/sites/east/drain", "/v1/sites/east/enable",
                          "/v1/sites/east/services/192.0.2.1/drain", "/v1/reload"}) {
        CAPTURE(p);
        CHECK(a.api->handle("GET", p, "Bearer " + a.token, kGoodReport).status == 405);
    }
    CHECK(a.post("/v1/status").status == 405);
    CHECK(a.post("/metrics").status == 405);
    // Any other method: 405 with the Allow field (RFC 9110 §15.5.6), for the POST endpoints and the GET ones.
    for (const char* m : {"PUT", "DELETE", "PATCH", "OPTIONS"}) {
        CAPTURE(m);
        auto r = a.api->handle(m, "/v1/sites/east/drain", "Bearer " + a.token, "");
        CHECK(r.status == 405);
        CHECK(r.allow == "POST");
        CHECK(nlohmann::json::parse(r.body).contains("error"));
        r = a.api->handle(m, "/v1/status", "", "");
        CHECK(r.status == 405);
        CHECK(r.allow == "GET, HEAD");
    }
    CHECK(a.api->handle("PUT", "/v1/nowhere", "", "").status == 404);
    CHECK(a.api->handle("PUT", "/v1/nowhere", "", "").allow.empty());
    CHECK(std::string(reasonPhrase(405)) == "Method Not Allowed");
    CHECK(std::string(reasonPhrase(431)) == "Request Header Fields Too Large");
    CHECK(std::string(reasonPhrase(299)) == "Error");
    CHECK(a.reloads == 0);
    CHECK(a.dump() == before);
}

TEST_CASE("POST /v1/reload calls the daemon back: 200 with its message, 500 with its error") {
    Api a;
    auto r = a.post("/v1/reload");
    CHECK(r.status == 200);
    CHECK(nlohmann::json::parse(r.body)["message"] == "reloaded");
    a.reloadOk = false;
    a.reloadMsg = "/etc/gslbd.toml:7: [defaults] ttl: must be an integer";
    r = a.post("/v1/reload");
    CHECK(r.status == 500);
    CHECK(errorOf(r).find("/etc/gslbd.toml:7: [defaults] ttl: must be an integer") != std::string::npos);
    CHECK(a.reloads == 2);
}

TEST_CASE("while starting every request is 503 and changes nothing") {
    Api a;
    std::string before = a.dump();
    a.api->setStarting(true);
    for (const char* p : {"/v1/status", "/metrics", "/", "/v1/events"}) {
        auto r = a.get(p);
        CHECK_MESSAGE(r.status == 503, p);
        CHECK(errorOf(r).rfind("starting: ", 0) == 0);
    }
    CHECK(a.post("/v1/reload").status == 503);
    CHECK(a.post("/v1/sites/east/drain").status == 503);
    CHECK(a.post("/v1/sites/east/report", kGoodReport).status == 503);
    CHECK(a.reloads == 0);
    CHECK(a.dump() == before);
    a.api->setStarting(false);
    CHECK(a.get("/v1/status").status == 200);
    CHECK(a.post("/v1/reload").status == 200);
}

TEST_CASE("GET /v1/status holds the sites, services and hostnames with the reported numbers") {
    Api a;
    REQUIRE(a.post("/v1/sites/east/report", kGoodReport).status == 200);
    REQUIRE(a.post("/v1/sites/west/drain").status == 200);
    REQUIRE(a.post("/v1/sites/south/services/192.0.2.3/drain").status == 200);
    auto r = a.get("/v1/status");
    REQUIRE(r.status == 200);
    CHECK(r.contentType == "application/json");
    auto j = nlohmann::json::parse(r.body);
    std::map<std::string, nlohmann::json> sites, services, hosts;
    for (const auto& s : j["sites"]) sites[s["name"]] = s;
    for (const auto& s : j["services"])
        services[s["site"].get<std::string>() + "/" + s["address"].get<std::string>()] = s;
    for (const auto& h : j["hostnames"]) hosts[h["name"]] = h;
    CHECK(sites.size() == 3);
    CHECK(services.size() == 4);  // (east, 192.0.2.1) is shared by www and dual
    CHECK(hosts.size() == 2);
    CHECK(sites["east"]["cpu"] == 35);
    CHECK(sites["east"]["sessions_used"] == 200000);
    CHECK(sites["east"]["sessions_max"] == 1000000);
    CHECK(sites["east"]["load_factor"].get<double>() == doctest::Approx(70));
    CHECK(sites["east"]["enabled"] == true);
    CHECK(sites["east"]["report_age_s"].is_number());
    CHECK(sites["west"]["enabled"] == false);
    CHECK(sites["west"]["cpu"].is_null());
    CHECK(sites["west"]["report_age_s"].is_null());
    // The strictest max_age of the hostnames reading each site and service (both default to 60 s here).
    CHECK(sites["east"]["max_age_s"] == 60);
    CHECK(services["east/192.0.2.1"]["max_age_s"] == 60);
    CHECK(services["east/192.0.2.1"]["connections"] == 900);
    CHECK(services["east/192.0.2.1"]["hostnames"].get<std::set<std::string>>() ==
          std::set<std::string>{"www.t.test.", "dual.t.test."});
    CHECK(services["west/192.0.2.2"]["connections"].is_null());
    CHECK(services["south/192.0.2.3"]["enabled"] == false);
    CHECK(services["west/2001:db8::1"]["enabled"] == true);
    for (auto& [k, s] : services) CHECK(s["answers"] == 0);
    CHECK(hosts["www.t.test."]["policy"] == nlohmann::json{"health", "least-connections", "random"});
    CHECK(hosts["www.t.test."]["services"].size() == 3);
    CHECK(hosts["dual.t.test."]["services"].size() == 2);
    CHECK(hosts["www.t.test."]["ttl"] == 30);
    CHECK(hosts["www.t.test."]["answers"] == 1);
    CHECK(hosts["www.t.test."]["fallback"] == "all");
}

TEST_CASE(
    "GET /metrics is Prometheus text: HELP and TYPE before the samples, every sample name{labels} value") {
    Api a;
    REQUIRE(a.post("/v1/sites/east/report", kGoodReport).status == 200);
    REQUIRE(a.post("/v1/sites/west/drain").status == 200);
    REQUIRE(a.post("/v1/sites/east/report", "nope").status == 400);
    REQUIRE(a.post("/v1/sites/east/drain", "", "Bearer bad-token-xx").status == 401);
    auto r = a.get("/metrics");
    REQUIRE(r.status == 200);
    CHECK(r.contentType.rfind("text/plain; version=0.0.4", 0) == 0);
    REQUIRE(!r.body.empty());
    CHECK(r.body.back() == '\n');
    static const std::regex sample(
        R"(^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*"(?:,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*")*\})? (\S+)$)");
    static const std::regex help(R"(^# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) \S.*$)");
    static const std::regex type(
        R"(^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$)");
    std::set<std::string> helped, typed, finished;
    std::string current;
    std::map<std::string, std::string> values;  // "name{labels}" -> value
    std::istringstream in(r.body);
    std::string line;
    int samples = 0;
    while (std::getline(in, line)) {
        CAPTURE(line);
        std::smatch m;
        if (line.rfind("# HELP ", 0) == 0) {
            REQUIRE(std::regex_match(line, m, help));
            CHECK(helped.insert(m[1]).second);  // one HELP per family
            continue;
        }
        if (line.rfind("# TYPE ", 0) == 0) {
            REQUIRE(std::regex_match(line, m, type));
            CHECK(typed.insert(m[1]).second);
            if (!current.empty() && current != m[1].str()) finished.insert(current);
            current = m[1];
            continue;
        }
        REQUIRE(line.rfind("#", 0) != 0);
        REQUIRE(std::regex_match(line, m, sample));
        std::string name = m[1];
        // A histogram's samples are its family name + _bucket, _sum or _count.
        for (const char* suffix : {"_bucket", "_sum", "_count"}) {
            std::string base = name.substr(0, name.size() - std::min(name.size(), strlen(suffix)));
            if (base + suffix == name && base == current && !helped.count(name)) name = base;
        }
        CHECK(helped.count(name));
        CHECK(typed.count(name));
        CHECK(name == current);             // samples follow their family's TYPE
        CHECK_FALSE(finished.count(name));  // one block per family
        char* end = nullptr;
        std::string v = m[3];
        std::strtod(v.c_str(), &end);
        CHECK(*end == '\0');
        values[name + m[2].str()] = v;
        ++samples;
    }
    CHECK(samples > 20);
    CHECK(values["gslbd_site_cpu_percent{site=\"east\"}"] == "35");
    CHECK(values["gslbd_site_enabled{site=\"west\"}"] == "0");
    CHECK(values["gslbd_site_enabled{site=\"east\"}"] == "1");
    CHECK(values["gslbd_service_connections{site=\"east\",address=\"192.0.2.1\"}"] == "900");
    CHECK(values["gslbd_service_answers_total{site=\"west\",address=\"2001:db8::1\"}"] == "0");
    CHECK(values["gslbd_control_reports_total"] == "1");
    CHECK(values["gslbd_control_unauthorized_total"] == "1");
}

TEST_CASE("the Bearer scheme is case-insensitive (RFC 7235 §2.1), with one or more spaces") {
    Api a;
    for (const std::string scheme : {"Bearer ", "bearer ", "BEARER ", "bEaReR ", "Bearer   "}) {
        CAPTURE(scheme);
        CHECK(a.post("/v1/sites/east/drain", "", scheme + a.token).status == 200);
        CHECK(a.post("/v1/sites/east/enable", "", scheme + a.token).status == 200);
    }
}

TEST_CASE("invalid UTF-8 in a path or a body: 400 or 404 with a JSON message, never 500, nothing changes") {
    Api a;
    std::string before = a.dump();
    struct Case {
        std::string method, path, body;
        int status;
        const char* says;
    };
    const Case cases[] = {
        {"POST", "/v1/sites/%FF%FE/drain", "", 404, "unknown site"},
        {"POST", "/v1/sites/\xff\xfe/drain", "", 404, "unknown site"},
        {"POST", "/v1/sites/%C3%28/report", kGoodReport, 404, "unknown site"},
        {"POST", "/v1/sites/east/services/%FF/drain", "", 404, "has no service"},
        {"POST", "/v1/sites/east/report", "{\"cpu\": \"\xff\"}", 400, "not JSON"},
        {"POST", "/v1/sites/east/report", "\xff\xfe\xfd", 400, "not JSON"},
        {"POST", "/v1/sites/east/report", "{\"\xc3\x28\": 1}", 400, "not JSON"},
        {"GET", "/v1/\xff", "", 404, "no such endpoint"},
        {"POST", "/v1/%FF", "", 404, "no such endpoint"},
    };
    for (const auto& c : cases) {
        CAPTURE(c.path);
        CAPTURE(c.body);
        ApiResponse r = c.method == "GET" ? a.get(c.path) : a.post(c.path, c.body);
        CHECK(r.status == c.status);
        CHECK(errorOf(r).find(c.says) != std::string::npos);  // errorOf parses: the body is valid JSON
    }
    CHECK(a.dump() == before);
}

TEST_CASE("a NUL byte in the path or a header is refused, and nothing changes") {
    Api a;
    std::string before = a.dump();
    using namespace std::string_literals;
    auto r = a.post("/v1/sites/east/drain", "", "Bearer "s + a.token + "\0junk"s);
    CHECK(r.status == 400);
    CHECK(errorOf(r).find("NUL") != std::string::npos);
    CHECK(a.post("/v1/sites/east/drain\0/x"s, "").status == 400);
    CHECK(a.post("/v1/sites/ea\0st/drain"s, "").status == 400);
    CHECK(a.get("/v1/status\0"s).status == 400);
    // Percent-encoded, as the new-user trial sent it: explain answered "a." with REFUSED.
    r = a.get("/v1/explain?name=a%00b.t.test.");
    CHECK(r.status == 400);
    CHECK(errorOf(r).find("%00") != std::string::npos);
    CHECK(a.post("/v1/sites/east%00x/drain", "").status == 400);
    CHECK(a.get("/v1/explain?name=a%0b.t.test.").status == 400);  // %0b: a control octet, not a name
    CHECK(a.get("/v1/explain?name=www.t.test.%20").status == 400);
    CHECK(a.get("/v1/explain?name=a%5c000b.t.test.").status == 200);  // \000: a name (outside the zones)
    CHECK(a.dump() == before);
    CHECK(a.post("/v1/sites/east/drain", "").status == 200);  // the same request without the NUL
}

TEST_CASE("the request head scanner: the end of the head, a NUL before it, fed in any pieces") {
    // What the control connection's filter runs before evhttp sees a byte (evhttp reads header
    // lines as C strings, so "Bearer TOKEN\0junk" would reach handle() as "Bearer TOKEN").
    auto scanAll = [](const std::string& bytes, size_t piece) {
        RequestHeadScanner s;
        for (size_t i = 0; i < bytes.size() && !s.done(); i += piece)
            s.feed(std::string_view(bytes).substr(i, piece));
        return s;
    };
    const std::string get = "GET /v1/status HTTP/1.1\r\nHost: x\r\n\r\n";
    const std::string lf = "GET / HTTP/1.1\nHost: x\n\nbody";
    const std::string nulHeader =
        std::string("POST /v1/sites/e/drain HTTP/1.1\r\nAuthorization: Bearer t\0x\r\n\r\n", 62);
    const std::string nulLine = std::string("GET /v1/status HTTP/1.1\0x\r\n\r\n", 29);
    const std::string nulBody = std::string("POST / HTTP/1.1\r\nContent-Length: 1\r\n\r\n\0", 39);
    for (size_t piece : {size_t(1), size_t(2), size_t(7), size_t(4096)}) {
        CAPTURE(piece);
        RequestHeadScanner s = scanAll(get, piece);
        CHECK(s.end == get.size());
        CHECK_FALSE(s.nul);
        s = scanAll(lf, piece);
        CHECK(s.end == lf.size() - 4);  // "\n\n" ends it too, as evhttp reads lines
        s = scanAll(nulHeader, piece);
        CHECK(s.nul);
        CHECK(s.end == 0);
        s = scanAll(nulLine, piece);
        CHECK(s.nul);
        s = scanAll(nulBody, piece);  // the body is not the head: JSON refuses a raw NUL there itself
        CHECK_FALSE(s.nul);
        CHECK(s.end == nulBody.size() - 1);
        // Empty lines before the request line do not end the head (a NUL after them is still seen).
        s = scanAll(std::string("\r\n\nGET / HTTP/1.1\r\nX: \0\r\n\r\n", 27), piece);
        CHECK(s.nul);
        s = scanAll("GET / HTTP/1.1\r\nX: a\r\n", piece);  // not ended yet
        CHECK_FALSE(s.done());
        CHECK(s.pos == 22);
    }
}

TEST_CASE("health_quorum in status and metrics: the etcd verdicts' state, no peer polls") {
    Api a;
    // Without the health monitor wired: no health_quorum.
    CHECK(nlohmann::json::parse(a.get("/v1/status").body)["health_quorum"].is_null());
    CHECK(a.get("/metrics").body.find("gslbd_health_quorum_own_view") == std::string::npos);

    a.api->setQuorum([] {
        QuorumStatus q;
        q.quorum = 2;
        q.members = 3;
        q.ownView = true;
        q.ownViewServices = 1;
        q.votingMembers = 2;
        q.verdictTtlSec = 4;
        return q;
    });
    auto q = nlohmann::json::parse(a.get("/v1/status").body)["health_quorum"];
    CHECK(q["quorum"] == 2);
    CHECK(q["members"] == 3);
    CHECK(q["own_view"] == true);
    CHECK(q["own_view_services"] == 1);
    CHECK(q["source"] == "etcd");
    CHECK(q["voting_members"] == 2);
    CHECK(q["verdict_ttl_s"] == 4);
    CHECK_FALSE(q.contains("peers"));
    std::string m = a.get("/metrics").body;
    CHECK(m.find("gslbd_health_quorum_own_view 1\n") != std::string::npos);
    CHECK(m.find("gslbd_cluster_peer_up") == std::string::npos);
    CHECK(m.find("gslbd_cluster_forwards_total") == std::string::npos);
    CHECK(m.find("gslbd_cluster_admin_sync") == std::string::npos);
}

TEST_CASE("api: the errors evhttp makes itself get a JSON body that says what was wrong") {
    auto err = [](int status, std::string_view head, uint64_t declared = 0) {
        ApiResponse r = ownErrorResponse(status, head, declared, kMaxRequestBody);
        CHECK(r.contentType == "application/json");
        return std::make_pair(r.status, nlohmann::json::parse(r.body)["error"].get<std::string>());
    };
    CHECK(err(400, "GARBAGE\r\n\r\n") ==
          std::make_pair(
              400, std::string("the request line \"GARBAGE\" is not METHOD PATH HTTP/1.1 (RFC 9112 §3)")));
    // Empty lines before the request line are skipped (RFC 9112 §2.2), as evhttp does.
    CHECK(err(400, "\r\nGET / HTTP/9\r\n\r\n").second ==
          "HTTP version \"HTTP/9\": the control API speaks HTTP/1.1 (and 1.0)");
    auto foo = ownErrorResponse(501, "FOO / HTTP/1.1\r\nHost: x\r\n\r\n", 0, kMaxRequestBody);
    CHECK(foo.status == 501);
    CHECK(foo.allow == "GET, HEAD, POST");
    CHECK(err(400, "POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n").second ==
          "Content-Length \"-1\" is not a number of octets (RFC 9112 §6.2)");
    CHECK(err(413, "POST / HTTP/1.1\ncontent-length:  2000000 \n\n") ==
          std::make_pair(413, std::string("the body (Content-Length 2000000) is over the 1048576 octets the "
                                          "control API reads")));
    // evhttp says 413 for a chunked body it cannot read as well as for one over the limit.
    const char* chunked = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
    CHECK(err(413, chunked, 2).first == 400);
    CHECK(err(413, chunked, kMaxRequestBody + 1) ==
          std::make_pair(413,
                         std::string("the chunked body is over the 1048576 octets the control API reads")));
    CHECK(err(400, "GET / HTTP/1.1\r\nNoColon\r\n\r\n").second ==
          "the header line \"NoColon\" is not NAME: VALUE (RFC 9112 §5)");
    CHECK(err(417, "GET / HTTP/1.1\r\nExpect: foo\r\n\r\n").second ==
          "Expect \"foo\": only 100-continue is understood (RFC 9110 §10.1.1)");
    // What a client sent is shown up to 80 octets.
    CHECK(err(400, std::string(200, 'x') + "\r\n\r\n").second.find(std::string(80, 'x') + "…\"") !=
          std::string::npos);
}

TEST_CASE("api: a chunked body's declared size, piece by piece, as evhttp reads the sizes") {
    const std::string body = "5\r\nhello\r\n\r\n1a\r\n" + std::string(26, 'a') + "\r\n0\r\n\r\n";
    for (size_t piece : {size_t(1), size_t(3), body.size()}) {
        ChunkedBodyScanner s;
        for (size_t i = 0; i < body.size(); i += piece) s.feed(std::string_view(body).substr(i, piece));
        CHECK(s.declared == 5 + 26);
    }
    ChunkedBodyScanner big;
    big.feed("200000\r\naaaa");
    CHECK(big.declared == 0x200000);
    ChunkedBodyScanner bad;
    bad.feed("ZZ\r\n");
    CHECK(bad.declared == 0);
    ChunkedBodyScanner huge;
    huge.feed("ffffffffffffffffffff\r\n");  // past 64 bits: saturates
    CHECK(huge.declared == UINT64_MAX);
}

TEST_CASE("readToken: a token others may read or write is refused with the chmod to run; the old one stays") {
    Api a;
    std::string dir = st::newDir();
    std::string error;
    const std::string path = st::writeFile(dir, "open.token", "another-token\n");
    for (unsigned mode : {0644u, 0604u, 0777u, 0620u, 0602u}) {
        CAPTURE(mode);
        REQUIRE(chmod(path.c_str(), mode) == 0);
        CHECK_FALSE(a.api->readToken(path, error));
        CHECK(error.rfind(path + ": the control token file is mode ", 0) == 0);
        CHECK(error.find("run chmod 600 " + path + " (or 640 with gslbd's group)") != std::string::npos);
    }
    chmod(path.c_str(), 0777);
    CHECK_FALSE(a.api->readToken(path, error));
    CHECK(error ==
          path +
              ": the control token file is mode 0777, which lets any user of this host read it and any "
              "user write it and its group write it: whoever holds the token can drain every site and "
              "reload; run chmod 600 " +
              path + " (or 640 with gslbd's group)");
    CHECK(a.post("/v1/sites/east/drain", "", "Bearer another-token").status == 401);  // the old token stays
    for (unsigned mode : {0600u, 0640u, 0400u, 0440u}) {
        CAPTURE(mode);
        REQUIRE(chmod(path.c_str(), mode) == 0);
        CHECK_MESSAGE(a.api->readToken(path, error), error);
    }
    CHECK(tokenModeProblem("t", 0100600).empty());  // st_mode with the file type bits
}

TEST_CASE("readToken: a file that cannot be read says why") {
    std::string error, token;
    CHECK_FALSE(loadControlToken("/nonexistent-dir/control.token", token, error));
    CHECK(error ==
          "/nonexistent-dir/control.token: cannot read the control token file: No such file or directory "
          "(a relative token_file is read from the config file's directory)");
}
