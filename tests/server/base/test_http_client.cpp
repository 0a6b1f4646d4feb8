// HttpClient and PollTimers (server/base/http_client.hpp), the control thread's one HTTP client (metric
// sources, etcd's JSON gateway), against a small loopback server run by the test: what is
// sent, what comes back, and each way a request can fail or be called off.
#include <doctest/doctest.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <mutex>
#include <string>
#include <thread>

#include "server/base/http_client.hpp"
#include "tests/server/http_server.hpp"

using namespace gslb::server;

using st::Loop;
using st::OneShotServer;

TEST_CASE("HttpClient: a GET carries Host and the caller's headers; the status and body come back") {
    OneShotServer srv("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello");
    Loop loop;
    HttpClient c(loop.base, "127.0.0.1", srv.port());
    c.setTimeout(2);
    HttpAnswer got = loop.exchange(c, EVHTTP_REQ_GET, "/v1/status",
                                   {{"Accept", "application/json"}, {"User-Agent", "gslbd"}});
    CHECK(got.status == 200);
    CHECK(got.body == "hello");
    CHECK_FALSE(got.failed);
    std::string req = srv.request();
    CHECK(req.rfind("GET /v1/status HTTP/1.1\r\n", 0) == 0);
    CHECK(req.find("\r\nHost: 127.0.0.1:" + std::to_string(srv.port()) + "\r\n") != std::string::npos);
    CHECK(req.find("\r\nAccept: application/json\r\n") != std::string::npos);
    CHECK(req.find("\r\nUser-Agent: gslbd\r\n") != std::string::npos);
}

TEST_CASE("HttpClient: a POST sends its body; a non-2xx status is an answer, with its body") {
    OneShotServer srv("HTTP/1.1 401 Unauthorized\r\nContent-Length: 3\r\nConnection: close\r\n\r\nno\n");
    Loop loop;
    HttpClient c(loop.base, "127.0.0.1", srv.port());
    HttpAnswer got = loop.exchange(c, EVHTTP_REQ_POST, "/v1/sites/east/report",
                                   {{"Content-Type", "application/json"}}, "{\"cpu\": 1}");
    CHECK(got.status == 401);
    CHECK(got.body == "no\n");
    CHECK(srv.request().rfind("POST /v1/sites/east/report HTTP/1.1\r\n", 0) == 0);
}

TEST_CASE("HttpClient: no listener, no answer in time, a body over the cap: status 0 and why") {
    Loop loop;
    SUBCASE("refused") {
        int port;
        {
            OneShotServer gone("x");
            port = gone.port();
        }  // closed: nothing listens there now
        HttpClient c(loop.base, "127.0.0.1", port);
        HttpAnswer got = loop.exchange(c, EVHTTP_REQ_GET, "/");
        CHECK(got.status == 0);
    }
    SUBCASE("timeout") {
        OneShotServer silent("");
        HttpClient c(loop.base, "127.0.0.1", silent.port());
        c.setTimeout(0.2);
        HttpAnswer got = loop.exchange(c, EVHTTP_REQ_GET, "/");
        CHECK(got.status == 0);
        CHECK(got.failed);
        CHECK(got.error == EVREQ_HTTP_TIMEOUT);
    }
    SUBCASE("too large") {
        OneShotServer big("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + std::string(100, 'x'));
        HttpClient c(loop.base, "127.0.0.1", big.port());
        c.setMaxBody(10);
        HttpAnswer got = loop.exchange(c, EVHTTP_REQ_GET, "/");
        CHECK(got.failed);
        CHECK(got.error == EVREQ_HTTP_DATA_TOO_LONG);
    }
}

TEST_CASE("HttpClient: cancel() and the destructor call nothing back") {
    OneShotServer silent("");
    Loop loop;
    int calls = 0;
    {
        HttpClient c(loop.base, "127.0.0.1", silent.port());
        c.setTimeout(0.2);
        REQUIRE(c.send(EVHTTP_REQ_GET, "/", {}, "", [&](const HttpAnswer&) { ++calls; }));
        c.cancel();
        CHECK(c.inFlight() == 0);
        REQUIRE(c.send(EVHTTP_REQ_GET, "/", {}, "", [&](const HttpAnswer&) { ++calls; }));
    }  // destroyed with a request in flight
    bool never = false;
    loop.runUntil(never, 0.5);  // past the timeout: a stray callback would have run by now
    CHECK(calls == 0);
}

TEST_CASE("toTimeval and wallMs (server/base/clock.hpp), the control thread's one copy of each") {
    timeval a = toTimeval(1.25);
    CHECK(a.tv_sec == 1);
    CHECK(a.tv_usec == 250000);
    timeval b = toTimeval(0.0005);
    CHECK(b.tv_sec == 0);
    CHECK(b.tv_usec == 500);
    timeval n = toTimeval(-3);  // a deadline already past fires at once
    CHECK(n.tv_sec == 0);
    CHECK(n.tv_usec == 0);
    const int64_t t = int64_t(time(nullptr)) * 1000;
    CHECK(wallMs() >= t - 1000);
    CHECK(wallMs() <= t + 2000);
}

TEST_CASE(
    "monotonicMs, monotonicUs and monotonicNs (server/base/clock.hpp): one clock, CLOCK_MONOTONIC, at three "
    "resolutions") {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    const int64_t before = int64_t(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
    const int64_t us = monotonicUs();
    const int64_t ms = monotonicMs();
    CHECK(us >= before);
    CHECK(us - before < 1000000);
    // The coarse read is the last tick's: behind the precise one by at most a tick (10 ms at HZ=100).
    CHECK(ms * 1000 <= monotonicUs());
    CHECK(ms * 1000 > us - 20000);
    // steady_clock reads the same clock.
    const int64_t steady = std::chrono::duration_cast<std::chrono::microseconds>(
                               std::chrono::steady_clock::now().time_since_epoch())
                               .count();
    CHECK(steady >= us);
    CHECK(steady - us < 1000000);
    // The nanosecond read (RRL, AF_XDP) is the microsecond read's clock, finer.
    const int64_t ns = monotonicNs();
    CHECK(ns / 1000 >= steady);
    CHECK(ns / 1000 - steady < 1000000);
    CHECK(monotonicUs() >= ns / 1000);
}

TEST_CASE("PollTimers: the round and the deadline fire on their own; clearDeadline stops the deadline") {
    Loop loop;
    int rounds = 0, deadlines = 0, roundsAtDeadline = 0;
    bool done = false;
    PollTimers* tp = nullptr;
    PollTimers t(
        loop.base,
        [&] {
            ++rounds;
            tp->deadlineIn(0.05);
            if (rounds == 1) {  // ends in time; the next round comes after its deadline would have fired
                tp->clearDeadline();
                tp->nextRoundIn(0.15);
            }
        },
        [&] {
            ++deadlines;
            roundsAtDeadline = rounds;
            done = true;
        });
    tp = &t;
    t.nextRoundIn(0);
    loop.runUntil(done, 5);
    REQUIRE(done);
    CHECK(deadlines == 1);
    CHECK(roundsAtDeadline == 2);  // the first round's deadline never fired
}
