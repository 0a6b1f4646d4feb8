// server/cluster/admin_log: the rule that makes drains converge across [cluster] members (last writer wins
// with a hybrid clock, deterministic ties, local changes never adopted), the peer body parser, the
// admin-state.json round trip of the changes, and ControlApi's GET /v1/admin, ?scope=member, adoptChanges.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <chrono>

#include "tests/server/helpers.hpp"
#include "server/control/api.hpp"
#include "server/state/admin_log.hpp"
#include "server/state/admin_state.hpp"

using namespace gslb;
using namespace gslb::server;
using namespace gslb::server::cluster;

namespace {

constexpr int64_t kNow = 1'764'624'000'000;  // 2025-12-01, Unix ms
const std::string kA = "http://192.0.2.53:8053", kB = "http://192.0.2.54:8053";

AdminChange change(bool enabled, int64_t t, const std::string& origin, bool local = false) {
    return AdminChange{enabled, t, origin, local};
}

}  // namespace

TEST_CASE("admin merge rule: the later change wins, either way round") {
    AdminChange drainOld = change(false, kNow, kA), enableNew = change(true, kNow + 1, kB);
    CHECK(orderedAfter(enableNew, drainOld));
    CHECK_FALSE(orderedAfter(drainOld, enableNew));
    // A member adopts a newer remote change, never an older one over its own newer change.
    CHECK(adopts(&drainOld, enableNew, kNow));
    CHECK_FALSE(adopts(&enableNew, drainOld, kNow));
    // No change of its own: anything a peer did is newer than "never changed".
    CHECK(adopts(nullptr, drainOld, kNow));
    CHECK(adopts(nullptr, change(false, 0, ""), kNow));  // even a drain from a file without times
    // The very same change is not adopted again (nothing to do, no log line).
    CHECK_FALSE(adopts(&drainOld, drainOld, kNow));
}

TEST_CASE("admin merge rule: ties are broken the same way on every member") {
    AdminChange a = change(false, kNow, kA), b = change(true, kNow, kB);
    // Equal times: the greater origin wins, whichever member compares.
    CHECK(orderedAfter(b, a));
    CHECK_FALSE(orderedAfter(a, b));
    CHECK(adopts(&a, b, kNow));
    CHECK_FALSE(adopts(&b, a, kNow));
    // Equal time and origin (only a forged or corrupted entry): drained wins, and only one way.
    AdminChange d = change(false, kNow, kA), e = change(true, kNow, kA);
    CHECK(orderedAfter(d, e));
    CHECK_FALSE(orderedAfter(e, d));
}

TEST_CASE("admin merge rule: a peer's local change (--member) is never adopted; a far-future one neither") {
    AdminChange mine = change(true, kNow, kA);
    CHECK_FALSE(adopts(&mine, change(false, kNow + 5, kB, true), kNow));
    CHECK_FALSE(adopts(nullptr, change(false, kNow + 5, kB, true), kNow));
    // A newer change of the cluster undoes this member's own local change.
    AdminChange myLocal = change(false, kNow, kA, true);
    CHECK(adopts(&myLocal, change(true, kNow + 1, kB), kNow));
    CHECK_FALSE(adopts(&myLocal, change(true, kNow - 1, kB), kNow));
    // A clock a day ahead: refused (it would win every race and drag this clock along); within a day: taken.
    CHECK_FALSE(adopts(&mine, change(false, kNow + kMaxAheadMs + 1, kB), kNow));
    CHECK(adopts(&mine, change(false, kNow + kMaxAheadMs, kB), kNow));
}

TEST_CASE("admin log: the hybrid clock orders a change after every change this member has seen") {
    AdminLog log;
    AdminKey east{"east", ""};
    // A peer whose clock is 10 s ahead drained east; this member adopts it.
    auto taken = log.merge({{east, change(false, kNow + 10'000, kB)}}, kNow);
    REQUIRE(taken.size() == 1);
    CHECK(log.clockMs() == kNow + 10'000);
    // The operator enables east here a second later by this member's clock: the enable must still win.
    const AdminChange& c = log.record(east, true, kNow + 1000, kA, false);
    CHECK(c.timeMs == kNow + 10'001);
    CHECK(orderedAfter(c, change(false, kNow + 10'000, kB)));
    // Two changes in one millisecond: still strictly ordered.
    int64_t t1 = log.record(east, false, kNow, kA, false).timeMs;
    int64_t t2 = log.record(east, true, kNow, kA, false).timeMs;
    CHECK(t2 == t1 + 1);
    // The peer's older drain, polled again, changes nothing.
    CHECK(log.merge({{east, change(false, kNow + 10'000, kB)}}, kNow).empty());
    CHECK(log.find(east)->enabled);
}

TEST_CASE("admin log: merge takes the newer of each key, one result per key, in key order") {
    AdminLog log;
    AdminKey east{"east", ""}, svc{"west", "192.0.2.20"}, west{"west", ""};
    log.record(east, false, kNow, kA, false);
    log.record(svc, false, kNow, kA, false);
    auto taken = log.merge(
        {
            {svc, change(true, kNow + 5, kB)},
            {east, change(true, kNow - 5, kB)},   // older than ours: kept out
            {west, change(false, kNow + 1, kB)},  // none of ours
            {west, change(true, kNow + 2, kB)},   // a later one of the same key in the same answer
            {svc, change(false, kNow + 3, kB)},   // older than the svc change just taken
        },
        kNow);
    REQUIRE(taken.size() == 2);
    CHECK(taken[0].key == west);  // the site sorts before its services
    CHECK(taken[0].change.timeMs == kNow + 2);
    CHECK(taken[1].key == svc);
    CHECK(taken[1].change.enabled);
    CHECK(taken[1].change.timeMs == kNow + 5);
    CHECK_FALSE(log.find(east)->enabled);
    CHECK(log.find(svc)->enabled);
}

TEST_CASE("parseAdminChanges: what a peer sends, and what is skipped or refused") {
    std::vector<RemoteChange> out;
    CHECK(parseAdminChanges("not json", out) == "bad JSON: not an object");
    CHECK(parseAdminChanges("{}", out) == "bad JSON: no changes array");
    CHECK(out.empty());
    CHECK(parseAdminChanges(R"({"changes": [
        {"site": "east", "enabled": false, "time_ms": 1764624000123, "origin": "http://a:1", "local": false},
        {"site": "west", "address": "192.0.2.20", "enabled": true, "time_ms": 5, "origin": ""},
        {"site": "", "enabled": false, "time_ms": 1, "origin": ""},
        {"site": "x", "enabled": "no", "time_ms": 1, "origin": ""},
        {"site": "x", "enabled": false, "time_ms": -1, "origin": ""},
        {"site": "x", "enabled": false, "time_ms": 1e300, "origin": ""},
        {"site": "x", "enabled": false, "origin": ""},
        {"site": "x", "enabled": false, "time_ms": 1, "origin": 7},
        {"site": "x", "address": 7, "enabled": false, "time_ms": 1, "origin": ""},
        {"site": "x", "enabled": false, "time_ms": 1, "origin": "", "local": "yes"},
        7, null]})",
                            out) == "");
    REQUIRE(out.size() == 2);
    CHECK(out[0].key == AdminKey{"east", ""});
    CHECK(out[0].change.timeMs == 1764624000123);
    CHECK(out[0].change.origin == "http://a:1");
    CHECK(out[1].key == AdminKey{"west", "192.0.2.20"});
    CHECK(out[1].change.enabled);
    // changeJson and the parser agree.
    auto j = changeJson(out[1].key, change(false, 42, kA, true));
    auto back = changeFromJson(j);
    REQUIRE(back);
    CHECK(back->change.local);
    CHECK(back->change.timeMs == 42);
}

TEST_CASE("admin-state.json keeps the changes' order across a restart, and reads a file without it") {
    std::string dir = st::newDir();
    auto built = metrics::StateTable::build({"east", "west"}, {{"east", "192.0.2.10"}});
    REQUIRE(built.ok());
    auto t = built.value();
    AdminLog log;
    t->setSiteEnabled(*t->findSite("east"), false);
    log.record({"east", ""}, false, kNow, kA, false);
    log.record({"west", ""}, true, kNow, kA, false);   // an enable: kept too, with its time
    log.record({"gone", ""}, false, kNow, kA, false);  // not in the table: not written
    std::string error;
    REQUIRE(service::saveAdminState(*t, dir, error, &log));

    auto fresh = metrics::StateTable::build({"east", "west"}, {{"east", "192.0.2.10"}}).value();
    AdminLog back;
    service::AdminStateLoad out;
    REQUIRE(service::loadAdminState(*fresh, dir, out, error, &back));
    CHECK(out.applied == 1);
    CHECK_FALSE(fresh->siteEnabled(*fresh->findSite("east")));
    REQUIRE(back.find({"west", ""}));
    CHECK(back.find({"west", ""})->timeMs == kNow + 1);
    CHECK(back.find({"east", ""})->origin == kA);
    CHECK_FALSE(back.find({"gone", ""}));
    CHECK(back.clockMs() == kNow + 1);  // the next change here orders after both

    // A file of the first version (no "changes"): its drains come back with time 0, older than any change.
    st::writeFile(dir, "admin-state.json",
                  R"({"version": 1, "drained_sites": ["west"], "drained_services": []})");
    auto old = metrics::StateTable::build({"east", "west"}, {}).value();
    AdminLog oldLog;
    REQUIRE(service::loadAdminState(*old, dir, out, error, &oldLog));
    CHECK_FALSE(old->siteEnabled(*old->findSite("west")));
    REQUIRE(oldLog.find({"west", ""}));
    CHECK(oldLog.find({"west", ""})->timeMs == 0);
    CHECK(oldLog.find({"west", ""})->local);  // drains were per member then: no peer takes it over
    CHECK(adopts(oldLog.find({"west", ""}), change(true, 1, kB), kNow));

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

TEST_CASE("GET /v1/admin, ?scope=member and adoptChanges through the control API") {
    // Not a URL: the events this records reach the process's event ring, which the status page tests read.
    const std::string kPeer = "member-b";
    AdminApi fx;
    auto& api = fx.api;
    auto& snap = fx.snap;
    int& saved = fx.saved;
    auto post = [&](const std::string& p) { return fx.post(p); };
    auto changes = [&] {
        return nlohmann::json::parse(api->handle("GET", "/v1/admin", "", "").body)["changes"];
    };
    auto& t = *snap->gslb.table;

    CHECK(changes().empty());
    REQUIRE(post("/v1/sites/east/drain").status == 200);
    REQUIRE(post("/v1/sites/west/services/192.0.2.2/drain?scope=member").status == 200);
    CHECK(post("/v1/sites/west/drain?scope=everyone").status == 400);
    CHECK(t.siteEnabled(*t.findSite("west")));  // the refused one changed nothing
    auto c = changes();
    REQUIRE(c.size() == 2);
    CHECK(c[0]["site"] == "east");
    CHECK(c[0]["enabled"] == false);
    CHECK(c[0]["local"] == false);
    CHECK(c[0]["time_ms"].get<int64_t>() > kNow);
    CHECK(c[1]["address"] == "192.0.2.2");
    CHECK(c[1]["local"] == true);
    CHECK(saved == 2);

    // A peer's newer enable of east and an older drain of south's service: only the first is taken.
    int64_t eastTime = c[0]["time_ms"];
    std::vector<RemoteChange> theirs = {
        {{"east", ""}, change(true, eastTime + 1, kPeer)},
        {{"south", "192.0.2.3"}, change(false, 1, kPeer)},  // no change here yet: taken, the service drains
        {{"nowhere", ""}, change(false, eastTime + 1, kPeer)},  // not in this config: ignored
    };
    CHECK(api->adoptChanges(*snap, theirs, kPeer) == 2);
    CHECK(t.siteEnabled(*t.findSite("east")));
    CHECK_FALSE(t.serviceEnabled(*t.findService("south", "192.0.2.3")));
    CHECK(saved == 3);
    CHECK(changes().size() == 3);
    // Polled again: nothing new, nothing written.
    CHECK(api->adoptChanges(*snap, theirs, kPeer) == 0);
    CHECK(saved == 3);
    // The peer's older drain of east cannot undo the enable.
    CHECK(api->adoptChanges(*snap, {{{"east", ""}, change(false, eastTime, kPeer)}}, kPeer) == 0);
    CHECK(t.siteEnabled(*t.findSite("east")));
}

TEST_CASE("?at_ms: a drain read late, after a later enable was taken over, changes nothing") {
    // The new-user trial's case: gslbctl drain reached a SIGSTOPped member (its request waited in the socket,
    // gslbctl said FAILED), then enable reached the others; when the member ran again it took the drain
    // with its own "now", newer than the enable, and every member drained. Stamped with the command's time
    // the late drain is older than the enable, whichever the member sees first.
    const std::string kPeer = "member-b";
    AdminApi fx;
    auto& api = fx.api;
    auto& snap = fx.snap;
    int& saved = fx.saved;
    auto post = [&](const std::string& p) { return fx.post(p); };
    auto& t = *snap->gslb.table;
    const int64_t drainAt = std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count() -
                            5000;
    const int64_t enableAt = drainAt + 1000;

    // The enable (taken by a peer) arrives first, then the queued drain: refused, with what holds.
    CHECK(api->adoptChanges(*snap, {{{"east", ""}, change(true, enableAt, kPeer)}}, kPeer) == 0);
    int before = saved;
    auto r = post("/v1/sites/east/drain?at_ms=" + std::to_string(drainAt));
    CHECK(r.status == 409);
    CHECK(r.body.find("a later change holds: site east enabled at") != std::string::npos);
    CHECK(r.body.find(kPeer) != std::string::npos);
    CHECK(t.siteEnabled(*t.findSite("east")));
    CHECK(saved == before);
    // Asked again for what already holds (a retried enable of the same command): 200, nothing new.
    CHECK(post("/v1/sites/east/enable?at_ms=" + std::to_string(drainAt)).status == 200);
    CHECK(t.siteEnabled(*t.findSite("east")));
    CHECK(saved == before);

    // The other order: the late drain first (nothing newer known yet), then the peer's enable wins.
    REQUIRE(post("/v1/sites/west/services/192.0.2.2/drain?at_ms=" + std::to_string(drainAt)).status == 200);
    CHECK_FALSE(t.serviceEnabled(*t.findService("west", "192.0.2.2")));
    auto mine = nlohmann::json::parse(api->handle("GET", "/v1/admin", "", "").body)["changes"];
    REQUIRE(mine.size() == 2);
    CHECK(mine[1]["time_ms"] == drainAt);  // the command's time, not this member's now
    CHECK(api->adoptChanges(*snap, {{{"west", "192.0.2.2"}, change(true, enableAt, kPeer)}}, kPeer) == 1);
    CHECK(t.serviceEnabled(*t.findService("west", "192.0.2.2")));
    // ... and the member's own later command (no at_ms: its now) still orders after everything it saw.
    REQUIRE(post("/v1/sites/west/services/192.0.2.2/drain").status == 200);
    CHECK_FALSE(t.serviceEnabled(*t.findService("west", "192.0.2.2")));

    // Not a time: refused, nothing changed.
    before = saved;
    for (std::string bad : {"abc", "0", "-5", "12x", "", "9007199254740993"})
        CHECK(post("/v1/sites/south/drain?at_ms=" + bad).status == 400);
    CHECK(post("/v1/sites/south/drain?at_ms=" + std::to_string(drainAt + 2 * kMaxAheadMs)).status == 400);
    CHECK(t.siteEnabled(*t.findSite("south")));
    CHECK(saved == before);
}
