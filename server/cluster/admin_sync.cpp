// AdminSync (contract in admin_sync.hpp).
#include "server/cluster/admin_sync.hpp"

#include <netdb.h>

#include <cstdlib>

#include "server/http_client.hpp"
#include "server/log.hpp"
#include "server/snapshot.hpp"

namespace gslb::server::cluster {

namespace {
// Every change of a big config, with room to spare; far more is not a peer talking.
constexpr size_t kMaxBody = 16 * 1024 * 1024;
}  // namespace

struct AdminSync::Impl {
    struct Peer {
        std::string url;
        std::unique_ptr<HttpClient> http;
        std::unique_ptr<PollTimers> timers;
        bool failing = false;
        bool inRound = false;  // counted in `pending` by runInitialRound
    };

    event_base* base;
    Adopt adopt;
    std::map<std::string, std::unique_ptr<Peer>> peers;  // by URL
    size_t pending = 0;                                  // peers runInitialRound still waits for

    void apply(const Snapshot& s) {
        const ClusterConf& c = s.config.cluster;
        std::map<std::string, bool> keep;
        if (c.enabled && c.selfIndex >= 0)
            for (size_t i = 0; i < c.members.size(); ++i) {
                if (int(i) == c.selfIndex) continue;
                const ClusterMember& m = c.members[i];
                keep[m.url] = true;
                if (peers.count(m.url)) continue;
                char host[NI_MAXHOST], serv[NI_MAXSERV];
                if (getnameinfo(reinterpret_cast<const sockaddr*>(&m.addr.addr), m.addr.len, host,
                                sizeof host, serv, sizeof serv, NI_NUMERICHOST | NI_NUMERICSERV) != 0)
                    continue;  // the config checked the address
                auto p = std::make_unique<Peer>();
                Peer* raw = p.get();
                p->url = m.url;
                p->http = std::make_unique<HttpClient>(base, host, std::atoi(serv));
                p->http->setMaxBody(kMaxBody);
                p->http->setTimeout(kTimeoutSec);
                p->timers = std::make_unique<PollTimers>(
                    base, [this, raw] { poll(*raw); },
                    [this, raw] {
                        raw->http->cancel();
                        finish(*raw, fmt::format("no answer within {} s", kTimeoutSec), nullptr);
                    });
                peers.emplace(m.url, std::move(p));
                poll(*raw);
            }
        for (auto it = peers.begin(); it != peers.end();)
            it = keep.count(it->first) ? std::next(it) : peers.erase(it);
    }

    void poll(Peer& p) {
        if (p.http->inFlight() > 0) return;
        p.timers->deadlineIn(kTimeoutSec + 0.1);
        Peer* raw = &p;
        if (!p.http->send(EVHTTP_REQ_GET, "/v1/admin",
                          {{"Accept", "application/json"}, {"User-Agent", "gslbd"}}, "",
                          [this, raw](const HttpAnswer& a) {
                              raw->timers->clearDeadline();
                              if (a.status == 200)
                                  finish(*raw, "", &a.body);
                              else
                                  finish(*raw,
                                         a.status ? fmt::format("http {}", a.status)
                                                  : std::string("connect or read failed"),
                                         nullptr);
                          })) {
            p.timers->clearDeadline();
            finish(p, "cannot start the request", nullptr);
        }
    }

    void finish(Peer& p, std::string error, const std::string* body) {
        std::vector<RemoteChange> changes;
        if (error.empty() && body) error = parseAdminChanges(*body, changes);
        if (error.empty()) {
            if (p.failing) log::info("cluster: admin state of {} read again", p.url);
            p.failing = false;
            adopt(changes, p.url);
        } else if (!p.failing) {
            p.failing = true;
            log::info("cluster: cannot read the admin state of {} ({}); trying again every {} s", p.url,
                      error, kIntervalSec);
        }
        if (p.inRound) {
            p.inRound = false;
            --pending;
        }
        p.timers->nextRoundIn(kIntervalSec);
    }

    static void onDeadline(evutil_socket_t, short, void* arg) { *static_cast<bool*>(arg) = true; }

    void runInitialRound() {
        if (peers.empty()) return;
        for (auto& [url, p] : peers) {
            p->inRound = true;
            ++pending;
        }
        for (auto& [url, p] : peers) poll(*p);  // apply() started them; a poll in flight is not sent twice
        bool expired = false;
        event* deadline = evtimer_new(base, onDeadline, &expired);
        timeval tv = toTimeval(kInitialWaitSec);
        evtimer_add(deadline, &tv);
        while (pending > 0 && !expired) event_base_loop(base, EVLOOP_ONCE);
        event_free(deadline);
        for (auto& [url, p] : peers)
            if (p->inRound)
                log::info(
                    "cluster: no answer from {} within {} s at start; answering with the drains this "
                    "member knows (its poll goes on)",
                    url, kInitialWaitSec);
        for (auto& [url, p] : peers) p->inRound = false;
        pending = 0;
    }
};

AdminSync::AdminSync(event_base* base, Adopt adopt) : impl_(std::make_unique<Impl>()) {
    impl_->base = base;
    impl_->adopt = std::move(adopt);
}
AdminSync::~AdminSync() = default;

void AdminSync::apply(const Snapshot& snap) {
    impl_->apply(snap);
}
void AdminSync::runInitialRound() {
    impl_->runInitialRound();
}

}  // namespace gslb::server::cluster
