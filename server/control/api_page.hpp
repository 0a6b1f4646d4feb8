// The status page at / of the control API (doc/api.md "The status page and the dashboard"): one HTML page,
// its CSS and JS, embedded in the binary (server/control/page/, via page_assets.hpp), so it works on a
// management network without internet access.
//
//   GET /              the page, with the sites, services, events and sources rendered on the server from the
//                      same JSON as GET /v1/status: without JavaScript it is a table that reloads itself
//   GET /?name=N[&type=A][&client=ADDR][&ecs=PREFIX]
//                      the same page with the explain form filled in and its answer (GET /v1/explain's text)
//                      rendered on the server: the form is a plain GET form, so it works without JavaScript;
//                      like /v1/explain it is read-only and needs no token. Other parameters are ignored.
//   GET /ui/page.css   its style sheet
//   GET /ui/page.js    the script that polls /v1/status, /v1/events and /v1/history every 2 s and, with a
//                      token entered on the page (kept in sessionStorage), adds drain and enable buttons
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "server/base/events.hpp"

namespace gslb::server {

/// The explain form's fields as asked (GET /?name=…) and what explain said.
struct PageExplain {
    std::string name, type = "A", client, ecs;
    std::string text;    // explainText() of the answer, or the error; empty: nothing asked
    bool error = false;  // `text` is explain's refusal (a bad client, ECS prefix or type)
};

/// The page's HTML for `status` (GET /v1/status's JSON) and `events` (oldest first; the newest are shown
/// first), with the explain form filled from `explain`. Every value from the JSON and the form is
/// HTML-escaped. Pure: the unit tests call it directly.
std::string renderPage(const nlohmann::json& status, const std::vector<Event>& events, int64_t nowUnixMs,
                       const PageExplain& explain = {});

/// `s` with & < > " ' escaped for HTML text and attribute values.
std::string htmlEscape(const std::string& s);

}  // namespace gslb::server
