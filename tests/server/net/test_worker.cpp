// A worker's threads (server/net/worker.hpp): start() and stop() in any timing. A SIGTERM that came while
// the loop thread had not yet entered its loop (a loaded machine, a stop right after the start) used to be
// lost: libevent's event_base_loop() clears a break asked before it runs, so the thread then waited in
// epoll_wait for ever and gslbd never exited (seen under syslog in the end-to-end tests, 1 run in 20).
#include <doctest/doctest.h>
#include <event2/thread.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>

#include "server/net/worker.hpp"
#include "tests/server/helpers.hpp"

using namespace gslb::server;

namespace {

// 127.0.0.1 on a port the kernel picks: the UDP and TCP sockets get one each, which is all a stop needs.
ListenAddr loopbackAnyPort() {
    ListenAddr l;
    l.text = "127.0.0.1:0";
    auto* in = reinterpret_cast<sockaddr_in*>(&l.addr);
    in->sin_family = AF_INET;
    in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    l.len = sizeof(sockaddr_in);
    return l;
}

}  // namespace

TEST_CASE("a worker stopped at once after its start stops: the loop thread's break is not lost") {
    evthread_use_pthreads();  // as gslbd's main does before any loop is made
    Shared shared;
    shared.holder.publish(st::snapshot(st::baseConfig("")));
    // Each round starts a worker and stops it at once, usually before its loop thread has run at all; the
    // old stop hung in the first few rounds. A round takes about a millisecond; 10 s is a hang.
    for (int round = 0; round < 200; ++round) {
        auto stopped = std::async(std::launch::async, [&] {
            Worker w(0, shared);
            std::string error;
            REQUIRE_MESSAGE(w.open({loopbackAnyPort()}, error), error);
            w.start();
            w.stop();
        });
        if (stopped.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
            // The worker's threads cannot be joined or destroyed: report and leave at once.
            std::fprintf(stderr, "round %d: Worker::stop() did not return in 10 s\n", round);
            std::fflush(stderr);
            std::_Exit(1);
        }
        stopped.get();
    }
}
