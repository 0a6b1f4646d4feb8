// The AF_XDP fast path for UDP queries (issue 16; `[server] xdp`, README "AF_XDP fast path"): an XDP program
// on each configured interface redirects UDP frames for gslbd's listen addresses into one AF_XDP socket per
// receive queue; the UDP workers read them from shared memory (UMEM), answer them with the socket path's own
// Worker::answerDatagrams, and send the answers from the same frames. Everything else (TCP, ICMP, other
// addresses, fragments) goes on to the kernel, and the UDP sockets stay open: what the fast path cannot take
// (an interface that is missing, a driver without XDP, no CAP_NET_ADMIN/CAP_BPF/CAP_NET_RAW, a gslbd built
// without libxdp) is logged once and served by the sockets. The program is attached through a bpf_link: the
// kernel takes it off when gslbd exits, crashes included.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "server/config.hpp"

namespace gslb::server {
class Worker;
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

class Queue;
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
    /// receive queue and gives the queues to `workers` in turn (Worker::addXdp; before they start). What
    /// fails is logged once, with why, and that interface is left to the sockets; never a start-up error.
    void open(const ServerConf& sc, const std::vector<Worker*>& workers);
    /// AF_XDP sockets serving (gslbd_xdp_sockets).
    int sockets() const;
    /// Frames the kernel dropped before gslbd could read them, summed over the sockets (XDP_STATISTICS,
    /// linux/if_xdp.h; gslbd_xdp_dropped_total): rx_dropped (e.g. larger than a frame), rx_ring_full (gslbd
    /// fell behind), rx_fill_ring_empty_descs (no frame to receive into), and invalid descriptors. Any
    /// thread. txFull is gslbd's own: answers dropped because the TX ring had no room within kTxWaitNs
    /// (server/xdp/tx_ring.hpp).
    struct Drops {
        uint64_t dropped = 0, ringFull = 0, fillEmpty = 0, invalid = 0, txFull = 0;
    };
    Drops drops() const;

    /// One `[server] xdp` interface, for /v1/status and the SIGUSR1 line (README "AF_XDP fast path"), in the
    /// config's order. Any thread: what open() decided does not change, the counts are relaxed atomics.
    struct IfaceStatus {
        std::string name;
        bool serving = false;   // false: fell back to the sockets, for `reason`
        std::string reason;     // the WHY of fallbackLine() (the words logged at start); empty when serving
        int sockets = 0;        // AF_XDP sockets, one per receive queue (0 when fell back)
        bool zeroCopy = false;  // every socket in zero-copy mode (else copy mode)
        uint64_t queries = 0, responses = 0;  // frames received, answers sent, on this interface
        Drops drops;                          // the kernel's counts for this interface's sockets
    };
    std::vector<IfaceStatus> status() const;

  private:
    struct Iface;
    std::vector<std::unique_ptr<Iface>> ifaces_;
};

}  // namespace gslb::server::xdp
