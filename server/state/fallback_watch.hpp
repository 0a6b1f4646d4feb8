// A hostname answered by its all-down fallback (every service down, drained or at a site taken out: its
// `fallback` key decides, doc/man/gslbd.toml.5.md "[defaults]") left no log line, only
// gslbd_hostname_fallbacks_total moved. The control thread reads the per-hostname counters once a second (the
// sweep timer of server/daemon/main.cpp) and logs when a hostname starts and stops being answered by its
// fallback: once per transition, at most kMaxLines lines a sample (a site that takes 10,000 hostnames down
// says so in a bounded number of lines), nothing on the query path. Judged from the answers themselves, so it
// covers every reason a query falls back (one family down, a topology that left nothing) and says nothing of
// a hostname nobody asks for.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "server/state/gslb.hpp"

namespace gslb::server {

struct FallbackTransition {
    std::string hostname;
    bool entered = false;    // true: its answers now come from the fallback; false: from its services again
    uint64_t fallbacks = 0;  // answers by the fallback in the interval
    uint64_t answers = 0;    // answers by its services in the interval
    std::string fallback;    // the hostname's fallback: "all", "none" or its address
};

class FallbackWatch {
  public:
    static constexpr size_t kMaxLines = 5;

    /// Reads `g`'s counters (fallbacks, drainedFallbacks, hostAnswers) and returns the hostnames whose state
    /// changed since the last call: one that was answered by its services (or new) enters when the fallback
    /// answered in the interval; one in the fallback leaves when only its services answered. No queries: no
    /// change. Hostnames are matched by name across reloads (the counters carry over by name too); the first
    /// sample of a hostname only records its counts. On the control thread.
    std::vector<FallbackTransition> sample(const Gslb& g);

  private:
    struct State {
        uint64_t fallbacks = 0, answers = 0;
        bool in = false;
        uint64_t seen = 0;  // the sample that last saw the hostname (hostnames gone are dropped)
    };
    std::unordered_map<std::string, State> hosts_;
    uint64_t samples_ = 0;
};

/// The log lines for `t`, in order: one per transition up to FallbackWatch::kMaxLines, then one that counts
/// the rest. Each is {level, hostname (or "" for the count), message}.
struct FallbackLine {
    bool warn = false;
    std::string hostname, message;
};
std::vector<FallbackLine> fallbackLines(const std::vector<FallbackTransition>& t);

/// One sample of `watch` over `g`, its lines logged and recorded as "fallback" events (GET /v1/events). On
/// the control thread, once a second.
void logFallbackTransitions(FallbackWatch& watch, const Gslb& g);

}  // namespace gslb::server
