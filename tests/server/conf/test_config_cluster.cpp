// [cluster] (doc/design.md "Several instances as one NS set"): members, how a member finds itself,
// health_quorum; each refusal names the file, the line and the key as the rest of loadConfig does.
#include <doctest/doctest.h>

#include "server/conf/digest.hpp"
#include "server/conf/config.hpp"
#include "tests/server/helpers.hpp"

using namespace gslb::server;

namespace {

std::string control(const std::string& listen) {
    return "[control]\nlisten = \"" + listen + "\"\ntoken_file = \"tok\"\n";
}

const std::string kTwo = "members = [\"http://127.0.0.2:9053\", \"http://127.0.0.3:9053/\"]\n";
const std::string kEtcd = "etcd = [\"http://127.0.0.1:2379\"]\n";

}  // namespace

TEST_CASE("[cluster] members, the member [control] listens on is this one, health_quorum kept") {
    Config cfg = st::loadedConfig(
        st::baseConfig(control("127.0.0.3:9053") + "[cluster]\n" + kTwo + kEtcd + "health_quorum = 2\n"));
    REQUIRE(cfg.cluster.enabled);
    REQUIRE(cfg.cluster.members.size() == 2);
    CHECK(cfg.cluster.members[0].url == "http://127.0.0.2:9053");
    CHECK(cfg.cluster.members[1].url == "http://127.0.0.3:9053");  // the trailing "/" dropped
    CHECK(cfg.cluster.members[1].addr.text == "127.0.0.3:9053");
    CHECK(cfg.cluster.selfIndex == 1);
    CHECK(cfg.cluster.healthQuorum == 2);

    Config none = st::loadedConfig(st::baseConfig(control("127.0.0.2:9053")));
    CHECK_FALSE(none.cluster.enabled);
    CHECK(none.cluster.selfIndex == -1);
    CHECK(none.cluster.healthQuorum == 0);

    Config v6 = st::loadedConfig(st::baseConfig(
        control("[::1]:9053") + "[cluster]\nmembers = [\"http://[::1]:9053\", \"http://192.0.2.9:9053\"]\n"));
    CHECK(v6.cluster.selfIndex == 0);
    CHECK(v6.cluster.healthQuorum == 0);
    CHECK(v6.cluster.members[0].url == "http://[::1]:9053");
}

TEST_CASE("[cluster] with a wildcard [control] listen: the member with one of this machine's addresses") {
    // 127.0.0.1 is on lo everywhere; 192.0.2.0/24 (TEST-NET-1) is on no machine.
    Config cfg = st::loadedConfig(st::baseConfig(control("0.0.0.0:9053") +
                                                 "[cluster]\nmembers = [\"http://192.0.2.7:9053\", "
                                                 "\"http://127.0.0.1:9053\", \"http://192.0.2.8:9053\"]\n"));
    CHECK(cfg.cluster.selfIndex == 1);

    std::string text =
        st::baseConfig(control("0.0.0.0:9053") +
                       "[cluster]\nmembers = [\"http://192.0.2.7:9053\", \"http://127.0.0.1:9054\"]\n");
    st::refusedAt(text, "members =",
                  "[cluster] members: none is this instance: [control] listens on "
                  "0.0.0.0:9053 and no member on port "
                  "9053 has an address of this machine (set `self`)");

    // An explicit self wins, and must be one of the members, where [control] listens.
    Config explicitSelf = st::loadedConfig(st::baseConfig(control("0.0.0.0:9053") + "[cluster]\n" + kTwo +
                                                          "self = \"http://127.0.0.3:9053\"\n"));
    CHECK(explicitSelf.cluster.selfIndex == 1);
    text =
        st::baseConfig(control("0.0.0.0:9053") + "[cluster]\n" + kTwo + "self = \"http://127.0.0.4:9053\"\n");
    st::refusedAt(text, "self =", "[cluster] self: http://127.0.0.4:9053 is not one of `members`");
    text = st::baseConfig(control("127.0.0.2:9053") + "[cluster]\n" + kTwo +
                          "self = \"http://127.0.0.3:9053\"\n");
    st::refusedAt(text, "self =",
                  "[cluster] self: http://127.0.0.3:9053 is not where [control] listens (127.0.0.2:9053)");
}

TEST_CASE("[cluster] refusals: bad URLs, duplicates, no self, quorum out of range, no [control]") {
    struct Case {
        std::string cluster, needle, message;
    };
    const Case cases[] = {
        {"members = [\"192.0.2.1:9053\"]\n", "members =",
         "[cluster] members: \"192.0.2.1:9053\" must be http://ADDRESS:PORT (the member's control API)"},
        {"members = [\"https://192.0.2.1:9053\"]\n", "members =",
         "[cluster] members: \"https://192.0.2.1:9053\" must be http://ADDRESS:PORT (the member's control "
         "API; "
         "it speaks plain HTTP)"},
        {"members = [\"http://ns1.example:9053\"]\n", "members =",
         "[cluster] members: \"http://ns1.example:9053\" is not http://ADDRESS:PORT (an IPv4 address or "
         "[IPv6] "
         "and a port, no path)"},
        {"members = [\"http://192.0.2.1\"]\n", "members =",
         "[cluster] members: \"http://192.0.2.1\" is not http://ADDRESS:PORT (an IPv4 address or [IPv6] and "
         "a "
         "port, no path)"},
        {"members = [\"http://192.0.2.1:9053/v1\"]\n", "members =",
         "[cluster] members: \"http://192.0.2.1:9053/v1\" is not http://ADDRESS:PORT (an IPv4 address or "
         "[IPv6] and a port, no path)"},
        {"members = [\"http://0.0.0.0:9053\"]\n", "members =",
         "[cluster] members: \"http://0.0.0.0:9053\": a member needs an address it can be reached at and a "
         "port"},
        {"members = [\"http://127.0.0.2:9053\", \"http://127.0.0.2:9053/\"]\n",
         "members =", "[cluster] members: http://127.0.0.2:9053 is listed twice"},
        {"members = []\n",
         "members =", "[cluster] members: must be a non-empty array of \"http://ADDRESS:PORT\" strings"},
        {"members = [9053]\n",
         "members =", "[cluster] members: must be an array of \"http://ADDRESS:PORT\" strings"},
        {"health_quorum = 1\n", "[cluster]",
         "[cluster] members: is required: the control API URL of every member, this one included"},
        {kTwo + "health_quorum = 3\n", "health_quorum", "[cluster] health_quorum: 3 is out of range [1, 2]"},
        {kTwo + "health_quorum = 0\n", "health_quorum", "[cluster] health_quorum: 0 is out of range [1, 2]"},
        // The members' verdicts travel through etcd only: an old config that counted on the peers polling
        // each other is refused with what to do, never silently run on each member's own view.
        {kTwo + "health_quorum = 2\n", "health_quorum",
         "[cluster] health_quorum: needs `etcd`: the members' verdicts are shared through etcd "
         "(doc/ns-set.md "
         "\"Shared state in etcd\"); add etcd = [\"http://ADDRESS:2379\", …] to [cluster], or remove "
         "health_quorum to let each member decide on its own checks"},
        {kTwo + "health_quorum = 1.5\n", "health_quorum", "[cluster] health_quorum: must be an integer"},
        {kTwo + "quorum = 1\n", "quorum = 1", "[cluster]: unknown key \"quorum\""},
        {"members = [\"http://127.0.0.3:9053\", \"http://127.0.0.4:9053\"]\n", "members =",
         "[cluster] members: none is this instance: [control] listens on 127.0.0.2:9053 (list it, or set "
         "`self`)"},
    };
    for (const auto& c : cases) {
        std::string text = st::baseConfig(control("127.0.0.2:9053") + "[cluster]\n" + c.cluster);
        INFO(c.cluster);
        st::refusedAt(text, c.needle, c.message);
    }
    std::string text = st::baseConfig("[cluster]\n" + kTwo);
    st::refusedAt(
        text, "[cluster]",
        "[cluster]: needs [control]: members reach each other through the control API (its listen address "
        "is how a member finds itself in `members`)");
}

TEST_CASE("loadControlConfig reads [cluster] members for gslbctl, and nothing else of [cluster]") {
    // gslbctl runs anywhere: no self to find, and a slip in health_quorum must not block a drain.
    std::string text = st::baseConfig(control("127.0.0.9:9053") + "[cluster]\n" + kTwo +
                                      "health_quorum = 7\nbogus = 1\n[site.x]\nwieght = 1\n");
    st::Written w = st::writeConfig(text);
    ControlConf cc;
    ClusterConf cl;
    std::string err;
    REQUIRE_MESSAGE(loadControlConfig(w.config, cc, err, &cl), err);
    CHECK(cl.enabled);
    REQUIRE(cl.members.size() == 2);
    CHECK(cl.members[1].url == "http://127.0.0.3:9053");
    CHECK(cl.selfIndex == -1);
    // Without the cluster argument, [cluster] is not read at all.
    std::string bad = st::baseConfig(control("127.0.0.9:9053") + "[cluster]\nmembers = [\"nope\"]\n");
    st::Written w2 = st::writeConfig(bad);
    REQUIRE_MESSAGE(loadControlConfig(w2.config, cc, err), err);
    CHECK_FALSE(loadControlConfig(w2.config, cc, err, &cl));
    CHECK(err ==
          st::errorAt(w2.config, bad, "members =",
                      "[cluster] members: \"nope\" must be http://ADDRESS:PORT (the member's control API)"));
}

TEST_CASE("configDigest: the same for members that differ only in their listen addresses and layout") {
    auto digest = [](const std::string& text, const std::string& zone = st::kZone) {
        st::Written w = st::writeConfig(text, zone);
        Config cfg;
        std::string error;
        REQUIRE_MESSAGE(loadConfig(w.config, cfg, error), error);
        return configDigest(cfg);
    };
    const std::string members =
        "[cluster]\nmembers = [\"http://127.0.0.2:9053\", \"http://127.0.0.3:9053\"]\n";
    auto with = [&](const std::string& addr, const std::string& extra = "") {
        return "# member " + addr + "\n[server]\nlisten = [\"" + addr + ":10053\"]\n" + extra +
               "[control]\nlisten = \"" + addr + ":9053\"\ntoken_file = \"tok\"\n" + members +
               "\n[[zone]]\nname = \"t.test.\"\nfile = \"t.zone\"\n";
    };
    std::string a = digest(with("127.0.0.2"));
    CHECK(a.size() == 64);
    CHECK(a == digest(with("127.0.0.3")));
    CHECK(a == digest(with("127.0.0.3") + "\n# a comment, blank lines\n\n"));
    CHECK(a != digest(with("127.0.0.3", "workers = 3\n")));
    // state_dir is the host's: two members on one host need two, and differ in nothing else
    CHECK(digest(with("127.0.0.2", "state_dir = \"m2\"\n")) ==
          digest(with("127.0.0.3", "state_dir = \"m3\"\n")));
    CHECK(a != digest(with("127.0.0.3"), st::kZone + "extra IN A 192.0.2.99\n"));
}

TEST_CASE("canonicalTomlDigest: layout and key order do not count, types and values do") {
    auto d = [](const char* text) {
        toml::table t = toml::parse(text);
        return canonicalTomlDigest(t);
    };
    const std::string base = d("[a]\nx = 1\ny = \"s\"\n");
    CHECK(base.size() == 64);
    CHECK(base == d("[a]\ny = \"s\"   # c\n\n\nx = 1\n"));  // key order, comments, blank lines
    CHECK(base == d("a = { x = 1, y = 's' }"));             // inline table, literal string
    CHECK(base == d("a.x = 0x1\na.y = \"\\u0073\"\n"));     // dotted keys, hex, an escape
    CHECK(base != d("[a]\nx = \"1\"\ny = \"s\"\n"));        // an integer is not a string
    CHECK(base != d("[a]\nx = 1.0\ny = \"s\"\n"));          // nor a float
    CHECK(base != d("[a]\nx = [1]\ny = \"s\"\n"));          // nor an array of one
    CHECK(base != d("[a]\nx = 1\ny = \"s\"\nz = []\n"));    // an empty array is a key
    // Lengths before content: no string's bytes can pass for structure.
    CHECK(d("k = [\"ab\", \"c\"]") != d("k = [\"a\", \"bc\"]"));
    CHECK(d("[t]\nab = 1\n") != d("[t]\na = 1\n"));
    CHECK(d("t = 1979-05-27T07:32:00Z") != d("t = 1979-05-27T07:32:00+01:00"));
    CHECK(d("t = 1979-05-27T07:32:00Z") == d("t = 1979-05-27 07:32:00Z"));
    CHECK(d("t = 07:32:00") != d("t = 07:32:01"));
    CHECK(d("f = 0.1") == d("f = 1e-1"));
    CHECK(d("f = nan") != d("f = inf"));
    // The per-member keys are not part of it.
    CHECK(d("[server]\nlisten = [\"127.0.0.2:53\"]\nworkers = 2\n") ==
          d("[server]\nlisten = [\"127.0.0.3:53\"]\nworkers = 2\n"));
}

TEST_CASE("[cluster] etcd: endpoints, prefix, TLS files; what is refused") {
    const std::string base = st::baseConfig(control("127.0.0.2:9053") + "[cluster]\n" + kTwo);
    Config none = st::loadedConfig(base);
    CHECK(none.cluster.etcd.empty());
    CHECK(none.cluster.etcdPrefix == "/gslbd/");

    Config cfg = st::loadedConfig(
        base +
        "etcd = [\"http://192.0.2.1:2379/\", \"https://[2001:db8::1]:2379\"]\netcd_prefix = \"/ns-a/\"\n"
        "etcd_ca = \"/etc/gslbd/etcd-ca.pem\"\netcd_cert = \"c.pem\"\netcd_key = \"k.pem\"\n");
    REQUIRE(cfg.cluster.etcd.size() == 2);
    CHECK(cfg.cluster.etcd[0] == "http://192.0.2.1:2379");  // the trailing "/" dropped
    CHECK(cfg.cluster.etcd[1] == "https://[2001:db8::1]:2379");
    CHECK(cfg.cluster.etcdPrefix == "/ns-a/");
    CHECK(cfg.cluster.etcdCa == "/etc/gslbd/etcd-ca.pem");
    CHECK(cfg.cluster.etcdCert.size() > 5);
    CHECK(cfg.cluster.etcdCert.front() == '/');  // resolved from the config's directory
    CHECK(cfg.cluster.etcdCert.substr(cfg.cluster.etcdCert.size() - 6) == "/c.pem");

    struct Case {
        std::string add, needle, message;
    };
    const Case cases[] = {
        {"etcd = []\n", "etcd =",
         "[cluster] etcd: must be a non-empty array of \"http://ADDRESS:PORT\" strings (etcd's client URLs)"},
        {"etcd = [2379]\n", "etcd =", "[cluster] etcd: must be an array of \"http://ADDRESS:PORT\" strings"},
        {"etcd = [\"etcd.example:2379\"]\n", "etcd =",
         "[cluster] etcd: \"etcd.example:2379\" must be http://ADDRESS:PORT or https://ADDRESS:PORT"},
        {"etcd = [\"http://etcd.example:2379\"]\n", "etcd =",
         "[cluster] etcd: \"http://etcd.example:2379\": etcd.example is not an IP address (the control loop "
         "never waits on a name lookup)"},
        {"etcd = [\"http://192.0.2.1\"]\n",
         "etcd =", "[cluster] etcd: \"http://192.0.2.1\" has no :PORT (etcd's client port is usually 2379)"},
        {"etcd = [\"http://192.0.2.1:0\"]\n",
         "etcd =", "[cluster] etcd: \"http://192.0.2.1:0\": the port must be 1..65535"},
        {"etcd = [\"http://192.0.2.1:2379\", \"http://192.0.2.1:2379/\"]\n",
         "etcd =", "[cluster] etcd: http://192.0.2.1:2379 is listed twice"},
        {"etcd = [\"http://192.0.2.1:2379\"]\netcd_prefix = \"gslbd\"\n", "etcd_prefix",
         "[cluster] etcd_prefix: \"gslbd\" must start and end with \"/\" and be 2..128 printable ASCII "
         "characters "
         "without spaces (default \"/gslbd/\")"},
        {"etcd = [\"http://192.0.2.1:2379\"]\netcd_prefix = \"/a b/\"\n", "etcd_prefix",
         "[cluster] etcd_prefix: \"/a b/\" must start and end with \"/\" and be 2..128 printable ASCII "
         "characters "
         "without spaces (default \"/gslbd/\")"},
        {"etcd = [\"http://192.0.2.1:2379\"]\netcd_cert = \"c.pem\"\n", "etcd_cert",
         "[cluster] etcd_cert: etcd_cert and etcd_key go together (the client certificate and its key)"},
        {"etcd_prefix = \"/x/\"\n", "[cluster]",
         "[cluster]: etcd_prefix, etcd_ca, etcd_cert and etcd_key need `etcd` (the endpoints)"},
    };
    for (const auto& c : cases) {
        INFO(c.add);
        st::refusedAt(base + c.add, c.needle, c.message);
    }
}
