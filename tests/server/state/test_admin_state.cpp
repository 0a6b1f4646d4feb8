// server/state/admin_state: drains written atomically and read back; entries that left the config dropped.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "tests/server/helpers.hpp"
#include "server/state/admin_state.hpp"

using namespace gslb;
using namespace gslb::server::service;

namespace {

std::shared_ptr<metrics::StateTable> table(const std::vector<std::string>& sites,
                                           const std::vector<metrics::ServiceKey>& services) {
    std::shared_ptr<metrics::StateTable> t;
    std::string error;
    REQUIRE_MESSAGE(metrics::StateTable::build(sites, services, t, error), error);
    return t;
}

std::string slurp(const std::string& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

}  // namespace

TEST_CASE("admin state: drains round-trip through the file") {
    std::string dir = st::newDir();
    auto t =
        table({"east", "west"}, {{"east", "192.0.2.10"}, {"west", "192.0.2.20"}, {"west", "2001:db8::1"}});
    t->setSiteEnabled(*t->findSite("east"), false);
    t->setServiceEnabled(*t->findService("west", "2001:db8::1"), false);
    std::string error;
    REQUIRE(saveAdminState(*t, dir, error));
    CHECK(access((dir + "/admin-state.json.tmp").c_str(), F_OK) != 0);  // renamed, not left behind

    auto fresh =
        table({"east", "west"}, {{"east", "192.0.2.10"}, {"west", "192.0.2.20"}, {"west", "2001:db8::1"}});
    AdminStateLoad out;
    REQUIRE(loadAdminState(*fresh, dir, out, error));
    CHECK(out.applied == 2);
    CHECK(out.dropped.empty());
    CHECK_FALSE(fresh->siteEnabled(*fresh->findSite("east")));
    CHECK(fresh->siteEnabled(*fresh->findSite("west")));
    CHECK_FALSE(fresh->serviceEnabled(*fresh->findService("west", "2001:db8::1")));
    CHECK(fresh->serviceEnabled(*fresh->findService("west", "192.0.2.20")));

    // Enabling everything again writes an empty state.
    t->setSiteEnabled(*t->findSite("east"), true);
    t->setServiceEnabled(*t->findService("west", "2001:db8::1"), true);
    REQUIRE(saveAdminState(*t, dir, error));
    CHECK(slurp(dir + "/admin-state.json").find("east") == std::string::npos);
}

TEST_CASE("admin state: entries whose site or service left the config are dropped and reported") {
    std::string dir = st::newDir();
    auto t = table({"east", "west"}, {{"east", "192.0.2.10"}, {"west", "192.0.2.20"}});
    t->setSiteEnabled(*t->findSite("west"), false);
    t->setServiceEnabled(*t->findService("east", "192.0.2.10"), false);
    std::string error;
    REQUIRE(saveAdminState(*t, dir, error));
    auto now = table({"east"}, {{"east", "192.0.2.11"}});
    AdminStateLoad out;
    REQUIRE(loadAdminState(*now, dir, out, error));
    CHECK(out.applied == 0);
    REQUIRE(out.dropped.size() == 2);
    CHECK(out.dropped[0] == "site west (no longer configured)");
    CHECK(out.dropped[1] == "service 192.0.2.10 (east) (no longer configured)");
}

TEST_CASE("admin state: a missing file is no drain; a broken one is an error naming the file") {
    std::string dir = st::newDir();
    auto t = table({"east"}, {{"east", "192.0.2.10"}});
    AdminStateLoad out;
    std::string error;
    CHECK(loadAdminState(*t, dir, out, error));
    CHECK(out.applied == 0);
    std::ofstream(dir + "/admin-state.json") << "{\"version\": 1, \"drained_sites\": [";
    CHECK_FALSE(loadAdminState(*t, dir, out, error));
    CHECK(error.find(dir + "/admin-state.json: ") == 0);
    CHECK(t->siteEnabled(0));
}

TEST_CASE("admin state: a save that cannot write leaves the old file") {
    std::string dir = st::newDir();
    auto t = table({"east"}, {{"east", "192.0.2.10"}});
    t->setSiteEnabled(0, false);
    std::string error;
    REQUIRE(saveAdminState(*t, dir, error));
    std::string before = slurp(dir + "/admin-state.json");
    CHECK_FALSE(saveAdminState(*t, dir + "/missing", error));
    CHECK(error.find("/missing/admin-state.json.tmp") != std::string::npos);
    CHECK(slurp(dir + "/admin-state.json") == before);
}
