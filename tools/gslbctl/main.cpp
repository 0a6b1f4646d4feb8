// gslbctl: zone files, config checks and the live control API of gslbd (doc/design.md "Control API and
// gslbctl"). Exit codes: 0 ok, 1 problems found or the operation failed, 2 usage.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <functional>

#include "tools/gslbctl/commands.hpp"

using namespace gslb::ctl;

namespace {

// What the command line fills: each command's arguments, and the command to run once it is parsed. Options
// of sibling commands that mean the same share one member (FILE of the zone edits, SITE of drain and
// enable). It outlives the parse: the callbacks keep references to it.
struct Cli {
    std::function<int()> run;  // set by the chosen command's callback
    // zone
    std::string origin, file, owner;
    std::vector<std::string> words;
    std::string zoneConfig;  // -c CONFIG: FILE may then be a zone's name
    ZoneInitArgs init;
    std::optional<uint32_t> setSerial;
    bool force = false;
    // service
    ServiceArgs sa;
    std::vector<std::string> spos;  // [CONFIG] HOSTNAME ADDRESS
    // check
    std::string checkConfig, checkPositional;
    // the live server
    LiveArgs live;
    std::string site, address;
    std::vector<std::string> kv;  // report's key=value metrics
    ExplainArgs ex;
    // dnssec
    DnssecKeygenArgs kg;
    std::string dzone, ddir;
    bool dsAll = false;
    DnssecRolloverArgs ro;
};

// -c CONFIG given to a zone edit: FILE may be a zone's name; its file comes from the config's [[zone]]
// (nothing else read). Then `f`.
int withZone(Cli& a, const std::function<int()>& f) {
    if (!a.zoneConfig.empty())
        if (int rc = resolveZoneFile(a.zoneConfig, a.file, a.origin); rc != kOk) return rc;
    return f();
}

// zone init, add, del, list and serial.
void addZoneCommands(CLI::App& app, Cli& a) {
    auto* zone = app.add_subcommand("zone",
                                    "edit a zone file: every edit is validated with gslbd's own loader, "
                                    "bumps the SOA serial and replaces the file atomically");
    zone->require_subcommand(1);
    const char* originHelp = "the zone's name (default: the SOA owner, absolute or after a $ORIGIN)";
    const char* ownerHelp =
        "owner name, zone-file syntax: relative to the zone unless it ends in '.', @ = apex";

    auto zoneOpt = [&](CLI::App* c) {
        c->add_option("-c,--config", a.zoneConfig,
                      "gslbd config: FILE may then be a zone's name, whose [[zone]] file is edited");
    };
    const char* fileHelp = "zone file (with -c: or the zone's name)";

    auto* zinit = zone->add_subcommand("init",
                                       "write a new zone file: SOA (serial YYYYMMDD01), NS records and "
                                       "glue addresses; never overwrites a file");
    zinit->add_option("ZONE", a.init.zone, "the zone's name (gslb.example.com.)")->required();
    zinit
        ->add_option(
            "--ns", a.init.ns,
            "name server NAME[=ADDR[,ADDR]] (repeat); NAME is relative to ZONE unless it ends in '.'; "
            "a name inside ZONE needs its address (glue)")
        ->required();
    zinit->add_option("--file", a.init.file, "file to write (default: ZONE.zone)");
    zinit->add_option("--ttl", a.init.ttl, "$TTL of the zone, seconds")->default_val(300);
    zinit->add_option("--email", a.init.email, "SOA mailbox (hostmaster, a name, or user@example.com)")
        ->default_val("hostmaster");
    zinit->callback([&a] { a.run = [&a] { return zoneInit(a.init); }; });

    auto* zadd = zone->add_subcommand("add", "append a record: zone add FILE OWNER [TTL] TYPE RDATA...");
    zadd->add_option("FILE", a.file, fileHelp)->required();
    zadd->add_option("OWNER", a.owner, ownerHelp)->required();
    zadd->add_option("RECORD", a.words, "[TTL] [IN] TYPE RDATA...")->required()->expected(-1);
    zadd->add_option("--origin", a.origin, originHelp);
    zoneOpt(zadd);
    zadd->callback([&a] {
        a.run = [&a] { return withZone(a, [&a] { return zoneAdd(a.file, a.origin, a.owner, a.words); }); };
    });

    auto* zdel = zone->add_subcommand("del", "remove records: zone del FILE OWNER [TYPE [RDATA...]]");
    zdel->add_option("FILE", a.file, fileHelp)->required();
    zdel->add_option("OWNER", a.owner, ownerHelp)->required();
    zdel->add_option("RECORD", a.words, "TYPE [RDATA...]: only records of this type (and data)")
        ->expected(-1);
    zdel->add_option("--origin", a.origin, originHelp);
    zoneOpt(zdel);
    zdel->callback([&a] {
        a.run = [&a] { return withZone(a, [&a] { return zoneDel(a.file, a.origin, a.owner, a.words); }); };
    });

    auto* zlist =
        zone->add_subcommand("list", "print the records of a zone file (file:line then the record)");
    zlist->add_option("FILE", a.file, fileHelp)->required();
    zlist->add_option("OWNER", a.owner, "only this owner name");
    zlist->add_option("--origin", a.origin, originHelp);
    zoneOpt(zlist);
    zlist->callback(
        [&a] { a.run = [&a] { return withZone(a, [&a] { return zoneList(a.file, a.origin, a.owner); }); }; });

    auto* zserial = zone->add_subcommand("serial",
                                         "bump the SOA serial (YYYYMMDDnn; serial+1 when that does not "
                                         "fit) or set it");
    zserial->add_option("FILE", a.file, fileHelp)->required();
    zserial->add_option("--set", a.setSerial, "set this serial instead");
    zserial->add_flag("--force", a.force, "with --set: accept a serial that is not greater (RFC 1982)");
    zserial->add_option("--origin", a.origin, originHelp);
    zoneOpt(zserial);
    zserial->callback([&a] {
        a.run = [&a] {
            return withZone(a, [&a] { return zoneSerial(a.file, a.origin, a.setSerial, a.force); });
        };
    });
}

// The service commands' positional arguments, [CONFIG] HOSTNAME ADDRESS (the config as -c CONFIG or, as
// before, the first of them), into a.sa; then `f`.
int serviceArgs(Cli& a, const std::function<int()>& f) {
    if (a.spos.size() != (a.sa.config.empty() ? 3u : 2u)) {
        fmt::print(stderr, "service: give CONFIG HOSTNAME ADDRESS, or -c CONFIG HOSTNAME ADDRESS\n");
        return kUsage;
    }
    size_t i = 0;
    if (a.sa.config.empty()) a.sa.config = a.spos[i++];
    a.sa.hostname = a.spos[i++];
    a.sa.address = a.spos[i];
    return f();
}

// service add and del.
void addServiceCommands(CLI::App& app, Cli& a) {
    auto* service = app.add_subcommand("service",
                                       "add or remove a GSLB service: its A/AAAA record in the "
                                       "hostname's zone and its table in the config, checked together");
    service->require_subcommand(1);
    auto servicePositional = [&](CLI::App* c, const char* what) {
        c->add_option("-c,--config", a.sa.config, "gslbd config file");
        c->add_option("ARGS", a.spos, what)->required()->expected(2, 3);
    };
    auto* sadd = service->add_subcommand(
        "add", "service add [-c] CONFIG HOSTNAME ADDRESS --site S [--weight N] [--check C]");
    servicePositional(sadd,
                      "[CONFIG] HOSTNAME ADDRESS: the GSLB hostname (absolute) and the service's address");
    sadd->add_option("--site", a.sa.site, "the site ([site.NAME] of the config)")->required();
    sadd->add_option("--weight", a.sa.weight, "weight (weighted choosers)");
    sadd->add_option("--check", a.sa.check, "health check ([check.NAME] of the config)");
    sadd->callback([&a] { a.run = [&a] { return serviceArgs(a, [&a] { return serviceAdd(a.sa); }); }; });
    auto* sdel = service->add_subcommand("del", "service del [-c] CONFIG HOSTNAME ADDRESS");
    servicePositional(sdel,
                      "[CONFIG] HOSTNAME ADDRESS: the GSLB hostname (absolute) and the service's address");
    sdel->callback([&a] { a.run = [&a] { return serviceArgs(a, [&a] { return serviceDel(a.sa); }); }; });
}

// check [-c] CONFIG.
void addCheckCommand(CLI::App& app, Cli& a) {
    auto* chk = app.add_subcommand("check",
                                   "load the config and every zone as gslbd would, plus the GSLB "
                                   "cross-checks and a few named-checkzone warnings; one line per problem");
    chk->add_option("-c,--config", a.checkConfig, "gslbd config file");
    chk->add_option("CONFIG", a.checkPositional, "gslbd config file (the same as -c)");
    chk->callback([&a] {
        a.run = [&a] {
            if (a.checkConfig.empty()) a.checkConfig = a.checkPositional;
            if (a.checkConfig.empty() || (!a.checkPositional.empty() && a.checkPositional != a.checkConfig)) {
                fmt::print(stderr, "check: give the config once: check -c CONFIG (or check CONFIG)\n");
                return kUsage;
            }
            return check(a.checkConfig);
        };
    });
}

// The running server's commands: status, drain, enable, report, explain and reload.
void addLiveCommands(CLI::App& app, Cli& a) {
    auto liveOpts = [&](CLI::App* c) {
        c->add_option(
            "-c,--config", a.live.config,
            "gslbd config: [control] listen and token_file, and [cluster] members, come from it (only those "
            "are read, so a mistake elsewhere in the file does not stop an emergency drain)");
        c->add_option("--server", a.live.server,
                      "control API URL (default: from the config, else http://127.0.0.1:8053)");
        c->add_option("--token-file", a.live.tokenFile,
                      "file holding the bearer token (default: the config's token_file)");
        c->add_option("--member", a.live.member,
                      "with a [cluster] in the config: only this member (http://ADDRESS:PORT), not all");
        c->add_option("--timeout", a.live.timeout, "s to wait for each [cluster] member (default 2)")
            ->check(CLI::Range(0.05, 60.0));
    };
    auto* st = app.add_subcommand("status", "the running server's zones, sites, services and metrics");
    liveOpts(st);
    st->add_flag("--json", a.live.json, "print the raw JSON of GET /v1/status");
    st->callback([&a] { a.run = [&a] { return status(a.live); }; });

    auto* drain = app.add_subcommand(
        "drain", "stop answering with a site (or one of its services): drain SITE [ADDRESS]");
    liveOpts(drain);
    drain->add_option("SITE", a.site, "site name")->required();
    drain->add_option("ADDRESS", a.address, "one service of the site");
    drain->callback([&a] { a.run = [&a] { return admin(a.live, "drain", a.site, a.address); }; });
    auto* enable =
        app.add_subcommand("enable", "answer with a drained site (or service) again: enable SITE [ADDRESS]");
    liveOpts(enable);
    enable->add_option("SITE", a.site, "site name")->required();
    enable->add_option("ADDRESS", a.address, "one service of the site");
    enable->callback([&a] { a.run = [&a] { return admin(a.live, "enable", a.site, a.address); }; });

    auto* rep = app.add_subcommand("report",
                                   "push a site's metrics: report SITE cpu=35 sessions_used=200000 "
                                   "sessions_max=1000000 load.busy=0.3 conn.192.0.2.10=900");
    liveOpts(rep);
    rep->add_option("SITE", a.site, "site name")->required();
    rep->add_option("METRICS", a.kv, "key=value: cpu, sessions_used, sessions_max, load.NAME, conn.ADDRESS")
        ->required()
        ->expected(-1);
    rep->callback([&a] { a.run = [&a] { return report(a.live, a.site, a.kv); }; });

    auto* exp = app.add_subcommand("explain",
                                   "run one simulated query against the live state and show every stage: "
                                   "explain NAME --client ADDR [--ecs PREFIX] [--type AAAA]");
    liveOpts(exp);
    exp->add_option("NAME", a.ex.name, "the name asked (a GSLB hostname, or any name of a zone)")->required();
    exp->add_option("--client", a.ex.client, "the query's source address");
    exp->add_option("--ecs", a.ex.ecs, "an EDNS Client Subnet prefix the resolver sent (198.51.100.0/24)");
    exp->add_option("--type", a.ex.type, "A (default) or AAAA");
    exp->add_flag("--json", a.live.json, "print the JSON of GET /v1/explain");
    exp->callback([&a] { a.run = [&a] { return explain(a.live, a.ex); }; });

    auto* rl = app.add_subcommand("reload", "make the server reload its config and zones (POST /v1/reload)");
    liveOpts(rl);
    rl->callback([&a] { a.run = [&a] { return reload(a.live); }; });
}

// dnssec keygen, ds, list and rollover.
void addDnssecCommands(CLI::App& app, Cli& a) {
    auto* dnssec =
        app.add_subcommand("dnssec", "a zone's DNSSEC keys (BIND's key file format) and its DS records");
    dnssec->require_subcommand(1);
    auto* dkeygen = dnssec->add_subcommand(
        "keygen", "make a combined signing key (CSK), or a KSK and a ZSK: keygen ZONE --dir DIR");
    dkeygen->add_option("ZONE", a.kg.zone, "the zone's name (gslb.example.com.)")->required();
    dkeygen->add_option("--dir", a.kg.dir, "key directory (the zone's key_dir); made when missing")
        ->required();
    dkeygen->add_option("--algorithm", a.kg.algorithm, "ecdsap256sha256 (default) or ed25519");
    dkeygen->add_flag("--ksk-zsk", a.kg.split, "a key-signing key and a zone-signing key instead of one CSK");
    dkeygen->callback([&a] { a.run = [&a] { return dnssecKeygen(a.kg); }; });
    auto* dds =
        dnssec->add_subcommand("ds", "print the DS records (SHA-256) to give the parent: ds ZONE --dir DIR");
    dds->add_option("ZONE", a.dzone, "the zone's name")->required();
    dds->add_option("--dir", a.ddir, "key directory")->required();
    dds->add_flag("--all", a.dsAll,
                  "also the key-signing keys not published yet (a rollover's new key: its DS goes to the "
                  "parent first); never a deleted one");
    dds->callback([&a] { a.run = [&a] { return dnssecDs(a.dzone, a.ddir, a.dsAll); }; });
    auto* dlist = dnssec->add_subcommand("list", "show the keys of a key directory: list [ZONE] --dir DIR");
    dlist->add_option("ZONE", a.dzone, "only this zone's keys");
    dlist->add_option("--dir", a.ddir, "key directory")->required();
    dlist->callback([&a] { a.run = [&a] { return dnssecList(a.dzone, a.ddir); }; });
    auto* droll = dnssec->add_subcommand(
        "rollover",
        "roll a key (RFC 7583): make the new key and write both keys' Publish/Activate/Inactive/Delete, "
        "print "
        "the schedule and the parent's DS steps: rollover ZONE -c CONFIG --kind zsk|ksk|csk");
    droll->add_option("ZONE", a.ro.zone, "the zone's name")->required();
    droll->add_option("--kind", a.ro.kind, "zsk (pre-publication), ksk (double-DS) or csk (both)")
        ->required();
    droll->add_option("-c,--config", a.ro.config,
                      "gslbd config: the zone's file, key_dir (the default --dir) and GSLB ttl come from it");
    droll->add_option("--zone-file", a.ro.zoneFile, "the zone file, instead of -c (no GSLB ttl then)");
    droll->add_option("--dir", a.ro.dir, "key directory (default: the zone's key_dir with -c)");
    droll
        ->add_option("--propagation", a.ro.propagation,
                     "Dprp, s: until every secondary has a change (default: SOA refresh + retry)")
        ->check(CLI::Range(int64_t(0), int64_t(366) * 86400));
    droll
        ->add_option("--parent-propagation", a.ro.parentPropagation,
                     "DprpP, s: until the parent serves a DS it was given (ksk, csk; default 3600)")
        ->check(CLI::Range(int64_t(0), int64_t(366) * 86400));
    droll
        ->add_option("--parent-ds-ttl", a.ro.parentDsTtl,
                     "TTLds, s: the parent's DS TTL (ksk, csk; default 86400)")
        ->check(CLI::Range(int64_t(0), int64_t(366) * 86400));
    droll->add_option("--algorithm", a.ro.algorithm, "the new key's algorithm (default: the current key's)");
    droll->add_option(
        "--start", a.ro.start,
        "when the rollover starts: now (default), now+SECONDS, +SECONDS or YYYYMMDDHHMMSS (UTC)");
    droll->callback([&a] { a.run = [&a] { return dnssecRollover(a.ro); }; });
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{
        "gslbctl: edit gslbd's zone files and config, check them, and talk to a running gslbd.\n"
        "Exit codes: 0 ok, 1 problems found or the operation failed, 2 usage."};
    app.require_subcommand(1);
    app.set_version_flag("--version", "gslbctl 0.1.0");
    app.footer(
        "Every command, with examples: gslbctl(8). The configuration: gslbd.toml(5). The manual: doc/ in the "
        "source tree, /usr/share/doc/gslbd/manual/ when installed.");
    Cli a;
    addZoneCommands(app, a);
    addServiceCommands(app, a);
    addCheckCommand(app, a);
    addLiveCommands(app, a);
    addDnssecCommands(app, a);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        int rc = app.exit(e);
        return rc == 0 ? kOk : kUsage;
    }
    return a.run ? a.run() : kUsage;
}
