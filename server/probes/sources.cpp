// SourceMonitor (contract in sources.hpp).
#include "server/probes/sources.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>

#include "metrics/load_factor.hpp"
#include "metrics/sources/exposition.hpp"
#include "metrics/sources/mapping.hpp"
#include "server/base/clock.hpp"
#include "server/base/events.hpp"
#include "server/state/gslb.hpp"
#include "server/base/http_client.hpp"
#include "server/base/log.hpp"
#include "server/state/snapshot.hpp"

namespace gslb::server {

namespace ms = gslb::metrics::sources;

namespace {

ms::Aggregate aggregateOf(const std::string& a) {
    return a == "avg" ? ms::Aggregate::Avg : a == "max" ? ms::Aggregate::Max : ms::Aggregate::Sum;
}

const char* aggregateName(ms::Aggregate a) {
    return a == ms::Aggregate::Avg ? "avg" : a == ms::Aggregate::Max ? "max" : "sum";
}

std::string selectorText(const ms::Selector& s) {
    std::string out = s.metric;
    if (s.matchers.empty()) return out;
    out += '{';
    for (size_t i = 0; i < s.matchers.size(); ++i) {
        if (i) out += ',';
        out += s.matchers[i].label + (s.matchers[i].equal ? "=\"" : "!=\"") + s.matchers[i].value + '"';
    }
    return out + '}';
}

std::string urlEncode(const std::string& s) {
    static const char* hex = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : s) {
        if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
            out += char(c);
        } else {
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    return out;
}

}  // namespace

struct SourceMonitor::Impl {
    // One value a source writes. A member, not in the anonymous namespace: in a unity build this file is
    // included by another, and GCC warns of an Impl field whose type has internal linkage
    // (-Wsubobject-linkage).
    struct Target {
        ms::Key key = ms::Key::Cpu;
        std::string site;      // site name
        std::string address;   // Connections: the service's address
        std::string loadName;  // Load: the [load.metric.NAME]
        ms::Mapping
            mapping;        // scrape: selector, rate, aggregate, scale, offset; prometheus: aggregate, scale
        std::string query;  // prometheus
        std::string label;  // prometheus: the label naming the site / service address ("" = every series)
        std::string labelValue;  // prometheus: the value `label` must have: the site, or a service's address
        std::string id;          // identity for the rate() state
        std::string describe() const {
            std::string what = key == ms::Key::Load ? "loads." + loadName : ms::keyName(key);
            return (address.empty() ? site : site + "/" + address) + " " + what;
        }
    };
    struct Source {
        Impl* impl = nullptr;
        SourceConf conf;
        std::string identity;  // type + url + preset: what must match for a reload to keep the state
        std::vector<Target> targets;
        std::map<std::string, ms::RateState> rates;  // by Target::id
        std::unique_ptr<HttpClient> http;
        std::unique_ptr<PollTimers> timers;    // the next scrape, and this one's timeout
        std::map<size_t, std::string> bodies;  // prometheus: answers of this round by target
        size_t pending = 0;
        std::string roundError;
        int64_t startedUs = 0;  // monotonicUs() when the request was sent
        SourceStatus st;
        bool retired = false;
    };

    event_base* base;
    std::shared_ptr<metrics::StateTable> table;
    LoadConf load;  // the current config's [load], for scraped loads
    std::map<std::string, std::unique_ptr<Source>> sources;
    std::map<std::string, metrics::LoadHistory> loadHistory;  // by site

    explicit Impl(event_base* b) : base(b) {}
    ~Impl() {
        for (auto& [n, s] : sources) stop(*s);
    }

    void stop(Source& s) {
        cancelInflight(s);
        s.timers.reset();
        s.http.reset();
    }

    void cancelInflight(Source& s) {
        if (s.http) s.http->cancel();  // no callback follows
        s.pending = 0;
    }

    // ---- building the targets from the config ----
    static std::vector<Target> targetsOf(const Config& cfg, const SourceConf& src) {
        std::vector<Target> out;
        auto explicitTarget = [&](const MappingConf& m, ms::Key key, const std::string& site,
                                  const std::string& address, const std::string& load) {
            Target t;
            t.key = key;
            t.site = site;
            t.address = address;
            t.loadName = load;
            if (src.type == "scrape") {
                bool rate = false;
                std::string why;
                if (!ms::parseSelector(m.metric, rate, t.mapping.selector, why)) return;  // checked at load
                t.mapping.rate = m.rate || rate;
            } else {
                t.query = m.query;
                t.label = m.label;
                t.labelValue = key == ms::Key::Connections ? address : site;
            }
            t.mapping.aggregate = aggregateOf(m.aggregate);
            t.mapping.scale = m.scale;
            t.mapping.offset = m.offset;
            t.id = t.describe() + '\0' + m.metric + m.query;
            out.push_back(std::move(t));
        };
        auto presetTarget = [&](const ms::PresetMapping& pm, const std::string& site,
                                const std::string& address) {
            Target t;
            t.key = pm.key;
            t.site = site;
            t.address = address;
            t.mapping = pm.mapping;
            if (src.type == "prometheus") {
                // One query per key, grouped by the site label; the result is matched to the site by it.
                std::string inner = selectorText(pm.mapping.selector);
                if (pm.mapping.rate) inner = fmt::format("rate({}[{}s])", inner, int(src.rateWindow));
                t.query =
                    fmt::format("{} by ({}) ({})", aggregateName(pm.mapping.aggregate), src.siteLabel, inner);
                t.label = src.siteLabel;
                t.labelValue = site;
                t.mapping.rate = false;
                t.mapping.aggregate = ms::Aggregate::Sum;
                // Connections are a site value here: match the site, not the service's address.
            }
            t.id = t.describe() + '\0' + "preset";
            out.push_back(std::move(t));
        };
        std::vector<ms::PresetMapping> presetMappings;
        for (const auto& site : cfg.sites) {
            auto firstPreset = [&](ms::Key key) -> const ms::PresetMapping* {
                for (const auto& name : site.sources) {
                    auto it = cfg.sources.find(name);
                    if (it == cfg.sources.end() || it->second.preset.empty()) continue;
                    std::vector<ms::PresetMapping> p;
                    std::string why;
                    if (!ms::preset(it->second.preset, p, why)) continue;
                    for (const auto& pm : p)
                        if (pm.key == key) {
                            if (name != src.name) return nullptr;  // another source of the site has it first
                            presetMappings.push_back(pm);
                            return &presetMappings.back();
                        }
                }
                return nullptr;
            };
            const std::pair<ms::Key, const MappingConf*> siteKeys[] = {
                {ms::Key::Cpu, &site.cpu},
                {ms::Key::SessionsUsed, &site.sessionsUsed},
                {ms::Key::SessionsMax, &site.sessionsMax}};
            for (const auto& [key, m] : siteKeys) {
                if (m->set) {
                    if (m->source == src.name) explicitTarget(*m, key, site.name, "", "");
                } else if (const auto* pm = firstPreset(key)) {
                    presetTarget(*pm, site.name, "");
                }
            }
            for (const auto& [load, m] : site.loads)
                if (m.set && m.source == src.name) explicitTarget(m, ms::Key::Load, site.name, "", load);
            // Connections: each (site, address) once; an explicit mapping on any hostname's service wins.
            std::map<std::string, const MappingConf*> addresses;
            for (const auto& h : cfg.hostnames)
                for (const auto& svc : h.services)
                    if (svc.site == site.name) {
                        auto& slot = addresses[svc.address];
                        if (!slot || (!slot->set && svc.connections->set)) slot = &*svc.connections;
                    }
            for (const auto& [addr, m] : addresses) {
                if (m->set) {
                    if (m->source == src.name) explicitTarget(*m, ms::Key::Connections, site.name, addr, "");
                } else if (const auto* pm = firstPreset(ms::Key::Connections)) {
                    presetTarget(*pm, site.name, addr);
                }
            }
        }
        return out;
    }

    void apply(const Snapshot* s) {
        load = s->config.load;
        table = s->gslb.table;
        std::map<std::string, bool> keep;
        for (const auto& [name, sc] : s->config.sources) {
            std::string identity = sc.type + '\0' + sc.url + '\0' + sc.preset;
            auto it = sources.find(name);
            if (it != sources.end() && it->second->identity != identity) {
                retire(std::move(it->second));
                sources.erase(it);
                it = sources.end();
            }
            Source* src;
            bool fresh = it == sources.end();
            if (fresh) {
                auto ns = std::make_unique<Source>();
                ns->impl = this;
                ns->identity = identity;
                ns->st.name = name;
                src = ns.get();
                sources.emplace(name, std::move(ns));
                src->http = std::make_unique<HttpClient>(base, sc.host, sc.port);
                src->timers = std::make_unique<PollTimers>(
                    base, [this, src] { start(*src); },
                    [this, src] {
                        cancelInflight(*src);
                        finish(*src, fmt::format("timeout after {} s", src->conf.timeout));
                    });
            } else {
                src = it->second.get();
            }
            src->conf = sc;
            src->st.type = sc.type;
            src->st.url = sc.url;
            src->st.preset = sc.preset;
            src->http->setMaxBody(sc.maxBytes);
            src->http->setTimeout(sc.timeout);
            src->targets = targetsOf(s->config, sc);
            src->st.feeds.clear();
            for (const auto& t : src->targets) src->st.feeds.push_back(t.describe());
            keep[name] = true;
            if (fresh) start(*src);
        }
        for (auto it = sources.begin(); it != sources.end();) {
            if (keep.count(it->first)) {
                ++it;
                continue;
            }
            retire(std::move(it->second));
            it = sources.erase(it);
        }
    }

    void retire(std::unique_ptr<Source> s) {
        stop(*s);  // cancels what is in flight (no callback follows), so it can go now
    }

    // ---- one round ----
    void start(Source& s) {
        if (s.pending > 0) return;
        s.startedUs = monotonicUs();
        s.roundError.clear();
        s.bodies.clear();
        s.timers->deadlineIn(s.conf.timeout);
        if (s.conf.type == "scrape") {
            issue(s, 0, s.conf.path.empty() ? "/" : s.conf.path,
                  "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5");
        } else {
            std::string base = s.conf.path;
            while (!base.empty() && base.back() == '/') base.pop_back();
            for (size_t i = 0; i < s.targets.size(); ++i)
                issue(s, i, base + "/api/v1/query?query=" + urlEncode(s.targets[i].query),
                      "application/json");
            if (s.targets.empty()) finish(s, "");
        }
    }

    void issue(Source& s, size_t index, const std::string& uri, const char* accept) {
        ++s.pending;
        Source* src = &s;
        if (!s.http->send(EVHTTP_REQ_GET, uri, {{"Accept", accept}, {"User-Agent", "gslbd"}}, "",
                          [this, src, index](const HttpAnswer& a) { answered(*src, index, a); })) {
            --s.pending;
            s.roundError = "cannot start the request";
        }
    }

    static const char* requestError(evhttp_request_error e) {
        return e == EVREQ_HTTP_TIMEOUT          ? "timeout"
               : e == EVREQ_HTTP_EOF            ? "connection closed early"
               : e == EVREQ_HTTP_INVALID_HEADER ? "invalid response header"
               : e == EVREQ_HTTP_BUFFER_ERROR   ? "connect or read failed"
               : e == EVREQ_HTTP_DATA_TOO_LONG  ? "body larger than max_bytes"
                                                : "request failed";
    }

    // One answer of the round (`index`: prometheus, the target's position; scrape, 0).
    void answered(Source& s, size_t index, const HttpAnswer& a) {
        std::string err;
        if (a.status == 0) {
            err = a.failed ? requestError(a.error) : "connect or read failed";
        } else if (a.status != 200) {
            err = fmt::format("http {}", a.status);
        } else {
            s.bodies[index] = a.body;
        }
        if (!err.empty() && s.roundError.empty()) s.roundError = err;
        if (s.pending > 0) --s.pending;
        if (s.pending == 0) {
            std::string e = s.roundError;
            s.timers->clearDeadline();
            finish(s, e);
        }
    }

    void finish(Source& s, const std::string& error) {
        const double dur = double(monotonicUs() - s.startedUs) / 1000;
        s.st.durationMs = dur;
        ++s.st.scrapes;
        std::string err = error;
        if (err.empty()) err = evaluate(s);
        const std::string before = s.st.state;
        if (err.empty()) {
            s.st.state = "ok";
            s.st.lastSuccessUnixMs = wallMs();
            s.st.lastSuccessMonoMs = monotonicMs();
            if (before == "failing") {
                log::info("source {} ok again", s.st.name);
                recordEvent(log::Level::Info, "source", s.st.name, "ok again");
            }
        } else {
            ++s.st.failures;
            s.st.lastError = err;
            s.st.lastErrorUnixMs = wallMs();
            s.st.state = "failing";
            if (before != "failing") {
                log::warn("source {} ({}) failing: {}; its values age out after max_age", s.st.name,
                          s.conf.url, err);
                recordEvent(log::Level::Warn, "source", s.st.name, "failing: " + err);
            }
        }
        // Next round: one interval after this one started.
        s.timers->nextRoundIn(s.conf.interval - dur / 1000.0);
    }

    // Reads the round's bodies into values and writes them. Returns an error when a body is unusable.
    std::string evaluate(Source& s) {
        std::vector<double> values(s.targets.size(), NAN);
        size_t series = 0, matched = 0;
        const int64_t now = monotonicMs();
        if (s.conf.type == "scrape") {
            std::vector<ms::Sample> samples;
            ms::ParseStats stats;
            std::string perr;
            ms::Limits limits;
            limits.maxBytes = s.conf.maxBytes;
            std::map<std::string, bool, std::less<>> wanted;
            for (const auto& t : s.targets) wanted[t.mapping.selector.metric] = true;
            auto want = [&](std::string_view n) { return wanted.find(n) != wanted.end(); };
            if (!ms::parseExposition(s.bodies[0], limits, want, samples, stats, perr)) return perr;
            series = stats.series;
            for (size_t i = 0; i < s.targets.size(); ++i) {
                const Target& t = s.targets[i];
                ms::Reading rd = ms::read(t.mapping, samples);
                matched += rd.matched;
                values[i] = s.rates[t.id].apply(t.mapping, rd, now);
            }
        } else {
            for (size_t i = 0; i < s.targets.size(); ++i) {
                const Target& t = s.targets[i];
                nlohmann::json j = nlohmann::json::parse(s.bodies[i], nullptr, false);
                if (j.is_discarded() || !j.is_object()) return "the answer is not JSON";
                if (j.value("status", "") != "success")
                    return fmt::format("query failed: {}", j.value("error", std::string("no error given")));
                const auto& data = j["data"];
                const std::string rtype = data.value("resultType", "");
                ms::Reading rd;
                auto add = [&](const nlohmann::json& pair) {
                    if (!pair.is_array() || pair.size() != 2 || !pair[1].is_string()) return;
                    double v = NAN;
                    try {
                        v = std::stod(pair[1].get<std::string>());
                    } catch (...) {
                        return;
                    }
                    if (std::isnan(v)) return;
                    if (rd.matched == 0)
                        rd.value = v;
                    else if (t.mapping.aggregate == ms::Aggregate::Max)
                        rd.value = std::fmax(rd.value, v);
                    else
                        rd.value += v;
                    ++rd.matched;
                };
                if (rtype == "scalar") {
                    ++series;
                    add(data["result"]);
                } else if (rtype == "vector" && data["result"].is_array()) {
                    for (const auto& e : data["result"]) {
                        ++series;
                        if (!t.label.empty()) {
                            const auto& m = e["metric"];
                            if (!m.is_object() || !m.contains(t.label) || !m[t.label].is_string() ||
                                m[t.label].get<std::string>() != t.labelValue)
                                continue;
                        }
                        add(e["value"]);
                    }
                } else {
                    return fmt::format("query result type \"{}\" (want vector or scalar)", rtype);
                }
                if (t.mapping.aggregate == ms::Aggregate::Avg && rd.matched) rd.value /= double(rd.matched);
                matched += rd.matched;
                ms::Mapping m = t.mapping;
                m.rate = false;
                values[i] = s.rates[t.id].apply(m, rd, now);
            }
        }
        s.st.series = series;
        s.st.matched = matched;
        s.st.values = write(s, values, now);
        return "";
    }

    // Writes the values: per site a partial SiteReport (only the keys this source gave), per service its
    // connections. Returns how many values were written.
    size_t write(Source& s, const std::vector<double>& values, int64_t now) {
        if (!table) return 0;
        struct SiteVals {
            metrics::SiteReport rep;
            std::vector<metrics::LoadMetric> loads;
        };
        std::map<std::string, SiteVals> sites;
        size_t written = 0;
        for (size_t i = 0; i < s.targets.size(); ++i) {
            const Target& t = s.targets[i];
            double v = values[i];
            if (std::isnan(v)) continue;
            if (t.key == ms::Key::Connections) {
                auto slot = table->findService(t.site, t.address);
                if (!slot) continue;
                table->reportConnections(*slot, std::fmax(v, 0), now);
                ++written;
                continue;
            }
            SiteVals& sv = sites[t.site];
            switch (t.key) {
                case ms::Key::Cpu:
                    sv.rep.cpu = std::clamp(v, 0.0, 100.0);
                    break;
                case ms::Key::SessionsUsed:
                    sv.rep.sessionsUsed = std::fmax(v, 0);
                    break;
                case ms::Key::SessionsMax:
                    sv.rep.sessionsMax = std::fmax(v, 0);
                    break;
                case ms::Key::Load:
                    for (const auto& lm : load.metrics)
                        if (lm.name == t.loadName)
                            sv.loads.push_back(metrics::LoadMetric{std::fmax(v, 0), lm.capacity, lm.weight});
                    break;
                case ms::Key::Connections:
                    break;
            }
            ++written;
        }
        for (auto& [site, sv] : sites) {
            auto slot = table->findSite(site);
            if (!slot) continue;
            // A session table with no size or less room than in use is not a usable pair this round.
            if (std::isnan(sv.rep.sessionsUsed) || std::isnan(sv.rep.sessionsMax) || sv.rep.sessionsMax < 1) {
                sv.rep.sessionsUsed = sv.rep.sessionsMax = NAN;
            } else if (sv.rep.sessionsUsed > sv.rep.sessionsMax) {
                sv.rep.sessionsUsed = sv.rep.sessionsMax;
            }
            if (!sv.loads.empty()) {
                auto it = loadHistory.find(site);
                if (it == loadHistory.end())
                    it = loadHistory.emplace(site, metrics::LoadHistory(load.decay, size_t(load.history)))
                             .first;
                sv.rep.loadFactor = it->second.push(metrics::aggregateLoad(sv.loads));
            }
            table->reportSite(*slot, sv.rep, now);
        }
        return written;
    }
};

SourceMonitor::SourceMonitor(event_base* base) : impl_(std::make_unique<Impl>(base)) {}
SourceMonitor::~SourceMonitor() = default;

void SourceMonitor::apply(const Snapshot& snap) {
    impl_->apply(&snap);
}

std::vector<SourceStatus> SourceMonitor::status() const {
    std::vector<SourceStatus> out;
    for (const auto& [n, s] : impl_->sources) out.push_back(s->st);
    return out;
}

}  // namespace gslb::server
