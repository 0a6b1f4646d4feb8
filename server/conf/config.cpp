#include "server/conf/config.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "metrics/policy.hpp"
#include "server/conf/digest.hpp"
#include "server/conf/config_sources.hpp"
#include "server/conf/schema.hpp"
#include "server/conf/token.hpp"
#include "zones/read_file.hpp"

namespace gslb::server {

bool Prefix::matches(const sockaddr* sa) const {
    const uint8_t* a;
    if (sa->sa_family == AF_INET && family == AF_INET) {
        a = reinterpret_cast<const uint8_t*>(&reinterpret_cast<const sockaddr_in*>(sa)->sin_addr);
    } else if (sa->sa_family == AF_INET6) {
        const auto* a6 = &reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr;
        if (family == AF_INET6) {
            a = a6->s6_addr;
        } else if (IN6_IS_ADDR_V4MAPPED(a6)) {
            a = a6->s6_addr + 12;
        } else {
            return false;
        }
    } else {
        return false;
    }
    int full = bits / 8, rest = bits % 8;
    if (std::memcmp(a, bytes, size_t(full)) != 0) return false;
    if (rest == 0) return true;
    uint8_t mask = uint8_t(0xFF << (8 - rest));
    return (a[full] & mask) == (bytes[full] & mask);
}

namespace {

bool parsePrefix(const std::string& text, Prefix& p) {
    std::string addr = text;
    int bits = -1;
    auto slash = text.find('/');
    if (slash != std::string::npos) {
        addr = text.substr(0, slash);
        try {
            size_t used = 0;
            std::string b = text.substr(slash + 1);
            if (b.empty() || b.find_first_not_of("0123456789") != std::string::npos) return false;  // no "-8"
            bits = std::stoi(b, &used);
            if (used != b.size()) return false;
        } catch (...) {
            return false;
        }
    }
    if (inet_pton(AF_INET, addr.c_str(), p.bytes) == 1) {
        p.family = AF_INET;
        if (bits < 0) bits = 32;
        if (bits > 32) return false;
    } else if (inet_pton(AF_INET6, addr.c_str(), p.bytes) == 1) {
        p.family = AF_INET6;
        if (bits < 0) bits = 128;
        if (bits > 128) return false;
    } else {
        return false;
    }
    p.bits = bits;
    return true;
}

// Reads an axfr_allow list (of [server] or of a zone): each entry a prefix string or an inline table
// { address = PREFIX, key = NAME, tls = BOOL, client_cert = BOOL }.
// What of [server]'s TLS settings the entries' `tls` and `client_cert` depend on.
struct TlsPresence {
    bool hasListen = false;
    bool hasClientCa = false;
};

std::vector<AxfrAllow> readAxfrAllow(TableReader& t, const std::vector<zones::TsigKey>& keys,
                                     const TlsPresence& tls) {
    std::vector<AxfrAllow> out;
    const toml::node* n = t.raw("axfr_allow");
    if (!n) return out;
    const toml::array* a = n->as_array();
    if (!a)
        t.fail(n, "axfr_allow", "must be an array of prefixes or { address, key, tls, client_cert } tables");
    for (const auto& e : *a) {
        AxfrAllow entry;
        if (e.is_string()) {
            entry.text = *e.value<std::string>();
        } else if (const toml::table* et = e.as_table()) {
            TableReader r(*et, t.file(), t.join("axfr_allow"));
            entry.text = r.getString("address", "");
            if (entry.text.empty()) r.fail(nullptr, "address", "is required");
            std::string key = r.getString("key", "");
            if (!key.empty()) {
                for (size_t i = 0; i < keys.size(); ++i)
                    if (keys[i].label == key) entry.key = int(i);
                if (entry.key < 0) r.fail(r.raw("key"), "key", fmt::format("no [key.{}] is configured", key));
            }
            entry.clientCert = r.getBool("client_cert", false);
            entry.tls = r.getBool("tls", false) || entry.clientCert;
            if (entry.tls && !tls.hasListen)
                r.fail(r.raw(entry.clientCert ? "client_cert" : "tls"),
                       entry.clientCert ? "client_cert" : "tls",
                       "needs [server] tls_listen: without it no transfer could ever come over TLS");
            if (entry.clientCert && !tls.hasClientCa)
                r.fail(r.raw("client_cert"), "client_cert",
                       "needs [server] tls_client_ca, the CA that client certificates must chain to");
            r.finish();
        } else {
            t.fail(&e, "axfr_allow",
                   "must be an array of prefixes or { address, key, tls, client_cert } tables");
        }
        if (!parsePrefix(entry.text, entry.prefix))
            t.fail(&e, "axfr_allow", fmt::format("\"{}\" is not an address or prefix", entry.text));
        out.push_back(entry);
    }
    return out;
}

std::string dirOf(const std::string& path) {
    auto slash = path.rfind('/');
    return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

std::string resolvePath(const std::string& base, const std::string& p) {
    if (!p.empty() && p[0] == '/') return p;
    return dirOf(base) + "/" + p;
}

bool isAddress(const std::string& a) {
    uint8_t bytes[16], len;
    return parseAddress(a, bytes, len);
}

// Reads the policy keys of [defaults] or of one [hostname."…"], each defaulting to `base`.
PolicyConf readPolicy(TableReader& t, const PolicyConf& base) {
    PolicyConf p;
    p.ttl = uint32_t(t.getInt("ttl", base.ttl, 0, 2147483647));
    p.ttlMin = t.getInt("ttl_min", base.ttlMin, 0, 2147483647);
    if (t.has("ttl_min") && p.ttlMin > int64_t(p.ttl))
        t.fail(t.raw("ttl_min"), "ttl_min", fmt::format("= {} is above ttl = {}", p.ttlMin, p.ttl));
    // A ttl_min inherited from [defaults] above this table's own ttl: capped to it (the range holds one
    // value).
    if (p.ttlMin > int64_t(p.ttl)) p.ttlMin = p.ttl;
    p.answers = uint16_t(t.getInt("answers", base.answers, 1, 64));
    p.fallback = t.getString("fallback", base.fallback);
    p.fallbackLen = 0;
    if (p.fallback != "all" && p.fallback != "none") {
        if (!parseAddress(p.fallback, p.fallbackRdata, p.fallbackLen))
            t.fail(t.raw("fallback"), "fallback",
                   fmt::format("\"{}\" is not all, none or an IPv4/IPv6 address", p.fallback));
    }
    p.policy = t.getStrings("policy", base.policy);
    if (t.has("policy")) {
        // Checked here, where the key's line is known (the stages' parameters are checked again per
        // hostname).
        metrics::Policy compiled = metrics::Policy::defaultPolicy();
        std::string why;
        if (!metrics::Policy::compile(p.policy, metrics::Params{}, compiled, why))
            t.fail(t.raw("policy"), "policy", why);
    }
    p.sessionThreshold = t.getNumber("session_threshold", base.sessionThreshold, 0, 100);
    p.sessionTolerance = t.getNumber("session_tolerance", base.sessionTolerance, 0, 100);
    p.sessionFloor = t.getNumber("session_floor", base.sessionFloor, 0, 100);
    p.flashbackTolerance = t.getNumber("flashback_tolerance", base.flashbackTolerance, 0, 100);
    p.flashbackFloor = t.getNumber("flashback_floor", base.flashbackFloor, 0, 10000);
    p.factor = t.getNumber("factor", base.factor, 0, 1000);
    p.maxAge = int(t.getInt("max_age", base.maxAge, 0, 86400 * 365));
    p.topologyMode = base.topologyMode;
    p.topologyMap = base.topologyMap;
    p.topologyLine = base.topologyLine;
    if (const toml::node* tn = t.raw("topology")) {
        p.topologyLine = int(tn->source().begin.line);
        p.topologyMap.clear();
        if (tn->is_string()) {
            p.topologyMode = *tn->value<std::string>();
            if (p.topologyMode != "nearest" && p.topologyMode != "region")
                t.fail(tn, "topology",
                       fmt::format("\"{}\" is not \"nearest\", \"region\" or a table of region = [sites]",
                                   p.topologyMode));
            if (p.topologyMode == "region") p.topologyMode.clear();
        } else if (const toml::table* tt = tn->as_table()) {
            p.topologyMode = "map";
            for (const auto& [k, v] : *tt) {
                const toml::array* a = v.as_array();
                if (!a || a->empty())
                    t.fail(&v, "topology",
                           fmt::format("{}: must be a non-empty array of site names", k.str()));
                std::vector<std::string> sites;
                for (const auto& e : *a) {
                    if (!e.is_string())
                        t.fail(&e, "topology", fmt::format("{}: must be an array of site names", k.str()));
                    sites.push_back(*e.value<std::string>());
                }
                p.topologyMap.emplace_back(std::string(k.str()), std::move(sites));
            }
        } else {
            t.fail(tn, "topology", "must be \"nearest\", \"region\" or a table of region = [sites]");
        }
    }
    p.nearestTolerance = t.getNumber("nearest_tolerance", base.nearestTolerance, 0, 40075);
    p.hashPrefixV4 = int(t.getInt("hash_prefix_v4", base.hashPrefixV4, 0, 32));
    p.hashPrefixV6 = int(t.getInt("hash_prefix_v6", base.hashPrefixV6, 0, 128));
    p.rttTolerance = t.getNumber("rtt_tolerance", base.rttTolerance, 0, 100);
    p.rttFloor = t.getNumber("rtt_floor", base.rttFloor, 0, 10000);
    p.rttMaxAge = int(t.getInt("rtt_max_age", base.rttMaxAge, 1, 86400));
    p.rttExplore = t.getNumber("rtt_explore", base.rttExplore, 0, 100);
    for (const char* k :
         {"ttl_min", "session_threshold", "session_tolerance", "session_floor", "flashback_tolerance",
          "flashback_floor", "factor", "topology", "nearest_tolerance", "hash_prefix_v4", "hash_prefix_v6",
          "rtt_tolerance", "rtt_floor", "rtt_max_age", "rtt_explore"})
        if (t.has(k)) p.written.emplace_back(k);
    return p;
}

// The TOML file at `path` into `root`; false with "path:line: why" (or "path: why") when it does not parse.
bool parseTomlFile(const std::string& path, toml::table& root, std::string& error) {
    try {
        root = toml::parse_file(path);
    } catch (const toml::parse_error& e) {
        error = fmt::format("{}:{}: {}", path, e.source().begin.line, e.description());
        return false;
    } catch (const std::exception& e) {
        error = fmt::format("{}: {}", path, e.what());
        return false;
    }
    return true;
}

// [control]: shared by loadConfig and loadControlConfig.
void readControl(const toml::table& ct, const std::string& path, ControlConf& out) {
    TableReader c(ct, path, "[control]");
    out.enabled = true;
    std::string l = c.getString("listen", "127.0.0.1:8053");
    if (!parseListen(l, out.listen))
        c.fail(c.raw("listen"), "listen", fmt::format("\"{}\" is not ADDRESS:PORT", l));
    std::string tf = c.getString("token_file", "");
    if (tf.empty()) c.fail(nullptr, "token_file", "is required: every change needs the bearer token");
    out.tokenFile = resolvePath(path, tf);
    c.finish();
}

uint16_t portOf(const sockaddr_storage& a) {
    return ntohs(a.ss_family == AF_INET ? reinterpret_cast<const sockaddr_in&>(a).sin_port
                                        : reinterpret_cast<const sockaddr_in6&>(a).sin6_port);
}

// Whether `a` (port ignored) is an address of one of this machine's interfaces.
bool isLocalAddress(const sockaddr_storage& a) {
    ifaddrs* list = nullptr;
    if (getifaddrs(&list) != 0) return false;
    bool found = false;
    for (ifaddrs* i = list; i && !found; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != a.ss_family) continue;
        sockaddr_storage s{};
        std::memcpy(&s, i->ifa_addr, a.ss_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6));
        found = sameAddress(s, a, false);
    }
    freeifaddrs(list);
    return found;
}

// [cluster] members: every member's control API URL, each once. Returns the key's node (for messages).
const toml::node* readMembers(TableReader& c, ClusterConf& out) {
    const toml::node* mn = c.raw("members");
    if (!mn)
        c.fail(nullptr, "members", "is required: the control API URL of every member, this one included");
    const toml::array* ma = mn->as_array();
    if (!ma || ma->empty())
        c.fail(mn, "members", "must be a non-empty array of \"http://ADDRESS:PORT\" strings");
    for (const auto& e : *ma) {
        if (!e.is_string()) c.fail(&e, "members", "must be an array of \"http://ADDRESS:PORT\" strings");
        ClusterMember m;
        std::string why;
        if (!parseMemberUrl(*e.value<std::string>(), m, why)) c.fail(&e, "members", why);
        for (const auto& other : out.members)
            if (sameAddress(other.addr.addr, m.addr.addr, true))
                c.fail(&e, "members", fmt::format("{} is listed twice", m.url));
        out.members.push_back(std::move(m));
    }
    return mn;
}

// [cluster] etcd: the endpoints, each once (gslbctl needs to know it is there: then one member takes a change
// for all).
void readEtcdEndpoints(TableReader& c, ClusterConf& out) {
    if (const toml::node* en = c.raw("etcd")) {
        const toml::array* ea = en->as_array();
        if (!ea || ea->empty())
            c.fail(en, "etcd",
                   "must be a non-empty array of \"http://ADDRESS:PORT\" strings (etcd's client URLs)");
        for (const auto& e : *ea) {
            if (!e.is_string()) c.fail(&e, "etcd", "must be an array of \"http://ADDRESS:PORT\" strings");
            EtcdEndpoint ep;
            std::string why;
            if (!parseEtcdUrl(*e.value<std::string>(), ep, why)) c.fail(&e, "etcd", why);
            for (const auto& other : out.etcd)
                if (other == ep.url) c.fail(&e, "etcd", fmt::format("{} is listed twice", ep.url));
            out.etcd.push_back(ep.url);
        }
    }
}

// The server's other [cluster] settings: etcd_prefix, etcd's TLS files (which need `etcd`), and
// health_quorum (1..members, which needs `etcd` too).
void readClusterSettings(TableReader& c, ClusterConf& out) {
    out.etcdPrefix = c.getString("etcd_prefix", "/gslbd/");
    {
        const std::string& p = out.etcdPrefix;
        bool printable = std::all_of(p.begin(), p.end(), [](char ch) { return ch > 0x20 && ch < 0x7f; });
        if (p.size() < 2 || p.size() > 128 || p.front() != '/' || p.back() != '/' || !printable)
            c.fail(
                c.raw("etcd_prefix"), "etcd_prefix",
                fmt::format("\"{}\" must start and end with \"/\" and be 2..128 printable ASCII characters "
                            "without spaces (default \"/gslbd/\")",
                            p));
    }
    for (auto [key, field] : {std::pair{"etcd_ca", &out.etcdCa}, std::pair{"etcd_cert", &out.etcdCert},
                              std::pair{"etcd_key", &out.etcdKey}}) {
        std::string v = c.getString(key, "");
        if (!v.empty()) *field = resolvePath(c.file(), v);
    }
    if (out.etcdCert.empty() != out.etcdKey.empty())
        c.fail(c.raw(out.etcdCert.empty() ? "etcd_key" : "etcd_cert"),
               out.etcdCert.empty() ? "etcd_key" : "etcd_cert",
               "etcd_cert and etcd_key go together (the client certificate and its key)");
    if (out.etcd.empty() && (!out.etcdCa.empty() || !out.etcdCert.empty() || c.has("etcd_prefix")))
        c.fail(nullptr, "", "etcd_prefix, etcd_ca, etcd_cert and etcd_key need `etcd` (the endpoints)");
    out.healthQuorum = int(c.getInt("health_quorum", 0, 1, int64_t(out.members.size())));
    // The members' verdicts travel through etcd only (members no longer poll each other's /v1/verdicts): a
    // quorum without it would silently be each member's own view, so an old config is refused, loudly.
    if (out.healthQuorum > 0 && out.etcd.empty())
        c.fail(c.raw("health_quorum"), "health_quorum",
               "needs `etcd`: the members' verdicts are shared through etcd (doc/ns-set.md \"Shared state in "
               "etcd\"); add etcd = [\"http://ADDRESS:2379\", …] to [cluster], or remove health_quorum to "
               "let each member decide on its own checks");
}

// Which of `members` this instance is: `self` when set (it must be a member and where [control] listens),
// else the member at [control]'s listen address, else with a wildcard listener the one member on its port
// with an address of this machine; refused when none or several fit.
void findSelf(TableReader& c, const ControlConf& control, const std::string& self, const toml::node* mn,
              ClusterConf& out) {
    const sockaddr_storage& listen = control.listen.addr;
    if (!self.empty()) {
        ClusterMember m;
        std::string why;
        if (!parseMemberUrl(self, m, why)) c.fail(c.raw("self"), "self", why);
        for (size_t i = 0; i < out.members.size(); ++i)
            if (sameAddress(out.members[i].addr.addr, m.addr.addr, true)) out.selfIndex = int(i);
        if (out.selfIndex < 0)
            c.fail(c.raw("self"), "self", fmt::format("{} is not one of `members`", m.url));
        bool fits = control.listen.wildcard
                        ? portOf(m.addr.addr) == portOf(listen) &&
                              (m.addr.addr.ss_family == listen.ss_family || listen.ss_family == AF_INET6)
                        : sameAddress(m.addr.addr, listen, true);
        if (!fits)
            c.fail(c.raw("self"), "self",
                   fmt::format("{} is not where [control] listens ({})", m.url, control.listen.text));
        return;
    }
    for (size_t i = 0; i < out.members.size(); ++i)
        if (sameAddress(out.members[i].addr.addr, listen, true)) out.selfIndex = int(i);
    if (out.selfIndex >= 0) return;
    if (!control.listen.wildcard)
        c.fail(mn, "members",
               fmt::format("none is this instance: [control] listens on {} (list it, or set `self`)",
                           control.listen.text));
    // A wildcard listener (the same config on every member): the member on that port whose address is
    // one of ours. A v6 wildcard takes IPv4 members too (Linux's default bindv6only = 0).
    std::vector<size_t> local;
    for (size_t i = 0; i < out.members.size(); ++i) {
        const auto& a = out.members[i].addr.addr;
        if (portOf(a) != portOf(listen)) continue;
        if (a.ss_family != listen.ss_family && listen.ss_family != AF_INET6) continue;
        if (isLocalAddress(a)) local.push_back(i);
    }
    if (local.size() == 1) {
        out.selfIndex = int(local[0]);
        return;
    }
    c.fail(mn, "members",
           local.empty() ? fmt::format("none is this instance: [control] listens on {} and no member on port "
                                       "{} has an address of this machine (set `self`)",
                                       control.listen.text, portOf(listen))
                         : fmt::format("{} members on port {} have an address of this machine: set `self` "
                                       "to the one this instance is",
                                       local.size(), portOf(listen)));
}

// [cluster]. `full`: the server's reading (self, health_quorum, unknown keys); otherwise only `members`, as
// gslbctl needs them to reach every member, so a slip elsewhere in [cluster] does not block a drain.
void readCluster(const toml::table& ct, const std::string& path, const ControlConf& control, bool full,
                 ClusterConf& out) {
    TableReader c(ct, path, "[cluster]");
    out = ClusterConf{};
    out.enabled = true;
    out.line = c.line();
    const toml::node* mn = readMembers(c, out);
    readEtcdEndpoints(c, out);
    if (!full) return;
    readClusterSettings(c, out);
    std::string self = c.getString("self", "");
    c.finish();
    if (!control.enabled)
        c.fail(nullptr, "",
               "needs [control]: members reach each other through the control API (its listen address is "
               "how a member finds itself in `members`)");
    findSelf(c, control, self, mn, out);
}

}  // namespace

bool parseEtcdUrl(const std::string& text, EtcdEndpoint& out, std::string& why) {
    out = EtcdEndpoint{};
    std::string rest;
    if (text.rfind("http://", 0) == 0) {
        rest = text.substr(7);
    } else if (text.rfind("https://", 0) == 0) {
        rest = text.substr(8);
        out.tls = true;
    } else {
        why = fmt::format("\"{}\" must be http://ADDRESS:PORT or https://ADDRESS:PORT", text);
        return false;
    }
    if (!rest.empty() && rest.back() == '/') rest.pop_back();
    std::string host, port;
    if (!rest.empty() && rest[0] == '[') {
        auto close = rest.find(']');
        if (close == std::string::npos || close + 1 >= rest.size() || rest[close + 1] != ':') {
            why = fmt::format("\"{}\": an IPv6 address goes in brackets, then :PORT", text);
            return false;
        }
        host = rest.substr(1, close - 1);
        port = rest.substr(close + 2);
    } else {
        auto colon = rest.rfind(':');
        if (colon == std::string::npos) {
            why = fmt::format("\"{}\" has no :PORT (etcd's client port is usually 2379)", text);
            return false;
        }
        host = rest.substr(0, colon);
        port = rest.substr(colon + 1);
    }
    unsigned char buf[16];
    bool v6 = inet_pton(AF_INET6, host.c_str(), buf) == 1;
    if (!v6 && inet_pton(AF_INET, host.c_str(), buf) != 1) {
        why = fmt::format("\"{}\": {} is not an IP address (the control loop never waits on a name lookup)",
                          text, host);
        return false;
    }
    int p = 0;
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
    if (port.empty() || ec != std::errc() || end != port.data() + port.size() || p < 1 || p > 65535) {
        why = fmt::format("\"{}\": the port must be 1..65535", text);
        return false;
    }
    out.host = host;
    out.port = p;
    out.url = (out.tls ? "https://" : "http://") + rest;
    return true;
}

bool parseMemberUrl(const std::string& text, ClusterMember& out, std::string& why) {
    const std::string scheme = "http://";
    if (text.rfind(scheme, 0) != 0) {
        why = fmt::format("\"{}\" must be http://ADDRESS:PORT (the member's control API{})", text,
                          text.rfind("https://", 0) == 0 ? "; it speaks plain HTTP" : "");
        return false;
    }
    std::string hostport = text.substr(scheme.size());
    if (!hostport.empty() && hostport.back() == '/') hostport.pop_back();
    if (hostport.find('/') != std::string::npos || !parseListen(hostport, out.addr)) {
        why = fmt::format("\"{}\" is not http://ADDRESS:PORT (an IPv4 address or [IPv6] and a port, no path)",
                          text);
        return false;
    }
    if (out.addr.wildcard || portOf(out.addr.addr) == 0) {
        why = fmt::format("\"{}\": a member needs an address it can be reached at and a port", text);
        return false;
    }
    out.url = scheme + hostport;
    return true;
}

namespace {

// The [control] and [cluster] tables of a config whose TOML does not parse, each other line blanked so that
// line numbers still point into the file. A table starts at its header line and ends before the next line
// that opens one ('[' first); neither table has sub-tables or values whose lines start with '['.
std::string controlTablesOnly(const std::string& text) {
    std::string out;
    bool keep = false;
    for (size_t start = 0; start < text.size();) {
        size_t nl = text.find('\n', start);
        size_t end = nl == std::string::npos ? text.size() : nl;
        std::string_view line(text.data() + start, end - start);
        size_t b = line.find_first_not_of(" \t");
        std::string_view t = b == std::string_view::npos ? std::string_view() : line.substr(b);
        if (!t.empty() && t[0] == '[') {
            auto header = [&](std::string_view h) {
                if (t.substr(0, h.size()) != h) return false;
                size_t r = t.find_first_not_of(" \t", h.size());
                return r == std::string_view::npos || t[r] == '#';
            };
            keep = header("[control]") || header("[cluster]");
        }
        if (keep) out.append(line);
        out += '\n';
        if (nl == std::string::npos) break;
        start = nl + 1;
    }
    return out;
}

}  // namespace

bool loadControlConfig(const std::string& path, ControlConf& out, std::string& error, ClusterConf* cluster,
                       std::string* syntaxError) {
    out = ControlConf{};
    if (cluster) *cluster = ClusterConf{};
    if (syntaxError) syntaxError->clear();
    toml::table root;
    if (!parseTomlFile(path, root, error)) {
        // A TOML syntax error elsewhere must not block an emergency drain either: read the two tables alone.
        std::string text, why;
        if (!syntaxError || !zones::readFile(path, text, why)) return false;
        try {
            root = toml::parse(controlTablesOnly(text), path);
        } catch (const toml::parse_error&) {
            return false;  // the mistake is inside [control] or [cluster]: report the whole file's error
        }
        *syntaxError = error;
        error.clear();
    }
    try {
        if (const toml::node* n = root.get("control")) {
            if (!n->is_table()) {
                error = fmt::format("{}:{}: control: must be a table", path, n->source().begin.line);
                return false;
            }
            readControl(*n->as_table(), path, out);
        }
        if (const toml::node* n = root.get("cluster"); n && cluster) {
            if (!n->is_table()) {
                error = fmt::format("{}:{}: cluster: must be a table", path, n->source().begin.line);
                return false;
            }
            readCluster(*n->as_table(), path, out, false, *cluster);
        }
    } catch (const ConfigError& e) {
        error = e.what();
        return false;
    }
    return true;
}

bool loadZoneFiles(const std::string& path, std::vector<ZoneConf>& out, std::string& error) {
    out.clear();
    toml::table root;
    if (!parseTomlFile(path, root, error)) return false;
    const toml::array* za = root.get("zone") ? root.get("zone")->as_array() : nullptr;
    if (!za) return true;
    for (const auto& e : *za) {
        const toml::table* zt = e.as_table();
        if (!zt) continue;
        auto name = zt->get("name") ? zt->get("name")->value<std::string>() : std::nullopt;
        auto file = zt->get("file") ? zt->get("file")->value<std::string>() : std::nullopt;
        if (!name || !file || name->empty() || file->empty()) continue;
        ZoneConf zc;
        zc.name = *name;
        if (zc.name.back() != '.') zc.name += '.';
        zc.file = resolvePath(path, *file);
        out.push_back(std::move(zc));
    }
    return true;
}

bool parseAddress(const std::string& text, uint8_t out[16], uint8_t& len) {
    if (inet_pton(AF_INET, text.c_str(), out) == 1) {
        len = 4;
        return true;
    }
    if (inet_pton(AF_INET6, text.c_str(), out) == 1) {
        len = 16;
        return true;
    }
    return false;
}

bool parseListen(const std::string& text, ListenAddr& out) {
    std::string host, port;
    if (!text.empty() && text[0] == '[') {
        auto close = text.find(']');
        if (close == std::string::npos || text.size() - close < 2 || text[close + 1] != ':') return false;
        host = text.substr(1, close - 1);
        port = text.substr(close + 2);
    } else {
        auto colon = text.rfind(':');
        if (colon == std::string::npos || text.find(':') != colon) return false;
        host = text.substr(0, colon);
        port = text.substr(colon + 1);
    }
    if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos)
        return false;
    int portNum = std::stoi(port);
    if (portNum > 65535) return false;
    out = ListenAddr{};
    out.text = text;
    auto* s4 = reinterpret_cast<sockaddr_in*>(&out.addr);
    auto* s6 = reinterpret_cast<sockaddr_in6*>(&out.addr);
    if (inet_pton(AF_INET, host.c_str(), &s4->sin_addr) == 1) {
        s4->sin_family = AF_INET;
        s4->sin_port = htons(uint16_t(portNum));
        out.len = sizeof(sockaddr_in);
        out.wildcard = s4->sin_addr.s_addr == INADDR_ANY;
    } else if (inet_pton(AF_INET6, host.c_str(), &s6->sin6_addr) == 1) {
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons(uint16_t(portNum));
        out.len = sizeof(sockaddr_in6);
        out.wildcard = IN6_IS_ADDR_UNSPECIFIED(&s6->sin6_addr);
    } else {
        return false;
    }
    return true;
}

namespace {

// Each reader below takes one part of the file, in the order loadConfig calls them (a part may name what an
// earlier one defined: keys, sites, checks, sources). Each fails by TableReader::fail (ConfigError, with
// file:line and the key's path), caught by loadConfig: doc/design.md "Errors".

// [key.NAME]: the TSIG keys (RFC 8945). First: axfr_allow and notify entries name keys.
void readKeys(TableReader& top, const std::string& path, Config& out) {
    top.forEachTable("key", "key", [&](const std::string& name, TableReader& kr) {
        zones::TsigKey key;
        key.label = name;
        if (!zones::textToName(name, std::string_view("\0", 1), key.name))
            kr.fail(nullptr, "", fmt::format("\"{}\" is not a valid key name (a domain name)", name));
        std::string alg = kr.getString("algorithm", "hmac-sha256");
        if (!zones::tsigAlgorithmFromName(alg, key.algorithm))
            kr.fail(kr.raw("algorithm"), "algorithm",
                    fmt::format("\"{}\" is not hmac-md5, hmac-sha1, hmac-sha224, hmac-sha256, "
                                "hmac-sha384 or hmac-sha512",
                                alg));
        // RFC 8945 §5.2.4: the shortest truncated MAC taken from a peer; the full hash by default (BIND's
        // rule for a key not configured for truncation), down to §5.2.2.1's max(10, half the hash).
        const size_t full = zones::tsigMacSize(key.algorithm);
        key.minMacSize = uint16_t(
            kr.getInt("min_mac_size", int64_t(full), int64_t(std::max<size_t>(10, full / 2)), int64_t(full)));
        std::string sf = kr.getString("secret_file", "");
        if (sf.empty()) kr.fail(nullptr, "secret_file", "is required (the base64 secret, in a file)");
        sf = resolvePath(path, sf);
        std::string text, why;
        if (!zones::readFile(sf, text, why, zones::kSecretMax))
            kr.fail(kr.raw("secret_file"), "secret_file",
                    fmt::format("cannot read {}: {}", sf, strerror(errno)));
        if (!zones::parseSecretText(text, key.secret, why))
            kr.fail(kr.raw("secret_file"), "secret_file", fmt::format("{}: {}", sf, why));
        for (const auto& other : out.keys)
            if (other.name == key.name)
                kr.fail(nullptr, "", fmt::format("key name {} is configured twice", name));
        kr.finish();
        out.keySecretFiles.emplace_back(fmt::format("[key.{}] secret_file", name), sf);
        out.keys.push_back(std::move(key));
    });
}

// [server] listen: the UDP and TCP addresses.
void readListen(TableReader& s, ServerConf& sv) {
    auto listen = s.getStrings("listen", {"127.0.0.1:10053"});
    if (listen.empty()) s.fail(s.raw("listen"), "listen", "needs at least one address");
    for (const auto& l : listen) {
        ListenAddr a;
        if (!parseListen(l, a))
            s.fail(s.raw("listen"), "listen", fmt::format("\"{}\" is not ADDRESS:PORT or [ADDRESS]:PORT", l));
        sv.listen.push_back(a);
    }
}

// [server] tls_listen and the TLS files: DNS over TLS (RFC 7858) and XoT (RFC 9103). Read before axfr_allow,
// whose `tls` entries need them.
void readTls(TableReader& s, const std::string& path, ServerConf& sv) {
    for (const auto& l : s.getStrings("tls_listen", {})) {
        ListenAddr a;
        if (!parseListen(l, a))
            s.fail(s.raw("tls_listen"), "tls_listen",
                   fmt::format("\"{}\" is not ADDRESS:PORT or [ADDRESS]:PORT", l));
        for (const auto& u : sv.listen)
            if (u.text == a.text)
                s.fail(
                    s.raw("tls_listen"), "tls_listen",
                    fmt::format("\"{}\" is also in `listen`: DNS over TLS needs a port of its own (853)", l));
        sv.tlsListen.push_back(a);
    }
    if (std::string f = s.getString("tls_certificate", ""); !f.empty())
        sv.tlsCertificate = resolvePath(path, f);
    if (std::string f = s.getString("tls_key", ""); !f.empty()) sv.tlsKey = resolvePath(path, f);
    if (std::string f = s.getString("tls_client_ca", ""); !f.empty()) sv.tlsClientCa = resolvePath(path, f);
    if (!sv.tlsListen.empty() && sv.tlsCertificate.empty())
        s.fail(s.raw("tls_listen"), "tls_listen", "needs `tls_certificate` and `tls_key` (PEM files)");
    if (!sv.tlsListen.empty() && sv.tlsKey.empty())
        s.fail(s.raw("tls_listen"), "tls_listen", "needs `tls_key` (the PEM private key of tls_certificate)");
}

// [server] xdp: the interfaces of the AF_XDP fast path.
void readXdp(TableReader& s, ServerConf& sv) {
    sv.xdp = s.getStrings("xdp", {});
    for (size_t i = 0; i < sv.xdp.size(); ++i) {
        const std::string& x = sv.xdp[i];
        // IFNAMSIZ is 16 with its NUL; a name is never a path (it is joined into /sys/class/net/NAME).
        if (x.empty() || x.size() > 15 || x.find_first_of("/ \t\n") != std::string::npos || x == "." ||
            x == "..")
            s.fail(s.raw("xdp"), "xdp",
                   fmt::format("\"{}\" is not an interface name (1 to 15 characters, no '/' or space)", x));
        // Twice would be two programs for one interface: the second bind fails and logs a fallback while
        // the first serves, which reads as if the fast path were off.
        else if (std::find(sv.xdp.begin(), sv.xdp.begin() + long(i), x) != sv.xdp.begin() + long(i))
            s.fail(s.raw("xdp"), "xdp", fmt::format("\"{}\" is listed twice", x));
    }
#ifndef GSLBD_XDP
    if (!sv.xdp.empty())
        s.fail(s.raw("xdp"), "xdp",
               "this gslbd was built without the AF_XDP fast path (it needs libxdp-dev, libbpf-dev and "
               "clang at build time: meson setup -Dxdp=enabled); remove `xdp` to serve on sockets");
#endif
}

// [server]: sockets, limits, TLS, transfers, identity, cookies, logging, AF_XDP.
void readServer(TableReader& top, const std::string& path, Config& out) {
    const toml::table* st = top.getTable("server");
    const toml::table empty;
    TableReader s(st ? *st : empty, path, "[server]");
    ServerConf& sv = out.server;
    readListen(s, sv);
    sv.workers = int(s.getInt("workers", 2, 1, kMaxWorkers));
    sv.udpPayloadMax = uint16_t(s.getInt("udp_payload_max", 1232, 512, 65535));
    sv.tcpIdleTimeout = int(s.getInt("tcp_idle_timeout", 10, 1, 3600));
    sv.tcpMessageTimeout = int(s.getInt("tcp_message_timeout", 3, 1, 3600));
    sv.tcpMaxConnections = int(s.getInt("tcp_max_connections", 1024, 1, 1000000));
    sv.tcpMaxConnectionsPerClient = int(s.getInt("tcp_max_connections_per_client", 0, 0, 1000000));
    readTls(s, path, sv);
    TlsPresence tls{!sv.tlsListen.empty(), !sv.tlsClientCa.empty()};
    sv.axfrAllow = readAxfrAllow(s, out.keys, tls);
    sv.axfrMaxConcurrent = int(s.getInt("axfr_max_concurrent", 10, 1, 100000));
    sv.axfrMaxConcurrentPerClient = int(s.getInt("axfr_max_concurrent_per_client", 0, 0, 100000));
    sv.minimalResponses = s.getBool("minimal_responses", true);
    sv.identity = s.getString("identity", "");
    sv.version = s.getString("version", "");
    sv.ecs = s.getBool("ecs", true);
    sv.user = s.getString("user", "");
    std::string sd = s.getString("state_dir", "");
    if (!sd.empty()) sv.stateDir = resolvePath(path, sd);
    sv.log = s.getString("log", "stderr");
    if (sv.log != "stderr" && sv.log != "syslog")
        s.fail(s.raw("log"), "log", fmt::format("\"{}\" is not stderr or syslog", sv.log));
    sv.nsid = s.getBool("nsid", false);
    if (sv.nsid && sv.identity.empty())
        s.fail(s.raw("nsid"), "nsid", "needs `identity`: the NSID sent is the server's identity");
    if (std::string cf = s.getString("cookie_secret_file", ""); !cf.empty())
        sv.cookieSecretFile = resolvePath(path, cf);
    sv.cookieRollover = int(s.getInt("cookie_rollover", 3600, 0, 86400 * 30));
    readXdp(s, sv);
    s.finish();
}

// [rrl]: response rate limiting, on when the table is there.
void readRrl(TableReader& top, const std::string& path, RrlConf& rc) {
    const toml::table* rt = top.getTable("rrl");
    if (!rt) return;
    TableReader r(*rt, path, "[rrl]");
    rc.enabled = true;
    rc.responsesPerSecond = int(r.getInt("responses_per_second", 20, 1, 1000000));
    rc.window = int(r.getInt("window", 15, 1, 3600));
    rc.slip = int(r.getInt("slip", 2, 0, 10));
    rc.ipv4Prefix = int(r.getInt("ipv4_prefix", 24, 8, 32));
    rc.ipv6Prefix = int(r.getInt("ipv6_prefix", 56, 16, 64));
    for (const auto& a : r.getStrings("exempt", {})) {
        Prefix p;
        if (!parsePrefix(a, p))
            r.fail(r.raw("exempt"), "exempt", fmt::format("\"{}\" is not an address or prefix", a));
        rc.exempt.push_back(p);
    }
    rc.tableSize = int(r.getInt("table_size", 131072, 1024, 1 << 24));
    r.finish();
}

// A zone's notify: addresses, or { address, key } tables naming a [key.NAME] (RFC 1996, RFC 8945).
void readNotify(TableReader& z, const toml::node* nn, const std::string& path,
                const std::vector<zones::TsigKey>& keys, std::vector<NotifyTarget>& notify) {
    const toml::array* na = nn->as_array();
    if (!na) z.fail(nn, "notify", "must be an array of addresses or { address, key } tables");
    for (const auto& e : *na) {
        NotifyTarget t;
        std::string n;
        if (e.is_string()) {
            n = *e.value<std::string>();
        } else if (const toml::table* et = e.as_table()) {
            TableReader r(*et, path, z.join("notify"));
            n = r.getString("address", "");
            if (n.empty()) r.fail(nullptr, "address", "is required");
            std::string key = r.getString("key", "");
            if (!key.empty()) {
                for (size_t k = 0; k < keys.size(); ++k)
                    if (keys[k].label == key) t.key = int(k);
                if (t.key < 0) r.fail(r.raw("key"), "key", fmt::format("no [key.{}] is configured", key));
            }
            r.finish();
        } else {
            z.fail(&e, "notify", "must be an array of addresses or { address, key } tables");
        }
        uint8_t bytes[16], len;
        bool ok = parseListen(n, t.addr);
        if (!ok && parseAddress(n, bytes, len))  // a bare address: the DNS port
            ok = parseListen(len == 4 ? n + ":53" : "[" + n + "]:53", t.addr);
        if (!ok)
            z.fail(&e, "notify", fmt::format("\"{}\" is not ADDRESS, ADDRESS:PORT or [ADDRESS]:PORT", n));
        notify.push_back(t);
    }
}

// A zone's serial_policy: "keep" by default, "unixtime" with dnssec (a re-sign must grow the serial).
zones::SerialPolicy readSerialPolicy(TableReader& z, bool dnssec) {
    std::string sp = z.getString("serial_policy", dnssec ? "unixtime" : "keep");
    auto pol = zones::parseSerialPolicy(sp);
    if (!pol)
        z.fail(z.raw("serial_policy"), "serial_policy",
               "must be \"keep\", \"increment\", \"unixtime\" or \"dateserial\"");
    if (*pol == zones::SerialPolicy::Keep && dnssec)
        z.fail(z.raw("serial_policy"), "serial_policy",
               "\"keep\" does not work with dnssec = true: every re-sign changes the zone, and "
               "secondaries transfer it only when the serial grows (use \"unixtime\", "
               "\"increment\" or \"dateserial\")");
    return *pol;
}

// One [[zone]]: its file or catalog role, notify targets, DNSSEC, serials, IXFR journal and axfr_allow.
ZoneConf readZone(TableReader& z, const std::string& path, const Config& out) {
    ZoneConf zc;
    zc.name = z.getString("name", "");
    if (zc.name.empty()) z.fail(nullptr, "name", "is required");
    if (zc.name.back() != '.') zc.name += '.';
    zc.catalog = z.getBool("catalog", false);
    std::string f = z.getString("file", "");
    if (zc.catalog && !f.empty())
        z.fail(z.raw("file"), "file",
               "a catalog zone (catalog = true) is built by gslbd from the other [[zone]]s and has "
               "no file");
    if (!zc.catalog && f.empty()) z.fail(nullptr, "file", "is required");
    if (!f.empty()) zc.file = resolvePath(path, f);
    if (const toml::node* fn = z.raw("file")) zc.where = fmt::format("{}:{}", path, fn->source().begin.line);
    zc.catalogGroup = z.getString("catalog_group", "");
    if (zc.catalogGroup.size() > 255)
        z.fail(z.raw("catalog_group"), "catalog_group", "is longer than 255 octets (RFC 1035 §3.3)");
    if (zc.catalog && !zc.catalogGroup.empty())
        z.fail(z.raw("catalog_group"), "catalog_group", "is for member zones, not for a catalog");
    if (const toml::node* nn = z.raw("notify")) readNotify(z, nn, path, out.keys, zc.notify);
    zc.dnssec = z.getBool("dnssec", false);
    std::string kd = z.getString("key_dir", "");
    if (zc.dnssec && kd.empty()) z.fail(z.raw("dnssec"), "key_dir", "is required with dnssec = true");
    if (!kd.empty()) zc.keyDir = resolvePath(path, kd);
    zc.denial = z.getString("denial", "nsec");
    if (zc.denial != "nsec" && zc.denial != "nsec3")
        z.fail(z.raw("denial"), "denial", "must be \"nsec\" or \"nsec3\"");
    zc.signatureValidity = uint32_t(z.getInt("signature_validity", 14 * 86400, 10, 90 * 86400));
    zc.serialPolicy = readSerialPolicy(z, zc.dnssec);
    zc.journal.depth = size_t(z.getInt("ixfr_journal_depth", 20, 0, 10000));
    zc.journal.bytes = size_t(z.getInt("ixfr_journal_size", 10 << 20, 0, int64_t(1) << 32));
    zc.axfrAllowSet = z.has("axfr_allow");
    zc.axfrAllow =
        readAxfrAllow(z, out.keys, {!out.server.tlsListen.empty(), !out.server.tlsClientCa.empty()});
    for (const auto& other : out.zones)
        if (strcasecmp(other.name.c_str(), zc.name.c_str()) == 0)
            z.fail(z.raw("name"), "name", fmt::format("zone {} is configured twice", zc.name));
    z.finish();
    return zc;
}

// [[zone]], then each catalog zone's members (RFC 9432): every other zone.
void readZones(TableReader& top, const std::string& path, Config& out) {
    if (const toml::node* zn = top.raw("zone")) {
        const toml::array* za = zn->as_array();
        if (!za) top.fail(zn, "zone", "must be an array of tables ([[zone]])");
        int i = 0;
        for (const auto& e : *za) {
            ++i;
            const toml::table* zt = e.as_table();
            if (!zt) top.fail(&e, "zone", "must be an array of tables ([[zone]])");
            TableReader z(*zt, path, fmt::format("zone {}", i));
            out.zones.push_back(readZone(z, path, out));
        }
    }
    if (out.zones.empty()) top.fail(nullptr, "zone", "no [[zone]] configured: nothing to serve");
    for (auto& cat : out.zones) {
        if (!cat.catalog) continue;
        for (const auto& m : out.zones)
            if (!m.catalog) cat.catalogMembers.push_back({m.name, m.catalogGroup});
    }
}

// [check.NAME]: a health check (tcp, http, https or none), its timing and what a pass is.
CheckConf readCheck(TableReader& c, const std::string& name, const std::string& path) {
    CheckConf cc;
    cc.name = name;
    cc.line = c.line();
    cc.type = c.getString("type", "tcp");
    if (cc.type != "tcp" && cc.type != "http" && cc.type != "https" && cc.type != "none")
        c.fail(c.raw("type"), "type", fmt::format("\"{}\" is not tcp, http, https or none", cc.type));
    cc.port = int(c.getInt("port", cc.type == "https" ? 443 : 80, 1, 65535));
    cc.sni = c.getString("sni", "");
    cc.caFile = c.getString("ca_file", "");
    if (!cc.caFile.empty()) cc.caFile = resolvePath(path, cc.caFile);
    cc.insecure = c.getBool("insecure", false);
    cc.path = c.getString("path", "/");
    if (cc.path.empty() || cc.path[0] != '/') c.fail(c.raw("path"), "path", "must start with /");
    cc.host = c.getString("host", "");
    cc.expectStatus.clear();
    if (const toml::node* es = c.raw("expect_status")) {
        const toml::array* a = es->as_array();
        if (!a || a->empty()) c.fail(es, "expect_status", "must be a non-empty array of HTTP status codes");
        for (const auto& e : *a) {
            auto v2 = e.is_integer() ? e.value<int64_t>() : std::nullopt;  // a float: no cast
            if (!v2 || *v2 < 100 || *v2 > 599)
                c.fail(&e, "expect_status", "must hold HTTP status codes (100..599)");
            cc.expectStatus.push_back(int(*v2));
        }
    } else {
        cc.expectStatus = {200};
    }
    cc.expectBody = c.getString("expect_body", "");
    cc.interval = c.getNumber("interval", 5, 0.05, 86400);
    cc.timeout = c.getNumber("timeout", 2, 0.01, 3600);
    if (cc.timeout > cc.interval)
        c.fail(c.raw("timeout"), "timeout",
               fmt::format("{} s is longer than the interval ({} s)", cc.timeout, cc.interval));
    cc.rise = int(c.getInt("rise", 2, 1, 100));
    cc.fall = int(c.getInt("fall", 3, 1, 100));
    c.finish();
    return cc;
}

// [load]: the composite load of a site, from its [load.metric.NAME]s. Before the sites, whose `loads`
// mappings name the metrics.
void readLoad(TableReader& top, const std::string& path, LoadConf& lc) {
    const toml::table* lt = top.getTable("load");
    if (!lt) return;
    TableReader l(*lt, path, "[load]");
    lc.decay = l.getNumber("decay", 2, 1, 1000);
    lc.history = int(l.getInt("history", 9, 0, 64));
    l.forEachTable("metric", "load.metric", [&](const std::string& name, TableReader& mr) {
        LoadMetricConf lm;
        lm.name = name;
        lm.weight = mr.getNumber("weight", 1, 0, 1e6);
        lm.capacity = mr.getNumber("capacity", 1, 1e-9, 1e18);
        mr.finish();
        lc.metrics.push_back(lm);
    });
    l.finish();
}

// [site.NAME]: preference, region, location, the agent's token and the site's sources.
SiteConf readSite(TableReader& si, const std::string& name, const std::string& path, Config& out) {
    SiteConf sc;
    sc.name = name;
    sc.line = si.line();
    sc.preference = int(si.getInt("preference", 128, 0, 255));
    sc.region = si.getString("region", "");
    if (const toml::node* ln = si.raw("location")) {
        const toml::array* a = ln->as_array();
        if (!a || a->size() != 2 || !(*a)[0].is_number() || !(*a)[1].is_number())
            si.fail(ln, "location", "must be [latitude, longitude] in degrees");
        sc.latitude = (*a)[0].value<double>().value_or(0);
        sc.longitude = (*a)[1].value<double>().value_or(0);
        if (!(sc.latitude >= -90 && sc.latitude <= 90 && sc.longitude >= -180 && sc.longitude <= 180))
            si.fail(ln, "location", "latitude must be in [-90, 90] and longitude in [-180, 180]");
        sc.hasLocation = true;
    }
    if (si.has("agent_token_file")) {
        sc.agentTokenFile = resolvePath(path, si.getString("agent_token_file", ""));
        std::string why;
        if (!loadControlToken(sc.agentTokenFile, sc.agentToken, why))
            si.fail(si.raw("agent_token_file"), "agent_token_file", why);
        out.keySecretFiles.emplace_back(fmt::format("[site.{}] agent_token_file", name), sc.agentTokenFile);
    }
    readSiteSources(si, sc, out);
    si.finish();
    return sc;
}

// [rtt]: the learned round-trip table's size and prefix lengths.
void readRtt(TableReader& top, const std::string& path, RttConf& rc) {
    const toml::table* rt = top.getTable("rtt");
    if (!rt) return;
    TableReader r(*rt, path, "[rtt]");
    rc.prefixesMax = int(r.getInt("prefixes_max", 100000, 16, 1 << 24));
    rc.prefixV4 = int(r.getInt("prefix_v4", 24, 8, 32));
    rc.prefixV6 = int(r.getInt("prefix_v6", 56, 16, 64));
    rc.prefixesMaxPerReport =
        int(r.getInt("prefixes_max_per_report", std::min(10000, rc.prefixesMax), 1, rc.prefixesMax));
    r.finish();
}

// [topology]: the GeoIP database and the nets (a file or a table) that map a client to a region.
void readTopology(TableReader& top, const std::string& path, TopologyConf& tc) {
    const toml::table* tt = top.getTable("topology");
    if (!tt) return;
    TableReader tr(*tt, path, "[topology]");
    tc.line = tr.line();
    std::string g = tr.getString("geoip", "");
    if (!g.empty()) tc.geoip = resolvePath(path, g);
    std::string nf = tr.getString("nets_file", "");
    if (!nf.empty()) tc.netsFile = resolvePath(path, nf);
    if (const toml::table* nt = tr.getTable("nets")) {
        for (const auto& [k, v] : *nt) {
            if (!v.is_string()) tr.fail(&v, "nets", fmt::format("\"{}\" must map to a region name", k.str()));
            tc.nets.emplace_back(std::string(k.str()), *v.value<std::string>());
        }
    }
    tr.finish();
}

// One [[hostname."NAME".service]]: an address at a site, its weight, capacity, check and connections.
ServiceConf readService(TableReader& sr, const HostnameConf& hc, const Config& out) {
    ServiceConf sc;
    sc.line = sr.line();
    sc.address = sr.getString("address", "");
    if (!parseAddress(sc.address, sc.rdata, sc.rdlen))
        sr.fail(sr.raw("address"), "address",
                fmt::format("\"{}\" is not an IPv4 or IPv6 address", sc.address));
    sc.site = sr.getString("site", "");
    if (sc.site.empty()) sr.fail(nullptr, "site", "is required");
    bool known = false;
    for (const auto& si : out.sites) known |= si.name == sc.site;
    if (!known)
        sr.fail(sr.raw("site"), "site", fmt::format("unknown site \"{}\" (no [site.{}])", sc.site, sc.site));
    sc.weight = sr.getNumber("weight", 1, 0, 1e6);
    sc.capacity = sr.getNumber("capacity", 0, 0, 1e12);
    sc.check = sr.getString("check", "");
    if (!sc.check.empty() && !out.checks.count(sc.check))
        sr.fail(sr.raw("check"), "check",
                fmt::format("unknown check \"{}\" (no [check.{}])", sc.check, sc.check));
    sc.checkAddress = sr.getString("check_address", "");
    if (!sc.checkAddress.empty() && !isAddress(sc.checkAddress))
        sr.fail(sr.raw("check_address"), "check_address", "is not an IPv4 or IPv6 address");
    sc.port = int(sr.getInt("port", 0, 0, 65535));
    sc.connections = readMapping(sr, "connections", out.sources);
    for (const auto& other : hc.services)
        if (other.address == sc.address)
            sr.fail(sr.raw("address"), "address", fmt::format("{} is described twice", sc.address));
    sr.finish();
    return sc;
}

// [hostname."NAME"]: its policy (over [defaults]) and its [[hostname."NAME".service]]s.
HostnameConf readHostname(TableReader& h, const std::string& name, const std::string& hp,
                          const std::string& path, const Config& out) {
    HostnameConf hc;
    hc.name = name;
    hc.line = h.line();
    hc.policy = readPolicy(h, out.defaults);
    const toml::node* sn = h.raw("service");
    if (!sn) h.fail(nullptr, "service", "has no [[hostname.\"…\".service]]: nothing to choose from");
    const toml::array* sa = sn->as_array();
    if (!sa) h.fail(sn, "service", "must be an array of tables");
    hc.services.reserve(sa->size());
    int i = 0;
    for (const auto& e : *sa) {
        ++i;
        const toml::table* st2 = e.as_table();
        if (!st2) h.fail(&e, "service", "must be an array of tables");
        TableReader sr(*st2, path, fmt::format("{} service {}", hp, i));
        hc.services.push_back(readService(sr, hc, out));
    }
    h.finish();
    return hc;
}

// [hostname."NAME"], each: the GSLB hostnames.
void readHostnames(TableReader& top, const std::string& path, Config& out) {
    if (const toml::table* hts = top.getTable("hostname")) {
        for (const auto& [k, v] : *hts) {
            std::string name(k.str());
            const toml::table* ht = v.as_table();
            std::string hp = fmt::format("hostname \"{}\"", name);
            if (!ht) top.fail(&v, "hostname", fmt::format("{} must be a table", hp));
            TableReader h(*ht, path, hp);
            out.hostnames.push_back(readHostname(h, name, hp, path, out));
        }
    }
}

}  // namespace

bool loadConfig(const std::string& path, Config& out, std::string& error) {
    // Every key at its default. A named object, not `out = Config{}`: GCC 12 at -O3 (tools/build --server)
    // warned that the temporary's strings may be used uninitialized, a false positive in README's first
    // command.
    Config defaults;
    out = std::move(defaults);
    out.path = path;
    toml::table root;
    if (FILE* f = fopen(path.c_str(), "r")) {
        fclose(f);
    } else {
        error = fmt::format("{}: cannot open: {}", path, strerror(errno));
        return false;
    }
    if (!parseTomlFile(path, root, error)) return false;
    try {
        TableReader top(root, path, "");
        readKeys(top, path, out);
        readServer(top, path, out);
        readRrl(top, path, out.rrl);
        if (const toml::table* ct = top.getTable("control")) readControl(*ct, path, out.control);
        if (const toml::table* ct = top.getTable("cluster"))
            readCluster(*ct, path, out.control, true, out.cluster);
        readZones(top, path, out);
        {
            const toml::table* dt = top.getTable("defaults");
            const toml::table empty;
            TableReader d(dt ? *dt : empty, path, "[defaults]");
            out.defaults = readPolicy(d, PolicyConf{});
            d.finish();
        }
        top.forEachTable("check", "check", [&](const std::string& name, TableReader& c) {
            out.checks.emplace(name, readCheck(c, name, path));
        });
        readLoad(top, path, out.load);
        // [source.NAME]: after [load], before the sites and services that name them.
        top.forEachTable("source", "source", [&](const std::string& name, TableReader& sr) {
            out.sources.emplace(name, readSource(sr, name));
        });
        top.forEachTable("site", "site", [&](const std::string& name, TableReader& si) {
            out.sites.push_back(readSite(si, name, path, out));
        });
        readRtt(top, path, out.rtt);
        readTopology(top, path, out.topology);
        readHostnames(top, path, out);
        top.finish();
    } catch (const ConfigError& e) {
        error = e.what();
        return false;
    }
    out.tomlDigest = canonicalTomlDigest(root);  // last: it erases the per-member keys from root
    return true;
}

std::string zoneFileProblem(const ZoneConf& zc) {
    if (zc.where.empty()) return {};
    const int fd = ::open(zc.file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ::close(fd);
        return {};
    }
    const int err = errno;
    return fmt::format("{}: [[zone]] \"{}\": file {}: {}{}", zc.where, zc.name, zc.file, strerror(err),
                       err == ENOENT ? " (a relative path is read from the config file's directory)" : "");
}

bool sameAddress(const sockaddr_storage& a, const sockaddr_storage& b, bool withPort) {
    if (a.ss_family != b.ss_family) return false;
    if (a.ss_family == AF_INET) {
        const auto& x = reinterpret_cast<const sockaddr_in&>(a);
        const auto& y = reinterpret_cast<const sockaddr_in&>(b);
        return x.sin_addr.s_addr == y.sin_addr.s_addr && (!withPort || x.sin_port == y.sin_port);
    }
    const auto& x = reinterpret_cast<const sockaddr_in6&>(a);
    const auto& y = reinterpret_cast<const sockaddr_in6&>(b);
    return std::memcmp(&x.sin6_addr, &y.sin6_addr, 16) == 0 && (!withPort || x.sin6_port == y.sin6_port);
}

}  // namespace gslb::server
