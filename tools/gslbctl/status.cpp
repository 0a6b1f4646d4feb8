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

}  // namespace

std::string cell(const J& obj, const char* key) {
    return valueText(field(obj, key));
}

std::string renderStatus(const J& s) {
    std::string out;
    // One empty line between a table and the one-line sections that follow it.
    auto blankLine = [&out] {
        if (!out.empty() && out.back() == '\n' && !(out.size() > 1 && out[out.size() - 2] == '\n'))
            out += "\n";
    };
    // Sites by name, for the CPU and sessions columns of their services.
    std::map<std::string, const J*> sites;
    for (const auto& site : array(s, "sites")) sites[cell(site, "name")] = &site;

    Table zt{{"ZONE", "SERIAL", "RECORDS"}, {}};
    for (const auto& z : array(s, "zones"))
        zt.rows.push_back({cell(z, "name"), cell(z, "serial"), cell(z, "records")});
    if (!zt.rows.empty()) out += zt.render() + "\n";

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
    if (!st.rows.empty()) out += st.render() + "\n";

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
        std::string check = cell(chk, "type");
        if (check != "-") {
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
        }
        vt.rows.push_back(
            {site, cell(x, "address"), state,
             cell(x, "connections") + staleMark(field(x, "connections_age_s"), field(x, "max_age_s")), cpu,
             sess, cell(chk, "l4_ms"), cell(chk, "l7_ms"), cell(x, "answers"), check, cell(x, "hostnames")});
    }
    if (!vt.rows.empty()) out += vt.render() + "\n";

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
    if (!ht.rows.empty()) out += ht.render();

    // Reloads by trigger and result: a failed one means the server still serves an older configuration.
    const J& rl = field(s, "reloads");
    if (rl.is_object()) {
        std::string line;
        for (const char* t : {"sighup", "api"}) {
            const J& x = field(rl, t);
            line += fmt::format("{}{} {} ok, {} failed", line.empty() ? "" : "; ",
                                t == std::string("api") ? "API" : "SIGHUP", cell(x, "ok"), cell(x, "failed"));
        }
        blankLine();
        out += "RELOADS: " + line + "\n";
    }

    // [server] xdp: one line per interface, so a fast path that fell back to the sockets is seen here too.
    bool first = true;
    for (const auto& x : array(s, "xdp")) {
        if (first) blankLine();
        first = false;
        if (cell(x, "state") == "serving")
            out += fmt::format("XDP: {} serving, {} AF_XDP socket(s), {} mode, {} queries, {} responses\n",
                               cell(x, "name"), cell(x, "sockets"), cell(x, "mode"), cell(x, "queries"),
                               cell(x, "responses"));
        else
            out += fmt::format("XDP: {} {}: {}\n", cell(x, "name"), cell(x, "state"), cell(x, "reason"));
        if (const J& w = field(x, "warning"); w.is_string())
            out += fmt::format("XDP: {} warning: {}\n", cell(x, "name"), w.get<std::string>());
    }

    // Drains, in one place: what an operator took out and must put back (they survive restarts).
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
    if (!drained.empty()) {
        blankLine();
        out += "DRAINED: ";
        for (size_t i = 0; i < drained.size(); ++i) out += (i ? ", " : "") + drained[i];
        out += "\n";
    }
    // The names the drains leave with nothing to answer (a drain holds through the fallback: NODATA).
    std::string emptied;
    for (const auto& h : array(s, "hostnames"))
        for (const auto& t : array(h, "nothing_undrained"))
            if (t.is_string())
                emptied += (emptied.empty() ? "" : ", ") + cell(h, "name") + " " + t.get<std::string>();
    if (!emptied.empty()) out += "NOTHING UNDRAINED (NODATA or the fallback address): " + emptied + "\n";
    if (out.empty()) out = "(the server reported no zones, sites or services)\n";
    while (out.size() > 1 && out.back() == '\n' && out[out.size() - 2] == '\n') out.pop_back();
    return out;
}

}  // namespace gslb::ctl
