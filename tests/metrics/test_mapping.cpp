#include <doctest/doctest.h>

#include <cmath>

#include "metrics/sources/mapping.hpp"

using namespace gslb::metrics::sources;

namespace {
std::vector<Sample> samples(std::string_view text) {
    std::vector<Sample> out;
    ParseStats st;
    std::string err;
    REQUIRE_MESSAGE(parseExposition(text, {}, {}, out, st, err), err);
    return out;
}
Mapping mapping(std::string_view selector) {
    bool rate = false;
    auto s = parseSelector(selector, rate);
    REQUIRE_MESSAGE(s.ok(), s.error());
    Mapping m;
    m.selector = s.value();
    m.rate = rate;
    return m;
}
}  // namespace

TEST_CASE("selector: names, = and != matchers, rate()") {
    bool rate = false;
    auto s = parseSelector(R"( haproxy_frontend_current_sessions{proxy="www", mode != "tcp"} )", rate);
    REQUIRE_MESSAGE(s.ok(), s.error());
    CHECK(s->metric == "haproxy_frontend_current_sessions");
    REQUIRE(s->matchers.size() == 2);
    CHECK(s->matchers[1].label == "mode");
    CHECK_FALSE(s->matchers[1].equal);
    CHECK_FALSE(rate);
    CHECK(parseSelector(R"(rate(node_cpu_seconds_total{mode="idle"}))", rate).ok());
    CHECK(rate);
    CHECK(parseSelector("x{a=~\"b\"}", rate).error() == "label a: only = and != matchers are supported");
    CHECK_FALSE(parseSelector("{a=\"b\"}", rate).ok());
    CHECK_FALSE(parseSelector("x{a=\"b\"", rate).ok());
    CHECK_FALSE(parseSelector("x y", rate).ok());
    CHECK_FALSE(parseSelector("rate(x", rate).ok());
}

TEST_CASE("mapping: the matching series are summed; nothing matching is unknown, never 0") {
    auto s = samples(
        "haproxy_frontend_current_sessions{proxy=\"www\"} 12\n"
        "haproxy_frontend_current_sessions{proxy=\"api\"} 5\n"
        "haproxy_frontend_current_sessions{proxy=\"stats\"} 1\n");
    CHECK(read(mapping("haproxy_frontend_current_sessions"), s).value == 18);
    CHECK(read(mapping("haproxy_frontend_current_sessions{proxy=\"www\"}"), s).value == 12);
    CHECK(read(mapping("haproxy_frontend_current_sessions{proxy!=\"stats\"}"), s).value == 17);
    CHECK(read(mapping("haproxy_frontend_current_sessions{proxy!=\"stats\"}"), s).matched == 2);
    RateState st;
    Mapping none = mapping("haproxy_frontend_current_sessions{proxy=\"nope\"}");
    CHECK(std::isnan(st.apply(none, read(none, s), 1000)));
    Mapping avg = mapping("haproxy_frontend_current_sessions");
    avg.aggregate = Aggregate::Avg;
    CHECK(read(avg, s).value == 6);
    avg.aggregate = Aggregate::Max;
    CHECK(read(avg, s).value == 12);
}

TEST_CASE("mapping: scale and offset (haproxy cpu = 100 - idle)") {
    auto pm = preset("haproxy");
    REQUIRE(pm.ok());
    const Mapping& cpu = pm->at(0).mapping;
    CHECK(pm->at(0).key == Key::Cpu);
    RateState st;
    CHECK(st.apply(cpu, read(cpu, samples("haproxy_process_idle_time_percent 87\n")), 1) == 13);
}

TEST_CASE("mapping: rate() of counters between scrapes; the first scrape and a reset are unknown") {
    auto pm = preset("node");
    REQUIRE(pm.ok());
    const Mapping& cpu = pm->at(0).mapping;
    RateState st;
    // Two CPUs; idle seconds grow by 0.75 s per second each: 25 % busy.
    auto at = [&](double idle0, double idle1, std::int64_t ms) {
        std::string t = "node_cpu_seconds_total{cpu=\"0\",mode=\"idle\"} " + std::to_string(idle0) +
                        "\nnode_cpu_seconds_total{cpu=\"1\",mode=\"idle\"} " + std::to_string(idle1) +
                        "\nnode_cpu_seconds_total{cpu=\"0\",mode=\"user\"} 99999\n";
        return st.apply(cpu, read(cpu, samples(t)), ms);
    };
    CHECK(std::isnan(at(100, 200, 10000)));
    CHECK(at(101.5, 201.5, 12000) == doctest::Approx(25));
    CHECK(std::isnan(at(1, 1, 14000)));  // counter reset: unknown for one scrape
    CHECK(at(2.5, 2.5, 16000) == doctest::Approx(25));
}

TEST_CASE("presets: every name, and an unknown one") {
    for (const char* n : {"haproxy", "node", "nginx", "envoy"}) CHECK(preset(n).ok());
    CHECK(preset("f5").error() == "unknown preset \"f5\" (known: haproxy, node, nginx, envoy)");
}
