#include "metrics/sources/mapping.hpp"

#include <fmt/format.h>

#include <cmath>

namespace gslb::metrics::sources {

namespace {

void skip(std::string_view s, std::size_t& p) {
    while (p < s.size() && (s[p] == ' ' || s[p] == '\t')) ++p;
}

}  // namespace

bool Selector::matches(const Sample& s) const {
    if (s.name != metric) return false;
    for (const auto& m : matchers) {
        std::string_view have;
        for (const auto& [k, v] : s.labels)
            if (k == m.label) have = v;
        if ((have == m.value) != m.equal) return false;
    }
    return true;
}

bool parseSelector(std::string_view text, bool& rate, Selector& out, std::string& error) {
    const auto fail = [&](std::string why) {
        error = std::move(why);
        return false;
    };
    rate = false;
    std::size_t p = 0;
    skip(text, p);
    std::string_view t = text.substr(p);
    while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.remove_suffix(1);
    if (t.substr(0, 5) == "rate(") {
        if (t.back() != ')') return fail("rate( without its closing )");
        rate = true;
        t = t.substr(5, t.size() - 6);
    }
    Selector sel;
    p = 0;
    skip(t, p);
    std::size_t n0 = p;
    if (p >= t.size() || !metricNameStart(t[p])) return fail("a selector starts with a metric name");
    while (p < t.size() && metricNameChar(t[p])) ++p;
    sel.metric = std::string(t.substr(n0, p - n0));
    skip(t, p);
    if (p < t.size() && t[p] == '{') {
        ++p;
        for (;;) {
            skip(t, p);
            if (p >= t.size()) return fail("expected } after the matchers");
            if (t[p] == '}') {
                ++p;
                break;
            }
            std::size_t l0 = p;
            while (p < t.size() && metricNameChar(t[p]) && t[p] != ':') ++p;
            if (p == l0) return fail("expected a label name in the matchers");
            Matcher m;
            m.label = std::string(t.substr(l0, p - l0));
            skip(t, p);
            if (p + 1 < t.size() && t[p] == '!' && t[p + 1] == '=') {
                m.equal = false;
                p += 2;
            } else if (p < t.size() && t[p] == '=' && (p + 1 >= t.size() || t[p + 1] != '~')) {
                p += 1;
            } else {
                return fail(fmt::format("label {}: only = and != matchers are supported", m.label));
            }
            skip(t, p);
            if (p >= t.size() || t[p] != '"') return fail(fmt::format("label {}: quote the value", m.label));
            ++p;
            bool closed = false;
            while (p < t.size()) {
                char c = t[p++];
                if (c == '"') {
                    closed = true;
                    break;
                }
                if (c == '\\' && p < t.size()) {
                    char e = t[p++];
                    c = e == 'n' ? '\n' : e;
                }
                m.value += c;
            }
            if (!closed) return fail(fmt::format("label {}: unterminated value", m.label));
            sel.matchers.push_back(std::move(m));
            skip(t, p);
            if (p < t.size() && t[p] == ',') ++p;
        }
    }
    skip(t, p);
    if (p != t.size()) return fail(fmt::format("unexpected \"{}\" after the selector", t.substr(p)));
    out = std::move(sel);
    return true;
}

Reading read(const Mapping& m, const std::vector<Sample>& samples) {
    Reading r;
    for (const auto& s : samples) {
        if (!m.selector.matches(s) || std::isnan(s.value)) continue;
        if (r.matched == 0 || m.aggregate != Aggregate::Max)
            r.value = r.matched == 0 ? s.value : r.value + s.value;
        else
            r.value = std::fmax(r.value, s.value);
        ++r.matched;
    }
    if (m.aggregate == Aggregate::Avg && r.matched > 0) r.value /= double(r.matched);
    return r;
}

double RateState::apply(const Mapping& m, const Reading& reading, std::int64_t nowMs) {
    if (reading.matched == 0) {
        have_ = false;  // a rate needs two consecutive readings of the same series set
        return NAN;
    }
    double v = reading.value;
    if (m.rate) {
        const bool had = have_;
        const double last = last_;
        const std::int64_t lastMs = lastMs_;
        last_ = v;
        lastMs_ = nowMs;
        have_ = true;
        if (!had || nowMs <= lastMs || v < last) return NAN;
        v = (v - last) / (double(nowMs - lastMs) / 1000.0);
    }
    const double out = v * m.scale + m.offset;
    return std::isfinite(out) ? out : NAN;
}

const char* keyName(Key k) {
    switch (k) {
        case Key::Cpu:
            return "cpu";
        case Key::SessionsUsed:
            return "sessions_used";
        case Key::SessionsMax:
            return "sessions_max";
        case Key::Load:
            return "loads";
        case Key::Connections:
            return "connections";
    }
    return "?";
}

const char* presetNames() {
    return "haproxy, node, nginx, envoy";
}

bool preset(std::string_view name, std::vector<PresetMapping>& out, std::string& error) {
    const auto found = [&](std::vector<PresetMapping> mappings) {
        out = std::move(mappings);
        return true;
    };
    auto m = [](Key k, const char* metric, double scale = 1, double offset = 0, bool rate = false,
                Aggregate agg = Aggregate::Sum, std::vector<Matcher> matchers = {}) {
        PresetMapping p{k, {}};
        p.mapping.selector.metric = metric;
        p.mapping.selector.matchers = std::move(matchers);
        p.mapping.scale = scale;
        p.mapping.offset = offset;
        p.mapping.rate = rate;
        p.mapping.aggregate = agg;
        return p;
    };
    if (name == "haproxy") {
        // HAProxy's built-in exporter (http-request use-service prometheus-exporter). CPU: the HP seed's
        // "CPU utilization of the local load balancer" = 100 - idle. The session table is the process's
        // connections against its maxconn. A service's connections: the current sessions of every frontend
        // (a service that wants one frontend maps haproxy_frontend_current_sessions{proxy="…"} itself).
        return found({m(Key::Cpu, "haproxy_process_idle_time_percent", -1, 100, false, Aggregate::Avg),
                      m(Key::SessionsUsed, "haproxy_process_current_connections"),
                      m(Key::SessionsMax, "haproxy_process_max_connections"),
                      m(Key::Connections, "haproxy_frontend_current_sessions")});
    }
    if (name == "node") {
        // node_exporter: host CPU = 100 - the idle share, the rate of the idle seconds averaged over CPUs.
        return found({m(Key::Cpu, "node_cpu_seconds_total", -100, 100, true, Aggregate::Avg,
                        {Matcher{"mode", "idle", true}})});
    }
    if (name == "nginx") {
        // nginx-prometheus-exporter over stub_status: active client connections. stub_status has no
        // session-table size (worker_connections is not exported), so no sessions.
        return found({m(Key::Connections, "nginx_connections_active")});
    }
    if (name == "envoy") {
        // Envoy /stats/prometheus: active downstream HTTP connections over every connection manager.
        return found({m(Key::Connections, "envoy_http_downstream_cx_active")});
    }
    error = fmt::format("unknown preset \"{}\" (known: {})", name, presetNames());
    return false;
}

}  // namespace gslb::metrics::sources
