// Metric sources (doc/design.md "Metric sources"): what the control thread pulls from the sites'
// load balancers and exporters, or from the operator's Prometheus server, and writes into the snapshot's
// StateTable exactly where a pushed report lands (with the time it arrived, so a source that stops
// answering ages out after max_age: unknown, never zero).
//
// - type "scrape": GET the url (libevent's evhttp client), parse the body as Prometheus text 0.0.4 or
//   OpenMetrics (metrics/sources/exposition.hpp), read each mapping (metrics/sources/mapping.hpp).
// - type "prometheus": one PromQL instant query (GET /api/v1/query) per mapping; the result vector's series
//   are kept when their `label` names the site (or, for connections, the service's address), then summed.
//   A preset on a prometheus source becomes one query per key: `AGG by (site_label) (METRIC{…})`, with
//   rate(…[rate_window]) for counters.
// Every request is bounded: the source's timeout covers connect to last byte (a deadline cancels it), the
// body is capped at max_bytes, the parser at its limits. A failure leaves the values alone to age out.
// The state of each source (last success, last error, duration, series matched) is in status(); a change
// between ok and failing is logged once and recorded as an event.
//
// Which mapping feeds a key: an explicit one on the site (`cpu = { source = …, metric = … }`) or service
// (`connections = …`), else the first of the site's `sources` whose preset has the key.
#pragma once
#include <event2/event.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gslb::server {

struct Snapshot;

/// One source's state, for GET /v1/status and /metrics (control thread only).
struct SourceStatus {
    std::string name, type, url, preset;
    std::string state = "unknown";  // unknown (not scraped yet) | ok | failing
    int64_t lastSuccessUnixMs = 0;  // 0: never
    int64_t lastSuccessMonoMs = 0;  // for ages
    std::string lastError;          // "connect: Connection refused", "timeout", "http 503", "line 3: …"
    int64_t lastErrorUnixMs = 0;
    double durationMs = -1;  // the last scrape's, -1 when none
    size_t series = 0;       // series in the last successful scrape (result series for prometheus)
    size_t matched = 0;      // series the mappings used in it
    size_t values = 0;       // report values it wrote
    uint64_t scrapes = 0, failures = 0;
    std::vector<std::string> feeds;  // what it feeds: "east cpu", "east/192.0.2.10 connections"
};

class SourceMonitor {
  public:
    explicit SourceMonitor(event_base* base);
    ~SourceMonitor();
    SourceMonitor(const SourceMonitor&) = delete;
    SourceMonitor& operator=(const SourceMonitor&) = delete;

    /// After every publish: starts new sources, keeps the state (and rate() history) of unchanged ones,
    /// stops removed ones. The first scrape of a new source runs at once.
    void apply(const Snapshot& snap);
    std::vector<SourceStatus> status() const;

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace gslb::server
