// GET /metrics: Prometheus text exposition format 0.0.4. Counters summed over the workers' own counters.
#include <fmt/format.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <cmath>
#include <ctime>
#include <map>

#include "server/base/clock.hpp"
#include "server/control/api.hpp"
#include "server/state/gslb.hpp"
#include "server/net/xdp/path.hpp"

namespace gslb::server {

namespace {

// notAfter of the context's own (leaf) certificate, seconds since the epoch (UTC); 0 when unknown.
int64_t certificateNotAfter(const SSL_CTX* ctx) {
    X509* cert = ctx ? SSL_CTX_get0_certificate(ctx) : nullptr;
    const ASN1_TIME* t = cert ? X509_get0_notAfter(cert) : nullptr;
    std::tm tm{};
    if (!t || ASN1_TIME_to_tm(t, &tm) != 1) return 0;
    return int64_t(timegm(&tm));
}

// Label values escape backslash, double quote and newline (exposition format).
std::string esc(const std::string& v) {
    std::string o;
    for (char c : v) {
        if (c == '\\' || c == '"') o += '\\';
        if (c == '\n') {
            o += "\\n";
            continue;
        }
        o += c;
    }
    return o;
}

const char* rcodeName(int rc) {
    static const char* names[] = {"NOERROR",  "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED",
                                  "YXDOMAIN", "YXRRSET", "NXRRSET",  "NOTAUTH",  "NOTZONE"};
    if (rc >= 0 && rc <= 10) return names[rc];
    if (rc == 16) return "BADVERS";
    if (rc == 23) return "BADCOOKIE";
    return nullptr;
}

struct Out {
    std::string s;
    void head(const char* name, const char* type, const char* help) {
        s += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
    }
    void sample(const std::string& name, const std::string& labels, double v) {
        if (std::isnan(v)) return;
        s += labels.empty() ? fmt::format("{} {}\n", name, v) : fmt::format("{}{{{}}} {}\n", name, labels, v);
    }
};

// A `up` gauge (1 when the last poll succeeded; absent before the first) and an `age` gauge (s since the last
// success; absent before one), one sample each per polled metric source.
template <class Polled, class Label>
void upAndAge(Out& o, const char* up, const char* upHelp, const char* age, const char* ageHelp,
              const std::vector<Polled>& xs, Label label, int64_t now) {
    o.head(up, "gauge", upHelp);
    for (const auto& x : xs)
        if (x.state != "unknown") o.sample(up, label(x), x.state == "ok");
    o.head(age, "gauge", ageHelp);
    for (const auto& x : xs)
        if (x.lastSuccessMonoMs) o.sample(age, label(x), double(now - x.lastSuccessMonoMs) / 1000.0);
}

// The workers' counters, summed: each worker writes its own row (relaxed atomics), the control thread adds.
struct Totals {
    uint64_t udp = 0, tcp = 0, dropped = 0, truncated = 0, rrlDropped = 0, rrlSlipped = 0;
    uint64_t cookies[3] = {}, tcpRefused = 0, axfrRefused = 0, xdpIn = 0, xdpOut = 0, tls = 0, tlsFailed = 0;
    uint64_t rc[WorkerStats::kRcodes] = {}, qt[WorkerStats::kTypes] = {};
};

Totals totals(const Shared& shared) {
    Totals x;
    for (size_t w = 0; w < shared.statRows; ++w) {
        const WorkerStats& st = shared.stats[w];
        x.udp += st.udp.load(std::memory_order_relaxed);
        x.tcp += st.tcp.load(std::memory_order_relaxed);
        x.tls += st.tls.load(std::memory_order_relaxed);
        x.tlsFailed += st.tlsHandshakeFailed.load(std::memory_order_relaxed);
        x.dropped += st.dropped.load(std::memory_order_relaxed);
        x.truncated += st.truncated.load(std::memory_order_relaxed);
        x.rrlDropped += st.rrlDropped.load(std::memory_order_relaxed);
        x.rrlSlipped += st.rrlSlipped.load(std::memory_order_relaxed);
        x.xdpIn += st.xdp.load(std::memory_order_relaxed);
        x.xdpOut += st.xdpSent.load(std::memory_order_relaxed);
        for (int i = 0; i < 3; ++i) x.cookies[i] += st.cookie[i].load(std::memory_order_relaxed);
        x.tcpRefused += st.tcpRefusedPerClient.load(std::memory_order_relaxed);
        x.axfrRefused += st.axfrRefusedPerClient.load(std::memory_order_relaxed);
        for (int i = 0; i < WorkerStats::kRcodes; ++i) x.rc[i] += st.rcode[i].load(std::memory_order_relaxed);
        for (int i = 0; i < WorkerStats::kTypes; ++i) x.qt[i] += st.qtype[i].load(std::memory_order_relaxed);
    }
    return x;
}

// DNS traffic: queries by transport, TLS and AF_XDP, drops, truncation, RRL, cookies, per-client refusals,
// RCODEs, QTYPEs, open TCP connections.
void trafficMetrics(Out& o, const Totals& x, const Shared& shared) {
    o.head("gslbd_queries_total", "counter", "DNS messages received, by transport.");
    o.sample("gslbd_queries_total", "transport=\"udp\"", double(x.udp));
    o.sample("gslbd_queries_total", "transport=\"tcp\"", double(x.tcp));
    o.sample("gslbd_queries_total", "transport=\"tls\"", double(x.tls));
    o.head(
        "gslbd_tls_handshake_failures_total", "counter",
        "TLS connections ([server] tls_listen) closed in the handshake: it failed, or did not finish within "
        "tcp_message_timeout.");
    o.sample("gslbd_tls_handshake_failures_total", "", double(x.tlsFailed));
    o.head("gslbd_xdp_queries_total", "counter",
           "UDP queries that came through the AF_XDP fast path ([server] xdp; counted in transport=\"udp\" "
           "too).");
    o.sample("gslbd_xdp_queries_total", "", double(x.xdpIn));
    o.head("gslbd_xdp_responses_total", "counter", "Answers the AF_XDP fast path sent.");
    o.sample("gslbd_xdp_responses_total", "", double(x.xdpOut));
    o.head("gslbd_xdp_sockets", "gauge", "AF_XDP sockets serving (one per interface receive queue).");
    o.sample("gslbd_xdp_sockets", "", double(shared.xdpSockets.load()));
    // The kernel's drop counts exist only with AF_XDP sockets: with none (no `xdp`, or every interface fell
    // back) there is nothing that could drop, and a zero would read as "serving, no drops".
    const xdp::Path* xp = shared.xdpPath.load();
    if (xp && xp->sockets() > 0) {
        xdp::Path::Drops dr = xp->drops();
        o.head(
            "gslbd_xdp_dropped_total", "counter",
            "Frames for the AF_XDP fast path the kernel dropped before gslbd read them: larger than a frame "
            "(dropped), receive ring full (ring_full: gslbd fell behind), no frame to receive into "
            "(fill_empty), invalid descriptors (invalid); and answers gslbd dropped for want of TX ring room "
            "(tx_full).");
        o.sample("gslbd_xdp_dropped_total", "reason=\"dropped\"", double(dr.dropped));
        o.sample("gslbd_xdp_dropped_total", "reason=\"ring_full\"", double(dr.ringFull));
        o.sample("gslbd_xdp_dropped_total", "reason=\"fill_empty\"", double(dr.fillEmpty));
        o.sample("gslbd_xdp_dropped_total", "reason=\"invalid\"", double(dr.invalid));
        o.sample("gslbd_xdp_dropped_total", "reason=\"tx_full\"", double(dr.txFull));
    }
    o.head("gslbd_queries_dropped_total", "counter", "Messages not answered (responses, runts).");
    o.sample("gslbd_queries_dropped_total", "", double(x.dropped));
    o.head("gslbd_responses_truncated_total", "counter", "UDP responses sent with TC set.");
    o.sample("gslbd_responses_truncated_total", "", double(x.truncated));
    o.head("gslbd_rrl_responses_total", "counter",
           "UDP responses response rate limiting withheld (dropped) or sent short with TC or BADCOOKIE "
           "(slipped).");
    o.sample("gslbd_rrl_responses_total", "action=\"dropped\"", double(x.rrlDropped));
    o.sample("gslbd_rrl_responses_total", "action=\"slipped\"", double(x.rrlSlipped));
    o.head("gslbd_rrl_limited_buckets", "gauge",
           "Client prefix and response kind pairs being rate limited (as of the last once-a-second sweep).");
    o.sample("gslbd_rrl_limited_buckets", "", double(shared.rrlLimited.load(std::memory_order_relaxed)));
    o.head("gslbd_cookies_total", "counter", "Queries with a DNS COOKIE option (RFC 7873), by what it held.");
    o.sample("gslbd_cookies_total", "server_cookie=\"none\"", double(x.cookies[0]));
    o.sample("gslbd_cookies_total", "server_cookie=\"invalid\"", double(x.cookies[1]));
    o.sample("gslbd_cookies_total", "server_cookie=\"valid\"", double(x.cookies[2]));
    o.head("gslbd_client_limit_refused_total", "counter",
           "TCP connections closed at once and transfers answered SERVFAIL because their client held its "
           "per-client cap (tcp_max_connections_per_client, axfr_max_concurrent_per_client).");
    o.sample("gslbd_client_limit_refused_total", "what=\"tcp\"", double(x.tcpRefused));
    o.sample("gslbd_client_limit_refused_total", "what=\"axfr\"", double(x.axfrRefused));
    o.head("gslbd_responses_total", "counter", "Responses sent, by RCODE.");
    for (int i = 0; i < WorkerStats::kRcodes; ++i)
        if (const char* n = rcodeName(i))
            o.sample("gslbd_responses_total", fmt::format("rcode=\"{}\"", n), double(x.rc[i]));
    o.head("gslbd_queries_by_type_total", "counter", "Queries answered, by QTYPE.");
    for (int i = 0; i < WorkerStats::kTypes; ++i)
        o.sample("gslbd_queries_by_type_total", fmt::format("qtype=\"{}\"", WorkerStats::bucketName(i)),
                 double(x.qt[i]));
    o.head("gslbd_tcp_connections", "gauge", "Open TCP connections.");
    o.sample("gslbd_tcp_connections", "", double(shared.tcpConnections.load(std::memory_order_relaxed)));
}

// The served TLS certificate's expiry, and each zone's serial and size.
void zoneMetrics(Out& o, const Snapshot& s) {
    if (s.tls) {
        // An operator alerts on the served certificate's expiry as on any other (a reload with a renewed
        // tls_certificate moves it).
        o.head("gslbd_tls_certificate_expiry_timestamp_seconds", "gauge",
               "notAfter of the DNS-over-TLS certificate being served (tls_certificate), seconds since the "
               "epoch.");
        o.sample("gslbd_tls_certificate_expiry_timestamp_seconds", "",
                 double(certificateNotAfter(s.tls.get())));
    }
    o.head("gslbd_zone_serial", "gauge", "SOA serial of each served zone.");
    for (const auto& z : s.db.zones())
        o.sample("gslbd_zone_serial", fmt::format("zone=\"{}\"", esc(z->name())), z->serial());
    o.head("gslbd_zone_records", "gauge", "Records in each served zone.");
    for (const auto& z : s.db.zones())
        o.sample("gslbd_zone_records", fmt::format("zone=\"{}\"", esc(z->name())), double(z->recordCount()));
}

// Each site: enabled, up, its reports' ages, its CPU.
void siteMetrics(Out& o, const metrics::StateTable& t, int64_t now) {
    o.head("gslbd_site_enabled", "gauge", "1 when the site is enabled (not drained).");
    for (uint32_t i = 0; i < t.siteCount(); ++i)
        o.sample("gslbd_site_enabled", fmt::format("site=\"{}\"", esc(t.siteName(i))), t.siteView(i).enabled);
    o.head("gslbd_site_up", "gauge", "1 when the site has a service up (or no checks).");
    for (uint32_t i = 0; i < t.siteCount(); ++i)
        o.sample("gslbd_site_up", fmt::format("site=\"{}\"", esc(t.siteName(i))), t.siteView(i).up);
    o.head("gslbd_site_report_age_seconds", "gauge", "Age of the site's last metric report.");
    for (uint32_t i = 0; i < t.siteCount(); ++i) {
        auto v = t.siteView(i);
        if (v.reportAtMs != metrics::kNeverMs)
            o.sample("gslbd_site_report_age_seconds", fmt::format("site=\"{}\"", esc(t.siteName(i))),
                     double(now - v.reportAtMs) / 1000.0);
    }
    o.head("gslbd_site_metric_age_seconds", "gauge",
           "Age of each site metric (cpu, sessions, load_factor): a partial report updates only its own.");
    for (uint32_t i = 0; i < t.siteCount(); ++i) {
        auto v = t.siteView(i);
        const std::pair<const char*, int64_t> ages[] = {
            {"cpu", v.cpuAtMs}, {"sessions", v.sessionsAtMs}, {"load_factor", v.loadFactorAtMs}};
        for (const auto& [name, at] : ages)
            if (at != metrics::kNeverMs)
                o.sample("gslbd_site_metric_age_seconds",
                         fmt::format("site=\"{}\",metric=\"{}\"", esc(t.siteName(i)), name),
                         double(now - at) / 1000.0);
    }
    o.head("gslbd_site_cpu_percent", "gauge", "Last reported CPU of the site's load balancer.");
    for (uint32_t i = 0; i < t.siteCount(); ++i)
        o.sample("gslbd_site_cpu_percent", fmt::format("site=\"{}\"", esc(t.siteName(i))), t.siteView(i).cpu);
}

// A service's labels: site="…",address="…".
std::string serviceLabels(const metrics::StateTable& t, uint32_t i) {
    const auto& k = t.serviceKey(i);
    return fmt::format("site=\"{}\",address=\"{}\"", esc(k.site), esc(k.address));
}

// Where the answers went: per service, per hostname and service, per hostname and site, and the fallbacks.
void answerMetrics(Out& o, const Snapshot& s, const metrics::StateTable& t) {
    o.head("gslbd_service_answers_total", "counter", "Answers that carried the service's address.");
    for (uint32_t i = 0; i < t.serviceCount(); ++i)
        o.sample("gslbd_service_answers_total", serviceLabels(t, i), double(s.gslb.answers->total(i)));
    // Per hostname: which site and which service each hostname's answers went to, and how often nothing
    // healthy was left (the fallback answered). By site is the sum over the site's services, exported too
    // because "answers per site" is the first question about a GSLB name.
    if (s.gslb.hostAnswers) {
        o.head("gslbd_hostname_answers_total", "counter",
               "Answers of each GSLB hostname that carried the service's address.");
        std::map<std::pair<std::string, std::string>, uint64_t> bySite;
        for (const auto& h : s.gslb.hosts)
            for (int f = 0; f < 2; ++f)
                for (const auto& sv : h.family[f]) {
                    uint64_t n = s.gslb.hostAnswers->total(sv.hostSlot);
                    const std::string& site = t.siteName(sv.site);
                    bySite[{h.name, site}] += n;
                    o.sample("gslbd_hostname_answers_total",
                             fmt::format("hostname=\"{}\",site=\"{}\",address=\"{}\"", esc(h.name), esc(site),
                                         esc(sv.address())),
                             double(n));
                }
        o.head("gslbd_hostname_site_answers_total", "counter",
               "Answers of each GSLB hostname that carried an address of the site.");
        for (const auto& [key, n] : bySite)
            o.sample("gslbd_hostname_site_answers_total",
                     fmt::format("hostname=\"{}\",site=\"{}\"", esc(key.first), esc(key.second)), double(n));
    }
    if (s.gslb.fallbacks) {
        o.head("gslbd_hostname_fallbacks_total", "counter",
               "Queries of each GSLB hostname answered by its all-down fallback (all, none or an address); "
               "drained: every candidate of the type was drained, so the answer was NODATA or the address.");
        for (uint32_t i = 0; i < s.gslb.hosts.size(); ++i) {
            const auto& h = s.gslb.hosts[i];
            const char* kind = h.fallback == Fallback::All    ? "all"
                               : h.fallback == Fallback::None ? "none"
                                                              : "address";
            o.sample("gslbd_hostname_fallbacks_total",
                     fmt::format("hostname=\"{}\",fallback=\"{}\"", esc(h.name), kind),
                     double(s.gslb.fallbacks->total(i)));
            o.sample("gslbd_hostname_fallbacks_total",
                     fmt::format("hostname=\"{}\",fallback=\"drained\"", esc(h.name)),
                     double(s.gslb.drainedFallbacks ? s.gslb.drainedFallbacks->total(i) : 0));
        }
    }
}

// Each service: up, enabled, connections and their age, FlashBack times.
void serviceMetrics(Out& o, const metrics::StateTable& t, int64_t now) {
    o.head("gslbd_service_up", "gauge", "1 up, 0 down (absent while unknown).");
    for (uint32_t i = 0; i < t.serviceCount(); ++i) {
        auto h = t.serviceView(i).health;
        if (h != metrics::Health::Unknown)
            o.sample("gslbd_service_up", serviceLabels(t, i), h == metrics::Health::Up);
    }
    o.head("gslbd_service_enabled", "gauge", "1 when the service is enabled (not drained).");
    for (uint32_t i = 0; i < t.serviceCount(); ++i)
        o.sample("gslbd_service_enabled", serviceLabels(t, i), t.serviceView(i).enabled);
    o.head("gslbd_service_connections", "gauge", "Last reported connections of the service.");
    for (uint32_t i = 0; i < t.serviceCount(); ++i)
        o.sample("gslbd_service_connections", serviceLabels(t, i), t.serviceView(i).connections);
    o.head("gslbd_service_report_age_seconds", "gauge", "Age of the service's last connections report.");
    for (uint32_t i = 0; i < t.serviceCount(); ++i) {
        auto v = t.serviceView(i);
        if (v.connectionsAtMs != metrics::kNeverMs)
            o.sample("gslbd_service_report_age_seconds", serviceLabels(t, i),
                     double(now - v.connectionsAtMs) / 1000.0);
    }
    // Seconds, as Prometheus names want base units (the status JSON keeps milliseconds).
    o.head("gslbd_service_flashback_seconds", "gauge",
           "Smoothed FlashBack times of the service's health checks.");
    for (uint32_t i = 0; i < t.serviceCount(); ++i) {
        auto v = t.serviceView(i);
        o.sample("gslbd_service_flashback_seconds", serviceLabels(t, i) + ",layer=\"l4\"", v.l4Ms / 1000.0);
        o.sample("gslbd_service_flashback_seconds", serviceLabels(t, i) + ",layer=\"l7\"", v.l7Ms / 1000.0);
    }
}

// Each checked service's health checks: results, latency, the duration histogram, flaps, certificate expiry.
void checkMetrics(Out& o, const metrics::StateTable& t, const ControlApi::CheckStatusFn& checkStatus) {
    o.head("gslbd_check_results_total", "counter", "Health check results, by outcome.");
    for (uint32_t i = 0; i < t.serviceCount(); ++i) {
        CheckStatus c = checkStatus(i);
        if (!c.checked) continue;
        o.sample("gslbd_check_results_total", serviceLabels(t, i) + ",result=\"success\"",
                 double(c.successes));
        o.sample("gslbd_check_results_total", serviceLabels(t, i) + ",result=\"failure\"",
                 double(c.failures));
    }
    o.head("gslbd_check_latency_seconds", "gauge", "Time of the last health check.");
    for (uint32_t i = 0; i < t.serviceCount(); ++i) {
        CheckStatus c = checkStatus(i);
        if (c.checked && c.lastLatencyMs >= 0)
            o.sample("gslbd_check_latency_seconds", serviceLabels(t, i), c.lastLatencyMs / 1000.0);
    }
    // A histogram of every check's duration (Prometheus conventions: seconds, cumulative `le` buckets,
    // _sum and _count); the gauge above keeps the last one for a glance.
    o.head("gslbd_check_duration_seconds", "histogram",
           "Duration of the service's health checks, successes and failures (a timeout counts its full "
           "time).");
    for (uint32_t i = 0; i < t.serviceCount(); ++i) {
        CheckStatus c = checkStatus(i);
        if (!c.checked) continue;
        uint64_t cum = 0;
        for (size_t b = 0; b < kCheckDurationBucketCount; ++b) {
            cum += c.durationBuckets[b];
            o.sample("gslbd_check_duration_seconds_bucket",
                     serviceLabels(t, i) + fmt::format(",le=\"{}\"", kCheckDurationBuckets[b]), double(cum));
        }
        o.sample("gslbd_check_duration_seconds_bucket", serviceLabels(t, i) + ",le=\"+Inf\"",
                 double(c.durationCount));
        o.sample("gslbd_check_duration_seconds_sum", serviceLabels(t, i), c.durationSumSec);
        o.sample("gslbd_check_duration_seconds_count", serviceLabels(t, i), double(c.durationCount));
    }
    o.head("gslbd_check_state_changes_total", "counter", "Up/down changes (flaps) of the service.");
    for (uint32_t i = 0; i < t.serviceCount(); ++i) {
        CheckStatus c = checkStatus(i);
        if (c.checked) o.sample("gslbd_check_state_changes_total", serviceLabels(t, i), double(c.flaps));
    }
    o.head("gslbd_check_cert_not_after_seconds", "gauge",
           "https checks: the server certificate's notAfter, in seconds since the epoch.");
    for (uint32_t i = 0; i < t.serviceCount(); ++i) {
        CheckStatus c = checkStatus(i);
        if (c.checked && c.certNotAfterUnix)
            o.sample("gslbd_check_cert_not_after_seconds", serviceLabels(t, i), double(c.certNotAfterUnix));
    }
}

// Each metric source: up, last success, scrape duration, series, scrapes.
void sourceMetrics(Out& o, const std::vector<SourceStatus>& srcs, int64_t now) {
    auto sl = [&](const SourceStatus& x) { return fmt::format("source=\"{}\"", esc(x.name)); };
    upAndAge(o, "gslbd_source_up",
             "1 when the metric source's last scrape succeeded (absent before the first).",
             "gslbd_source_last_success_age_seconds", "Age of the source's last successful scrape.", srcs, sl,
             now);
    o.head("gslbd_source_scrape_duration_seconds", "gauge", "Duration of the source's last scrape.");
    for (const auto& x : srcs)
        if (x.durationMs >= 0) o.sample("gslbd_source_scrape_duration_seconds", sl(x), x.durationMs / 1000.0);
    o.head("gslbd_source_series", "gauge", "Series in the source's last successful scrape.");
    for (const auto& x : srcs) o.sample("gslbd_source_series", sl(x), double(x.series));
    o.head("gslbd_source_series_matched", "gauge", "Series the mappings used in the last successful scrape.");
    for (const auto& x : srcs) o.sample("gslbd_source_series_matched", sl(x), double(x.matched));
    o.head("gslbd_source_scrapes_total", "counter", "Scrapes of the source, by result.");
    for (const auto& x : srcs) {
        o.sample("gslbd_source_scrapes_total", sl(x) + ",result=\"ok\"", double(x.scrapes - x.failures));
        o.sample("gslbd_source_scrapes_total", sl(x) + ",result=\"failed\"", double(x.failures));
    }
}

// [cluster] health_quorum (doc/ns-set.md): only while it is set.
void quorumMetrics(Out& o, const QuorumStatus& q) {
    if (q.quorum > 0) {
        o.head("gslbd_health_quorum_own_view", "gauge",
               "1 when some checked service is decided on this member's own verdict alone (too few peers' "
               "fresh verdicts to reach health_quorum).");
        o.sample("gslbd_health_quorum_own_view", "", q.ownView ? 1 : 0);
        o.head("gslbd_health_quorum_own_view_services", "gauge",
               "Checked services decided on this member's own verdict alone.");
        o.sample("gslbd_health_quorum_own_view_services", "", double(q.ownViewServices));
    }
}

// The learned RTT table's fill and each site agent's reports.
void rttMetrics(Out& o, const RttTable& rt, const std::map<std::string, ControlApi::RttSiteStats>& stats) {
    o.head("gslbd_rtt_prefixes", "gauge", "Client prefixes with learned round-trip times ([rtt]).");
    o.sample("gslbd_rtt_prefixes", "", double(rt.used()));
    o.head("gslbd_rtt_prefixes_max", "gauge", "Client prefixes the RTT table holds at most.");
    o.sample("gslbd_rtt_prefixes_max", "", double(rt.capacity()));
    o.head("gslbd_rtt_evictions_total", "counter",
           "Prefixes that gave up their slot to a newer one (least recently reported first).");
    o.sample("gslbd_rtt_evictions_total", "", double(rt.evictions()));
    o.head("gslbd_rtt_reports_total", "counter", "Site agents' RTT reports, by site and result.");
    for (const auto& [site, st] : stats) {
        o.sample("gslbd_rtt_reports_total", fmt::format("site=\"{}\",result=\"taken\"", esc(site)),
                 double(st.taken));
        o.sample("gslbd_rtt_reports_total", fmt::format("site=\"{}\",result=\"refused\"", esc(site)),
                 double(st.refused));
    }
    o.head("gslbd_rtt_last_report_age_seconds", "gauge", "Age of each site's last RTT report taken.");
    const int64_t mono = monotonicMs();
    for (const auto& [site, st] : stats)
        if (st.lastMs)
            o.sample("gslbd_rtt_last_report_age_seconds", fmt::format("site=\"{}\"", esc(site)),
                     double(mono - st.lastMs) / 1000.0);
}

// [cluster] etcd (cluster/etcd_sync.hpp): only while it is configured.
void etcdMetrics(Out& o, const cluster::EtcdStatus& e) {
    o.head("gslbd_etcd_up", "gauge",
           "1 while this member reads and writes the shared state in etcd; 0 while it is cut off (it serves "
           "the last state it read and its own checks).");
    o.sample("gslbd_etcd_up", "", e.state == "live" ? 1 : 0);
    o.head("gslbd_etcd_revision", "gauge", "The last etcd revision this member read.");
    o.sample("gslbd_etcd_revision", "", double(e.revision));
    o.head("gslbd_etcd_cuts_total", "counter", "Times this member lost etcd (every endpoint failed).");
    o.sample("gslbd_etcd_cuts_total", "", double(e.cuts));
    o.head("gslbd_etcd_applied_total", "counter",
           "Drains, enables and reports read from etcd that changed something on this member.");
    o.sample("gslbd_etcd_applied_total", "", double(e.applied));
    o.head("gslbd_etcd_refused_total", "counter",
           "Keys read from etcd and refused (bad or hostile data: wrong types, huge values, unknown keys).");
    o.sample("gslbd_etcd_refused_total", "", double(e.refused));
    o.head("gslbd_etcd_writes_total", "counter", "Writes etcd took from this member.");
    o.sample("gslbd_etcd_writes_total", "", double(e.written));
    o.head("gslbd_etcd_writes_queued", "gauge", "Writes waiting for etcd (taken while it was away).");
    o.sample("gslbd_etcd_writes_queued", "", double(e.queued));
}

}  // namespace

// The families in the order a reader of /metrics meets them, each group made by its function above.
ApiResponse ControlApi::prometheus(const Snapshot& s) {
    Out o;
    trafficMetrics(o, totals(shared_), shared_);
    zoneMetrics(o, s);
    const metrics::StateTable& t = *s.gslb.table;
    const int64_t now = monotonicMs();
    siteMetrics(o, t, now);
    answerMetrics(o, s, t);
    serviceMetrics(o, t, now);
    if (checkStatus_) checkMetrics(o, t, checkStatus_);
    if (sourceStatus_) sourceMetrics(o, sourceStatus_(), now);
    if (quorumStatus_) quorumMetrics(o, quorumStatus_());
    if (s.gslb.rtt) rttMetrics(o, *s.gslb.rtt, rttStats_);
    o.head("gslbd_control_reports_total", "counter", "Site reports accepted by the control API.");
    o.sample("gslbd_control_reports_total", "", double(reports_));
    o.head("gslbd_control_unauthorized_total", "counter", "Control API changes refused for a bad token.");
    o.sample("gslbd_control_unauthorized_total", "", double(refused_));
    if (etcdOn()) etcdMetrics(o, etcd_->status());
    o.head("gslbd_reloads_total", "counter",
           "Reloads of the config and zones, by trigger (sighup, api) and result (ok, failed: the previous "
           "configuration kept serving).");
    for (int t = 0; t < 2; ++t)
        for (int r = 0; r < 2; ++r)
            o.sample("gslbd_reloads_total",
                     fmt::format("trigger=\"{}\",result=\"{}\"", t == kReloadSighup ? "sighup" : "api",
                                 r == 0 ? "ok" : "failed"),
                     double(shared_.reloads[t][r].load(std::memory_order_relaxed)));
    return ApiResponse{200, o.s, "text/plain; version=0.0.4; charset=utf-8"};
}

}  // namespace gslb::server
