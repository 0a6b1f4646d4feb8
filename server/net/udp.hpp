// The UDP side of a worker (server/net/worker.hpp): its batches and sockets, shared by worker.cpp, which
// opens the sockets, and udp.cpp, which serves them. Internal to server/net/.
#pragma once
#include <sys/socket.h>

#include <cstring>
#include <memory>
#include <thread>

#include "server/net/worker.hpp"

namespace gslb::server {
namespace udp {

constexpr int kBatch = Responder::kBatch;  // datagrams per recvmmsg/sendmmsg
constexpr size_t kRecvSize = 4096;  // a query larger than this is truncated by the kernel, then FORMERR
constexpr size_t kCmsgSpace = 64;
constexpr size_t kAnswerAlign = 64;  // a cache line

}  // namespace udp

// One batch of datagrams: what recvmmsg fills and what sendmmsg sends. Made once per socket: the headers'
// pointers never change, so a batch only resets what the kernel wrote into the headers it filled
// (msg_namelen, msg_controllen), instead of building 32 of them per wake-up (at a fixed load of a few queries
// per wake-up, that setup was a fifth of the worker's instructions per query). The answers are packed in the
// responder's buffer (Responder::answerDatagrams); the query buffers are udp::kRecvSize + one cache line
// apart, so that a batch's first lines do not all fall in the same cache set.
struct Worker::UdpBatch {
    static constexpr size_t kRecvStride = udp::kRecvSize + udp::kAnswerAlign;
    mmsghdr in[udp::kBatch];
    iovec iin[udp::kBatch];
    sockaddr_storage peers[udp::kBatch];
    alignas(cmsghdr) uint8_t cin[udp::kBatch][udp::kCmsgSpace];
    mmsghdr out[udp::kBatch]{};
    iovec iout[udp::kBatch];
    alignas(cmsghdr) uint8_t cout[udp::kBatch][udp::kCmsgSpace];
    Datagram dg[udp::kBatch];
    zones::AnswerResult* results[udp::kBatch];  // out[m] answers *results[m]
    int filled = 0;                             // headers of in[] the last recvmmsg wrote into
    size_t control = 0;  // the msg_controllen in[] are set up with (0: no IP_PKTINFO on that socket)
    std::unique_ptr<uint8_t[]> queries{new uint8_t[udp::kBatch * kRecvStride]};

    UdpBatch() {
        for (int i = 0; i < udp::kBatch; ++i) {
            iin[i] = {queries.get() + size_t(i) * kRecvStride, udp::kRecvSize};
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
        int reset = ctl == control ? filled : udp::kBatch;  // another kind of socket: every header
        for (int i = 0; i < reset; ++i) {
            in[i].msg_hdr.msg_namelen = sizeof(sockaddr_storage);
            in[i].msg_hdr.msg_controllen = ctl;
        }
        control = ctl;
        filled = 0;
    }
};

// A UDP socket of the worker and the thread that serves it, with that thread's own responder and batch.
struct Worker::UdpSocket {
    UdpSocket(Shared& shared, size_t row, uint64_t seed)
        : responder(shared, row, seed), batch(std::make_unique<UdpBatch>()) {}
    int fd = -1;  // blocking: its thread waits in recvmmsg
    bool wildcard = false;
    int family = AF_INET;
    Responder responder;
    std::unique_ptr<UdpBatch> batch;
    std::thread thread;
};

}  // namespace gslb::server
