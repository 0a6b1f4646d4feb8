// The stream side of a worker (server/net/worker.hpp): a TCP or TLS connection and the limits its code
// shares, for tcp.cpp and tls.cpp. Internal to server/net/.
#pragma once
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "server/net/stream_buffer.hpp"
#include "server/net/worker.hpp"
#include "server/responder/transfer.hpp"

namespace gslb::server {

inline constexpr size_t kTcpOutHigh = 1 << 20;  // stop reading a TCP client that does not read its answers
// An AXFR is written as the client drains it: messages are generated while less than kAxfrHigh octets wait
// in the connection's output, and again when the output falls to kAxfrLow. A client that stops reading so
// costs at most kAxfrHigh plus one message, whatever the size of the zone (the kernel's socket buffer aside).
// Messages of up to 64 KiB, written straight into the output buffer's memory: 16 KiB messages would halve
// that memory (libevent allocates in powers of two) but made kdig's AXFR of a 100k-record zone 60 % slower.
inline constexpr size_t kAxfrMsg = Transfer::kMessageMax;
inline constexpr size_t kAxfrHigh = 48 << 10;
inline constexpr size_t kAxfrLow = 16 << 10;

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
    ClientCounter::Key client;       // its unit in shared_.tcpPerClient, given back by closeConn
    bool closing = false;            // nothing more is read; closed once `out` is written
    std::unique_ptr<Transfer> axfr;  // while set, reading is off: later queries wait for the transfer's end
    int64_t lastActive = 0;     // monotonicUs(): accepted, a whole message read, or a transfer progressed
    int64_t messageStart = 0;   // monotonicMs() when the message being read began; 0: none under way
    bool shortTimeout = false;  // rev's timeout is the message's remaining time, not the idle one
    TcpConn* older = nullptr;   // the worker's list, least recently active first
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
    bool tls13 = false;  // the handshake agreed TLS 1.3: only then is a transfer XoT (RFC 9103 §5.1)
};

}  // namespace gslb::server
