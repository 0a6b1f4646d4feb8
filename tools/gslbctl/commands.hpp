// gslbctl's commands. Each returns the process exit code: 0 ok, 1 problems found or the operation failed,
// 2 usage (bad arguments found after parsing). Messages go to stdout (results) and stderr (errors).
#pragma once
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace gslb::ctl {

inline constexpr int kOk = 0, kFailed = 1, kUsage = 2;

/// Prints `msg` and a line end to stderr and returns kFailed: `return fail("why");`. One definition for every
/// command file (tools/build --server compiles several of them as one unity unit).
inline int fail(const std::string& msg) {
    std::fprintf(stderr, "%s\n", msg.c_str());
    return kFailed;
}

struct ZoneInitArgs {
    std::string zone, file, email = "hostmaster";
    std::vector<std::string> ns;
    uint32_t ttl = 300;
};
int zoneInit(const ZoneInitArgs& a);
/// `-c CONFIG` for the zone commands: `file` may name a [[zone]] of CONFIG ("gslb.example.com.", the final
/// dot optional), which becomes that zone's file (and `origin`, when not given, its name); a path is kept
/// as it is. Only the [[zone]] names and files of CONFIG are read. Returns kOk, or the exit code after an
/// error message.
int resolveZoneFile(const std::string& config, std::string& file, std::string& origin);
int zoneAdd(const std::string& file, const std::string& origin, const std::string& owner,
            const std::vector<std::string>& words);
int zoneDel(const std::string& file, const std::string& origin, const std::string& owner,
            const std::vector<std::string>& words);
int zoneList(const std::string& file, const std::string& origin, const std::string& owner);
int zoneSerial(const std::string& file, const std::string& origin, std::optional<uint32_t> set, bool force);

struct ServiceArgs {
    std::string config, hostname, address, site, check;
    std::optional<double> weight;
};
int serviceAdd(const ServiceArgs& a);
int serviceDel(const ServiceArgs& a);

int check(const std::string& config);

struct LiveArgs {
    std::string config, server, tokenFile;
    std::string member;  // --member URL: only this one of the [cluster] members
    double timeout = 2;  // s, per member when a command goes to every [cluster] member
    bool json = false;
};
int status(const LiveArgs& a);
int admin(const LiveArgs& a, const std::string& action, const std::string& site, const std::string& address);
int report(const LiveArgs& a, const std::string& site, const std::vector<std::string>& words);
int reload(const LiveArgs& a);

struct DnssecKeygenArgs {
    std::string zone, dir, algorithm = "ecdsap256sha256";
    bool split = false;  // a KSK and a ZSK instead of one combined signing key
};
int dnssecKeygen(const DnssecKeygenArgs& a);
/// `all`: also SEP keys not published yet (the DS a rollover gives the parent before the key is in the zone).
int dnssecDs(const std::string& zone, const std::string& dir, bool all = false);
int dnssecList(const std::string& zone, const std::string& dir);

struct DnssecRolloverArgs {
    std::string zone, dir, kind;
    std::string config, zoneFile;  // where the zone's TTLs come from (one of them; config: GSLB ttl too)
    std::string algorithm;         // empty: the current key's
    std::string start = "now";     // now, now+SECONDS, +SECONDS or YYYYMMDDHHMMSS (UTC)
    std::optional<int64_t> propagation;  // Dprp, s; default SOA refresh + retry
    int64_t parentPropagation = 3600;    // DprpP, s (BIND's parent-propagation-delay default)
    int64_t parentDsTtl = 86400;         // TTLds, s (BIND's parent-ds-ttl default)
};
/// Makes the new key and writes both keys' times from RFC 7583's timelines (zones/dnssec_rollover.hpp),
/// prints the schedule and the parent's DS steps.
int dnssecRollover(const DnssecRolloverArgs& a);

struct ExplainArgs {
    std::string name, type = "A", client, ecs;
};
/// GET /v1/explain: one simulated query, stage by stage; readable text, or the JSON with --json.
int explain(const LiveArgs& a, const ExplainArgs& e);

}  // namespace gslb::ctl
