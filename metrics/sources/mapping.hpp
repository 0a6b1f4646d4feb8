#pragma once
// From scraped series to report values (doc/design.md "Metric sources"): a selector names a metric and label
// matchers; the value is the sum (or average, or max) of the matching series, optionally as a per-second rate
// between two scrapes (counters), then `value * scale + offset`. Presets are the standard mappings of common
// exporters. Pure logic, no I/O: the scraper (server/probes/sources.cpp) feeds it parsed samples and times.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "metrics/sources/exposition.hpp"

namespace gslb::metrics::sources {

struct Matcher {
    std::string label;
    std::string value;
    bool equal = true;  // = (true) or != (false); a missing label matches as ""
};

enum class Aggregate : std::uint8_t { Sum, Avg, Max };

/// metric{label="v",other!="w"} — the PromQL instant-vector selector subset: = and != only.
struct Selector {
    std::string metric;
    std::vector<Matcher> matchers;
    bool matches(const Sample& s) const;
};

/// Parses `name`, `name{a="b"}`, `name{a="b", c!="d"}`; also `rate(SELECTOR)`, which sets `rate`.
/// True with `out`; false with `error` naming what is wrong ("expected } after the matchers"), `out`
/// untouched (doc/design.md "Errors").
bool parseSelector(std::string_view text, bool& rate, Selector& out, std::string& error);

struct Mapping {
    Selector selector;
    bool rate = false;  // per-second rate of the aggregate between two scrapes (counters)
    Aggregate aggregate = Aggregate::Sum;
    double scale = 1;
    double offset = 0;
};

/// What one mapping reads out of one scrape.
struct Reading {
    double value = 0;         // aggregate of the matching series (before rate and scale)
    std::size_t matched = 0;  // 0: no series matched: the value is unknown (never 0)
};
Reading read(const Mapping& m, const std::vector<Sample>& samples);

/// A mapping's state across scrapes, for rate(): the previous aggregate and when it was read.
class RateState {
  public:
    /// The mapped value for `reading` at `nowMs`, or NaN when unknown: nothing matched; a rate's first
    /// scrape; a counter that went down (a restart: the next scrape gives a rate again); no time passed.
    double apply(const Mapping& m, const Reading& reading, std::int64_t nowMs);

  private:
    double last_ = 0;
    std::int64_t lastMs_ = 0;
    bool have_ = false;
};

/// The report keys a mapping can land on.
enum class Key : std::uint8_t { Cpu, SessionsUsed, SessionsMax, Load, Connections };
const char* keyName(Key k);

/// One mapping of a preset: for site keys (cpu, sessions_*) and for each service's connections.
struct PresetMapping {
    Key key;
    Mapping mapping;
};

/// The preset's mappings ("haproxy", "node", "nginx", "envoy") into `out`; an unknown name is false with an
/// `error` listing the known ones, `out` untouched.
bool preset(std::string_view name, std::vector<PresetMapping>& out, std::string& error);
const char* presetNames();

}  // namespace gslb::metrics::sources
