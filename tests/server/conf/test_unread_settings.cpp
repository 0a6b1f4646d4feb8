// unreadSettings (doc/design.md "Metric sources"): valid settings that no policy reads are named, with file
// and line.
#include <doctest/doctest.h>

#include "server/conf/config.hpp"
#include "server/conf/unread_settings.hpp"
#include "tests/server/helpers.hpp"

using namespace gslb::server;

namespace {

std::string config(const std::string& sites, const std::string& rest) {
    return "[server]\nlisten = [\"127.0.0.1:10053\"]\n\n[[zone]]\nname = \"t.test.\"\nfile = \"t.zone\"\n\n" +
           sites + "\n" + rest;
}

std::vector<UnreadSetting> unread(const std::string& text, std::string* path = nullptr) {
    st::Written w = st::writeConfig(text);
    Config cfg;
    std::string error;
    REQUIRE_MESSAGE(loadConfig(w.config, cfg, error), error);
    if (path) *path = w.config;
    return unreadSettings(cfg);
}

const std::string kSites = "[site.east]\npreference = 200\n[site.west]\npreference = 0\n[site.south]\n";

}  // namespace

TEST_CASE("unread: a preference without the preference stage is named; 0 is read by every policy") {
    std::string path;
    std::string text = config(kSites, "[hostname.\"www.t.test.\"]\n" + st::threeServices("www.t.test."));
    auto u = unread(text, &path);
    REQUIRE(u.size() == 1);
    CHECK(u[0].where == path + ":" + std::to_string(st::lineOf(text, "[site.east]")));
    CHECK(u[0].message.find("[site.east] preference = 200 is not read") == 0);
    // With the stage: nothing to say.
    CHECK(unread(config(kSites,
                        "[hostname.\"www.t.test.\"]\npolicy = [\"health\", \"preference\", \"random\"]\n" +
                            st::threeServices("www.t.test.")))
              .empty());
}

TEST_CASE("unread: policy keys set where no stage reads them, in a hostname and in [defaults]") {
    std::string text = config("[site.east]\n[site.west]\n[site.south]\n",
                              "[defaults]\nsession_threshold = 80\n\n"
                              "[hostname.\"www.t.test.\"]\npolicy = [\"health\", \"flashback\", \"random\"]\n"
                              "factor = 0.5\nflashback_floor = 2\n" +
                                  st::threeServices("www.t.test."));
    auto u = unread(text);
    REQUIRE(u.size() == 2);
    CHECK(
        u[0].message ==
        "[defaults] session_threshold is not read: no hostname's policy has the \"session-threshold\" stage");
    CHECK(u[1].message ==
          "hostname \"www.t.test.\": factor is not read: its policy has no \"least-connections\" or \"cpu\" "
          "stage");
}

TEST_CASE("unread: topology and hash keys without their stage") {
    std::string text = config("[site.east]\n[site.west]\n[site.south]\n",
                              "[hostname.\"www.t.test.\"]\npolicy = [\"health\", \"random\"]\n"
                              "topology = \"nearest\"\nhash_prefix_v4 = 16\n" +
                                  st::threeServices("www.t.test."));
    auto u = unread(text);
    REQUIRE(u.size() == 2);
    CHECK(u[0].message ==
          "hostname \"www.t.test.\": topology is not read: its policy has no \"topology\" stage");
    CHECK(u[1].message ==
          "hostname \"www.t.test.\": hash_prefix_v4 is not read: its policy has no \"hashed\" stage");
}

TEST_CASE("unread: a service weight under a chooser that does not weigh") {
    // The bundled example had weight = 3 on site east under `random`: 67/69/64 of 200 answers, nothing said.
    const std::string svcs =
        "[[hostname.\"www.t.test.\".service]]\naddress = \"192.0.2.1\"\nsite = \"east\"\nweight = 3\n"
        "[[hostname.\"www.t.test.\".service]]\naddress = \"192.0.2.2\"\nsite = \"west\"\n"
        "[[hostname.\"www.t.test.\".service]]\naddress = \"192.0.2.3\"\nsite = \"south\"\nweight = 0.5\n";
    const std::string sites = "[site.east]\n[site.west]\n[site.south]\n";
    std::string path;
    std::string text =
        config(sites, "[hostname.\"www.t.test.\"]\npolicy = [\"health\", \"random\"]\n" + svcs);
    auto u = unread(text, &path);
    REQUIRE(u.size() == 2);
    CHECK(u[0].where == path + ":" + std::to_string(st::lineOf(text, "weight = 3") - 3));
    CHECK(
        u[0].message ==
        "hostname \"www.t.test.\": service 192.0.2.1 weight = 3 is not read: its policy's chooser \"random\" "
        "does not weigh services (\"weighted-random\", \"weighted-round-robin\", \"hashed\" and \"headroom\" "
        "do)");
    CHECK(u[1].message.find("service 192.0.2.3 weight = 0.5 is not read") != std::string::npos);
    // The default policy's chooser, headroom, reads weights when no service has a capacity.
    CHECK(unread(config(sites, "[hostname.\"www.t.test.\"]\n" + svcs)).empty());
    // A chooser that weighs: nothing to say. Weight 1 (the default, written or not) is never named.
    for (const char* chooser : {"weighted-random", "weighted-round-robin", "hashed", "headroom"}) {
        CAPTURE(chooser);
        CHECK(unread(config(sites, "[hostname.\"www.t.test.\"]\npolicy = [\"health\", \"" +
                                       std::string(chooser) + "\"]\n" + svcs))
                  .empty());
    }
    CHECK(unread(config(sites, "[hostname.\"www.t.test.\"]\npolicy = [\"health\", \"random\"]\n" +
                                   st::threeServices("www.t.test.", "weight = 1\n")))
              .empty());
}

TEST_CASE("unread: rtt keys without the rtt stage; read with it") {
    std::string text = config("[site.east]\n[site.west]\n[site.south]\n",
                              "[hostname.\"www.t.test.\"]\npolicy = [\"health\", \"random\"]\n"
                              "rtt_max_age = 30\nrtt_explore = 0\n" +
                                  st::threeServices("www.t.test."));
    auto u = unread(text);
    REQUIRE(u.size() == 2);
    CHECK(u[0].message ==
          "hostname \"www.t.test.\": rtt_max_age is not read: its policy has no \"rtt\" stage");
    CHECK(u[1].message ==
          "hostname \"www.t.test.\": rtt_explore is not read: its policy has no \"rtt\" stage");
    CHECK(unread(config("[site.east]\n[site.west]\n[site.south]\n",
                        "[hostname.\"www.t.test.\"]\npolicy = [\"health\", \"rtt\", \"random\"]\n"
                        "rtt_max_age = 30\nrtt_explore = 0\n" +
                            st::threeServices("www.t.test.")))
              .empty());
}

TEST_CASE("unread: [load.metric] without the load-factor chooser") {
    auto u = unread(config("[site.east]\n[site.west]\n[site.south]\n",
                           "[load.metric.busy]\ncapacity = 1\n\n[hostname.\"www.t.test.\"]\n" +
                               st::threeServices("www.t.test.")));
    REQUIRE(u.size() == 1);
    CHECK(u[0].message.find("[load.metric.busy] is not read") == 0);
}

TEST_CASE("unread: what the policy of each site reads") {
    CHECK(metricsReadBy({}) == (kReadsSessions | kReadsConnections));  // health, headroom
    CHECK(metricsReadBy({"health", "headroom"}) == (kReadsSessions | kReadsConnections));
    CHECK(metricsReadBy({"health", "session-threshold", "session-capacity", "flashback", "least-connections",
                         "random"}) == (kReadsSessions | kReadsFlashback | kReadsConnections | kReadsFactor));
    CHECK(metricsReadBy({"health", "cpu", "load-factor"}) == (kReadsCpu | kReadsFactor | kReadsLoads));
}

TEST_CASE("unread: weight without a weighted chooser, capacity without a stage that reads it") {
    const std::string sites = "[site.east]\n[site.west]\n[site.south]\n";
    auto u = unread(config(sites, "[hostname.\"www.t.test.\"]\npolicy = [\"health\", \"random\"]\n" +
                                      st::threeServices("www.t.test.", "weight = 5\ncapacity = 500\n")));
    REQUIRE(u.size() == 6);
    CHECK(
        u[0].message ==
        "hostname \"www.t.test.\": service 192.0.2.1 weight = 5 is not read: its policy's chooser \"random\" "
        "does not weigh services (\"weighted-random\", \"weighted-round-robin\", \"hashed\" and "
        "\"headroom\" do)");
    CHECK(u[3].message ==
          "hostname \"www.t.test.\" service 192.0.2.1: capacity = 500 is not read: its policy has neither "
          "\"headroom\" nor \"least-connections\"");
    // A weighted chooser reads weight; least-connections reads capacity (every service has one: no warning
    // about raw counts either).
    CHECK(unread(config(sites,
                        "[hostname.\"www.t.test.\"]\n"
                        "policy = [\"health\", \"least-connections\", \"weighted-random\"]\n" +
                            st::threeServices("www.t.test.", "weight = 5\ncapacity = 500\n")))
              .empty());
}

TEST_CASE("unread: stages that cannot know capacity, when an operator names them") {
    const std::string sites = "[site.east]\n[site.west]\n[site.south]\n";
    std::string path;
    std::string text = config(sites,
                              "[hostname.\"www.t.test.\"]\n"
                              "policy = [\"health\", \"least-connections\", \"random\"]\n" +
                                  st::threeServices("www.t.test."));
    auto u = unread(text, &path);
    REQUIRE(u.size() == 1);
    CHECK(u[0].where == path + ":" + std::to_string(st::lineOf(text, "[hostname.")));
    CHECK(
        u[0].message ==
        "hostname \"www.t.test.\": \"least-connections\" compares raw connection counts: 3 of its 3 services "
        "have no capacity, so a small full site looks best beside a large busy one; set capacity on every "
        "service (it then compares connections / capacity) or use the \"headroom\" chooser");
    u = unread(config(sites,
                      "[hostname.\"www.t.test.\"]\n"
                      "policy = [\"health\", \"session-capacity\", \"random\"]\n" +
                          st::threeServices("www.t.test.")));
    REQUIRE(u.size() == 1);
    CHECK(u[0].message ==
          "hostname \"www.t.test.\": \"session-capacity\" compares absolute free sessions: a large site wins "
          "while it has more free seats, however full it is; the \"headroom\" chooser compares utilisation");
    // session_floor is read by session-capacity only.
    u = unread(config(sites,
                      "[hostname.\"www.t.test.\"]\npolicy = [\"health\", \"random\"]\n"
                      "session_floor = 2\n" +
                          st::threeServices("www.t.test.")));
    REQUIRE(u.size() == 1);
    CHECK(
        u[0].message ==
        "hostname \"www.t.test.\": session_floor is not read: its policy has no \"session-capacity\" stage");
}

TEST_CASE("unread: a [cluster] of several members without etcd is named: the members share nothing now") {
    // What an operator upgrading from the peer protocol must hear: a drain on one member no longer reaches
    // the others by itself.
    const std::string control = "[control]\nlisten = \"127.0.0.2:9053\"\ntoken_file = \"tok\"\n";
    const std::string members = "members = [\"http://127.0.0.2:9053\", \"http://127.0.0.3:9053\"]\n";
    std::string path;
    std::string text = config("[site.east]\n", control + "[cluster]\n" + members);
    auto u = unread(text, &path);
    REQUIRE(u.size() == 1);
    CHECK(u[0].where == path + ":" + std::to_string(st::lineOf(text, "[cluster]")));
    CHECK(
        u[0].message ==
        "[cluster] has no `etcd`: the members share nothing (no drain, enable, report or health verdict "
        "reaches another member by itself); `members` is only the list gslbctl reaches, so drain and report "
        "through gslbctl (it sends to every member) or add etcd = [\"http://ADDRESS:2379\", …] to [cluster] "
        "(doc/ns-set.md \"Shared state in etcd\")");
    // With etcd, or with one member (nothing to share), nothing to say.
    CHECK(unread(config("[site.east]\n",
                        control + "[cluster]\n" + members + "etcd = [\"http://127.0.0.1:2379\"]\n"))
              .empty());
    CHECK(unread(config("[site.east]\n", control + "[cluster]\nmembers = [\"http://127.0.0.2:9053\"]\n"))
              .empty());
}
