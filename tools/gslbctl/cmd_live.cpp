// `gslbctl status|drain|enable|report|reload`: the running server, through its control API.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "server/config.hpp"
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
};

std::string trim(const std::string& s) {
    size_t a = s.find_first_not_of(" \t\r\n"), b = s.find_last_not_of(" \t\r\n");
    return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
}

// The URL and token: --server / --token-file win; otherwise [control] of the config.
bool endpoint(const LiveArgs& a, bool needToken, Endpoint& ep) {
    std::string tokenFile = a.tokenFile;
    ep.url = a.server;
    if (!a.config.empty()) {
        // Only [control]: a mistake elsewhere in the config must not block an emergency drain.
        server::Config cfg;
        std::string error;
        if (!server::loadControlConfig(a.config, cfg.control, error)) {
            fmt::print(stderr,
                       "{}\n(give --server URL and --token-file F to reach the server without the config)\n",
                       error);
            return false;
        }
        if (ep.url.empty()) {
            if (!cfg.control.enabled) {
                fmt::print(stderr,
                           "{}: no [control] table: the control API is off (add [control] listen and "
                           "token_file, reload, or give --server)\n",
                           a.config);
                return false;
            }
            ep.url = "http://" + cfg.control.listen.text;
        }
        if (tokenFile.empty()) tokenFile = cfg.control.tokenFile;
    }
    if (ep.url.empty()) ep.url = kDefaultUrl;
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

// Common handling of the answer; `onOk` gets the parsed JSON of a 2xx answer.
template <typename F>
int handle(const Endpoint& ep, const HttpResult& r, F&& onOk) {
    if (!r.reached) {
        fmt::print(stderr, "cannot reach gslbd control API at {}: {}\n", ep.url, r.error);
        return kFailed;
    }
    nlohmann::json j = nlohmann::json::parse(r.body, nullptr, false);
    std::string serverError;
    if (j.is_object() && j.contains("error") && j["error"].is_string())
        serverError = j["error"].get<std::string>();
    if (r.status == 401) {
        fmt::print(stderr, "the server refused the token (401): check token_file{}{}\n",
                   ep.tokenSource.empty() ? " (no token was sent)" : " (" + ep.tokenSource + ")",
                   serverError.empty() ? "" : ": " + serverError);
        return kFailed;
    }
    if (r.status < 200 || r.status >= 300) {
        std::string msg = serverError;
        if (msg.empty()) msg = r.body.size() > 200 ? r.body.substr(0, 200) + "…" : r.body;
        fmt::print(stderr, "gslbd answered {}: {}\n", r.status, msg.empty() ? "(no message)" : msg);
        return kFailed;
    }
    if (j.is_discarded()) {
        fmt::print(stderr, "gslbd answered {} with something that is not JSON\n", r.status);
        return kFailed;
    }
    return onOk(j);
}

}  // namespace

int status(const LiveArgs& a) {
    Endpoint ep;
    if (!endpoint(a, false, ep)) return kFailed;
    auto r = httpRequest(ep.url, "GET", "/v1/status", ep.token, "");
    return handle(ep, r, [&](const nlohmann::json& j) {
        if (a.json)
            fmt::print("{}\n", r.body.empty() || r.body.back() != '\n' ? r.body
                                                                       : r.body.substr(0, r.body.size() - 1));
        else
            fmt::print("{}", renderStatus(j));
        return kOk;
    });
}

int admin(const LiveArgs& a, const std::string& action, const std::string& site, const std::string& address) {
    Endpoint ep;
    if (!endpoint(a, true, ep)) return kFailed;
    std::string path = "/v1/sites/" + pathSegment(site);
    if (!address.empty()) path += "/services/" + pathSegment(address);
    path += "/" + action;
    auto r = httpRequest(ep.url, "POST", path, ep.token, "{}");
    return handle(ep, r, [&](const nlohmann::json& j) {
        fmt::print("{}: {}{}\n", action == "drain" ? "drained" : "enabled", site,
                   address.empty() ? " (every service of the site)" : " " + address);
        // A service drained on its own stays drained when its site is enabled.
        if (action == "enable" && address.empty() && j.is_object() && j.contains("services_drained") &&
            j["services_drained"].is_array() && !j["services_drained"].empty()) {
            std::string list;
            for (const auto& a : j["services_drained"])
                if (a.is_string()) list += (list.empty() ? "" : ", ") + a.get<std::string>();
            fmt::print(
                "note: {} service(s) of {} stay drained on their own: {} (gslbctl enable {} ADDRESS "
                "answers with one again)\n",
                j["services_drained"].size(), site, list, site);
        }
        return kOk;
    });
}

int report(const LiveArgs& a, const std::string& site, const std::vector<std::string>& words) {
    std::string body, error;
    if (!buildReport(words, body, error)) {
        fmt::print(stderr, "report: {}\n", error);
        return kUsage;
    }
    Endpoint ep;
    if (!endpoint(a, true, ep)) return kFailed;
    auto r = httpRequest(ep.url, "POST", "/v1/sites/" + pathSegment(site) + "/report", ep.token, body);
    return handle(ep, r, [&](const nlohmann::json&) {
        fmt::print("reported for {}: {}\n", site, body);
        return kOk;
    });
}

int reload(const LiveArgs& a) {
    Endpoint ep;
    if (!endpoint(a, true, ep)) return kFailed;
    auto r = httpRequest(ep.url, "POST", "/v1/reload", ep.token, "{}");
    return handle(ep, r, [&](const nlohmann::json& j) {
        if (j.is_object() && j.contains("ok") && j["ok"].is_boolean() && !j["ok"].get<bool>()) {
            fmt::print(stderr, "reload failed: {}\n", cell(j, "error"));
            return kFailed;
        }
        std::string msg = cell(j, "message");
        fmt::print("ok{}\n", msg == "-" ? "" : ": " + msg);
        return kOk;
    });
}

int explain(const LiveArgs& a, const ExplainArgs& e) {
    Endpoint ep;
    if (!endpoint(a, false, ep)) return kFailed;
    std::string path = "/v1/explain?name=" + pathSegment(e.name) + "&type=" + pathSegment(e.type);
    if (!e.client.empty()) path += "&client=" + pathSegment(e.client);
    if (!e.ecs.empty()) path += "&ecs=" + pathSegment(e.ecs);
    if (!a.json) path += "&format=text";
    auto r = httpRequest(ep.url, "GET", path, ep.token, "");
    if (r.reached && r.status == 200 && !a.json) {
        fmt::print("{}", r.body);
        return kOk;
    }
    return handle(ep, r, [&](const nlohmann::json&) {
        fmt::print("{}", r.body);
        return kOk;
    });
}

}  // namespace gslb::ctl
