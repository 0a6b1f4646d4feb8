#include "server/conf/config_sources.hpp"

#include "metrics/sources/mapping.hpp"

namespace gslb::server {

namespace {

// http://ADDRESS[:PORT][/path]. An address literal (or localhost) keeps the control loop from blocking on a
// name lookup.
bool parseUrl(const std::string& url, SourceConf& s, std::string& why) {
    const std::string scheme = "http://";
    if (url.rfind(scheme, 0) != 0) {
        why = url.rfind("https://", 0) == 0 ? "https is not supported for metric sources (use http)"
                                            : "must start with http://";
        return false;
    }
    std::string rest = url.substr(scheme.size());
    auto slash = rest.find('/');
    std::string hostport = rest.substr(0, slash);
    s.path = slash == std::string::npos ? std::string(s.type == "prometheus" ? "" : "/metrics")
                                        : rest.substr(slash);
    std::string host = hostport, port;
    if (!hostport.empty() && hostport[0] == '[') {
        auto close = hostport.find(']');
        if (close == std::string::npos) {
            why = "unterminated [IPv6] address";
            return false;
        }
        host = hostport.substr(1, close - 1);
        if (close + 1 < hostport.size()) {
            if (hostport[close + 1] != ':') {
                why = "expected :PORT after ]";
                return false;
            }
            port = hostport.substr(close + 2);
        }
    } else if (auto colon = hostport.rfind(':'); colon != std::string::npos) {
        host = hostport.substr(0, colon);
        port = hostport.substr(colon + 1);
    }
    if (host == "localhost") host = "127.0.0.1";
    uint8_t bytes[16], len;
    if (!parseAddress(host, bytes, len)) {
        why = fmt::format("\"{}\" is not an IPv4/IPv6 address (or localhost)", host);
        return false;
    }
    s.host = host;
    s.port = 80;
    if (!port.empty()) {
        if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
            std::stoi(port) < 1 || std::stoi(port) > 65535) {
            why = fmt::format("\"{}\" is not a port", port);
            return false;
        }
        s.port = std::stoi(port);
    }
    return true;
}

}  // namespace

SourceConf readSource(TableReader& t, const std::string& name) {
    SourceConf s;
    s.name = name;
    s.line = t.line();
    s.type = t.getString("type", "scrape");
    if (s.type != "scrape" && s.type != "prometheus")
        t.fail(t.raw("type"), "type", fmt::format("\"{}\" is not scrape or prometheus", s.type));
    s.url = t.getString("url", "");
    if (s.url.empty()) t.fail(nullptr, "url", "is required");
    std::string why;
    if (!parseUrl(s.url, s, why)) t.fail(t.raw("url"), "url", why);
    s.interval = t.getNumber("interval", 5, 0.1, 86400);
    s.timeout = t.getNumber("timeout", 2, 0.05, 3600);
    if (s.timeout > s.interval)
        t.fail(t.raw("timeout"), "timeout",
               fmt::format("{} s is longer than the interval ({} s)", s.timeout, s.interval));
    s.preset = t.getString("preset", "");
    if (!s.preset.empty()) {
        std::vector<metrics::sources::PresetMapping> p;
        std::string why;
        if (!metrics::sources::preset(s.preset, p, why)) t.fail(t.raw("preset"), "preset", why);
    }
    s.siteLabel = t.getString("site_label", "site");
    s.rateWindow = t.getNumber("rate_window", 60, 1, 86400);
    s.maxBytes = size_t(t.getInt("max_bytes", 8 << 20, 1024, 256 << 20));
    t.finish();
    return s;
}

MappingConf readMapping(TableReader& t, const std::string& key,
                        const std::map<std::string, SourceConf>& sources) {
    MappingConf m;
    const toml::table* mt = t.getTable(key);
    if (!mt) return m;
    TableReader r(*mt, t.file(), t.join(key));
    m.set = true;
    m.line = r.line();
    m.source = r.getString("source", "");
    if (m.source.empty()) r.fail(nullptr, "source", "is required (a [source.NAME])");
    auto it = sources.find(m.source);
    if (it == sources.end())
        r.fail(r.raw("source"), "source",
               fmt::format("unknown source \"{}\" (no [source.{}])", m.source, m.source));
    m.metric = r.getString("metric", "");
    m.query = r.getString("query", "");
    m.label = r.getString("label", "");
    m.rate = r.getBool("rate", false);
    m.aggregate = r.getString("aggregate", "sum");
    if (m.aggregate != "sum" && m.aggregate != "avg" && m.aggregate != "max")
        r.fail(r.raw("aggregate"), "aggregate", fmt::format("\"{}\" is not sum, avg or max", m.aggregate));
    m.scale = r.getNumber("scale", 1, -1e12, 1e12);
    m.offset = r.getNumber("offset", 0, -1e12, 1e12);
    if (it->second.type == "scrape") {
        if (m.metric.empty()) r.fail(nullptr, "metric", "is required for a scraped source (a selector)");
        if (!m.query.empty()) r.fail(r.raw("query"), "query", "is for type = \"prometheus\" sources");
        bool rate = false;
        metrics::sources::Selector sel;
        std::string why;
        if (!metrics::sources::parseSelector(m.metric, rate, sel, why))
            r.fail(r.raw("metric"), "metric", why);
        m.rate = m.rate || rate;
    } else {
        if (m.query.empty()) r.fail(nullptr, "query", "is required for a prometheus source (PromQL)");
        if (!m.metric.empty()) r.fail(r.raw("metric"), "metric", "is for scraped sources; use query");
        if (m.rate) r.fail(r.raw("rate"), "rate", "write rate() into the query");
    }
    r.finish();
    return m;
}

void readSiteSources(TableReader& t, SiteConf& sc, const Config& cfg) {
    sc.sources = t.getStrings("sources", {});
    for (const auto& s : sc.sources)
        if (!cfg.sources.count(s))
            t.fail(t.raw("sources"), "sources", fmt::format("unknown source \"{}\" (no [source.{}])", s, s));
    sc.cpu = readMapping(t, "cpu", cfg.sources);
    sc.sessionsUsed = readMapping(t, "sessions_used", cfg.sources);
    sc.sessionsMax = readMapping(t, "sessions_max", cfg.sources);
    if (sc.sessionsUsed.set != sc.sessionsMax.set)
        t.fail(t.raw(sc.sessionsUsed.set ? "sessions_used" : "sessions_max"), "",
               "sessions_used and sessions_max are mapped together");
    if (sc.sessionsUsed.set && sc.sessionsUsed.source != sc.sessionsMax.source)
        t.fail(t.raw("sessions_max"), "sessions_max",
               "must come from the same source as sessions_used (a use ratio needs both from one moment)");
    if (const toml::table* lt = t.getTable("loads")) {
        TableReader lr(*lt, t.file(), t.join("loads"));
        for (const auto& [k, v] : *lt) {
            std::string name(k.str());
            bool known = false;
            for (const auto& lm : cfg.load.metrics) known |= lm.name == name;
            if (!known)
                lr.fail(&v, name,
                        fmt::format("unknown load metric \"{}\" (configure [load.metric.{}])", name, name));
            sc.loads[name] = readMapping(lr, name, cfg.sources);
        }
        lr.finish();
    }
}

}  // namespace gslb::server
