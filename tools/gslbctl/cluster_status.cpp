#include "tools/gslbctl/cluster_status.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <set>

#include "tools/gslbctl/status.hpp"

namespace gslb::ctl {
namespace {

using J = nlohmann::json;

// "v1 on A, B; v2 on C", or empty when every member has the same value.
std::string grouped(const std::vector<std::pair<std::string, std::string>>& urlValue) {
    std::vector<std::pair<std::string, std::vector<std::string>>> groups;  // in first-seen order
    for (const auto& [url, v] : urlValue) {
        auto it = groups.begin();
        while (it != groups.end() && it->first != v) ++it;
        if (it == groups.end())
            groups.push_back({v, {url}});
        else
            it->second.push_back(url);
    }
    if (groups.size() < 2) return {};
    std::string out;
    for (const auto& [v, urls] : groups) {
        if (!out.empty()) out += "; ";
        out += v + " on ";
        for (size_t i = 0; i < urls.size(); ++i) out += (i ? ", " : "") + urls[i];
    }
    return out;
}

const J& arrayOf(const J& s, const char* key) {
    static const J empty = J::array();
    return s.is_object() && s.contains(key) && s[key].is_array() ? s[key] : empty;
}

std::string str(const J& o, const char* key) {
    return o.is_object() && o.contains(key) && o[key].is_string() ? o[key].get<std::string>() : "";
}

// The element of `arr` whose fields `k1` (and `k2`) are v1 (and v2), or null.
const J* find(const J& arr, const char* k1, const std::string& v1, const char* k2 = nullptr,
              const std::string& v2 = "") {
    for (const auto& e : arr)
        if (str(e, k1) == v1 && (!k2 || str(e, k2) == v2)) return &e;
    return nullptr;
}

std::string enabledText(const J* e) {
    if (!e) return "absent";
    if (!e->contains("enabled") || !(*e)["enabled"].is_boolean()) return "-";
    return (*e)["enabled"].get<bool>() ? "enabled" : "drained";
}

}  // namespace

std::vector<std::string> clusterDifferences(const std::vector<MemberStatus>& members) {
    std::vector<std::string> out;
    std::vector<const MemberStatus*> up;
    for (const auto& m : members) {
        if (m.reached)
            up.push_back(&m);
        else
            out.push_back(fmt::format("{}: unreachable: {}", m.url, m.error));
    }
    auto compare = [&](const std::string& what, auto&& valueOf) {
        std::vector<std::pair<std::string, std::string>> v;
        for (const auto* m : up) v.emplace_back(m->url, valueOf(m->status));
        std::string g = grouped(v);
        if (!g.empty()) out.push_back(what + ": " + g);
    };
    compare("config digest", [](const J& s) {
        std::string d = str(s, "config_digest");
        return d.empty() ? std::string("-") : d.substr(0, 12);
    });
    // The union of names, in the order members list them.
    auto names = [&](const char* arr, const char* k1, const char* k2) {
        std::vector<std::pair<std::string, std::string>> all;
        std::set<std::pair<std::string, std::string>> seen;
        for (const auto* m : up)
            for (const auto& e : arrayOf(m->status, arr)) {
                auto key = std::make_pair(str(e, k1), k2 ? str(e, k2) : std::string());
                if (seen.insert(key).second) all.push_back(key);
            }
        return all;
    };
    // Plain references, not structured bindings: clang 14 (Debian 12, the fuzz build) cannot capture a
    // binding in a lambda (P1091 came in clang 16).
    for (const auto& zoneKey : names("zones", "name", nullptr)) {
        const std::string& zone = zoneKey.first;
        compare("zone " + zone + " serial", [&](const J& s) {
            const J* z = find(arrayOf(s, "zones"), "name", zone);
            return z ? cell(*z, "serial") : std::string("absent");
        });
    }
    for (const auto& siteKey : names("sites", "name", nullptr)) {
        const std::string& site = siteKey.first;
        compare("site " + site,
                [&](const J& s) { return enabledText(find(arrayOf(s, "sites"), "name", site)); });
        // Metric ages: never / fresh / stale, and fresh ages more than 10 s apart (a member the agent does
        // not report to, or that missed reports in etcd).
        double minFresh = INFINITY;
        for (const auto* m : up)
            if (const J* e = find(arrayOf(m->status, "sites"), "name", site))
                if ((*e).contains("report_age_s") && (*e)["report_age_s"].is_number())
                    minFresh = std::min(minFresh, (*e)["report_age_s"].get<double>());
        compare("site " + site + " metrics", [&](const J& s) -> std::string {
            const J* e = find(arrayOf(s, "sites"), "name", site);
            if (!e) return "absent";
            const J& age = (*e).contains("report_age_s") ? (*e)["report_age_s"] : J();
            if (!age.is_number()) return "never reported";
            double a = age.get<double>();
            const J& max = (*e).contains("max_age_s") ? (*e)["max_age_s"] : J();
            if (max.is_number() && a > max.get<double>()) return fmt::format("stale ({:.0f} s old)", a);
            if (a - minFresh > 10) return fmt::format("fresh but older ({:.0f} s old)", a);
            return "fresh";
        });
    }
    for (const auto& serviceKey : names("services", "site", "address")) {
        const std::string& site = serviceKey.first;
        const std::string& addr = serviceKey.second;
        std::string what = "service " + site + " " + addr;
        compare(what, [&](const J& s) {
            return enabledText(find(arrayOf(s, "services"), "site", site, "address", addr));
        });
        compare(what + " health", [&](const J& s) {
            const J* e = find(arrayOf(s, "services"), "site", site, "address", addr);
            return e ? cell(*e, "health") : std::string("absent");
        });
    }
    return out;
}

std::vector<MemberStatus> membersFromEtcd(const J& status, const std::vector<std::string>& listed) {
    const J* entries = nullptr;
    if (status.is_object() && status.contains("cluster") && status["cluster"].is_object() &&
        status["cluster"].contains("etcd") && status["cluster"]["etcd"].is_object())
        entries = &status["cluster"]["etcd"];
    const J& arr = entries ? arrayOf(*entries, "members") : arrayOf(J(), "members");
    // The names any entry gives: "SITE/ADDRESS" health keys, "site S" and "service S A" drains.
    std::set<std::string> sites;
    std::set<std::pair<std::string, std::string>> services;
    for (const auto& e : arr) {
        if (e.contains("health") && e["health"].is_object())
            for (const auto& [k, v] : e["health"].items()) {
                auto slash = k.find('/');
                if (slash == std::string::npos) continue;
                sites.insert(k.substr(0, slash));
                services.insert({k.substr(0, slash), k.substr(slash + 1)});
            }
        for (const auto& d : arrayOf(e, "drained")) {
            if (!d.is_string()) continue;
            const std::string s = d.get<std::string>();
            if (s.rfind("site ", 0) == 0) sites.insert(s.substr(5));
            if (s.rfind("service ", 0) == 0) {
                auto sp = s.find(' ', 8);
                if (sp != std::string::npos) services.insert({s.substr(8, sp - 8), s.substr(sp + 1)});
            }
        }
    }
    auto shaped = [&](const J& e) {
        std::set<std::string> drained;
        for (const auto& d : arrayOf(e, "drained"))
            if (d.is_string()) drained.insert(d.get<std::string>());
        J s = {{"config_digest", str(e, "config_digest")},
               {"zones", J::array()},
               {"sites", J::array()},
               {"services", J::array()}};
        if (e.contains("serials") && e["serials"].is_object())
            for (const auto& [zone, serial] : e["serials"].items())
                s["zones"].push_back({{"name", zone}, {"serial", serial}});
        for (const auto& site : sites)
            s["sites"].push_back({{"name", site}, {"enabled", !drained.count("site " + site)}});
        for (const auto& [site, addr] : services) {
            const std::string key = site + "/" + addr;
            J health = "absent";
            if (e.contains("health") && e["health"].is_object() && e["health"].contains(key))
                health = e["health"][key];
            s["services"].push_back({{"site", site},
                                     {"address", addr},
                                     {"enabled", !drained.count("service " + site + " " + addr)},
                                     {"health", health}});
        }
        return s;
    };
    std::vector<MemberStatus> out;
    std::set<std::string> seen;
    for (const auto& url : listed) {
        MemberStatus m;
        m.url = url;
        if (const J* e = find(arr, "member", url)) {
            m.reached = true;
            m.status = shaped(*e);
        } else {
            m.error = "no entry in etcd (stopped, or cut off from etcd for longer than its lease)";
        }
        seen.insert(url);
        out.push_back(std::move(m));
    }
    for (const auto& e : arr)
        if (!seen.count(str(e, "member")) && !str(e, "member").empty()) {
            seen.insert(str(e, "member"));
            out.push_back(
                MemberStatus{str(e, "member") + " (not in [cluster] members)", true, "", shaped(e)});
        }
    return out;
}

std::string renderClusterSummary(const std::vector<MemberStatus>& members) {
    std::string out = "MEMBERS\n";
    size_t w = 3;
    for (const auto& m : members) w = std::max(w, m.url.size());
    out += fmt::format("  {:<{}}  {:<12}  {:<12}  {}\n", "URL", w, "STATE", "CONFIG", "ZONE SERIALS");
    for (const auto& m : members) {
        if (!m.reached) {
            out += fmt::format("  {:<{}}  unreachable: {}\n", m.url, w, m.error);
            continue;
        }
        std::string d = str(m.status, "config_digest");
        std::string zones;
        for (const auto& z : arrayOf(m.status, "zones"))
            zones += (zones.empty() ? "" : ", ") + str(z, "name") + " " + cell(z, "serial");
        out += fmt::format("  {:<{}}  {:<12}  {:<12}  {}\n", m.url, w, "ok",
                           d.empty() ? "-" : d.substr(0, 12), zones.empty() ? "-" : zones);
    }
    auto diffs = clusterDifferences(members);
    if (diffs.empty()) {
        out += fmt::format("DIFFERENCES: none, all {} members agree\n", members.size());
    } else {
        size_t reached = 0;
        for (const auto& m : members) reached += m.reached;
        bool onlyUnreachable = true;
        for (const auto& d : diffs) onlyUnreachable &= d.find(": unreachable: ") != std::string::npos;
        out += "DIFFERENCES\n";
        for (const auto& d : diffs) out += "  " + d + "\n";
        if (onlyUnreachable && reached > 1) out += fmt::format("  (the {} members reached agree)\n", reached);
    }
    return out;
}

}  // namespace gslb::ctl
