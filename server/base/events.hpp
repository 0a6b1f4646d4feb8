// Recent events (doc/api.md "The status page and the dashboard"): what an operator asks "what happened?"
// about — health changes with their reason, drains and enables, reloads with their result, metric scrape
// failures — kept in a bounded ring that GET /v1/events and the status page read. The log line on stderr
// stays the record of truth; this ring only holds the last `capacity` events in memory (oldest overwritten
// first, the count of those lost is kept).
//
// Recording is one line from anywhere in the server (the control thread in practice; the ring has its own
// mutex, so a worker or a test thread may call it too, but never per query). For example:
//   recordEvent(log::Level::Warn, "health", label, "down: http 503 after 3 failures");
//   recordEvent(log::Level::Info, "scrape", "east-lb", "ok again after 4 failures");
//
// Kinds in use: "health" (service or site up/down), "admin" (drain/enable), "reload" (ok or failed),
// "scrape" (a metric source failed or recovered), "dnssec" (a key event: a key published, activated, retired
// or deleted). A new kind needs no registration: it is a free string,
// lower-case, one word, so the page can filter on it.
#pragma once
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "server/base/log.hpp"

namespace gslb::server {

struct Event {
    uint64_t seq = 0;    // 1, 2, 3, … since the process started; never reused, survives reloads
    int64_t unixMs = 0;  // wall clock, milliseconds since the epoch
    log::Level level = log::Level::Info;
    std::string kind;     // "health" | "admin" | "reload" | "scrape" | …
    std::string subject;  // what it is about: a service label, "site east", a source name, the config path
    std::string message;  // what happened and why: "down: http 503 after 3 failures"
};

class EventLog {
  public:
    static constexpr size_t kDefaultCapacity = 500;
    explicit EventLog(size_t capacity = kDefaultCapacity) : capacity_(capacity ? capacity : 1) {}

    /// Appends one event stamped `unixMs` (now when 0); the oldest is dropped when the ring is full.
    /// Returns its sequence number.
    uint64_t record(log::Level level, std::string_view kind, std::string subject, std::string message,
                    int64_t unixMs = 0);
    /// The events with seq > `afterSeq`, oldest first, at most the newest `limit` of them.
    std::vector<Event> since(uint64_t afterSeq, size_t limit = SIZE_MAX) const;
    /// Sequence number of the newest event (0 when none yet).
    uint64_t lastSeq() const;
    /// Events overwritten because the ring was full.
    uint64_t dropped() const;
    size_t capacity() const { return capacity_; }
    /// Forgets every event (the sequence goes on: a poller's `since` stays meaningful). For tests.
    void clear();

  private:
    mutable std::mutex m_;
    size_t capacity_;
    std::deque<Event> ring_;
    uint64_t seq_ = 0, dropped_ = 0;
};

/// The process-wide ring that GET /v1/events serves.
EventLog& eventLog();

/// Records one event in eventLog(): the one-line call for any code that has something to tell the operator.
inline uint64_t recordEvent(log::Level level, std::string_view kind, std::string subject,
                            std::string message) {
    return eventLog().record(level, kind, std::move(subject), std::move(message));
}

/// "debug" | "info" | "warning" | "error", as the log line says it.
const char* levelName(log::Level level);

}  // namespace gslb::server
