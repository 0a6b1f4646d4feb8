// `gslbctl status|drain|enable|report|reload`: the running server, through its control API.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <chrono>

#include "server/conf/config.hpp"
#include "tools/gslbctl/cluster_status.hpp"
#include "tools/gslbctl/commands.hpp"
#include "tools/gslbctl/fileio.hpp"
#include "tools/gslbctl/http.hpp"
#include "tools/gslbctl/report.hpp"
#include "tools/gslbctl/status.hpp"

namespace gslb::ctl {
namespace {

constexpr const char* kDefaultUrl = "http://127.0.0.1:8053";

struct Endpoint {
    std::string url, token, tokenSource;
    // [cluster] members to reach (drain, enable, report, reload, status): empty without a [cluster], or with
    // --server; then `url` alone, as before.
    std::vector<std::string> members;
    // [cluster] etcd is set: a drain, enable or report taken by one member reaches every member through etcd
    // (doc/ns-set.md "Shared state in etcd"), so it goes to the first member that takes it.
    bool etcd = false;
};

std::string trim(const std::string& s) {
    size_t a = s.find_first_not_of(" \t\r\n"), b = s.find_last_not_of(" \t\r\n");
    return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
}

// The URL(s) and token: --server / --token-file win; otherwise [control] (and [cluster]) of the config.
// `fanOut`: the command goes to every [cluster] member (or to --member).
bool endpoint(const LiveArgs& a, bool needToken, bool fanOut, Endpoint& ep) {
    std::string tokenFile = a.tokenFile;
    ep.url = a.server;
    if (!a.member.empty() && !a.server.empty()) {
        fmt::print(stderr, "give --server or --member, not both\n");
        return false;
    }
    if (!a.member.empty() && a.config.empty()) {
        fmt::print(stderr, "--member names one of the [cluster] members of the config: give -c CONFIG\n");
        return false;
    }
    if (!a.config.empty()) {
        // Only [control] and [cluster] members: a mistake elsewhere in the config must not block an emergency
        // drain.
        server::Config cfg;
        std::string error, syntax;
        if (!server::loadControlConfig(a.config, cfg.control, error, &cfg.cluster, &syntax)) {
            fmt::print(stderr,
                       "{}\n(give --server URL and --token-file F to reach the server without the config)\n",
                       error);
            return false;
        }
        if (!syntax.empty())
            fmt::print(stderr,
                       "warning: {}\n(read [control] and [cluster] alone; the server would refuse this "
                       "file at its next reload)\n",
                       syntax);
        if (ep.url.empty() && fanOut && cfg.cluster.enabled) {
            ep.etcd = !cfg.cluster.etcd.empty();
            for (const auto& m : cfg.cluster.members) ep.members.push_back(m.url);
            if (!a.member.empty()) {
                server::ClusterMember want;
                std::string why;
                if (!server::parseMemberUrl(a.member, want, why)) {
                    fmt::print(stderr, "--member: {}\n", why);
                    return false;
                }
                ep.members.clear();
                for (const auto& m : cfg.cluster.members)
                    if (m.addr.text == want.addr.text) ep.members.push_back(m.url);
                if (ep.members.empty()) {
                    std::string list;
                    for (const auto& m : cfg.cluster.members) list += (list.empty() ? "" : ", ") + m.url;
                    fmt::print(stderr, "--member {} is not one of the [cluster] members of {} ({})\n",
                               a.member, a.config, list);
                    return false;
                }
            }
        } else if (!a.member.empty()) {
            fmt::print(stderr, "--member: {} has no [cluster] table\n", a.config);
            return false;
        }
        if (ep.url.empty()) {
            if (!cfg.control.enabled && ep.members.empty()) {
                fmt::print(stderr,
                           "{}: no [control] table: the control API is off (add [control] listen and "
                           "token_file, reload, or give --server)\n",
                           a.config);
                return false;
            }
            if (cfg.control.enabled) ep.url = "http://" + cfg.control.listen.text;
        }
        if (tokenFile.empty()) tokenFile = cfg.control.tokenFile;
    }
    if (ep.url.empty() && ep.members.empty()) ep.url = kDefaultUrl;
    while (!ep.url.empty() && ep.url.back() == '/') ep.url.pop_back();
    if (!tokenFile.empty()) {
        std::string text, error;
        if (!readFile(tokenFile, text, error)) {
            if (needToken) {
                fmt::print(stderr, "cannot read the token: {}\n", error);
                return false;
            }
        } else {
            ep.token = trim(text);
            ep.tokenSource = tokenFile;
        }
    }
    return true;
}

// What one server did: `out` for stdout, `err` for stderr (each a line or more, ending in "\n").
struct Outcome {
    bool ok = false;
    std::string out, err;
};

// Common judgement of an answer from `url`; `onOk` gets the parsed JSON of a 2xx answer and fills the
// outcome.
template <typename F>
Outcome judge(const Endpoint& ep, const std::string& url, const HttpResult& r, F&& onOk) {
    Outcome o;
    if (!r.reached) {
        o.err = fmt::format("cannot reach gslbd control API at {}: {}\n", url, r.error);
        return o;
    }
    nlohmann::json j = nlohmann::json::parse(r.body, nullptr, false);
    std::string serverError;
    if (j.is_object() && j.contains("error") && j["error"].is_string())
        serverError = j["error"].get<std::string>();
    if (r.status == 401) {
        o.err = fmt::format("the server refused the token (401): check token_file{}{}\n",
                            ep.tokenSource.empty() ? " (no token was sent)" : " (" + ep.tokenSource + ")",
                            serverError.empty() ? "" : ": " + serverError);
        return o;
    }
    if (r.status < 200 || r.status >= 300) {
        std::string msg = serverError;
        if (msg.empty()) msg = r.body.size() > 200 ? r.body.substr(0, 200) + "…" : r.body;
        o.err = fmt::format("gslbd answered {}: {}\n", r.status, msg.empty() ? "(no message)" : msg);
        return o;
    }
    if (j.is_discarded()) {
        o.err = fmt::format("gslbd answered {} with something that is not JSON\n", r.status);
        return o;
    }
    o.ok = true;
    onOk(j, o);
    return o;
}

// "URL: ok: first line" and the other lines indented below it.
void printMember(const std::string& url, const Outcome& o) {
    std::string text = o.ok ? o.out : o.err;
    if (!o.ok && !o.out.empty()) text = o.out + text;
    std::string prefix = "cannot reach gslbd control API at " + url + ": ";
    if (text.rfind(prefix, 0) == 0) text = "unreachable: " + text.substr(prefix.size());
    while (!text.empty() && text.back() == '\n') text.pop_back();
    std::string indented;
    for (char c : text) indented += c == '\n' ? std::string("\n    ") : std::string(1, c);
    fmt::print("{}: {}: {}\n", url, o.ok ? "ok" : "FAILED", indented);
}

// Sends one request to the server, or to every member at once (a dead member costs its timeout, not the
// sum of them); prints each member's outcome. Exit 1 when any failed, after trying them all.
template <typename F>
int send(const LiveArgs& a, const Endpoint& ep, const std::string& method, const std::string& path,
         const std::string& body, F&& onOk) {
    if (ep.members.empty()) {
        auto r = httpRequest(ep.url, method, path, ep.token, body);
        Outcome o = judge(ep, ep.url, r, onOk);
        fmt::print("{}", o.out);
        fmt::print(stderr, "{}", o.err);
        return o.ok ? kOk : kFailed;
    }
    std::vector<HttpCall> calls;
    // Without etcd the members share nothing: gslbctl reaches every member itself (doc/ns-set.md); with
    // --member, only that one is meant.
    for (const auto& m : ep.members) calls.push_back(HttpCall{m, method, path, ep.token, body});
    auto results = httpRequests(calls, int(a.timeout * 1000));
    size_t failed = 0;
    for (size_t i = 0; i < calls.size(); ++i) {
        Outcome o = judge(ep, ep.members[i], results[i], onOk);
        failed += !o.ok;
        printMember(ep.members[i], o);
    }
    if (failed) {
        fmt::print(stderr, "{} of {} member(s) failed\n", failed, calls.size());
        return kFailed;
    }
    return kOk;
}

// With [cluster] etcd: the members in order until one takes the request (etcd carries it to the others);
// each failure is printed, as with every member. Exit 1 when none took it. --member: that one only.
template <typename F>
int sendToOne(const LiveArgs& a, const Endpoint& ep, const std::string& method, const std::string& path,
              const std::string& body, F&& onOk) {
    if (!ep.etcd || !a.member.empty() || ep.members.size() < 2) return send(a, ep, method, path, body, onOk);
    for (const auto& m : ep.members) {
        auto results = httpRequests({HttpCall{m, method, path, ep.token, body, {}}}, int(a.timeout * 1000));
        Outcome o = judge(ep, m, results[0], onOk);
        if (o.ok) o.out += "(through etcd: every member applies it)\n";
        printMember(m, o);
        // A refusal by a member that answered (a bad site, a bad token) is the same on every member.
        if (o.ok || (results[0].reached && results[0].status >= 400 && results[0].status < 500))
            return o.ok ? kOk : kFailed;
    }
    fmt::print(stderr, "no member of {} took it\n", ep.members.size());
    return kFailed;
}

// `gslbctl status --json`'s "members": each member's URL, reached or why not, and its status.
nlohmann::json memberRows(const std::vector<MemberStatus>& ms) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& m : ms)
        rows.push_back({{"url", m.url},
                        {"reached", m.reached},
                        {"error", m.reached ? nlohmann::json(nullptr) : nlohmann::json(m.error)},
                        {"status", m.reached ? m.status : nlohmann::json(nullptr)}});
    return rows;
}

}  // namespace

int status(const LiveArgs& a) {
    Endpoint ep;
    if (!endpoint(a, false, true, ep)) return kFailed;
    if (ep.members.empty()) {
        auto r = httpRequest(ep.url, "GET", "/v1/status", ep.token, "");
        Outcome o = judge(ep, ep.url, r, [&](const nlohmann::json& j, Outcome& o) {
            if (a.json)
                o.out = r.body.empty() || r.body.back() != '\n' ? r.body + "\n" : r.body;
            else
                o.out = renderStatus(j);
        });
        fmt::print("{}", o.out);
        fmt::print(stderr, "{}", o.err);
        return o.ok ? kOk : kFailed;
    }
    // [cluster] etcd: the first member that answers, live on etcd, has every member's entry there; the NS
    // set is compared from that one answer.
    if (ep.etcd)
        for (const auto& url : ep.members) {
            auto r = httpRequest(url, "GET", "/v1/status", ep.token, "");
            nlohmann::json j;
            Outcome o = judge(ep, url, r, [&](const nlohmann::json& got, Outcome&) { j = got; });
            if (!o.ok) continue;
            const nlohmann::json* e = nullptr;
            if (j.contains("cluster") && j["cluster"].is_object() && j["cluster"].contains("etcd") &&
                j["cluster"]["etcd"].is_object())
                e = &j["cluster"]["etcd"];
            if (!e || !e->contains("state") || (*e)["state"] != "live") break;  // each member, below
            std::vector<MemberStatus> ms = membersFromEtcd(j, ep.members);
            bool all = true;
            for (const auto& m : ms) all &= m.reached;
            if (a.json) {
                nlohmann::json out = {{"source", "etcd"},
                                      {"through", url},
                                      {"members", memberRows(ms)},
                                      {"differences", clusterDifferences(ms)}};
                fmt::print("{}\n", out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
                return all ? kOk : kFailed;
            }
            fmt::print("== {} (the first member reached; the others as etcd holds them, below)\n{}\n", url,
                       renderStatus(j));
            fmt::print("{}", renderClusterSummary(ms));
            return all ? kOk : kFailed;
        }
    // A [cluster]: every member's view at once, the first one reached in full, then where they differ.
    std::vector<HttpCall> calls;
    for (const auto& m : ep.members) calls.push_back(HttpCall{m, "GET", "/v1/status", ep.token, "", {}});
    auto results = httpRequests(calls, int(a.timeout * 1000));
    std::vector<MemberStatus> ms;
    for (size_t i = 0; i < calls.size(); ++i) {
        MemberStatus m;
        m.url = ep.members[i];
        Outcome o = judge(ep, m.url, results[i], [&](const nlohmann::json& j, Outcome&) { m.status = j; });
        m.reached = o.ok;
        if (!o.ok) {
            m.error = o.err;
            while (!m.error.empty() && m.error.back() == '\n') m.error.pop_back();
            std::string prefix = "cannot reach gslbd control API at " + m.url + ": ";
            if (m.error.rfind(prefix, 0) == 0) m.error = m.error.substr(prefix.size());
        }
        ms.push_back(std::move(m));
    }
    bool all = true;
    for (const auto& m : ms) all &= m.reached;
    if (a.json) {
        nlohmann::json j = {{"members", memberRows(ms)}, {"differences", clusterDifferences(ms)}};
        fmt::print("{}\n", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
        return all ? kOk : kFailed;
    }
    for (const auto& m : ms)
        if (m.reached) {
            fmt::print("== {} (the first member reached; the others are compared below)\n{}\n", m.url,
                       renderStatus(m.status));
            break;
        }
    fmt::print("{}", renderClusterSummary(ms));
    return all ? kOk : kFailed;
}

int admin(const LiveArgs& a, const std::string& action, const std::string& site, const std::string& address) {
    Endpoint ep;
    if (!endpoint(a, true, true, ep)) return kFailed;
    std::string path = "/v1/sites/" + pathSegment(site);
    if (!address.empty()) path += "/services/" + pathSegment(address);
    path += "/" + action;
    // --member makes one member differ on purpose: with etcd, its change is not written there
    // (doc/ns-set.md).
    if (!a.member.empty()) path += "?scope=member";
    return sendToOne(a, ep, "POST", path, "{}", [&](const nlohmann::json& j, Outcome& o) {
        o.out = fmt::format("{}: {}{}\n", action == "drain" ? "drained" : "enabled", site,
                            address.empty() ? " (every service of the site)" : " " + address);
        // A drain holds through the fallback: a name whose every candidate is now drained answers NODATA
        // (or its fixed address) - say so, the operator may have meant to move the traffic, not stop it.
        if (action == "drain" && j.is_object() && j.contains("nothing_undrained") &&
            j["nothing_undrained"].is_array())
            for (const auto& w : j["nothing_undrained"])
                if (w.is_object())
                    o.out += fmt::format(
                        "warning: {} {}: every candidate is drained now: answered {} until one is enabled\n",
                        cell(w, "hostname"), cell(w, "type"), cell(w, "answer"));
        // A service drained on its own stays drained when its site is enabled.
        if (action == "enable" && address.empty() && j.is_object() && j.contains("services_drained") &&
            j["services_drained"].is_array() && !j["services_drained"].empty()) {
            std::string list;
            for (const auto& a : j["services_drained"])
                if (a.is_string()) list += (list.empty() ? "" : ", ") + a.get<std::string>();
            o.out += fmt::format(
                "note: {} service(s) of {} stay drained on their own: {} (gslbctl enable {} ADDRESS "
                "answers with one again)\n",
                j["services_drained"].size(), site, list, site);
        }
    });
}

int report(const LiveArgs& a, const std::string& site, const std::vector<std::string>& words) {
    std::string body, error;
    if (!buildReport(words, body, error)) {
        fmt::print(stderr, "report: {}\n", error);
        return kUsage;
    }
    Endpoint ep;
    if (!endpoint(a, true, true, ep)) return kFailed;
    return sendToOne(
        a, ep, "POST", "/v1/sites/" + pathSegment(site) + "/report", body,
        [&](const nlohmann::json& j, Outcome& o) {
            o.out = fmt::format("reported for {}: {}\n", site, body);
            // Keys no policy at the site reads (server/control/api_report.cpp): stored, but say so.
            if (j.contains("ignored") && j["ignored"].is_array() && !j["ignored"].empty()) {
                std::string keys;
                for (const auto& k : j["ignored"])
                    if (k.is_string()) keys += (keys.empty() ? "" : ", ") + k.get<std::string>();
                o.out += fmt::format(
                    "ignored: {} (no hostname with a service at {} has a stage that reads it; see "
                    "gslbd's log)\n",
                    keys, site);
            }
        });
}

int reload(const LiveArgs& a) {
    Endpoint ep;
    if (!endpoint(a, true, true, ep)) return kFailed;
    return send(a, ep, "POST", "/v1/reload", "{}", [&](const nlohmann::json& j, Outcome& o) {
        if (j.is_object() && j.contains("ok") && j["ok"].is_boolean() && !j["ok"].get<bool>()) {
            o.ok = false;
            o.err = fmt::format("reload failed: {}\n", cell(j, "error"));
            return;
        }
        std::string msg = cell(j, "message");
        o.out = fmt::format("ok{}\n", msg == "-" ? "" : ": " + msg);
    });
}

int explain(const LiveArgs& a, const ExplainArgs& e) {
    Endpoint ep;
    if (!endpoint(a, false, false, ep)) return kFailed;
    std::string path = "/v1/explain?name=" + pathSegment(e.name) + "&type=" + pathSegment(e.type);
    if (!e.client.empty()) path += "&client=" + pathSegment(e.client);
    if (!e.ecs.empty()) path += "&ecs=" + pathSegment(e.ecs);
    if (!a.json) path += "&format=text";
    auto r = httpRequest(ep.url, "GET", path, ep.token, "");
    if (r.reached && r.status == 200 && !a.json) {
        fmt::print("{}", r.body);
        return kOk;
    }
    Outcome o = judge(ep, ep.url, r, [&](const nlohmann::json&, Outcome& o) { o.out = r.body; });
    fmt::print("{}", o.out);
    fmt::print(stderr, "{}", o.err);
    return o.ok ? kOk : kFailed;
}

}  // namespace gslb::ctl
