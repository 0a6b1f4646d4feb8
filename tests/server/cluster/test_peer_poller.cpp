// PeerPoller (server/cluster/peer_poller.hpp), the periodic GET of a [cluster] peer that PeerMonitor and
// AdminSync share, and what AdminSync's status makes of it in GET /v1/status and /metrics: against a loopback
// server run by the test.
#include <doctest/doctest.h>
#include <event2/event.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "server/control/api.hpp"
#include "server/cluster/admin_sync.hpp"
#include "server/cluster/peer_poller.hpp"
#include "server/state/snapshot.hpp"
#include "tests/server/helpers.hpp"
#include "tests/server/http_server.hpp"

using namespace gslb::server;
using namespace gslb::server::cluster;

namespace {

std::string ok(const std::string& body) {
    return "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) +
           "\r\nConnection: close\r\n\r\n" + body;
}

// This member on 127.0.0.1:9053 ([control] listen) and the peer on the test server's port.
std::shared_ptr<Snapshot> clusterSnapshot(int peerPort) {
    return st::snapshot(st::baseConfig(
        "[control]\nlisten = \"127.0.0.1:9053\"\ntoken_file = \"tok\"\n[cluster]\nmembers = "
        "[\"http://127.0.0.1:9053\", \"http://127.0.0.1:" +
        std::to_string(peerPort) + "\"]\n[hostname.\"www.t.test.\"]\n" + st::threeServices("www.t.test.")));
}

}  // namespace

TEST_CASE(
    "PeerPoller: each result in the status: taken, refused by the owner, an error status, no listener") {
    auto srv = std::make_unique<st::OneShotServer>(ok("{}"));
    st::Loop loop;
    auto snap = clusterSnapshot(srv->port());
    std::string refuse;  // what the owner says of the body
    std::string seenBody, seenError = "-", seenBefore;
    bool done = false;
    auto poller = PeerPoller::make(
        loop.base, snap->config.cluster.members[1], "/v1/thing", 1024, PollTiming{1, 1, 60},
        [&](const std::string& body) {
            seenBody = body;
            return refuse;
        },
        [&](const std::string& error, const std::string& before) {
            seenError = error;
            seenBefore = before;
            done = true;
        });
    REQUIRE(poller);
    const std::string url = "http://127.0.0.1:" + std::to_string(srv->port());
    CHECK(poller->status().url == url);
    CHECK(poller->status().state == "unknown");
    auto round = [&] {
        done = false;
        poller->poll();
        poller->poll();  // one in flight: not sent twice
        loop.runUntil(done, 5);
        REQUIRE(done);
        return poller->status();
    };
    PollStatus st = round();
    CHECK(srv->request().rfind("GET /v1/thing HTTP/1.1\r\n", 0) == 0);
    CHECK(seenBody == "{}");
    CHECK(seenError.empty());
    CHECK(seenBefore == "unknown");
    CHECK(st.state == "ok");
    CHECK(st.polls == 1);
    CHECK(st.failures == 0);
    CHECK(st.lastSuccessUnixMs > 0);
    CHECK(st.lastSuccessMonoMs > 0);
    const int64_t firstSuccess = st.lastSuccessUnixMs;

    refuse = "bad JSON: not an object";
    st = round();
    CHECK(seenError == "bad JSON: not an object");
    CHECK(seenBefore == "ok");
    CHECK(st.state == "failing");
    CHECK(st.lastError == "bad JSON: not an object");
    CHECK(st.lastSuccessUnixMs == firstSuccess);  // kept: the last success, not the last poll
    CHECK(st.polls == 2);
    CHECK(st.failures == 1);

    refuse.clear();
    srv->setResponse("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    st = round();
    CHECK(st.lastError == "http 503");
    CHECK(seenBefore == "failing");

    srv.reset();  // nothing listens on the port now
    st = round();
    CHECK(st.state == "failing");
    CHECK(st.lastError == "connect or read failed");
    CHECK(st.polls == 4);
    CHECK(st.failures == 3);
}

TEST_CASE("AdminSync status: the last success, the last error and the changes taken, per peer, in the API") {
    st::OneShotServer srv(ok(R"({"self": "peer", "changes": [
        {"site": "east", "enabled": false, "time_ms": 1764624000123, "origin": "http://a:1", "local": false}]})"));
    st::Loop loop;
    auto snap = clusterSnapshot(srv.port());
    const std::string url = "http://127.0.0.1:" + std::to_string(srv.port());
    int adopted = 0;
    std::string from;
    AdminSync sync(loop.base, [&](const std::vector<RemoteChange>& changes, const std::string& peer) {
        ++adopted;
        from = peer;
        return changes.size() + 1;  // what the daemon's adoptChanges returned: states changed
    });
    CHECK(sync.status().empty());
    sync.apply(snap->config.cluster);  // polls the new peer at once
    REQUIRE(sync.status().size() == 1);
    CHECK(sync.status()[0].state == "unknown");
    bool any = false;
    for (int i = 0; i < 250 && !adopted; ++i) loop.runUntil(any, 0.02);
    REQUIRE(adopted == 1);
    CHECK(from == url);
    AdminSyncStatus s = sync.status()[0];
    CHECK(s.url == url);
    CHECK(s.state == "ok");
    CHECK(s.changesApplied == 2);
    CHECK(s.polls == 1);

    Shared shared;
    shared.holder.publish(snap);
    ControlApi api(loop.base, shared, nullptr, nullptr);
    auto status = [&] { return nlohmann::json::parse(api.handle("GET", "/v1/status", "", "").body); };
    CHECK(status()["cluster"]["admin_sync"] == nlohmann::json::object());  // not wired: no peers shown
    api.setAdminSyncStatus([&] { return sync.status(); });
    auto p = status()["cluster"]["admin_sync"][url];
    CHECK(p["state"] == "ok");
    CHECK(p["last_success"].is_string());
    CHECK(p["last_success_age_s"].get<double>() >= 0);
    CHECK(p["last_error"].is_null());
    CHECK(p["polls"] == 1);
    CHECK(p["failures"] == 0);
    CHECK(p["changes_applied"] == 2);
    std::string m = api.handle("GET", "/metrics", "", "").body;
    const std::string l = "{peer=\"" + url + "\"";
    CHECK(m.find("gslbd_cluster_admin_sync_total" + l + ",result=\"ok\"} 1\n") != std::string::npos);
    CHECK(m.find("gslbd_cluster_admin_sync_total" + l + ",result=\"failed\"} 0\n") != std::string::npos);
    CHECK(m.find("gslbd_cluster_admin_sync_up" + l + "} 1\n") != std::string::npos);
    CHECK(m.find("gslbd_cluster_admin_sync_last_success_age_seconds" + l + "} ") != std::string::npos);
    CHECK(m.find("gslbd_cluster_admin_changes_applied_total" + l + "} 2\n") != std::string::npos);

    // A peer that stops answering: failing with why, the last success and the changes kept.
    srv.setResponse("HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    for (int i = 0; i < 250 && sync.status()[0].failures == 0; ++i)
        loop.runUntil(any, 0.02);  // next round: 1 s
    p = status()["cluster"]["admin_sync"][url];
    CHECK(p["state"] == "failing");
    CHECK(p["last_error"] == "http 500");
    CHECK(p["last_success"].is_string());
    CHECK(p["changes_applied"] == 2);
    m = api.handle("GET", "/metrics", "", "").body;
    CHECK(m.find("gslbd_cluster_admin_sync_up" + l + "} 0\n") != std::string::npos);
    CHECK(m.find("gslbd_cluster_admin_sync_total" + l + ",result=\"failed\"} 1\n") != std::string::npos);
}
