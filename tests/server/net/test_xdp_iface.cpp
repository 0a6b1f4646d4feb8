// server/net/xdp/iface.cpp: what the AF_XDP fast path says about an interface after the start (linkProblem,
// for Path::recheck) and about listen addresses it can never see a query for (listenProblem).
#include <arpa/inet.h>
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "server/conf/config.hpp"
#include "server/net/xdp/path.hpp"

using namespace gslb::server;
using namespace gslb::server::xdp;

namespace {

std::vector<ListenAddr> listen(std::initializer_list<const char*> texts) {
    std::vector<ListenAddr> out;
    for (const char* t : texts) {
        ListenAddr l;
        REQUIRE_MESSAGE(parseListen(t, l), t);
        out.push_back(l);
    }
    return out;
}

std::vector<sockaddr_storage> addrs(std::initializer_list<const char*> texts) {
    std::vector<sockaddr_storage> out;
    for (const char* t : texts) {
        sockaddr_storage ss{};
        if (inet_pton(AF_INET, t, &reinterpret_cast<sockaddr_in&>(ss).sin_addr) == 1)
            ss.ss_family = AF_INET;
        else if (inet_pton(AF_INET6, t, &reinterpret_cast<sockaddr_in6&>(ss).sin6_addr) == 1)
            ss.ss_family = AF_INET6;
        else
            FAIL(t);
        out.push_back(ss);
    }
    return out;
}

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("linkProblem: serving while the interface, its state and gslbd's program are as attached") {
    LinkFacts f;
    f.indexByName = 7;
    f.progId = 42;
    CHECK(linkProblem("gx0", 7, 42, f).empty());
    f.indexByName = 0;  // renamed: the index still names it, so it still serves
    CHECK(linkProblem("gx0", 7, 42, f).empty());
}

TEST_CASE("linkProblem: gone, gone and made again, down, no carrier, detached, replaced") {
    LinkFacts f;
    f.progId = 42;
    f.exists = false;
    CHECK(linkProblem("gx0", 7, 42, f) == "the interface is gone");
    f.indexByName = 9;  // `ip link add gx0 ...` again: a new interface, the sockets are the old one's
    std::string again = linkProblem("gx0", 7, 42, f);
    CHECK(has(again, "a new gx0 (index 9, was 7) has its name: restart gslbd"));
    f = LinkFacts{};
    f.progId = 42;
    f.up = false;
    f.carrier = false;  // down says down, not "no carrier" (IFF_RUNNING falls with IFF_UP)
    CHECK(has(linkProblem("gx0", 7, 42, f), "the interface is down; the fast path serves again by itself"));
    f.up = true;
    CHECK(has(linkProblem("gx0", 7, 42, f), "no carrier"));
    f.carrier = true;
    f.progId = 0;
    CHECK(has(linkProblem("gx0", 7, 42, f),
              "gslbd's XDP program was detached from gx0 by someone else (bpftool link detach?): restart"));
    f.progId = 77;
    CHECK(has(linkProblem("gx0", 7, 42, f),
              "another XDP program (id 77) is attached to gx0 in place of gslbd's"));
    // the interface's state first: a deleted interface has no program either
    f.exists = false;
    f.progId = 0;
    CHECK(linkProblem("gx0", 7, 42, f) == "the interface is gone");
}

TEST_CASE("listenProblem: a listen address of the interface, or a wildcard of a family it has, is enough") {
    auto both = addrs({"10.99.0.1", "fd00::1", "fe80::1"});
    CHECK(listenProblem("gx0", listen({"10.99.0.1:53"}), both).empty());
    CHECK(listenProblem("gx0", listen({"127.0.0.1:53", "[fd00::1]:53"}), both).empty());
    CHECK(listenProblem("gx0", listen({"0.0.0.0:53"}), both).empty());
    CHECK(listenProblem("gx0", listen({"[::]:53"}), addrs({"fe80::1"})).empty());
}

TEST_CASE("listenProblem: none of them: the addresses on both sides and what to listen on instead") {
    auto both = addrs({"10.99.0.1", "fd00::1"});
    std::string p = listenProblem("gx0", listen({"127.0.0.1:5300", "[::1]:5300"}), both);
    CHECK(p ==
          "none of the listen addresses (127.0.0.1:5300, [::1]:5300) is an address of gx0 (10.99.0.1, "
          "fd00::1): "
          "the fast path takes only queries to a listen address, and clients reach it at its own; listen on "
          "one of "
          "them (or on 0.0.0.0:5300 / [::]:5300)");
    // a wildcard of the other family only
    CHECK(!listenProblem("gx0", listen({"[::]:53"}), addrs({"10.99.0.1"})).empty());
    CHECK(!listenProblem("gx0", listen({"0.0.0.0:53"}), addrs({"fd00::1"})).empty());
    // an interface without an address sees nothing, wildcard or not
    CHECK(has(listenProblem("gx0", listen({"0.0.0.0:53"}), {}), "is an address of gx0 (it has none)"));
}

TEST_CASE("interfaceAddresses: lo holds 127.0.0.1; an interface that does not exist holds nothing") {
    auto lo = interfaceAddresses("lo");
    bool found = false;
    for (const auto& a : lo)
        if (a.ss_family == AF_INET)
            found =
                found || reinterpret_cast<const sockaddr_in&>(a).sin_addr.s_addr == htonl(INADDR_LOOPBACK);
    CHECK(found);
    CHECK(interfaceAddresses("no-such-if0").empty());
}
