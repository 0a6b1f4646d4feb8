// gslbctl: zone files, config checks and the live control API of gslbd (doc/design.md "Control API and
// gslbctl"). Exit codes: 0 ok, 1 problems found or the operation failed, 2 usage.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <functional>

#include "tools/gslbctl/commands.hpp"

using namespace gslb::ctl;

int main(int argc, char** argv) {
    CLI::App app{
        "gslbctl: edit gslbd's zone files and config, check them, and talk to a running gslbd.\n"
        "Exit codes: 0 ok, 1 problems found or the operation failed, 2 usage."};
    app.require_subcommand(1);
    app.set_version_flag("--version", "gslbctl 0.1.0");
    app.footer(
        "Every command, with examples: gslbctl(8). The configuration: gslbd.toml(5). The manual: doc/ in the "
        "source tree, /usr/share/doc/gslbd/manual/ when installed.");
    std::function<int()> run;

    // ---- zone
    auto* zone = app.add_subcommand("zone",
                                    "edit a zone file: every edit is validated with gslbd's own loader, "
                                    "bumps the SOA serial and replaces the file atomically");
    zone->require_subcommand(1);
    std::string origin, file, owner;
    std::vector<std::string> words;
    const char* originHelp = "the zone's name (default: the SOA owner, absolute or after a $ORIGIN)";
    const char* ownerHelp =
        "owner name, zone-file syntax: relative to the zone unless it ends in '.', @ = apex";

    // -c CONFIG: FILE may be a zone's name; its file comes from the config's [[zone]] (nothing else read).
    std::string zoneConfig;
    auto zoneOpt = [&](CLI::App* c) {
        c->add_option("-c,--config", zoneConfig,
                      "gslbd config: FILE may then be a zone's name, whose [[zone]] file is edited");
    };
    auto withZone = [&](const std::function<int()>& f) {
        if (!zoneConfig.empty())
            if (int rc = resolveZoneFile(zoneConfig, file, origin); rc != kOk) return rc;
        return f();
    };
    const char* fileHelp = "zone file (with -c: or the zone's name)";

    ZoneInitArgs init;
    auto* zinit = zone->add_subcommand("init",
                                       "write a new zone file: SOA (serial YYYYMMDD01), NS records and "
                                       "glue addresses; never overwrites a file");
    zinit->add_option("ZONE", init.zone, "the zone's name (gslb.example.com.)")->required();
    zinit
        ->add_option(
            "--ns", init.ns,
            "name server NAME[=ADDR[,ADDR]] (repeat); NAME is relative to ZONE unless it ends in '.'; "
            "a name inside ZONE needs its address (glue)")
        ->required();
    zinit->add_option("--file", init.file, "file to write (default: ZONE.zone)");
    zinit->add_option("--ttl", init.ttl, "$TTL of the zone, seconds")->default_val(300);
    zinit->add_option("--email", init.email, "SOA mailbox (hostmaster, a name, or user@example.com)")
        ->default_val("hostmaster");
    zinit->callback([&] { run = [&] { return zoneInit(init); }; });

    auto* zadd = zone->add_subcommand("add", "append a record: zone add FILE OWNER [TTL] TYPE RDATA...");
    zadd->add_option("FILE", file, fileHelp)->required();
    zadd->add_option("OWNER", owner, ownerHelp)->required();
    zadd->add_option("RECORD", words, "[TTL] [IN] TYPE RDATA...")->required()->expected(-1);
    zadd->add_option("--origin", origin, originHelp);
    zoneOpt(zadd);
    zadd->callback(
        [&] { run = [&] { return withZone([&] { return zoneAdd(file, origin, owner, words); }); }; });

    auto* zdel = zone->add_subcommand("del", "remove records: zone del FILE OWNER [TYPE [RDATA...]]");
    zdel->add_option("FILE", file, fileHelp)->required();
    zdel->add_option("OWNER", owner, ownerHelp)->required();
    zdel->add_option("RECORD", words, "TYPE [RDATA...]: only records of this type (and data)")->expected(-1);
    zdel->add_option("--origin", origin, originHelp);
    zoneOpt(zdel);
    zdel->callback(
        [&] { run = [&] { return withZone([&] { return zoneDel(file, origin, owner, words); }); }; });

    auto* zlist =
        zone->add_subcommand("list", "print the records of a zone file (file:line then the record)");
    zlist->add_option("FILE", file, fileHelp)->required();
    zlist->add_option("OWNER", owner, "only this owner name");
    zlist->add_option("--origin", origin, originHelp);
    zoneOpt(zlist);
    zlist->callback([&] { run = [&] { return withZone([&] { return zoneList(file, origin, owner); }); }; });

    auto* zserial = zone->add_subcommand("serial",
                                         "bump the SOA serial (YYYYMMDDnn; serial+1 when that does not "
                                         "fit) or set it");
    std::optional<uint32_t> setSerial;
    bool force = false;
    zserial->add_option("FILE", file, fileHelp)->required();
    zserial->add_option("--set", setSerial, "set this serial instead");
    zserial->add_flag("--force", force, "with --set: accept a serial that is not greater (RFC 1982)");
    zserial->add_option("--origin", origin, originHelp);
    zoneOpt(zserial);
    zserial->callback(
        [&] { run = [&] { return withZone([&] { return zoneSerial(file, origin, setSerial, force); }); }; });

    // ---- service
    auto* service = app.add_subcommand("service",
                                       "add or remove a GSLB service: its A/AAAA record in the "
                                       "hostname's zone and its table in the config, checked together");
    service->require_subcommand(1);
    ServiceArgs sa;
    // The config as -c CONFIG or, as before, the first of the positional arguments.
    std::vector<std::string> spos;
    auto servicePositional = [&](CLI::App* c, const char* what) {
        c->add_option("-c,--config", sa.config, "gslbd config file");
        c->add_option("ARGS", spos, what)->required()->expected(2, 3);
    };
    auto serviceArgs = [&](const std::function<int()>& f) {
        if (spos.size() != (sa.config.empty() ? 3u : 2u)) {
            fmt::print(stderr, "service: give CONFIG HOSTNAME ADDRESS, or -c CONFIG HOSTNAME ADDRESS\n");
            return kUsage;
        }
        size_t i = 0;
        if (sa.config.empty()) sa.config = spos[i++];
        sa.hostname = spos[i++];
        sa.address = spos[i];
        return f();
    };
    auto* sadd = service->add_subcommand(
        "add", "service add [-c] CONFIG HOSTNAME ADDRESS --site S [--weight N] [--check C]");
    servicePositional(sadd,
                      "[CONFIG] HOSTNAME ADDRESS: the GSLB hostname (absolute) and the service's address");
    sadd->add_option("--site", sa.site, "the site ([site.NAME] of the config)")->required();
    sadd->add_option("--weight", sa.weight, "weight (weighted choosers)");
    sadd->add_option("--check", sa.check, "health check ([check.NAME] of the config)");
    sadd->callback([&] { run = [&] { return serviceArgs([&] { return serviceAdd(sa); }); }; });
    auto* sdel = service->add_subcommand("del", "service del [-c] CONFIG HOSTNAME ADDRESS");
    servicePositional(sdel,
                      "[CONFIG] HOSTNAME ADDRESS: the GSLB hostname (absolute) and the service's address");
    sdel->callback([&] { run = [&] { return serviceArgs([&] { return serviceDel(sa); }); }; });

    // ---- check
    std::string checkConfig;
    auto* chk = app.add_subcommand("check",
                                   "load the config and every zone as gslbd would, plus the GSLB "
                                   "cross-checks and a few named-checkzone warnings; one line per problem");
    chk->add_option("-c,--config", checkConfig, "gslbd config file");
    std::string checkPositional;
    chk->add_option("CONFIG", checkPositional, "gslbd config file (the same as -c)");
    chk->callback([&] {
        run = [&] {
            if (checkConfig.empty()) checkConfig = checkPositional;
            if (checkConfig.empty() || (!checkPositional.empty() && checkPositional != checkConfig)) {
                fmt::print(stderr, "check: give the config once: check -c CONFIG (or check CONFIG)\n");
                return kUsage;
            }
            return check(checkConfig);
        };
    });

    // ---- live server
    LiveArgs live;
    auto liveOpts = [&](CLI::App* c) {
        c->add_option(
            "-c,--config", live.config,
            "gslbd config: [control] listen and token_file, and [cluster] members, come from it (only those "
            "are read, so a mistake elsewhere in the file does not stop an emergency drain)");
        c->add_option("--server", live.server,
                      "control API URL (default: from the config, else http://127.0.0.1:8053)");
        c->add_option("--token-file", live.tokenFile,
                      "file holding the bearer token (default: the config's token_file)");
        c->add_option("--member", live.member,
                      "with a [cluster] in the config: only this member (http://ADDRESS:PORT), not all");
        c->add_option("--timeout", live.timeout, "s to wait for each [cluster] member (default 2)")
            ->check(CLI::Range(0.05, 60.0));
    };
    auto* st = app.add_subcommand("status", "the running server's zones, sites, services and metrics");
    liveOpts(st);
    st->add_flag("--json", live.json, "print the raw JSON of GET /v1/status");
    st->callback([&] { run = [&] { return status(live); }; });

    std::string site, address;
    auto* drain = app.add_subcommand(
        "drain", "stop answering with a site (or one of its services): drain SITE [ADDRESS]");
    liveOpts(drain);
    drain->add_option("SITE", site, "site name")->required();
    drain->add_option("ADDRESS", address, "one service of the site");
    drain->callback([&] { run = [&] { return admin(live, "drain", site, address); }; });
    auto* enable =
        app.add_subcommand("enable", "answer with a drained site (or service) again: enable SITE [ADDRESS]");
    liveOpts(enable);
    enable->add_option("SITE", site, "site name")->required();
    enable->add_option("ADDRESS", address, "one service of the site");
    enable->callback([&] { run = [&] { return admin(live, "enable", site, address); }; });

    std::vector<std::string> kv;
    auto* rep = app.add_subcommand("report",
                                   "push a site's metrics: report SITE cpu=35 sessions_used=200000 "
                                   "sessions_max=1000000 load.busy=0.3 conn.192.0.2.10=900");
    liveOpts(rep);
    rep->add_option("SITE", site, "site name")->required();
    rep->add_option("METRICS", kv, "key=value: cpu, sessions_used, sessions_max, load.NAME, conn.ADDRESS")
        ->required()
        ->expected(-1);
    rep->callback([&] { run = [&] { return report(live, site, kv); }; });

    ExplainArgs ex;
    auto* exp = app.add_subcommand("explain",
                                   "run one simulated query against the live state and show every stage: "
                                   "explain NAME --client ADDR [--ecs PREFIX] [--type AAAA]");
    liveOpts(exp);
    exp->add_option("NAME", ex.name, "the name asked (a GSLB hostname, or any name of a zone)")->required();
    exp->add_option("--client", ex.client, "the query's source address");
    exp->add_option("--ecs", ex.ecs, "an EDNS Client Subnet prefix the resolver sent (198.51.100.0/24)");
    exp->add_option("--type", ex.type, "A (default) or AAAA");
    exp->add_flag("--json", live.json, "print the JSON of GET /v1/explain");
    exp->callback([&] { run = [&] { return explain(live, ex); }; });

    auto* rl = app.add_subcommand("reload", "make the server reload its config and zones (POST /v1/reload)");
    liveOpts(rl);
    rl->callback([&] { run = [&] { return reload(live); }; });

    // ---- dnssec
    auto* dnssec =
        app.add_subcommand("dnssec", "a zone's DNSSEC keys (BIND's key file format) and its DS records");
    dnssec->require_subcommand(1);
    DnssecKeygenArgs kg;
    auto* dkeygen = dnssec->add_subcommand(
        "keygen", "make a combined signing key (CSK), or a KSK and a ZSK: keygen ZONE --dir DIR");
    dkeygen->add_option("ZONE", kg.zone, "the zone's name (gslb.example.com.)")->required();
    dkeygen->add_option("--dir", kg.dir, "key directory (the zone's key_dir); made when missing")->required();
    dkeygen->add_option("--algorithm", kg.algorithm, "ecdsap256sha256 (default) or ed25519");
    dkeygen->add_flag("--ksk-zsk", kg.split, "a key-signing key and a zone-signing key instead of one CSK");
    dkeygen->callback([&] { run = [&] { return dnssecKeygen(kg); }; });
    std::string dzone, ddir;
    bool dsAll = false;
    auto* dds =
        dnssec->add_subcommand("ds", "print the DS records (SHA-256) to give the parent: ds ZONE --dir DIR");
    dds->add_option("ZONE", dzone, "the zone's name")->required();
    dds->add_option("--dir", ddir, "key directory")->required();
    dds->add_flag("--all", dsAll,
                  "also the key-signing keys not published yet (a rollover's new key: its DS goes to the "
                  "parent first); never a deleted one");
    dds->callback([&] { run = [&] { return dnssecDs(dzone, ddir, dsAll); }; });
    auto* dlist = dnssec->add_subcommand("list", "show the keys of a key directory: list [ZONE] --dir DIR");
    dlist->add_option("ZONE", dzone, "only this zone's keys");
    dlist->add_option("--dir", ddir, "key directory")->required();
    dlist->callback([&] { run = [&] { return dnssecList(dzone, ddir); }; });
    DnssecRolloverArgs ro;
    auto* droll = dnssec->add_subcommand(
        "rollover",
        "roll a key (RFC 7583): make the new key and write both keys' Publish/Activate/Inactive/Delete, "
        "print "
        "the schedule and the parent's DS steps: rollover ZONE -c CONFIG --kind zsk|ksk|csk");
    droll->add_option("ZONE", ro.zone, "the zone's name")->required();
    droll->add_option("--kind", ro.kind, "zsk (pre-publication), ksk (double-DS) or csk (both)")->required();
    droll->add_option("-c,--config", ro.config,
                      "gslbd config: the zone's file, key_dir (the default --dir) and GSLB ttl come from it");
    droll->add_option("--zone-file", ro.zoneFile, "the zone file, instead of -c (no GSLB ttl then)");
    droll->add_option("--dir", ro.dir, "key directory (default: the zone's key_dir with -c)");
    droll
        ->add_option("--propagation", ro.propagation,
                     "Dprp, s: until every secondary has a change (default: SOA refresh + retry)")
        ->check(CLI::Range(int64_t(0), int64_t(366) * 86400));
    droll
        ->add_option("--parent-propagation", ro.parentPropagation,
                     "DprpP, s: until the parent serves a DS it was given (ksk, csk; default 3600)")
        ->check(CLI::Range(int64_t(0), int64_t(366) * 86400));
    droll
        ->add_option("--parent-ds-ttl", ro.parentDsTtl,
                     "TTLds, s: the parent's DS TTL (ksk, csk; default 86400)")
        ->check(CLI::Range(int64_t(0), int64_t(366) * 86400));
    droll->add_option("--algorithm", ro.algorithm, "the new key's algorithm (default: the current key's)");
    droll->add_option(
        "--start", ro.start,
        "when the rollover starts: now (default), now+SECONDS, +SECONDS or YYYYMMDDHHMMSS (UTC)");
    droll->callback([&] { run = [&] { return dnssecRollover(ro); }; });

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        int rc = app.exit(e);
        return rc == 0 ? kOk : kUsage;
    }
    return run ? run() : kUsage;
}
