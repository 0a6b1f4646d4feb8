// GET /v1/history: the answer history behind the page's chart (history.hpp).
//   {"interval_s": 2, "capacity": 150, "samples": [unix_ms, …],
//    "series": [{"hostname": "www.gslb.example.com.", "site": "east", "address": "192.0.2.10",
//                "answers": [answers in the interval ending at each sample, …]}, …]}
//   Only services with answers in the window have a series (history.hpp).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iterator>
#include <nlohmann/json.hpp>

#include "server/control/api.hpp"

namespace gslb::server {

void ControlApi::sampleHistory(int64_t unixMs) {
    auto snap = shared_.holder.get();
    // Aliased to the snapshot: the history keeps it (and with it the names of its services) until the next
    // sample, where a reload's new table is matched to it.
    if (snap) history_.sample(std::shared_ptr<const Gslb>(snap, &snap->gslb), unixMs);
}

ApiResponse ControlApi::history() {
    // Written as it goes, not through a JSON tree: with answers on every service of 10,000 hostnames x 8 the
    // body holds 12 million numbers (a tree node each, and a dense copy of every series before that). The
    // keys are in the order nlohmann::json printed them (sorted).
    std::string out =
        fmt::format("{{\"capacity\":{},\"interval_s\":{},\"samples\":[{}],\"series\":[", history_.capacity(),
                    nlohmann::json(history_.intervalSec()).dump(), fmt::join(history_.times(), ","));
    const auto series = history_.sparseSeries();
    const uint32_t samples = uint32_t(history_.times().size());
    auto text = [](std::string_view s) { return nlohmann::json(s).dump(); };
    for (size_t k = 0; k < series.size(); ++k) {
        const auto& s = series[k];
        fmt::format_to(std::back_inserter(out), "{}{{\"address\":{},\"answers\":[", k ? "," : "",
                       text(s.address));
        auto next = s.answers.begin();
        for (uint32_t i = 0; i < samples; ++i) {
            if (i) out += ',';
            if (next != s.answers.end() && next->first == i)
                fmt::format_to(std::back_inserter(out), "{}", (next++)->second);
            else
                out += '0';
        }
        fmt::format_to(std::back_inserter(out), "],\"hostname\":{},\"site\":{}}}", text(s.hostname),
                       text(s.site));
    }
    out += "]}\n";
    return ApiResponse{200, std::move(out)};
}

}  // namespace gslb::server
