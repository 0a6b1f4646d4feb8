// Report forwarding to [cluster] peers (server/cluster/forwarder.hpp) with a sender the test completes by
// hand: one request per peer in flight, order kept, a bounded queue, counters; and ControlApi's choice of
// what to forward (accepted, unmarked reports, to every member but itself).
#include <doctest/doctest.h>
#include <event2/event.h>

#include "server/control/api.hpp"
#include "server/cluster/forwarder.hpp"
#include "tests/server/helpers.hpp"

using namespace gslb::server;

namespace {

struct FakeSend {
    std::vector<std::pair<PeerRequest, PeerForwarder::Done>> sent;
    PeerForwarder::SendFn fn() {
        return [this](const PeerRequest& r, PeerForwarder::Done d) { sent.emplace_back(r, std::move(d)); };
    }
};

PeerRequest req(const std::string& peer, const std::string& body) {
    return PeerRequest{peer, "/v1/sites/east/report", body, "tok-01234567", "http://127.0.0.2:9053"};
}

// A ControlApi on the config `text`, its token "tok-01234567", whose forwarder records what it would send.
struct ForwardingApi {
    std::unique_ptr<event_base, void (*)(event_base*)> base{event_base_new(), event_base_free};
    Shared shared;
    FakeSend fake;
    std::unique_ptr<ControlApi>
        api;  // goes first: its forwarder holds `fake`, and it uses `shared` and `base`

    explicit ForwardingApi(const std::string& text) {
        shared.holder.publish(st::snapshot(text));
        api = std::make_unique<ControlApi>(
            base.get(), shared, [](std::string&) { return true; }, nullptr);
        std::string error;
        REQUIRE(api->readToken(st::writeSecret(st::newDir(), "tok", "tok-01234567\n"), error));
        api->setForwarder(std::make_unique<PeerForwarder>(base.get(), fake.fn()));
    }
};

}  // namespace

TEST_CASE("PeerForwarder: one request per peer in flight, in order; peers do not wait for each other") {
    FakeSend fake;
    PeerForwarder f(nullptr, fake.fn());
    f.forward(req("http://a:1", "1"));
    f.forward(req("http://a:1", "2"));
    f.forward(req("http://b:1", "x"));
    REQUIRE(fake.sent.size() == 2);  // a's first and b's: a's second waits for a's first
    CHECK(fake.sent[0].first.body == "1");
    CHECK(fake.sent[1].first.peer == "http://b:1");
    CHECK(f.pending("http://a:1") == 2);
    fake.sent[0].second(true, "");
    REQUIRE(fake.sent.size() == 3);
    CHECK(fake.sent[2].first.body == "2");
    fake.sent[2].second(false, "answered 401");
    fake.sent[1].second(false, "cannot connect");
    CHECK(f.pending("http://a:1") == 0);
    CHECK(f.counters().at("http://a:1").ok == 1);
    CHECK(f.counters().at("http://a:1").failed == 1);
    CHECK(f.counters().at("http://a:1").lastError == "answered 401");
    CHECK(f.counters().at("http://b:1").failed == 1);
    // A success clears the error.
    f.forward(req("http://a:1", "3"));
    fake.sent.back().second(true, "");
    CHECK(f.counters().at("http://a:1").lastError.empty());
}

TEST_CASE("PeerForwarder: a peer that does not answer fills its own queue; the oldest waiting report goes") {
    FakeSend fake;
    PeerForwarder f(nullptr, fake.fn());
    const size_t n = PeerForwarder::kMaxQueued + 10;
    for (size_t i = 0; i < n; ++i) f.forward(req("http://dead:1", std::to_string(i)));
    f.forward(req("http://alive:1", "ok"));
    CHECK(fake.sent.size() == 2);  // the dead peer's first, and the other peer's at once
    CHECK(f.pending("http://dead:1") == PeerForwarder::kMaxQueued + 1);
    CHECK(f.counters().at("http://dead:1").dropped == n - 1 - PeerForwarder::kMaxQueued);
    fake.sent[0].second(false, "no answer in time");
    REQUIRE(fake.sent.size() == 3);
    // Reports 1..9 were dropped: the next one sent is the oldest kept.
    CHECK(fake.sent[2].first.body == std::to_string(n - PeerForwarder::kMaxQueued));
}

TEST_CASE("PeerForwarder: a completion after the forwarder is gone does nothing") {
    FakeSend fake;
    auto f = std::make_unique<PeerForwarder>(nullptr, fake.fn());
    f->forward(req("http://a:1", "1"));
    f.reset();
    fake.sent[0].second(true, "");  // must not touch freed memory (ASan)
}

TEST_CASE("ControlApi forwards an accepted, unmarked report to every member but itself") {
    std::string text = st::baseConfig(
        "[control]\nlisten = \"127.0.0.3:9053\"\ntoken_file = \"tok\"\n"
        "[cluster]\nmembers = [\"http://127.0.0.2:9053\", \"http://127.0.0.3:9053\", "
        "\"http://127.0.0.4:9053\"]\n"
        "[hostname.\"www.t.test.\"]\n" +
        st::threeServices("www.t.test."));
    ForwardingApi f(text);
    ControlApi& api = *f.api;
    FakeSend& fake = f.fake;
    const std::string body = "{\"cpu\": 12}";
    CHECK(api.handle("POST", "/v1/sites/east/report", "Bearer tok-01234567", body).status == 200);
    REQUIRE(fake.sent.size() == 2);
    CHECK(fake.sent[0].first.peer == "http://127.0.0.2:9053");
    CHECK(fake.sent[1].first.peer == "http://127.0.0.4:9053");
    for (const auto& [r, d] : fake.sent) {
        CHECK(r.path == "/v1/sites/east/report");
        CHECK(r.body == body);
        CHECK(r.token == "tok-01234567");  // the members share the token
        CHECK(r.origin == "http://127.0.0.3:9053");
    }
    // Marked (by a peer, or by gslbctl that reaches every member itself): applied, not forwarded.
    CHECK(api.handle("POST", "/v1/sites/east/report", "Bearer tok-01234567", body, "http://127.0.0.2:9053")
              .status == 200);
    CHECK(api.handle("POST", "/v1/sites/east/report", "Bearer tok-01234567", body, "gslbctl").status == 200);
    // Refused here, so refused there too: not forwarded.
    CHECK(api.handle("POST", "/v1/sites/east/report", "Bearer tok-01234567", "{\"cpu\": 900}").status == 400);
    CHECK(api.handle("POST", "/v1/sites/east/report", "Bearer wrong-token", body).status == 401);
    CHECK(api.handle("POST", "/v1/sites/nowhere/report", "Bearer tok-01234567", body).status == 404);
    // Drains are not forwarded (gslbctl reaches every member; a drain is one member's admin state).
    CHECK(api.handle("POST", "/v1/sites/east/drain", "Bearer tok-01234567", "{}").status == 200);
    CHECK(fake.sent.size() == 2);
    for (auto& [r, d] : fake.sent) d(true, "");
    // Every peer has its row in /metrics.
    std::string m = api.handle("GET", "/metrics", "", "").body;
    CHECK(m.find("gslbd_cluster_forwards_total{peer=\"http://127.0.0.2:9053\",result=\"ok\"} 1") !=
          std::string::npos);
    CHECK(m.find("gslbd_cluster_forwards_total{peer=\"http://127.0.0.4:9053\",result=\"failed\"} 0") !=
          std::string::npos);
    CHECK(m.find("127.0.0.3:9053\",result") == std::string::npos);  // not itself
}

TEST_CASE("ControlApi without [cluster] forwards nothing") {
    std::string text = st::baseConfig("[hostname.\"www.t.test.\"]\n" + st::threeServices("www.t.test."));
    ForwardingApi f(text);
    ControlApi& api = *f.api;
    FakeSend& fake = f.fake;
    CHECK(api.handle("POST", "/v1/sites/east/report", "Bearer tok-01234567", "{\"cpu\": 1}").status == 200);
    CHECK(fake.sent.empty());
    CHECK(api.handle("GET", "/metrics", "", "").body.find("gslbd_cluster_forwards_total{") ==
          std::string::npos);
}
