// A loopback HTTP server and an event loop for the control thread's HTTP tests (test_http_client.cpp): the
// server answers each connection with fixed bytes, on a thread of its own.
#pragma once
#include <doctest/doctest.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <mutex>
#include <string>
#include <thread>

#include "server/base/http_client.hpp"

namespace st {

using gslb::server::HttpAnswer;
using gslb::server::HttpClient;

// Answers each connection with `response` (raw bytes; empty: reads the request and never answers).
class OneShotServer {
  public:
    explicit OneShotServer(std::string response) : response_(std::move(response)) {
        fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        REQUIRE(bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
        socklen_t len = sizeof a;
        getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
        port_ = ntohs(a.sin_port);
        REQUIRE(listen(fd_, 4) == 0);
        REQUIRE(pipe(stop_) == 0);
        thread_ = std::thread([this] { run(); });
    }
    ~OneShotServer() {
        (void)!::write(stop_[1], "x", 1);
        thread_.join();
        close(fd_);
        close(stop_[0]);
        close(stop_[1]);
    }
    int port() const { return port_; }
    /// For the connections that follow.
    void setResponse(std::string r) {
        std::lock_guard<std::mutex> g(m_);
        response_ = std::move(r);
    }
    std::string request() {
        std::lock_guard<std::mutex> g(m_);
        return request_;
    }

  private:
    bool wait(int fd) {
        pollfd p[2] = {{fd, POLLIN, 0}, {stop_[0], POLLIN, 0}};
        return poll(p, 2, 5000) > 0 && !(p[1].revents & POLLIN);
    }
    void run() {
        while (wait(fd_)) {
            int c = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
            if (c < 0) continue;
            std::string req;
            char buf[4096];
            while (req.find("\r\n\r\n") == std::string::npos && wait(c)) {
                ssize_t n = read(c, buf, sizeof buf);
                if (n <= 0) break;
                req.append(buf, size_t(n));
            }
            std::string response;
            {
                std::lock_guard<std::mutex> g(m_);
                request_ = req;
                response = response_;
            }
            if (response.empty()) {
                pollfd p{stop_[0], POLLIN, 0};
                poll(&p, 1, 5000);  // silent until the test is over
            } else {
                (void)!::send(c, response.data(), response.size(), MSG_NOSIGNAL);
            }
            close(c);
        }
    }
    std::string response_;
    int fd_ = -1, port_ = 0, stop_[2] = {-1, -1};
    std::thread thread_;
    std::mutex m_;
    std::string request_;
};

struct Loop {
    event_base* base = event_base_new();
    ~Loop() { event_base_free(base); }
    // Runs until `done` or `seconds` have passed.
    void runUntil(const bool& done, double seconds) {
        double waited = 0;
        while (!done && waited < seconds) {
            timeval tv{0, 20000};
            event_base_loopexit(base, &tv);
            event_base_dispatch(base);
            waited += 0.02;
        }
    }
    // Sends one request on `c` and runs until its answer (at most 5 s): in flight from the send until the
    // callback, which runs once.
    HttpAnswer exchange(HttpClient& c, evhttp_cmd_type method, const std::string& uri,
                        const HttpClient::Headers& headers = {}, const std::string& body = "") {
        bool done = false;
        int calls = 0;
        HttpAnswer got;
        REQUIRE(c.send(method, uri, headers, body, [&](const HttpAnswer& a) {
            got = a;
            done = true;
            ++calls;
        }));
        CHECK(c.inFlight() == 1);
        runUntil(done, 5);
        REQUIRE(done);
        CHECK(calls == 1);
        CHECK(c.inFlight() == 0);
        return got;
    }
};

}  // namespace st
