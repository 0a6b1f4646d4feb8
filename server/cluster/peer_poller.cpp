// PeerPoller (contract in peer_poller.hpp).
#include "server/cluster/peer_poller.hpp"

#include <fmt/format.h>
#include <netdb.h>

#include <cstdlib>

#include "server/base/clock.hpp"
#include "server/state/gslb.hpp"
#include "server/base/http_client.hpp"

namespace gslb::server::cluster {

namespace {

const char* requestError(evhttp_request_error e) {
    return e == EVREQ_HTTP_TIMEOUT          ? "timeout"
           : e == EVREQ_HTTP_EOF            ? "connection closed early"
           : e == EVREQ_HTTP_INVALID_HEADER ? "invalid response header"
           : e == EVREQ_HTTP_DATA_TOO_LONG  ? "answer too large"
                                            : "connect or read failed";
}

}  // namespace

std::unique_ptr<PeerPoller> PeerPoller::make(event_base* base, const ClusterMember& member, std::string path,
                                             size_t maxBody, PollTiming timing, TakeBody take, Done done) {
    char host[NI_MAXHOST], serv[NI_MAXSERV];
    if (getnameinfo(reinterpret_cast<const sockaddr*>(&member.addr.addr), member.addr.len, host, sizeof host,
                    serv, sizeof serv, NI_NUMERICHOST | NI_NUMERICSERV) != 0)
        return nullptr;
    std::unique_ptr<PeerPoller> p(new PeerPoller);
    PeerPoller* raw = p.get();
    p->path_ = std::move(path);
    p->timing_ = timing;
    p->take_ = std::move(take);
    p->done_ = std::move(done);
    p->st_.url = member.url;
    p->http_ = std::make_unique<HttpClient>(base, host, std::atoi(serv));
    p->http_->setMaxBody(maxBody);
    p->timers_ = std::make_unique<PollTimers>(
        base, [raw] { raw->poll(); },
        [raw] {
            raw->http_->cancel();
            raw->finish(fmt::format("timeout after {} s", raw->timing_.timeoutSec), nullptr);
        });
    return p;
}

PeerPoller::~PeerPoller() {
    timers_.reset();
    http_.reset();  // cancels the poll in flight: its callback is not called
}

void PeerPoller::poll() {
    if (http_->inFlight() > 0) return;
    http_->setTimeout(timing_.timeoutSec);
    timers_->deadlineIn(timing_.deadlineSec);
    if (!http_->send(EVHTTP_REQ_GET, path_, {{"Accept", "application/json"}, {"User-Agent", "gslbd"}}, "",
                     [this](const HttpAnswer& a) { answered(a); })) {
        timers_->clearDeadline();
        finish("cannot start the request", nullptr);
    }
}

void PeerPoller::answered(const HttpAnswer& a) {
    timers_->clearDeadline();
    if (a.status == 0)
        finish(a.failed ? requestError(a.error) : "connect or read failed", nullptr);
    else if (a.status != 200)
        finish(fmt::format("http {}", a.status), nullptr);
    else
        finish("", &a.body);
}

void PeerPoller::finish(std::string error, const std::string* body) {
    ++st_.polls;
    if (error.empty() && body) error = take_(*body);
    const std::string before = st_.state;
    if (error.empty()) {
        st_.state = "ok";
        st_.lastSuccessMonoMs = monotonicMs();
        st_.lastSuccessUnixMs = wallMs();
    } else {
        ++st_.failures;
        st_.lastError = error;
        st_.state = "failing";
    }
    timers_->nextRoundIn(timing_.intervalSec);
    done_(error, before);
}

}  // namespace gslb::server::cluster
