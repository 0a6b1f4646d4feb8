// loadConfig: every refusal names the file, the line and the key's path (doc/design.md "The config file").
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <cstring>

#include "server/conf/config.hpp"
#include "server/daemon/check.hpp"
#include "server/net/xdp/path.hpp"
#include "tests/server/helpers.hpp"

using namespace gslb::server;

namespace {

const std::string kWww =
    "[hostname.\"www.t.test.\"]\npolicy = [\"health\", \"least-connections\", \"random\"]\n";

}  // namespace

TEST_CASE("a good config loads with its values and the [defaults] inherited") {
    std::string text = st::baseConfig(
        "[defaults]\nttl = 20\nanswers = 2\nfallback = \"none\"\nmax_age = 30\n\n"
        "[check.web]\ntype = \"http\"\npath = \"/health\"\n\n" +
        kWww + "factor = 0.25\n" + st::threeServices("www.t.test.", "weight = 3\ncheck = \"web\"\n"));
    st::Written w = st::writeConfig(text);
    Config cfg;
    std::string error;
    REQUIRE_MESSAGE(loadConfig(w.config, cfg, error), error);
    REQUIRE(cfg.hostnames.size() == 1);
    const auto& h = cfg.hostnames[0];
    CHECK(h.name == "www.t.test.");
    CHECK(h.policy.ttl == 20);
    CHECK(h.policy.answers == 2);
    CHECK(h.policy.fallback == "none");
    CHECK(h.policy.maxAge == 30);
    CHECK(h.policy.factor == 0.25);
    CHECK(h.policy.policy == std::vector<std::string>{"health", "least-connections", "random"});
    REQUIRE(h.services.size() == 3);
    CHECK(h.services[1].address == "192.0.2.2");
    CHECK(h.services[1].site == "west");
    CHECK(h.services[1].weight == 3);
    CHECK(h.services[1].check == "web");
    CHECK(h.services[1].line ==
          st::lineOf(text, "[[hostname.\"www.t.test.\".service]]\naddress = \"192.0.2.2"));
    CHECK(cfg.sites.size() == 3);
    CHECK(cfg.zones.at(0).file == w.dir + "/t.zone");
}

TEST_CASE("ttl_min: as written, else ttl / 10 and at least 1 s") {
    PolicyConf p;
    p.ttl = 30;
    CHECK(p.effectiveTtlMin() == 3);
    p.ttl = 10;
    CHECK(p.effectiveTtlMin() == 1);
    p.ttl = 5;
    CHECK(p.effectiveTtlMin() == 1);
    p.ttl = 300;
    CHECK(p.effectiveTtlMin() == 30);
    p.ttl = 0;
    CHECK(p.effectiveTtlMin() == 0);
    p.ttl = 30;
    p.ttlMin = 6;
    CHECK(p.effectiveTtlMin() == 6);
    p.ttlMin = 0;
    CHECK(p.effectiveTtlMin() == 0);
}

TEST_CASE("service addresses and an address fallback are parsed once, at load, into their rdata") {
    std::string text = st::baseConfig(
        "[defaults]\nfallback = \"2001:db8::53\"\n\n"
        "[hostname.\"www.t.test.\"]\nfallback = \"192.0.2.99\"\n"
        "[[hostname.\"www.t.test.\".service]]\naddress = \"192.0.2.1\"\nsite = \"east\"\n"
        "[[hostname.\"www.t.test.\".service]]\naddress = \"2001:DB8::1\"\nsite = \"west\"\n"
        "[hostname.\"v6.t.test.\"]\n"
        "[[hostname.\"v6.t.test.\".service]]\naddress = \"2001:db8::2\"\nsite = \"east\"\n"
        "[hostname.\"all.t.test.\"]\nfallback = \"all\"\n"
        "[[hostname.\"all.t.test.\".service]]\naddress = \"192.0.2.3\"\nsite = \"east\"\n");
    Config cfg = st::loadedConfig(text);
    REQUIRE(cfg.hostnames.size() == 3);
    auto host = [&](const std::string& name) -> const HostnameConf& {
        for (const auto& h : cfg.hostnames)
            if (h.name == name) return h;
        FAIL("no hostname " << name);
        return cfg.hostnames[0];
    };
    const auto& www = host("www.t.test.");
    REQUIRE(www.services.size() == 2);
    CHECK(www.services[0].rdlen == 4);
    CHECK(std::memcmp(www.services[0].rdata, "\xc0\x00\x02\x01", 4) == 0);
    CHECK(www.services[1].address == "2001:DB8::1");  // as written
    CHECK(www.services[1].rdlen == 16);
    CHECK(std::memcmp(www.services[1].rdata, "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x01", 16) == 0);
    CHECK(www.policy.fallbackLen == 4);
    CHECK(std::memcmp(www.policy.fallbackRdata, "\xc0\x00\x02\x63", 4) == 0);
    // Inherited from [defaults]: parsed there too.
    CHECK(host("v6.t.test.").policy.fallback == "2001:db8::53");
    CHECK(host("v6.t.test.").policy.fallbackLen == 16);
    CHECK(host("v6.t.test.").policy.fallbackRdata[15] == 0x53);
    CHECK(host("all.t.test.").policy.fallbackLen == 0);
}

TEST_CASE("unknown key in [defaults]") {
    std::string path;
    std::string text = st::baseConfig("[defaults]\nttl = 30\nbogus_key = 1\n");
    std::string err = st::configError(text, &path);
    CHECK(err == st::errorAt(path, text, "bogus_key", "[defaults]: unknown key \"bogus_key\""));
}

TEST_CASE(
    "[key.NAME], [check.NAME], [load.metric.NAME], [source.NAME], [site.NAME]: not a table, unknown key") {
    struct Case {
        const char* rest;
        const char* needle;
        const char* message;
    };
    const Case cases[] = {
        {"[key]\nk = 1\n", "k = 1", "key: key.k must be a table"},
        {"[check]\nc = 1\n", "c = 1", "check: check.c must be a table"},
        {"[check.c]\nbogus = 1\n", "bogus", "[check.c]: unknown key \"bogus\""},
        {"[load.metric]\nm = 1\n", "m = 1", "[load] metric: metric.m must be a table"},
        {"[load.metric.m]\nbogus = 1\n", "bogus", "[load.metric.m]: unknown key \"bogus\""},
        {"[source]\ns = 1\n", "s = 1", "source: source.s must be a table"},
        {"[site.north]\nbogus = 1\n", "bogus", "[site.north]: unknown key \"bogus\""},
    };
    for (const auto& c : cases) {
        std::string path, text = st::baseConfig(c.rest);
        CAPTURE(text);
        std::string err = st::configError(text, &path);
        CHECK(err == st::errorAt(path, text, c.needle, c.message));
    }
}

TEST_CASE("unknown key in [hostname.\"x\"]") {
    std::string path;
    std::string text = st::baseConfig(kWww + "ttll = 5\n" + st::threeServices("www.t.test."));
    std::string err = st::configError(text, &path);
    CHECK(err == st::errorAt(path, text, "ttll", "hostname \"www.t.test.\": unknown key \"ttll\""));
}

TEST_CASE("unknown key in a service names the hostname and the service's number") {
    std::string path;
    std::string text = st::baseConfig(
        kWww +
        "[[hostname.\"www.t.test.\".service]]\naddress = \"192.0.2.1\"\nsite = \"east\"\n"
        "[[hostname.\"www.t.test.\".service]]\naddress = \"192.0.2.2\"\nsite = \"west\"\nwieght = 2\n");
    std::string err = st::configError(text, &path);
    CHECK(err ==
          st::errorAt(path, text, "wieght", "hostname \"www.t.test.\" service 2: unknown key \"wieght\""));
}

TEST_CASE("unknown site") {
    std::string path;
    std::string text = st::baseConfig(
        kWww + "[[hostname.\"www.t.test.\".service]]\naddress = \"192.0.2.1\"\nsite = \"nowhere\"\n");
    std::string err = st::configError(text, &path);
    CHECK(
        err ==
        st::errorAt(path, text, "nowhere",
                    "hostname \"www.t.test.\" service 1 site: unknown site \"nowhere\" (no [site.nowhere])"));
}

TEST_CASE("unknown check") {
    std::string path;
    std::string text = st::baseConfig(
        kWww +
        "[[hostname.\"www.t.test.\".service]]\naddress = \"192.0.2.1\"\nsite = \"east\"\ncheck = \"web\"\n");
    std::string err = st::configError(text, &path);
    CHECK(err ==
          st::errorAt(path, text, "check = ",
                      "hostname \"www.t.test.\" service 1 check: unknown check \"web\" (no [check.web])"));
}

TEST_CASE(
    "policy: unknown stage, no chooser, chooser not last — refused at load, naming file:line and policy") {
    struct Case {
        const char* policy;
        const char* what;  // a word the message must hold
    };
    const Case cases[] = {
        {"[\"health\", \"least-conections\", \"random\"]", "least-conections"},
        {"[\"health\", \"least-connections\"]", "chooser"},
        {"[\"health\", \"random\", \"least-connections\"]", "chooser"},
        {"[\"random\", \"round-robin\"]", "chooser"},
    };
    for (const auto& c : cases) {
        std::string policy = c.policy;
        CAPTURE(policy);
        // In a hostname: the error names the file, the line of the policy key and the hostname.
        {
            std::string path;
            std::string text =
                st::baseConfig("[hostname.\"www.t.test.\"]\npolicy = " + std::string(c.policy) + "\n" +
                               st::threeServices("www.t.test."));
            std::string err = st::configError(text, &path);
            std::string prefix = path + ":" + std::to_string(st::lineOf(text, "policy = ")) + ": ";
            CHECK_MESSAGE(err.rfind(prefix, 0) == 0, err);
            CHECK_MESSAGE(err.find("hostname \"www.t.test.\" policy") != std::string::npos, err);
            CHECK_MESSAGE(err.find(c.what) != std::string::npos, err);
        }
        // In [defaults], with no hostname to inherit it: still an error of [defaults] policy.
        {
            std::string path;
            std::string text = st::baseConfig("[defaults]\npolicy = " + std::string(c.policy) + "\n");
            std::string err = st::configError(text, &path);
            std::string prefix = path + ":" + std::to_string(st::lineOf(text, "policy = ")) + ": ";
            CHECK_MESSAGE(err.rfind(prefix, 0) == 0, err);
            CHECK_MESSAGE(err.find("[defaults] policy") != std::string::npos, err);
        }
    }
}

TEST_CASE("values out of range") {
    std::string path;
    std::string err;
    std::string text = st::baseConfig("[defaults]\nsession_threshold = 120\n");
    err = st::configError(text, &path);
    CHECK(err == st::errorAt(path, text, "session_threshold",
                             "[defaults] session_threshold: 120 is out of range [0, 100]"));

    text = st::baseConfig(kWww + "answers = 0\n" + st::threeServices("www.t.test."));
    err = st::configError(text, &path);
    CHECK(err ==
          st::errorAt(path, text, "answers", "hostname \"www.t.test.\" answers: 0 is out of range [1, 64]"));

    text =
        "[server]\nlisten = [\"127.0.0.1:10053\"]\n[[zone]]\nname = \"t.test.\"\nfile = \"t.zone\"\n"
        "[site.east]\npreference = 256\n";
    err = st::configError(text, &path);
    CHECK(err ==
          st::errorAt(path, text, "preference", "[site.east] preference: 256 is out of range [0, 255]"));

    text = st::baseConfig("[defaults]\nfactor = -0.5\n");
    err = st::configError(text, &path);
    CHECK(err == st::errorAt(path, text, "factor", "[defaults] factor: -0.5 is out of range [0, 1000]"));

    text = st::baseConfig("[defaults]\nttl = \"30\"\n");
    err = st::configError(text, &path);
    CHECK(err == st::errorAt(path, text, "ttl", "[defaults] ttl: must be an integer"));

    // Found by tests/fuzz/fuzz_config: a float too large for an integer was converted before the type was
    // checked (undefined behaviour, UBSan: "1e+32 is outside the range of representable values").
    text = st::baseConfig("[defaults]\nttl = 1e32\n");
    err = st::configError(text, &path);
    CHECK(err == st::errorAt(path, text, "ttl", "[defaults] ttl: must be an integer"));
    text = st::baseConfig("[check.web]\ntype = \"http\"\nexpect_status = [1e32]\n");
    err = st::configError(text, &path);
    CHECK(err.find("expect_status: must hold HTTP status codes") != std::string::npos);
}

TEST_CASE("bad fallback") {
    std::string path;
    std::string err;
    std::string text = st::baseConfig(kWww + "fallback = \"some\"\n" + st::threeServices("www.t.test."));
    err = st::configError(text, &path);
    CHECK(err == st::errorAt(
                     path, text, "fallback",
                     "hostname \"www.t.test.\" fallback: \"some\" is not all, none or an IPv4/IPv6 address"));
    text = st::baseConfig("[defaults]\nfallback = \"192.0.2.256\"\n");
    err = st::configError(text, &path);
    CHECK(err ==
          st::errorAt(path, text, "fallback",
                      "[defaults] fallback: \"192.0.2.256\" is not all, none or an IPv4/IPv6 address"));
}

TEST_CASE("bad service address") {
    std::string path;
    std::string err;
    std::string text = st::baseConfig(
        kWww + "[[hostname.\"www.t.test.\".service]]\naddress = \"192.0.2.300\"\nsite = \"east\"\n");
    err = st::configError(text, &path);
    CHECK(err ==
          st::errorAt(
              path, text, "192.0.2.300",
              "hostname \"www.t.test.\" service 1 address: \"192.0.2.300\" is not an IPv4 or IPv6 address"));
    // The same address twice in one hostname.
    text = st::baseConfig(kWww +
                          "[[hostname.\"www.t.test.\".service]]\naddress = \"192.0.2.1\"\nsite = \"east\"\n"
                          "[[hostname.\"www.t.test.\".service]]\naddress = \"192.0.2.1\"\nsite = \"west\"\n");
    err = st::configError(text, &path);
    CHECK(err == path + ":" + std::to_string(st::lineOf(text, "site = \"west\"") - 1) +
                     ": hostname \"www.t.test.\" service 2 address: 192.0.2.1 is described twice");
}

TEST_CASE("a TOML syntax error names file and line") {
    std::string path;
    std::string text = st::baseConfig("[defaults]\nttl = = 3\n");
    std::string err = st::configError(text, &path);
    CHECK_MESSAGE(err.rfind(path + ":" + std::to_string(st::lineOf(text, "ttl = =")) + ": ", 0) == 0, err);
}

TEST_CASE("[server] limits: defaults, values and ranges") {
    const std::string zone = "[[zone]]\nname = \"t.test.\"\nfile = \"t.zone\"\n";
    std::string text = "[server]\nlisten = [\"127.0.0.1:10053\"]\n" + zone;
    st::Written w = st::writeConfig(text);
    Config cfg;
    std::string error;
    REQUIRE_MESSAGE(loadConfig(w.config, cfg, error), error);
    CHECK(cfg.server.axfrMaxConcurrent == 10);
    CHECK(cfg.server.tcpMessageTimeout == 3);

    text = "[server]\naxfr_max_concurrent = 3\ntcp_message_timeout = 7\n" + zone;
    w = st::writeConfig(text);
    REQUIRE_MESSAGE(loadConfig(w.config, cfg, error), error);
    CHECK(cfg.server.axfrMaxConcurrent == 3);
    CHECK(cfg.server.tcpMessageTimeout == 7);

    std::string path;
    text = "[server]\naxfr_max_concurrent = 0\n" + zone;
    std::string err = st::configError(text, &path);
    CHECK(err == st::errorAt(path, text, "axfr_max_concurrent",
                             "[server] axfr_max_concurrent: 0 is out of range [1, 100000]"));

    text = "[server]\ntcp_message_timeout = 0\n" + zone;
    err = st::configError(text, &path);
    CHECK(err == st::errorAt(path, text, "tcp_message_timeout",
                             "[server] tcp_message_timeout: 0 is out of range [1, 3600]"));
}

TEST_CASE("axfr_allow: a prefix length is digits only (\"/-8\" is not a /32)") {
    for (const char* bad : {"127.0.0.1/-8", "127.0.0.1/+8", "127.0.0.1/", "127.0.0.1/8x", "::1/129"}) {
        CAPTURE(bad);
        std::string text = "[server]\nlisten = [\"127.0.0.1:10053\"]\naxfr_allow = [\"" + std::string(bad) +
                           "\"]\n[[zone]]\nname = \"t.test.\"\nfile = \"t.zone\"\n";
        std::string err = st::configError(text);
        CHECK(err.find("axfr_allow") != std::string::npos);
    }
}

TEST_CASE("an https check: port 443 by default, sni, ca_file relative to the config, insecure") {
    std::string text = st::baseConfig(
        "[check.tls]\ntype = \"https\"\nsni = \"svc.t.test\"\nca_file = \"certs/ca.pem\"\n\n"
        "[check.lax]\ntype = \"https\"\nport = 8443\ninsecure = true\n\n" +
        kWww + st::threeServices("www.t.test.", "check = \"tls\"\n"));
    st::Written w = st::writeConfig(text);
    Config cfg;
    std::string error;
    REQUIRE_MESSAGE(loadConfig(w.config, cfg, error), error);
    const CheckConf& tls = cfg.checks.at("tls");
    CHECK(tls.type == "https");
    CHECK(tls.port == 443);
    CHECK(tls.sni == "svc.t.test");
    CHECK(tls.caFile == w.dir + "/certs/ca.pem");
    CHECK_FALSE(tls.insecure);
    const CheckConf& lax = cfg.checks.at("lax");
    CHECK(lax.port == 8443);
    CHECK(lax.insecure);
    CHECK(lax.caFile.empty());
    std::string path;
    std::string bad = st::baseConfig("[check.x]\ntype = \"tls\"\n");
    std::string err = st::configError(bad, &path);
    CHECK(err == st::errorAt(path, bad, "type = \"tls\"",
                             "[check.x] type: \"tls\" is not tcp, http, https or none"));
}

TEST_CASE(
    "loadControlConfig and loadZoneFiles read their part only: a mistake elsewhere does not stop them") {
    std::string text =
        "[server]\nwieght = 3\n[control]\nlisten = \"127.0.0.1:9053\"\ntoken_file = \"tok\"\n"
        "[[zone]]\nname = \"t.test\"\nfile = \"t.zone\"\n[hostname.\"x.t.test.\"]\nttl = \"no\"\n";
    st::Written w = st::writeConfig(text);
    Config cfg;
    std::string err;
    CHECK_FALSE(loadConfig(w.config, cfg, err));
    ControlConf cc;
    REQUIRE_MESSAGE(loadControlConfig(w.config, cc, err), err);
    CHECK(cc.enabled);
    CHECK(cc.listen.text == "127.0.0.1:9053");
    CHECK(cc.tokenFile == w.dir + "/tok");
    std::vector<ZoneConf> zl;
    REQUIRE_MESSAGE(loadZoneFiles(w.config, zl, err), err);
    REQUIRE(zl.size() == 1);
    CHECK(zl[0].name == "t.test.");
    CHECK(zl[0].file == w.dir + "/t.zone");
    // [control] itself is checked as loadConfig checks it.
    st::Written w2 = st::writeConfig("[control]\nlisten = \"nowhere\"\ntoken_file = \"tok\"\n");
    CHECK_FALSE(loadControlConfig(w2.config, cc, err));
    CHECK(err.find(":2: [control] listen: \"nowhere\" is not ADDRESS:PORT") != std::string::npos);
    st::Written w3 = st::writeConfig("[server]\n");
    REQUIRE(loadControlConfig(w3.config, cc, err));
    CHECK_FALSE(cc.enabled);
}

TEST_CASE(
    "loadControlConfig: a TOML syntax error elsewhere still gives [control] and [cluster], and says it") {
    // A new user's `[site.c` (no closing bracket) blocked gslbctl drain: the emergency drain must work then.
    std::string text =
        "[server]\nlisten = [\"127.0.0.1:10053\"]\n[control]\nlisten = \"127.0.0.1:9053\"  # API\n"
        "token_file = \"tok\"\n\n[site.c\nregion = \"eu\"\n[cluster]\nmembers = [\n  "
        "\"http://127.0.0.1:9053\",\n"
        "  \"http://127.0.0.2:9053\",\n]\n";
    st::Written w = st::writeConfig(text);
    ControlConf cc;
    ClusterConf cl;
    std::string err, syntax;
    CHECK_FALSE(loadControlConfig(w.config, cc, err, &cl));  // without the fallback asked for: the error
    CHECK(err.find(w.config + ":7: ") == 0);
    REQUIRE_MESSAGE(loadControlConfig(w.config, cc, err, &cl, &syntax), err);
    CHECK(syntax.find(w.config + ":7: ") == 0);
    CHECK(cc.enabled);
    CHECK(cc.listen.text == "127.0.0.1:9053");
    CHECK(cc.tokenFile == w.dir + "/tok");
    REQUIRE(cl.members.size() == 2);
    CHECK(cl.members[1].url == "http://127.0.0.2:9053");
    // A syntax error inside [control] itself: nothing to go on, the file's error.
    st::Written w2 = st::writeConfig("[control]\nlisten = \"127.0.0.1:9053\ntoken_file = \"tok\"\n");
    CHECK_FALSE(loadControlConfig(w2.config, cc, err, nullptr, &syntax));
    CHECK(err.find(w2.config + ":2: ") == 0);
    // A good file: no syntax error reported.
    st::Written w3 = st::writeConfig("[control]\ntoken_file = \"tok\"\n");
    REQUIRE(loadControlConfig(w3.config, cc, err, nullptr, &syntax));
    CHECK(syntax.empty());
}

TEST_CASE("[server] xdp: interface names, refused by a gslbd built without libxdp") {
    auto with = [](const std::string& value) {
        std::string t = st::baseConfig("");
        t.insert(t.find("\n\n"), "\nxdp = " + value);
        return t;
    };
    std::string path;
    if (gslb::server::xdp::available()) {
        st::Written w = st::writeConfig(with("[\"veth0\", \"eth1\"]"));
        Config cfg;
        std::string error;
        REQUIRE_MESSAGE(loadConfig(w.config, cfg, error), error);
        CHECK(cfg.server.xdp == std::vector<std::string>{"veth0", "eth1"});
        for (const char* bad : {"\"\"", "\"../etc\"", "\"a/b\"", "\"0123456789abcdef\""}) {
            CAPTURE(bad);
            std::string text = with(std::string("[") + bad + "]");
            std::string err = st::configError(text, &path);
            CHECK(err.find("[server] xdp: \"") != std::string::npos);
            CHECK(err.find("is not an interface name") != std::string::npos);
        }
        std::string twice = st::configError(with("[\"veth0\", \"eth1\", \"veth0\"]"), &path);
        CHECK(twice.find("[server] xdp: \"veth0\" is listed twice") != std::string::npos);
    } else {
        std::string text = with("[\"veth0\"]");
        std::string err = st::configError(text, &path);
        CHECK(err.find("[server] xdp: this gslbd was built without the AF_XDP fast path") !=
              std::string::npos);
    }
}

TEST_CASE("a [[zone]] whose file is missing is refused at the config line that names it") {
    // It said only "PATH: cannot open zone file PATH": the file, not where the config names it.
    const std::string text =
        "[server]\nlisten = [\"127.0.0.1:10053\"]\n[[zone]]\nname = \"t.test.\"\n"
        "file = \"missing.zone\"\n";
    st::Written w;
    std::string err = st::snapshotError(text, st::kZone, &w);
    CHECK(err == w.config + ":5: [[zone]] \"t.test.\": file " + w.dir +
                     "/missing.zone: No such file or directory (a relative path is read from the config "
                     "file's directory)");
    // And the same from the checks (gslbd --check, gslbctl check).
    char* buf = nullptr;
    size_t len = 0;
    FILE* mem = open_memstream(&buf, &len);
    CHECK(checkConfig(w.config, mem, Checker::kConfig) == 1);
    fclose(mem);
    std::string out(buf, len);
    free(buf);
    CHECK_MESSAGE(out.find(err + "\n") == 0, out);
}

TEST_CASE("[rtt] and a site's agent_token_file") {
    std::string text = st::baseConfig("[rtt]\nprefixes_max = 5000\nprefix_v4 = 20\nprefix_v6 = 48\n\n" +
                                      kWww + st::threeServices("www.t.test."));
    text.replace(text.find("[site.east]\n"), 12, "[site.east]\nagent_token_file = \"east.token\"\n");
    st::Written w = st::writeConfig(text);
    st::writeFile(w.dir, "east.token", "  east-agent-token\n");
    ::chmod((w.dir + "/east.token").c_str(), 0600);  // a token others can read is refused
    Config cfg;
    std::string error;
    REQUIRE_MESSAGE(loadConfig(w.config, cfg, error), error);
    CHECK(cfg.rtt.prefixesMax == 5000);
    CHECK(cfg.rtt.prefixV4 == 20);
    CHECK(cfg.rtt.prefixV6 == 48);
    CHECK(cfg.rtt.prefixesMaxPerReport == 5000);  // the default 10,000, at most prefixes_max
    REQUIRE(cfg.sites.size() == 3);
    CHECK(cfg.sites[0].agentToken == "east-agent-token");
    CHECK(cfg.sites[1].agentToken.empty());
    // The token file is a secret every reload reads again: on the list the readable check walks.
    CHECK(cfg.keySecretFiles.back().first == "[site.east] agent_token_file");

    // A missing file, a short token, a prefix length out of range: refused at their line.
    std::string missing = st::baseConfig(kWww + st::threeServices("www.t.test."));
    missing.replace(missing.find("[site.west]\n"), 12, "[site.west]\nagent_token_file = \"nope.token\"\n");
    std::string path;
    std::string err = st::configError(missing, &path);
    CHECK(err.find(path + ":" + std::to_string(st::lineOf(missing, "agent_token_file")) + ":") == 0);
    CHECK(err.find("nope.token: cannot read") != std::string::npos);
    st::refusedAt(st::baseConfig("[rtt]\nprefix_v6 = 96\n"), "prefix_v6",
                  "[rtt] prefix_v6: 96 is out of range [16, 64]");
}
