// gslbd: the authoritative GSLB DNS server. A thin main (doc/design.md "Principles" 9): parse the command
// line, build the first snapshot, open the listeners, run the control loop (signals, reloads) until SIGTERM.
#include <CLI/CLI.hpp>
#include <event2/event.h>
#include <event2/thread.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <strings.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <ctime>
#include <memory>
#include <random>
#include <vector>

#include "server/base/clock.hpp"
#include "server/control/api.hpp"
#include "server/daemon/check.hpp"
#include "server/base/events.hpp"
#include "server/cluster/etcd_sync.hpp"
#include "server/state/fallback_watch.hpp"
#include "server/probes/health.hpp"
#include "server/probes/sources.hpp"
#include "server/base/log.hpp"
#include "server/conf/restart_only.hpp"
#include "server/state/admin_state.hpp"
#include "server/daemon/instance_guard.hpp"
#include "server/daemon/privileges.hpp"
#include "server/daemon/readable.hpp"
#include "server/daemon/systemd.hpp"
#include "server/state/zone_serials.hpp"
#include "server/state/snapshot.hpp"
#include "server/net/notify.hpp"
#include "server/conf/unread_settings.hpp"
#include "server/net/worker.hpp"
#include "server/net/xdp/path.hpp"

using namespace gslb;
using namespace gslb::server;

namespace {

// s: the longest a start waits for etcd's shared state before the first DNS answer.
constexpr double kEtcdInitialWaitSec = 2.0;

struct Daemon {
    std::string configPath;
    Shared shared;
    std::vector<std::unique_ptr<Worker>> workers;
    std::unique_ptr<xdp::Path> xdpPath;  // after the workers: destroyed once they have stopped
    event_base* base = nullptr;

    std::unique_ptr<ControlApi> api;
    std::unique_ptr<HealthMonitor> health;   // its events live on `base`: destroyed before the base
    std::unique_ptr<SourceMonitor> sources;  // metric scrapes (doc/design.md "Metric sources"), on `base` too
    std::string stateDir;                    // [server] state_dir at start; empty: drains are not kept
    cluster::AdminLog adminLog;              // who took each drain and enable (mirrored in state_dir)
    FallbackWatch fallbacks;                 // hostnames entering and leaving the all-down fallback
    std::unique_ptr<cluster::EtcdSync> etcd;  // [cluster] etcd: the shared state (needs the API: after it)
    std::unique_ptr<xfr::Notifier> notifier;

    static const zones::Zone* findZone(const Snapshot& s, const std::string& name) {
        for (const auto& z : s.db.zones())
            if (strcasecmp(z->name().c_str(), name.c_str()) == 0) return z.get();
        return nullptr;
    }

    // RFC 1996 §3.5: tell the secondaries when a zone's serial changed (at start: every zone, since a
    // secondary may have missed the change while we were down).
    void notifyChanged(const Snapshot* old, const Snapshot& now) {
        if (!notifier) return;
        for (const auto& zc : now.config.zones) {
            if (zc.notify.empty()) continue;
            const zones::Zone* z = findZone(now, zc.name);
            if (!z) continue;
            const zones::Zone* before = old ? findZone(*old, zc.name) : nullptr;
            if (before && before->serial() == z->serial()) continue;
            notifier->send(z->name(), z->apex(), z->serial(), zc.notify, now.config.keys);
        }
    }

    // Before a snapshot whose serials gslbd chose is published: a restart must never serve a serial that is
    // not greater than one a secondary may already hold. A failed write is logged; the snapshot still serves
    // (for "unixtime" the clock keeps the next start ahead anyway).
    bool saveZoneSerials(const Snapshot& s) {
        if (stateDir.empty() || s.servedSerials.empty()) return true;
        std::string error;
        if (service::saveZoneSerials(stateDir, s.servedSerials, error)) return true;
        log::error("zone serials not saved (a restart may serve an old serial): {}", error);
        return false;
    }

    // This member's entry in etcd (cluster/etcd_wire.hpp PREFIX member/SELF): what `gslbctl status` compares
    // across the members without asking each.
    cluster::SharedMember memberEntry() {
        auto s = shared.holder.get();
        cluster::SharedMember m;
        m.configDigest = s->configDigest;
        for (const auto& z : s->db.zones()) m.serials[z->name()] = z->serial();
        const metrics::StateTable& t = *s->gslb.table;
        for (uint32_t i = 0; i < t.siteCount(); ++i)
            if (!t.siteEnabled(i)) m.drained.push_back("site " + t.siteName(i));
        for (uint32_t i = 0; i < t.serviceCount(); ++i) {
            const auto& k = t.serviceKey(i);
            if (!t.serviceEnabled(i)) m.drained.push_back(fmt::format("service {} {}", k.site, k.address));
            const metrics::Health h = t.health(i);
            m.health[k.site + "/" + k.address] = h == metrics::Health::Up     ? "up"
                                                 : h == metrics::Health::Down ? "down"
                                                                              : "unknown";
        }
        return m;
    }

    // The etcd lease's TTL (s): how long a dead member's verdicts and probe ownership outlive it. Twice the
    // longest check interval + timeout (one missed check is no death), at least 2 s (etcd's own minimum is
    // about 1.5 s), at most 60 s.
    static int64_t leaseTtl(const Snapshot& s) {
        double longest = 0;
        for (const auto& [name, cc] : s.config.checks) longest = std::max(longest, cc.interval + cc.timeout);
        return std::clamp<int64_t>(int64_t(std::ceil(2 * longest)), 2, 60);
    }

    // The IXFR journals the snapshot changed: a journal that is not written is dropped at the next start
    // (it would not end at the zone then loaded), which costs secondaries a full transfer, nothing more.
    void saveJournals(const Snapshot& s) {
        if (stateDir.empty()) return;
        std::string error;
        if (!service::saveJournals(stateDir, s.journalWrites, error))
            log::warn("IXFR journal not saved (a restart answers IXFR AXFR-style): {}", error);
    }

    // After every admin change and reload: the drains on disk are the drains in the table.
    void saveAdminState() {
        if (etcd) etcd->memberChanged();
        if (stateDir.empty()) return;
        std::string error;
        if (!service::saveAdminState(*shared.holder.get()->gslb.table, stateDir, error, &adminLog))
            log::error("admin state not saved (drains will not survive a restart): {}", error);
    }

    // SIGHUP or POST /v1/reload: build a whole new snapshot; publish it only if everything loaded
    // (doc/design.md "Principles" 3). `message` gets the outcome either way.
    bool reload(std::string& message) {
        service::notifyReloading();
        bool ok = reloadSnapshot(message);
        service::notifyReady(ok ? message
                                : "serving the previous configuration; the last reload failed: " + message);
        return ok;
    }

    bool reloadSnapshot(std::string& message) {
        std::string error;
        auto old = shared.holder.get();
        auto s = buildSnapshot(configPath, old.get(), error);
        if (!s) {
            log::error("reload failed, still serving the previous configuration: {}", error);
            recordEvent(log::Level::Error, "reload", configPath,
                        "failed, still serving the previous configuration: " + error);
            message = error;
            return false;
        }
        for (const auto& w : unreadSettings(s->config)) log::warn("{}: {}", w.where, w.message);
        std::vector<std::string> atRestart =
            old ? restartOnlyChanges(old->config, s->config) : std::vector<std::string>{};
        for (const auto& c : atRestart)
            log::warn("reload: {} changed; it takes effect at the next restart", c);
        if (api && s->config.control.enabled) {
            std::string terr;
            if (!api->readToken(s->config.control.tokenFile, terr))
                log::warn("reload: {} (the old token stays)", terr);
        }
        logBuildNotes(*s);
        saveZoneSerials(*s);
        saveJournals(*s);
        for (const auto& [zone, line] : keyEventLines(old.get(), *s)) {
            log::info("{}", line);
            recordEvent(log::Level::Info, "dnssec", zone, line);
        }
        std::string records = recordCountText(s->db);
        size_t zones = s->db.zones().size();
        shared.holder.publish(std::move(s));
        for (auto& w : workers) w->nudge();               // idle UDP threads let go of the old snapshot now
        if (health) health->apply(*shared.holder.get());  // new checks start, unchanged ones keep their state
        if (health) health->refreshQuorum();
        // Drains of services that left the config are gone from the table: forget them (a service added
        // back later starts enabled, and so must its change).
        const metrics::StateTable& table = *shared.holder.get()->gslb.table;
        adminLog.retain([&table](const cluster::AdminKey& k) {
            return k.address.empty() ? table.findSite(k.site).has_value()
                                     : table.findService(k.site, k.address).has_value();
        });
        saveAdminState();
        if (etcd) etcd->apply(*shared.holder.get(), leaseTtl(*shared.holder.get()));
        notifyChanged(old.get(), *shared.holder.get());
        if (sources) sources->apply(*shared.holder.get());
        message = fmt::format("reloaded {}: {} zone(s), {}", configPath, zones, records);
        log::info("{}", message);
        recordEvent(log::Level::Info, "reload", configPath,
                    fmt::format("ok: {} zone(s), {}", zones, records));
        // Whoever asked for the reload (gslbctl reload, POST /v1/reload) sees the keys left for the restart
        // too: a tls_listen added and reloaded printed a bare "ok" while nothing listened on it.
        for (const auto& c : atRestart)
            message += fmt::format("; {} changed: it takes effect at the next restart", c);
        return true;
    }

    // What a build found worth telling (zone warnings with file:line, serials not the file's): at start and
    // at every reload and re-sign, as BIND logs its zone warnings at each load.
    static void logBuildNotes(const Snapshot& s) {
        for (const auto& w : s.warnings) log::warn("{}: {}", w.where, w.message);
        for (const auto& n : s.serialNotes) log::info("{}", n);
    }
};

// SIGUSR1: one log line with what an operator checks first (a logrotate postrotate script may send it; it
// never stops the server). Logging goes to stderr or syslog, so there is no file to reopen.
void logStatus(Daemon& d) {
    auto snap = d.shared.holder.get();
    uint64_t udp = 0, tcp = 0, dropped = 0;
    for (size_t i = 0; i < d.shared.statRows; ++i) {
        const WorkerStats& st = d.shared.stats[i];
        udp += st.udp.load(std::memory_order_relaxed);
        tcp += st.tcp.load(std::memory_order_relaxed);
        dropped += st.dropped.load(std::memory_order_relaxed);
    }
    // [server] xdp: each interface as /v1/status has it (serving, or fell back and why).
    std::string xdpText;
    if (d.xdpPath)
        for (const auto& x : d.xdpPath->status()) {
            if (x.serving)
                xdpText +=
                    fmt::format("; xdp {} serving, {} socket(s), {} mode, queries {} responses {}", x.name,
                                x.sockets, x.zeroCopy ? "zero-copy" : "copy", x.queries, x.responses);
            else if (x.fellBack)
                xdpText += fmt::format("; xdp {} fell back to the sockets: {}", x.name, x.reason);
            else
                xdpText += fmt::format("; xdp {} not serving: {}", x.name, x.reason);
            if (!x.warning.empty()) xdpText += fmt::format(" (warning: {})", x.warning);
        }
    log::info(
        "status: {} zone(s), {}; queries udp {} tcp {} dropped {}; tcp connections {}, "
        "transfers {}{}",
        snap->db.zones().size(), recordCountText(snap->db), udp, tcp, dropped, d.shared.tcpConnections.load(),
        d.shared.axfrActive.load(), xdpText);
}

// Every signal whose default action ends the process, but TERM and INT (stop) and HUP (reload, handled
// once the loop runs), is ignored from the start: a stray `kill -USR2`, an alarm or a real-time signal sent
// by a script must not take DNS down. SIGQUIT and the fault signals keep their core-dumping default.
void ignoreStraySignals() {
    for (int s : {SIGHUP, SIGPIPE, SIGUSR1, SIGUSR2, SIGALRM, SIGIO, SIGPROF, SIGVTALRM, SIGPWR, SIGSTKFLT})
        signal(s, SIG_IGN);
    for (int s = SIGRTMIN; s <= SIGRTMAX; ++s) signal(s, SIG_IGN);
}

// Signatures of signed zones expire (doc/dnssec.md): halfway through their validity the control thread
// rebuilds the snapshot, exactly as a reload does (files re-read, everything re-signed, an atomic swap), so
// no operator has to. The same at each key event (a key published, activated, retired or deleted: a
// rollover's steps, doc/dnssec.md "Key state and rollover") and when a signed zone's key files change
// (gslbctl dnssec rollover, dnssec-settime: BIND's dnssec-loadkeys-interval, checked every second here). A
// failed rebuild keeps the old snapshot and is tried again a minute later, or at once when the key files
// change again (a key half-copied into the directory is complete a moment later).
void onResignTick(evutil_socket_t, short, void* arg) {
    auto* d = static_cast<Daemon*>(arg);
    static int64_t retryAt = 0;
    static uint64_t failedStamp = 0;  // the key files a failed rebuild read
    auto snap = d->shared.holder.get();
    int64_t now = int64_t(time(nullptr));
    const bool resign = snap->resignAt && now >= snap->resignAt;
    const bool keyEvent = snap->keyEventAt && now >= snap->keyEventAt;
    uint64_t stamp = 0;
    std::vector<std::string> changed = changedKeyFiles(*snap, stamp);
    const bool newChange = !changed.empty() && stamp != failedStamp;
    if (!resign && !keyEvent && changed.empty()) return;
    if (now < retryAt && !newChange) return;
    if (resign) log::info("re-signing: the signatures of this snapshot are halfway to their expiry");
    if (keyEvent) log::info("re-signing: a key event is due (its state changes now)");
    for (const auto& c : changed) log::info("re-signing: {}", c);
    std::string message;
    bool ok = d->reload(message);
    retryAt = ok ? 0 : now + 60;
    failedStamp = ok ? 0 : stamp;
}

void onSweep(evutil_socket_t, short, void* arg) {
    auto* d = static_cast<Daemon*>(arg);
    auto snap = d->shared.holder.get();
    if (snap) logFallbackTransitions(d->fallbacks, snap->gslb);
    if (!snap || !d->shared.rrl) return;
    size_t n = d->shared.rrl->sweep(snap->config.rrl, uint64_t(monotonicNs()),
                                    [](const std::string& m) { log::info("{}", m); });
    d->shared.rrlLimited.store(n, std::memory_order_relaxed);
}

// Once a second with [server] xdp: is each interface the fast path took still there, up, and gslbd's program
// still on it (Path::recheck)? /v1/status said "serving" long after the interface was gone.
void onXdpCheck(evutil_socket_t, short, void* arg) {
    auto* d = static_cast<Daemon*>(arg);
    d->xdpPath->recheck();
    d->shared.xdpSockets.store(d->xdpPath->servingSockets());
}

void onSignal(evutil_socket_t sig, short, void* arg) {
    auto* d = static_cast<Daemon*>(arg);
    if (sig == SIGHUP) {
        std::string message;
        bool ok = d->reload(message);
        d->shared.reloads[kReloadSighup][ok ? 0 : 1].fetch_add(1, std::memory_order_relaxed);
    } else if (sig == SIGUSR1) {
        logStatus(*d);
    } else {
        log::info("signal {}: stopping", int(sig));
        service::notifyStopping();
        event_base_loopbreak(d->base);
    }
}

// The steps of a start, in main's order. Each logs what stopped it and returns false (exit 1).

// --check: the same checker and summary as `gslbctl check`, including what a start checks on top. Like
// named-checkconf: problems on stderr (file:line first), a clean verdict on stdout.
int checkOnly(const std::string& config) {
    char* buf = nullptr;
    size_t len = 0;
    FILE* mem = open_memstream(&buf, &len);
    int rc = mem ? checkConfig(config, mem) : 1;
    if (mem) fclose(mem);
    if (buf) fwrite(buf, 1, len, rc == 0 ? stdout : stderr);
    free(buf);
    return rc == 0 ? 0 : 1;
}

// The first snapshot, with what its build found worth telling; null when the config or a zone is refused.
std::shared_ptr<Snapshot> firstSnapshot(const std::string& config) {
    std::string error;
    auto snap = buildSnapshot(config, nullptr, error);
    if (!snap) {
        log::error("{}", error);
        return nullptr;
    }
    // Settings no policy reads are valid but would be ignored: say so at load (doc/design.md "Metric
    // sources").
    for (const auto& w : unreadSettings(snap->config)) log::warn("{}: {}", w.where, w.message);
    Daemon::logBuildNotes(*snap);
    return snap;
}

// [server] user looked up, and [server] state_dir made ready for it, with the drains it keeps applied to
// `snap`'s table before anything is answered.
bool restoreState(Daemon& d, Snapshot& snap, const ServerConf& sc, service::UserInfo& user) {
    std::string error;
    if (!sc.user.empty() && !service::lookupUser(sc.user, user, error)) {
        log::error("{}", error);
        return false;
    }
    d.stateDir = sc.stateDir;
    if (sc.stateDir.empty()) return true;
    // Before the drop: the directory must belong to the user that writes it later.
    bool drop = !sc.user.empty() && geteuid() == 0;
    if (!service::prepareStateDir(sc.stateDir, drop ? int(user.uid) : -1, drop ? int(user.gid) : -1, error)) {
        log::error("{}", error);
        return false;
    }
    service::AdminStateLoad loaded;
    if (!service::loadAdminState(*snap.gslb.table, sc.stateDir, loaded, error, &d.adminLog)) {
        log::error("admin state: {} (fix or delete it; refusing to serve what the operator may have drained)",
                   error);
        return false;
    }
    for (const auto& dropped : loaded.dropped) log::info("admin state: dropped the drain of {}", dropped);
    if (loaded.applied) log::info("admin state: {} drain(s) restored from {}", loaded.applied, sc.stateDir);
    return true;
}

// The snapshot published; the control thread's loop and its monitors made (nothing runs yet).
void setUp(Daemon& d, std::shared_ptr<Snapshot> snap) {
    // RRL's table is sized once, from the first config: an [rrl] added at a reload uses the default size.
    d.shared.rrl = std::make_unique<RateLimiter>(
        size_t(snap->config.rrl.tableSize), uint64_t(std::random_device{}()) << 32 | std::random_device{}());
    d.shared.holder.publish(std::move(snap));
    d.base = event_base_new();
    d.health = std::make_unique<HealthMonitor>(d.base);
    d.sources = std::make_unique<SourceMonitor>(d.base);
}

// Every listener bound while we may (ports below 1024 need root or CAP_NET_BIND_SERVICE); privileges are
// dropped after, before any network input is read: the sockets only queue until the workers start.
bool openListeners(Daemon& d, const ServerConf& sc) {
    std::string error;
    // One gslbd per address: probe exclusively under the start lock, then bind the workers' shared sockets
    // before letting the next instance probe.
    service::StartLock lock;
    if (!lock.acquire(5000, error) || !service::probeExclusive(sc.listen, error)) {
        log::error("cannot listen: {}", error);
        return false;
    }
    d.shared.sizeStats(answerRows(sc));
    for (int i = 0; i < sc.workers; ++i) {
        auto w = std::make_unique<Worker>(i, d.shared);
        if (!w->open(sc.listen, error) || !w->openTls(sc.tlsListen, error)) {
            log::error("cannot listen: {}", error);
            return false;
        }
        d.workers.push_back(std::move(w));
    }
    // AF_XDP (needs CAP_NET_ADMIN, CAP_BPF, CAP_NET_RAW: before privileges are dropped). What it cannot take
    // stays on the sockets just opened.
    d.xdpPath = std::make_unique<xdp::Path>();
    if (!sc.xdp.empty()) {
        // Each queue is answered on a worker's loop thread, by that loop's responder.
        std::vector<xdp::Host> hosts;
        for (auto& w : d.workers)
            hosts.push_back({&w->responder(), [w = w.get()](xdp::Queue* q) { w->addXdp(q); }});
        d.xdpPath->open(sc, hosts);
        d.shared.xdpSockets.store(d.xdpPath->sockets());
        d.shared.xdpPath.store(d.xdpPath.get());
    }
    return true;
}

// The control API bound (it serves later, see main), with the hooks into the monitors and the cluster.
bool openControl(Daemon& d, const ControlConf& cc) {
    if (!cc.enabled) return true;
    d.api = std::make_unique<ControlApi>(
        d.base, d.shared, [&d](std::string& m) { return d.reload(m); },
        [&d](uint32_t slot) { return d.health->status(slot); });
    d.api->setAdminChanged([&d] { d.saveAdminState(); });
    d.api->setAdminLog(&d.adminLog);
    cluster::EtcdSync::Hooks hooks;
    hooks.admin = [&d](const cluster::SharedAdmin& a) {
        return d.api->applySharedAdmin(*d.shared.holder.get(), a);
    };
    hooks.report = [&d](const cluster::SharedReport& r) {
        d.api->applySharedReport(*d.shared.holder.get(), r);
    };
    hooks.member = [&d] { return d.memberEntry(); };
    // The members' verdicts changed (or etcd came or went): health_quorum decides again.
    hooks.changed = [&d] { d.health->refreshQuorum(); };
    d.etcd = std::make_unique<cluster::EtcdSync>(d.base, std::move(hooks));
    d.health->setEtcd(d.etcd.get());
    d.api->setEtcd(d.etcd.get());
    d.api->setSourceStatus([&d] { return d.sources->status(); });
    d.api->setQuorum([&d] { return d.health->quorumStatus(); });
    std::string error;
    if (!d.api->bind(cc, error)) {
        log::error("{}", error);
        return false;
    }
    return true;
}

// [server] user: from here on gslbd runs as it, and says which files it could read as root but not as it.
bool dropPrivileges(Daemon& d, const ServerConf& sc, const service::UserInfo& user) {
    if (!sc.user.empty() && (geteuid() != user.uid || getegid() != user.gid)) {
        std::string error;
        if (!service::dropPrivileges(user, error)) {
            log::error("cannot drop privileges: {}", error);
            return false;
        }
        log::info("running as user {} (uid {}, gid {})", user.name, user.uid, user.gid);
        // Everything was read as root so far; every reload reads it again as this user.
        for (const auto& u : service::unreadable(service::pathsReadAtReload(d.shared.holder.get()->config)))
            log::warn(
                "{} is not readable by user {} ({}): every reload will fail until it is (chgrp {} and chmod "
                "g+r it)",
                u.name, user.name, u.why, user.name);
    } else if (geteuid() == 0) {
        log::warn("running as root: set [server] user to drop privileges after binding the listeners");
    }
    return true;
}

// [server] state_dir written once as the user that writes it from now on (this also forgets the dropped
// entries): a state_dir we cannot write is a start-up error, not a surprise at the first drain.
bool writeState(Daemon& d) {
    if (d.stateDir.empty()) {
        for (const auto& zc : d.shared.holder.get()->config.zones)
            if (zc.serialPolicy == zones::SerialPolicy::Increment)
                log::warn(
                    "zone {}: serial_policy = \"increment\" without [server] state_dir: a restart starts "
                    "again from the file's serial, which secondaries may already have",
                    zc.name);
        return true;
    }
    std::string error;
    if (!service::saveAdminState(*d.shared.holder.get()->gslb.table, d.stateDir, error, &d.adminLog)) {
        log::error("[server] state_dir is not writable: {}", error);
        return false;
    }
    if (!d.saveZoneSerials(*d.shared.holder.get())) return false;
    d.saveJournals(*d.shared.holder.get());
    return true;
}

// doc/design.md "Start-up": one round of health checks, bounded by their timeouts, before the listeners
// answer, so no first answer is a guess; etcd's shared state likewise; the scrapes start.
void firstRounds(Daemon& d) {
    d.health->apply(*d.shared.holder.get());
    d.health->runInitialRound();
    // [cluster] etcd: the whole shared state before the first answer, bounded: a member started while etcd is
    // away answers with the drains state_dir mirrors (cluster/etcd_sync.hpp).
    if (d.etcd) {
        d.etcd->apply(*d.shared.holder.get(), Daemon::leaseTtl(*d.shared.holder.get()));
        d.etcd->runInitial(kEtcdInitialWaitSec);
    }
    // Scrapes start now and land as they come: a metric is unknown until then, which every stage handles.
    d.sources->apply(*d.shared.holder.get());
}

// The control loop's own events: signals, and once a second the RRL log, re-signing and the AF_XDP check.
std::vector<event*> addEvents(Daemon& d) {
    std::vector<event*> events;
    timeval second{1, 0};
    auto every = [&](event_callback_fn fn) {
        event* e = event_new(d.base, -1, EV_PERSIST, fn, &d);
        event_add(e, &second);
        events.push_back(e);
    };
    // Once a second: log the prefixes RRL started or stopped limiting, and count the limited ones; log the
    // hostnames that started or stopped being answered by their fallback.
    every(onSweep);
    for (int s : {SIGHUP, SIGTERM, SIGINT, SIGUSR1}) {
        event* e = evsignal_new(d.base, s, onSignal, &d);
        event_add(e, nullptr);
        events.push_back(e);
    }
    every(onResignTick);
    if (d.xdpPath->sockets() > 0) every(onXdpCheck);
    return events;
}

// The workers answer from now on; the control thread yields to them; the start is logged and told to systemd
// once the secondaries were notified.
void startServing(Daemon& d, const std::string& config, const ServerConf& sc) {
    for (auto& w : d.workers) w->start();
    if (d.api) d.api->setStarting(false);
    // This thread (control API, health checks, reloads) yields to the workers: SCHED_BATCH keeps its normal
    // share of the CPU but never preempts a running worker when it wakes, so a burst of reports or checks
    // does not delay the answers in flight on a shared core. The workers were started above with the default
    // policy.
    sched_param none{};
    if (pthread_setschedparam(pthread_self(), SCHED_BATCH, &none) != 0)
        log::warn("control thread: SCHED_BATCH not available; it may preempt the workers");
    std::string addrs;
    for (const auto& l : sc.listen) addrs += (addrs.empty() ? "" : ", ") + l.text;
    for (const auto& l : sc.tlsListen) addrs += ", " + l.text + " (TLS)";
    const size_t zones = d.shared.holder.get()->db.zones().size();
    log::info("serving {} zone(s) on {} with {} worker(s)", zones, addrs, sc.workers);
    recordEvent(log::Level::Info, "start", config,
                fmt::format("serving {} zone(s) on {} with {} worker(s)", zones, addrs, sc.workers));
    d.notifier = std::make_unique<xfr::Notifier>(d.base);
    d.notifyChanged(nullptr, *d.shared.holder.get());
    // Only now, with the first health round done and the workers reading, is the service ready.
    service::notifyReady(fmt::format("serving {} zone(s) on {}", zones, addrs));
}

// After the loop: the workers stopped first, then what their answers or the loop's callbacks reach.
void shutDown(Daemon& d, const std::vector<event*>& events) {
    for (auto& w : d.workers) w->stop();
    d.workers.clear();
    d.shared.xdpPath.store(nullptr);
    d.xdpPath.reset();  // closes the AF_XDP sockets, takes the programs off the
                        // interfaces
    // etcd's hooks reach the API and the health monitor, which writes its verdicts to etcd.
    if (d.health) d.health->setEtcd(nullptr);
    d.etcd.reset();
    d.api.reset();
    d.notifier.reset();
    d.health.reset();
    d.sources.reset();
    for (auto* e : events) event_free(e);
    event_base_free(d.base);
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"gslbd: authoritative DNS server with global server load balancing"};
    std::string config;
    bool check = false;
    app.add_option("-c,--config", config, "configuration file (TOML)")->required();
    app.add_flag("--check", check,
                 "load the configuration and every zone, report, exit 0 (ok) or 1 (problems)");
    app.set_version_flag("--version", "gslbd 0.1.0");
    app.footer(
        "Signals: HUP reloads the configuration and every zone (a failed reload keeps the old ones serving), "
        "TERM "
        "and INT stop, USR1 logs a status line.\nExit codes: 0 ok, 1 a problem with the configuration, a "
        "zone or "
        "a listener, 2 usage.\nSee gslbd(8) for the options, signals, exit codes and files, gslbd.toml(5) "
        "for every "
        "configuration key, gslbctl(8) for the command line tool; the manual is doc/ in the source tree, "
        "/usr/share/doc/gslbd/manual/ when installed.");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        int rc = app.exit(e);  // prints help / version / the usage error
        return rc == 0 ? 0 : 2;
    }
    if (check) return checkOnly(config);
    ignoreStraySignals();  // before the zones load, which may take seconds

    auto snap = firstSnapshot(config);
    if (!snap) return 1;
    if (snap->config.server.log == "syslog") log::useSyslog();
    evthread_use_pthreads();
    Daemon d;
    d.configPath = config;
    const ServerConf sc = snap->config.server;
    const ControlConf control = snap->config.control;
    service::UserInfo user;
    if (!restoreState(d, *snap, sc, user)) return 1;
    setUp(d, std::move(snap));
    if (!openListeners(d, sc) || !openControl(d, control) || !dropPrivileges(d, sc, user) || !writeState(d))
        return 1;
    // From here the control API answers 503 "starting" until the workers answer.
    if (d.api) {
        d.api->setStarting(true);
        std::string error;
        if (!d.api->serve(error)) {
            log::error("{}", error);
            return 1;
        }
    }
    firstRounds(d);
    std::vector<event*> events = addEvents(d);
    startServing(d, config, sc);
    event_base_dispatch(d.base);
    shutDown(d, events);
    log::info("stopped");
    return 0;
}
