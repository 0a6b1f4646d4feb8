// server/responder/client_limits.cpp: per-client counts for tcp_max_connections_per_client and
// axfr_max_concurrent_per_client.
#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <netinet/in.h>

#include <string>

#include "server/responder/client_limits.hpp"

using gslb::server::ClientCounter;

namespace {

ClientCounter::Key key(const std::string& ip) {
    sockaddr_storage ss{};
    auto* s4 = reinterpret_cast<sockaddr_in*>(&ss);
    auto* s6 = reinterpret_cast<sockaddr_in6*>(&ss);
    if (inet_pton(AF_INET, ip.c_str(), &s4->sin_addr) == 1) {
        s4->sin_family = AF_INET;
    } else {
        REQUIRE(inet_pton(AF_INET6, ip.c_str(), &s6->sin6_addr) == 1);
        s6->sin6_family = AF_INET6;
    }
    return ClientCounter::keyOf(reinterpret_cast<const sockaddr*>(&ss));
}

}  // namespace

TEST_CASE("a client holds at most its cap; giving one back makes room; others are counted apart") {
    ClientCounter c;
    auto a = key("192.0.2.1"), b = key("192.0.2.2");
    CHECK(c.acquire(a, 2));
    CHECK(c.acquire(a, 2));
    CHECK_FALSE(c.acquire(a, 2));
    CHECK(c.held(a) == 2);
    CHECK(c.acquire(b, 2));  // the neighbour in the same /24 is another client
    c.release(a);
    CHECK(c.acquire(a, 2));
    c.release(a);
    c.release(a);
    c.release(a);  // one too many: ignored, never negative
    CHECK(c.held(a) == 0);
    CHECK(c.acquire(a, 1));
    CHECK_FALSE(c.acquire(a, 1));
}

TEST_CASE("an IPv6 client is its /64; IPv4-mapped IPv6 is the IPv4 address") {
    CHECK(key("2001:db8:1:2::1") == key("2001:db8:1:2:ffff::9"));
    CHECK_FALSE(key("2001:db8:1:2::1") == key("2001:db8:1:3::1"));
    CHECK(key("::ffff:192.0.2.7") == key("192.0.2.7"));
    CHECK_FALSE(key("192.0.2.7") == key("192.0.2.8"));
    ClientCounter c;
    CHECK(c.acquire(key("2001:db8:1:2::1"), 1));
    CHECK_FALSE(c.acquire(key("2001:db8:1:2::2"), 1));
}

TEST_CASE("a client without an address (not IPv4 or IPv6) is never turned away") {
    ClientCounter c;
    ClientCounter::Key none = ClientCounter::keyOf(nullptr);
    CHECK(none.hi == 0);
    for (int i = 0; i < 5; ++i) CHECK(c.acquire(none, 1));
}
