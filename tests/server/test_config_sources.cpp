// [source.NAME], a site's `sources` and mappings, a service's `connections` (issue 12): what loads, and
// each refusal with its file, line and key.
#include <doctest/doctest.h>

#include "server/config.hpp"
#include "server/unread_settings.hpp"
#include "tests/server/helpers.hpp"

using namespace gslb::server;

namespace {

std::string config(const std::string& sources, const std::string& east, const std::string& svcExtra = "",
                   const std::string& policy = "[\"health\", \"least-connections\", \"cpu\", \"random\"]") {
    return "[server]\nlisten = [\"127.0.0.1:5353\"]\n\n[[zone]]\nname = \"t.test.\"\nfile = \"t.zone\"\n\n" +
           sources + "\n[site.east]\n" + east +
           "\n[site.west]\n[site.south]\n\n[hostname.\"www.t.test.\"]\npolicy = " + policy + "\n" +
           st::threeServices("www.t.test.", svcExtra);
}

const std::string kLb =
    "[source.east-lb]\nurl = \"http://127.0.0.1:8405/metrics\"\ninterval = 1\ntimeout = 0.5\npreset = "
    "\"haproxy\"\n"
    "[source.prom]\ntype = \"prometheus\"\nurl = \"http://[::1]:9090\"\n";

}  // namespace

TEST_CASE("sources: a scraped and a prometheus source with presets and explicit mappings") {
    st::Written w = st::writeConfig(config(kLb,
                                           "sources = [\"east-lb\"]\ncpu = { source = \"prom\", query = '100 "
                                           "- avg(rate(x[30s]))', label = \"site\" }\n",
                                           "connections = { source = \"east-lb\", metric = "
                                           "'haproxy_frontend_current_sessions{proxy=\"www\"}' }\n"));
    Config cfg;
    std::string error;
    REQUIRE_MESSAGE(loadConfig(w.config, cfg, error), error);
    const SourceConf& lb = cfg.sources.at("east-lb");
    CHECK(lb.host == "127.0.0.1");
    CHECK(lb.port == 8405);
    CHECK(lb.path == "/metrics");
    CHECK(lb.interval == 1);
    const SourceConf& prom = cfg.sources.at("prom");
    CHECK(prom.host == "::1");
    CHECK(prom.port == 9090);
    CHECK(cfg.sites[0].sources == std::vector<std::string>{"east-lb"});
    CHECK(cfg.sites[0].cpu.set);
    CHECK(cfg.sites[0].cpu.label == "site");
    CHECK(cfg.hostnames[0].services[0].connections->metric ==
          "haproxy_frontend_current_sessions{proxy=\"www\"}");
    CHECK(unreadSettings(cfg).empty());
}

TEST_CASE("sources: refusals name file, line and key") {
    const std::pair<std::string, std::string> bad[] = {
        {config("[source.a]\nurl = \"https://127.0.0.1/metrics\"\n", ""),
         "[source.a] url: https is not supported for metric sources (use http)"},
        {config("[source.a]\nurl = \"http://lb.example/metrics\"\n", ""),
         "[source.a] url: \"lb.example\" is not an IPv4/IPv6 address (or localhost)"},
        {config("[source.a]\nurl = \"http://127.0.0.1:1\"\npreset = \"f5\"\n", ""),
         "[source.a] preset: unknown preset \"f5\" (known: haproxy, node, nginx, envoy)"},
        {config("[source.a]\nurl = \"http://127.0.0.1:1\"\ninterval = 1\ntimeout = 2\n", ""),
         "[source.a] timeout: 2 s is longer than the interval (1 s)"},
        {config(kLb, "sources = [\"nope\"]\n"),
         "[site.east] sources: unknown source \"nope\" (no [source.nope])"},
        {config(kLb, "cpu = { source = \"east-lb\" }\n"),
         "[site.east] cpu metric: is required for a scraped source (a selector)"},
        {config(kLb, "cpu = { source = \"east-lb\", metric = 'x{a=~\"b\"}' }\n"),
         "[site.east] cpu metric: label a: only = and != matchers are supported"},
        {config(kLb, "cpu = { source = \"prom\", metric = 'x' }\n"),
         "[site.east] cpu query: is required for a prometheus source (PromQL)"},
        {config(kLb, "sessions_used = { source = \"east-lb\", metric = 'x' }\n"),
         "[site.east]: sessions_used and sessions_max are mapped together"},
        {config(kLb, "", "connections = { source = \"east-lb\", metric = 'x', wieght = 1 }\n"),
         "hostname \"www.t.test.\" service 1 connections: unknown key \"wieght\""},
    };
    for (const auto& [text, want] : bad) {
        std::string err = st::configError(text);
        CHECK_MESSAGE(err.find(want) != std::string::npos, err);
    }
}

TEST_CASE("sources: an explicit mapping no stage reads is warned about") {
    st::Written w = st::writeConfig(config(kLb, "cpu = { source = \"east-lb\", metric = 'x' }\n", "",
                                           "[\"health\", \"least-connections\", \"random\"]"));
    Config cfg;
    std::string error;
    REQUIRE_MESSAGE(loadConfig(w.config, cfg, error), error);
    auto u = unreadSettings(cfg);
    REQUIRE(u.size() == 1);
    CHECK(u[0].message.find("[site.east] cpu is mapped but not read") == 0);
}
