// gslbd's configuration: one TOML file (doc/design.md "The config file"), read with toml++ against a
// declarative schema (doc/design.md "Principles" 8): every key has a type, a range and a default; an unknown
// key or a bad value is an error that names the file, the line and the key's full path.
#pragma once
#include <algorithm>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "zones/catalog.hpp"
#include "zones/journal.hpp"
#include "zones/serial.hpp"
#include "zones/tsig.hpp"

namespace gslb::server {

inline constexpr int kMaxWorkers = 64;  // [server] workers upper bound; answer counters keep one row each

/// An address and port to listen on ("127.0.0.1:10053", "[::1]:10053", "0.0.0.0:53").
struct ListenAddr {
    std::string text;
    sockaddr_storage addr{};
    socklen_t len = 0;
    bool wildcard = false;  // 0.0.0.0 or ::: replies need the destination address of each query (IP_PKTINFO)
};

/// An address prefix ("127.0.0.1", "10.0.0.0/8", "2001:db8::/32") for access lists.
struct Prefix {
    int family = AF_INET;
    uint8_t bytes[16]{};
    int bits = 0;
    bool matches(const sockaddr* sa) const;
};

/// An axfr_allow entry: "10.0.0.0/8", or { address = "192.0.2.53", key = "xfr" } when transfers from there
/// must be signed with that [key.NAME] (RFC 8945).
struct AxfrAllow {
    Prefix prefix;
    int key = -1;      // index in Config::keys; -1: no key needed (a signed request is still answered signed)
    std::string text;  // as written, for logs
    // RFC 9103 (XoT): `tls = true`: only over a TLS connection ([server] tls_listen); `client_cert = true`
    // (implies tls): only from a client whose certificate verified against [server] tls_client_ca (§9.3.3).
    bool tls = false;
    bool clientCert = false;
};

/// A NOTIFY target: "192.0.2.53", "192.0.2.53:5300", or { address = "…", key = "xfr" } to sign the NOTIFY.
struct NotifyTarget {
    ListenAddr addr;
    int key = -1;  // index in Config::keys; -1: unsigned
};

struct ServerConf {
    std::vector<ListenAddr> listen;
    int workers = 2;                // UDP/TCP worker threads, each with its own SO_REUSEPORT sockets
    uint16_t udpPayloadMax = 1232;  // octets (RFC 6891 §6.2.5; 1232 is the DNS Flag Day 2020 value)
    int tcpIdleTimeout = 10;        // s
    int tcpMessageTimeout = 3;      // s: from a TCP message's first octet to its last (slowloris)
    int tcpMaxConnections = 1024;
    int tcpMaxConnectionsPerClient =
        0;  // open at once from one client (server/responder/client_limits.hpp); 0: no cap
    std::vector<AxfrAllow> axfrAllow;  // empty: nobody may transfer (unless a zone has its own list)
    int axfrMaxConcurrent = 10;  // zone transfers in flight at once, all workers together (BIND's default)
    int axfrMaxConcurrentPerClient = 0;  // transfers in flight to one client; 0: no cap
    bool minimalResponses = true;  // no NS RRset in the authority section of positive answers (RFC 2181 §6.1)
    std::string identity;          // CH TXT id.server; empty: REFUSED
    std::string version;           // CH TXT version.bind; empty: REFUSED
    bool ecs = true;               // EDNS Client Subnet (RFC 7871): use the client's prefix, echo the scope
    std::string user;              // drop to this user after binding; empty: stay who we are
    std::string stateDir;          // admin state (drains) kept across restarts; empty: not kept
    std::string log = "stderr";    // stderr | syslog
    bool nsid = false;             // RFC 5001: answer NSID requests with `identity`
    std::string cookieSecretFile;  // DNS Cookies (RFC 7873 / RFC 9018): absolute path; empty: a random secret
    int cookieRollover = 3600;     // s: a secret replaced at a reload is still accepted this long
    // Interfaces whose UDP queries to `listen` are answered through AF_XDP (server/net/xdp/path.hpp); empty:
    // none. Read at start only.
    std::vector<std::string> xdp;
    // DNS over TLS (RFC 7858) and XoT (RFC 9103) on these addresses (bound at start only); empty: none.
    std::vector<ListenAddr> tlsListen;
    std::string tlsCertificate;  // PEM chain, leaf first; absolute (resolved against the config's directory)
    std::string tlsKey;          // PEM private key of tlsCertificate
    std::string tlsClientCa;     // PEM CA certificates that client certificates must chain to; empty: none
};

/// Threads that answer queries, each with its own row of statistics (Shared::stats) and of GSLB answer
/// counters: per worker, its loop (TCP, AF_XDP) and one per UDP socket (one per listen address).
inline size_t answerRows(const ServerConf& sc) {
    return size_t(std::max(1, sc.workers)) * (1 + sc.listen.size());
}
/// The row of worker `worker`'s thread `lane` (0: its loop; 1 + i: the thread of its socket on listen[i]).
inline size_t answerRow(const ServerConf& sc, int worker, size_t lane) {
    return lane * size_t(std::max(1, sc.workers)) + size_t(worker);
}

/// [rrl]: response rate limiting (the BIND / NSD / Knot design; server/responder/rrl.hpp).
struct RrlConf {
    bool enabled = false;         // only when an [rrl] table is present
    int responsesPerSecond = 20;  // per client prefix and response kind
    int window = 15;              // s: a prefix counts as limited until it has been under the rate this long
    int slip = 2;                 // every slip-th limited response goes out truncated (TC); 0 never, 1 always
    int ipv4Prefix = 24;          // bits
    int ipv6Prefix = 56;          // bits (at most 64)
    std::vector<Prefix> exempt;   // never limited
    int tableSize = 131072;       // buckets (a power of two; changes need a restart)
};

struct ControlConf {
    bool enabled = false;   // only when a [control] table is present
    ListenAddr listen;      // default 127.0.0.1:8053
    std::string tokenFile;  // absolute path; required when [control] is present
};

/// One member of [cluster]: the control API of a gslbd of this NS set, "http://192.0.2.53:8053" or
/// "http://[2001:db8::53]:8053" (an address literal and a port: the control loop never waits on a name
/// lookup).
struct ClusterMember {
    std::string url;  // "http://ADDRESS:PORT", as written without a trailing "/"
    ListenAddr addr;  // ADDRESS:PORT (addr.text is "ADDRESS:PORT" / "[ADDRESS]:PORT")
};

/// [cluster] (doc/design.md "Several instances as one NS set"): every gslbd serving the same zones, this one
/// included, each with the same config (doc/ns-set.md).
struct ClusterConf {
    bool enabled = false;  // only when a [cluster] table is present
    std::vector<ClusterMember> members;
    /// Index in `members` of this instance, or -1 (gslbctl, which reads [cluster] from anywhere). Found, in
    /// order: `self = "URL"`; the member whose ADDRESS:PORT is [control] listen; when [control] listens on a
    /// wildcard address, the member on that port whose address is one of this machine's (getifaddrs). A
    /// running gslbd with a [cluster] always has one (loadConfig fails otherwise).
    int selfIndex = -1;
    /// health_quorum: a service counts as down when at least this many members see it down (1..members);
    /// 0: not set (each member decides on its own view). Needs `etcd` (the verdicts travel there).
    int healthQuorum = 0;
    /// etcd = ["http://ADDRESS:PORT", …] (doc/ns-set.md "Shared state in etcd"): the etcd cluster that holds
    /// what the members share (drains, reports, verdicts, probe ownership, each member's digest and serials);
    /// tried in order. Empty: no etcd, the members are independent (as gdnsd's are): `members` is then only
    /// the list gslbctl reaches.
    std::vector<std::string> etcd;
    /// etcd_prefix: every key gslbd reads or writes starts with it, so several NS sets share one etcd.
    /// Starts and ends with "/", at most 128 octets of printable ASCII.
    std::string etcdPrefix = "/gslbd/";
    /// etcd_ca, etcd_cert, etcd_key: TLS for https:// endpoints (absolute paths, resolved from the config's
    /// directory); cert and key together or neither; ca empty: the system store.
    std::string etcdCa, etcdCert, etcdKey;
    int line = 0;
};

struct ZoneConf {
    std::string name;   // presentation form, absolute ("gslb.example.com.")
    std::string file;   // path, resolved against the config file's directory
    std::string where;  // "config:line" of its `file` key: where a missing file is fixed
    std::vector<NotifyTarget>
        notify;                 // secondaries told of a new serial (RFC 1996); port 53 when not written
    bool axfrAllowSet = false;  // the zone has its own axfr_allow, which replaces [server]'s
    std::vector<AxfrAllow> axfrAllow;
    bool dnssec = false;          // sign the zone at load with the keys in keyDir (doc/dnssec.md)
    std::string keyDir;           // resolved against the config file's directory
    std::string denial = "nsec";  // nsec | nsec3 (RFC 9276: SHA-1, iterations 0, no salt, no opt-out)
    uint32_t signatureValidity =
        14 * 86400;  // s: signatures expire this long after signing; re-signed at half
    // The SOA serial served (zones/serial.hpp): default unixtime for a signed zone, whose every signing must
    // reach the secondaries; keep (the file's) for an unsigned one. `keep` is refused with dnssec.
    zones::SerialPolicy serialPolicy = zones::SerialPolicy::Keep;
    // IXFR (RFC 1995): the differences kept for this zone (ixfr_journal_depth changesets, ixfr_journal_size
    // octets; either 0: none, every IXFR is answered AXFR-style), in memory and in state_dir.
    zones::JournalLimits journal;
    // RFC 9432 catalog zone built by gslbd (no file): its members are every other [[zone]] that is not a
    // catalog, in config order, each with its catalog_group.
    bool catalog = false;
    std::vector<zones::CatalogMember> catalogMembers;
    std::string catalogGroup;  // this zone's RFC 9432 §4.4.2 group property in the catalogs; empty: none
};

/// Empty when the zone's file can be opened for reading; else "config:line: [[zone]] \"NAME\": file PATH: why
/// (…)", naming the config line that names the file (the loader's own message names only the file), and
/// what to check. For the start, reloads and the checks.
std::string zoneFileProblem(const ZoneConf& zc);

/// Per-hostname behaviour; [defaults] gives every key's default, each [hostname."…"] may override it.
struct PolicyConf {
    uint32_t ttl = 30;    // s
    int64_t ttlMin = -1;  // s, <= ttl (`headroom`'s adaptive TTL); -1: not set, effectiveTtlMin()
    /// ttl_min as written, else ttl / 10 (at least 1 s when ttl >= 1): the shortest TTL the headroom chooser
    /// gives, the `ttl` when calm. ttl / 10, not / 5: a resolver bringing a third of the clients at TTL 10
    /// brings twice as many sessions in ttl / 5 as in ttl / 10, and the closed lab refused 2-4 times as many
    /// sessions with the longer floor (doc/lab.md, "Other sites, skews, TTLs and session lengths"); the mean
    /// TTL stayed above 3/4 of ttl.
    uint32_t effectiveTtlMin() const {
        if (ttlMin >= 0) return uint32_t(ttlMin);
        return ttl == 0 ? 0 : ttl / 10 > 1 ? ttl / 10 : 1;
    }
    uint16_t answers = 1;             // records per answer (distinct services)
    std::string fallback = "all";     // all | none | an address (when `health` leaves nothing)
    uint8_t fallbackRdata[16]{};      // fallback = an address: parsed at load, wire form
    uint8_t fallbackLen = 0;          // 4 (A), 16 (AAAA); 0: all or none
    std::vector<std::string> policy;  // stage names; empty: the default policy
    double sessionThreshold = 90;     // percent of the session table used
    double sessionTolerance = 10;     // percent
    double sessionFloor = 5;          // percent of the smaller session table (session-capacity)
    double flashbackTolerance = 10;   // percent
    double flashbackFloor = 5;        // ms: FlashBack times this close are equal whatever the percentage
    double factor = 0;  // close-enough factor (least-connections, cpu): value <= best * (1 + factor)
    int maxAge = 60;    // s: older reports count as unknown
    std::vector<std::string> written;  // the keys this table set itself (not inherited): for the warnings
    // `topology` stage: "" (no key: match the client against each site's `region`), "nearest", or "map" with
    // topologyMap: region key -> sites in order of preference ("default" among the keys: everyone else).
    std::string topologyMode;
    std::vector<std::pair<std::string, std::vector<std::string>>> topologyMap;
    int topologyLine = 0;
    double nearestTolerance = 0;  // km: `nearest` keeps sites within the nearest + this
    int hashPrefixV4 = 24;        // `hashed`: clients in the same /24 (IPv4) and /56 (IPv6) stay together
    int hashPrefixV6 = 56;
    // `rtt` (gslbd.toml(5) "rtt"): round-trip times the site agents learned, per client prefix
    double rttTolerance = 10;  // percent: RTTs this close (of the larger) are equal
    double rttFloor = 5;       // ms: RTTs this close are equal whatever the percentage
    int rttMaxAge = 120;       // s: older figures count as unknown
    double rttExplore = 5;     // percent of answers that skip the stage, so sites get measured
};

/// [rtt]: the table of learned round-trip times (server/state/rtt_table.hpp). Restart-free: a reload that
/// changes a prefix length starts the table empty.
struct RttConf {
    int prefixesMax = 100000;          // client prefixes held, least recently reported evicted
    int prefixV4 = 24;                 // bits: the agents' --prefix-v4
    int prefixV6 = 56;                 // bits: the agents' --prefix-v6
    int prefixesMaxPerReport = 10000;  // prefixes one report may carry
};

/// [topology]: where clients are. Paths resolved against the config file's directory.
struct TopologyConf {
    std::string geoip;                                      // a MaxMind DB; empty: none
    std::vector<std::pair<std::string, std::string>> nets;  // prefix -> region, longest prefix wins
    std::string netsFile;                                   // more of them, "PREFIX REGION" per line
    int line = 0;
};

/// A named health check ([check.NAME]); the checks themselves run in the control thread (doc/design.md
/// "Metric sources").
struct CheckConf {
    std::string name;
    std::string type = "tcp";  // tcp | http | https | none
    int port = 80;             // https: 443
    std::string path = "/";    // http
    std::string host;          // http Host header; default: the hostname checked
    std::vector<int> expectStatus = {200};
    std::string expectBody;  // http: substring the body must hold; empty: any body
    std::string sni;         // https: SNI and the name the certificate must hold; default: Host without port
    std::string caFile;      // https: PEM CA bundle; empty: the system store (relative: to the config file)
    bool insecure = false;   // https: skip certificate verification
    double interval = 5;     // s
    double timeout = 2;      // s
    int rise = 2;            // consecutive successes to go up
    int fall = 3;            // consecutive failures to go down
    int line = 0;
};

/// Where one report key comes from (doc/design.md "Metric sources"): `{ source = "east-lb", metric =
/// 'sel{a="b"}' }` on a scraped source, `{ source = "prom", query = '…' }` on a Prometheus server. The value
/// is the sum (avg, max) of the matching series, a per-second rate when `rate`, then `value * scale +
/// offset`.
struct MappingConf {
    bool set = false;    // the key is mapped
    std::string source;  // a [source.NAME]
    std::string metric;  // scrape: a selector, `name{label="v",other!="w"}` or `rate(…)`
    std::string query;   // prometheus: a PromQL instant query
    std::string label;   // prometheus: keep only the series whose label is this site (service address)
    bool rate = false;   // scrape: per-second rate between scrapes (counters)
    std::string aggregate = "sum";  // sum | avg | max over the matching series
    double scale = 1;
    double offset = 0;
    int line = 0;
};

/// A service's `connections` mapping, on the heap only when the key is set, shared by copies (read-only after
/// load): most services have none, and an inline MappingConf was 200 of a ServiceConf's 360 octets (16 MB at
/// 80,000 services). Reads as an unset MappingConf when absent.
class SharedMapping {
  public:
    SharedMapping& operator=(MappingConf m) {
        if (m.set)
            p_ = std::make_shared<const MappingConf>(std::move(m));
        else
            p_.reset();
        return *this;
    }
    const MappingConf& operator*() const { return p_ ? *p_ : unset(); }
    const MappingConf* operator->() const { return &**this; }

  private:
    static const MappingConf& unset() {
        static const MappingConf none;
        return none;
    }
    std::shared_ptr<const MappingConf> p_;
};

/// A metric source ([source.NAME]): an exposition endpoint scraped every `interval`, or a Prometheus server
/// asked PromQL instant queries (type = "prometheus").
struct SourceConf {
    std::string name;
    std::string type = "scrape";  // scrape | prometheus
    std::string url;              // http://ADDRESS:PORT/path (an address literal or localhost)
    std::string host;             // parsed from url
    int port = 80;
    std::string path = "/metrics";
    double interval = 5;             // s
    double timeout = 2;              // s (<= interval)
    std::string preset;              // haproxy | node | nginx | envoy; empty: explicit mappings only
    std::string siteLabel = "site";  // prometheus + preset: the label that names the site
    double rateWindow = 60;          // prometheus + preset: s, the range of rate() in generated queries
    size_t maxBytes = 8u << 20;      // largest body read
    int line = 0;
};

struct SiteConf {
    std::string name;
    std::vector<std::string> sources;  // [source.NAME]s whose presets give this site's metrics, first wins
    MappingConf cpu, sessionsUsed, sessionsMax;  // explicit mappings (beside or instead of a preset)
    std::map<std::string, MappingConf> loads;    // by [load.metric.NAME]
    int preference = 128;                        // 0..255; 0 takes the site out (Brocade ADX)
    std::string region;  // matched against the client's location by a `topology` stage without a map
    bool hasLocation = false;
    double latitude = 0, longitude = 0;  // degrees, for `topology = "nearest"`
    // agent_token_file: a bearer token that may post only this site's reports (rtt and report), for its
    // agent (gslbd-agent(8)); resolved path and the token read from it. Empty: only the control token.
    std::string agentTokenFile, agentToken;
    int line = 0;
};

struct ServiceConf {
    std::string address;  // one of the hostname's A/AAAA records, as written (logs, API, state keys)
    uint8_t rdata[16]{};  // the same address parsed at load, once: the record's rdata (A: 4 octets, AAAA: 16)
    uint8_t rdlen = 0;    // 4 or 16
    std::string site;
    double weight = 1;
    // Sessions (or connections) the service can hold; 0: unknown. Read where the site reports no session
    // table: utilisation = connections / capacity (metrics/utilisation.hpp), by least-connections when every
    // candidate has one, and by the headroom chooser.
    double capacity = 0;
    std::string check;         // a [check.NAME]; empty: no health check (counts as up)
    std::string checkAddress;  // check this address instead of `address` (a VIP checked through another)
    int port = 0;              // check this port instead of the check's
    SharedMapping
        connections;  // explicit mapping of the service's connections (doc/design.md "Metric sources")
    int line = 0;
};

struct HostnameConf {
    std::string name;  // absolute, as written
    PolicyConf policy;
    std::vector<ServiceConf> services;
    int line = 0;
};

/// mod_cluster load metrics reported by sites ("loads": {"busy": 0.3}) for the `load-factor` chooser.
struct LoadMetricConf {
    std::string name;
    double weight = 1;
    double capacity = 1;
};
struct LoadConf {
    double decay = 2;  // D
    int history = 9;   // H
    std::vector<LoadMetricConf> metrics;
};

struct Config {
    std::string path;
    std::string tomlDigest;  // server/conf/digest.hpp canonicalTomlDigest of the file as parsed
    ServerConf server;
    RrlConf rrl;
    ControlConf control;
    ClusterConf cluster;
    std::vector<ZoneConf> zones;
    PolicyConf defaults;
    std::map<std::string, CheckConf> checks;
    std::vector<SiteConf> sites;
    std::vector<HostnameConf> hostnames;
    LoadConf load;
    std::map<std::string, SourceConf> sources;  // [source.NAME]
    TopologyConf topology;
    RttConf rtt;
    std::vector<zones::TsigKey> keys;  // [key.NAME] (TSIG), secrets read from their files
    // Each key's secret_file as resolved, "[key.NAME] secret_file" -> path, in config order: every reload
    // reads them again (server/daemon/readable.hpp checks the user gslbd runs as can).
    std::vector<std::pair<std::string, std::string>> keySecretFiles;
};

/// Reads and checks `path`. On failure returns false and sets `error` to "file:line: path: message".
bool loadConfig(const std::string& path, Config& out, std::string& error);

/// Reads only the [control] table of `path` (what gslbctl needs to reach a running server), so an emergency
/// drain works while another section has a mistake. `out.enabled` is false when there is no [control].
/// Errors as loadConfig's. With `cluster`, also the `members` of [cluster] (their URLs checked, duplicates
/// refused; nothing else of [cluster], selfIndex -1): gslbctl's live commands reach every member.
/// With `syntaxError`, a file whose TOML does not parse is read once more as its [control] and [cluster]
/// tables alone (every other line blank, so lines keep their numbers): true when those two parse, with the
/// file's own parse error ("file:line: why") in `*syntaxError`; false with that error when they do not.
bool loadControlConfig(const std::string& path, ControlConf& out, std::string& error,
                       ClusterConf* cluster = nullptr, std::string* syntaxError = nullptr);

/// Parses a [cluster] member URL, "http://ADDRESS:PORT" (a trailing "/" allowed, no path); false with `why`.
bool parseMemberUrl(const std::string& text, ClusterMember& out, std::string& why);

/// One `[cluster] etcd` URL: "http://ADDRESS:PORT" or "https://ADDRESS:PORT" (an address literal: the control
/// loop never waits on a name lookup).
struct EtcdEndpoint {
    std::string url;   // as written, without a trailing "/"
    std::string host;  // numeric, IPv6 without brackets
    int port = 0;
    bool tls = false;
};

/// Parses an endpoint URL; false with `why`.
bool parseEtcdUrl(const std::string& text, EtcdEndpoint& out, std::string& why);

/// Reads only the name and file of each [[zone]] of `path` (files resolved against its directory), for
/// gslbctl's zone commands given -c: like loadControlConfig, nothing else of the config is checked.
bool loadZoneFiles(const std::string& path, std::vector<ZoneConf>& out, std::string& error);

/// Parses an IPv4 or IPv6 address literal into its 4 or 16 octets (`len`); false when it is neither.
bool parseAddress(const std::string& text, uint8_t out[16], uint8_t& len);

/// Parses "host:port" / "[v6]:port" into `out`; false when it is not an address with a port.
bool parseListen(const std::string& text, ListenAddr& out);

/// Whether `a` and `b` are the same IPv4 or IPv6 address (and, with `withPort`, the same port); addresses of
/// different families never are (an IPv4-mapped IPv6 address is not its IPv4 one).
bool sameAddress(const sockaddr_storage& a, const sockaddr_storage& b, bool withPort);

}  // namespace gslb::server
