// AdminSync (contract in admin_sync.hpp).
#include "server/cluster/admin_sync.hpp"

#include "server/base/clock.hpp"
#include "server/base/log.hpp"

namespace gslb::server::cluster {

namespace {
// Every change of a big config, with room to spare; far more is not a peer talking.
constexpr size_t kMaxBody = 16 * 1024 * 1024;
}  // namespace

struct AdminSync::Impl {
    struct Peer {
        std::unique_ptr<PeerPoller> poller;
        uint64_t changesApplied = 0;
        bool inRound = false;  // counted in `pending` by runInitialRound
    };

    event_base* base;
    Adopt adopt;
    std::map<std::string, std::unique_ptr<Peer>> peers;  // by URL
    size_t pending = 0;                                  // peers runInitialRound still waits for

    void apply(const ClusterConf& c) {
        std::map<std::string, bool> keep;
        // With etcd the drains travel there (etcd_sync.hpp): no peer is polled.
        if (c.enabled && c.selfIndex >= 0 && c.etcd.empty())
            for (size_t i = 0; i < c.members.size(); ++i) {
                if (int(i) == c.selfIndex) continue;
                const ClusterMember& m = c.members[i];
                keep[m.url] = true;
                if (peers.count(m.url)) continue;
                auto p = std::make_unique<Peer>();
                Peer* raw = p.get();
                // The deadline a little past evhttp's own timeout: evhttp's error says more.
                p->poller = PeerPoller::make(
                    base, m, "/v1/admin", kMaxBody, PollTiming{kTimeoutSec, kTimeoutSec + 0.1, kIntervalSec},
                    [this, raw, url = m.url](const std::string& body) {
                        std::vector<RemoteChange> changes;
                        std::string error = parseAdminChanges(body, changes);
                        if (error.empty()) raw->changesApplied += adopt(changes, url);
                        return error;
                    },
                    [this, raw](const std::string& error, const std::string& before) {
                        finished(*raw, error, before);
                    });
                if (!p->poller) continue;  // the config checked the address
                peers.emplace(m.url, std::move(p));
                raw->poller->poll();
            }
        for (auto it = peers.begin(); it != peers.end();)
            it = keep.count(it->first) ? std::next(it) : peers.erase(it);
    }

    void finished(Peer& p, const std::string& error, const std::string& before) {
        const std::string& url = p.poller->status().url;
        if (error.empty() && before == "failing")
            log::info("cluster: admin state of {} read again", url);
        else if (!error.empty() && before != "failing")
            log::info("cluster: cannot read the admin state of {} ({}); trying again every {} s", url, error,
                      kIntervalSec);
        if (p.inRound) {
            p.inRound = false;
            --pending;
        }
    }

    static void onDeadline(evutil_socket_t, short, void* arg) { *static_cast<bool*>(arg) = true; }

    void runInitialRound() {
        if (peers.empty()) return;
        for (auto& [url, p] : peers) {
            p->inRound = true;
            ++pending;
        }
        for (auto& [url, p] : peers)
            p->poller->poll();  // apply() started them; one in flight is not sent twice
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

void AdminSync::apply(const ClusterConf& cluster) {
    impl_->apply(cluster);
}
void AdminSync::runInitialRound() {
    impl_->runInitialRound();
}

std::vector<AdminSyncStatus> AdminSync::status() const {
    std::vector<AdminSyncStatus> out;
    for (const auto& [url, p] : impl_->peers) {
        AdminSyncStatus st;
        static_cast<PollStatus&>(st) = p->poller->status();
        st.changesApplied = p->changesApplied;
        out.push_back(std::move(st));
    }
    return out;
}

}  // namespace gslb::server::cluster
