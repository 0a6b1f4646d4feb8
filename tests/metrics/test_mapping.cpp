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
    Mapping m;
    std::string error;
    REQUIRE_MESSAGE(parseSelector(selector, rate, m.selector, error), error);
    m.rate = rate;
    return m;
}
// parseSelector's error for `text`, or "<ok>".
std::string selectorError(std::string_view text, bool& rate) {
    Selector s;
    std::string error;
    return parseSelector(text, rate, s, error) ? std::string("<ok>") : error;
}
std::vector<PresetMapping> presetOf(std::string_view name) {
    std::vector<PresetMapping> pm;
    std::string error;
    REQUIRE_MESSAGE(preset(name, pm, error), error);
    return pm;
}
}  // namespace

TEST_CASE("selector: names, = and != matchers, rate()") {
    bool rate = false;
    Selector s;
    std::string error;
    REQUIRE_MESSAGE(
        parseSelector(R"( haproxy_frontend_current_sessions{proxy="www", mode != "tcp"} )", rate, s, error),
        error);
    CHECK(s.metric == "haproxy_frontend_current_sessions");
    REQUIRE(s.matchers.size() == 2);
    CHECK(s.matchers[1].label == "mode");
    CHECK_FALSE(s.matchers[1].equal);
    CHECK_FALSE(rate);
    CHECK(selectorError(R"(rate(node_cpu_seconds_total{mode="idle"}))", rate) == "<ok>");
    CHECK(rate);
    CHECK(selectorError("x{a=~\"b\"}", rate) == "label a: only = and != matchers are supported");
    CHECK(selectorError("{a=\"b\"}", rate) != "<ok>");
    CHECK(selectorError("x{a=\"b\"", rate) != "<ok>");
    CHECK(selectorError("x y", rate) != "<ok>");
    CHECK(selectorError("rate(x", rate) != "<ok>");
    // A refused selector leaves what it was given as it was.
    CHECK(s.metric == "haproxy_frontend_current_sessions");
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
    const auto pm = presetOf("haproxy");
    const Mapping& cpu = pm.at(0).mapping;
    CHECK(pm.at(0).key == Key::Cpu);
    RateState st;
    CHECK(st.apply(cpu, read(cpu, samples("haproxy_process_idle_time_percent 87\n")), 1) == 13);
}

TEST_CASE("mapping: rate() of counters between scrapes; the first scrape and a reset are unknown") {
    const auto pm = presetOf("node");
    const Mapping& cpu = pm.at(0).mapping;
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
    std::vector<PresetMapping> pm;
    std::string error;
    for (const char* n : {"haproxy", "node", "nginx", "envoy"}) CHECK(preset(n, pm, error));
    CHECK_FALSE(preset("f5", pm, error));
    CHECK(error == "unknown preset \"f5\" (known: haproxy, node, nginx, envoy)");
    CHECK(pm.size() == 1);  // envoy's, untouched by the refusal
}
