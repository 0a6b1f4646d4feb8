// A worker's UDP sockets: one thread each, blocking in recvmmsg, a batch answered by the thread's responder
// and sent with one sendmmsg, from the address the query came to on a wildcard socket (IP_PKTINFO).
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "server/base/log.hpp"
#include "server/net/udp.hpp"

namespace gslb::server {
namespace {

// The reply's one control message: `info` (in_pktinfo or in6_pktinfo) as `level`/`type`, in `space`
// (udp::kCmsgSpace octets): the source address of the datagram oh sends.
template <class Info>
void setSource(msghdr& oh, uint8_t* space, int level, int type, const Info& info) {
    oh.msg_control = space;
    oh.msg_controllen = CMSG_SPACE(sizeof info);
    cmsghdr* oc = CMSG_FIRSTHDR(&oh);
    oc->cmsg_level = level;
    oc->cmsg_type = type;
    oc->cmsg_len = CMSG_LEN(sizeof info);
    std::memcpy(CMSG_DATA(oc), &info, sizeof info);
}

}  // namespace

void Worker::serveUdp(UdpSocket& u) {
    Responder& resp = u.responder;
    UdpBatch& b = *u.batch;
    const int fd = u.fd;
    const size_t control = u.wildcard ? udp::kCmsgSpace : 0;
    // Blocks until a datagram is queued, then takes whatever else is (MSG_WAITFORONE): the batch grows with
    // the load by itself. A reload is seen at the next batch (snapshot() compares one counter). An idle
    // thread is interrupted by nudge() after a reload (EINTR) to let go of the snapshot it replaced: a socket
    // nobody queries (say, the ::1 one) would otherwise keep every replaced zone set in memory. No receive
    // timeout instead: its timer, armed and deleted at every block, was 0.5 % of the thread's CPU samples.
    while (!stopping_.load(std::memory_order_relaxed)) {
        b.prepare(control);
        int n = recvmmsg(fd, b.in, udp::kBatch, MSG_WAITFORONE, nullptr);
        if (n <= 0) {
            if (n < 0 && errno == EINTR) {
                resp.snapshot();  // nudged
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
        const Snapshot& snap = resp.snapshot();
        Datagram* dg = b.dg;
        for (int i = 0; i < n; ++i) {
            dg[i].query = {reinterpret_cast<uint8_t*>(b.iin[i].iov_base), b.in[i].msg_len};
            dg[i].peer = &b.peers[i];
            dg[i].out = nullptr;  // packed by answerDatagrams
        }
        resp.answerDatagrams(snap, dg, n);
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
                        setSource(oh, b.cout[m], IPPROTO_IP, IP_PKTINFO, pi);
                    } else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO) {
                        in6_pktinfo pi;
                        std::memcpy(&pi, CMSG_DATA(c), sizeof pi);
                        setSource(oh, b.cout[m], IPPROTO_IPV6, IPV6_PKTINFO, pi);
                    }
                }
            }
            ++m;
        }
        for (int sent = 0; sent < m;) {
            int r = sendmmsg(fd, b.out + sent, unsigned(m - sent), MSG_DONTWAIT);
            if (r <= 0) {
                if (r < 0 && errno == EINTR) continue;
                if (r < 0 && errno == EMSGSIZE) resendTruncated(resp, fd, b.out[sent], *b.results[sent]);
                ++sent;  // drop the datagram that failed (a full socket buffer or an unreachable peer)
                continue;
            }
            sent += r;
        }
    }
}

void Worker::resendTruncated(Responder& r, int fd, mmsghdr& m, zones::AnswerResult& res) {
    // The answer is larger than the link's MTU (IP_PMTUDISC_PROBE refuses to fragment it): send the header
    // and question with TC instead, so the client retries over TCP rather than time out. A signed answer is
    // dropped: its TSIG RR cannot be cut off and the short form would need signing again (the client's own
    // retry over TCP is the same outcome, after its timeout).
    if (res.tsigAt || m.msg_hdr.msg_iov[0].iov_len < 12) return;
    auto* p = static_cast<uint8_t*>(m.msg_hdr.msg_iov[0].iov_base);
    res.len = m.msg_hdr.msg_iov[0].iov_len;
    m.msg_hdr.msg_iov[0].iov_len = zones::slip({p, Responder::kAnswerRoom}, res, false);
    WorkerStats& st = r.stats();
    if (sendmsg(fd, &m.msg_hdr, MSG_DONTWAIT) >= 0) bump(st.truncated);
}

}  // namespace gslb::server
