// DNS over TLS (RFC 7858) and zone transfers over TLS (XoT, RFC 9103) on a worker: OpenSSL through
// libevent's bufferevent_openssl. A TLS connection is one of the worker's TCP connections
// (server/net/tcp.hpp) with a bufferevent: the same table, limits and timeouts, its decrypted input framed
// and answered by the same code as TCP's (processInput, handleMessage).
#include <event2/buffer.h>
#include <event2/bufferevent_ssl.h>
#include <fmt/format.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "server/net/tcp.hpp"
#include "server/state/tls_context.hpp"

namespace gslb::server {

void Worker::onTlsAccept(evconnlistener*, evutil_socket_t fd, sockaddr* sa, int len, void* arg) {
    auto* w = static_cast<Worker*>(arg);
    ClientCounter::Key client;
    if (!w->admit(fd, sa, client)) return;
    const Snapshot& snap = w->responder_.snapshot();
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
    // Last in the loop until the handshake is done (worker.cpp's newLoop); bufferevent_openssl then assigns
    // its events anew, at the default priority.
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
        bump(w->responder_.stats().tlsHandshakeFailed);
        w->responder_.logRefusal(fmt::format("TLS from {}: handshake not done within tcp_message_timeout",
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
        c->tls13 = SSL_version(bufferevent_openssl_get_ssl(bev)) >= TLS1_3_VERSION;
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
        if (!c->handshaken) bump(w->responder_.stats().tlsHandshakeFailed);
        w->responder_.logRefusal(
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

}  // namespace gslb::server
