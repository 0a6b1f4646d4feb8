// `gslbctl status` with a [cluster]: where the members' /v1/status answers differ.
#include <doctest/doctest.h>

#include "tools/gslbctl/cluster_status.hpp"

using namespace gslb::ctl;
using J = nlohmann::json;

namespace {

J status() {
    return J::parse(R"({
      "config_digest": "0123456789abcdef0123",
      "zones": [{"name": "gslb.example.com.", "serial": 2026120101}],
      "sites": [{"name": "east", "enabled": true, "report_age_s": 1.5, "max_age_s": 60},
                {"name": "west", "enabled": true, "report_age_s": null, "max_age_s": 60}],
      "services": [{"site": "east", "address": "192.0.2.10", "enabled": true, "health": "up"},
                   {"site": "west", "address": "198.51.100.10", "enabled": true, "health": "up"}]
    })");
}

MemberStatus member(const std::string& url, J s) {
    return MemberStatus{url, true, "", std::move(s)};
}

}  // namespace

TEST_CASE("cluster status: members that agree") {
    std::vector<MemberStatus> ms = {member("A", status()), member("B", status()), member("C", status())};
    // Ages a little apart are the same view (the report reached each at a slightly different time).
    ms[1].status["sites"][0]["report_age_s"] = 3.0;
    CHECK(clusterDifferences(ms).empty());
    std::string text = renderClusterSummary(ms);
    CHECK(text.find("DIFFERENCES: none, all 3 members agree") != std::string::npos);
    CHECK(text.find("A    ok            0123456789ab  gslb.example.com. 2026120101") != std::string::npos);
}

TEST_CASE("cluster status: each kind of difference, grouped by value") {
    std::vector<MemberStatus> ms = {member("A", status()), member("B", status()), member("C", status())};
    ms[2].status["config_digest"] = "ffffffffffffffff";
    ms[1].status["zones"][0]["serial"] = 2026120102;
    ms[1].status["sites"][0]["enabled"] = false;
    ms[0].status["services"][1]["enabled"] = false;
    ms[2].status["services"][0]["health"] = "down";
    ms[2].status["sites"][0]["report_age_s"] = 90;  // stale against max_age 60
    ms[0].status["sites"][1]["report_age_s"] = 2;   // only A has west's metrics
    auto d = clusterDifferences(ms);
    std::vector<std::string> want = {
        "config digest: 0123456789ab on A, B; ffffffffffff on C",
        "zone gslb.example.com. serial: 2026120101 on A, C; 2026120102 on B",
        "site east: enabled on A, C; drained on B",
        "site east metrics: fresh on A, B; stale (90 s old) on C",
        "site west metrics: fresh on A; never reported on B, C",
        "service east 192.0.2.10 health: up on A, B; down on C",
        "service west 198.51.100.10: drained on A; enabled on B, C",
    };
    CHECK(d == want);
}

TEST_CASE("cluster status: fresh ages far apart, an absent site, an unreachable member") {
    std::vector<MemberStatus> ms = {member("A", status()), member("B", status()),
                                    MemberStatus{"C", false, "connection refused", nullptr}};
    ms[1].status["sites"][0]["report_age_s"] = 30;
    ms[1].status["services"].erase(1);
    auto d = clusterDifferences(ms);
    std::vector<std::string> want = {
        "C: unreachable: connection refused",
        "site east metrics: fresh on A; fresh but older (30 s old) on B",
        "service west 198.51.100.10: enabled on A; absent on B",
        "service west 198.51.100.10 health: up on A; absent on B",
    };
    CHECK(d == want);
    std::string text = renderClusterSummary(ms);
    CHECK(text.find("\n  C    unreachable: connection refused\n") != std::string::npos);

    std::vector<MemberStatus> two = {member("A", status()), member("B", status()),
                                     MemberStatus{"C", false, "no answer within 2 s", nullptr}};
    text = renderClusterSummary(two);
    CHECK(
        text.find("DIFFERENCES\n  C: unreachable: no answer within 2 s\n  (the 2 members reached agree)\n") !=
        std::string::npos);
}

TEST_CASE("cluster status from etcd: each member's entry, shaped as a status and compared") {
    // cluster.etcd.members of one member's /v1/status: B has an older serial and drained east; C is listed
    // but has no entry (its lease expired); D has an entry but is not listed.
    J st = J::parse(R"({"cluster": {"etcd": {"state": "live", "members": [
      {"member": "A", "config_digest": "0123456789abcdef", "etcd": "live",
       "serials": {"gslb.example.com.": 2026120102}, "drained": [],
       "health": {"east/192.0.2.10": "up", "west/198.51.100.10": "up"}},
      {"member": "B", "config_digest": "0123456789abcdef", "etcd": "live",
       "serials": {"gslb.example.com.": 2026120101}, "drained": ["site east", "service west 198.51.100.10"],
       "health": {"east/192.0.2.10": "up", "west/198.51.100.10": "down"}},
      {"member": "D", "config_digest": "ffffffffffffffff", "etcd": "live",
       "serials": {"gslb.example.com.": 2026120102}, "drained": [],
       "health": {"east/192.0.2.10": "up", "west/198.51.100.10": "up"}}]}}})");
    std::vector<MemberStatus> ms = membersFromEtcd(st, {"A", "B", "C"});
    REQUIRE(ms.size() == 4);
    CHECK(ms[0].reached);
    CHECK(ms[0].status["zones"][0]["serial"] == 2026120102);
    CHECK(ms[1].status["sites"][0] == J::parse(R"({"name": "east", "enabled": false})"));
    CHECK(!ms[2].reached);
    CHECK(ms[2].error == "no entry in etcd (stopped, or cut off from etcd for longer than its lease)");
    CHECK(ms[3].url == "D (not in [cluster] members)");
    std::vector<std::string> want = {
        "C: unreachable: no entry in etcd (stopped, or cut off from etcd for longer than its lease)",
        "config digest: 0123456789ab on A, B; ffffffffffff on D (not in [cluster] members)",
        "zone gslb.example.com. serial: 2026120102 on A, D (not in [cluster] members); 2026120101 on B",
        "site east: enabled on A, D (not in [cluster] members); drained on B",
        "service west 198.51.100.10: enabled on A, D (not in [cluster] members); drained on B",
        "service west 198.51.100.10 health: up on A, D (not in [cluster] members); down on B",
    };
    CHECK(clusterDifferences(ms) == want);
    // Not live or no entries: nobody is reached (the caller asks each member instead).
    std::vector<MemberStatus> none = membersFromEtcd(J::object(), {"A"});
    REQUIRE(none.size() == 1);
    CHECK(!none[0].reached);
}
