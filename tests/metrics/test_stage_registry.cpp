#include <doctest/doctest.h>

#include <string>

#include "metrics/stage_registry.hpp"

using namespace gslb::metrics;

TEST_CASE("registry: every stage by its exact config name") {
    const char* filters[] = {"health",     "session-threshold", "session-capacity",
                             "flashback",  "least-connections", "cpu",
                             "preference", "topology",          "rtt"};
    const char* choosers[] = {"random",         "weighted-random", "round-robin", "weighted-round-robin",
                              "least-selected", "best-server",     "load-factor", "hashed",
                              "headroom"};
    for (const char* n : filters) {
        const StageInfo* s = findStage(n);
        REQUIRE(s != nullptr);
        CHECK(s->name == n);
        CHECK_FALSE(s->isChooser);
        CHECK(bool(s->filter));
        CHECK((s->chooser == nullptr));
        CHECK(&stageInfo(s->kind) == s);
    }
    for (const char* n : choosers) {
        const StageInfo* s = findStage(n);
        REQUIRE(s != nullptr);
        CHECK(s->isChooser);
        CHECK(bool(s->chooser));
        CHECK((s->filter == nullptr));
        CHECK(&stageInfo(s->kind) == s);
    }
    CHECK(allStages().size() == 18);
    CHECK(findStage("Health") == nullptr);
    CHECK(findStage("least_connections") == nullptr);
    CHECK(findStage("") == nullptr);
    CHECK(knownStageNames().find("weighted-round-robin") != std::string::npos);
}
