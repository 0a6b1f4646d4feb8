#pragma once
// A parser of the Prometheus exposition formats (doc/design.md "Metric sources"): the text format 0.0.4 and
// OpenMetrics 1.0 text, as served by HAProxy's prometheus-exporter, node_exporter, nginx-prometheus-exporter
// and Envoy's /stats/prometheus. The input comes from a site over the network: it is untrusted, so the parser
// is bounded (total size, line length, series count), never recurses, never throws, and has a libFuzzer
// target (tests/fuzz/fuzz_exposition.cpp).
//
// What it accepts, per line (both formats; '\n' ends a line, a '\r' before it is dropped):
//   - empty lines; "# HELP", "# TYPE", "# UNIT" and any other '#' comment (ignored; "# EOF" ends the input);
//   - samples: NAME [ "{" LABEL="VALUE" ( "," LABEL="VALUE" )* [","] "}" ] VALUE [ TIMESTAMP ] [ " # "
//   exemplar ]
//     NAME is [a-zA-Z_:][a-zA-Z0-9_:]*, LABEL is [a-zA-Z_][a-zA-Z0-9_]*, VALUE a float, "+Inf", "-Inf" or
//     "NaN" (Go's strconv forms); label values escape \\, \" and \n. Timestamps and exemplars are skipped
//     (a scrape is stamped with the time it completed).
// Anything else fails the whole parse with the line number, as Prometheus fails a scrape: half a scrape
// read as whole would make the missing series look like zero.

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gslb::metrics::sources {

/// The character classes of the exposition format's names (Prometheus data model): a metric name matches
/// [a-zA-Z_:][a-zA-Z0-9_:]*. Shared by the exposition parser and the selector parser (mapping.hpp).
inline bool metricNameStart(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}
inline bool metricNameChar(char c) {
    return metricNameStart(c) || (c >= '0' && c <= '9');
}

struct Limits {
    std::size_t maxBytes = 8u << 20;    // whole body
    std::size_t maxLineLength = 65536;  // one line, without its '\n'
    std::size_t maxSeries = 200000;     // sample lines
    std::size_t maxLabels = 64;         // labels on one sample
};

struct Sample {
    std::string name;
    std::vector<std::pair<std::string, std::string>> labels;  // in input order, values unescaped
    double value = 0;
};

struct ParseStats {
    std::size_t series = 0;  // sample lines seen (kept or not); after a failure, the failing line included
                             // (so maxSeries + 1 after "more than ... series")
    std::size_t kept = 0;    // samples stored in `out` (never more than maxSeries)
};

/// Parses `text`. `wanted` (may be empty: keep all) says which metric names to store; the others are
/// checked and counted but not stored. On success returns true; on failure false with `error` =
/// "line N: why" (or "body larger than ... bytes", "more than ... series") and `out` holding what was
/// stored before the failure (callers discard it).
bool parseExposition(std::string_view text, const Limits& limits,
                     const std::function<bool(std::string_view name)>& wanted, std::vector<Sample>& out,
                     ParseStats& stats, std::string& error);

}  // namespace gslb::metrics::sources
