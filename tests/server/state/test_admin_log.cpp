// server/state/admin_log: who took each drain and enable, the admin-state.json round trip of the changes
// and their JSON form, and ControlApi's ?scope=member.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "tests/server/helpers.hpp"
#include "server/control/api.hpp"
#include "server/state/admin_log.hpp"
#include "server/state/admin_state.hpp"

using namespace gslb;
using namespace gslb::server;
using namespace gslb::server::cluster;

namespace {

constexpr int64_t kNow = 1'764'624'000'000;  // 2025-12-01, Unix ms
const std::string kA = "http://192.0.2.53:8053";

}  // namespace

TEST_CASE("a change's JSON and back: every field kept, a mistyped or out-of-range one refused") {
    auto j = changeJson({"west", "192.0.2.20"}, AdminChange{false, 42, kA, true});
    CHECK(j == nlohmann::json::parse(
                   R"({"site": "west", "address": "192.0.2.20", "enabled": false, "time_ms": 42,
                       "origin": "http://192.0.2.53:8053", "local": true})"));
    auto back = changeFromJson(j);
    REQUIRE(back);
    CHECK(back->key == AdminKey{"west", "192.0.2.20"});
    CHECK_FALSE(back->change.enabled);
    CHECK(back->change.timeMs == 42);
    CHECK(back->change.origin == kA);
    CHECK(back->change.local);
    CHECK(changeJson({"east", ""}, AdminChange{}).count("address") == 0);
    for (const char* bad :
         {R"({"site": "", "enabled": false, "time_ms": 1, "origin": ""})",
          R"({"site": "x", "enabled": "no", "time_ms": 1, "origin": ""})",
          R"({"site": "x", "enabled": false, "time_ms": -1, "origin": ""})",
          R"({"site": "x", "enabled": false, "time_ms": 1e300, "origin": ""})",
          R"({"site": "x", "enabled": false, "origin": ""})",
          R"({"site": "x", "enabled": false, "time_ms": 1, "origin": 7})",
          R"({"site": "x", "address": 7, "enabled": false, "time_ms": 1, "origin": ""})",
          R"({"site": "x", "enabled": false, "time_ms": 1, "origin": "", "local": "yes"})", "7", "null"})
        CHECK_FALSE(changeFromJson(nlohmann::json::parse(bad)));
}

TEST_CASE("a later record replaces the key's change, whatever its time") {
    AdminLog log;
    log.record({"east", ""}, false, kNow, kA, false);
    // A wall clock that stepped back: the later command still holds (no clock of ours orders anything).
    log.record({"east", ""}, true, kNow - 5000, kA, false);
    REQUIRE(log.find({"east", ""}));
    CHECK(log.find({"east", ""})->enabled);
    CHECK(log.find({"east", ""})->timeMs == kNow - 5000);
    log.retain([](const AdminKey& k) { return k.site != "east"; });
    CHECK_FALSE(log.find({"east", ""}));
}

TEST_CASE("admin-state.json keeps who took each change across a restart, and reads a file without it") {
    std::string dir = st::newDir();
    std::shared_ptr<metrics::StateTable> t, fresh, old;
    std::string error;
    REQUIRE(metrics::StateTable::build({"east", "west"}, {{"east", "192.0.2.10"}}, t, error));
    AdminLog log;
    t->setSiteEnabled(*t->findSite("east"), false);
    log.record({"east", ""}, false, kNow, kA, false);
    log.record({"west", ""}, true, kNow, kA, false);   // an enable: kept too, with its time
    log.record({"gone", ""}, false, kNow, kA, false);  // not in the table: not written
    REQUIRE(service::saveAdminState(*t, dir, error, &log));

    REQUIRE(metrics::StateTable::build({"east", "west"}, {{"east", "192.0.2.10"}}, fresh, error));
    AdminLog back;
    service::AdminStateLoad out;
    REQUIRE(service::loadAdminState(*fresh, dir, out, error, &back));
    CHECK(out.applied == 1);
    CHECK_FALSE(fresh->siteEnabled(*fresh->findSite("east")));
    REQUIRE(back.find({"west", ""}));
    CHECK(back.find({"west", ""})->timeMs == kNow);  // the wall clock it was taken at, nothing added
    CHECK(back.find({"east", ""})->origin == kA);
    CHECK_FALSE(back.find({"gone", ""}));

    // A file of the first version (no "changes"): its drains come back with time 0, this member's alone.
    st::writeFile(dir, "admin-state.json",
                  R"({"version": 1, "drained_sites": ["west"], "drained_services": []})");
    REQUIRE(metrics::StateTable::build({"east", "west"}, {}, old, error));
    AdminLog oldLog;
    REQUIRE(service::loadAdminState(*old, dir, out, error, &oldLog));
    CHECK_FALSE(old->siteEnabled(*old->findSite("west")));
    REQUIRE(oldLog.find({"west", ""}));
    CHECK(oldLog.find({"west", ""})->timeMs == 0);
    CHECK(oldLog.find({"west", ""})->local);  // drains were per member then: never written to etcd

    // A change that is not one: the file is refused, as any broken file.
    st::writeFile(dir, "admin-state.json", R"({"version": 1, "drained_sites": [], "drained_services": [],
        "changes": [{"site": "east"}]})");
    CHECK_FALSE(service::loadAdminState(*old, dir, out, error, &oldLog));
    CHECK(error.find("admin-state.json") != std::string::npos);
}

// A ControlApi over the three-service snapshot, with a token, counting how often it asked to persist.
struct AdminApi {
    event_base* base = event_base_new();
    std::unique_ptr<Shared> shared = std::make_unique<Shared>();
    std::shared_ptr<const Snapshot> snap = st::snapshot(st::baseConfig(st::threeServices("www.t.test.")));
    std::unique_ptr<ControlApi> api;
    int saved = 0;

    AdminApi() {
        shared->holder.publish(snap);
        api = std::make_unique<ControlApi>(base, *shared, nullptr, nullptr);
        std::string error;
        REQUIRE(api->readToken(st::writeSecret(st::newDir(), "token", "tok-0123456789"), error));
        api->setAdminChanged([this] { ++saved; });
    }
    ~AdminApi() {
        api.reset();
        event_base_free(base);
    }
    ApiResponse post(const std::string& p) { return api->handle("POST", p, "Bearer tok-0123456789", ""); }
};

TEST_CASE("?scope=member is recorded as local; no peer endpoint is left (/v1/admin, at_ms)") {
    AdminApi fx;
    auto& t = *fx.snap->gslb.table;
    REQUIRE(fx.post("/v1/sites/east/drain").status == 200);
    REQUIRE(fx.post("/v1/sites/west/services/192.0.2.2/drain?scope=member").status == 200);
    CHECK(fx.post("/v1/sites/west/drain?scope=everyone").status == 400);
    CHECK(t.siteEnabled(*t.findSite("west")));  // the refused one changed nothing
    CHECK_FALSE(t.siteEnabled(*t.findSite("east")));
    CHECK_FALSE(t.serviceEnabled(*t.findService("west", "192.0.2.2")));
    CHECK(fx.saved == 2);
    // The peer protocol's endpoint is gone, and at_ms is an unknown parameter now (ignored, as any other).
    CHECK(fx.api->handle("GET", "/v1/admin", "", "").status == 404);
    CHECK(fx.api->handle("GET", "/v1/verdicts", "", "").status == 404);
    REQUIRE(fx.post("/v1/sites/east/enable?at_ms=1").status == 200);
    CHECK(t.siteEnabled(*t.findSite("east")));
}
