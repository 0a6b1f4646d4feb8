// GET /v1/history: the answer history behind the page's chart (history.hpp).
//   {"interval_s": 2, "capacity": 150, "samples": [unix_ms, …],
//    "series": [{"hostname": "www.gslb.example.com.", "site": "east", "address": "192.0.2.10",
//                "answers": [answers in the interval ending at each sample, …]}, …]}
#include <nlohmann/json.hpp>

#include "server/api.hpp"

namespace gslb::server {

void ControlApi::sampleHistory(int64_t unixMs) {
    auto snap = shared_.holder.get();
    if (snap) history_.sample(snap->gslb, unixMs);
}

ApiResponse ControlApi::history() {
    nlohmann::json series = nlohmann::json::array();
    for (const auto& s : history_.series())
        series.push_back(
            {{"hostname", s.hostname}, {"site", s.site}, {"address", s.address}, {"answers", s.answers}});
    nlohmann::json j{{"interval_s", history_.intervalSec()},
                     {"capacity", history_.capacity()},
                     {"samples", history_.times()},
                     {"series", series}};
    return ApiResponse{200, j.dump() + "\n"};
}

}  // namespace gslb::server
