// [source.NAME], a site's `sources` and mappings, a service's `connections` (doc/design.md "Metric sources"):
// what loads, and each refusal with its file, line and key.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <memory>

#include "server/conf/config.hpp"
#include "server/conf/unread_settings.hpp"
#include "tests/server/helpers.hpp"

using namespace gslb::server;

namespace {

std::string config(const std::string& sources, const std::string& east, const std::string& svcExtra = "",
                   const std::string& policy = "[\"health\", \"least-connections\", \"cpu\", \"random\"]") {
    return "[server]\nlisten = [\"127.0.0.1:10053\"]\n\n[[zone]]\nname = \"t.test.\"\nfile = \"t.zone\"\n\n" +
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
                                           "'haproxy_frontend_current_sessions{proxy=\"www\"}' }\n"
                                           "capacity = 1000\n"));  // least-connections reads capacity
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
    st::Written w =
        st::writeConfig(config(kLb, "cpu = { source = \"east-lb\", metric = 'x' }\n", "capacity = 10\n",
                               "[\"health\", \"least-connections\", \"random\"]"));
    Config cfg;
    std::string error;
    REQUIRE_MESSAGE(loadConfig(w.config, cfg, error), error);
    auto u = unreadSettings(cfg);
    REQUIRE(u.size() == 1);
    CHECK(u[0].message.find("[site.east] cpu is mapped but not read") == 0);
}

TEST_CASE("SharedMapping: absent reads as an unset MappingConf, set is kept once and shared by copies") {
    // Unset: the defaults, from one object for every service without the key (no heap per service).
    SharedMapping none, other;
    CHECK_FALSE(none->set);
    CHECK(none->source.empty());
    CHECK(none->aggregate == "sum");
    CHECK(none->scale == 1);
    CHECK(&*none == &*other);
    static_assert(sizeof(SharedMapping) <= sizeof(std::shared_ptr<const MappingConf>),
                  "a service's mapping is a pointer: 80,000 services mostly have none");
    // An unset MappingConf is absent whatever else it holds.
    MappingConf half;
    half.source = "east-lb";
    none = half;
    CHECK(none->source.empty());
    CHECK(&*none == &*other);
    // Set: kept as given; a copy points at the same one.
    MappingConf m;
    m.set = true;
    m.source = "east-lb";
    m.metric = "sessions{proxy=\"www\"}";
    m.aggregate = "max";
    m.scale = 2;
    m.line = 7;
    SharedMapping a;
    a = m;
    SharedMapping b = a;
    CHECK(a->set);
    CHECK(a->metric == "sessions{proxy=\"www\"}");
    CHECK(a->aggregate == "max");
    CHECK(a->scale == 2);
    CHECK(a->line == 7);
    CHECK(&*a == &*b);
    CHECK(&*a != &*other);
    // Reassigned (a reload's config is a new one): the copy keeps what it had.
    MappingConf n = m;
    n.metric = "other";
    a = n;
    CHECK(a->metric == "other");
    CHECK(b->metric == "sessions{proxy=\"www\"}");
    a = MappingConf{};
    CHECK_FALSE(a->set);
    CHECK(&*a == &*other);
    CHECK(b->set);
}

TEST_CASE(
    "SharedMapping in a loaded config: only the services that map `connections` hold one; copies share") {
    std::string svc = "[[hostname.\"www.t.test.\".service]]\naddress = \"192.0.2.{0}\"\nsite = \"{1}\"\n{2}";
    std::string text =
        "[server]\nlisten = [\"127.0.0.1:10053\"]\n\n[[zone]]\nname = \"t.test.\"\nfile = "
        "\"t.zone\"\n\n" +
        kLb + "\n[site.east]\n[site.west]\n[site.south]\n\n[hostname.\"www.t.test.\"]\n" +
        fmt::format(fmt::runtime(svc), 1, "east",
                    "connections = { source = \"east-lb\", metric = 'conns', rate = true }\n") +
        fmt::format(fmt::runtime(svc), 2, "west", "") + fmt::format(fmt::runtime(svc), 3, "south", "");
    st::Written w = st::writeConfig(text);
    Config cfg;
    std::string error;
    REQUIRE_MESSAGE(loadConfig(w.config, cfg, error), error);
    const auto& s = cfg.hostnames.at(0).services;
    REQUIRE(s.size() == 3);
    CHECK(s[0].connections->set);
    CHECK(s[0].connections->source == "east-lb");
    CHECK(s[0].connections->metric == "conns");
    CHECK(s[0].connections->rate);
    CHECK(s[0].connections->line == st::lineOf(text, "connections ="));
    CHECK_FALSE(s[1].connections->set);
    CHECK(&*s[1].connections == &*s[2].connections);  // the one unset object
    Config copy = cfg;                                // as `gslbd --check` copies it
    CHECK(&*copy.hostnames[0].services[0].connections == &*s[0].connections);
}
