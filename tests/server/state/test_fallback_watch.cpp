// server/state/fallback_watch.hpp: a hostname entering and leaving its all-down fallback, from the counters.
#include <doctest/doctest.h>

#include "server/state/fallback_watch.hpp"
#include "server/state/snapshot.hpp"
#include "tests/server/helpers.hpp"

using namespace gslb::server;

namespace {

struct Host {
    std::shared_ptr<Snapshot> snap = st::snapshot(st::baseConfig(
        "[hostname.\"www.t.test.\"]\nfallback = \"192.0.2.99\"\n" + st::threeServices("www.t.test.")));
    const Gslb& g() const { return snap->gslb; }
    void fallback(int n) {
        for (int i = 0; i < n; ++i) snap->gslb.fallbacks->add(0, 0);
    }
    void answer(int n) {
        for (int i = 0; i < n; ++i) snap->gslb.hostAnswers->add(0, snap->gslb.hosts[0].family[0][0].hostSlot);
    }
};

}  // namespace

TEST_CASE("fallback watch: one line when a hostname enters the fallback, one when it leaves, none between") {
    Host h;
    FallbackWatch w;
    CHECK(w.sample(h.g()).empty());  // the first sample: nothing answered yet
    h.answer(10);
    CHECK(w.sample(h.g()).empty());
    h.fallback(3);
    h.answer(1);  // the interval in which the services went down
    auto t = w.sample(h.g());
    REQUIRE(t.size() == 1);
    CHECK(t[0].hostname == "www.t.test.");
    CHECK(t[0].entered);
    CHECK(t[0].fallbacks == 3);
    CHECK(t[0].answers == 1);
    CHECK(t[0].fallback == "192.0.2.99");
    auto lines = fallbackLines(t);
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].warn);
    CHECK(lines[0].message ==
          "answered by its fallback \"192.0.2.99\": no service passed the policy (down, drained or at a site "
          "taken out) for 3 of 4 answers; see gslbctl explain www.t.test.");
    h.fallback(50);  // still in: nothing more, however many queries
    CHECK(w.sample(h.g()).empty());
    CHECK(w.sample(h.g()).empty());  // no queries at all: no news
    h.fallback(1);
    h.answer(2);  // both in one interval: not yet out
    CHECK(w.sample(h.g()).empty());
    h.answer(5);
    t = w.sample(h.g());
    REQUIRE(t.size() == 1);
    CHECK_FALSE(t[0].entered);
    lines = fallbackLines(t);
    CHECK_FALSE(lines[0].warn);
    CHECK(lines[0].message == "answered by its services again (5 answers, none by the fallback)");
}

TEST_CASE("fallback watch: many hostnames at once are bounded to a few lines and a count") {
    std::vector<FallbackTransition> t;
    for (int i = 0; i < 12; ++i) t.push_back({"h" + std::to_string(i) + ".", i < 10, 1, 0, "all"});
    auto lines = fallbackLines(t);
    REQUIRE(lines.size() == FallbackWatch::kMaxLines + 1);
    CHECK(lines.back().hostname.empty());
    CHECK(lines.back().warn);
    CHECK(lines.back().message ==
          "and 5 more hostname(s) entered the fallback, 2 more left it (per hostname: "
          "gslbd_hostname_fallbacks_total in /metrics)");
}

TEST_CASE("fallback watch: answers before the first sample count (gslbd's first second)") {
    // gslbd answered from the fallback before the control loop's first tick: the first sample only recorded
    // the counts, and the fallback was never logged (e2e-gslb-semantics FallbackLog queries right after
    // start).
    Host h;
    FallbackWatch w;
    h.fallback(20);
    auto t = w.sample(h.g());
    REQUIRE(t.size() == 1);
    CHECK(t[0].entered);
    CHECK(t[0].fallbacks == 20);
    CHECK(t[0].answers == 0);
    CHECK(w.sample(h.g()).empty());
    // Answers only, before the first sample: not in the fallback, nothing to say.
    Host other;
    FallbackWatch w2;
    other.answer(5);
    CHECK(w2.sample(other.g()).empty());
}
