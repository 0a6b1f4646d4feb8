// `gslbctl status`: /v1/status as text (tools/gslbctl/status.cpp), here its [server] xdp lines.
#include <doctest/doctest.h>

#include "tools/gslbctl/status.hpp"

using namespace gslb::ctl;
using J = nlohmann::json;

TEST_CASE("status: one XDP line per interface, serving or fell back with the reason") {
    J s = J::parse(R"json({
      "zones": [{"name": "gslb.example.com.", "serial": 1, "records": 4}],
      "reloads": {"sighup": {"ok": 0, "failed": 0}, "api": {"ok": 1, "failed": 0}},
      "xdp": [{"name": "eth0", "state": "serving", "reason": null, "sockets": 4, "mode": "zero-copy",
               "queries": 1520, "responses": 1519, "dropped": {"tx_full": 0}},
              {"name": "eth1", "state": "fell back", "reason": "no such interface (No such device)",
               "sockets": 0, "mode": null, "queries": 0, "responses": 0, "dropped": null}]
})json");
    std::string text = renderStatus(s);
    CHECK(text.find("RELOADS: SIGHUP 0 ok, 0 failed; API 1 ok, 0 failed\n\n"
                    "XDP: eth0 serving, 4 AF_XDP socket(s), zero-copy mode, 1520 queries, 1519 responses\n"
                    "XDP: eth1 fell back: no such interface (No such device)\n") != std::string::npos);
}

TEST_CASE("status: an XDP interface that stopped serving says why; a listen warning has its own line") {
    J s = J::parse(R"json({
      "zones": [{"name": "gslb.example.com.", "serial": 1, "records": 4}],
      "xdp": [{"name": "gx0", "state": "not serving", "reason": "the interface is gone", "warning": null,
               "sockets": 1, "mode": "copy", "queries": 3, "responses": 3, "dropped": {"tx_full": 0}},
              {"name": "gx1", "state": "serving", "reason": null, "sockets": 1, "mode": "copy",
               "warning": "none of the listen addresses (127.0.0.1:53) is an address of gx1 (10.0.0.1)",
               "queries": 0, "responses": 0, "dropped": {"tx_full": 0}}]
})json");
    std::string text = renderStatus(s);
    CHECK_MESSAGE(
        text.find("XDP: gx0 not serving: the interface is gone\n"
                  "XDP: gx1 serving, 1 AF_XDP socket(s), copy mode, 0 queries, 0 responses\n"
                  "XDP: gx1 warning: none of the listen addresses (127.0.0.1:53) is an address of gx1 "
                  "(10.0.0.1)\n") != std::string::npos,
        text);
}

TEST_CASE("status: no XDP line without [server] xdp, nor from a server that predates it") {
    J s = J::parse(R"({"zones": [{"name": "a.", "serial": 1, "records": 2}], "xdp": []})");
    CHECK(renderStatus(s).find("XDP") == std::string::npos);
    s.erase("xdp");
    CHECK(renderStatus(s).find("XDP") == std::string::npos);
}

TEST_CASE("status: probe ownership in the CHECK column: probed here, or the verdict of the owners") {
    J s = J::parse(R"json({"zones": [], "sites": [{"name": "east"}],
      "services": [
        {"site": "east", "address": "192.0.2.10", "health": "up", "enabled": true,
         "check": {"type": "tcp", "state": "up", "probe": {"here": true, "owners": ["http://192.0.2.53:8053"]}}},
        {"site": "east", "address": "192.0.2.11", "health": "up", "enabled": true,
         "check": {"type": "tcp", "state": "up", "probe": {"here": false, "owners": ["http://192.0.2.54:8053"]}}},
        {"site": "east", "address": "192.0.2.12", "health": "up", "enabled": true,
         "check": {"type": "tcp", "state": "up", "probe": null}}]})json");
    std::string text = renderStatus(s);
    CHECK(text.find("tcp:up [probed here]") != std::string::npos);
    CHECK(text.find("tcp:up [verdict of http://192.0.2.54:8053]") != std::string::npos);
    // Without etcd (probe null) every member probes itself: nothing added.
    CHECK(text.find("192.0.2.12  up") != std::string::npos);
    CHECK(text.find("[probed here]") == text.rfind("[probed here]"));
}
