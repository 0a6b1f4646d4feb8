// server/net/bind_error.hpp: what a failed bind says.
#include <doctest/doctest.h>

#include <cerrno>

#include "server/conf/config.hpp"
#include "server/net/bind_error.hpp"

using namespace gslb::server;

TEST_CASE("bind: permission denied on a privileged port says what lets gslbd bind it") {
    // "127.0.0.1:53 (udp): bind: Permission denied" said nothing of root, the capability or [server] user.
    ListenAddr a;
    REQUIRE(parseListen("127.0.0.1:53", a));
    CHECK(
        bindError(a, "udp", EACCES, 1024) ==
        "127.0.0.1:53 (udp): bind: Permission denied: port 53 is below 1024 and needs root or "
        "CAP_NET_BIND_SERVICE: start gslbd as root with [server] user = \"gslbd\" (it binds, then drops to "
        "that user), run it from the shipped systemd unit (which grants the capability), give the binary the "
        "capability (setcap cap_net_bind_service=+ep), or listen on a port of 1024 or above");
    REQUIRE(parseListen("[::1]:853", a));
    CHECK(bindError(a, "tcp", EACCES, 1024).find("port 853 is below 1024") != std::string::npos);
    // A port the kernel lets anyone bind (net.ipv4.ip_unprivileged_port_start), or another error: errno only.
    REQUIRE(parseListen("127.0.0.1:53", a));
    CHECK(bindError(a, "udp", EACCES, 0) == "127.0.0.1:53 (udp): bind: Permission denied");
    CHECK(bindError(a, "udp", EADDRNOTAVAIL, 1024) ==
          "127.0.0.1:53 (udp): bind: Cannot assign requested address");
}
