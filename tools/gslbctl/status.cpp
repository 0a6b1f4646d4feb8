#include "tools/gslbctl/status.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <vector>

namespace gslb::ctl {
namespace {

using J = nlohmann::json;

std::string valueText(const J& v) {
    if (v.is_null()) return "-";
    if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
    if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
    if (v.is_number_unsigned()) return std::to_string(v.get<uint64_t>());
    if (v.is_number_float()) {
        double d = v.get<double>();
        if (!std::isfinite(d)) return "-";
        if (std::fabs(d) < 1e15 && d == std::floor(d)) return fmt::format("{}", int64_t(d));
        std::string s = fmt::format("{:.2f}", d);
        while (s.back() == '0') s.pop_back();
        if (s.back() == '.') s.pop_back();
        return s;
    }
    if (v.is_string()) return v.get<std::string>().empty() ? "-" : v.get<std::string>();
    if (v.is_array()) {
        std::string out;
        for (const auto& e : v) out += (out.empty() ? "" : ",") + valueText(e);
        return out.empty() ? "-" : out;
    }
    return v.dump();
}

const J& field(const J& obj, const char* key) {
    static const J null;
    if (!obj.is_object()) return null;
    auto it = obj.find(key);
    return it == obj.end() ? null : *it;
}

struct Table {
    std::vector<std::string> head;
    std::vector<std::vector<std::string>> rows;
    std::string render() const {
        std::vector<size_t> w(head.size());
        for (size_t i = 0; i < head.size(); ++i) w[i] = head[i].size();
        for (const auto& r : rows)
            for (size_t i = 0; i < r.size() && i < w.size(); ++i) w[i] = std::max(w[i], r[i].size());
        auto line = [&](const std::vector<std::string>& r) {
            std::string s;
            for (size_t i = 0; i < r.size(); ++i) {
                s += r[i];
                if (i + 1 < r.size()) s += std::string(w[i] - r[i].size() + 2, ' ');
            }
            return s + "\n";
        };
        std::string out = line(head);
        for (const auto& r : rows) out += line(r);
        return out;
    }
};

// " (stale)" when a metric's age is past the max_age of the hostnames that read it (their answers then
// treat it as unknown); nothing when either is unknown.
std::string staleMark(const J& age, const J& maxAge) {
    if (!age.is_number() || !maxAge.is_number()) return "";
    return age.get<double>() > maxAge.get<double>() ? " (stale)" : "";
}

const J& array(const J& s, const char* key) {
    const J& a = field(s, key);
    static const J empty = J::array();
    return a.is_array() ? a : empty;
}

// `t` rendered and followed by a line end, or nothing when it has no rows.
std::string tableText(const Table& t, const char* end = "\n") {
    return t.rows.empty() ? "" : t.render() + end;
}

std::string zoneTable(const J& s) {
    Table zt{{"ZONE", "SERIAL", "RECORDS"}, {}};
    for (const auto& z : array(s, "zones"))
        zt.rows.push_back({cell(z, "name"), cell(z, "serial"), cell(z, "records")});
    return tableText(zt);
}

// Each site's metrics, " (stale)" on those older than its max_age.
std::string siteTable(const J& s) {
    Table st{{"SITE", "ENABLED", "UP", "PREF", "CPU%", "SESSIONS", "LOAD", "REPORT_AGE_S"}, {}};
    for (const auto& x : array(s, "sites")) {
        const J& maxAge = field(x, "max_age_s");
        const J& ages = field(x, "ages_s");
        st.rows.push_back({cell(x, "name"), cell(x, "enabled"), cell(x, "up"), cell(x, "preference"),
                           cell(x, "cpu") + staleMark(field(ages, "cpu"), maxAge),
                           cell(x, "sessions_used") + "/" + cell(x, "sessions_max") +
                               staleMark(field(ages, "sessions"), maxAge),
                           cell(x, "load_factor") + staleMark(field(ages, "load_factor"), maxAge),
                           cell(x, "report_age_s") + staleMark(field(x, "report_age_s"), maxAge)});
    }
    return tableText(st);
}

// A service's CHECK column: type:state, the last error while not up, and with probe ownership ([cluster]
// etcd) who probes it.
std::string checkText(const J& chk) {
    std::string check = cell(chk, "type");
    if (check == "-") return check;
    check += ":" + cell(chk, "state");
    std::string err = cell(chk, "last_error");
    // The last error explains a down state; once the check is up again it is history, not status.
    if (err != "-" && !err.empty() && cell(chk, "state") != "up") check += " (" + err + ")";
    // Probe ownership ([cluster] etcd): the verdict of the member that probes it, when not this one.
    const J& probe = field(chk, "probe");
    if (const J& here = field(probe, "here"); here.is_boolean() && !here.get<bool>()) {
        std::string by;
        for (const auto& o : array(probe, "owners"))
            if (o.is_string()) by += (by.empty() ? "" : ", ") + o.get<std::string>();
        check += " [verdict of " + (by.empty() ? std::string("no owner yet") : by) + "]";
    } else if (here.is_boolean()) {
        check += " [probed here]";
    }
    return check;
}

// Each service: its state (drained/… when drained), its site's CPU and sessions, FlashBack times, answers,
// check and hostnames.
std::string serviceTable(const J& s) {
    // Sites by name, for the CPU and sessions columns of their services.
    std::map<std::string, const J*> sites;
    for (const auto& site : array(s, "sites")) sites[cell(site, "name")] = &site;
    Table vt{{"SITE", "SERVICE", "STATE", "CONNS", "CPU%", "SESSIONS", "L4_MS", "L7_MS", "ANSWERS", "CHECK",
              "HOSTNAMES"},
             {}};
    for (const auto& x : array(s, "services")) {
        const J& chk = field(x, "check");
        std::string health = cell(x, "health");
        const J& en = field(x, "enabled");
        std::string state = (en.is_boolean() && !en.get<bool>()) ? "drained/" + health : health;
        std::string site = cell(x, "site");
        std::string cpu = "-", sess = "-";
        if (auto it = sites.find(site); it != sites.end()) {
            cpu = cell(*it->second, "cpu");
            sess = cell(*it->second, "sessions_used") + "/" + cell(*it->second, "sessions_max");
        }
        vt.rows.push_back(
            {site, cell(x, "address"), state,
             cell(x, "connections") + staleMark(field(x, "connections_age_s"), field(x, "max_age_s")), cpu,
             sess, cell(chk, "l4_ms"), cell(chk, "l7_ms"), cell(x, "answers"), checkText(chk),
             cell(x, "hostnames")});
    }
    return tableText(vt);
}

// Each GSLB hostname: policy, TTL, answers, fallback and its services; the last table, so no line end after.
std::string hostnameTable(const J& s) {
    Table ht{{"HOSTNAME", "POLICY", "TTL", "ANSWERS", "FALLBACK", "FALLBACKS TAKEN", "SERVICES"}, {}};
    for (const auto& x : array(s, "hostnames")) {
        // "site/address" for objects, the value itself otherwise. Appended piece by piece: GCC 12 warned of
        // a memcpy overlap (-Wrestrict, a false positive of its std::string operator+) in the release build.
        std::string svcs;
        for (const auto& v : array(x, "services")) {
            if (!svcs.empty()) svcs += ',';
            if (v.is_object()) {
                svcs += cell(v, "site");
                svcs += '/';
                svcs += cell(v, "address");
            } else {
                svcs += valueText(v);
            }
        }
        ht.rows.push_back({cell(x, "name"), cell(x, "policy"), cell(x, "ttl"), cell(x, "answers"),
                           cell(x, "fallback"), cell(x, "fallbacks_taken"), svcs.empty() ? "-" : svcs});
    }
    return tableText(ht, "");
}

// Reloads by trigger and result: a failed one means the server still serves an older configuration.
// Empty when the server did not say.
std::string reloadsLine(const J& s) {
    const J& rl = field(s, "reloads");
    if (!rl.is_object()) return "";
    std::string line;
    for (const char* t : {"sighup", "api"}) {
        const J& x = field(rl, t);
        line += fmt::format("{}{} {} ok, {} failed", line.empty() ? "" : "; ",
                            t == std::string("api") ? "API" : "SIGHUP", cell(x, "ok"), cell(x, "failed"));
    }
    return "RELOADS: " + line + "\n";
}

// [server] xdp: one line per interface, so a fast path that fell back to the sockets is seen here too.
std::string xdpLines(const J& s) {
    std::string out;
    for (const auto& x : array(s, "xdp")) {
        if (cell(x, "state") == "serving")
            out += fmt::format("XDP: {} serving, {} AF_XDP socket(s), {} mode, {} queries, {} responses\n",
                               cell(x, "name"), cell(x, "sockets"), cell(x, "mode"), cell(x, "queries"),
                               cell(x, "responses"));
        else
            out += fmt::format("XDP: {} {}: {}\n", cell(x, "name"), cell(x, "state"), cell(x, "reason"));
        if (const J& w = field(x, "warning"); w.is_string())
            out += fmt::format("XDP: {} warning: {}\n", cell(x, "name"), w.get<std::string>());
    }
    return out;
}

// Drains, in one place: what an operator took out and must put back (they survive restarts). Empty when
// nothing is drained.
std::string drainedLine(const J& s) {
    std::vector<std::string> drained;
    for (const auto& x : array(s, "sites")) {
        const J& en = field(x, "enabled");
        if (en.is_boolean() && !en.get<bool>()) drained.push_back("site " + cell(x, "name"));
    }
    for (const auto& x : array(s, "services")) {
        const J& en = field(x, "enabled");
        if (en.is_boolean() && !en.get<bool>())
            drained.push_back("service " + cell(x, "site") + " " + cell(x, "address"));
    }
    if (drained.empty()) return "";
    std::string out = "DRAINED: ";
    for (size_t i = 0; i < drained.size(); ++i) out += (i ? ", " : "") + drained[i];
    return out + "\n";
}

// The names the drains leave with nothing to answer (a drain holds through the fallback: NODATA).
std::string undrainedLine(const J& s) {
    std::string emptied;
    for (const auto& h : array(s, "hostnames"))
        for (const auto& t : array(h, "nothing_undrained"))
            if (t.is_string())
                emptied += (emptied.empty() ? "" : ", ") + cell(h, "name") + " " + t.get<std::string>();
    return emptied.empty() ? "" : "NOTHING UNDRAINED (NODATA or the fallback address): " + emptied + "\n";
}

// `line` after `out`, with one empty line between a table and the one-line sections that follow it.
void appendSection(std::string& out, const std::string& line) {
    if (line.empty()) return;
    if (!out.empty() && out.back() == '\n' && !(out.size() > 1 && out[out.size() - 2] == '\n')) out += "\n";
    out += line;
}

}  // namespace

std::string cell(const J& obj, const char* key) {
    return valueText(field(obj, key));
}

std::string renderStatus(const J& s) {
    std::string out = zoneTable(s) + siteTable(s) + serviceTable(s) + hostnameTable(s);
    appendSection(out, reloadsLine(s));
    appendSection(out, xdpLines(s));
    appendSection(out, drainedLine(s));
    out += undrainedLine(s);
    if (out.empty()) out = "(the server reported no zones, sites or services)\n";
    while (out.size() > 1 && out.back() == '\n' && out[out.size() - 2] == '\n') out.pop_back();
    return out;
}

}  // namespace gslb::ctl
