// GET /, /ui/page.css, /ui/page.js: the status page (contract in api_page.hpp). The server-side rendering
// mirrors the script's tables in a plainer form (no buttons, no chart): it is what an operator sees without
// JavaScript, and what the page shows before its first poll.
#include "server/control/api_page.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include "server/control/api.hpp"
#include "server/control/page/page_assets.hpp"
#include "server/base/clock.hpp"
#include "server/control/explain.hpp"

namespace gslb::server {

std::string htmlEscape(const std::string& s) {
    std::string o;
    o.reserve(s.size());
    for (char c : s) switch (c) {
            case '&':
                o += "&amp;";
                break;
            case '<':
                o += "&lt;";
                break;
            case '>':
                o += "&gt;";
                break;
            case '"':
                o += "&quot;";
                break;
            case '\'':
                o += "&#39;";
                break;
            default:
                o += c;
        }
    return o;
}

namespace {

using nlohmann::json;

std::string str(const json& j, const char* key) {
    if (!j.is_object() || !j.contains(key)) return "";
    const json& v = j[key];
    if (v.is_string()) return v.get<std::string>();
    if (v.is_null()) return "";
    return v.dump();
}

bool flag(const json& j, const char* key) {
    return j.is_object() && j.contains(key) && j[key].is_boolean() && j[key].get<bool>();
}

std::optional<double> number(const json& j, const char* key) {
    if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return std::nullopt;
    return j[key].get<double>();
}

std::string fmtNum(std::optional<double> v, const char* unit = "") {
    if (!v) return "<span class=\"muted\">–</span>";
    double x = *v;
    std::string n = std::fabs(x - std::round(x)) < 1e-9 ? fmt::format("{:.0f}", x) : fmt::format("{:.2f}", x);
    return n + unit;
}

std::string fmtAge(std::optional<double> s) {
    if (!s) return "never";
    if (*s < 1) return "now";
    if (*s < 120) return fmt::format("{:.0f} s", *s);
    if (*s < 7200) return fmt::format("{:.0f} min", *s / 60);
    return fmt::format("{:.0f} h", *s / 3600);
}

std::string aged(std::optional<double> age, double maxAge) {
    if (!age) return "<span class=\"muted\">never</span>";
    if (maxAge > 0 && *age > maxAge)
        return fmt::format(
            "<span class=\"stale\" title=\"older than max_age {} s: counts as unknown\">{} "
            "<b>stale</b></span>",
            maxAge, fmtAge(age));
    return fmtAge(age);
}

std::string pill(const std::string& cls, const std::string& text) {
    return fmt::format("<span class=\"pill {}\">{}</span>", htmlEscape(cls), htmlEscape(text));
}

std::string ms(std::optional<double> v) {
    if (!v) return "<span class=\"muted\">–</span>";
    return fmt::format("{:.{}f} ms", *v, *v < 10 ? 2 : 1);
}

// RFC 3986 §2.1: everything but the unreserved characters percent-encoded (a query parameter's value).
std::string urlEncode(const std::string& s) {
    std::string o;
    for (unsigned char c : s) {
        if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~')
            o += char(c);
        else
            o += fmt::format("%{:02X}", c);
    }
    return o;
}

// "quorum 2 of 3 members; 3 with live verdicts in etcd (lease TTL 2 s); …" (page.js quorumText says the
// same).
std::string quorumText(const json& q) {
    std::string t =
        fmt::format("quorum {} of {} members; {} with live verdicts in etcd (lease TTL {} s); ",
                    str(q, "quorum"), str(q, "members"), str(q, "voting_members"), str(q, "verdict_ttl_s"));
    if (flag(q, "own_view"))
        return t + fmt::format(
                       "{} service(s) decided on this member's own checks alone (too few fresh "
                       "verdicts) since {}",
                       str(q, "own_view_services"), str(q, "own_view_since"));
    return t + "every checked service is decided by the quorum";
}

// "1 of 2 votes down, quorum 2" for one service's check.quorum.
std::string votesText(const json& v, const json& q) {
    std::string t = fmt::format("{} of {} votes down, quorum {}", str(v, "down_votes"), str(v, "voters"),
                                str(q, "quorum"));
    if (flag(v, "own_view")) t += "; too few votes: own view";
    return t;
}

void replace(std::string& text, const std::string& key, const std::string& value) {
    auto pos = text.find(key);
    if (pos != std::string::npos) text.replace(pos, key.size(), value);
}

// The counts the tiles show, gathered while the tables are rendered.
struct Tally {
    size_t sitesIn = 0;       // sites up and enabled
    size_t drained = 0;       // sites and services drained
    size_t up = 0, down = 0;  // services by health
    size_t warnings = 0;      // warnings or worse in the last hour
};

// `m[key]`, or 0 when the key is not there.
double valueOr0(const std::map<std::string, double>& m, const std::string& key) {
    auto it = m.find(key);
    return it == m.end() ? 0 : it->second;
}

// The largest max_age of the hostnames that use a site or service: older metrics are stale for all.
struct MaxAges {
    std::map<std::string, double> site, service;  // by site name; by "site/address"
};

MaxAges maxAges(const json& hostnames) {
    MaxAges out;
    for (const auto& h : hostnames) {
        double m = number(h, "max_age_s").value_or(60);
        for (const auto& s : h.value("services", json::array())) {
            std::string site = str(s, "site");
            out.site[site] = std::max(out.site[site], m);
            auto& v = out.service[site + "/" + str(s, "address")];
            v = std::max(v, m);
        }
    }
    return out;
}

// GSLB answers per site (the sum of its services') and in all.
struct Answers {
    std::map<std::string, double> bySite;
    double total = 0;
};

Answers answerTotals(const json& services) {
    Answers out;
    for (const auto& s : services) {
        double a = number(s, "answers").value_or(0);
        out.bySite[str(s, "site")] += a;
        out.total += a;
    }
    return out;
}

// The sites table: health, admin state, preference, CPU, sessions, load factor, report age, answers.
std::string siteRows(const json& sites, const MaxAges& ages, const Answers& answers, Tally& tally) {
    std::string rows;
    for (const auto& s : sites) {
        std::string name = str(s, "name");
        bool up = flag(s, "up"), enabled = flag(s, "enabled");
        tally.sitesIn += up && enabled;
        tally.drained += !enabled;
        std::optional<double> age = number(s, "report_age_s");
        if (s.contains("ages_s") && s["ages_s"].is_object())
            for (const auto& [k, v] : s["ages_s"].items())
                if (v.is_number() && (!age || v.get<double>() > *age)) age = v.get<double>();
        std::string sessions = "<span class=\"muted\">–</span>";
        auto used = number(s, "sessions_used"), max = number(s, "sessions_max");
        if (used && max && *max > 0)
            sessions = fmt::format("<span class=\"bar\"><i style=\"width:{:.1f}%\"></i></span>{} / {}",
                                   std::min(100.0, 100 * *used / *max), fmtNum(used), fmtNum(max));
        double a = valueOr0(answers.bySite, name);
        std::string share = answers.total > 0 ? fmt::format("{:.1f} %", 100 * a / answers.total) : "";
        rows += fmt::format(
            "<tr data-site=\"{0}\" class=\"{1}\"><td class=\"site-name\">{0}</td><td "
            "class=\"health\">{2}</td>"
            "<td class=\"admin\">{3}</td><td class=\"num\">{4}</td><td class=\"num\">{5}</td><td>{6}</td>"
            "<td class=\"num\">{7}</td><td class=\"num age\">{8}</td><td class=\"num\">{9}<span "
            "class=\"share\">{10}</span></td><td class=\"act\"></td></tr>\n",
            htmlEscape(name), enabled ? "" : "out", up ? pill("up", "up") : pill("down", "down"),
            enabled ? pill("enabled", "enabled") : pill("drained", "drained"),
            fmtNum(number(s, "preference")), fmtNum(number(s, "cpu"), " %"), sessions,
            fmtNum(number(s, "load_factor")), aged(age, valueOr0(ages.site, name)), fmtNum(a), share);
    }
    return rows;
}

// The services table: address, site, hostnames, health and why, admin state (and the site's), check,
// FlashBack times, connections and answers.
std::string serviceRows(const json& services, const json& sites, const MaxAges& ages, Tally& tally) {
    std::map<std::string, bool> siteOut;
    for (const auto& s : sites) siteOut[str(s, "name")] = !flag(s, "enabled");
    std::string rows;
    for (const auto& s : services) {
        std::string site = str(s, "site"), address = str(s, "address"), health = str(s, "health");
        bool enabled = flag(s, "enabled");
        tally.up += health == "up";
        tally.down += health == "down";
        tally.drained += !enabled;
        const json& c = s.contains("check") ? s["check"] : json();
        std::string why;
        if (c.is_object()) {
            why = str(c, "last_change_reason");
            if (why.empty() && health == "down") why = str(c, "last_error");
        } else {
            why = "not checked";
        }
        std::string hosts;
        for (const auto& h : s.value("hostnames", json::array()))
            hosts += (hosts.empty() ? "" : "<br>") + htmlEscape(h);
        std::string check = "<span class=\"muted\">none</span>";
        if (c.is_object())
            check =
                fmt::format("<span class=\"mono\">{} {}</span><span class=\"why\">{} flaps, last {}</span>",
                            htmlEscape(str(c, "type")), htmlEscape(str(c, "target")),
                            fmtNum(number(c, "flaps")), ms(number(c, "last_latency_ms")));
        const json& fb = s.contains("flashback") ? s["flashback"] : json();
        std::string conns = "<span class=\"muted\">–</span>";
        if (auto n = number(s, "connections"))
            conns = fmt::format(
                "{} <span class=\"muted\">({})</span>", fmtNum(n),
                aged(number(s, "connections_age_s"), valueOr0(ages.service, site + "/" + address)));
        rows += fmt::format(
            "<tr data-service=\"{0}/{1}\" class=\"{2}\"><td class=\"addr\">{1}</td><td>{0}</td>"
            "<td class=\"hosts\">{3}</td><td class=\"health\">{4}{5}</td><td "
            "class=\"admin\">{6}</td><td>{7}</td>"
            "<td class=\"num\">{8}</td><td class=\"num\">{9}</td><td class=\"num\">{10}</td><td "
            "class=\"num\">{11}</td><td class=\"act\"></td></tr>\n",
            htmlEscape(site), htmlEscape(address), enabled ? "" : "out", hosts, pill(health, health),
            why.empty() ? "" : "<span class=\"why\">" + htmlEscape(why) + "</span>",
            (enabled ? pill("enabled", "enabled") : pill("drained", "drained")) +
                (siteOut[site] ? "<span class=\"why\">site drained</span>" : ""),
            check, ms(number(fb, "l4_ms")), ms(number(fb, "l7_ms")), conns, fmtNum(number(s, "answers")));
    }
    return rows;
}

// The events table, newest first and at most 200; counts the warnings of the last hour among all of them.
std::string eventRows(const std::vector<Event>& events, int64_t nowUnixMs, Tally& tally) {
    std::string rows;
    for (auto it = events.rbegin(); it != events.rend(); ++it) {
        if (it->level >= log::Level::Warn && nowUnixMs - it->unixMs < 3600 * 1000) ++tally.warnings;
        if (it - events.rbegin() >= 200) continue;
        std::string t = isoTime(it->unixMs);
        rows += fmt::format(
            "<tr data-seq=\"{}\" data-kind=\"{}\"><td title=\"{}\">{} {}</td><td><span class=\"lvl "
            "{}\">{}</span></td>"
            "<td><span class=\"kind\">{}</span></td><td class=\"mono\">{}</td><td>{}</td></tr>\n",
            it->seq, htmlEscape(it->kind), t, t.substr(0, 10), t.substr(11, 12), levelName(it->level),
            levelName(it->level), htmlEscape(it->kind), htmlEscape(it->subject), htmlEscape(it->message));
    }
    if (rows.empty()) rows = "<tr><td colspan=\"5\" class=\"muted\">no events yet</td></tr>";
    return rows;
}

// Metric sources, whatever their fields (the status JSON grows with them): one column per plain field;
// empty when there are none (the section is then hidden).
std::string sourceRows(const json& st) {
    std::string rows;
    if (!st.contains("sources") || !st["sources"].is_array() || st["sources"].empty()) return rows;
    // The status JSON's keys come sorted by name: the ones an operator reads first go first.
    std::vector<std::string> cols;
    for (const char* c : {"name", "state", "type", "url", "last_success_age_s", "last_error"})
        if (st["sources"][0].contains(c)) cols.push_back(c);
    for (const auto& s : st["sources"])
        if (s.is_object())
            for (const auto& [k, v] : s.items())
                if (!v.is_structured() && std::find(cols.begin(), cols.end(), k) == cols.end())
                    cols.push_back(k);
    rows += "<tr>";
    for (const auto& c : cols) rows += "<th>" + htmlEscape(c) + "</th>";
    rows += "</tr>\n";
    for (const auto& s : st["sources"]) {
        rows += "<tr data-source=\"" + htmlEscape(str(s, "name")) + "\">";
        for (const auto& c : cols) rows += "<td>" + htmlEscape(str(s, c.c_str())) + "</td>";
        rows += "</tr>\n";
    }
    return rows;
}

// [cluster] health_quorum (`q`, status's health_quorum): the services the quorum overrules (their effective
// state is not their own checks' verdict) or decides on this member's view alone.
std::string quorumDiffers(const json& q, const json& services) {
    std::string rows;
    for (const auto& s : services) {
        const json& c = s.contains("check") ? s["check"] : json();
        if (!c.is_object() || !c.contains("quorum")) continue;
        std::string own = str(c, "own_state"), eff = str(c, "state");
        if (own == eff) continue;
        std::string key = str(s, "site") + "/" + str(s, "address");
        rows += fmt::format(
            "<tr data-differs=\"{0}\"><td "
            "class=\"mono\">{0}</td><td>{1}</td><td>{2}</td><td>{3}</td></tr>\n",
            htmlEscape(key), pill(own, own), pill(eff, eff), htmlEscape(votesText(c["quorum"], q)));
    }
    if (rows.empty())
        rows =
            "<tr><td colspan=\"4\" class=\"muted\">none: every service is as this member's checks "
            "see it</td></tr>";
    return rows;
}

// The header's zone list: "<b>name</b> serial N", separated by " · ".
std::string zoneLine(const json& zones) {
    std::string line;
    for (const auto& z : zones)
        line += fmt::format("{}<b>{}</b> serial {}", line.empty() ? "" : " · ", htmlEscape(str(z, "name")),
                            htmlEscape(str(z, "serial")));
    return line;
}

// The summary tiles: sites in service, services up and down, drained, answers, recent warnings, and with
// [cluster] etcd whether etcd is live or cut off (the member then serves the last shared state and its own
// checks).
std::string tiles(const json& st, size_t sites, size_t services, double totalAnswers, const Tally& n) {
    auto tile = [](const char* cls, const std::string& v, const char* label, const char* id) {
        return fmt::format(
            "<div class=\"tile {}\" id=\"{}\"><div class=\"v\">{}</div><div class=\"l\">{}</div></div>", cls,
            id, v, label);
    };
    std::string out =
        tile(n.sitesIn == sites ? "good" : "bad", fmt::format("{}/{}", n.sitesIn, sites), "sites in service",
             "tile-sites") +
        tile(n.down ? "bad" : "good", fmt::format("{}/{}", n.up, services), "services up", "tile-services") +
        tile(n.down ? "bad" : "good", fmt::format("{}", n.down), "services down", "tile-down") +
        tile(n.drained ? "warn" : "good", fmt::format("{}", n.drained), "drained", "tile-drained") +
        tile("", fmtNum(totalAnswers), "GSLB answers (total)", "tile-qps") +
        tile(n.warnings ? "warn" : "good", fmt::format("{}", n.warnings), "warnings, last hour",
             "tile-events");
    if (st.contains("cluster") && st["cluster"].is_object() && st["cluster"].contains("etcd") &&
        st["cluster"]["etcd"].is_object()) {
        const std::string state = str(st["cluster"]["etcd"], "state");
        out += tile(state == "live" ? "good" : "bad", htmlEscape(state), "etcd (shared state)", "tile-etcd");
    }
    return out;
}

// The explain form: the GSLB hostnames to pick from, the fields as asked, the answer when there is one.
void fillExplain(std::string& html, const json& hostnames, const PageExplain& ex) {
    std::string names, first;
    for (const auto& h : hostnames) {
        std::string n = str(h, "name");
        if (first.empty()) first = n;
        names += "<option value=\"" + htmlEscape(n) + "\">";
    }
    std::string types;
    for (const char* t : {"A", "AAAA"})
        types += fmt::format("<option{}>{}</option>", ex.type == t ? " selected" : "", t);
    std::string links;
    if (!ex.name.empty()) {
        std::string q = "name=" + urlEncode(ex.name) + "&type=" + urlEncode(ex.type);
        if (!ex.client.empty()) q += "&client=" + urlEncode(ex.client);
        if (!ex.ecs.empty()) q += "&ecs=" + urlEncode(ex.ecs);
        links = fmt::format(
            "<a href=\"/v1/explain?{0}\">JSON</a> · <a href=\"/v1/explain?{0}&amp;format=text\">"
            "text</a>",
            htmlEscape(q));
    }
    replace(html, "@@EX_PLACEHOLDER@@", htmlEscape(first.empty() ? "www.example.com." : first));
    replace(html, "@@EX_NAME@@", htmlEscape(ex.name));
    replace(html, "@@EX_NAMES@@", names);
    replace(html, "@@EX_TYPES@@", types);
    replace(html, "@@EX_CLIENT@@", htmlEscape(ex.client));
    replace(html, "@@EX_ECS@@", htmlEscape(ex.ecs));
    replace(html, "@@EX_STATE@@", ex.text.empty() ? "" : ex.error ? "server-error" : "server");
    replace(html, "@@EX_OUT@@", htmlEscape(ex.text));
    replace(html, "@@EX_LINKS@@", links);
}

}  // namespace

// The page template (server/control/page/index.html) with each @@KEY@@ replaced by its part, rendered from
// the status JSON one part at a time.
std::string renderPage(const json& st, const std::vector<Event>& events, int64_t nowUnixMs,
                       const PageExplain& ex) {
    const json empty = json::array();
    const json& sites = st.contains("sites") ? st["sites"] : empty;
    const json& services = st.contains("services") ? st["services"] : empty;
    const json& hostnames = st.contains("hostnames") ? st["hostnames"] : empty;
    const json& zones = st.value("zones", empty);
    const json& q = st.contains("health_quorum") ? st["health_quorum"] : json();

    const MaxAges ages = maxAges(hostnames);
    const Answers answers = answerTotals(services);
    Tally tally;
    std::string sitesHtml = siteRows(sites, ages, answers, tally);
    std::string servicesHtml = serviceRows(services, sites, ages, tally);
    std::string eventsHtml = eventRows(events, nowUnixMs, tally);
    std::string sourcesHtml = sourceRows(st);

    std::string html(page::kIndexHtml);
    std::string title;
    for (const auto& z : zones) title += (title.empty() ? "" : ", ") + str(z, "name");
    replace(html, "@@TITLE@@", htmlEscape(title.empty() ? "status" : title));
    replace(html, "@@ZONES@@", zoneLine(zones));
    replace(html, "@@NOW@@", isoTime(nowUnixMs).substr(11, 8) + " UTC");
    replace(html, "@@TILES@@", tiles(st, sites.size(), services.size(), answers.total, tally));
    replace(html, "@@SITES@@", sitesHtml);
    replace(html, "@@SERVICES@@", servicesHtml);
    replace(html, "@@SOURCES_HIDDEN@@", sourcesHtml.empty() ? "hidden" : "");
    replace(html, "@@SOURCES@@", sourcesHtml);
    replace(html, "@@QUORUM_HIDDEN@@", q.is_object() ? "" : "hidden");
    replace(html, "@@QUORUM_SUMMARY@@", htmlEscape(q.is_object() ? quorumText(q) : ""));
    replace(html, "@@QUORUM_DIFFERS@@", q.is_object() ? quorumDiffers(q, services) : "");
    replace(html, "@@EVENTS@@", eventsHtml);
    fillExplain(html, hostnames, ex);
    return html;
}

ApiResponse ControlApi::page(const Snapshot& s, const std::string& file, const std::string& path) {
    if (file == "page.css") return ApiResponse{200, std::string(page::kPageCss), "text/css; charset=utf-8"};
    if (file == "page.js")
        return ApiResponse{200, std::string(page::kPageJs), "application/javascript; charset=utf-8"};
    if (!file.empty()) return apiError(404, "no such file: /ui/" + file);
    auto st = json::parse(status(s).body);
    int64_t now = wallMs();
    PageExplain ex;
    for (const auto& [k, v] : queryParams(path)) {
        if (k == "name") ex.name = v;
        if (k == "type" && !v.empty()) ex.type = v;
        if (k == "client") ex.client = v;
        if (k == "ecs") ex.ecs = v;
    }
    if (!ex.name.empty()) {
        ExplainRequest req{ex.name, ex.type, ex.client, ex.ecs};
        json j;
        std::string error;
        ex.error = !explain(s, req, j, error);
        ex.text = ex.error ? "error: " + error : explainText(j);
    }
    return ApiResponse{200, renderPage(st, eventLog().since(0, 200), now, ex), "text/html; charset=utf-8"};
}

}  // namespace gslb::server
