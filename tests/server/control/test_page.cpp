// The status page (GET /, /ui/*), the answer history (GET /v1/history) and the /metrics families of issue
// 17 (per-hostname answers, fallbacks, the check-duration histogram), through ControlApi::handle.
#include <doctest/doctest.h>
#include <event2/event.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "server/control/api.hpp"
#include "server/control/api_page.hpp"
#include "server/state/history.hpp"
#include "tests/server/helpers.hpp"
#include "zones/answer.hpp"

using namespace gslb;
using namespace gslb::server;

namespace {

const std::string kConfig =
    st::baseConfig("[hostname.\"www.t.test.\"]\npolicy = [\"health\", \"random\"]\nmax_age = 30\n" +
                   st::threeServices("www.t.test.") +
                   "[hostname.\"dual.t.test.\"]\nfallback = \"none\"\n"
                   "[[hostname.\"dual.t.test.\".service]]\naddress = \"192.0.2.1\"\nsite = \"east\"\n"
                   "[[hostname.\"dual.t.test.\".service]]\naddress = \"2001:db8::1\"\nsite = \"west\"\n");

struct Api {
    event_base* base = event_base_new();
    std::unique_ptr<Shared> shared = std::make_unique<Shared>();
    std::shared_ptr<Snapshot> snap;
    std::string token = "page-token-0123";
    std::unique_ptr<ControlApi> api;
    Selector sel{0, 99};
    Api() {
        snap = st::snapshot(kConfig);
        shared->holder.publish(snap);
        sel.rebind(&snap->gslb);
        api = std::make_unique<ControlApi>(
            base, *shared, [](std::string&) { return true; },
            [this](uint32_t slot) {
                // east/192.0.2.1 is checked: two fast runs and one timeout.
                CheckStatus c;
                if (slot != *snap->gslb.table->findService("east", "192.0.2.1")) return c;
                c.checked = true;
                c.type = "http";
                c.target = "127.0.0.1:80";
                c.state = "down";
                c.lastChangeReason = "down: http 503 after 3 failures";
                c.durationBuckets[1] = 2;   // <= 0.001 s
                c.durationBuckets[11] = 1;  // <= 2.5 s
                c.durationCount = 4;        // one more above 10 s
                c.durationSumSec = 14.5;
                return c;
            });
        std::string tf = st::writeSecret(st::newDir(), "control.token", token);
        std::string error;
        REQUIRE_MESSAGE(api->readToken(tf, error), error);
    }
    ~Api() {
        api.reset();
        event_base_free(base);
    }
    ApiResponse get(const std::string& path) { return api->handle("GET", path, "", ""); }
    ApiResponse post(const std::string& path) { return api->handle("POST", path, "Bearer " + token, ""); }
    void ask(const std::string& name, uint16_t type = 1) {
        auto q = st::makeQuery(name, type);
        std::vector<uint8_t> out(4096);
        auto r = zones::answer(snap->db, snap->answer, q, false, out, &sel);
        REQUIRE(r.action == zones::Action::Send);
    }
    std::map<std::string, std::string> metrics() {
        auto r = get("/metrics");
        REQUIRE(r.status == 200);
        std::map<std::string, std::string> v;
        static const std::regex sample(R"(^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{.*\})?) (\S+)$)");
        std::istringstream in(r.body);
        std::string line;
        while (std::getline(in, line)) {
            std::smatch m;
            if (line[0] != '#' && std::regex_match(line, m, sample)) v[m[1]] = m[2];
        }
        return v;
    }
};

size_t count(const std::string& text, const std::string& needle) {
    size_t n = 0;
    for (size_t p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
    return n;
}

}  // namespace

TEST_CASE(
    "GET / is the status page: sites and services rendered on the server, the script and style linked") {
    Api a;
    REQUIRE(a.post("/v1/sites/west/drain").status == 200);
    auto r = a.get("/");
    REQUIRE(r.status == 200);
    CHECK(r.contentType == "text/html; charset=utf-8");
    const std::string& h = r.body;
    CHECK(h.rfind("<!DOCTYPE html>", 0) == 0);
    CHECK(h.find("@@") == std::string::npos);  // every placeholder filled
    CHECK(h.find("<script src=\"/ui/page.js\"></script>") != std::string::npos);
    CHECK(h.find("href=\"/ui/page.css\"") != std::string::npos);
    CHECK(h.find("<noscript>") != std::string::npos);
    CHECK(h.find("http://") == std::string::npos);  // nothing from elsewhere: works offline
    CHECK(h.find("https://") == std::string::npos);
    for (const char* site : {"east", "west", "south"})
        CHECK(h.find(std::string("<tr data-site=\"") + site + "\"") != std::string::npos);
    // west is drained, the others are not.
    auto west = h.find("<tr data-site=\"west\"");
    auto westEnd = h.find("</tr>", west);
    CHECK(h.substr(west, westEnd - west).find("pill drained") != std::string::npos);
    auto east = h.find("<tr data-site=\"east\"");
    CHECK(h.substr(east, h.find("</tr>", east) - east).find("pill enabled") != std::string::npos);
    CHECK(count(h, "<tr data-service=") == 4);
    // The reason of the last change is beside the state.
    CHECK(h.find("down: http 503 after 3 failures") != std::string::npos);
    // The drain is among the events.
    CHECK(h.find("drained by the control API") != std::string::npos);
    CHECK(h.find("<b>t.test.</b> serial 2024010101") != std::string::npos);
    // No buttons without JavaScript and a token.
    CHECK(h.find("data-op=") == std::string::npos);
}

TEST_CASE("GET /ui/page.js and /ui/page.css are the embedded files; other paths under /ui are 404") {
    Api a;
    auto js = a.get("/ui/page.js");
    CHECK(js.status == 200);
    CHECK(js.contentType == "application/javascript; charset=utf-8");
    CHECK(js.body.find("/v1/status") != std::string::npos);
    CHECK(js.body.find("sessionStorage") != std::string::npos);
    CHECK(js.body.find("Bearer") != std::string::npos);
    auto css = a.get("/ui/page.css");
    CHECK(css.status == 200);
    CHECK(css.contentType == "text/css; charset=utf-8");
    CHECK(css.body.find(".pill") != std::string::npos);
    CHECK(a.get("/ui/nope.js").status == 404);
    CHECK(a.get("/ui/../metrics").status == 404);
    CHECK(a.post("/").status == 405);
}

TEST_CASE("renderPage escapes what it shows and marks stale metrics") {
    nlohmann::json st = {
        {"zones", {{{"name", "x.test."}, {"serial", 7}}}},
        {"sites",
         {{{"name", "<east>"},
           {"enabled", true},
           {"up", true},
           {"preference", 128},
           {"cpu", 35},
           {"sessions_used", 50},
           {"sessions_max", 100},
           {"load_factor", nullptr},
           {"report_age_s", 45.0}},
          {{"name", "west"},
           {"enabled", true},
           {"up", false},
           {"preference", 128},
           {"cpu", nullptr},
           {"sessions_used", nullptr},
           {"sessions_max", nullptr},
           {"load_factor", nullptr},
           {"report_age_s", 10.0}}}},
        {"services",
         {{{"site", "<east>"},
           {"address", "192.0.2.1"},
           {"hostnames", {"w.x.test."}},
           {"enabled", true},
           {"health", "up"},
           {"connections", 5},
           {"connections_age_s", 2.0},
           {"answers", 3},
           {"flashback", {{"l4_ms", 1.5}, {"l7_ms", nullptr}}},
           {"check", nullptr}}}},
        {"hostnames",
         {{{"name", "w.x.test."},
           {"max_age_s", 30},
           {"services", {{{"site", "<east>"}, {"address", "192.0.2.1"}}}}}}},
        {"sources", {{{"name", "east-lb"}, {"state", "down"}, {"last_error", "connect: refused"}}}}};
    std::vector<Event> ev = {{1, 1795426200123, log::Level::Warn, "scrape", "east-lb", "failed: <timeout>"}};
    std::string h = renderPage(st, ev, 1795426200123 + 1000);
    CHECK(h.find("<east>") == std::string::npos);
    CHECK(h.find("&lt;east&gt;") != std::string::npos);
    CHECK(h.find("failed: &lt;timeout&gt;") != std::string::npos);
    CHECK(h.find("2026-11-23 09:30:00.123") != std::string::npos);
    // east's report (45 s) is older than the 30 s max_age of its only hostname; west has no hostname
    CHECK(count(h, "class=\"stale\"") == 1);
    CHECK(h.find("not checked") != std::string::npos);
    // Sources: shown, with their fields as columns.
    CHECK(h.find("<tr data-source=\"east-lb\">") != std::string::npos);
    CHECK(h.find("connect: refused") != std::string::npos);
    CHECK(h.find("id=\"sources-card\" hidden") == std::string::npos);
    CHECK(h.find("1.50 ms") != std::string::npos);
    st.erase("sources");
    CHECK(renderPage(st, {}, 0).find("id=\"sources-card\" hidden") != std::string::npos);
    CHECK(htmlEscape("a&b\"'<>") == "a&amp;b&quot;&#39;&lt;&gt;");
}

TEST_CASE("renderPage: health_quorum, its etcd voters, and the services the quorum overrules") {
    auto check = [](const char* own, const char* state, int down, int voters) {
        return nlohmann::json{
            {"type", "http"}, {"target", "127.0.0.1:1"},
            {"state", state}, {"own_state", own},
            {"flaps", 0},     {"quorum", {{"voters", voters}, {"down_votes", down}, {"own_view", false}}}};
    };
    auto service = [](const char* address, nlohmann::json c) {
        return nlohmann::json{
            {"site", "east"},  {"address", address},   {"hostnames", nlohmann::json::array()},
            {"enabled", true}, {"health", c["state"]}, {"check", c}};
    };
    nlohmann::json st = {
        {"sites", {{{"name", "east"}, {"enabled", true}, {"up", true}}}},
        {"services",
         {service("192.0.2.1", check("down", "up", 1, 2)), service("192.0.2.2", check("up", "up", 0, 2))}},
        {"health_quorum",
         {{"quorum", 2},
          {"members", 3},
          {"own_view", false},
          {"own_view_services", 0},
          {"own_view_since", nullptr},
          {"source", "etcd"},
          {"voting_members", 2},
          {"verdict_ttl_s", 4}}}};
    std::string h = renderPage(st, {}, 0);
    CHECK(h.find("id=\"quorum-card\" hidden") == std::string::npos);
    CHECK(h.find("quorum 2 of 3 members; 2 with live verdicts in etcd (lease TTL 4 s)") != std::string::npos);
    CHECK(h.find("every checked service is decided by the quorum") != std::string::npos);
    CHECK(h.find("data-peer=") == std::string::npos);  // no peer polls any more
    // Only the service whose effective verdict is not its own checks'.
    auto differs = h.find("<tr data-differs=\"east/192.0.2.1\">");
    REQUIRE(differs != std::string::npos);
    CHECK(h.substr(differs, 300).find("1 of 2 votes down, quorum 2") != std::string::npos);
    CHECK(h.find("data-differs=\"east/192.0.2.2\"") == std::string::npos);
    // Decided on the own view: said in the summary.
    st["health_quorum"]["own_view"] = true;
    st["health_quorum"]["own_view_services"] = 2;
    st["health_quorum"]["own_view_since"] = "2026-12-01T21:00:00.000Z";
    CHECK(renderPage(st, {}, 0).find("2 service(s) decided on this member&#39;s own checks alone") !=
          std::string::npos);
    // Without health_quorum the card is hidden.
    st["health_quorum"] = nullptr;
    CHECK(renderPage(st, {}, 0).find("id=\"quorum-card\" hidden") != std::string::npos);
}

TEST_CASE("GET /v1/history: the control loop's samples as JSON, a series only for services with answers") {
    // The window itself (gaps, wrap-around, reloads) is test_history.cpp's.
    Api a;
    a.api->sampleHistory(1000);  // baseline
    for (int i = 0; i < 10; ++i) a.ask("www.t.test.");
    a.api->sampleHistory(3000);
    a.ask("dual.t.test.", 28);
    a.api->sampleHistory(5000);
    auto r = a.get("/v1/history");
    REQUIRE(r.status == 200);
    auto j = nlohmann::json::parse(r.body);
    CHECK(j["interval_s"] == AnswerHistory::kDefaultIntervalSec);
    CHECK(j["capacity"] == AnswerHistory::kDefaultCapacity);
    CHECK(j["samples"] == nlohmann::json{1000, 3000, 5000});
    uint64_t www = 0;
    std::set<std::string> keys;
    for (const auto& s : j["series"]) {
        CHECK(s.size() == 4);  // hostname, site, address, answers
        REQUIRE(s["answers"].size() == 3);
        CHECK(s["answers"][0] == 0);
        uint64_t sum = 0;
        for (const auto& v : s["answers"]) sum += v.get<uint64_t>();
        CHECK(sum > 0);  // all zeros is not sent
        keys.insert(s["hostname"].get<std::string>() + " " + s["site"].get<std::string>() + " " +
                    s["address"].get<std::string>());
        if (s["hostname"] == "www.t.test.") www += s["answers"][1].get<uint64_t>();
    }
    CHECK(www == 10);
    CHECK(keys.count("dual.t.test. west 2001:db8::1") == 1);
    CHECK(keys.count("dual.t.test. east 192.0.2.1") == 0);  // never answered
    CHECK(j["series"].size() == keys.size());
    CHECK(a.get("/v1/history").body == r.body);  // reading does not change it
    CHECK(r.body == j.dump() + "\n");            // written by hand, as nlohmann::json prints it
}

TEST_CASE("/metrics: answers per hostname by service and by site, fallbacks, the check-duration histogram") {
    Api a;
    for (int i = 0; i < 12; ++i) a.ask("www.t.test.");
    a.ask("dual.t.test.");
    REQUIRE(a.post("/v1/sites/west/drain").status == 200);
    REQUIRE(a.post("/v1/sites/east/drain").status == 200);
    a.ask("dual.t.test.", 28);  // west drained: nothing left for AAAA, fallback none, every candidate drained
    auto m = a.metrics();
    uint64_t www = 0;
    for (const char* site : {"east", "west", "south"}) {
        std::string addr = site == std::string("east")   ? "192.0.2.1"
                           : site == std::string("west") ? "192.0.2.2"
                                                         : "192.0.2.3";
        std::string svc =
            fmt::format("gslbd_hostname_answers_total{{hostname=\"www.t.test.\",site=\"{}\",address=\"{}\"}}",
                        site, addr);
        std::string bySite =
            fmt::format("gslbd_hostname_site_answers_total{{hostname=\"www.t.test.\",site=\"{}\"}}", site);
        REQUIRE(m.count(svc));
        CHECK(m[svc] == m[bySite]);  // one service per site here
        www += std::stoull(m[svc]);
    }
    CHECK(www == 12);
    CHECK(m["gslbd_hostname_site_answers_total{hostname=\"dual.t.test.\",site=\"east\"}"] == "1");
    CHECK(m["gslbd_hostname_fallbacks_total{hostname=\"dual.t.test.\",fallback=\"none\"}"] == "0");
    CHECK(m["gslbd_hostname_fallbacks_total{hostname=\"dual.t.test.\",fallback=\"drained\"}"] == "1");
    CHECK(m["gslbd_hostname_fallbacks_total{hostname=\"www.t.test.\",fallback=\"drained\"}"] == "0");
    CHECK(m["gslbd_hostname_fallbacks_total{hostname=\"www.t.test.\",fallback=\"all\"}"] == "0");
    // The same counts per hostname in /v1/status (fallbacks in /metrics and in status).
    auto st = nlohmann::json::parse(a.get("/v1/status").body);
    std::map<std::string, uint64_t> taken;
    for (const auto& hj : st["hostnames"]) taken[hj["name"]] = hj["fallbacks_taken"].get<uint64_t>();
    CHECK(taken["dual.t.test."] == 1);
    for (const auto& hj : st["hostnames"])
        if (hj["name"] == "dual.t.test.") {
            CHECK(hj["fallbacks_drained"] == 1);
            CHECK(hj["nothing_undrained"] == nlohmann::json::array({"A", "AAAA"}));  // east and west drained
        } else if (hj["name"] == "www.t.test.") {
            CHECK(hj["nothing_undrained"].empty());  // south still answers
        }
    CHECK(taken["www.t.test."] == 0);
    // The histogram: cumulative buckets, +Inf = count, only for checked services.
    std::string l = "site=\"east\",address=\"192.0.2.1\"";
    CHECK(m["gslbd_check_duration_seconds_bucket{" + l + ",le=\"0.0005\"}"] == "0");
    CHECK(m["gslbd_check_duration_seconds_bucket{" + l + ",le=\"0.001\"}"] == "2");
    CHECK(m["gslbd_check_duration_seconds_bucket{" + l + ",le=\"1\"}"] == "2");
    CHECK(m["gslbd_check_duration_seconds_bucket{" + l + ",le=\"2.5\"}"] == "3");
    CHECK(m["gslbd_check_duration_seconds_bucket{" + l + ",le=\"10\"}"] == "3");
    CHECK(m["gslbd_check_duration_seconds_bucket{" + l + ",le=\"+Inf\"}"] == "4");
    CHECK(m["gslbd_check_duration_seconds_count{" + l + "}"] == "4");
    CHECK(m["gslbd_check_duration_seconds_sum{" + l + "}"] == "14.5");
    CHECK_FALSE(m.count("gslbd_check_duration_seconds_count{site=\"west\",address=\"192.0.2.2\"}"));
}

TEST_CASE("GET /?name=…: the explain form filled in and explain's answer rendered on the server, no token") {
    Api a;
    auto plain = a.get("/");
    REQUIRE(plain.status == 200);
    // The form is there from the start (explain exists), a plain GET form to the page itself.
    CHECK(
        plain.body.find("<form id=\"explain-form\" class=\"explain\" action=\"/#explain\" method=\"get\">") !=
        std::string::npos);
    CHECK(plain.body.find("<option value=\"www.t.test.\">") != std::string::npos);  // hostnames to pick
    CHECK(plain.body.find("data-explained=\"\"></pre>") != std::string::npos);      // nothing asked yet

    auto r = a.get("/?name=www.t.test.&client=192.0.2.77");
    REQUIRE(r.status == 200);
    const std::string& h = r.body;
    CHECK(h.find("@@") == std::string::npos);
    CHECK(h.find("value=\"www.t.test.\" required") != std::string::npos);
    CHECK(h.find("value=\"192.0.2.77\"") != std::string::npos);
    CHECK(h.find("<option selected>A</option>") != std::string::npos);
    auto pre = h.find("data-explained=\"server\">");
    REQUIRE(pre != std::string::npos);
    std::string out = h.substr(pre, h.find("</pre>", pre) - pre);
    CHECK(out.find("query    www.t.test. A from 192.0.2.77") != std::string::npos);
    CHECK(out.find("1. health") != std::string::npos);
    CHECK(out.find("answer") != std::string::npos);
    CHECK(h.find("href=\"/v1/explain?name=www.t.test.&amp;type=A&amp;client=192.0.2.77\"") !=
          std::string::npos);

    // A refusal is shown as one, and what the form echoes is escaped.
    auto bad = a.get("/?name=www.t.test.&client=%3Cb%3E");
    REQUIRE(bad.status == 200);
    CHECK(bad.body.find("data-explained=\"server-error\">error: ") != std::string::npos);
    CHECK(bad.body.find("value=\"<b>\"") == std::string::npos);
    CHECK(bad.body.find("value=\"&lt;b&gt;\"") != std::string::npos);
    // AAAA stays selected.
    CHECK(a.get("/?name=dual.t.test.&type=AAAA").body.find("<option selected>AAAA</option>") !=
          std::string::npos);
}
