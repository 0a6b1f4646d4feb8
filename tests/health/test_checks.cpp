// The real checks (server/probes/health*.cpp) through HealthMonitor's public API, against small servers on
// 127.0.0.1 started here: a listening socket (tcp), a closed port, and an HTTP responder thread that answers
// 200 / 503 / a wrong body / too slowly. Outcomes only: no assertion on how long anything took.
#include <doctest/doctest.h>
#include <arpa/inet.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "metrics/state_table.hpp"
#include "server/base/events.hpp"
#include "server/probes/health.hpp"
#include "server/base/log.hpp"
#include "server/state/snapshot.hpp"

using namespace gslb;
using namespace gslb::server;
using metrics::Health;

namespace {

int listenLocal(int& port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(listen(fd, 64) == 0);
    socklen_t len = sizeof a;
    getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
    return fd;
}

// A port nobody listens on (bound, then closed: connecting is refused).
int closedPort() {
    int port = 0;
    int fd = listenLocal(port);
    close(fd);
    return port;
}

// A tiny HTTP/1.0-style responder: one thread per connection, mode switchable at any time.
class HttpServer {
  public:
    enum Mode { Ok, Unavailable, WrongBody, Slow };
    HttpServer() {
        fd_ = listenLocal(port_);
        REQUIRE(pipe(stop_) == 0);
        accepter_ = std::thread([this] { acceptLoop(); });
    }
    ~HttpServer() {
        ::write(stop_[1], "x", 1);
        accepter_.join();
        for (auto& t : conns_) t.join();
        close(fd_);
        close(stop_[0]);
        close(stop_[1]);
    }
    int port() const { return port_; }
    void setMode(Mode m) { mode_ = m; }
    std::string lastRequest() {
        std::lock_guard<std::mutex> g(m_);
        return lastRequest_;
    }
    int requests() const { return requests_; }

  private:
    // Waits for fd to be readable, or for stop; false on stop or timeout.
    bool wait(int fd, int ms) {
        pollfd p[2] = {{fd, POLLIN, 0}, {stop_[0], POLLIN, 0}};
        int r = poll(p, 2, ms);
        return r > 0 && !(p[1].revents & POLLIN) && (p[0].revents & (POLLIN | POLLHUP | POLLERR));
    }
    void acceptLoop() {
        for (;;) {
            if (!wait(fd_, -1)) return;
            int c = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
            if (c < 0) continue;
            conns_.emplace_back([this, c] { serve(c); });
        }
    }
    void serve(int c) {
        std::string req;
        char buf[4096];
        while (req.find("\r\n\r\n") == std::string::npos && wait(c, 5000)) {
            ssize_t n = read(c, buf, sizeof buf);
            if (n <= 0) break;
            req.append(buf, size_t(n));
        }
        {
            std::lock_guard<std::mutex> g(m_);
            lastRequest_ = req;
        }
        ++requests_;
        Mode m = mode_;
        if (m == Slow) {
            pollfd p{stop_[0], POLLIN, 0};
            poll(&p, 1, 3000);  // far beyond the checks' timeout; ends early when the server stops
        }
        std::string body = m == WrongBody ? "nope" : m == Unavailable ? "maintenance" : "all good";
        int status = m == Unavailable ? 503 : 200;
        std::string resp = fmt::format("HTTP/1.0 {} X\r\nContent-Type: text/plain\r\n\r\n{}", status, body);
        ssize_t w = ::send(c, resp.data(), resp.size(), MSG_NOSIGNAL);
        (void)w;
        close(c);
    }

    int fd_ = -1, port_ = 0;
    int stop_[2];
    std::atomic<Mode> mode_{Ok};
    std::atomic<int> requests_{0};
    std::mutex m_;
    std::string lastRequest_;
    std::thread accepter_;
    std::vector<std::thread> conns_;
};

struct Svc {
    std::string address, site, check;
    int port;  // check port override (0: the check's)
};

// Writes a config + zone into a temp dir and builds a snapshot (previous may be null).
class Fixture {
  public:
    Fixture() {
        char tmpl[] = "/tmp/gslbd-health-XXXXXX";
        dir_ = mkdtemp(tmpl);
        base_ = event_base_new();
        log::threshold = log::Level::Error;
    }
    ~Fixture() {
        hm_.reset();
        snaps_.clear();
        event_base_free(base_);
        std::filesystem::remove_all(dir_);
    }
    std::shared_ptr<Snapshot> build(const std::string& checks, const std::vector<Svc>& svcs,
                                    const Snapshot* previous = nullptr) {
        std::string zone =
            "$ORIGIN t.test.\n$TTL 300\n@ IN SOA ns1 admin 1 3600 900 604800 60\n@ IN NS ns1\nns1 IN A "
            "192.0.2.53\n";
        std::string conf = "[[zone]]\nname = \"t.test.\"\nfile = \"t.test.zone\"\n\n" + checks +
                           "\n[site.a]\n[site.b]\n[site.c]\n\n[hostname.\"www.t.test.\"]\n";
        for (const auto& s : svcs) {
            zone += "www IN A " + s.address + "\n";
            conf += fmt::format("[[hostname.\"www.t.test.\".service]]\naddress = \"{}\"\nsite = \"{}\"\n",
                                s.address, s.site);
            if (!s.check.empty())
                conf += fmt::format("check = \"{}\"\ncheck_address = \"127.0.0.1\"\nport = {}\n", s.check,
                                    s.port);
        }
        std::ofstream(dir_ + "/t.test.zone") << zone;
        std::ofstream(dir_ + "/gslbd.toml") << conf;
        std::string error;
        auto s = buildSnapshot(dir_ + "/gslbd.toml", previous, error);
        INFO(error);
        REQUIRE(s);
        snaps_.push_back(s);
        return s;
    }
    HealthMonitor& monitor() {
        if (!hm_) hm_ = std::make_unique<HealthMonitor>(base_);
        return *hm_;
    }
    uint32_t slot(const Snapshot& s, const std::string& site, const std::string& addr) {
        auto x = s.gslb.table->findService(site, addr);
        REQUIRE(x);
        return *x;
    }
    // Runs the control loop until pred() holds or `seconds` passed; returns pred().
    bool runUntil(const std::function<bool()>& pred, double seconds = 10) {
        auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
        event* tick = event_new(
            base_, -1, EV_PERSIST, [](evutil_socket_t, short, void*) {}, nullptr);
        timeval tv{0, 20000};
        event_add(tick, &tv);
        while (!pred() && std::chrono::steady_clock::now() < deadline) event_base_loop(base_, EVLOOP_ONCE);
        event_free(tick);
        return pred();
    }
    event_base* base() { return base_; }

  private:
    std::string dir_;
    event_base* base_;
    std::unique_ptr<HealthMonitor> hm_;
    std::vector<std::shared_ptr<Snapshot>> snaps_;
};

bool siteUp(const Snapshot& s, const std::string& site, uint32_t anySlotOfSite) {
    auto ss = s.gslb.table->findSite(site);
    return metrics::fillCandidate(*s.gslb.table, anySlotOfSite, *ss, 1, 0, 0).siteUp;
}

const char* kTcp = "[check.tcp]\ntype = \"tcp\"\ninterval = 0.1\ntimeout = 0.1\nrise = 2\nfall = 2\n";
// A check run gets 0.5 s (interval and timeout): at 0.1 s, on the loaded 2-core machine, a slow 200 from
// these threaded test servers sometimes became a timeout — a failure the tests did not expect (health-unit
// failed about one run in three at load 12); the Slow server waits 3 s, far beyond it either way.
const char* kWeb =
    "[check.web]\ntype = \"http\"\npath = \"/health\"\nexpect_status = [200]\ninterval = 0.5\ntimeout = "
    "0.5\nrise = 2\nfall = 2\n";
const char* kBody =
    "[check.body]\ntype = \"http\"\nexpect_body = \"good\"\ninterval = 0.5\ntimeout = 0.5\nrise = 2\nfall = "
    "2\n";

}  // namespace

TEST_CASE("tcp check: a listening port is up with an L4 time, a closed port is down") {
    Fixture f;
    int lport = 0;
    int lfd = listenLocal(lport);
    int cport = closedPort();
    auto s = f.build(
        kTcp,
        {{"192.0.2.1", "a", "tcp", lport}, {"192.0.2.2", "b", "tcp", cport}, {"192.0.2.3", "c", "", 0}});
    auto& hm = f.monitor();
    hm.apply(*s);
    uint32_t up = f.slot(*s, "a", "192.0.2.1"), down = f.slot(*s, "b", "192.0.2.2"),
             none = f.slot(*s, "c", "192.0.2.3");
    CHECK(s->gslb.table->health(up) == Health::Unknown);
    hm.runInitialRound();

    CHECK(s->gslb.table->health(up) == Health::Up);
    CHECK(s->gslb.table->health(down) == Health::Down);
    CHECK(s->gslb.table->health(none) == Health::Unknown);
    CheckStatus a = hm.status(up);
    CHECK(a.checked);
    CHECK(a.check == "tcp");
    CHECK(a.type == "tcp");
    CHECK(a.target == fmt::format("127.0.0.1:{}", lport));
    CHECK(a.state == "up");
    CHECK(a.successes == 1);
    CHECK(a.failures == 0);
    CHECK(a.l4Ms >= 0);
    CHECK(a.l7Ms == -1);  // tcp has no L7
    CHECK(a.lastLatencyMs >= 0);
    CHECK(a.lastChangeUnixMs > 0);
    CHECK(a.flaps == 0);
    auto cand = metrics::fillCandidate(*s->gslb.table, up, *s->gslb.table->findSite("a"), 1, 0, 0);
    CHECK_FALSE(std::isnan(cand.l4Ms));
    CHECK(std::isnan(cand.l7Ms));

    CheckStatus b = hm.status(down);
    CHECK(b.state == "down");
    CHECK(b.failures == 1);
    CHECK(b.lastError == "connect: Connection refused");
    CHECK(b.l4Ms == -1);
    CHECK_FALSE(hm.status(none).checked);

    // site b has one checked service and it is down; site c has only an unchecked service
    CHECK(siteUp(*s, "a", up));
    CHECK_FALSE(siteUp(*s, "b", down));
    CHECK(siteUp(*s, "c", none));
    close(lfd);
}

TEST_CASE("http check: 200 is up with L4 and L7, 503 and a wrong body are down; Host and path are sent") {
    Fixture f;
    HttpServer ok, bad, wrong;
    bad.setMode(HttpServer::Unavailable);
    wrong.setMode(HttpServer::WrongBody);
    auto s = f.build(std::string(kWeb) + kBody, {{"192.0.2.1", "a", "web", ok.port()},
                                                 {"192.0.2.2", "b", "web", bad.port()},
                                                 {"192.0.2.3", "c", "body", wrong.port()}});
    auto& hm = f.monitor();
    hm.apply(*s);
    hm.runInitialRound();
    uint32_t a = f.slot(*s, "a", "192.0.2.1"), b = f.slot(*s, "b", "192.0.2.2"),
             c = f.slot(*s, "c", "192.0.2.3");
    CHECK(s->gslb.table->health(a) == Health::Up);
    CHECK(s->gslb.table->health(b) == Health::Down);
    CHECK(s->gslb.table->health(c) == Health::Down);
    CheckStatus sa = hm.status(a);
    CHECK(sa.type == "http");
    CHECK(sa.l4Ms >= 0);
    CHECK(sa.l7Ms >= 0);
    CHECK(hm.status(b).lastError == "http 503");
    CHECK(hm.status(c).lastError == "http 200: body lacks \"good\"");
    std::string req = ok.lastRequest();
    CHECK(req.rfind("GET /health HTTP/1.1\r\n", 0) == 0);
    CHECK(req.find(fmt::format("\r\nHost: www.t.test:{}\r\n", ok.port())) != std::string::npos);
    CHECK(req.find("\r\nConnection: close\r\n") != std::string::npos);
    CHECK(wrong.lastRequest().rfind("GET / HTTP/1.1\r\n", 0) == 0);  // the default path
}

TEST_CASE("http check: a response slower than the timeout is a failure (timeout)") {
    Fixture f;
    HttpServer slow;
    slow.setMode(HttpServer::Slow);
    auto s = f.build(kWeb, {{"192.0.2.1", "a", "web", slow.port()}});
    auto& hm = f.monitor();
    hm.apply(*s);
    hm.runInitialRound();
    uint32_t a = f.slot(*s, "a", "192.0.2.1");
    CHECK(s->gslb.table->health(a) == Health::Down);
    CheckStatus st = hm.status(a);
    CHECK(st.lastError == "timeout");
    CHECK(st.failures == 1);
    CHECK(st.l7Ms == -1);  // failures do not feed the FlashBack times
}

TEST_CASE("periodic checks: fall 2 takes it down, rise 2 brings it back, each change counted once") {
    Fixture f;
    HttpServer srv;
    auto s = f.build(kWeb, {{"192.0.2.1", "a", "web", srv.port()}});
    auto& hm = f.monitor();
    hm.apply(*s);
    hm.runInitialRound();
    uint32_t a = f.slot(*s, "a", "192.0.2.1");
    REQUIRE(hm.status(a).state == "up");
    // periodic runs happen on their own
    CHECK(f.runUntil([&] { return hm.status(a).successes >= 3; }));
    CHECK(hm.status(a).state == "up");

    srv.setMode(HttpServer::Unavailable);
    uint64_t failuresBefore = hm.status(a).failures;
    REQUIRE(f.runUntil([&] { return hm.status(a).failures >= failuresBefore + 1; }));
    CHECK(hm.status(a).state == "up");  // one failure is not enough with fall 2 …
    REQUIRE(f.runUntil([&] { return hm.status(a).state == "down"; }));
    CheckStatus d = hm.status(a);
    CHECK(d.failures == failuresBefore + 2);  // … the second one is
    CHECK(d.flaps == 1);
    CHECK(d.lastError == "http 503");
    CHECK(d.lastChangeReason == "down: http 503 after 2 failures");
    CHECK(s->gslb.table->health(a) == Health::Down);
    CHECK_FALSE(siteUp(*s, "a", a));

    srv.setMode(HttpServer::Ok);
    uint64_t okBefore = d.successes;
    REQUIRE(f.runUntil([&] { return hm.status(a).successes >= okBefore + 1; }));
    CHECK(hm.status(a).state == "down");
    REQUIRE(f.runUntil([&] { return hm.status(a).state == "up"; }));
    // Exactly rise (2) successes when every run answered in time; a run that still timed out under load
    // resets the count and costs at most the one success before it (rise 1 or 3 fails either bound).
    CheckStatus u = hm.status(a);
    uint64_t lateRuns = u.failures - d.failures;
    CHECK(u.successes >= okBefore + 2);
    CHECK(u.successes <= okBefore + 2 + lateRuns);
    CHECK(hm.status(a).flaps == 2);
    CHECK(hm.status(a).lastChangeReason == "up after 2 successes");
    CHECK(s->gslb.table->health(a) == Health::Up);
    CHECK(siteUp(*s, "a", a));
}

TEST_CASE(
    "health changes go to the event ring with their reason; every run lands in the duration histogram") {
    eventLog().clear();
    uint64_t seq0 = eventLog().lastSeq();
    Fixture f;
    HttpServer srv;
    int cport = closedPort();
    auto s = f.build(kWeb, {{"192.0.2.1", "a", "web", srv.port()}, {"192.0.2.2", "b", "web", cport}});
    auto& hm = f.monitor();
    hm.apply(*s);
    hm.runInitialRound();
    uint32_t a = f.slot(*s, "a", "192.0.2.1"), b = f.slot(*s, "b", "192.0.2.2");
    auto find = [&](const std::string& subject, const std::string& message) {
        for (const auto& e : eventLog().since(seq0))
            if (e.kind == "health" && e.subject == subject && e.message == message) return true;
        return false;
    };
    CHECK(find("www.t.test./192.0.2.1 (a)", "up (http 200, first check)"));
    CHECK(find("www.t.test./192.0.2.2 (b)", "down: connect: Connection refused (first check)"));
    CHECK(find("site b", "down: all 1 checked service(s) down"));
    CHECK(hm.status(b).lastChangeReason == "down: connect: Connection refused (first check)");
    for (const auto& e : eventLog().since(seq0))
        if (e.subject == "www.t.test./192.0.2.2 (b)") CHECK(e.level == log::Level::Warn);

    srv.setMode(HttpServer::Unavailable);
    REQUIRE(f.runUntil([&] { return hm.status(a).state == "down"; }));
    CHECK(find("www.t.test./192.0.2.1 (a)", "down: http 503 after 2 failures"));
    CHECK(find("site a", "down: all 1 checked service(s) down"));

    CheckStatus st = hm.status(a);
    uint64_t inBuckets = 0;
    for (uint64_t n : st.durationBuckets) inBuckets += n;
    CHECK(st.durationCount == st.successes + st.failures);
    CHECK(inBuckets == st.durationCount);  // loopback checks take well under 10 s
    CHECK(st.durationSumSec > 0);
    CHECK(st.durationBuckets[kCheckDurationBucketCount - 1] == 0);  // nothing near 10 s here
}

TEST_CASE("reload: unchanged checks keep state and counters under a new slot index; removed ones stop") {
    Fixture f;
    HttpServer srv;
    int cport = closedPort();
    auto s1 = f.build(kWeb, {{"192.0.2.1", "a", "web", srv.port()}, {"192.0.2.2", "b", "web", cport}});
    auto& hm = f.monitor();
    hm.apply(*s1);
    hm.runInitialRound();
    uint32_t a1 = f.slot(*s1, "a", "192.0.2.1");
    REQUIRE(hm.status(a1).state == "up");
    int reqs = srv.requests();

    // A new service first: 192.0.2.1's slot index moves.
    HttpServer other;
    auto s2 = f.build(kWeb,
                      {{"192.0.2.9", "c", "web", other.port()},
                       {"192.0.2.1", "a", "web", srv.port()},
                       {"192.0.2.2", "b", "web", cport}},
                      s1.get());
    uint32_t a2 = f.slot(*s2, "a", "192.0.2.1");
    REQUIRE(a2 != a1);
    hm.apply(*s2);
    CheckStatus st = hm.status(a2);
    CHECK(st.state == "up");
    CHECK(st.successes >= 1);
    CHECK(s2->gslb.table->health(a2) == Health::Up);
    CHECK(s2->gslb.table->health(f.slot(*s2, "b", "192.0.2.2")) == Health::Down);
    uint32_t c2 = f.slot(*s2, "c", "192.0.2.9");
    CHECK(s2->gslb.table->health(c2) == Health::Unknown);  // new: not run yet
    // the new check runs by itself soon after the reload and writes into the new table
    CHECK(f.runUntil([&] { return s2->gslb.table->health(c2) == Health::Up; }));
    CHECK(f.runUntil([&] { return s2->gslb.table->health(a2) == Health::Up && srv.requests() > reqs; }));

    // The check taken off 192.0.2.1: stopped, its slot unknown again, no more requests.
    auto s3 = f.build(kWeb,
                      {{"192.0.2.9", "c", "web", other.port()},
                       {"192.0.2.1", "a", "", 0},
                       {"192.0.2.2", "b", "web", cport}},
                      s2.get());
    hm.apply(*s3);
    uint32_t a3 = f.slot(*s3, "a", "192.0.2.1");
    CHECK_FALSE(hm.status(a3).checked);
    CHECK(s3->gslb.table->health(a3) == Health::Unknown);
    int after = srv.requests();
    uint32_t c3 = f.slot(*s3, "c", "192.0.2.9");
    uint64_t cBefore = hm.status(c3).successes;
    REQUIRE(f.runUntil([&] { return hm.status(c3).successes >= cBefore + 3; }));
    CHECK(srv.requests() == after);
}

TEST_CASE("ownerRank: FNV-1a over SITE, ADDRESS, N and MEMBER, the same on every build") {
    using gslb::server::ownerRank;
    // Worked values (Python: h = 0xcbf29ce484222325; for c in data: h = ((h ^ c) * 0x100000001b3) % 2**64).
    CHECK(ownerRank("east", "192.0.2.10", 0, "http://127.0.0.2:8053") == 4198943584505862343ULL);
    CHECK(ownerRank("east", "192.0.2.10", 0, "http://127.0.0.3:8053") == 8834055853359237610ULL);
    // Every part counts, and the separators keep "ab"+"c" apart from "a"+"bc".
    CHECK(ownerRank("east", "192.0.2.10", 1, "http://127.0.0.2:8053") !=
          ownerRank("east", "192.0.2.10", 0, "http://127.0.0.2:8053"));
    CHECK(ownerRank("ab", "c", 0, "m") != ownerRank("a", "bc", 0, "m"));
}

TEST_CASE("after the start-up round, 500 checks of a 1 s interval cover the whole interval") {
    // Each check's first periodic run is firstPeriodicDelay after the round, then one interval after each
    // start: its phase within the interval is fixed by that first delay. With staggers k/500 the phases must
    // leave no gap wider than one step (the old rule put them all in the second half: a 0.5 s gap).
    const int n = 500;
    std::vector<double> phase;
    for (int k = 0; k < n; ++k) {
        double d = gslb::server::firstPeriodicDelay(1.0, double(k) / n);
        CHECK(d >= 0.5);  // never sooner than half an interval after the start-up run
        CHECK(d < 1.5);
        phase.push_back(std::fmod(d, 1.0));
    }
    std::sort(phase.begin(), phase.end());
    double gap = phase.front() + 1.0 - phase.back();  // across the interval's end
    for (size_t i = 1; i < phase.size(); ++i) gap = std::max(gap, phase[i] - phase[i - 1]);
    CHECK(gap <= 1.0 / n + 1e-9);
    CHECK(gslb::server::firstPeriodicDelay(2.0, 0.25) == doctest::Approx(1.5));
}
