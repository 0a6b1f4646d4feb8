#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "metrics/state_table.hpp"

using namespace gslb::metrics;

namespace {
// StateTable::build's table, which must build.
std::shared_ptr<StateTable> built(const std::vector<std::string>& sites,
                                  const std::vector<ServiceKey>& services,
                                  const StateTable* previous = nullptr) {
    std::shared_ptr<StateTable> t;
    std::string error;
    REQUIRE_MESSAGE(StateTable::build(sites, services, t, error, previous), error);
    return t;
}
// StateTable::build's error, or "<ok>".
std::string buildError(const std::vector<std::string>& sites, const std::vector<ServiceKey>& services) {
    std::shared_ptr<StateTable> t;
    std::string error;
    return StateTable::build(sites, services, t, error) ? std::string("<ok>") : error;
}
std::shared_ptr<StateTable> table(const StateTable* previous = nullptr) {
    return built({"east", "west"},
                 {{"east", "192.0.2.10"}, {"west", "198.51.100.20"}, {"east", "2001:db8::10"}}, previous);
}
}  // namespace

TEST_CASE("state table: slots, lookups and defaults") {
    auto t = table();
    CHECK(t->serviceCount() == 3);
    CHECK(t->siteCount() == 2);
    CHECK(t->findSite("west") == 1u);
    CHECK_FALSE(t->findSite("north").has_value());
    CHECK(t->findService("east", "2001:db8::10") == 2u);
    CHECK_FALSE(t->findService("west", "192.0.2.10").has_value());  // keyed by (site, address)
    CHECK(t->siteOf(1) == 1u);
    const Candidate c = fillCandidate(*t, 0, 0, 3.0, 1000, 60000);
    CHECK(c.health == Health::Unknown);
    CHECK(c.enabled);
    CHECK(c.siteUp);
    CHECK(c.siteEnabled);
    CHECK(c.preference == 128);
    CHECK(c.weight == 3.0);
    CHECK(std::isnan(c.connections));
    CHECK(std::isnan(c.cpu));
    CHECK(std::isnan(c.l4Ms));
}

TEST_CASE("state table: build errors") {
    CHECK(buildError({"east", "east"}, {}) != "<ok>");
    CHECK(buildError({"east"}, {{"west", "192.0.2.1"}}).find("unknown site \"west\"") != std::string::npos);
    CHECK(buildError({"east"}, {{"east", "192.0.2.1"}, {"east", "192.0.2.1"}}) != "<ok>");
}

TEST_CASE("state table: written values reach the candidate; stale reports read as unknown, never 0") {
    auto t = table();
    t->setHealth(0, Health::Up);
    t->setServiceEnabled(0, false);
    t->setFlashback(0, 2.5, 12.0);
    t->reportConnections(0, 900, 10000);
    t->reportSite(0, {35, 200000, 1000000, 70}, 10000);
    t->setSitePreference(0, 200);
    t->setSiteEnabled(0, false);
    t->setSiteUp(0, false);

    Candidate c = fillCandidate(*t, 0, 0, 1.0, 70000, 60000);  // exactly max_age old: fresh
    CHECK(c.health == Health::Up);
    CHECK_FALSE(c.enabled);
    CHECK_FALSE(c.siteEnabled);
    CHECK_FALSE(c.siteUp);
    CHECK(c.preference == 200);
    CHECK(c.l4Ms == 2.5);
    CHECK(c.l7Ms == 12.0);
    CHECK(c.connections == 900);
    CHECK(c.cpu == 35);
    CHECK(c.sessionsUsed == 200000);
    CHECK(c.sessionsMax == 1000000);
    CHECK(c.loadFactor == 70);

    c = fillCandidate(*t, 0, 0, 1.0, 70001, 60000);  // 1 ms too old
    CHECK(std::isnan(c.connections));
    CHECK(std::isnan(c.cpu));
    CHECK(std::isnan(c.sessionsUsed));
    CHECK(std::isnan(c.loadFactor));
    CHECK(c.l4Ms == 2.5);  // health-check times don't age
    CHECK(c.health == Health::Up);

    c = fillCandidate(*t, 0, 0, 1.0, 1000000000, 0);  // max age 0: no ageing
    CHECK(c.cpu == 35);
}

TEST_CASE("state table: a partial report updates its keys and their ages, and leaves the others alone") {
    auto t = table();
    t->reportSite(0, {35, 200000, 1000000, 70}, 10000);
    SiteReport cpuOnly;
    cpuOnly.cpu = 50;
    t->reportSite(0, cpuOnly, 40000);
    Candidate c = fillCandidate(*t, 0, 0, 1.0, 41000, 60000);
    CHECK(c.cpu == 50);
    CHECK(c.sessionsUsed == 200000);  // before the metric sources work a cpu-only report erased these
    CHECK(c.sessionsMax == 1000000);
    CHECK(c.loadFactor == 70);
    auto v = t->siteView(0);
    CHECK(v.cpuAtMs == 40000);
    CHECK(v.sessionsAtMs == 10000);
    CHECK(v.loadFactorAtMs == 10000);
    CHECK(v.reportAtMs == 40000);

    // Each key ages on its own: at 75 s the sessions (10 s) are stale, the cpu (40 s) is not.
    c = fillCandidate(*t, 0, 0, 1.0, 75000, 60000);
    CHECK(c.cpu == 50);
    CHECK(std::isnan(c.sessionsUsed));
    CHECK(std::isnan(c.sessionsMax));
    CHECK(std::isnan(c.loadFactor));

    // An empty report changes nothing, not even the report time.
    t->reportSite(0, SiteReport{}, 90000);
    CHECK(t->siteView(0).reportAtMs == 40000);
    // Half a session pair is not a session report.
    SiteReport half;
    half.sessionsUsed = 5;
    t->reportSite(0, half, 95000);
    CHECK(t->siteView(0).sessionsUsed == 200000);
    CHECK(t->siteView(0).sessionsAtMs == 10000);
}

TEST_CASE("state table: a reload carries over the (site, address) slots that still exist") {
    auto old = table();
    old->setHealth(1, Health::Down);
    old->reportConnections(1, 42, 5000);
    old->setSitePreference(1, 7);
    old->setHealth(0, Health::Up);

    const auto r = built({"west", "north"}, {{"north", "203.0.113.1"}, {"west", "198.51.100.20"}}, old.get());
    const auto& t = *r;
    CHECK(t.findService("west", "198.51.100.20") == 1u);
    CHECK(t.health(1) == Health::Down);
    CHECK(t.health(0) == Health::Unknown);  // new service: not checked yet
    CHECK(t.sitePreference(0) == 7);        // west moved from slot 1 to slot 0, its state with it
    CHECK(t.sitePreference(1) == 128);
    CHECK(fillCandidate(t, 1, 0, 1.0, 6000, 60000).connections == 42);
}

TEST_CASE("state table: one writer, concurrent readers (run under TSan/ASan to see races)") {
    auto t = table();
    std::atomic<bool> stop{false};
    std::thread writer([&] {
        for (int i = 0; i < 20000; ++i) {
            t->reportSite(0, {double(i % 100), double(i), double(i) + 1, 50}, i);
            t->setHealth(0, i % 2 ? Health::Up : Health::Down);
        }
        stop = true;
    });
    long reads = 0;
    while (!stop.load()) {
        const Candidate c = fillCandidate(*t, 0, 0, 1.0, 20000, 0);
        REQUIRE((std::isnan(c.cpu) || (c.cpu >= 0 && c.cpu < 100)));
        ++reads;
    }
    writer.join();
    CHECK(fillCandidate(*t, 0, 0, 1.0, 20000, 0).cpu == 99);
    CHECK(reads >= 0);
}

namespace {
// n services over 7 sites, each address used on two sites (hostnames share VIPs across sites in real
// configs): keys that differ only by site must still be told apart.
std::vector<ServiceKey> manyKeys(size_t n) {
    std::vector<ServiceKey> keys;
    for (size_t i = 0; i < n; ++i)
        keys.push_back({"s" + std::to_string(i % 7),
                        fmt::format("10.{}.{}.{}", i / 2 >> 16 & 255, i / 2 >> 8 & 255, i / 2 & 255)});
    return keys;
}
const std::vector<std::string> kSevenSites = {"s0", "s1", "s2", "s3", "s4", "s5", "s6"};
}  // namespace

TEST_CASE("state table index: every size up to and across the bucket doublings, exactly half full included") {
    // The (site, address) index is open addressing over a power of two of at least twice the services:
    // sizes 8, 16, …, 4096 fill it exactly to half, and at a few hundred keys collisions, runs of probes and
    // runs that wrap past the last bucket are certain. Each key must find its own slot and a key that is
    // not there must end its probe (a table without an empty bucket would probe forever).
    std::vector<size_t> sizes;
    for (size_t n = 0; n <= 70; ++n) sizes.push_back(n);
    for (size_t n : {127, 128, 129, 511, 512, 513, 4096}) sizes.push_back(n);
    for (size_t n : sizes) {
        CAPTURE(n);
        const auto keys = manyKeys(n);
        const auto r = built(kSevenSites, keys);
        const StateTable& t = *r;
        REQUIRE(t.serviceCount() == n);
        bool ok = true;
        for (uint32_t i = 0; i < n; ++i) ok = ok && t.findService(keys[i].site, keys[i].address) == i;
        CHECK(ok);
        for (uint32_t i = 0; i < n; ++i) {
            const auto& k = keys[i];
            // The address on a site that does not have it (i % 7 + 3 is never a site holding i / 2 too).
            ok = ok && !t.findService("s" + std::to_string((i % 7 + 3) % 7), k.address);
            ok = ok && !t.findService(k.site, k.address + ".");  // a longer address, the same prefix
            ok = ok && !t.findService(k.address, k.site);        // swapped
        }
        CHECK(ok);
        CHECK_FALSE(t.findService("", ""));
        CHECK_FALSE(t.findService("nowhere", "192.0.2.1"));
        CHECK_FALSE(t.findService("s0" + std::string(1, '\0'), "10.0.0.0"));  // a NUL is part of the key
    }
}

TEST_CASE("state table index: a duplicate found among many keys; a reload across sizes carries by key") {
    auto keys = manyKeys(1000);
    keys.push_back(keys[617]);
    CHECK(buildError(kSevenSites, keys) ==
          fmt::format("duplicate service {} on site \"{}\"", keys[617].address, keys[617].site));

    // 9 services (32 buckets) -> 300 in reverse order (1024 buckets): each old key's state lands on its new
    // slot, new keys start unknown.
    const auto small = built(kSevenSites, manyKeys(9));
    StateTable& old = *small;
    for (uint32_t i = 0; i < 9; ++i) old.reportConnections(i, 100 + i, 1000);
    auto bigKeys = manyKeys(300);
    std::reverse(bigKeys.begin(), bigKeys.end());
    const auto big = built(kSevenSites, bigKeys, &old);
    const StateTable& t = *big;
    for (uint32_t i = 0; i < 300; ++i) {
        CAPTURE(i);
        const double c = fillCandidate(t, i, t.siteOf(i), 1, 1000, 60000).connections;
        auto was = old.findService(bigKeys[i].site, bigKeys[i].address);
        if (was)
            CHECK(c == 100 + *was);
        else
            CHECK(std::isnan(c));
    }
}
