// What a reload cannot apply (server/conf/restart_only.hpp) and what it could not read once gslbd runs as
// [server] user (server/daemon/readable.hpp): both found by a new user, whose reload said nothing of a
// `workers` change and whose every reload failed on a TSIG secret only root could read.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "server/conf/config.hpp"
#include "server/conf/restart_only.hpp"
#include "server/daemon/privileges.hpp"
#include "server/daemon/readable.hpp"
#include "server/conf/unread_settings.hpp"
#include "tests/server/helpers.hpp"

using namespace gslb::server;

namespace {

Config withServer(const std::string& serverLines, const std::string& rest = "") {
    return st::loadedConfig("[server]\n" + serverLines +
                            "\n[[zone]]\nname = \"t.test.\"\nfile = \"t.zone\"\n\n[site.east]\n[site.west]\n"
                            "[site.south]\n\n" +
                            rest);
}

// A directory anyone may search (the tests' temp dir is 0700), for files with the modes under test.
std::string openDir() {
    char tmpl[] = "/tmp/gslbd-readable-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    REQUIRE(chmod(tmpl, 0755) == 0);
    return tmpl;
}

}  // namespace

TEST_CASE(
    "restart-only: each changed key by name with both values, nothing when only reloadable keys change") {
    Config a = withServer("listen = [\"127.0.0.1:10053\"]\nworkers = 2\nudp_payload_max = 1232");
    Config same = withServer("listen = [\"127.0.0.1:10053\"]\nworkers = 2\nudp_payload_max = 1400");
    CHECK(restartOnlyChanges(a, same).empty());
    Config b =
        withServer("listen = [\"127.0.0.1:10053\", \"127.0.0.2:10053\"]\nworkers = 3\nlog = \"syslog\"");
    auto c = restartOnlyChanges(a, b);
    REQUIRE(c.size() == 3);
    CHECK(c[0] == "[server] listen ([127.0.0.1:10053] -> [127.0.0.1:10053, 127.0.0.2:10053])");
    CHECK(c[1] == "[server] workers (2 -> 3)");
    CHECK(c[2] == "[server] log (\"stderr\" -> \"syslog\")");
}

TEST_CASE("restart-only: [control] added, and the RRL table size") {
    st::Written w = st::writeConfig("");
    std::string token = st::writeSecret(w.dir, "token", "0123456789abcdef0123456789abcdef\n");
    Config a = withServer("listen = [\"127.0.0.1:10053\"]", "[rrl]\ntable_size = 1024\n");
    Config b = withServer("listen = [\"127.0.0.1:10053\"]",
                          "[rrl]\ntable_size = 4096\n[control]\ntoken_file = \"" + token + "\"\n");
    auto c = restartOnlyChanges(a, b);
    REQUIRE(c.size() == 2);
    CHECK(c[0] == "[control] (added)");
    CHECK(c[1] == "[rrl] table_size (1024 -> 4096)");
}

TEST_CASE("readable: what a reload reads, each with the setting that names it") {
    std::string dir = openDir();
    std::string secret = st::writeFile(dir, "xfr.key", "c2VjcmV0c2VjcmV0c2VjcmV0\n");
    std::string token = st::writeSecret(dir, "token", "0123456789abcdef0123456789abcdef\n");
    Config cfg =
        withServer("listen = [\"127.0.0.1:10053\"]", "[key.xfr]\nsecret_file = \"" + secret +
                                                         "\"\n[control]\ntoken_file = \"" + token + "\"\n");
    auto paths = service::pathsReadAtReload(cfg);
    REQUIRE(paths.size() == 4);
    CHECK(paths[0].what == "the config file");
    CHECK(paths[0].path == cfg.path);
    CHECK(paths[1].what == "zone t.test. file");
    CHECK(paths[2].what == "[control] token_file");
    CHECK(paths[2].path == token);
    CHECK(paths[3].what == "[key.xfr] secret_file");
    CHECK(paths[3].path == secret);
}

TEST_CASE("readable: as another user, a file only root may read is named; a readable or missing one is not") {
    if (geteuid() != 0) return;  // only root can become another user
    service::UserInfo nobody;
    std::string error;
    REQUIRE_MESSAGE(service::lookupUser("nobody", nobody, error), error);
    std::string dir = openDir();
    std::string open = st::writeFile(dir, "open.key", "x\n");
    std::string closed = st::writeFile(dir, "closed.key", "x\n");
    REQUIRE(chmod(open.c_str(), 0644) == 0);
    REQUIRE(chmod(closed.c_str(), 0600) == 0);
    std::vector<service::ReadPath> paths = {{"[key.a] secret_file", open},
                                            {"[key.b] secret_file", closed},
                                            {"[key.c] secret_file", dir + "/none"}};
    std::vector<service::Unreadable> lines;
    REQUIRE_MESSAGE(service::unreadableAs(nobody, paths, lines, error), error);
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].name == "[key.b] secret_file " + closed);
    CHECK(lines[0].why == "Permission denied");
    // As root (this process) every one of them reads.
    CHECK(service::unreadable(paths).empty());
    // A directory needs search as well as read.
    REQUIRE(chmod(dir.c_str(), 0744) == 0);
    REQUIRE(service::unreadableAs(nobody, {{"zone t. key_dir", dir, true}}, lines, error));
    CHECK(lines.size() == 1);
}

TEST_CASE("unread: a [check.NAME] no service uses is named with its line") {
    std::string text = st::baseConfig(
        "[check.web]\ntype = \"tcp\"\n[check.spare]\ntype = \"tcp\"\n\n"
        "[hostname.\"www.t.test.\"]\n" +
        st::threeServices("www.t.test.", "check = \"web\"\n"));
    st::Written w = st::writeConfig(text);
    Config cfg;
    std::string error;
    REQUIRE_MESSAGE(loadConfig(w.config, cfg, error), error);
    auto u = unreadSettings(cfg);
    REQUIRE(u.size() == 1);
    CHECK(u[0].where == w.config + ":" + std::to_string(st::lineOf(text, "[check.spare]")));
    CHECK(u[0].message ==
          "[check.spare] is used by no service: it checks nothing (a service names it with "
          "check = \"spare\")");
}

TEST_CASE("restart-only: tls_listen; readable: the TLS files, read again at a reload after the drop") {
    std::string dir = openDir();
    std::string tls = "tls_certificate = \"" + dir + "/c.pem\"\ntls_key = \"" + dir + "/k.pem\"\n";
    Config a = withServer("listen = [\"127.0.0.1:10053\"]\ntls_listen = [\"127.0.0.1:10853\"]\n" + tls);
    Config b = withServer("listen = [\"127.0.0.1:10053\"]\ntls_listen = [\"127.0.0.1:853\"]\n" + tls +
                          "tls_client_ca = \"" + dir + "/ca.pem\"\n");
    auto c = restartOnlyChanges(a, b);
    REQUIRE(c.size() == 1);
    CHECK(c[0] == "[server] tls_listen ([127.0.0.1:10853] -> [127.0.0.1:853])");
    std::vector<std::string> what;
    for (const auto& p : service::pathsReadAtReload(b)) what.push_back(p.what + " " + p.path);
    REQUIRE(what.size() == 5);
    CHECK(what[2] == "[server] tls_certificate " + dir + "/c.pem");
    CHECK(what[3] == "[server] tls_key " + dir + "/k.pem");
    CHECK(what[4] == "[server] tls_client_ca " + dir + "/ca.pem");
}
