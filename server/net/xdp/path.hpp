// The AF_XDP fast path for UDP queries (`[server] xdp`, doc/xdp.md): an XDP program
// on each configured interface redirects UDP frames for gslbd's listen addresses into one AF_XDP socket per
// receive queue; the UDP workers read them from shared memory (UMEM), answer them with the socket path's own
// Responder::answerDatagrams (server/responder/responder.hpp), and send the answers from the same frames.
// Everything else (TCP, ICMP, other addresses, fragments) goes on to the kernel, and the UDP sockets stay
// open: what the fast path cannot take (an interface that is missing, a driver without XDP, no
// CAP_NET_ADMIN/CAP_BPF/CAP_NET_RAW, a gslbd built without libxdp) is logged once and served by the sockets.
// The program is attached through a bpf_link: the kernel takes it off when gslbd exits, crashes included.
#pragma once
#include <sys/socket.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "server/conf/config.hpp"

namespace gslb::server {
class Responder;
}

namespace gslb::server::xdp {

/// True when this gslbd was built with libxdp and libbpf (meson -Dxdp; else `xdp` is a config error).
bool available();

/// The line gslbd logs (a warning) when the fast path cannot take `ifname` and leaves it to the sockets:
/// "xdp on IFACE: WHY; its UDP queries are answered on the sockets". `gslbd --check` says the same.
std::string fallbackLine(const std::string& ifname, const std::string& why);
/// Why the fast path cannot take `ifname` on this machine as far as an unprivileged look tells (it does not
/// exist: "no such interface (No such device)"; a loopback interface), else empty. Sets *ifindex (0 when
/// missing). What needs the attach itself (driver, capabilities, another XDP program) is found at start.
std::string interfaceProblem(const std::string& ifname, uint32_t* ifindex = nullptr);

/// What a look at an interface the fast path was attached to says now (Path::recheck gathers it; a struct so
/// linkProblem is a pure function the unit tests drive).
struct LinkFacts {
    bool exists = true;        // the index gslbd attached to still names an interface
    uint32_t indexByName = 0;  // if_nametoindex(configured name) now: 0 none, another index a new interface
    bool up = true;            // IFF_UP
    bool carrier = true;       // IFF_RUNNING (RFC 2863 operational state up: a veth's peer up, a cable in)
    uint32_t progId = 0;       // the XDP program attached now (0: none)
};
/// Why the fast path on `ifname` no longer serves, with what the operator can do, or empty when it does:
/// gslbd attached program `ourProg` to interface index `ourIndex`. The interface is gone (deleted; a new
/// interface of the same name needs a restart: the sockets were bound to the old one), down or without
/// carrier (it serves again by itself once up: program and sockets stay), or the program is detached or
/// replaced (a bpf_link cannot be taken off with `ip link set dev X xdp off`, but `bpftool link detach` can:
/// gslbd does not attach it again behind the operator's back; a restart does).
std::string linkProblem(const std::string& ifname, uint32_t ourIndex, uint32_t ourProg, const LinkFacts& now);

/// The addresses of interface `ifname` now (getifaddrs: IPv4 and IPv6, link-local included), as
/// sockaddr_in / sockaddr_in6 with port 0. Empty when it has none or does not exist.
std::vector<sockaddr_storage> interfaceAddresses(const std::string& ifname);
/// Why the fast path on `ifname`, whose addresses are `addrs`, can never see a query for `listen`, or empty:
/// the XDP program takes only frames to a listen address (a wildcard one: any address of its family), and
/// a client sends to one of the interface's own addresses, so a listen list without one of them (and no
/// wildcard of a family the interface has an address of) leaves the fast path idle while it says "serving".
/// "none of the listen addresses (127.0.0.1:53) is an address of gx0 (10.99.0.1, fd00::1): the fast path
/// takes only queries to a listen address, and clients reach it at its own; listen on one of them (or on
/// 0.0.0.0:53 / [::]:53)". (A frame to a listen address on another interface that is routed through this
/// one would still be taken: Linux's weak host model; not what clients do.)
std::string listenProblem(const std::string& ifname, const std::vector<ListenAddr>& listen,
                          const std::vector<sockaddr_storage>& addrs);

class Queue;
/// What serves a queue: the responder that answers its datagrams, and how to watch the queue's descriptor
/// on the loop of the thread that owns that responder (server/daemon/main.cpp gives a worker's loop:
/// Worker::responder and Worker::addXdp). The queue is answered on that thread only.
struct Host {
    Responder* responder = nullptr;
    std::function<void(Queue*)>
        attach;  // called once per queue, before the loop starts; serve(q) when readable
};
/// The AF_XDP socket's descriptor, for the worker's event loop.
int queueFd(Queue* q);
/// Answers what waits in q's receive ring (a few batches), on the thread of the worker that serves q.
void serve(Queue* q);

class Path {
  public:
    Path();
    ~Path();  // closes the sockets and detaches the programs (after the workers have stopped)
    Path(const Path&) = delete;
    Path& operator=(const Path&) = delete;

    /// For each interface of sc.xdp: attaches the program for sc.listen's addresses, opens a socket per
    /// receive queue and gives the queues to `hosts` in turn (Host::attach; before they start). What
    /// fails is logged once, with why, and that interface is left to the sockets; never a start-up error.
    void open(const ServerConf& sc, const std::vector<Host>& hosts);
    /// AF_XDP sockets serving (gslbd_xdp_sockets).
    int sockets() const;
    /// Frames the kernel dropped before gslbd could read them, summed over the sockets (XDP_STATISTICS,
    /// linux/if_xdp.h; gslbd_xdp_dropped_total): rx_dropped (e.g. larger than a frame), rx_ring_full (gslbd
    /// fell behind), rx_fill_ring_empty_descs (no frame to receive into), and invalid descriptors. Any
    /// thread. txFull is gslbd's own: answers dropped because the TX ring had no room within kTxWaitNs
    /// (server/net/xdp/tx_ring.hpp).
    struct Drops {
        uint64_t dropped = 0, ringFull = 0, fillEmpty = 0, invalid = 0, txFull = 0;
    };
    Drops drops() const;

    /// One `[server] xdp` interface, for /v1/status and the SIGUSR1 line (doc/xdp.md), in the
    /// config's order. Control thread (recheck() writes what it reads); the counts are relaxed atomics.
    struct IfaceStatus {
        std::string name;
        bool serving = false;   // the fast path takes this interface's queries now
        bool fellBack = false;  // never served: the start left it to the sockets, for `reason`
        std::string reason;     // why not serving: fallbackLine()'s WHY (start) or linkProblem() (since)
        std::string warning;    // listenProblem(), rechecked with the link; empty when none
        int sockets = 0;        // AF_XDP sockets, one per receive queue (0 when fell back)
        bool zeroCopy = false;  // every socket in zero-copy mode (else copy mode)
        uint64_t queries = 0, responses = 0;  // frames received, answers sent, on this interface
        Drops drops;                          // the kernel's counts for this interface's sockets
        /// "serving", "fell back" (at start) or "not serving" (since: linkProblem)
        const char* state() const { return serving ? "serving" : fellBack ? "fell back" : "not serving"; }
    };
    std::vector<IfaceStatus> status() const;
    /// Looks again at every interface the fast path took at start (control thread, once a second: main.cpp):
    /// the interface by the index it had (gone? down? without carrier?), the XDP program attached to it
    /// (still gslbd's?) and its addresses (listenProblem). A change is logged once, as a warning when it
    /// stops serving and as info when it serves again, and recorded as an "xdp" event; `gslbd_xdp_sockets`
    /// counts the sockets of the interfaces serving. A few netlink and ioctl calls an interface.
    void recheck();
    /// The AF_XDP sockets of the interfaces serving now (gslbd_xdp_sockets); sockets() counts them all.
    int servingSockets() const;

  private:
    struct Iface;
    std::vector<std::unique_ptr<Iface>> ifaces_;
    std::vector<ListenAddr> listen_;  // sc.listen at open(), for listenProblem
};

}  // namespace gslb::server::xdp
