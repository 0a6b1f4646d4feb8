// Resolver demand from re-query gaps (metrics/demand.hpp): worked values.
#include <doctest/doctest.h>

#include <cmath>

#include "metrics/demand.hpp"

using namespace gslb::metrics;

TEST_CASE("demand: the gap after the expiry of the answer given, an EWMA of 1/4") {
    DemandTable t(1);
    CHECK(t.size() == 1024);
    CHECK(t.bytes() == 16 * 1024);
    const std::uint64_t host = 77, k = DemandTable::key(0xabc, host, 0);
    // Nothing measured for the hostname yet: the default.
    auto e = t.observe(k, host, 1000);
    CHECK(e.source == DemandSource::Default);
    CHECK(e.demand == kDefaultDemand);
    t.answered(k, 1000, 5);        // expires at 6000
    e = t.observe(k, host, 6200);  // 200 ms after: the first sample
    CHECK(e.source == DemandSource::Measured);
    CHECK(e.gapMs == 200);
    CHECK(e.demand == 5);           // 1000 / 200 sessions/s
    t.answered(k, 6200, 5);         // expires at 11200
    e = t.observe(k, host, 11300);  // 100 ms: 200 + (100 - 200) / 4 = 175
    CHECK(e.gapMs == 175);
    CHECK(e.demand == doctest::Approx(1000.0 / 175));
    // A re-query before the expiry (prefetch, a farm): a gap of kMinGapMs, towards the cap.
    t.answered(k, 11300, 5);  // expires at 16300
    e = t.observe(k, host, 12000);
    CHECK(e.gapMs == 175 + (1 - 175) / 4.0);  // 131.5
    CHECK(e.demand == doctest::Approx(1000.0 / 131.5));
    CHECK(t.peek(k, host).gapMs == 131.5);  // peek does not learn
    CHECK(t.peek(k, host).gapMs == 131.5);
    // A different address family of the same resolver is another key.
    CHECK(DemandTable::key(0xabc, host, 1) != k);
}

TEST_CASE("demand: a resolver never seen gets the hostname's prior, the geometric mean of first samples") {
    DemandTable t(1);
    const std::uint64_t host = 5;
    const auto a = DemandTable::key(1, host, 0), b = DemandTable::key(2, host, 0),
               c = DemandTable::key(3, host, 0);
    t.answered(a, 0, 1);
    t.observe(a, host, 1200);  // first sample 200 ms: 5/s, the prior starts there
    auto p = t.peek(c, host);
    CHECK(p.source == DemandSource::Prior);
    CHECK(p.demand == doctest::Approx(5).epsilon(1e-6));
    t.answered(b, 0, 1);
    t.observe(b, host, 1050);  // 50 ms: 20/s; log prior += (log 20 - log 5) / 8
    CHECK(t.peek(c, host).demand == doctest::Approx(5 * std::pow(4.0, 1.0 / 8)).epsilon(1e-6));
    // Later samples of a known resolver do not move the prior (one vote per resolver).
    t.answered(a, 1200, 1);
    t.observe(a, host, 2201);
    CHECK(t.peek(c, host).demand == doctest::Approx(5 * std::pow(4.0, 1.0 / 8)).epsilon(1e-6));
    // Another hostname has its own prior.
    CHECK(t.peek(DemandTable::key(3, 6, 0), 6).source == DemandSource::Default);
}
