// A DNS worker: its own SO_REUSEPORT UDP and TCP sockets on every listen address (the kernel spreads queries
// across workers), its own buffers. Its loop thread (libevent) serves TCP and the AF_XDP queues; each of its
// UDP sockets has a thread of its own that blocks in recvmmsg, as gdnsd's do: no epoll set holds a UDP
// socket, so a wake-up is one recvmmsg and one sendmmsg, with no epoll_wait beside them and no epoll entry
// on the socket's wait queue for every answer sent to wake. Nothing is shared with other threads on the
// query path but the snapshot holder's generation counter, the RRL table and the TCP connection count.
#pragma once
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include <sys/socket.h>

#include <atomic>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "server/responder/shared.hpp"
#include "server/state/gslb.hpp"
#include "server/state/snapshot.hpp"
#include "zones/answer.hpp"
#include "zones/tsig.hpp"

namespace gslb::server {

namespace xdp {
class Path;
}

/// One UDP query for Worker::answerDatagrams, from a socket or an AF_XDP frame (server/net/xdp/).
struct Datagram {
    std::span<const uint8_t> query;
    const sockaddr_storage* peer = nullptr;  // the client (sockaddr_in / sockaddr_in6)
    // 65535 octets for the answer; nullptr: answerDatagrams puts it in the worker's own buffer, packed after
    // the batch's previous answers, and sets `out`
    uint8_t* out = nullptr;
    zones::AnswerResult res;  // after the call: res.len octets of `out` to send, 0: nothing
};

namespace xdp {
class Queue;
}

class Worker {
  public:
    Worker(int id, Shared& shared);
    ~Worker();
    Worker(const Worker&) = delete;
    Worker& operator=(const Worker&) = delete;

    /// Opens the UDP and TCP sockets of every address in `listen`. False and `error` when one cannot be
    /// bound.
    bool open(const std::vector<ListenAddr>& listen, std::string& error);
    /// Opens the DNS-over-TLS listeners (RFC 7858; [server] tls_listen). Their connections are TCP's in all
    /// but the TLS layer: the same table, limits, idle and message timeouts and answers (handleMessage), the
    /// handshake bounded by tcp_message_timeout. False and `error` when one cannot be bound.
    bool openTls(const std::vector<ListenAddr>& listen, std::string& error);
    void start();
    /// After a reload (from the thread that called start()): interrupts the UDP threads blocked in recvmmsg
    /// so that an idle one lets go of the replaced snapshot now, not at its next query.
    void nudge();
    /// Asks the worker's loop and UDP threads to end (thread-safe), then joins them. A UDP thread under a
    /// flood ends after the batch it is answering; an idle one is woken by shutdown() of its socket.
    void stop();

    /// The per-datagram work of UDP, shared by the sockets and the AF_XDP queues: answers dg[0, n) (n at most
    /// kUdpBatch) with the same code whatever carried them - EDNS, ECS, cookies, RRL (its slip included),
    /// TSIG - and counts them in this worker's stats (transport udp). A datagram not to be answered gets
    /// res.len 0. `snap` is snapshot()'s.
    void answerDatagrams(const Snapshot& snap, Datagram* dg, int n) { answerDatagrams(lane_, snap, dg, n); }
    static constexpr int kUdpBatch = 32;
    /// The snapshot this worker's loop answers from, refreshed when a reload published a newer one.
    const Snapshot& snapshot() { return snapshot(lane_); }
    /// Serves an AF_XDP queue on this worker's loop (call before start()); the worker never owns it.
    void addXdp(xdp::Queue* q);
    int id() const { return id_; }
    Shared& shared() { return shared_; }

  private:
    struct UdpSocket;
    struct UdpBatch;
    struct TcpConn;
    // What answering needs on one thread: the loop's (TCP, AF_XDP) and each UDP thread's own, so that no
    // two threads write the same counters, chooser state or buffers.
    struct Lane {
        Lane(size_t row, uint64_t seed);
        ~Lane();
        size_t row;  // answerRow(): its Shared::stats row and its GSLB answer-counter row
        Selector selector;
        // recvmmsg/sendmmsg headers, buffers and per-datagram results, set up once (see UdpBatch).
        std::unique_ptr<UdpBatch> batch;
        std::shared_ptr<const Snapshot> snap;
        uint64_t gen = 0;
        uint32_t slipCount = 0;  // limited responses since the last slip (RateLimiter::account)
        int64_t logSecond = 0;   // logRefusal's rate limit: the second it counts, and lines in it
        int logged = 0;
    };
    const Snapshot& snapshot(Lane& lane);
    void answerDatagrams(Lane& lane, const Snapshot& snap, Datagram* dg, int n);
    void serveUdp(UdpSocket& u);  // a UDP socket's thread
    void resendTruncated(Lane& lane, int fd, mmsghdr& m, zones::AnswerResult& res);
    static void onAccept(evconnlistener* l, evutil_socket_t fd, sockaddr* sa, int len, void* arg);
    // A stream listener on `a` (SO_REUSEPORT: every worker has its own), added to `into`; `what` names it
    // in the error.
    bool listenOn(const ListenAddr& a, evconnlistener_cb cb, const char* what,
                  std::vector<evconnlistener*>& into, std::string& error);
    // The connection limits of TCP and TLS alike (tcp_max_connections, its per-client cap): true when `fd`
    // may stay (counted, and `client` set), false when it was closed.
    bool admit(evutil_socket_t fd, const sockaddr* sa, ClientCounter::Key& client);
    TcpConn* newConn(evutil_socket_t fd, const sockaddr* sa, int len, ClientCounter::Key client);
    static void onTlsAccept(evconnlistener* l, evutil_socket_t fd, sockaddr* sa, int len, void* arg);
    static void onTlsRead(bufferevent* bev, void* arg);
    static void onTlsWrite(bufferevent* bev, void* arg);
    static void onTlsEvent(bufferevent* bev, short what, void* arg);
    static void onTlsDeadline(evutil_socket_t, short, void* arg);
    // Moves what TLS decrypted into c's input and frames it as TCP's (processInput). False when c was closed.
    bool drainTls(TcpConn* c);
    static void onTcpReadable(evutil_socket_t fd, short what, void* arg);
    static void onTcpWritable(evutil_socket_t fd, short what, void* arg);
    // Answers every whole message in c's input, in order, then sends the answers (see flush). False when c
    // was closed meanwhile (it is freed: the caller must not touch it).
    bool processInput(TcpConn* c);
    // What a message handler did with the connection.
    enum class Handled { Next, Axfr };
    Handled handleMessage(TcpConn* c, const Snapshot& snap, std::span<const uint8_t> q);
    // Sends the answers staged in tcpOut_ for c: straight to the socket when nothing of c's waits, else (or
    // whatever the kernel did not take) into c's output, with write interest on.
    void flush(TcpConn* c);
    void peerClosed(TcpConn* c);  // EOF from the client (TCP or TLS)
    void pauseReading(TcpConn* c);
    void resumeReading(TcpConn* c);
    void startWriting(TcpConn* c);
    void closeConn(TcpConn* c);
    bool messageDeadline(TcpConn* c, const ServerConf& conf);  // false: c timed out and was closed
    void touch(TcpConn* c);  // c was active now: it moves to the young end of the connection list
    void unlink(TcpConn* c);
    void publishOldest();
    bool makeRoom();  // closes (or has another worker close) the least recently active connection
    static void onWake(evutil_socket_t, short, void* arg);
    void startAxfr(TcpConn* c, const zones::Zone& zone, std::span<const uint8_t> query,
                   const zones::TsigSession& tsig);
    // A signed query (RFC 8945 §5.2): true when its TSIG verified (`s` then signs the response). Otherwise
    // `out` holds the error response (NOTAUTH with the TSIG error, or FORMERR), `len` and `rcode` say it,
    // and the reason is logged.
    bool verifyTsig(Lane& lane, const Snapshot& snap, std::span<const uint8_t> query, size_t tsigAt,
                    std::span<uint8_t> out, zones::TsigSession& s, size_t& len, uint8_t& rcode,
                    const sockaddr* peer);
    // Signs the response out[0, len) of a verified exchange; one that has no room left for the TSIG RR
    // becomes a truncated (TC) reply with the question only, signed. Returns the length (0: drop).
    size_t signAnswer(const zones::AnswerOptions& opt, std::span<const uint8_t> query, std::span<uint8_t> out,
                      size_t len, uint8_t rcode, zones::TsigSession& s);
    // A refused or failed transfer or TSIG, at most a few lines a second per worker (each is a packet from
    // outside: a flood of them must not flood the log).
    void logRefusal(Lane& lane, const std::string& message);
    void pumpAxfr(TcpConn* c);
    void endAxfr(TcpConn* c);
    static void onXdp(evutil_socket_t fd, short what, void* arg);

    int id_;
    Shared& shared_;
    event_base* base_ = nullptr;
    std::vector<std::unique_ptr<UdpSocket>> udp_;
    std::vector<evconnlistener*> tcp_;
    std::vector<evconnlistener*> tls_;  // [server] tls_listen
    std::vector<event*> xdp_;           // one per AF_XDP queue it serves (arg: the xdp::Queue)
    Lane lane_;                         // the loop's
    std::atomic<bool> stopping_{false};
    // TCP answers of one read, each with its length prefix, sent in one send() (see flush).
    std::vector<uint8_t> tcpOut_;
    size_t staged_ = 0;
    TcpConn* oldest_ = nullptr;  // this worker's TCP connections, least recently active first
    TcpConn* newest_ = nullptr;
    event* wake_ = nullptr;
    std::thread thread_;
};

}  // namespace gslb::server
