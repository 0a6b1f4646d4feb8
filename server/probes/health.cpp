// HealthMonitor (contract in health.hpp): the set of checks a snapshot asks for, their schedule,
// rise/fall hysteresis and FlashBack smoothing (metrics/health/), and what they write into the snapshot's
// StateTable: service health, FlashBack l4/l7, site up.
//
// A check is identified by (site, address, check name, type, target, path, Host, expectations): a reload
// that keeps that identity keeps its state, counters and history, whatever happened to the slot index;
// interval, timeout, rise and fall may change in place. Hostnames sharing a VIP with the same check share
// one run. Per-slot rules (several checks on one slot, site down) are in metrics/health/aggregate.hpp.
//
// Probe ownership ([cluster] etcd; doc/ns-set.md "Shared state in etcd"): each service has max(1,
// health_quorum) owner keys in etcd (PREFIX owner/SITE/ADDRESS/N, under the owner's lease). A member probes a
// service while it holds one; claims a free one (an etcd txn: one member wins) at once when it ranks first
// for that key among the live members (a rendezvous hash), else at its check's next tick; and skips the
// checks of a service whose keys other members hold, taking their verdicts and FlashBack times instead. An
// owner that dies loses its keys with its lease, and the member that ranks first for them claims them. Not
// live on etcd, a member probes everything itself. Ownership follows the rendezvous order as members join
// (the outranked holder releases the key, compare-on-value), and a member whose config stops checking a
// service releases its keys at once.
#include "server/probes/health.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "metrics/health/aggregate.hpp"
#include "metrics/health/hysteresis.hpp"
#include "metrics/health/quorum.hpp"
#include "metrics/health/smoothing.hpp"
#include "server/base/clock.hpp"
#include "server/base/events.hpp"
#include "server/probes/health_check.hpp"
#include "server/base/log.hpp"
#include "server/cluster/etcd_sync.hpp"
#include "server/state/snapshot.hpp"

namespace gslb::server {

namespace mh = gslb::metrics::health;
using metrics::Health;

namespace {

double monoSec() {
    return double(monotonicUs()) / 1e6;
}

std::string slotKeyOf(const std::string& site, const std::string& address) {
    return site + '\0' + address;
}

const char* healthName(Health h) {
    return h == Health::Up ? "up" : h == Health::Down ? "down" : "unknown";
}

// A FlashBack time as written to etcd (ms, -1: none).
double msOrNone(double v) {
    return std::isnan(v) || v < 0 ? -1 : v;
}

// Close enough not to write again: both none, or within a quarter of the larger (and 0.05 ms).
bool nearTime(double a, double b) {
    if (a < 0 || b < 0) return a < 0 && b < 0;
    return std::fabs(a - b) <= 0.25 * std::max(a, b) + 0.05;
}

// A check this configuration asks for: one service (site, address) checked by [check.NAME], its target and
// timing, and the label its log lines and events use.
struct Want {
    std::string site, address, checkName, label;
    health::CheckSpec spec;
    double interval;
    int rise, fall;
};

// Every check the snapshot's GSLB services ask for (tcp, http and https; none is nothing to run), by an id
// made of everything that makes two checks different: a service under several hostnames with the same
// check is checked once, named by the first hostname.
std::map<std::string, Want> wantedChecks(const Snapshot& snap) {
    std::map<std::string, Want> wants;
    for (const auto& h : snap.gslb.hosts) {
        for (int f = 0; f < 2; ++f) {
            for (const auto& svc : h.family[f]) {
                const ServiceConf* sc = svc.conf;
                if (!sc || sc->check.empty()) continue;
                auto ci = snap.config.checks.find(sc->check);
                if (ci == snap.config.checks.end()) continue;
                const CheckConf& cc = ci->second;
                if (cc.type != "tcp" && cc.type != "http" && cc.type != "https") continue;  // none
                Want w;
                w.site = sc->site;
                w.address = sc->address;
                w.checkName = cc.name;
                w.spec.type = cc.type;
                int port = sc->port > 0 ? sc->port : cc.port;
                const std::string& addr = sc->checkAddress.empty() ? sc->address : sc->checkAddress;
                if (!health::setTarget(w.spec, addr, port)) continue;
                if (cc.type == "http" || cc.type == "https") {
                    w.spec.path = cc.path;
                    w.spec.expectStatus = cc.expectStatus;
                    w.spec.expectBody = cc.expectBody;
                    if (!cc.host.empty()) {
                        w.spec.host = cc.host;
                    } else {
                        std::string host = h.name;
                        if (!host.empty() && host.back() == '.') host.pop_back();
                        const int standard = cc.type == "https" ? 443 : 80;
                        w.spec.host = port == standard ? host : fmt::format("{}:{}", host, port);
                    }
                }
                if (cc.type == "https") {
                    // The name the certificate must hold: sni, else the Host without its port.
                    std::string name = cc.sni.empty() ? w.spec.host : cc.sni;
                    if (cc.sni.empty() && !name.empty() && name.front() != '[') {
                        size_t colon = name.rfind(':');
                        if (colon != std::string::npos && name.find(':') == colon) name.resize(colon);
                    }
                    w.spec.tlsName = name;
                    w.spec.caFile = cc.caFile;
                    w.spec.insecure = cc.insecure;
                }
                w.spec.timeout = cc.timeout;
                w.interval = cc.interval;
                w.rise = cc.rise;
                w.fall = cc.fall;
                w.label = fmt::format("{}/{} ({})", h.name, sc->address, sc->site);
                std::string st;
                for (int s : cc.expectStatus) st += fmt::format("{},", s);
                std::string id = fmt::format(
                    "{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}", w.site, w.address,
                    w.checkName, w.spec.type, w.spec.target, w.spec.path, w.spec.host, st, w.spec.expectBody,
                    w.spec.tlsName, w.spec.caFile, w.spec.insecure);
                wants.emplace(id, std::move(w));  // the first hostname names a shared check
            }
        }
    }
    return wants;
}

}  // namespace

struct HealthMonitor::Impl {
    struct Entry {
        Impl* impl = nullptr;
        std::string id;
        std::string site, address, checkName, label;  // label: "www.example./192.0.2.10 (east)"
        health::CheckSpec spec;
        double interval = 5;
        mh::Hysteresis hyst{2, 3};
        mh::RollingMedian l4, l7;
        std::unique_ptr<health::CheckRun> run;
        event* timer = nullptr;
        double startedAt = 0;  // monotonic s
        double stagger = 0;    // 0..1: where in its interval this check's first periodic run falls
        bool inRound = false;
        double timeout = 2;  // s: takes effect at the next run
        uint64_t successes = 0, failures = 0;
        std::string lastError;
        int64_t lastErrorAt = 0;
        int64_t certNotAfterUnix = 0;  // https: the last certificate seen
        double lastLatencyMs = -1;
        int64_t lastResultAt = 0;
        uint64_t durationBuckets[kCheckDurationBucketCount] = {};  // the bucket of each run's time
        uint64_t durationCount = 0;
        double durationSumSec = 0;
        std::string lastChangeReason;  // "down: http 503 after 3 failures"
        int64_t lastChangeAt = -1;
    };
    struct Slot {
        Health health = Health::Unknown;     // own verdict: this member's checks
        Health effective = Health::Unknown;  // what the StateTable gets: `health`, or the quorum's outcome
        mh::QuorumOutcome votes;
        int64_t maxAgeMs = 0;    // peers' verdicts on this slot older than this are stale
        bool overruled = false;  // the quorum's outcome differs from the own verdict
        int64_t lastChangeUnixMs = 0;
        uint64_t flaps = 0;
        double l4 = NAN, l7 = NAN;
        std::vector<Entry*> entries;
        // Probe ownership (etcd): every owner slot of this service is held by other members, whose verdicts
        // stand in for this member's checks, which do not run.
        bool delegated = false;
    };

    event_base* base;
    std::shared_ptr<metrics::StateTable> table;
    std::map<std::string, std::unique_ptr<Entry>> entries;  // by id
    std::map<std::string, Slot> slots;                      // by site '\0' address
    std::map<std::string, bool> siteDown;                   // by site name
    size_t pending = 0;                                     // initial round: runs not finished yet
    cluster::EtcdSync* etcd = nullptr;
    int confQuorum = 0;      // [cluster] health_quorum of the snapshot applied (0: none)
    size_t confMembers = 0;  // [cluster] members
    // The other members' live verdicts in etcd, by slot key (rebuilt from etcd's cache at every change).
    std::map<std::string, std::vector<mh::PeerVerdict>> shared;
    std::set<std::string> sharedMembers;
    // What this member last wrote to etcd per slot key, and for which etcd identity (self, prefix).
    struct Written {
        Health health;
        double l4, l7;
    };
    std::map<std::string, Written> written;
    std::string writtenFor;
    // Probe ownership in etcd (PREFIX owner/SITE/ADDRESS/N, N < max(1, health_quorum), under the owner's
    // lease), by slot key: N -> member; the owners' verdicts with their FlashBack times; claims in flight.
    std::map<std::string, std::map<int, std::string>> owners;
    std::map<std::string, std::map<std::string, cluster::SharedVerdict>> verdictsBy;
    std::set<std::string> claiming;
    // The other members with an entry in etcd (under their leases), each with the services ("SITE/ADDRESS")
    // its entry gives a health (up or down): the candidates for a service's owner keys.
    std::map<std::string, std::set<std::string>> liveMembers;
    std::map<std::string, double> freeSince;  // "SITE\0ADDRESS\0N" -> monoSec() it was first seen free
    // "SITE\0ADDRESS\0N" -> monoSec() this member last claimed a key that a higher-ranked candidate let lie
    std::map<std::string, double> takenBack;
    // "SITE\0ADDRESS\0N" -> monoSec() this member handed the key over to a higher-ranked candidate
    std::map<std::string, double> handedOver;
    bool ownView = false;  // member level: some slot falls back on the own verdict
    size_t ownViewSlots = 0;
    int64_t ownViewSinceUnixMs = 0;

    explicit Impl(event_base* b) : base(b) {}
    ~Impl() {
        for (auto& [id, e] : entries) stop(*e);
    }

    void stop(Entry& e) {
        if (e.run) e.run->cancel();
        if (e.timer) {
            event_free(e.timer);
            e.timer = nullptr;
        }
        if (e.inRound) {
            e.inRound = false;
            --pending;
        }
    }

    static void onTimer(evutil_socket_t, short, void* arg) {
        auto* e = static_cast<Entry*>(arg);
        e->impl->runNow(*e);
    }

    void schedule(Entry& e, double delaySec) {
        timeval tv = toTimeval(delaySec);
        evtimer_add(e.timer, &tv);
    }

    void runNow(Entry& e) {
        evtimer_del(e.timer);
        if (e.run->running()) return;
        // Another member probes this service: its verdict stands in; look again one interval later (a
        // free owner slot, its owner gone with its lease, is claimed then).
        if (!e.inRound && !decideOwnership(slotKeyOf(e.site, e.address), true)) {
            e.startedAt = monoSec();
            schedule(e, e.interval);
            return;
        }
        e.startedAt = monoSec();
        e.spec.timeout = e.timeout;
        e.run->start();
    }

    void onResult(Entry& e, const health::CheckResult& r) {
        e.lastLatencyMs = r.elapsedMs;
        e.lastResultAt = wallMs();
        double sec = r.elapsedMs / 1000.0;
        for (size_t i = 0; i < kCheckDurationBucketCount; ++i)
            if (sec <= kCheckDurationBuckets[i]) {
                ++e.durationBuckets[i];
                break;
            }
        ++e.durationCount;
        e.durationSumSec += sec;
        if (r.certNotAfterUnix) e.certNotAfterUnix = r.certNotAfterUnix;
        if (r.ok) {
            ++e.successes;
            e.l4.add(r.l4Ms);
            e.l7.add(r.l7Ms);
        } else {
            ++e.failures;
            e.lastError = r.reason;
            e.lastErrorAt = e.lastResultAt;
        }
        auto step = e.hyst.feed(r.ok);
        if (step.changed) {
            // The reason goes to the log, to the event ring and to the slot (the page shows it beside the
            // state).
            std::string why;
            log::Level level = log::Level::Info;
            if (step.state == Health::Down) {
                level = log::Level::Warn;
                why = step.first ? fmt::format("down: {} (first check)", r.reason)
                                 : fmt::format("down: {} after {} failure{}", r.reason, step.run,
                                               step.run == 1 ? "" : "s");
            } else {
                why = step.first ? fmt::format("up ({}, first check)", r.reason)
                                 : fmt::format("up after {} success{}", step.run, step.run == 1 ? "" : "es");
            }
            log::line(step.state == Health::Up && step.first ? log::Level::Debug : level,
                      fmt::format("{} {}", e.label, why));
            recordEvent(level, "health", e.label, why);
            e.lastChangeReason = why;
            e.lastChangeAt = e.lastResultAt;
        }
        updateSlot(slotKeyOf(e.site, e.address));
        // Next run: one interval after this one started; after the initial round, spread
        // (firstPeriodicDelay).
        double delay =
            e.inRound ? firstPeriodicDelay(e.interval, e.stagger) : e.startedAt + e.interval - monoSec();
        if (e.inRound) {
            e.inRound = false;
            --pending;
        }
        if (e.timer) schedule(e, delay);
    }

    // Recomputes one slot's health and FlashBack times from its checks and writes them into the table.
    void updateSlot(const std::string& key) {
        auto it = slots.find(key);
        if (it == slots.end()) return;
        Slot& s = it->second;
        std::vector<Health> hs;
        std::vector<double> l4s, l7s;
        for (Entry* e : s.entries) {
            hs.push_back(e->hyst.state());
            l4s.push_back(e->l4.value());
            l7s.push_back(e->l7.value());
        }
        // A flag and a value, not the optional itself: GCC 12 sees an optional assigned twice as maybe
        // uninitialized.
        const auto combined = mh::combineChecks(hs);
        bool known = combined.has_value();
        Health hv = combined.value_or(Health::Unknown);
        if (s.delegated) {
            // The owners decide: with a quorum their verdicts are the votes (this member casts none); else
            // the one owner's verdict is this member's. Their FlashBack times either way.
            known = false;
            const auto vs = verdictsBy.find(key);
            const cluster::SharedVerdict* v = nullptr;
            if (vs != verdictsBy.end())
                for (const auto& [n, member] : owners[key])
                    if (auto f = vs->second.find(member); f != vs->second.end() && !v) v = &f->second;
            if (confQuorum > 0) s.health = Health::Unknown;  // no vote of this member's
            if (v) {
                known = confQuorum <= 0;
                hv = v->up ? Health::Up : Health::Down;
                l4s.assign(1, v->l4Ms < 0 ? NAN : v->l4Ms);
                l7s.assign(1, v->l7Ms < 0 ? NAN : v->l7Ms);
            }
        }
        if (known && hv != s.health) {
            if (s.health != Health::Unknown) ++s.flaps;
            s.health = hv;
            s.lastChangeUnixMs = wallMs();
        }
        s.l4 = mh::slowest(l4s);
        s.l7 = mh::slowest(l7s);
        if (s.entries.empty()) return;
        const Entry* e0 = s.entries.front();
        writeVerdict(key, s);
        const Health before = s.effective;
        combine(s, e0->site, e0->address);
        if (!table) return;
        auto slot = table->findService(e0->site, e0->address);
        if (!slot) return;
        table->setHealth(*slot, s.effective);
        // Suspect: up, but a check has failed since its last success and has not reached `fall` (the
        // headroom chooser's answers then get ttl_min, metrics/balance.hpp).
        bool suspect = false;
        for (const Entry* e : s.entries) suspect |= e->hyst.state() == Health::Up && e->hyst.failureRun() > 0;
        table->setSuspect(*slot, suspect && s.effective == Health::Up);
        table->setFlashback(*slot, s.l4, s.l7);
        if (known || s.effective != before) updateSite(e0->site);
    }

    bool viaEtcd() const { return etcd && etcd->configured(); }
    // health_quorum counts the members' verdicts in etcd (the config refuses it without etcd).
    int quorum() const { return viaEtcd() ? confQuorum : 0; }

    // This member's verdict on one slot, into etcd (under its lease): when it changed, or a FlashBack time
    // moved by more than a quarter; removed while Unknown.
    void writeVerdict(const std::string& key, const Slot& s) {
        if (!viaEtcd()) return;
        const Entry* e0 = s.entries.front();
        if (s.delegated) {  // not probed here: no verdict of this member's
            if (written.erase(key)) etcd->remove(cluster::SharedVerdict{e0->site, e0->address, etcd->self()});
            return;
        }
        cluster::SharedVerdict v{e0->site,       e0->address,   etcd->self(), s.health == Health::Up,
                                 msOrNone(s.l4), msOrNone(s.l7)};
        auto it = written.find(key);
        if (s.health == Health::Unknown) {
            if (it != written.end()) {
                etcd->remove(v);
                written.erase(it);
            }
            return;
        }
        if (it != written.end() && it->second.health == s.health && nearTime(it->second.l4, v.l4Ms) &&
            nearTime(it->second.l7, v.l7Ms))
            return;
        written[key] = Written{s.health, v.l4Ms, v.l7Ms};
        etcd->publish(v);
    }

    // Probe ownership (doc/ns-set.md "Shared state in etcd"): whether this member probes the slot. Not live
    // on etcd: yes, every slot (its own checks again). Else yes when it holds one of the slot's max(1,
    // health_quorum) owner keys; when one is free it claims it (a txn under its lease: one member wins) and
    // probes meanwhile; when all are held by others, no, and the slot is delegated.
    // Who holds key N of a service: the member that ranks first for it (ownerRank) among its candidates, the
    // live members whose entry gives the service a health and that hold none of its keys. That one claims a
    // free key at once; any member claims it at its check's tick (`anyMember`) once it has been free for one
    // check interval (the first-ranked one cannot or does not claim). A holder outranked by a candidate (a
    // member joined) gives the key up with a compare-on-value delete and the candidate claims it at once, so
    // ownership follows the rendezvous order as members come, not only when an owner dies. After a candidate
    // let a released key lie (this member took it back at a tick), not again for kRebalanceSpacingSec, so a
    // candidate that never claims costs one hand-over per spacing. A key N >= max(1, health_quorum) (the
    // quorum lowered on reload) is released at once: its holder's lease lives as long as the member, so it
    // would otherwise go on probing and voting beside the quorum's owners.
    bool decideOwnership(const std::string& key, bool anyMember) {
        auto it = slots.find(key);
        if (it == slots.end()) return true;
        Slot& s = it->second;
        const bool was = s.delegated;
        s.delegated = false;
        if (!viaEtcd() || !etcd->live()) return true;
        const std::string& self = etcd->self();
        const std::string site = key.substr(0, key.find('\0')), address = key.substr(key.find('\0') + 1);
        const auto& held = owners[key];
        std::vector<std::string> candidates;
        for (const auto& [m, services] : liveMembers) {
            if (!services.count(site + "/" + address)) continue;
            bool holds = false;
            for (const auto& [n, h] : held) holds |= h == m;
            if (!holds) candidates.push_back(m);
        }
        const int k = std::max(1, confQuorum);
        const double now = monoSec();
        for (const auto& [n, member] : held) {
            if (member != self) continue;
            const std::string id = key + '\0' + std::to_string(n);
            bool outranked = false;
            for (const auto& m : candidates)
                outranked |= ownerRank(site, address, n, m) > ownerRank(site, address, n, self);
            // Not again soon after the first-ranked candidate let a released key lie (this member took it
            // back at a tick): that candidate does not claim, and releasing to it would only flap.
            auto back = takenBack.find(id);
            if (n >= k)  // the quorum lowered on reload: the key would keep a vote and checks for ever
                release(site, address, n,
                        fmt::format("health_quorum is now {}: owner key {} is not needed", k, n));
            else if (outranked && (back == takenBack.end() || now - back->second >= kRebalanceSpacingSec)) {
                handedOver[id] = now;
                release(site, address, n, "a member that ranks first for it is live");
            }
            return true;  // probed here until the key is gone
        }
        for (int n = 0; n < k; ++n) {
            const std::string id = key + '\0' + std::to_string(n);
            if (held.count(n)) {
                freeSince.erase(id);
                continue;
            }
            const double since = freeSince.try_emplace(id, now).first->second;
            bool first = true;
            for (const auto& m : candidates)
                first &= ownerRank(site, address, n, self) >= ownerRank(site, address, n, m);
            const double grace = s.entries.empty() ? 0 : s.entries.front()->interval;
            if ((first || (anyMember && now - since >= grace)) && claiming.insert(key).second) {
                // A take-back only when this member handed the key over itself and the candidate let it lie;
                // a key freed by a dead owner and claimed by a member that is not first (the first-ranked
                // one slow to see it) is handed to that one as soon as it is a candidate, not 30 s later.
                if (auto h = handedOver.find(id);
                    !first && h != handedOver.end() && now - h->second < kRebalanceSpacingSec)
                    takenBack[id] = now;
                etcd->claim(
                    cluster::SharedOwner{site, address, self, n}, [this, key, site, address](bool won) {
                        claiming.erase(key);
                        if (won) log::info("probe ownership: {} {} is probed by this member", site, address);
                    });
            }
            return true;
        }
        s.delegated = true;
        if (!was) updateSlot(key);
        return false;
    }

    // Gives up owner key N of a service (compare-on-value: a key another member holds by then stays).
    void release(const std::string& site, const std::string& address, int n, const std::string& why) {
        etcd->release(cluster::SharedOwner{site, address, etcd->self(), n}, [site, address, why](bool done) {
            if (done) log::info("probe ownership: {} {} handed over: {}", site, address, why);
        });
    }

    void readShared() {
        shared.clear();
        sharedMembers.clear();
        owners.clear();
        verdictsBy.clear();
        liveMembers.clear();
        if (!viaEtcd()) return;
        for (const auto& [k, item] : etcd->cache()) {
            if (const auto* o = std::get_if<cluster::SharedOwner>(&item))
                owners[slotKeyOf(o->site, o->address)][o->slot] = o->member;
            if (const auto* m = std::get_if<cluster::SharedMember>(&item))
                if (m->member != etcd->self()) {
                    auto& services = liveMembers[m->member];
                    // A service its entry calls "unknown" is one it does not check (a checked one has a
                    // verdict from the start-up round on, its own or its owner's): not a candidate there.
                    for (const auto& [service, health] : m->health)
                        if (health != "unknown") services.insert(service);
                }
        }
        for (const auto& [k, item] : etcd->cache())
            if (const auto* v = std::get_if<cluster::SharedVerdict>(&item)) {
                verdictsBy[slotKeyOf(v->site, v->address)][v->member] = *v;
                if (v->member == etcd->self()) continue;
                shared[slotKeyOf(v->site, v->address)].push_back({v->up ? Health::Up : Health::Down, 0});
                sharedMembers.insert(v->member);
            }
    }

    // The slot's effective health: its own verdict, or with a quorum the combination with the peers'.
    void combine(Slot& s, const std::string& site, const std::string& address) {
        const int quorum = this->quorum();
        if (quorum <= 0) {
            s.effective = s.health;
            s.votes = {};
            s.overruled = false;
            return;
        }
        std::vector<mh::PeerVerdict> pv;
        // etcd deletes a verdict when its member's lease expires: every one it holds is fresh.
        s.maxAgeMs = etcd->status().ttlSec * 1000;
        auto it = shared.find(slotKeyOf(site, address));
        if (it != shared.end()) pv = it->second;
        s.votes = mh::combineQuorum(s.health, pv, quorum, s.maxAgeMs);
        // An Unknown outcome is "no news": the slot keeps what it had (as combineChecks' nullopt).
        if (s.votes.health != Health::Unknown || s.health == Health::Unknown) s.effective = s.votes.health;
        // Logged once when the quorum starts and stops overruling this member's own verdict: the
        // operator sees why a service this member checks as down is still answered (or the reverse).
        const bool overruled =
            s.health != Health::Unknown && s.effective != Health::Unknown && s.effective != s.health;
        if (overruled != s.overruled) {
            s.overruled = overruled;
            const std::string label = s.entries.front()->label;
            std::string why =
                overruled ? fmt::format(
                                "own check says {}, the quorum keeps it {} ({} of {} votes down, quorum {})",
                                healthName(s.health), healthName(s.effective), s.votes.downVotes,
                                s.votes.voters, quorum)
                          : fmt::format("quorum and own check agree again: {}", healthName(s.effective));
            log::info("{} {}", label, why);
            recordEvent(log::Level::Info, "health", label, why);
        }
    }

    // Verdicts written for slots no longer checked go; all of them when etcd's identity changed (another
    // prefix or member URL: EtcdSync starts over, and every verdict is written again).
    void forgetWritten() {
        const std::string now = viaEtcd() ? etcd->self() + '\n' + etcd->status().prefix : "";
        if (now != writtenFor) {
            written.clear();
            writtenFor = now;
        }
        for (auto it = written.begin(); it != written.end();) {
            if (slots.count(it->first)) {
                ++it;
                continue;
            }
            const size_t nul = it->first.find('\0');
            cluster::SharedVerdict v{it->first.substr(0, nul), it->first.substr(nul + 1), etcd->self()};
            etcd->remove(v);
            it = written.erase(it);
        }
    }

    void refreshQuorum() {
        readShared();
        for (auto& [key, s] : slots) decideOwnership(key, false);
        for (auto& [key, s] : slots) updateSlot(key);
        size_t own = 0;
        const int quorum = this->quorum();
        if (quorum > 0)
            for (const auto& [key, s] : slots)
                if (s.votes.ownView) ++own;
        ownViewSlots = own;
        const bool now = own > 0;
        if (now == ownView) return;
        if (quorum <= 0) {  // health_quorum was removed: nothing falls back any more, nothing to say
            ownView = false;
            ownViewSinceUnixMs = wallMs();
            return;
        }
        ownView = now;
        ownViewSinceUnixMs = wallMs();
        const size_t ok = sharedMembers.size(), total = confMembers > 0 ? confMembers - 1 : 0;
        const char* answer = "have live verdicts in etcd";
        if (now) {
            std::string why = fmt::format(
                "{} service(s) decided on this member's own view: {} of {} peer(s) {}, quorum {} not "
                "reached",
                own, ok, total, answer, quorum);
            log::warn("health quorum: {}", why);
            recordEvent(log::Level::Warn, "cluster", "health quorum", why);
        } else {
            std::string why = fmt::format("quorum {} reached again for every service ({} of {} peer(s) {})",
                                          quorum, ok, total, answer);
            log::info("health quorum: {}", why);
            recordEvent(log::Level::Info, "cluster", "health quorum", why);
        }
    }

    void updateSite(const std::string& site) {
        if (!table) return;
        auto siteSlot = table->findSite(site);
        if (!siteSlot) return;
        std::vector<mh::SiteService> svcs;
        size_t checked = 0;
        for (uint32_t i = 0; i < table->serviceCount(); ++i) {
            if (table->siteOf(i) != *siteSlot) continue;
            const auto& k = table->serviceKey(i);
            auto it = slots.find(slotKeyOf(k.site, k.address));
            mh::SiteService ss;
            if (it != slots.end()) {
                ss.checked = true;
                ss.health = it->second.effective;
                ++checked;
            }
            svcs.push_back(ss);
        }
        bool down = mh::siteDown(svcs);
        table->setSiteUp(*siteSlot, !down);
        bool was = siteDown.count(site) ? siteDown[site] : false;
        if (down != was) {
            if (down) {
                log::warn("site {} down: all {} checked service(s) down", site, checked);
                recordEvent(log::Level::Warn, "health", "site " + site,
                            fmt::format("down: all {} checked service(s) down", checked));
            } else {
                log::info("site {} up", site);
                recordEvent(log::Level::Info, "health", "site " + site, "up");
            }
        }
        siteDown[site] = down;
    }

    // A new snapshot (start or reload): the checks it asks for, kept, started or stopped; its cluster
    // settings and GSLB table taken; the slots and the table brought up to date.
    void apply(const Snapshot& snap) {
        reconcileEntries(wantedChecks(snap));
        confQuorum = snap.config.cluster.enabled ? snap.config.cluster.healthQuorum : 0;
        confMembers = snap.config.cluster.enabled ? snap.config.cluster.members.size() : 0;
        table = snap.gslb.table;
        rebuildSlots();
        forgetWritten();
        if (table) rewriteTable();
    }

    // Stops the checks no longer wanted, keeps (with new timing) those still wanted and starts the new ones,
    // spread over their interval.
    void reconcileEntries(std::map<std::string, Want> wants) {
        // Stop what is gone.
        for (auto it = entries.begin(); it != entries.end();) {
            if (wants.count(it->first)) {
                ++it;
                continue;
            }
            stop(*it->second);
            it = entries.erase(it);
        }
        // Keep (with new timing) what is there, start what is new.
        size_t fresh = 0;
        for (const auto& [id, w] : wants) fresh += entries.count(id) ? 0 : 1;
        size_t k = 0;
        for (auto& [id, w] : wants) {
            auto it = entries.find(id);
            if (it != entries.end()) {
                Entry& e = *it->second;
                e.label = w.label;
                e.hyst.setLimits(w.rise, w.fall);
                bool sooner = w.interval < e.interval;
                e.interval = w.interval;
                e.timeout = w.spec.timeout;
                if (sooner && !e.run->running() && !e.inRound) schedule(e, e.interval * e.stagger);
                continue;
            }
            auto e = std::make_unique<Entry>();
            e->impl = this;
            e->id = id;
            e->site = w.site;
            e->address = w.address;
            e->checkName = w.checkName;
            e->label = w.label;
            e->spec = w.spec;
            e->interval = w.interval;
            e->timeout = w.spec.timeout;
            e->hyst.setLimits(w.rise, w.fall);
            e->stagger = fresh > 1 ? double(k) / double(fresh) : 0;
            ++k;
            Entry* ep = e.get();
            e->run = health::CheckRun::make(base, e->spec,
                                            [this, ep](const health::CheckResult& r) { onResult(*ep, r); });
            e->timer = evtimer_new(base, onTimer, ep);
            // First run of a new check: soon, spread over at most a second (runInitialRound runs them now).
            schedule(*e, std::min(e->interval, 1.0) * e->stagger);
            entries.emplace(id, std::move(e));
        }
    }

    // The slots, one per checked (site, address), rebuilt from the checks with their state kept; with etcd,
    // the owner keys of a service that left this member's checks released.
    void rebuildSlots() {
        std::map<std::string, Slot> next;
        for (auto& [id, e] : entries) {
            std::string key = slotKeyOf(e->site, e->address);
            auto& s = next[key];
            if (s.entries.empty()) {
                auto old = slots.find(key);
                if (old != slots.end()) {
                    s = std::move(old->second);
                    s.entries.clear();
                }
            }
            s.entries.push_back(e.get());
        }
        // A service that left this member's checks: the owner keys it holds go at once (compare-on-value), so
        // another member probes it now, not when this member's lease expires (never, while it runs).
        if (viaEtcd())
            for (const auto& [key, old] : slots) {
                if (next.count(key)) continue;
                for (const auto& [n, member] : owners[key])
                    if (member == etcd->self())
                        release(key.substr(0, key.find('\0')), key.substr(key.find('\0') + 1), n,
                                "the service left this member's checks");
            }
        slots = std::move(next);
    }

    // Every service and site of the new table written from the slots.
    void rewriteTable() {
        // Every slot is rewritten into the new table: unchecked slots are Unknown without FlashBack times
        // (they may have been checked under the previous configuration).
        for (uint32_t i = 0; i < table->serviceCount(); ++i) {
            const auto& key = table->serviceKey(i);
            if (!slots.count(slotKeyOf(key.site, key.address))) {
                table->setHealth(i, Health::Unknown);
                table->setFlashback(i, NAN, NAN);
            }
        }
        for (auto& [key, s] : slots) updateSlot(key);
        std::map<std::string, bool> oldSites = std::move(siteDown);
        siteDown.clear();
        for (uint32_t i = 0; i < table->siteCount(); ++i) {
            const std::string& name = table->siteName(i);
            if (oldSites.count(name)) siteDown[name] = oldSites[name];
            updateSite(name);
        }
    }

    static void onRoundDeadline(evutil_socket_t, short, void* arg) { *static_cast<bool*>(arg) = true; }

    void runInitialRound() {
        if (entries.empty()) return;
        double longest = 0;
        const int64_t t0 = monotonicUs();
        for (auto& [id, e] : entries) {
            longest = std::max(longest, e->timeout);
            if (!e->inRound) {
                e->inRound = true;
                ++pending;
            }
        }
        // Start them all now (a run that ends at once may not remove others: entries are stable here).
        std::vector<Entry*> all;
        for (auto& [id, e] : entries) all.push_back(e.get());
        for (Entry* e : all) runNow(*e);
        bool expired = false;
        event* deadline = evtimer_new(base, onRoundDeadline, &expired);
        timeval tv = toTimeval(longest + 0.2);
        evtimer_add(deadline, &tv);
        while (pending > 0 && !expired) event_base_loop(base, EVLOOP_ONCE);
        event_free(deadline);
        for (auto& [id, e] : entries)
            if (e->inRound) {  // should not happen: every run has its own deadline
                e->inRound = false;
                --pending;
            }
        size_t up = 0, down = 0;
        for (auto& [key, s] : slots) {
            if (s.effective == Health::Up) ++up;
            if (s.effective == Health::Down) ++down;
        }
        const double ms = double(monotonicUs() - t0) / 1000;
        log::info("health: initial round of {} check(s) in {:.0f} ms: {} service(s) up, {} down, {} unknown",
                  entries.size(), ms, up, down, slots.size() - up - down);
    }

    CheckStatus status(uint32_t serviceSlot) const {
        CheckStatus st;
        if (!table || serviceSlot >= table->serviceCount()) return st;
        const auto& key = table->serviceKey(serviceSlot);
        auto it = slots.find(slotKeyOf(key.site, key.address));
        if (it == slots.end()) return st;
        const Slot& s = it->second;
        st.checked = true;
        st.state = healthName(s.effective);
        st.ownState = healthName(s.health);
        st.quorum = quorum() > 0;
        st.votes = s.votes;
        st.quorumMaxAgeMs = s.maxAgeMs;
        st.lastChangeUnixMs = s.lastChangeUnixMs;
        st.flaps = s.flaps;
        st.l4Ms = std::isnan(s.l4) ? -1 : s.l4;
        st.l7Ms = std::isnan(s.l7) ? -1 : s.l7;
        if (viaEtcd() && etcd->live()) {
            st.ownership = true;
            st.probedHere = !s.delegated;
            if (auto o = owners.find(slotKeyOf(key.site, key.address)); o != owners.end())
                for (const auto& [n, member] : o->second) st.owners.push_back(member);
        }
        auto join = [](std::string& to, const std::string& v) {
            if (v.empty()) return;
            size_t pos = 0;
            while (pos <= to.size()) {  // skip duplicates
                size_t c = to.find(',', pos);
                if (to.substr(pos, c == std::string::npos ? std::string::npos : c - pos) == v) return;
                if (c == std::string::npos) break;
                pos = c + 1;
            }
            to += (to.empty() ? "" : ",") + v;
        };
        int64_t lastErrAt = -1, lastAt = -1, lastChangeAt = -1;
        for (const Entry* e : s.entries) {
            join(st.check, e->checkName);
            join(st.type, e->spec.type);
            join(st.target, e->spec.target);
            st.successes += e->successes;
            st.failures += e->failures;
            for (size_t i = 0; i < kCheckDurationBucketCount; ++i)
                st.durationBuckets[i] += e->durationBuckets[i];
            st.durationCount += e->durationCount;
            st.durationSumSec += e->durationSumSec;
            // Several https checks on one slot: the certificate that expires first.
            if (e->certNotAfterUnix && (!st.certNotAfterUnix || e->certNotAfterUnix < st.certNotAfterUnix))
                st.certNotAfterUnix = e->certNotAfterUnix;
            if (!e->lastError.empty() && e->lastErrorAt > lastErrAt) {
                lastErrAt = e->lastErrorAt;
                st.lastError = e->lastError;
            }
            // The slot's reason is that of the check that changed last (with several checks on one VIP).
            if (!e->lastChangeReason.empty() && e->lastChangeAt > lastChangeAt) {
                lastChangeAt = e->lastChangeAt;
                st.lastChangeReason = e->lastChangeReason;
            }
            if (e->lastResultAt > lastAt && e->lastLatencyMs >= 0) {
                lastAt = e->lastResultAt;
                st.lastLatencyMs = e->lastLatencyMs;
            }
        }
        return st;
    }

    QuorumStatus quorumStatus() const {
        QuorumStatus q;
        if (!viaEtcd()) return q;
        q.quorum = confQuorum;
        q.members = confMembers;
        q.ownView = ownView && q.quorum > 0;
        q.ownViewServices = q.quorum > 0 ? ownViewSlots : 0;
        q.sinceUnixMs = ownViewSinceUnixMs;
        q.votingMembers = sharedMembers.size() + 1;
        q.verdictTtlSec = etcd->status().ttlSec;
        return q;
    }
};

uint64_t ownerRank(const std::string& site, const std::string& address, int n, const std::string& member) {
    uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a's offset basis and prime (64 bits)
    auto mix = [&h](std::string_view part) {
        for (unsigned char c : part) h = (h ^ c) * 0x100000001b3ULL;
    };
    const std::string slot = std::to_string(n);
    for (std::string_view part :
         {std::string_view(site), std::string_view(address), std::string_view(slot)}) {
        mix(part);
        mix(std::string_view("\0", 1));
    }
    mix(member);
    return h;
}

double firstPeriodicDelay(double intervalSec, double stagger) {
    return intervalSec * (0.5 + stagger);
}

HealthMonitor::HealthMonitor(event_base* base) : impl_(std::make_unique<Impl>(base)) {}
HealthMonitor::~HealthMonitor() = default;
void HealthMonitor::apply(const Snapshot& snap) {
    impl_->apply(snap);
}
void HealthMonitor::runInitialRound() {
    impl_->runInitialRound();
}
CheckStatus HealthMonitor::status(uint32_t serviceSlot) const {
    return impl_->status(serviceSlot);
}
void HealthMonitor::setEtcd(cluster::EtcdSync* etcd) {
    impl_->etcd = etcd;
}
void HealthMonitor::refreshQuorum() {
    impl_->refreshQuorum();
}
QuorumStatus HealthMonitor::quorumStatus() const {
    return impl_->quorumStatus();
}

}  // namespace gslb::server
