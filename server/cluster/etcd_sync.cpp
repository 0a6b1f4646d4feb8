// EtcdSync (contract in etcd_sync.hpp).
#include "server/cluster/etcd_sync.hpp"

#include <fmt/format.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <deque>
#include <set>

#include "server/base/clock.hpp"
#include "server/cluster/etcd_client.hpp"
#include "server/base/events.hpp"
#include "server/base/log.hpp"
#include "server/state/snapshot.hpp"

namespace gslb::server::cluster {

namespace {

bool leased(const SharedItem& item) {
    return !std::holds_alternative<SharedAdmin>(item) && !std::holds_alternative<SharedReport>(item);
}

}  // namespace

struct EtcdSync::Impl {
    // A member, not in the anonymous namespace: in a unity build this file is included by another, and GCC
    // warns of a field whose type has internal linkage (-Wsubobject-linkage).
    struct CtxFree {
        void operator()(SSL_CTX* c) const { SSL_CTX_free(c); }
    };
    event_base* base;
    Hooks hooks;
    // The configuration in use.
    std::vector<EtcdEndpoint> endpoints;
    std::string prefix, self, ca, cert, key;
    int64_t ttlSec = 3;
    std::unique_ptr<SSL_CTX, CtxFree> tls;
    std::unique_ptr<EtcdClient> client;

    EtcdStatus st;
    uint64_t gen = 0;  // bumped at every (re)connect: stale callbacks compare and drop out
    size_t triedThisRound = 0;
    bool everLive = false;
    std::string cutReason;

    struct Write {
        std::string key, value;
        bool lease = false;
        bool del = false;
    };
    std::deque<Write> outbox;
    // What this member keeps under its lease (verdicts, ownership): written again under a new lease after
    // the old one expired (a cut longer than the TTL), before anything else.
    std::map<std::string, std::string> leasedItems;
    bool writing = false;                           // a write of the queue's front is in flight
    std::vector<std::function<void()>> afterFlush;  // what waits for the queue to be empty
    bool memberDirty = true;

    std::map<std::string, SharedItem> cache;  // verdict, owner, member entries
    std::set<std::string> refusedLogged;
    event* retry = nullptr;
    event* tick = nullptr;

    Impl(event_base* b, Hooks h) : base(b), hooks(std::move(h)) {
        retry = evtimer_new(base, onRetry, this);
        tick = event_new(base, -1, EV_PERSIST, onTick, this);
    }
    ~Impl() {
        client.reset();
        if (retry) event_free(retry);
        if (tick) event_free(tick);
    }

    static void onRetry(evutil_socket_t, short, void* arg) {
        auto* i = static_cast<Impl*>(arg);
        i->triedThisRound = 0;
        i->connect();
    }
    static void onTick(evutil_socket_t, short, void* arg) { static_cast<Impl*>(arg)->renew(); }

    void setState(const std::string& s) {
        if (st.state == s) return;
        st.state = s;
        st.sinceUnixMs = wallMs();
    }

    void stop() {
        ++gen;
        client.reset();
        evtimer_del(retry);
        event_del(tick);
        cache.clear();
        setState("off");
    }

    void apply(const Snapshot& snap, int64_t ttl) {
        const ClusterConf& c = snap.config.cluster;
        std::vector<EtcdEndpoint> eps;
        for (const auto& u : c.etcd) {
            EtcdEndpoint e;
            std::string why;
            if (parseEtcdUrl(u, e, why)) eps.push_back(e);
        }
        std::string me = c.enabled && c.selfIndex >= 0 ? c.members[size_t(c.selfIndex)].url : "";
        if (eps.empty() || me.empty()) {
            if (st.configured) log::info("etcd: no [cluster] etcd any more: the members are independent");
            st.configured = false;
            stop();
            return;
        }
        ttl = std::max<int64_t>(2, ttl);
        bool same = st.configured && me == self && c.etcdPrefix == prefix && c.etcdCa == ca &&
                    c.etcdCert == cert && c.etcdKey == key && ttl == ttlSec &&
                    eps.size() == endpoints.size() &&
                    std::equal(eps.begin(), eps.end(), endpoints.begin(),
                               [](const EtcdEndpoint& a, const EtcdEndpoint& b) { return a.url == b.url; });
        if (same) {
            memberDirty = true;  // the digest and serials may be new
            return;
        }
        stop();
        leasedItems.clear();  // another prefix or member: what was written under the old one is not ours
        endpoints = eps;
        prefix = c.etcdPrefix;
        self = me;
        ca = c.etcdCa;
        cert = c.etcdCert;
        key = c.etcdKey;
        ttlSec = ttl;
        st = EtcdStatus{};
        st.configured = true;
        st.prefix = prefix;
        st.ttlSec = ttlSec;
        tls.reset();
        bool anyTls = std::any_of(eps.begin(), eps.end(), [](const EtcdEndpoint& e) { return e.tls; });
        if (anyTls) {
            std::string error;
            tls.reset(makeEtcdTls(ca, cert, key, error));
            if (!tls) {
                st.lastError = error;
                log::error(
                    "etcd: {}: the https endpoints cannot be used; serving with this member's own state",
                    error);
            }
        }
        client = std::make_unique<EtcdClient>(base, endpoints, tls.get(), kRequestTimeoutSec);
        setState("connecting");
        triedThisRound = 0;
        memberDirty = true;
        connect();
    }

    // ---- connecting

    void connect() {
        if (!client) return;
        const uint64_t g = ++gen;
        client->stopWatch();
        event_del(tick);
        writing = false;
        afterFlush.clear();
        st.endpoint = client->endpoint().url;
        ++triedThisRound;
        client->leaseGrant(ttlSec, [this, g](const std::string& err, const EtcdReply& r) {
            if (g != gen) return;
            if (!err.empty() || r.leaseId == 0)
                return fail(err.empty() ? "lease grant: no lease ID" : "lease grant: " + err);
            const bool newLease = st.leaseId != r.leaseId;
            st.leaseId = r.leaseId;
            if (newLease)
                for (auto it = leasedItems.rbegin(); it != leasedItems.rend(); ++it) {
                    std::erase_if(outbox, [&](const Write& w) { return w.key == it->first; });
                    outbox.push_front(Write{it->first, it->second, true, false});
                }
            // The entry is written once live (becomeLive): the first answer does not wait for that write.
            memberDirty = true;
            flushThen(g, [this, g] { readAll(g); });
        });
    }

    void writeMember(uint64_t g, std::function<void()> next) {
        SharedMember m = hooks.member ? hooks.member() : SharedMember{};
        m.member = self;
        m.etcdState = "live";
        memberDirty = false;
        client->put(sharedKey(prefix, m), sharedValue(m), st.leaseId,
                    [this, g, next](const std::string& err, const EtcdReply&) {
                        if (g != gen) return;
                        if (!err.empty()) return fail("writing this member's entry: " + err);
                        ++st.written;
                        if (next) next();
                    });
    }

    // Writes the queue in order, one write at a time, then `next` (nullptr while live: just drain it). A
    // flush asked for while one runs joins it: two would write the same front entry and pop the queue twice.
    void flushThen(uint64_t g, std::function<void()> next) {
        if (g != gen) return;
        if (next) afterFlush.push_back(std::move(next));
        if (!writing) flushStep(g);
    }

    void flushStep(uint64_t g) {
        if (g != gen) return;
        if (outbox.empty()) {
            writing = false;
            st.queued = 0;
            auto fns = std::move(afterFlush);
            afterFlush.clear();
            for (auto& f : fns) f();
            return;
        }
        writing = true;
        const Write& w = outbox.front();
        auto after = [this, g](const std::string& err, const EtcdReply&) {
            if (g != gen) return;
            if (!err.empty()) {
                writing = false;
                return fail("writing: " + err);
            }
            ++st.written;
            outbox.pop_front();
            st.queued = outbox.size();
            flushStep(g);
        };
        if (w.del)
            client->del(w.key, after);
        else
            client->put(w.key, w.value, w.lease ? st.leaseId : 0, after);
    }

    void readAll(uint64_t g) {
        client->range(prefix, prefixEnd(prefix), [this, g](const std::string& err, const EtcdReply& r) {
            if (g != gen) return;
            if (!err.empty()) return fail("reading " + prefix + ": " + err);
            cache.clear();
            size_t applied = 0;
            for (const auto& kv : r.kvs) applied += take(kv, false, false);
            st.revision = r.revision;
            startWatch(g, r.revision + 1);
            if (hooks.changed) hooks.changed();
            (void)applied;
        });
    }

    void startWatch(uint64_t g, int64_t from) {
        bool ok = client->watch(
            prefix, prefixEnd(prefix), from,
            [this, g](const EtcdReply& m) {
                if (g != gen) return;
                if (m.created) becomeLive(g);
                bool shared = false;
                for (const auto& e : m.events) {
                    shared |= take(e.kv, e.deleted, true) == 2;
                    st.revision = std::max(st.revision, e.kv.modRevision);
                }
                if (m.revision > st.revision && m.events.empty()) st.revision = m.revision;
                if (shared && hooks.changed) hooks.changed();
            },
            [this, g](const std::string& why) {
                if (g != gen) return;
                fail("watch: " + why);
            });
        if (!ok) fail("watch: cannot start the request");
    }

    void becomeLive(uint64_t g) {
        if (g != gen || st.state == "live") return;
        const bool wasCut = st.state == "cut";
        const int64_t cutFor = wallMs() - st.sinceUnixMs;
        setState("live");
        triedThisRound = 0;
        st.lastError.clear();
        timeval tv = toTimeval(std::min(1.0, double(ttlSec) / 3));
        event_add(tick, &tv);
        std::string msg =
            fmt::format("live at {} (revision {}, prefix {})", client->endpoint().url, st.revision, prefix);
        if (wasCut)
            msg += fmt::format(", after {:.1f} s cut off: the shared state is read again", cutFor / 1000.0);
        log::info("etcd: {}", msg);
        recordEvent(log::Level::Info, "cluster", "etcd", msg);
        everLive = true;
        if (hooks.changed) hooks.changed();
        writeMember(g, [this, g] { flushThen(g, nullptr); });
    }

    void fail(const std::string& why) {
        const uint64_t g = ++gen;  // every callback of this attempt is stale from here
        (void)g;
        client->stopWatch();
        event_del(tick);
        writing = false;
        afterFlush.clear();
        st.lastError = why;
        const bool wasLive = st.state == "live";
        if (triedThisRound < client->endpointCount() && !wasLive) {
            // The client moved to the next endpoint (or this one failed at etcd's side): try it at once.
            connect();
            return;
        }
        if (wasLive) {
            // A live member that loses its endpoint tries the others at once before it calls itself cut.
            setState("connecting");
            triedThisRound = 0;
            if (client->endpointCount() > 1) {
                connect();
                return;
            }
        }
        if (st.state != "cut") {
            ++st.cuts;
            std::string msg = fmt::format(
                "unreachable ({}; {} endpoint(s) tried): serving the last shared state read (revision {}) "
                "and "
                "this member's own checks; {} write(s) wait for etcd",
                why, client->endpointCount(), st.revision, outbox.size());
            log::warn("etcd: {}", msg);
            recordEvent(log::Level::Warn, "cluster", "etcd", msg);
            setState("cut");
            cache.clear();  // others' verdicts and ownership age out with their leases: not ours to keep
            if (hooks.changed) hooks.changed();
        }
        timeval tv = toTimeval(kRetrySec);
        evtimer_add(retry, &tv);
    }

    // ---- live

    void renew() {
        if (st.state != "live") return;
        const uint64_t g = gen;
        client->leaseKeepAlive(st.leaseId, [this, g](const std::string& err, const EtcdReply& r) {
            if (g != gen) return;
            if (!err.empty()) return fail("lease keepalive: " + err);
            if (r.ttl <= 0) {
                // The lease expired (this member was stopped or cut longer than its TTL): everything under it
                // is gone; a new lease, and the entries again.
                log::warn("etcd: lease {} expired: granting a new one", st.leaseId);
                memberDirty = true;
                setState("connecting");
                triedThisRound = 0;
                connect();
                return;
            }
            if (memberDirty && !writing) writeMember(g, nullptr);
        });
    }

    // 0: refused or nothing; 1: a drain, enable or report; 2: a verdict, owner or member changed.
    int take(const EtcdKv& kv, bool deleted, bool fromWatch) {
        SharedItem item;
        std::string why = decodeSharedKv(prefix, kv, deleted, item);
        if (!why.empty()) {
            ++st.refused;
            std::string printable;
            for (char c : kv.key.substr(0, 200)) printable += (c > 0x20 && c < 0x7f) ? c : '?';
            if (refusedLogged.size() < 1000 && refusedLogged.insert(printable + '\0' + why).second)
                log::warn("etcd: refused {} (revision {}): {}; not applied", printable, kv.modRevision, why);
            return 0;
        }
        if (auto* a = std::get_if<SharedAdmin>(&item)) {
            if (deleted) return 0;  // no change recorded: the state stays as it is
            if (hooks.admin && hooks.admin(*a)) ++st.applied;
            return 1;
        }
        if (auto* r = std::get_if<SharedReport>(&item)) {
            if (deleted || !fromWatch || r->origin == self) return 0;
            if (hooks.report) hooks.report(*r);
            ++st.applied;
            return 1;
        }
        if (deleted)
            cache.erase(kv.key);
        else
            cache[kv.key] = std::move(item);
        return 2;
    }

    void queue(Write w) {
        for (auto it = outbox.begin(); it != outbox.end(); ++it)
            if (it->key == w.key && !(writing && it == outbox.begin())) {
                outbox.erase(it);
                break;
            }
        if (outbox.size() >= kMaxQueuedWrites) {
            log::warn("etcd: {} writes wait for etcd; the oldest ({}) goes", outbox.size(),
                      outbox.front().key);
            if (!writing) outbox.pop_front();
        }
        outbox.push_back(std::move(w));
        st.queued = outbox.size();
        if (st.state == "live" && !writing) flushThen(gen, nullptr);
    }
};

EtcdSync::EtcdSync(event_base* base, Hooks hooks) : impl_(std::make_unique<Impl>(base, std::move(hooks))) {}
EtcdSync::~EtcdSync() = default;

void EtcdSync::apply(const Snapshot& snap, int64_t ttlSec) {
    impl_->apply(snap, ttlSec);
}
bool EtcdSync::configured() const {
    return impl_->st.configured;
}
bool EtcdSync::live() const {
    return impl_->st.state == "live";
}
const std::string& EtcdSync::self() const {
    return impl_->self;
}

void EtcdSync::runInitial(double maxWaitSec) {
    Impl& i = *impl_;
    if (!i.st.configured) return;
    event* deadline = evtimer_new(
        i.base, [](evutil_socket_t, short, void*) {}, nullptr);
    timeval tv = toTimeval(maxWaitSec);
    evtimer_add(deadline, &tv);
    while (i.st.state != "live" && i.st.state != "cut" && evtimer_pending(deadline, nullptr))
        event_base_loop(i.base, EVLOOP_ONCE);
    event_free(deadline);
    if (i.st.state != "live")
        log::warn(
            "etcd: not live {} s into the start ({}): answering with the drains mirrored in state_dir; the "
            "shared state applies when etcd answers",
            maxWaitSec, i.st.lastError.empty() ? "no answer yet" : i.st.lastError);
}

void EtcdSync::publish(const SharedItem& item) {
    if (!impl_->st.configured) return;
    Impl::Write w{sharedKey(impl_->prefix, item), sharedValue(item), leased(item), false};
    if (w.lease) {
        auto [it, fresh] = impl_->leasedItems.try_emplace(w.key, w.value);
        if (!fresh && it->second == w.value) return;  // etcd has it (or will, from the queue)
        it->second = w.value;
    }
    impl_->queue(std::move(w));
}

void EtcdSync::remove(const SharedItem& item) {
    if (!impl_->st.configured) return;
    const std::string k = sharedKey(impl_->prefix, item);
    if (leased(item) && !impl_->leasedItems.erase(k)) return;
    impl_->queue(Impl::Write{k, "", false, true});
}

namespace {

// `owner` as this member's key (`self` its member) and its store key under `prefix`.
std::pair<SharedOwner, std::string> ownKey(const SharedOwner& owner, const std::string& self,
                                           const std::string& prefix) {
    SharedOwner o = owner;
    o.member = self;
    std::string k = sharedKey(prefix, o);
    return {std::move(o), std::move(k)};
}

}  // namespace

void EtcdSync::claim(const SharedOwner& owner, std::function<void(bool)> done) {
    Impl& i = *impl_;
    if (i.st.state != "live") return done(false);
    // Not a structured binding: Debian 12's clang 14 refuses to capture one in a lambda (C++20 allows it).
    std::pair<SharedOwner, std::string> ok = ownKey(owner, i.self, i.prefix);
    SharedOwner o = std::move(ok.first);
    std::string k = std::move(ok.second);
    i.client->putIfAbsent(k, sharedValue(o), i.st.leaseId,
                          [&i, g = i.gen, k, o, done](const std::string& err, const EtcdReply& r) {
                              if (g != i.gen || !err.empty()) return done(false);
                              if (r.succeeded) {
                                  i.cache[k] = o;
                                  return done(true);
                              }
                              // Held: by this member under its lease (a claim repeated), or by another.
                              for (const auto& kv : r.kvs)
                                  if (kv.key == k && kv.lease == i.st.leaseId) return done(true);
                              done(false);
                          });
}

void EtcdSync::release(const SharedOwner& owner, std::function<void(bool)> done) {
    Impl& i = *impl_;
    if (i.st.state != "live") return done(false);
    std::pair<SharedOwner, std::string> ok =
        ownKey(owner, i.self, i.prefix);  // not bound: clang 14, as in claim
    const SharedOwner& o = ok.first;
    std::string k = std::move(ok.second);
    i.client->deleteIfValue(
        k, sharedValue(o), [&i, g = i.gen, k, done](const std::string& err, const EtcdReply& r) {
            if (g != i.gen || !err.empty() || !r.succeeded) return done(false);
            forgetReleasedOwner(i.cache, k, i.self);  // the members' view need not wait for the watch
            done(true);
        });
}

void EtcdSync::memberChanged() {
    impl_->memberDirty = true;
}

const std::map<std::string, SharedItem>& EtcdSync::cache() const {
    return impl_->cache;
}

EtcdStatus EtcdSync::status() const {
    EtcdStatus s = impl_->st;
    s.queued = impl_->outbox.size();
    return s;
}

}  // namespace gslb::server::cluster
