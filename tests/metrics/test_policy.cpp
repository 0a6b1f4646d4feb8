#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "metrics/policy.hpp"

using namespace gslb::metrics;
using gslb::metrics::test::brocadeStages;
using Names = std::vector<std::string>;

namespace {
std::string errorOf(const Names& names, const Params& p = {}) {
    Policy compiled = Policy::defaultPolicy();
    std::string error;
    return Policy::compile(names, p, compiled, error) ? std::string("<ok>") : error;
}
Policy compiled(const Names& names, const Params& p = {}) {
    Policy out = Policy::defaultPolicy();
    std::string error;
    REQUIRE_MESSAGE(Policy::compile(names, p, out, error), error);
    return out;
}
bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}
}  // namespace

TEST_CASE("policy: the default is health, then the headroom chooser") {
    const Policy p = Policy::defaultPolicy();
    CHECK(p.describe() == "health, headroom");
    REQUIRE(p.filters().size() == 1);
    CHECK(p.filters()[0]->kind == StageKind::Health);
    CHECK(p.chooser().kind == StageKind::Headroom);
}

TEST_CASE("policy: Brocade's order with HP's random last, the default before headroom, when named") {
    const Policy p = compiled(brocadeStages());
    CHECK(p.describe() ==
          "health, session-threshold, session-capacity, flashback, least-connections, random");
    REQUIRE(p.filters().size() == 5);
    CHECK(p.filters()[0]->kind == StageKind::Health);
    CHECK(p.chooser().kind == StageKind::Random);
    CHECK(p.params().sessionThreshold == 90);
    CHECK(p.params().sessionTolerance == 10);
    CHECK(p.params().flashbackTolerance == 10);
    CHECK(p.params().factor == 0);
    CHECK(p.params().answers == 1);
}

TEST_CASE("policy: any subset in any order, one chooser last") {
    Params params;
    params.factor = 0.25;
    params.answers = 2;
    const Policy r = compiled({"cpu", "health", "least-connections", "best-server"}, params);
    CHECK(r.describe() == "cpu, health, least-connections, best-server");
    CHECK(r.params().factor == 0.25);
    CHECK(r.params().answers == 2);
    CHECK(errorOf({"round-robin"}) == "<ok>");  // a chooser alone is a policy
}

TEST_CASE("policy: refused with a clear message") {
    const std::string unknown = errorOf({"health", "leastconn", "random"});
    CHECK(contains(unknown, "unknown stage \"leastconn\""));
    CHECK(contains(unknown, "least-connections"));  // lists the known ones
    CHECK(contains(unknown, "load-factor"));
    CHECK(contains(errorOf({"health", "cpu"}), "exactly one chooser"));
    CHECK(contains(errorOf({}), "exactly one chooser"));
    CHECK(contains(errorOf({"health", "random", "cpu"}), "must be the last stage"));
    CHECK(contains(errorOf({"random", "round-robin"}), "must be the last stage"));
    CHECK(contains(errorOf({"health", "round-robin", "random"}), "must be the last stage"));
    CHECK(contains(errorOf({"health", "cpu", "cpu", "random"}), "\"cpu\" appears twice"));
}

TEST_CASE("policy: parameter ranges") {
    const Names ok{"health", "random"};
    auto with = [&](auto set) {
        Params p;
        set(p);
        return errorOf(ok, p);
    };
    CHECK(contains(with([](Params& p) { p.sessionThreshold = 120; }), "session_threshold = 120"));
    CHECK(contains(with([](Params& p) { p.sessionThreshold = -1; }), "session_threshold"));
    CHECK(contains(with([](Params& p) { p.sessionTolerance = 101; }), "session_tolerance"));
    CHECK(contains(with([](Params& p) { p.flashbackTolerance = NAN; }), "flashback_tolerance"));
    CHECK(contains(with([](Params& p) { p.factor = -0.5; }), "factor"));
    CHECK(contains(with([](Params& p) { p.factor = INFINITY; }), "factor"));
    CHECK(contains(with([](Params& p) { p.answers = 0; }), "answers = 0"));
    CHECK(contains(with([](Params& p) { p.answers = 65; }), "answers = 65"));
    CHECK(with([](Params& p) {
              p.sessionThreshold = 0;
              p.sessionTolerance = 100;
              p.answers = 64;
          }) == "<ok>");
}
