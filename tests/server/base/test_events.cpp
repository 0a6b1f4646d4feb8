// The event ring (server/base/events.hpp) and GET /v1/events: bounded, oldest dropped first, `since` for
// pollers, `limit` keeps the newest, drains and enables recorded once per change.
#include <doctest/doctest.h>
#include <event2/event.h>

#include <nlohmann/json.hpp>

#include "server/control/api.hpp"
#include "server/base/events.hpp"
#include "tests/server/helpers.hpp"

using namespace gslb;
using namespace gslb::server;

TEST_CASE("EventLog: sequence numbers, since, limit, and a full ring drops the oldest") {
    EventLog ring(3);
    CHECK(ring.lastSeq() == 0);
    CHECK(ring.since(0).empty());
    CHECK(ring.record(log::Level::Warn, "health", "svc a", "down: timeout", 1000) == 1);
    CHECK(ring.record(log::Level::Info, "admin", "site east", "drained by the control API", 2000) == 2);
    auto all = ring.since(0);
    REQUIRE(all.size() == 2);
    CHECK(all[0].seq == 1);
    CHECK(all[0].unixMs == 1000);
    CHECK(all[0].level == log::Level::Warn);
    CHECK(all[0].kind == "health");
    CHECK(all[0].subject == "svc a");
    CHECK(all[0].message == "down: timeout");
    CHECK(all[1].kind == "admin");
    CHECK(ring.since(1).size() == 1);
    CHECK(ring.since(1)[0].seq == 2);
    CHECK(ring.since(2).empty());
    CHECK(ring.since(99).empty());

    for (int i = 0; i < 3; ++i) ring.record(log::Level::Info, "reload", "x.toml", "ok", 3000 + i);
    CHECK(ring.lastSeq() == 5);
    CHECK(ring.dropped() == 2);
    auto kept = ring.since(0);
    REQUIRE(kept.size() == 3);
    CHECK(kept.front().seq == 3);
    CHECK(kept.back().seq == 5);
    CHECK(ring.since(1).size() == 3);  // a poller that fell behind gets what is left
    CHECK(ring.since(4).size() == 1);
    auto newest = ring.since(0, 2);
    REQUIRE(newest.size() == 2);
    CHECK(newest[0].seq == 4);
    CHECK(newest[1].seq == 5);

    ring.clear();
    CHECK(ring.since(0).empty());
    CHECK(ring.record(log::Level::Info, "reload", "x.toml", "ok") == 6);  // the sequence goes on
    CHECK(ring.since(0)[0].unixMs > 1700000000000);                       // 0 stamps it now (wall clock)
}

TEST_CASE("EventLog: a zero capacity still keeps the newest event") {
    EventLog ring(0);
    ring.record(log::Level::Info, "a", "s", "m1");
    ring.record(log::Level::Info, "a", "s", "m2");
    REQUIRE(ring.since(0).size() == 1);
    CHECK(ring.since(0)[0].message == "m2");
}

namespace {

const std::string kConfig = st::baseConfig("[hostname.\"www.t.test.\"]\n" + st::threeServices("www.t.test."));

struct Api {
    event_base* base = event_base_new();
    std::unique_ptr<Shared> shared = std::make_unique<Shared>();
    std::shared_ptr<Snapshot> snap;
    std::string token = "events-token-0123";
    std::unique_ptr<ControlApi> api;
    Api() {
        snap = st::snapshot(kConfig);
        shared->holder.publish(snap);
        api = std::make_unique<ControlApi>(
            base, *shared, [](std::string&) { return true; }, nullptr);
        std::string tf = st::writeSecret(st::newDir(), "control.token", token);
        std::string error;
        REQUIRE_MESSAGE(api->readToken(tf, error), error);
    }
    ~Api() {
        api.reset();
        event_base_free(base);
    }
    ApiResponse post(const std::string& path) { return api->handle("POST", path, "Bearer " + token, ""); }
    nlohmann::json get(const std::string& path, int want = 200) {
        auto r = api->handle("GET", path, "", "");
        CHECK(r.status == want);
        return nlohmann::json::parse(r.body);
    }
};

}  // namespace

TEST_CASE("GET /v1/events: drains and enables, once per change, with since and limit") {
    Api a;
    uint64_t seq0 = eventLog().lastSeq();
    REQUIRE(a.post("/v1/sites/east/drain").status == 200);
    REQUIRE(a.post("/v1/sites/east/drain").status == 200);  // no change: no event
    REQUIRE(a.post("/v1/sites/west/services/192.0.2.2/drain").status == 200);
    REQUIRE(a.post("/v1/sites/east/enable").status == 200);
    REQUIRE(a.post("/v1/sites/nowhere/drain").status == 404);  // refused: no event

    auto j = a.get("/v1/events?since=" + std::to_string(seq0));
    REQUIRE(j["events"].size() == 3);
    CHECK(j["events"][0]["kind"] == "admin");
    CHECK(j["events"][0]["subject"] == "site east");
    CHECK(j["events"][0]["message"] == "drained by the control API");
    CHECK(j["events"][0]["level"] == "info");
    CHECK(j["events"][0]["seq"] == seq0 + 1);
    CHECK(j["events"][1]["subject"] == "192.0.2.2 (west)");
    CHECK(j["events"][1]["message"] == "drained by the control API");
    CHECK(j["events"][2]["subject"] == "site east");
    CHECK(j["events"][2]["message"] == "enabled by the control API");
    std::string time = j["events"][0]["time"];
    CHECK(time.size() == 24);  // 2026-12-01T09:30:00.123Z
    CHECK(time.back() == 'Z');
    CHECK(time[10] == 'T');
    CHECK(j["events"][0]["unix_ms"].get<int64_t>() > 1700000000000);
    CHECK(j["last_seq"] == seq0 + 3);
    CHECK(j["capacity"] == EventLog::kDefaultCapacity);
    CHECK(j["dropped"].is_number());

    auto newest = a.get("/v1/events?since=" + std::to_string(seq0) + "&limit=1");
    REQUIRE(newest["events"].size() == 1);
    CHECK(newest["events"][0]["message"] == "enabled by the control API");
    CHECK(a.get("/v1/events?since=" + std::to_string(seq0 + 3))["events"].empty());
    CHECK(a.get("/v1/events")["events"].size() >= 3);  // no `since`: everything the ring holds
}

TEST_CASE("GET /v1/events refuses bad parameters and other methods") {
    Api a;
    for (const char* q : {"?since=x", "?since=-1", "?limit=0", "?limit=", "?bogus=1", "?since=1e3"}) {
        CAPTURE(q);
        auto j = a.get(std::string("/v1/events") + q, 400);
        CHECK(j.contains("error"));
    }
    CHECK(a.api->handle("POST", "/v1/events", "Bearer " + a.token, "").status == 405);
}

TEST_CASE("isoTime: UTC with milliseconds") {
    CHECK(isoTime(0) == "1970-01-01T00:00:00.000Z");
    CHECK(isoTime(1795426200123) == "2026-11-23T09:30:00.123Z");
}
