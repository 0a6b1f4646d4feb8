// Control API requests -> ControlApi::handle, over a snapshot in its initial state for every input (so that a
// crash reproduces from its input alone). An input is up to eight requests separated by a line "###", each
// written as HTTP is: "METHOD PATH", header lines, a blank line, the body. The Authorization header (any
// case) is what the handler sees; the token is "s3cret-token-0123". Invariants: every response is JSON with a
// known status; a refused one (status >= 400) carries {"error": "..."} and changes nothing: the status JSON
// (ages left out) and the state table are the same before and after it. Reload alternates between failing and
// succeeding without a change.
#include <sys/stat.h>
#include <event2/event.h>
#include <strings.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_util.hpp"
#include "server/control/api.hpp"
#include "server/base/log.hpp"
#include "server/state/snapshot.hpp"
#include "tests/server/world.hpp"

namespace {

const char* kConfig =
    "[server]\nlisten = [\"127.0.0.1:5353\"]\n"
    "[[zone]]\nname = \"t.test.\"\nfile = \"t.zone\"\n"
    "[load]\n[load.metric.busy]\ncapacity = 1\n[load.metric.mem]\nweight = 2\n"
    "[site.east]\n[site.west]\n[site.south]\n"
    "[hostname.\"www.t.test.\"]\npolicy = [\"health\", \"least-connections\", \"load-factor\"]\n"
    "[[hostname.\"www.t.test.\".service]]\naddress = \"192.0.2.1\"\nsite = \"east\"\n"
    "[[hostname.\"www.t.test.\".service]]\naddress = \"192.0.2.2\"\nsite = \"west\"\n"
    "[[hostname.\"www.t.test.\".service]]\naddress = \"192.0.2.3\"\nsite = \"south\"\n"
    "[hostname.\"dual.t.test.\"]\n"
    "[[hostname.\"dual.t.test.\".service]]\naddress = \"192.0.2.1\"\nsite = \"east\"\n"
    "[[hostname.\"dual.t.test.\".service]]\naddress = \"2001:db8::1\"\nsite = \"west\"\n";

std::string num(double v) {
    return std::isnan(v) ? "nan" : std::to_string(v);
}

// Everything the state table holds, report times included (the status JSON shows only their age).
std::string dumpState(const gslb::metrics::StateTable& t) {
    std::string s;
    for (uint32_t i = 0; i < t.siteCount(); ++i) {
        auto v = t.siteView(i);
        s += "site " + t.siteName(i) + " cpu=" + num(v.cpu) + " used=" + num(v.sessionsUsed) +
             " max=" + num(v.sessionsMax) + " lf=" + num(v.loadFactor) +
             " at=" + std::to_string(v.reportAtMs) + "/" + std::to_string(v.cpuAtMs) + "/" +
             std::to_string(v.sessionsAtMs) + "/" + std::to_string(v.loadFactorAtMs) +
             " enabled=" + std::to_string(v.enabled) + " up=" + std::to_string(v.up) +
             " pref=" + std::to_string(v.preference) + "\n";
    }
    for (uint32_t i = 0; i < t.serviceCount(); ++i) {
        auto v = t.serviceView(i);
        const auto& k = t.serviceKey(i);
        s += "service " + k.site + "/" + k.address + " health=" + std::to_string(int(v.health)) +
             " enabled=" + std::to_string(v.enabled) + " conns=" + num(v.connections) +
             " at=" + std::to_string(v.connectionsAtMs) + " l4=" + num(v.l4Ms) + " l7=" + num(v.l7Ms) + "\n";
    }
    return s;
}

// The status JSON without the ages, which move with the clock.
std::string statusWithoutAges(gslb::server::ControlApi& api, const gslb::server::Snapshot& s) {
    auto j = nlohmann::json::parse(api.status(s).body);
    for (auto& site : j["sites"]) {
        site.erase("report_age_s");
        site.erase("ages_s");
    }
    for (auto& svc : j["services"]) svc.erase("connections_age_s");
    j.erase("reloads");  // a failed reload is counted (by trigger and result): a counter, not state
    return j.dump();
}

struct Request {
    std::string method, path, authorization, body;
};

Request parseRequest(std::string_view text) {
    Request r;
    size_t eol = text.find('\n');
    std::string_view first = text.substr(0, eol);
    size_t sp = first.find(' ');
    r.method = std::string(first.substr(0, sp));
    if (sp != std::string_view::npos) r.path = std::string(first.substr(sp + 1));
    if (eol == std::string_view::npos) return r;
    text.remove_prefix(eol + 1);
    while (!text.empty()) {
        eol = text.find('\n');
        std::string_view line = text.substr(0, eol);
        text = eol == std::string_view::npos ? std::string_view{} : text.substr(eol + 1);
        if (line.empty()) break;
        size_t colon = line.find(':');
        if (colon == 13 && strncasecmp(line.data(), "authorization", 13) == 0) {
            std::string_view v = line.substr(14);
            while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
            r.authorization = std::string(v);
        }
    }
    r.body = std::string(text);
    return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const std::string configPath = [] {
        gslb::log::threshold = gslb::log::Level::Error;  // no line per accepted drain on the fuzzer's stderr
        fuzzutil::writeFile("t.zone", st::kZone);
        // Owner-only: gslbd refuses a control token others may read.
        chmod(fuzzutil::writeFile("control.token", "s3cret-token-0123\n").c_str(), 0600);
        return fuzzutil::writeFile("gslbd.toml", kConfig);
    }();
    static event_base* base = event_base_new();
    if (size > 64 * 1024) return 0;

    // A snapshot in its initial state for every input; rebuilt only when the last input changed it (a
    // build costs a few milliseconds, most inputs change nothing).
    static std::shared_ptr<gslb::server::Snapshot> snap;
    static std::string pristine;
    std::string error;
    if (!snap || dumpState(*snap->gslb.table) != pristine) {
        snap = gslb::server::buildSnapshot(configPath, nullptr, error);
        if (!snap) fuzzutil::fail(__FILE__, __LINE__, "buildSnapshot", error);
        pristine = dumpState(*snap->gslb.table);
    }
    gslb::server::Shared shared;
    shared.holder.publish(snap);
    int reloads = 0;
    gslb::server::ControlApi api(
        base, shared,
        [&](std::string& message) {
            message = ++reloads % 2 ? "refused by the fuzz target" : "reloaded";
            return reloads % 2 == 0;
        },
        nullptr);
    if (!api.readToken(fuzzutil::scratchDir() + "/control.token", error))
        fuzzutil::fail(__FILE__, __LINE__, "readToken", error);

    std::string_view all(reinterpret_cast<const char*>(data), size);
    // The same bytes as a request evhttp refused by itself (with each status it uses): the JSON that the
    // control connection's filter puts in place of evhttp's HTML page, and the chunk scanner over the body.
    {
        const size_t end = all.find("\r\n\r\n");
        const std::string_view head = end == std::string_view::npos ? all : all.substr(0, end + 4);
        gslb::server::ChunkedBodyScanner chunks;
        chunks.feed(all.substr(head.size()));
        for (int status : {400, 413, 417, 501, 505}) {
            auto r =
                gslb::server::ownErrorResponse(status, head, chunks.declared, gslb::server::kMaxRequestBody);
            auto j = nlohmann::json::parse(r.body, nullptr, false);
            FUZZ_CHECK(r.status >= 400 && !j.is_discarded() && j.is_object() && j["error"].is_string(),
                       r.body);
        }
    }
    // The state before each request; recomputed only after one that was accepted (the status JSON is the
    // dearest part of an input under the sanitizers).
    std::string statusBefore = statusWithoutAges(api, *snap);
    std::string stateBefore = dumpState(*snap->gslb.table);
    for (int n = 0; n < 8 && !all.empty(); ++n) {
        size_t sep = all.find("\n###\n");
        Request req = parseRequest(all.substr(0, sep));
        all = sep == std::string_view::npos ? std::string_view{} : all.substr(sep + 5);

        gslb::server::ApiResponse r;
        try {
            r = api.handle(req.method, req.path, req.authorization, req.body);
        } catch (const std::exception& e) {
            // What the evhttp callback does with an exception: 500. The invariant below still holds.
            r = gslb::server::apiError(500, e.what());
        }
        const std::string what =
            req.method + " " + req.path + " -> " + std::to_string(r.status) + " " + r.body;
        FUZZ_CHECK(r.status == 200 || r.status == 400 || r.status == 401 || r.status == 404 ||
                       r.status == 405 || r.status == 500,
                   what);
        if (r.contentType == "application/json") {
            auto j = nlohmann::json::parse(r.body, nullptr, false);
            FUZZ_CHECK(!j.is_discarded(), what);
            if (r.status >= 400)
                FUZZ_CHECK(j.is_object() && j.contains("error") && j["error"].is_string(), what);
        }
        if (r.status >= 400) {
            FUZZ_CHECK(dumpState(*snap->gslb.table) == stateBefore, what);
            FUZZ_CHECK(statusWithoutAges(api, *snap) == statusBefore, what);
        } else if (req.method == "POST") {
            statusBefore = statusWithoutAges(api, *snap);
            stateBefore = dumpState(*snap->gslb.table);
        }
    }
    return 0;
}
