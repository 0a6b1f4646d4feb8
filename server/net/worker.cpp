#include "server/net/worker.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <random>

#include "server/base/log.hpp"
#include "server/net/bind_error.hpp"
#include "server/net/udp.hpp"
#include "server/net/xdp/path.hpp"

namespace gslb::server {
namespace {

// Worker::nudge's signal: it interrupts a UDP thread's blocking recvmmsg (EINTR), nothing else. Blocked in
// every other thread (Worker::start), so a stray `kill` of it reaches only the UDP threads, which ignore it.
int nudgeSignal() {
    return SIGRTMIN + 1;
}
void onNudge(int) {}

uint64_t laneSeed(size_t row) {
    return uint64_t(std::random_device{}()) << 32 | uint64_t(row);
}

// The loop's event priorities (libevent runs every active callback of priority 0 before any of 1, and so on).
// Everything runs at libevent's default, the middle one, but a TLS handshake (Worker::kHandshakePriority,
// tls.cpp): its public-key operations cost a few hundred microseconds of CPU each, the most a client can ask
// of the loop without sending a query, so a burst of them (500 ClientHellos) held TCP queries and established
// TLS connections behind it for up to 1.5 s on the loaded test machine. A handshake's callbacks run last, and
// at most kHandshakesPerPass of them before the loop polls again for the others' events.
constexpr int kPriorities = 3;
constexpr int kHandshakesPerPass = 8;

event_base* newLoop() {
    event_config* cfg = event_config_new();
    event_config_set_max_dispatch_interval(cfg, nullptr, kHandshakesPerPass, Worker::kHandshakePriority);
    event_base* b = event_base_new_with_config(cfg);
    event_config_free(cfg);
    if (b) event_base_priority_init(b, kPriorities);
    return b;
}

}  // namespace

Worker::Worker(int id, Shared& shared)
    : id_(id), shared_(shared), responder_(shared, size_t(id), laneSeed(size_t(id))) {
    base_ = newLoop();
    tcpOut_.resize(kTcpOut);
    wake_ = event_new(base_, -1, 0, onWake, this);
    shared_.tcp[id_].wake = wake_;
    for (int n = shared_.workers.load(); n < id_ + 1 && !shared_.workers.compare_exchange_weak(n, id_ + 1);) {
    }
}

Worker::~Worker() {
    for (auto* e : xdp_) event_free(e);
    stop();  // the UDP threads use the sockets and their responders
    // A wake-up another worker queued after this one stopped would run in the last pass below and break it
    // (onWake ends the loop once stopping_ is set) before the finalizers that pass is for.
    if (wake_) event_del(wake_);
    for (auto& u : udp_)
        if (u->fd >= 0) close(u->fd);
    for (auto* l : tcp_) evconnlistener_free(l);
    for (auto* l : tls_) evconnlistener_free(l);
    while (oldest_) closeConn(oldest_);  // the loop has stopped: nothing else refers to them
    // A TLS connection's bufferevent is freed when its last reference goes, and a deferred callback the
    // loop had not run when it stopped holds one: event_base_free cancels such callbacks without running
    // them, so the bufferevent and its SSL would never be freed (LeakSanitizer saw it at SIGTERM under a
    // TLS flood). One pass that does not block runs them and the finalizers they schedule.
    if (base_) event_base_loop(base_, EVLOOP_NONBLOCK);
    shared_.tcp[id_].wake = nullptr;
    if (wake_) event_free(wake_);
    if (base_) event_base_free(base_);
}

bool Worker::open(const std::vector<ListenAddr>& listen, std::string& error) {
    const ServerConf& sc = shared_.holder.get()->config.server;
    for (const auto& a : listen) {
        int fam = a.addr.ss_family;
        int fd = socket(fam, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            error = fmt::format("{}: udp socket: {}", a.text, strerror(errno));
            return false;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
        if (fam == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
        // Answers never fragment and never trust ICMP: PROBE sets DF (IPv6: no fragment header) and sends up
        // to the interface MTU whatever "fragmentation needed" / "packet too big" messages say, so a spoofed
        // ICMP cannot shrink our datagrams into fragments (the fragment-poisoning attacks RFC 9715 §1 cites;
        // BIND sets DF since DNS Flag Day 2020 for the same reason). An answer that does not fit the link
        // fails with EMSGSIZE and goes out as TC instead (RFC 9715 §3.1 R3): the resolver asks again over
        // TCP. With DF set, Linux also gives IPv4 datagrams ID 0 (RFC 6864 §4.1: an atomic datagram's ID
        // means nothing) instead of hashing the addresses into its shared ID table per datagram
        // (__ip_select_ident, 4 % of a busy worker's samples). gdnsd and Knot use OMIT (no DF, fragments
        // allowed), which still pays for the IDs.
        int pmtu = fam == AF_INET ? IP_PMTUDISC_PROBE : IPV6_PMTUDISC_PROBE;
        if (fam == AF_INET)
            setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof pmtu);
        else
            setsockopt(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &pmtu, sizeof pmtu);
        if (a.wildcard) {
            // On a wildcard address the reply must leave from the address the query came to.
            if (fam == AF_INET)
                setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof one);
            else
                setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof one);
        }
        if (bind(fd, reinterpret_cast<const sockaddr*>(&a.addr), a.len) != 0) {
            error = bindError(a, "udp", errno, unprivilegedPortStart());
            close(fd);
            return false;
        }
        size_t row = answerRow(sc, id_, 1 + udp_.size());
        auto u = std::make_unique<UdpSocket>(shared_, row, laneSeed(row));
        u->fd = fd;
        u->wildcard = a.wildcard;
        u->family = fam;
        udp_.push_back(std::move(u));

        if (!listenOn(a, onAccept, "tcp", tcp_, error)) return false;
    }
    return true;
}

bool Worker::listenOn(const ListenAddr& a, evconnlistener_cb cb, const char* what,
                      std::vector<evconnlistener*>& into, std::string& error) {
    unsigned flags =
        LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC | LEV_OPT_REUSEABLE | LEV_OPT_REUSEABLE_PORT;
    if (a.addr.ss_family == AF_INET6) flags |= LEV_OPT_BIND_IPV6ONLY;
    evconnlistener* l = evconnlistener_new_bind(base_, cb, this, flags, 256,
                                                reinterpret_cast<const sockaddr*>(&a.addr), int(a.len));
    if (!l) {
        error = bindError(a, what, errno, unprivilegedPortStart());
        return false;
    }
    into.push_back(l);
    return true;
}

bool Worker::openTls(const std::vector<ListenAddr>& listen, std::string& error) {
    for (const auto& a : listen)
        if (!listenOn(a, onTlsAccept, "tls", tls_, error)) return false;
    return true;
}

void Worker::addXdp(xdp::Queue* q) {
    event* e = event_new(base_, xdp::queueFd(q), EV_READ | EV_PERSIST, onXdp, q);
    event_add(e, nullptr);
    xdp_.push_back(e);
}

void Worker::onXdp(evutil_socket_t, short, void* arg) {
    xdp::serve(static_cast<xdp::Queue*>(arg));
}

void Worker::start() {
    // The nudge signal interrupts; it never restarts (no SA_RESTART) a system call. Blocked in the calling
    // thread (the main one) and so in the loop thread, unblocked in the UDP threads alone.
    struct sigaction sa {};
    sa.sa_handler = onNudge;
    sigemptyset(&sa.sa_mask);
    sigaction(nudgeSignal(), &sa, nullptr);
    sigset_t nudge;
    sigemptyset(&nudge);
    sigaddset(&nudge, nudgeSignal());
    pthread_sigmask(SIG_BLOCK, &nudge, nullptr);
    // Named for top -H and perf: "gslbd-w0" is worker 0's loop, "gslbd-w0u1" its thread on listen[1].
    thread_ = std::thread([this] {
        pthread_setname_np(pthread_self(), fmt::format("gslbd-w{}", id_).c_str());
        event_base_dispatch(base_);
    });
    for (size_t i = 0; i < udp_.size(); ++i)
        udp_[i]->thread = std::thread([this, i, s = udp_[i].get(), nudge] {
            pthread_setname_np(pthread_self(), fmt::format("gslbd-w{}u{}", id_, i).c_str());
            pthread_sigmask(SIG_UNBLOCK, &nudge, nullptr);
            serveUdp(*s);
        });
}

void Worker::nudge() {
    for (auto& u : udp_)
        if (u->thread.joinable()) pthread_kill(u->thread.native_handle(), nudgeSignal());
}

void Worker::stop() {
    stopping_.store(true, std::memory_order_relaxed);
    nudge();
    for (auto& u : udp_) {
        if (!u->thread.joinable()) continue;
        // Wakes a thread blocked in recvmmsg: a shut-down socket's receive returns at once (0 octets once
        // its queue is empty). One that is answering a flood sees stopping_ after its batch.
        shutdown(u->fd, SHUT_RDWR);
        u->thread.join();
    }
    // The loop thread ends its loop itself, in onWake (tcp.cpp): an event made active waits in the loop's
    // queue until the loop runs, whereas event_base_loopbreak() from here is forgotten when the thread has
    // not entered event_base_loop() yet (libevent clears event_break as a loop starts), and that thread then
    // waits in epoll_wait for ever: a stop right after the start on a loaded machine never returned.
    // Only while the thread is there to run it: the destructor's last pass over the loop must not meet a
    // break before the callbacks it runs.
    if (thread_.joinable()) {
        event_active(wake_, EV_READ, 0);  // thread-safe: the base was made after evthread_use_pthreads()
        thread_.join();
    }
}

}  // namespace gslb::server
