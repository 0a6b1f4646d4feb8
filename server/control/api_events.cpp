// GET /v1/events[?since=SEQ][&limit=N]: the recent events of the ring (server/base/events.hpp), oldest first.
// `since` returns only newer ones (a poller passes the last `seq` it saw); `limit` keeps the newest N.
//   {"events": [{"seq": 7, "time": "2026-12-01T09:30:00.123Z", "unix_ms": …, "level": "warning",
//                "kind": "health", "subject": "www.gslb.example.com./192.0.2.10 (east)",
//                "message": "down: http 503 after 3 failures"}, …],
//    "last_seq": 7, "capacity": 500, "dropped": 0}
#include <fmt/format.h>

#include <ctime>
#include <nlohmann/json.hpp>

#include "server/control/api.hpp"
#include "server/base/events.hpp"

namespace gslb::server {

std::string isoTime(int64_t unixMs) {
    time_t s = time_t(unixMs / 1000);
    tm t;
    gmtime_r(&s, &t);
    return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", t.tm_year + 1900, t.tm_mon + 1,
                       t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec, int(unixMs % 1000));
}

nlohmann::json eventsJson(const std::vector<Event>& events) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& e : events)
        a.push_back({{"seq", e.seq},
                     {"time", isoTime(e.unixMs)},
                     {"unix_ms", e.unixMs},
                     {"level", levelName(e.level)},
                     {"kind", e.kind},
                     {"subject", e.subject},
                     {"message", e.message}});
    return a;
}

ApiResponse ControlApi::events(const std::string& path) {
    uint64_t since = 0;
    size_t limit = SIZE_MAX;
    for (const auto& [key, value] : queryParams(path)) {
        char* end = nullptr;
        errno = 0;
        unsigned long long v = std::strtoull(value.c_str(), &end, 10);
        bool ok = !value.empty() && *end == '\0' && errno == 0 && value[0] != '-';
        if (key == "since") {
            if (!ok) return apiError(400, fmt::format("since: \"{}\" is not a sequence number", value));
            since = v;
        } else if (key == "limit") {
            if (!ok || v == 0) return apiError(400, fmt::format("limit: \"{}\" is not a count ≥ 1", value));
            limit = size_t(v);
        } else {
            return apiError(400, fmt::format("unknown parameter \"{}\" (since, limit)", key));
        }
    }
    const EventLog& log = eventLog();
    nlohmann::json j{{"events", eventsJson(log.since(since, limit))},
                     {"last_seq", log.lastSeq()},
                     {"capacity", log.capacity()},
                     {"dropped", log.dropped()}};
    return ApiResponse{200, jsonText(j) + "\n"};
}

}  // namespace gslb::server
