#include <doctest/doctest.h>

#include "tools/gslbctl/report.hpp"

using namespace gslb::ctl;

static std::string build(std::vector<std::string> w) {
    std::string json, error;
    REQUIRE_MESSAGE(buildReport(w, json, error), error);
    return json;
}

static std::string fails(std::vector<std::string> w) {
    std::string json, error;
    CHECK_FALSE(buildReport(w, json, error));
    return error;
}

TEST_CASE("report: the design's example, in a fixed key order") {
    CHECK(build({"cpu=35", "sessions_used=200000", "sessions_max=1000000", "load.busy=0.3",
                 "conn.192.0.2.10=900"}) ==
          R"({"cpu":35,"sessions_used":200000,"sessions_max":1000000,"loads":{"busy":0.3},)"
          R"("services":{"192.0.2.10":{"connections":900}}})");
    CHECK(build({"conn.192.0.2.10=900", "load.busy=0.3", "sessions_max=1000000", "sessions_used=200000",
                 "cpu=35"}) ==
          R"({"cpu":35,"sessions_used":200000,"sessions_max":1000000,"loads":{"busy":0.3},)"
          R"("services":{"192.0.2.10":{"connections":900}}})");
}

TEST_CASE("report: partial reports, IPv6 services, decimals") {
    CHECK(build({"cpu=12.5"}) == R"({"cpu":12.5})");
    CHECK(build({"conn.2001:db8::10=7", "connections.192.0.2.1=0"}) ==
          R"({"services":{"2001:db8::10":{"connections":7},"192.0.2.1":{"connections":0}}})");
    CHECK(build({"load.busy=1", "load.mem=0.25"}) == R"({"loads":{"busy":1,"mem":0.25}})");
}

TEST_CASE("report: bad words") {
    CHECK(fails({}).find("nothing to report") != std::string::npos);
    CHECK(fails({"cpu"}) == "\"cpu\" is not key=value");
    CHECK(fails({"cpu=lots"}) == "cpu: \"lots\" is not a number");
    CHECK(fails({"cpu=1", "cpu=2"}) == "cpu is given twice");
    CHECK(fails({"conn.1.2.3.4=1", "conn.1.2.3.4=2"}) == "conn.1.2.3.4 is given twice");
    CHECK(fails({"memory=3"}).find("unknown key \"memory\"") == 0);
    CHECK(fails({"cpu=nan"}) == "cpu: \"nan\" is not a number");
}
