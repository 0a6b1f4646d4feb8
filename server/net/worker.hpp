// A DNS worker: its own SO_REUSEPORT UDP and TCP sockets on every listen address (the kernel spreads queries
// across workers), its own buffers. Its loop thread (libevent) serves TCP and the AF_XDP queues; each of its
// UDP sockets has a thread of its own that blocks in recvmmsg, as gdnsd's do: no epoll set holds a UDP
// socket, so a wake-up is one recvmmsg and one sendmmsg, with no epoll_wait beside them and no epoll entry
// on the socket's wait queue for every answer sent to wake. Nothing is shared with other threads on the
// query path but the snapshot holder's generation counter, the RRL table and the TCP connection count.
//
// Every message is answered by a Responder (server/responder/responder.hpp), one per answering thread; the
// worker keeps what is the transport's: sockets and threads (worker.cpp), UDP batches and the reply's source
// address (udp.cpp), TCP's accept, least-recently-active eviction, framing, back-pressure, timeouts and the
// output of zone transfers (tcp.cpp), and the TLS layer of DNS over TLS (tls.cpp).
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

#include "server/responder/responder.hpp"
#include "server/responder/shared.hpp"
#include "server/state/snapshot.hpp"

namespace gslb::server {

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

    /// The responder of the worker's loop thread (TCP, TLS and the AF_XDP queues it serves).
    Responder& responder() { return responder_; }
    /// Serves an AF_XDP queue on this worker's loop (call before start()); the worker never owns it.
    void addXdp(xdp::Queue* q);
    int id() const { return id_; }
    /// The loop's lowest priority (of three; libevent's default is the middle one): a TLS connection's
    /// events until its handshake is done, at most a few of them per pass of the loop (worker.cpp).
    static constexpr int kHandshakePriority = 2;

  private:
    struct UdpSocket;  // server/net/udp.hpp
    struct UdpBatch;
    struct TcpConn;               // server/net/tcp.hpp
    void serveUdp(UdpSocket& u);  // a UDP socket's thread
    void resendTruncated(Responder& r, int fd, mmsghdr& m, zones::AnswerResult& res);
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
    // Activated from other threads: another worker asks it to evict (makeRoom), or stop() to end the loop.
    static void onWake(evutil_socket_t, short, void* arg);
    // Sends an admitted transfer's messages as c drains them; c reads nothing more until it ends.
    void startAxfr(TcpConn* c, std::unique_ptr<Transfer> transfer);
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
    Responder responder_;               // the loop's
    std::atomic<bool> stopping_{false};
    static constexpr size_t kTcpMsgMax = 65535;  // an answer over TCP (RFC 1035 §4.2.2: a two-octet length)
    // Staged answers of one read: flushed before a next answer could not fit whole (prefix included).
    static constexpr size_t kTcpOut = 4 * (kTcpMsgMax + 2);
    // TCP answers of one read, each with its length prefix, sent in one send() (see flush).
    std::vector<uint8_t> tcpOut_;
    size_t staged_ = 0;
    TcpConn* oldest_ = nullptr;  // this worker's TCP connections, least recently active first
    TcpConn* newest_ = nullptr;
    event* wake_ = nullptr;
    std::thread thread_;
};

}  // namespace gslb::server
