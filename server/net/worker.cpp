#include "server/net/worker.hpp"

#include <event2/buffer.h>
#include <event2/bufferevent_ssl.h>
#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <climits>
#include <chrono>
#include <cstring>
#include <ctime>
#include <random>

#include "server/base/log.hpp"
#include "server/net/stream_buffer.hpp"
#include "server/net/xdp/path.hpp"
#include "server/state/tls_context.hpp"
#include "server/responder/acl.hpp"
#include "zones/axfr.hpp"

namespace gslb::server {
namespace {

constexpr int kBatch = Worker::kUdpBatch;  // datagrams per recvmmsg/sendmmsg
constexpr size_t kRecvSize = 4096;       // a query larger than this is truncated by the kernel, then FORMERR
constexpr size_t kSendSize = 65536;      // room for one answer (answer() wants up to 65535 octets)
constexpr size_t kTcpOutHigh = 1 << 20;  // stop reading a TCP client that does not read its answers
constexpr size_t kTcpMsgMax = 65535;     // an answer over TCP (RFC 1035 §4.2.2: a two-octet length)
// Staged answers of one read: flushed before a next answer could not fit whole (prefix included).
constexpr size_t kTcpOut = 4 * (kTcpMsgMax + 2);
// An AXFR is written as the client drains it: messages are generated while less than kAxfrHigh octets wait
// in the connection's output, and again when the output falls to kAxfrLow. A client that stops reading so
// costs at most kAxfrHigh plus one message, whatever the size of the zone (the kernel's socket buffer aside).
// Messages of up to 64 KiB, written straight into the output buffer's memory: 16 KiB messages would halve
// that memory (libevent allocates in powers of two) but made kdig's AXFR of a 100k-record zone 60 % slower.
constexpr size_t kAxfrMsg = 65535;
constexpr size_t kAxfrHigh = 48 << 10;
constexpr size_t kAxfrLow = 16 << 10;
constexpr size_t kCmsgSpace = 64;
constexpr size_t kAnswerAlign = 64;  // a cache line

// Worker::nudge's signal: it interrupts a UDP thread's blocking recvmmsg (EINTR), nothing else. Blocked in
// every other thread (Worker::start), so a stray `kill` of it reaches only the UDP threads, which ignore it.
int nudgeSignal() {
    return SIGRTMIN + 1;
}
void onNudge(int) {}

int64_t nowMs() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// Microseconds for the least-recently-active order: queries on loopback come less than a millisecond
// apart, and with millisecond stamps two connections on different workers tied, so makeRoom() could
// close the one just used rather than the idle one (e2e-core test_connection_limit, flaky on a quiet run).
int64_t nowUs() {
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

timeval toTimeval(int64_t ms) {
    return timeval{time_t(ms / 1000), suseconds_t(ms % 1000 * 1000)};
}

bool exempt(const RrlConf& conf, const sockaddr_storage* peer) {
    for (const auto& p : conf.exempt)
        if (p.matches(reinterpret_cast<const sockaddr*>(peer))) return true;
    return false;
}

// A transfer over the server's caps (SERVFAIL): no RFC 8914 code is about load; "Other" says it in words.
constexpr zones::Ede kEdeBusy{zones::Ede::kOther, "too many zone transfers in flight; retry later"};

uint64_t unixNow() {
    return uint64_t(time(nullptr));  // TSIG's Time Signed is wall-clock seconds (RFC 8945 §4.2)
}

std::string peerText(const sockaddr* sa) {
    char buf[INET6_ADDRSTRLEN] = "?";
    if (sa->sa_family == AF_INET) {
        const auto* s4 = reinterpret_cast<const sockaddr_in*>(sa);
        inet_ntop(AF_INET, &s4->sin_addr, buf, sizeof buf);
        return fmt::format("{}:{}", buf, ntohs(s4->sin_port));
    }
    if (sa->sa_family == AF_INET6) {
        const auto* s6 = reinterpret_cast<const sockaddr_in6*>(sa);
        inet_ntop(AF_INET6, &s6->sin6_addr, buf, sizeof buf);
        return fmt::format("[{}]:{}", buf, ntohs(s6->sin6_port));
    }
    return buf;
}

}  // namespace

struct Worker::UdpSocket {
    UdpSocket(size_t row, uint64_t seed) : lane(row, seed) {}
    int fd = -1;  // blocking: its thread waits in recvmmsg
    bool wildcard = false;
    int family = AF_INET;
    Lane lane;
    std::thread thread;
};

// One batch of datagrams: what recvmmsg fills, the answers, and what sendmmsg sends. Made once per worker:
// the headers' pointers never change, so a batch only resets what the kernel wrote into the headers it
// filled (msg_namelen, msg_controllen), instead of building 32 of them per wake-up (at a fixed load of a few
// queries per wake-up, that setup was a fifth of the worker's instructions per query). Answers are packed
// one after another (answerDatagrams), each with kSendSize of room as answer() wants: a batch of small
// answers touches a few cache lines instead of the first line of 32 slots 64 KiB apart, which all fall in
// the same cache set. The query buffers are kRecvSize + one line apart for the same reason.
struct Worker::UdpBatch {
    static constexpr size_t kRecvStride = kRecvSize + kAnswerAlign;
    mmsghdr in[kBatch];
    iovec iin[kBatch];
    sockaddr_storage peers[kBatch];
    alignas(cmsghdr) uint8_t cin[kBatch][kCmsgSpace];
    mmsghdr out[kBatch]{};
    iovec iout[kBatch];
    alignas(cmsghdr) uint8_t cout[kBatch][kCmsgSpace];
    Datagram dg[kBatch];
    zones::AnswerResult* results[kBatch];  // out[m] answers *results[m]
    RateLimiter::Slot slots[kBatch];       // answerDatagrams' RRL buckets
    bool limitable[kBatch];
    int filled = 0;      // headers of in[] the last recvmmsg wrote into
    size_t control = 0;  // the msg_controllen in[] are set up with (0: no IP_PKTINFO on that socket)
    std::unique_ptr<uint8_t[]> queries{new uint8_t[kBatch * kRecvStride]};
    // kBatch answers of kSendSize each, packed (answerDatagrams).
    std::unique_ptr<uint8_t[]> answers{new uint8_t[kBatch * (kSendSize + kAnswerAlign)]};

    UdpBatch() {
        for (int i = 0; i < kBatch; ++i) {
            iin[i] = {queries.get() + size_t(i) * kRecvStride, kRecvSize};
            std::memset(&in[i].msg_hdr, 0, sizeof(msghdr));
            in[i].msg_hdr.msg_name = &peers[i];
            in[i].msg_hdr.msg_namelen = sizeof(sockaddr_storage);
            in[i].msg_hdr.msg_iov = &iin[i];
            in[i].msg_hdr.msg_iovlen = 1;
            in[i].msg_hdr.msg_control = cin[i];
            in[i].msg_hdr.msg_controllen = 0;
        }
    }
    // Before a recvmmsg on a socket whose control messages need `ctl` octets (0: none are asked for).
    void prepare(size_t ctl) {
        int reset = ctl == control ? filled : kBatch;  // another kind of socket: every header
        for (int i = 0; i < reset; ++i) {
            in[i].msg_hdr.msg_namelen = sizeof(sockaddr_storage);
            in[i].msg_hdr.msg_controllen = ctl;
        }
        control = ctl;
        filled = 0;
    }
};

// A transfer in flight: the snapshot it reads (kept alive across a reload, so the zone stays valid until
// the transfer ends) and the cursor.
struct AxfrJob {
    std::shared_ptr<const Snapshot> snap;
    zones::AxfrWriter writer;
    zones::TsigSession tsig;  // a signed transfer: every message signed, each MAC chained (RFC 8945 §5.3.1)
};

// One TCP connection. Its read event stays in the loop for the connection's life (no epoll_ctl per query);
// write interest is added only while `out` holds octets the kernel did not take.
struct Worker::TcpConn {
    Worker* worker = nullptr;
    int fd = -1;
    event* rev = nullptr;     // EV_READ | EV_PERSIST, its timeout the idle one or the message's time left
    event* wev = nullptr;     // EV_WRITE | EV_PERSIST, added while `out` is not empty, idle timeout
    evbuffer* out = nullptr;  // answers the kernel has not taken yet, in order
    bool reading = false;     // rev is in the loop
    bool writing = false;     // wev is in the loop
    StreamBuffer in;          // read and not yet answered (allocated when the connection can carry messages)
    sockaddr_storage peer{};
    ClientCounter::Key client;  // its unit in shared_.tcpPerClient, given back by closeConn
    bool axfrCounted = false;   // the transfer holds a unit in shared_.axfrPerClient, given back by endAxfr
    bool closing = false;       // nothing more is read; closed once `out` is written
    std::unique_ptr<AxfrJob> axfr;  // while set, reading is off: later queries wait for the transfer's end
    int64_t lastActive = 0;         // steady µs: accepted, a whole message read, or a transfer progressed
    int64_t messageStart = 0;       // steady ms when the message being read began; 0: none under way
    bool shortTimeout = false;      // rev's timeout is the message's remaining time, not the idle one
    TcpConn* older = nullptr;       // the worker's list, least recently active first
    TcpConn* newer = nullptr;
    // DNS over TLS (RFC 7858): OpenSSL through libevent's bufferevent_openssl; null for plain TCP (then `fd`,
    // `rev`, `wev` and an `out` of its own). `out` is the bufferevent's output; what TLS decrypted is moved
    // into `in` and framed as TCP's is. `in` is allocated once the handshake is done: a flood of handshakes
    // costs OpenSSL's state and no more.
    bufferevent* bev = nullptr;
    event* deadline = nullptr;  // TLS: the handshake's, then a message's time limit (tcp_message_timeout)
    bool handshaken = false;
    // The client's certificate verified against tls_client_ca (XoT, RFC 9103 §9.3.3).
    bool clientCert = false;
};

Worker::Lane::Lane(size_t r, uint64_t seed)
    : row(r), selector(r, seed), batch(std::make_unique<UdpBatch>()) {}
Worker::Lane::~Lane() = default;

namespace {
uint64_t laneSeed(size_t row) {
    return uint64_t(std::random_device{}()) << 32 | uint64_t(row);
}

// The loop's event priorities (libevent runs every active callback of priority 0 before any of 1, and so on).
// Everything runs at libevent's default, the middle one, but a TLS handshake: its public-key operations cost
// a few hundred microseconds of CPU each, the most a client can ask of the loop without sending a query, so
// a burst of them (500 ClientHellos) held TCP queries and established TLS connections behind it for up to
// 1.5 s on the loaded test machine. A handshake's callbacks run last, and at most kHandshakesPerPass of them
// before the loop polls again for the others' events.
constexpr int kPriorities = 3;
constexpr int kHandshakePriority = 2;
constexpr int kHandshakesPerPass = 8;

event_base* newLoop() {
    event_config* cfg = event_config_new();
    event_config_set_max_dispatch_interval(cfg, nullptr, kHandshakesPerPass, kHandshakePriority);
    event_base* b = event_base_new_with_config(cfg);
    event_config_free(cfg);
    if (b) event_base_priority_init(b, kPriorities);
    return b;
}
}  // namespace

Worker::Worker(int id, Shared& shared) : id_(id), shared_(shared), lane_(size_t(id), laneSeed(size_t(id))) {
    base_ = newLoop();
    tcpOut_.resize(kTcpOut);
    wake_ = event_new(base_, -1, 0, onWake, this);
    shared_.tcp[id_].wake = wake_;
    for (int n = shared_.workers.load(); n < id_ + 1 && !shared_.workers.compare_exchange_weak(n, id_ + 1);) {
    }
}

Worker::~Worker() {
    for (auto* e : xdp_) event_free(e);
    stop();  // the UDP threads use the sockets and the Lanes
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

const Snapshot& Worker::snapshot(Lane& lane) {
    if (shared_.holder.generation() == lane.gen) return *lane.snap;
    // Selector::rebind compares the new hostnames with the old ones: the old snapshot lives until it has.
    std::shared_ptr<const Snapshot> old = lane.snap;
    uint64_t before = lane.gen;
    shared_.holder.refresh(lane.snap, lane.gen);
    if (lane.gen != before) lane.selector.rebind(&lane.snap->gslb);
    return *lane.snap;
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
            error = fmt::format("{}: udp bind: {}", a.text, strerror(errno));
            close(fd);
            return false;
        }
        size_t row = answerRow(sc, id_, 1 + udp_.size());
        auto u = std::make_unique<UdpSocket>(row, laneSeed(row));
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
        error = fmt::format("{}: {} bind: {}", a.text, what, strerror(errno));
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
    if (base_) event_base_loopbreak(base_);
    if (thread_.joinable()) thread_.join();
}

void Worker::serveUdp(UdpSocket& u) {
    Lane& lane = u.lane;
    UdpBatch& b = *lane.batch;
    const int fd = u.fd;
    const size_t control = u.wildcard ? kCmsgSpace : 0;
    // Blocks until a datagram is queued, then takes whatever else is (MSG_WAITFORONE): the batch grows with
    // the load by itself. A reload is seen at the next batch (snapshot() compares one counter). An idle
    // thread is interrupted by nudge() after a reload (EINTR) to let go of the snapshot it replaced: a socket
    // nobody queries (say, the ::1 one) would otherwise keep every replaced zone set in memory. No receive
    // timeout instead: its timer, armed and deleted at every block, was 0.5 % of the thread's CPU samples.
    while (!stopping_.load(std::memory_order_relaxed)) {
        b.prepare(control);
        int n = recvmmsg(fd, b.in, kBatch, MSG_WAITFORONE, nullptr);
        if (n <= 0) {
            if (n < 0 && errno == EINTR) {
                snapshot(lane);  // nudged
                continue;
            }
            if (n < 0 && errno != EAGAIN && errno != ENOMEM && errno != ENOBUFS) {
                // Nothing else is expected of a bound UDP socket; do not spin on it.
                if (!stopping_.load(std::memory_order_relaxed))
                    log::warn("udp recvmmsg: {}", strerror(errno));
                usleep(10000);
            }
            continue;
        }
        if (stopping_.load(std::memory_order_relaxed)) return;
        b.filled = n;
        const Snapshot& snap = snapshot(lane);
        Datagram* dg = b.dg;
        for (int i = 0; i < n; ++i) {
            dg[i].query = {reinterpret_cast<uint8_t*>(b.iin[i].iov_base), b.in[i].msg_len};
            dg[i].peer = &b.peers[i];
            dg[i].out = nullptr;  // packed by answerDatagrams
        }
        answerDatagrams(lane, snap, dg, n);
        int m = 0;
        for (int i = 0; i < n; ++i) {
            if (dg[i].res.len == 0) continue;
            b.results[m] = &dg[i].res;
            b.iout[m] = {dg[i].out, dg[i].res.len};
            msghdr& oh = b.out[m].msg_hdr;
            oh.msg_name = &b.peers[i];
            oh.msg_namelen = b.in[i].msg_hdr.msg_namelen;
            oh.msg_iov = &b.iout[m];
            oh.msg_iovlen = 1;
            oh.msg_control = nullptr;
            oh.msg_controllen = 0;
            if (u.wildcard) {
                // Echo the destination address back as the source (IP_PKTINFO / IPV6_PKTINFO).
                msghdr& ih = b.in[i].msg_hdr;
                for (cmsghdr* c = CMSG_FIRSTHDR(&ih); c; c = CMSG_NXTHDR(&ih, c)) {
                    if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
                        in_pktinfo pi;
                        std::memcpy(&pi, CMSG_DATA(c), sizeof pi);
                        pi.ipi_spec_dst = pi.ipi_addr;
                        oh.msg_control = b.cout[m];
                        oh.msg_controllen = CMSG_SPACE(sizeof pi);
                        cmsghdr* oc = CMSG_FIRSTHDR(&oh);
                        oc->cmsg_level = IPPROTO_IP;
                        oc->cmsg_type = IP_PKTINFO;
                        oc->cmsg_len = CMSG_LEN(sizeof pi);
                        std::memcpy(CMSG_DATA(oc), &pi, sizeof pi);
                    } else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO) {
                        in6_pktinfo pi;
                        std::memcpy(&pi, CMSG_DATA(c), sizeof pi);
                        oh.msg_control = b.cout[m];
                        oh.msg_controllen = CMSG_SPACE(sizeof pi);
                        cmsghdr* oc = CMSG_FIRSTHDR(&oh);
                        oc->cmsg_level = IPPROTO_IPV6;
                        oc->cmsg_type = IPV6_PKTINFO;
                        oc->cmsg_len = CMSG_LEN(sizeof pi);
                        std::memcpy(CMSG_DATA(oc), &pi, sizeof pi);
                    }
                }
            }
            ++m;
        }
        for (int sent = 0; sent < m;) {
            int r = sendmmsg(fd, b.out + sent, unsigned(m - sent), MSG_DONTWAIT);
            if (r <= 0) {
                if (r < 0 && errno == EINTR) continue;
                if (r < 0 && errno == EMSGSIZE) resendTruncated(lane, fd, b.out[sent], *b.results[sent]);
                ++sent;  // drop the datagram that failed (a full socket buffer or an unreachable peer)
                continue;
            }
            sent += r;
        }
    }
}

void Worker::answerDatagrams(Lane& lane, const Snapshot& snap, Datagram* dg, int n) {
    uint32_t now = uint32_t(time(nullptr));  // once per batch: cookie timestamps are in seconds
    timespec mono;
    clock_gettime(CLOCK_MONOTONIC, &mono);
    uint64_t nowNs = uint64_t(mono.tv_sec) * 1000000000u + uint64_t(mono.tv_nsec);
    RateLimiter* rrl = snap.config.rrl.enabled ? shared_.rrl.get() : nullptr;
    // Every query of the batch is answered first, then counted: RRL's locate() prefetches each answer's
    // bucket (a cache miss, most likely), and it arrives while the next queries are answered.
    RateLimiter::Slot* slots = lane.batch->slots;
    bool* limitable = lane.batch->limitable;
    size_t off = 0;  // where the next packed answer goes in lane.batch->answers
    for (int i = 0; i < n; ++i) {
        auto& res = dg[i].res;
        const auto* peer = reinterpret_cast<const sockaddr*>(dg[i].peer);
        bool packed = !dg[i].out;
        if (packed) dg[i].out = lane.batch->answers.get() + off;
        res = zones::answer(snap.db, snap.answer, dg[i].query, false, {dg[i].out, kSendSize}, &lane.selector,
                            zones::ClientInfo{peer, now});
        // The next answer starts after this one, on a fresh cache line. A signed query's response is signed
        // (or replaced by a TSIG error) below, in place and longer: it keeps all its room.
        if (packed) off += res.tsigAt ? kSendSize : (res.len + kAnswerAlign - 1) & ~(kAnswerAlign - 1);
        // RRL: over UDP only, and never for a client whose server cookie proves its address (RFC 7873
        // §5.2.5: a spoofed source cannot have one) or an exempt prefix.
        limitable[i] = rrl && res.action == zones::Action::Send && res.len != 0 &&
                       res.cookie != zones::Cookie::Valid && !exempt(snap.config.rrl, dg[i].peer);
        if (limitable[i]) slots[i] = rrl->locate(snap.config.rrl, peer, res);
    }
    WorkerStats& st = shared_.stats[lane.row];
    for (int i = 0; i < n; ++i) {
        uint8_t* obuf = dg[i].out;
        auto& res = dg[i].res;
        bump(st.udp);
        if (res.action != zones::Action::Send || res.len == 0) {
            bump(st.dropped);
            res.len = 0;
            continue;
        }
        if (res.cookie != zones::Cookie::None) bump(st.cookie[int(res.cookie) - 1]);
        if (limitable[i]) {
            auto v = rrl->account(snap.config.rrl, slots[i], nowNs, lane.slipCount);
            if (v == RateLimiter::Verdict::Drop) {
                bump(st.rrlDropped);
                res.len = 0;
                continue;
            }
            if (v == RateLimiter::Verdict::Slip) {
                bool badCookie = res.cookie != zones::Cookie::None && res.optStart;
                res.len = zones::slip({obuf, kSendSize}, res, badCookie);
                if (badCookie) res.rcode = 23;
                bump(st.rrlSlipped);
            }
        }
        // A signed query: verified, and its response (the slipped one too) signed, last of all.
        if (res.tsigAt) {
            zones::TsigSession ts;
            size_t len = res.len;
            uint8_t rc = res.rcode;
            if (verifyTsig(lane, snap, dg[i].query, res.tsigAt, {obuf, kSendSize}, ts, len, rc,
                           reinterpret_cast<const sockaddr*>(dg[i].peer)))
                len = signAnswer(snap.answer, dg[i].query, {obuf, kSendSize}, len, rc, ts);
            res.len = len;
            res.rcode = rc;
            if (len == 0) {
                bump(st.dropped);
                continue;
            }
        }
        st.count(res.qtype, res.rcode);
        if (obuf[2] & 0x02) bump(st.truncated);
    }
}

void Worker::resendTruncated(Lane& lane, int fd, mmsghdr& m, zones::AnswerResult& res) {
    // The answer is larger than the link's MTU (IP_PMTUDISC_PROBE refuses to fragment it): send the header
    // and question with TC instead, so the client retries over TCP rather than time out. A signed answer is
    // dropped: its TSIG RR cannot be cut off and the short form would need signing again (the client's own
    // retry over TCP is the same outcome, after its timeout).
    if (res.tsigAt || m.msg_hdr.msg_iov[0].iov_len < 12) return;
    auto* p = static_cast<uint8_t*>(m.msg_hdr.msg_iov[0].iov_base);
    res.len = m.msg_hdr.msg_iov[0].iov_len;
    m.msg_hdr.msg_iov[0].iov_len = zones::slip({p, kSendSize}, res, false);
    WorkerStats& st = shared_.stats[lane.row];
    if (sendmsg(fd, &m.msg_hdr, MSG_DONTWAIT) >= 0) bump(st.truncated);
}

bool Worker::admit(evutil_socket_t fd, const sockaddr* sa, ClientCounter::Key& client) {
    const Snapshot& snap = snapshot();
    int limit = snap.config.server.tcpMaxConnections;
    // One client over its own cap is closed at once, before it can make the full-table rule below close
    // another client's connection. Every connection is counted, capped or not, so that a reload that sets
    // the cap finds the counts right.
    int perClient = snap.config.server.tcpMaxConnectionsPerClient;
    client = ClientCounter::keyOf(sa);
    if (!shared_.tcpPerClient.acquire(client, perClient > 0 ? perClient : INT_MAX)) {
        bump(shared_.stats[id_].tcpRefusedPerClient);
        close(fd);
        return false;
    }
    int n = shared_.tcpConnections.fetch_add(1);
    // A full table closes its least recently active connection rather than refuse the newcomer (NSD and
    // Knot do the same): idle or trickling clients alone cannot lock TCP out. The table may run over by
    // one per worker while another worker honours a request to make room.
    if (n >= limit && (n >= limit + shared_.workers.load() || !makeRoom())) {
        shared_.tcpConnections.fetch_sub(1);
        shared_.tcpPerClient.release(client);
        close(fd);
        return false;
    }
    return true;
}

Worker::TcpConn* Worker::newConn(evutil_socket_t fd, const sockaddr* sa, int len, ClientCounter::Key client) {
    auto* c = new TcpConn;
    c->worker = this;
    c->client = client;
    std::memcpy(&c->peer, sa, std::min<size_t>(size_t(len), sizeof c->peer));
    c->fd = fd;
    // Answers go out as soon as they are made, one send() per read: Nagle would hold the second of two
    // answers until the client acknowledged the first (its delayed ACK: up to 40 ms per pipelined batch).
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return c;
}

void Worker::onAccept(evconnlistener*, evutil_socket_t fd, sockaddr* sa, int len, void* arg) {
    auto* w = static_cast<Worker*>(arg);
    ClientCounter::Key client;
    if (!w->admit(fd, sa, client)) return;
    TcpConn* c = w->newConn(fd, sa, len, client);
    c->in.allocate();
    c->out = evbuffer_new();
    c->rev = event_new(w->base_, fd, EV_READ | EV_PERSIST, onTcpReadable, c);
    c->wev = event_new(w->base_, fd, EV_WRITE | EV_PERSIST, onTcpWritable, c);
    w->resumeReading(c);
    w->touch(c);
}

void Worker::onTlsAccept(evconnlistener*, evutil_socket_t fd, sockaddr* sa, int len, void* arg) {
    auto* w = static_cast<Worker*>(arg);
    ClientCounter::Key client;
    if (!w->admit(fd, sa, client)) return;
    const Snapshot& snap = w->snapshot();
    // The snapshot's context: a reload that changed the certificate gives new connections the new one;
    // SSL_new takes a reference, so this connection keeps its context whatever reloads come.
    SSL* ssl = snap.tls ? SSL_new(snap.tls.get()) : nullptr;
    // Deferred callbacks: without them, a write into the output (an answer, a transfer's next message)
    // runs OpenSSL's write and then our write callback inside the call that wrote, and that callback pumps
    // the transfer and reads the next queries: pumpAxfr and processInput would run inside themselves.
    bufferevent* bev = ssl ? bufferevent_openssl_socket_new(w->base_, fd, ssl, BUFFEREVENT_SSL_ACCEPTING,
                                                            BEV_OPT_CLOSE_ON_FREE | BEV_OPT_DEFER_CALLBACKS)
                           : nullptr;
    if (!bev) {
        if (ssl) SSL_free(ssl);
        ERR_clear_error();
        w->shared_.tcpConnections.fetch_sub(1);
        w->shared_.tcpPerClient.release(client);
        close(fd);
        return;
    }
    TcpConn* c = w->newConn(fd, sa, len, client);
    c->bev = bev;
    c->out = bufferevent_get_output(bev);
    // A client that closes without close_notify has only ended its queries (kdig, many resolvers).
    bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
    // Decrypted input waits in the bufferevent only until drainTls moves it: past this, OpenSSL is not read
    // (and the kernel's window closes) while reading is paused (a transfer, or answers the client does not
    // take).
    bufferevent_setwatermark(bev, EV_READ, 0, 2 * StreamBuffer::kInitial);
    // The write callback comes when the output falls to kAxfrLow: a transfer is generated as it drains.
    bufferevent_setwatermark(bev, EV_WRITE, kAxfrLow, 0);
    bufferevent_setcb(bev, onTlsRead, onTlsWrite, onTlsEvent, c);
    // Last in the loop until the handshake is done; bufferevent_openssl then assigns its events anew, at the
    // default priority.
    bufferevent_priority_set(bev, kHandshakePriority);
    // The handshake must be done within tcp_message_timeout, as a message must arrive whole: a client that
    // never finishes it (slowloris) holds its slot that long, no more.
    c->deadline = evtimer_new(w->base_, onTlsDeadline, c);
    timeval hs{snap.config.server.tcpMessageTimeout, 0};
    evtimer_add(c->deadline, &hs);
    bufferevent_enable(bev, EV_READ | EV_WRITE);
    w->touch(c);
}

void Worker::onTlsDeadline(evutil_socket_t, short, void* arg) {
    auto* c = static_cast<TcpConn*>(arg);
    Worker* w = c->worker;
    if (!c->handshaken) {
        bump(w->shared_.stats[w->id_].tlsHandshakeFailed);
        w->logRefusal(w->lane_, fmt::format("TLS from {}: handshake not done within tcp_message_timeout",
                                            peerText(reinterpret_cast<const sockaddr*>(&c->peer))));
    }
    w->closeConn(c);  // the handshake, or a message under way, did not finish in time
}

void Worker::onTlsEvent(bufferevent* bev, short what, void* arg) {
    auto* c = static_cast<TcpConn*>(arg);
    Worker* w = c->worker;
    if (what & BEV_EVENT_CONNECTED) {
        c->handshaken = true;
        evtimer_del(c->deadline);
        c->clientCert = clientVerified(bufferevent_openssl_get_ssl(bev));
        c->in.allocate();
        c->reading = false;
        w->resumeReading(c);
        w->touch(c);
        w->drainTls(c);  // application data that came with the handshake's last flight
        return;
    }
    if ((what & BEV_EVENT_EOF) && c->handshaken && !(what & BEV_EVENT_ERROR)) {
        w->peerClosed(c);
        return;
    }
    if (what & BEV_EVENT_ERROR) {
        // A failed handshake (no shared version or cipher, ALPN without "dot", a client certificate that did
        // not verify, not TLS at all) or a bad record after it: logged, a few lines a second at most.
        unsigned long e = bufferevent_get_openssl_error(bev);
        const char* reason = e ? ERR_reason_error_string(e) : nullptr;
        if (!c->handshaken) bump(w->shared_.stats[w->id_].tlsHandshakeFailed);
        w->logRefusal(w->lane_,
                      fmt::format("TLS from {}: {}{}", peerText(reinterpret_cast<const sockaddr*>(&c->peer)),
                                  c->handshaken ? "" : "handshake failed: ",
                                  reason ? reason : (e ? "TLS error" : strerror(EVUTIL_SOCKET_ERROR()))));
        while (bufferevent_get_openssl_error(bev)) {
        }
    }
    // EOF before the handshake ended, an error, or the idle timeout (reading or writing).
    w->closeConn(c);
}

void Worker::onTlsRead(bufferevent*, void* arg) {
    auto* c = static_cast<TcpConn*>(arg);
    c->worker->drainTls(c);
}

bool Worker::drainTls(TcpConn* c) {
    evbuffer* input = bufferevent_get_input(c->bev);
    while (c->reading && !c->closing && evbuffer_get_length(input) > 0) {
        int n = evbuffer_remove(input, c->in.space(), c->in.room());
        if (n <= 0) break;
        c->in.commit(size_t(n));
        if (!processInput(c)) return false;
    }
    return true;
}

void Worker::onTlsWrite(bufferevent*, void* arg) {
    auto* c = static_cast<TcpConn*>(arg);
    Worker* w = c->worker;
    // A transfer is generated as the client drains it: at most kAxfrHigh octets (plus one message) wait.
    if (c->axfr && evbuffer_get_length(c->out) < kAxfrLow) w->pumpAxfr(c);
    if (evbuffer_get_length(c->out) != 0 || c->axfr) return;
    if (c->closing) {
        w->closeConn(c);
        return;
    }
    if (!c->reading && c->handshaken) {
        w->resumeReading(c);
        if (!w->processInput(c)) return;  // messages that came while reading was paused
        w->drainTls(c);
    }
}

void Worker::unlink(TcpConn* c) {
    (c->older ? c->older->newer : oldest_) = c->newer;
    (c->newer ? c->newer->older : newest_) = c->older;
    c->older = c->newer = nullptr;
}

void Worker::touch(TcpConn* c) {
    c->lastActive = nowUs();
    if (c != newest_) {
        if (c->older || c->newer || c == oldest_) unlink(c);
        c->older = newest_;
        (newest_ ? newest_->newer : oldest_) = c;
        newest_ = c;
    }
    publishOldest();
}

void Worker::publishOldest() {
    shared_.tcp[id_].oldest.store(oldest_ ? oldest_->lastActive : INT64_MAX, std::memory_order_relaxed);
}

bool Worker::makeRoom() {
    // The least recently active connection of all workers, as each last published it.
    int best = -1;
    int64_t bestAt = INT64_MAX;
    for (int i = 0, n = shared_.workers.load(); i < n; ++i) {
        int64_t at = shared_.tcp[i].oldest.load(std::memory_order_relaxed);
        if (at == INT64_MAX) continue;  // no connection there
        // Each request already sent there stands for a connection about to go: count it as 1 ms younger.
        at += int64_t(shared_.tcp[i].evict.load(std::memory_order_relaxed)) * 1000;
        if (at < bestAt) {
            best = i;
            bestAt = at;
        }
    }
    if (best < 0) return false;
    if (best == id_) {
        if (!oldest_) return false;
        closeConn(oldest_);
        return true;
    }
    TcpSlot& t = shared_.tcp[best];
    if (!t.wake) return false;
    t.evict.fetch_add(1);
    event_active(t.wake, EV_READ, 0);  // thread-safe: the bases were made after evthread_use_pthreads()
    return true;
}

void Worker::onWake(evutil_socket_t, short, void* arg) {
    auto* w = static_cast<Worker*>(arg);
    for (int n = w->shared_.tcp[w->id_].evict.exchange(0); n > 0 && w->oldest_; --n) w->closeConn(w->oldest_);
}

void Worker::closeConn(TcpConn* c) {
    if (c->axfr) endAxfr(c);
    unlink(c);
    publishOldest();
    if (c->bev) {
        event_free(c->deadline);
        bufferevent_free(c->bev);  // frees the SSL and closes the socket (BEV_OPT_CLOSE_ON_FREE)
    } else {
        event_free(c->rev);  // event_free takes the events out of the loop first
        event_free(c->wev);
        evbuffer_free(c->out);
        close(c->fd);
    }
    shared_.tcpConnections.fetch_sub(1);
    shared_.tcpPerClient.release(c->client);
    delete c;
}

void Worker::peerClosed(TcpConn* c) {
    // The client closed its side after its last query: finish writing the answers, then close.
    if (evbuffer_get_length(c->out) > 0 || c->axfr) {
        c->closing = true;
        pauseReading(c);
        return;
    }
    closeConn(c);
}

void Worker::pauseReading(TcpConn* c) {
    if (!c->reading) return;
    if (c->bev)
        bufferevent_disable(c->bev, EV_READ);
    else
        event_del(c->rev);
    c->reading = false;
}

void Worker::resumeReading(TcpConn* c) {
    if (c->reading || c->closing) return;
    // lane_.snap as it is: a refresh here could free the snapshot a caller up the stack still reads.
    timeval idle{lane_.snap->config.server.tcpIdleTimeout, 0};
    if (c->bev) {
        // Idle: nothing read, or nothing of the output taken, for tcp_idle_timeout (TCP's rule).
        bufferevent_set_timeouts(c->bev, &idle, &idle);
        bufferevent_enable(c->bev, EV_READ);
    } else {
        event_add(c->rev, &idle);
    }
    c->reading = true;
    c->shortTimeout = false;
}

void Worker::startWriting(TcpConn* c) {
    if (c->writing || c->bev) return;  // a bufferevent writes by itself, its write timeout the idle one
    // A client that takes nothing of what waits for it for the idle timeout is closed.
    timeval idle{lane_.snap->config.server.tcpIdleTimeout, 0};
    event_add(c->wev, &idle);
    c->writing = true;
}

void Worker::onTcpReadable(evutil_socket_t fd, short what, void* arg) {
    auto* c = static_cast<TcpConn*>(arg);
    Worker* w = c->worker;
    if (what & EV_TIMEOUT) {  // idle, or the message under way did not arrive whole in time
        w->closeConn(c);
        return;
    }
    // One read per readiness, into the connection's own buffer: no FIONREAD, no copy out of an evbuffer.
    ssize_t n = recv(fd, c->in.space(), c->in.room(), MSG_DONTWAIT);
    if (n == 0) {
        w->peerClosed(c);
        return;
    }
    if (n < 0) {
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) w->closeConn(c);
        return;
    }
    c->in.commit(size_t(n));
    w->processInput(c);
}

bool Worker::processInput(TcpConn* c) {
    const Snapshot& snap = snapshot();
    bool zeroLength = false;
    // Any number of messages may be pipelined in one segment, and one message may arrive in many
    // (StreamBuffer).
    std::span<const uint8_t> q;
    while (!c->axfr) {
        StreamBuffer::Frame f = c->in.next(q);
        if (f == StreamBuffer::Frame::ZeroLength) {
            zeroLength = true;
            break;
        }
        if (f != StreamBuffer::Frame::Message) break;
        if (handleMessage(c, snap, q) == Handled::Axfr)
            break;  // nothing after it is read before it is written
        if (evbuffer_get_length(c->out) + staged_ > kTcpOutHigh) {
            pauseReading(c);  // resumed once the client has read (onTcpWritable, onTlsWrite)
            break;
        }
    }
    flush(c);
    if (zeroLength) {
        // A zero-length message is no DNS message: answer what came before it, then close (as NSD).
        c->in.clear();
        c->closing = true;
        pauseReading(c);
        if (evbuffer_get_length(c->out) == 0 && !c->axfr) {
            closeConn(c);
            return false;
        }
        return true;
    }
    c->in.compact();
    return messageDeadline(c, snap.config.server);
}

void Worker::flush(TcpConn* c) {
    if (staged_ == 0) return;
    size_t sent = 0;
    if (c->bev) {
        evbuffer_add(c->out, tcpOut_.data(), staged_);  // encrypted and written by the bufferevent
        staged_ = 0;
        return;
    }
    if (evbuffer_get_length(c->out) == 0) {
        // Nothing of this client waits: the answers go to the kernel now, on this loop turn.
        ssize_t n = send(c->fd, tcpOut_.data(), staged_, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            staged_ = 0;  // a reset connection: its read event reports it and closes
            return;
        }
        sent = n > 0 ? size_t(n) : 0;
    }
    if (sent < staged_) {
        evbuffer_add(c->out, tcpOut_.data() + sent, staged_ - sent);
        startWriting(c);
    }
    staged_ = 0;
}

Worker::Handled Worker::handleMessage(TcpConn* c, const Snapshot& snap, std::span<const uint8_t> q) {
    if (tcpOut_.size() - staged_ < kTcpMsgMax + 2) flush(c);  // the next answer must fit whole
    uint8_t* prefix = tcpOut_.data() + staged_;
    std::span<uint8_t> out{prefix + 2, kTcpMsgMax};
    touch(c);
    c->messageStart = 0;
    WorkerStats& st = shared_.stats[id_];
    bump(c->bev ? st.tls : st.tcp);
    const auto* peer = reinterpret_cast<const sockaddr*>(&c->peer);
    auto res = zones::answer(snap.db, snap.answer, q, true, out, &lane_.selector,
                             zones::ClientInfo{peer, uint32_t(time(nullptr))});
    size_t outLen = res.len;
    zones::TsigSession ts;
    bool signedOk = false;  // the query's TSIG verified: whatever goes back is signed
    uint8_t rcode = res.rcode;
    if (res.action != zones::Action::Drop && res.tsigAt) {
        signedOk = verifyTsig(lane_, snap, q, res.tsigAt, out, ts, outLen, rcode, peer);
        if (!signedOk) res.action = zones::Action::Send;  // the TSIG error goes back instead
    }
    if (res.action == zones::Action::Axfr) {
        const auto& acl = xfr::axfrAcl(snap.config, res.zone->name());
        std::string why = xfr::axfrRefusal(snap.config, acl, peer, signedOk ? ts.key : nullptr,
                                           {c->bev != nullptr, c->clientCert});
        int per = snap.config.server.axfrMaxConcurrentPerClient;
        if (!why.empty()) {
            logRefusal(lane_, fmt::format("AXFR of {} from {}{} refused: {}", res.zone->name(),
                                          peerText(peer), c->bev ? " (TLS)" : "", why));
            rcode = 5;
            outLen =
                zones::refuse(snap.answer, q, out, rcode, {zones::Ede::kProhibited, {}});  // RFC 8914 §4.19
        } else if (per > 0 && !shared_.axfrPerClient.acquire(c->client, per)) {
            // This client already has its share of transfers in flight: SERVFAIL as below, try later.
            bump(st.axfrRefusedPerClient);
            rcode = 2;
            outLen = zones::refuse(snap.answer, q, out, 2, kEdeBusy);
        } else if (shared_.axfrActive.fetch_add(1) >= snap.config.server.axfrMaxConcurrent) {
            // Over the cap: SERVFAIL, not REFUSED. The cap is a passing condition of this server, not a
            // policy about the client: a secondary retries after the SOA's retry interval (RFC 1034
            // §4.3.5), where REFUSED reads as "you may not" and is logged as a configuration error.
            shared_.axfrActive.fetch_sub(1);
            if (per > 0) shared_.axfrPerClient.release(c->client);
            rcode = 2;
            outLen = zones::refuse(snap.answer, q, out, 2, kEdeBusy);
        } else {
            c->axfrCounted = per > 0;
            st.count(res.qtype, res.rcode);
            startAxfr(c, *res.zone, q, ts);
            return Handled::Axfr;
        }
    } else if (res.action == zones::Action::Drop) {
        outLen = 0;
        bump(st.dropped);
    }
    if (signedOk && outLen) outLen = signAnswer(snap.answer, q, out, outLen, rcode, ts);
    if (res.action != zones::Action::Drop) st.count(res.qtype, rcode);
    if (outLen) {
        prefix[0] = uint8_t(outLen >> 8);
        prefix[1] = uint8_t(outLen);
        staged_ += 2 + outLen;
    }
    return Handled::Next;
}

bool Worker::messageDeadline(TcpConn* c, const ServerConf& conf) {
    // A message must arrive whole within tcp_message_timeout of its first octet. The idle timeout alone
    // restarts at every octet, so a client trickling a byte a second would hold its slot for ever
    // (slowloris). The read timeout is shortened to the time left, and restored once nothing is pending.
    // Changing an added event's timeout moves it in libevent's timer heap only: no system call.
    if (!c->reading) return true;  // paused: checked again when reading resumes
    if (c->bev) {
        // TLS: the deadline timer, armed while a message is under way (the bufferevent's read timeout is
        // the idle one, restarted by every read).
        if (c->in.size() == 0) {
            c->messageStart = 0;
            evtimer_del(c->deadline);
            return true;
        }
        int64_t now = nowMs();
        if (c->messageStart == 0) {
            c->messageStart = now;
            timeval t{conf.tcpMessageTimeout, 0};
            evtimer_add(c->deadline, &t);
        }
        return true;
    }
    if (c->in.size() == 0) {
        c->messageStart = 0;
        if (c->shortTimeout) {
            timeval idle{conf.tcpIdleTimeout, 0};
            event_add(c->rev, &idle);
            c->shortTimeout = false;
        }
        return true;
    }
    int64_t now = nowMs();
    if (c->messageStart == 0) c->messageStart = now;
    int64_t left = c->messageStart + int64_t(conf.tcpMessageTimeout) * 1000 - now;
    if (left <= 0) {
        closeConn(c);
        return false;
    }
    if (left < int64_t(conf.tcpIdleTimeout) * 1000) {
        timeval t = toTimeval(left);
        event_add(c->rev, &t);
        c->shortTimeout = true;
    }
    return true;
}

bool Worker::verifyTsig(Lane& lane, const Snapshot& snap, std::span<const uint8_t> query, size_t tsigAt,
                        std::span<uint8_t> out, zones::TsigSession& s, size_t& len, uint8_t& rcode,
                        const sockaddr* peer) {
    uint64_t now = unixNow();
    if (!zones::verifyRequest(query, tsigAt, snap.config.keys, now, s)) {
        logRefusal(lane, fmt::format("query from {}: malformed TSIG record (FORMERR)", peerText(peer)));
        rcode = 1;
        len = zones::refuse(snap.answer, query, out, 1);
        return false;
    }
    if (s.error == zones::kTsigNoError) return true;
    zones::TsigRecord r;
    zones::parseTsig(query, tsigAt, r);
    std::string key = zones::nameToText({reinterpret_cast<const char*>(r.keyName), r.keyNameLen});
    std::string detail =
        s.error == zones::kTsigBadKey    ? "unknown key or algorithm"
        : s.error == zones::kTsigBadSig  ? "wrong MAC"
        : s.error == zones::kTsigBadTime ? fmt::format("clock off by {} s", s.skew)
        : s.error == zones::kTsigBadTrunc
            ? fmt::format("MAC truncated to {} octets, below the key's min_mac_size", s.macLen)
            : "";
    logRefusal(lane, fmt::format("query from {} with TSIG key {}: {} ({})", peerText(peer), key,
                                 zones::tsigErrorText(s.error), detail));
    rcode = zones::kRcodeNotAuth;
    // RFC 8914 has no INFO-CODE for a failed authentication ("Prohibited", §4.19, is a policy's refusal):
    // "Other", with the TSIG error's name, which the unsigned reply's TSIG RR also carries (RFC 8945 §5.3.2).
    std::string ede = "TSIG " + zones::tsigErrorText(s.error);
    len = zones::refuse(snap.answer, query, out, rcode, {zones::Ede::kOther, ede});
    if (len) len = zones::tsigErrorResponse(out, len, r, s, now);
    return false;
}

size_t Worker::signAnswer(const zones::AnswerOptions& opt, std::span<const uint8_t> query,
                          std::span<uint8_t> out, size_t len, uint8_t rcode, zones::TsigSession& s) {
    uint64_t now = unixNow();
    if (size_t n = zones::signResponse(out, len, s, now)) return n;
    // answer() kept room for a signature of the request's size; one that still does not fit is TC.
    len = zones::refuse(opt, query, out, rcode);
    if (len < 12) return 0;
    out[2] |= 0x02;
    return zones::signResponse(out, len, s, now);
}

void Worker::logRefusal(Lane& lane, const std::string& message) {
    int64_t sec = nowMs() / 1000;
    if (sec != lane.logSecond) {
        if (lane.logged > 5) log::warn("{} more refused transfer/TSIG/TLS lines not logged", lane.logged - 5);
        lane.logSecond = sec;
        lane.logged = 0;
    }
    if (++lane.logged <= 5) log::warn("{}", message);
}

void Worker::startAxfr(TcpConn* c, const zones::Zone& zone, std::span<const uint8_t> query,
                       const zones::TsigSession& tsig) {
    flush(c);  // the answers to the queries before it go first
    // A signed transfer's messages leave room for their TSIG RR.
    size_t msgMax = tsig.key ? kAxfrMsg - zones::tsigRecordSize(*tsig.key) : kAxfrMsg;
    c->axfr = std::make_unique<AxfrJob>(AxfrJob{lane_.snap, zones::AxfrWriter(zone, query, msgMax), tsig});
    pauseReading(c);
    pumpAxfr(c);
    startWriting(c);
}

void Worker::pumpAxfr(TcpConn* c) {
    evbuffer* outb = c->out;
    zones::AxfrWriter& wr = c->axfr->writer;
    if (wr.messages() > 0) touch(c);  // the client has read: it is active, not idle
    while (!wr.done() && evbuffer_get_length(outb) < kAxfrHigh) {
        evbuffer_iovec v;
        if (evbuffer_reserve_space(outb, ev_ssize_t(kAxfrMsg + 2), &v, 1) != 1) break;
        auto* p = static_cast<uint8_t*>(v.iov_base);
        size_t n = wr.next({p + 2, kAxfrMsg});
        if (n && c->axfr->tsig.key) n = zones::signResponse({p + 2, kAxfrMsg}, n, c->axfr->tsig, unixNow());
        p[0] = uint8_t(n >> 8);
        p[1] = uint8_t(n);
        v.iov_len = n ? n + 2 : 0;
        evbuffer_commit_space(outb, &v, 1);
        if (n == 0) break;
    }
    if (wr.done()) endAxfr(c);  // the last messages are in the output; its slot is free for the next
}

void Worker::endAxfr(TcpConn* c) {
    c->axfr.reset();
    shared_.axfrActive.fetch_sub(1);
    if (c->axfrCounted) shared_.axfrPerClient.release(c->client);
    c->axfrCounted = false;
}

void Worker::onTcpWritable(evutil_socket_t fd, short what, void* arg) {
    auto* c = static_cast<TcpConn*>(arg);
    Worker* w = c->worker;
    if (what & EV_TIMEOUT) {  // the client took nothing for the idle timeout
        w->closeConn(c);
        return;
    }
    // A transfer is generated as the client drains it: at most kAxfrHigh octets (plus one message) wait.
    if (c->axfr && evbuffer_get_length(c->out) < kAxfrLow) w->pumpAxfr(c);
    if (evbuffer_write(c->out, fd) < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        w->closeConn(c);
        return;
    }
    if (evbuffer_get_length(c->out) != 0 || c->axfr) return;  // write interest stays on
    event_del(c->wev);
    c->writing = false;
    if (c->closing) {
        w->closeConn(c);
        return;
    }
    if (!c->reading) {
        w->resumeReading(c);
        w->processInput(c);  // messages that came while reading was paused
    }
}

}  // namespace gslb::server
