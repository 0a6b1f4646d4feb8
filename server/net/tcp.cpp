// A worker's TCP connections (RFC 7766): accept with per-client and total caps (TLS's too), the least
// recently active connection closed when the table is full (across workers), two-octet framing with
// pipelining, answers staged and sent in one send() per read, reading paused while a client does not read
// its answers, idle and per-message timeouts (slowloris), and a zone transfer's messages written as the
// client drains them.
#include <event2/buffer.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

#include "server/base/clock.hpp"
#include "server/net/tcp.hpp"

namespace gslb::server {

bool Worker::admit(evutil_socket_t fd, const sockaddr* sa, ClientCounter::Key& client) {
    const Snapshot& snap = responder_.snapshot();
    int limit = snap.config.server.tcpMaxConnections;
    // One client over its own cap is closed at once, before it can make the full-table rule below close
    // another client's connection. Every connection is counted, capped or not, so that a reload that sets
    // the cap finds the counts right.
    int perClient = snap.config.server.tcpMaxConnectionsPerClient;
    client = ClientCounter::keyOf(sa);
    if (!shared_.tcpPerClient.acquire(client, perClient > 0 ? perClient : INT_MAX)) {
        bump(responder_.stats().tcpRefusedPerClient);
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

void Worker::unlink(TcpConn* c) {
    (c->older ? c->older->newer : oldest_) = c->newer;
    (c->newer ? c->newer->older : newest_) = c->older;
    c->older = c->newer = nullptr;
}

void Worker::touch(TcpConn* c) {
    // Microseconds for the least-recently-active order: queries on loopback come less than a millisecond
    // apart, and with millisecond stamps two connections on different workers tied, so makeRoom() could
    // close the one just used rather than the idle one (e2e-core test_connection_limit, flaky on a quiet
    // run).
    c->lastActive = monotonicUs();
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
    if (w->stopping_.load(std::memory_order_relaxed)) {
        event_base_loopbreak(w->base_);  // Worker::stop: from the loop's own thread, it cannot be lost
        return;
    }
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
    // The responder's snapshot as it is: a refresh here could free the one a caller up the stack still reads.
    timeval idle{responder_.current().config.server.tcpIdleTimeout, 0};
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
    timeval idle{responder_.current().config.server.tcpIdleTimeout, 0};
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
    const Snapshot& snap = responder_.snapshot();
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
    touch(c);
    c->messageStart = 0;
    const Client client{reinterpret_cast<const sockaddr*>(&c->peer), c->client, c->clientCert, c->tls13};
    Reply r = responder_.answer(snap, q, {prefix + 2, kTcpMsgMax}, client,
                                c->bev ? Transport::Tls : Transport::Tcp);
    if (r.kind == Reply::Kind::Transfer) {
        startAxfr(c, std::move(r.transfer));
        return Handled::Axfr;
    }
    if (r.kind == Reply::Kind::Send) {
        prefix[0] = uint8_t(r.len >> 8);
        prefix[1] = uint8_t(r.len);
        staged_ += 2 + r.len;
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
        int64_t now = monotonicMs();
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
    int64_t now = monotonicMs();
    if (c->messageStart == 0) c->messageStart = now;
    int64_t left = c->messageStart + int64_t(conf.tcpMessageTimeout) * 1000 - now;
    if (left <= 0) {
        closeConn(c);
        return false;
    }
    if (left < int64_t(conf.tcpIdleTimeout) * 1000) {
        timeval t = toTimeval(double(left) / 1000);
        event_add(c->rev, &t);
        c->shortTimeout = true;
    }
    return true;
}

void Worker::startAxfr(TcpConn* c, std::unique_ptr<Transfer> transfer) {
    flush(c);  // the answers to the queries before it go first
    c->axfr = std::move(transfer);
    pauseReading(c);
    pumpAxfr(c);
    startWriting(c);
}

void Worker::pumpAxfr(TcpConn* c) {
    evbuffer* outb = c->out;
    Transfer& t = *c->axfr;
    if (t.messages() > 0) touch(c);  // the client has read: it is active, not idle
    while (!t.done() && evbuffer_get_length(outb) < kAxfrHigh) {
        evbuffer_iovec v;
        if (evbuffer_reserve_space(outb, ev_ssize_t(kAxfrMsg + 2), &v, 1) != 1) break;
        auto* p = static_cast<uint8_t*>(v.iov_base);
        size_t n = t.next({p + 2, kAxfrMsg});
        p[0] = uint8_t(n >> 8);
        p[1] = uint8_t(n);
        v.iov_len = n ? n + 2 : 0;
        evbuffer_commit_space(outb, &v, 1);
        if (n == 0) break;
    }
    if (t.done()) endAxfr(c);  // the last messages are in the output; its slot is free for the next
}

void Worker::endAxfr(TcpConn* c) {
    c->axfr.reset();  // gives back its slots (Transfer::~Transfer)
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
