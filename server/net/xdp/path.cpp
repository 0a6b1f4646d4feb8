// The AF_XDP fast path, built with libxdp (its xsk.h: UMEM and ring helpers) and libbpf (loading the program,
// its maps, the bpf_link). See path.hpp for the shape; Knot's src/libknot/xdp/ solved the same problem.
#include "server/net/xdp/path.hpp"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <xdp/xsk.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "server/base/clock.hpp"
#include "server/base/events.hpp"
#include "server/base/log.hpp"
#include "server/responder/stats.hpp"
#include "server/responder/responder.hpp"
#include "server/net/xdp/frame.hpp"
#include "server/net/xdp/frames.hpp"
#include "server/net/xdp/tx_ring.hpp"
#include "server/gslbd_xdp_obj.hpp"  // generated in the build directory (server/meson.build)
#include "zones/answer.hpp"

namespace gslb::server::xdp {
namespace {

// UMEM per queue: kFrames frames of kFrameSize octets (a page each: the kernel's aligned-chunk mode). kFill
// of them wait in the fill ring for the kernel to receive into; an answer is written into its query's frame
// and sent from it, and the frame comes back to the spare list once the completion ring returns it.
constexpr uint32_t kFrameSize = XSK_UMEM__DEFAULT_FRAME_SIZE;
constexpr uint32_t kFrames = 4096;
constexpr uint32_t kRing = 2048;  // fill, completion, rx and tx ring sizes (powers of two)
// Frames kept in the fill ring: twice what a UDP socket's default receive buffer holds (212992 octets, ~270
// small datagrams) for a worker that is late; the spare frames (kFrames - kFill) cover answers in flight.
// They go round in FIFO order (FrameFifo, server/net/xdp/frames.hpp: why the order matters to the kernel's
// receive).
constexpr uint32_t kFill = 512;
constexpr int kBatch = Responder::kBatch;
constexpr int kRounds = 8;  // batches per wake-up, then back to the loop (as the UDP sockets do)

// libbpf's last warning, to say why a load or attach failed in our one log line rather than on stderr.
thread_local std::string lastLibbpfWarning;

int libbpfPrint(libbpf_print_level level, const char* fmt, va_list ap) {
    if (level == LIBBPF_WARN) {
        char buf[512];
        vsnprintf(buf, sizeof buf, fmt, ap);
        std::string s(buf);
        while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
        lastLibbpfWarning = s;
    }
    return 0;
}

std::string errText(int err) {
    std::string s = strerror(err < 0 ? -err : err);
    if (!lastLibbpfWarning.empty()) s += " (" + lastLibbpfWarning + ")";
    lastLibbpfWarning.clear();
    return s;
}

int rxQueues(const std::string& ifname) {
    std::error_code ec;
    int n = 0;
    for (const auto& e : std::filesystem::directory_iterator("/sys/class/net/" + ifname + "/queues", ec))
        if (e.path().filename().string().rfind("rx-", 0) == 0) ++n;
    return n > 0 ? n : 1;
}

int mtuOf(const std::string& ifname) {
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return 1500;
    ifreq r{};
    std::snprintf(r.ifr_name, sizeof r.ifr_name, "%s", ifname.c_str());
    int mtu = ioctl(fd, SIOCGIFMTU, &r) == 0 ? r.ifr_mtu : 1500;
    close(fd);
    return mtu;
}

// EBUSY (or EEXIST) from binding a socket to a queue or attaching the program: the interface has an XDP
// program, or a queue an AF_XDP socket, that is not ours - another gslbd, Knot's XDP mode, a test tool.
// strerror alone ("Device or resource busy") does not say what is busy or where to look.
std::string busyHint(const std::string& ifname) {
    return fmt::format(" - another XDP program is attached to {}: `ip link show {}`", ifname, ifname);
}

}  // namespace

class Queue {
  public:
    Responder* responder = nullptr;  // answers this queue, on its host's thread
    std::string where;               // "IFACE queue N", for the log
    uint32_t ifindex = 0;
    size_t mtu = 1500;
    void* area = nullptr;
    xsk_umem* umem = nullptr;
    xsk_socket* xsk = nullptr;
    xsk_ring_prod fill{};
    xsk_ring_cons comp{};
    xsk_ring_cons rx{};
    xsk_ring_prod tx{};
    FrameFifo free{kFrames};  // frames neither in a ring nor in flight, in the order they came free
    // One batch's datagrams, frames and clients, here rather than on serve()'s stack: constructing 32
    // Datagrams a round was ~550 instructions a wake-up (callgrind), more than the frames' own parsing when a
    // wake-up brings one or two queries (any fixed load below the server's maximum). Only [0, m) of a round
    // is read, each entry written whole first.
    Datagram dg[kBatch];
    sockaddr_storage peers[kBatch];
    Frame fr[kBatch];
    uint64_t addr[kBatch];
    bool zeroCopy = false;
    int socketErrno = 0;  // why the socket could not be made (open() false)
    // Frames received and answers sent on this queue, for Path::status (the workers' totals are in
    // WorkerStats): written by the serving worker only, read by the control thread.
    std::atomic<uint64_t> queries{0}, responses{0};
    std::atomic<uint64_t> txFull{0};  // answers dropped: no TX ring room within kTxWaitNs (tx_ring.hpp)

    ~Queue() {
        if (xsk) xsk_socket__delete(xsk);
        if (umem) xsk_umem__delete(umem);
        if (area) munmap(area, size_t(kFrames) * kFrameSize);
    }

    // Makes the UMEM and the socket on (ifname, queue). False with `error`.
    bool open(const std::string& ifname, uint32_t queue, std::string& error) {
        size_t size = size_t(kFrames) * kFrameSize;
        area = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (area == MAP_FAILED) {
            area = nullptr;
            error = fmt::format("UMEM of {} MiB: {}", size >> 20, strerror(errno));
            return false;
        }
        // Huge pages where the kernel has transparent ones (`madvise` mode, Debian's default): every frame is
        // a page of its own, so with 4 KiB pages nearly every query's frame missed the TLB on the worker's
        // side (reading the query, writing the answer). A hint: without THP the UMEM works all the same.
        madvise(area, size, MADV_HUGEPAGE);
        xsk_umem_config uc{};
        uc.fill_size = kRing;
        uc.comp_size = kRing;
        uc.frame_size = kFrameSize;
        uc.frame_headroom = 0;
        if (int r = xsk_umem__create(&umem, area, size, &fill, &comp, &uc)) {
            umem = nullptr;
            error = "UMEM: " + errText(r);
            return false;
        }
        xsk_socket_config sc{};
        sc.rx_size = kRing;
        sc.tx_size = kRing;
        sc.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD;  // our program, not libxdp's default one
        // Zero-copy where the driver has it (the NIC reads and writes UMEM itself), else copy mode (veth,
        // generic XDP). need_wakeup: the kernel says when it must be kicked, and is not otherwise.
        sc.bind_flags = XDP_ZEROCOPY | XDP_USE_NEED_WAKEUP;
        int r = xsk_socket__create(&xsk, ifname.c_str(), queue, umem, &rx, &tx, &sc);
        zeroCopy = r == 0;
        if (r != 0) {
            lastLibbpfWarning.clear();
            sc.bind_flags = XDP_COPY | XDP_USE_NEED_WAKEUP;
            r = xsk_socket__create(&xsk, ifname.c_str(), queue, umem, &rx, &tx, &sc);
        }
        if (r != 0) {
            xsk = nullptr;
            socketErrno = r < 0 ? -r : r;
            error = "AF_XDP socket: " + errText(r);
            return false;
        }
        // kFill frames to the fill ring, the rest spare (they refill it while answers are in flight).
        uint32_t idx = 0;
        uint32_t n = xsk_ring_prod__reserve(&fill, kFill, &idx);
        for (uint32_t i = 0; i < n; ++i) *xsk_ring_prod__fill_addr(&fill, idx + i) = uint64_t(i) * kFrameSize;
        xsk_ring_prod__submit(&fill, n);
        for (uint32_t i = n; i < kFrames; ++i) free.push(uint64_t(i) * kFrameSize);
        return true;
    }

    uint8_t* data(uint64_t addr) { return static_cast<uint8_t*>(xsk_umem__get_data(area, addr)); }

    void reclaim() {
        uint32_t idx = 0;
        uint32_t n = xsk_ring_cons__peek(&comp, kRing, &idx);
        for (uint32_t i = 0; i < n; ++i) free.push(*xsk_ring_cons__comp_addr(&comp, idx + i));
        if (n) xsk_ring_cons__release(&comp, n);
    }

    // Tops the fill ring up to kFill from the spare frames, the first to come free first.
    void refill() {
        if (free.empty()) return;
        uint32_t held = kRing - xsk_prod_nb_free(&fill, kRing);  // frames the kernel has yet to receive into
        if (held >= kFill) return;
        uint32_t want = uint32_t(std::min<size_t>(free.size(), kFill - held));
        uint32_t idx = 0;
        uint32_t n = want ? xsk_ring_prod__reserve(&fill, want, &idx) : 0;
        for (uint32_t i = 0; i < n; ++i) {
            *xsk_ring_prod__fill_addr(&fill, idx + i) = free.pop();
        }
        if (n) xsk_ring_prod__submit(&fill, n);
        if (xsk_ring_prod__needs_wakeup(&fill))
            recvfrom(xsk_socket__fd(xsk), nullptr, 0, MSG_DONTWAIT, nullptr, nullptr);
    }

    // The TX ring as reserveTx/kickTx (tx_ring.hpp) drive it.
    struct Tx {
        Queue& q;
        uint32_t reserve(uint32_t n, uint32_t& idx) {
            uint32_t k = std::min(n, xsk_prod_nb_free(&q.tx, n));
            return k ? xsk_ring_prod__reserve(&q.tx, k, &idx) : 0;
        }
        bool kick() {
            bool again = false;
            if (xsk_ring_prod__needs_wakeup(&q.tx) &&
                sendto(xsk_socket__fd(q.xsk), nullptr, 0, MSG_DONTWAIT, nullptr, 0) < 0)
                again = errno == EAGAIN || errno == ENOBUFS || errno == EBUSY;
            q.reclaim();
            return again;
        }
        static int64_t nowNs() { return monotonicNs(); }
    };

    void serve() {
        Responder& r = *responder;
        Tx ring{*this};
        int64_t txDeadline = 0;  // the wake-up's bound on waiting for the TX ring (tx_ring.hpp)
        const Snapshot& snap = r.snapshot();
        WorkerStats& st = r.stats();
        reclaim();
        for (int round = 0; round < kRounds; ++round) {
            uint32_t idx = 0;
            uint32_t n = xsk_ring_cons__peek(&rx, kBatch, &idx);
            if (n == 0) break;
            bump(queries, n);
            int m = 0;
            for (uint32_t i = 0; i < n; ++i) {
                const xdp_desc* d = xsk_ring_cons__rx_desc(&rx, idx + i);
                bump(st.xdp);
                uint8_t* p = data(d->addr);
                if (!parseFrame({p, d->len}, fr[m], peers[m], ifindex)) {
                    bump(st.udp);  // a datagram all the same, counted as the sockets count a runt
                    bump(st.dropped);
                    free.push(xsk_umem__extract_addr(d->addr));
                    continue;
                }
                addr[m] = d->addr;
                // out nullptr: answerDatagrams packs the answers one after another, as for the sockets (at
                // answerBuffer's 64 KiB strides the batch's answers all fell in the same cache sets)
                dg[m] = {{p + fr[m].payload, fr[m].payloadLen}, &peers[m], nullptr, {}};
                ++m;
            }
            xsk_ring_cons__release(&rx, n);
            r.answerDatagrams(snap, dg, m);
            int sending = 0;
            for (int i = 0; i < m; ++i) {
                auto& res = dg[i].res;
                if (res.len == 0) continue;
                // The answer is written over its query's frame, from the query's offset in the chunk on.
                size_t room = kFrameSize - (xsk_umem__extract_offset(addr[i]) +
                                            (xsk_umem__extract_addr(addr[i]) & (kFrameSize - 1)));
                size_t max = replyRoom(fr[i], room, mtu);
                if (res.len > max) {
                    // Too large for the link (or the frame): TC with the question only, as the socket path
                    // does on EMSGSIZE (RFC 9715 §3.1 R3), never a fragment. A signed answer cannot be cut.
                    if (res.tsigAt || res.len < 12) {
                        res.len = 0;
                        continue;
                    }
                    res.len = zones::slip({dg[i].out, 65535}, res, false);
                    bump(st.truncated);
                }
                ++sending;
            }
            uint32_t tidx = 0;
            uint32_t room = sending ? reserveTx(ring, uint32_t(sending), tidx, txDeadline) : 0;
            if (room < uint32_t(sending)) bump(txFull, uint64_t(sending) - room);
            uint32_t t = 0;
            for (int i = 0; i < m; ++i) {
                auto& res = dg[i].res;
                uint64_t a = addr[i];
                if (res.len == 0 || t == room) {  // no answer, or no room for it in the TX ring
                    free.push(xsk_umem__extract_addr(a));
                    continue;
                }
                uint8_t* p = data(a);
                std::memcpy(p + fr[i].payload, dg[i].out, res.len);
                xdp_desc* d = xsk_ring_prod__tx_desc(&tx, tidx + t++);
                d->addr = a;
                d->len = uint32_t(buildReply({p, fr[i].payload + res.len}, fr[i], res.len));
                d->options = 0;
            }
            if (t) {
                xsk_ring_prod__submit(&tx, t);
                bump(st.xdpSent, t);
                bump(responses, t);
                kickTx(ring, txDeadline);
            }
            refill();
            if (n < uint32_t(kBatch)) break;
        }
        reclaim();
        refill();
    }
};

struct Path::Iface {
    std::string name;
    std::string fellBack;  // why the sockets serve it (then no program, no queues); empty when serving
    uint32_t ifindex = 0;  // the interface the program and the sockets were attached to
    uint32_t progId = 0;   // the kernel's id of gslbd's program (bpf_xdp_query names what is attached)
    std::string lost;      // linkProblem() since the start (recheck); empty while serving
    std::string warning;   // listenProblem(); empty when a listen address is one of the interface's
    bpf_object* obj = nullptr;
    bpf_link* link = nullptr;
    std::vector<std::unique_ptr<Queue>> queues;
    ~Iface() {
        queues.clear();                     // the sockets go first: their map entries with them
        if (link) bpf_link__destroy(link);  // detaches the program from the interface
        if (obj) bpf_object__close(obj);
    }
};

bool available() {
    return true;
}

int queueFd(Queue* q) {
    return xsk_socket__fd(q->xsk);
}

void serve(Queue* q) {
    q->serve();
}

Path::Path() = default;
Path::~Path() = default;

int Path::sockets() const {
    int n = 0;
    for (const auto& i : ifaces_) n += int(i->queues.size());
    return n;
}

namespace {

void addDrops(const std::vector<std::unique_ptr<Queue>>& queues, Path::Drops& d) {
    for (const auto& q : queues) {
        d.txFull += q->txFull.load(std::memory_order_relaxed);
        xdp_statistics s{};
        socklen_t len = sizeof s;
        if (getsockopt(xsk_socket__fd(q->xsk), SOL_XDP, XDP_STATISTICS, &s, &len) != 0) continue;
        d.dropped += s.rx_dropped;
        d.ringFull += s.rx_ring_full;
        d.fillEmpty += s.rx_fill_ring_empty_descs;
        d.invalid += s.rx_invalid_descs + s.tx_invalid_descs;
    }
}

}  // namespace

Path::Drops Path::drops() const {
    Drops d;
    for (const auto& i : ifaces_) addDrops(i->queues, d);
    return d;
}

std::vector<Path::IfaceStatus> Path::status() const {
    std::vector<IfaceStatus> out;
    for (const auto& i : ifaces_) {
        IfaceStatus s;
        s.name = i->name;
        s.fellBack = !i->fellBack.empty();
        s.serving = !s.fellBack && i->lost.empty();
        s.reason = s.fellBack ? i->fellBack : i->lost;
        s.warning = i->warning;
        s.sockets = int(i->queues.size());
        s.zeroCopy = !i->queues.empty();
        for (const auto& q : i->queues) {
            s.zeroCopy = s.zeroCopy && q->zeroCopy;
            s.queries += q->queries.load(std::memory_order_relaxed);
            s.responses += q->responses.load(std::memory_order_relaxed);
        }
        addDrops(i->queues, s.drops);
        out.push_back(std::move(s));
    }
    return out;
}

int Path::servingSockets() const {
    int n = 0;
    for (const auto& i : ifaces_)
        if (i->lost.empty()) n += int(i->queues.size());
    return n;
}

namespace {

// The interface at index `ifindex` as it is now, for linkProblem (control thread, once a second).
// `current` gets its name now (renamed or not), empty when it is gone.
LinkFacts linkFacts(const std::string& name, uint32_t ifindex, uint32_t ourProg, std::string& current) {
    LinkFacts f;
    char buf[IF_NAMESIZE] = {};
    f.exists = if_indextoname(ifindex, buf) != nullptr;
    current = f.exists ? buf : "";
    f.indexByName = if_nametoindex(name.c_str());
    if (!f.exists) return f;
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd >= 0) {
        ifreq r{};
        std::snprintf(r.ifr_name, sizeof r.ifr_name, "%s", buf);
        if (ioctl(fd, SIOCGIFFLAGS, &r) == 0) {
            f.up = (r.ifr_flags & IFF_UP) != 0;
            f.carrier = (r.ifr_flags & IFF_RUNNING) != 0;
        }
        close(fd);
    }
    // RTM_GETLINK's IFLA_XDP (netlink: no privilege needed after `user` dropped them). A query that fails
    // says nothing about the program, so it does not count against it.
    LIBBPF_OPTS(bpf_xdp_query_opts, q);
    f.progId = ourProg;
    if (bpf_xdp_query(int(ifindex), 0, &q) == 0) {
        f.progId = 0;
        for (uint32_t id : {q.drv_prog_id, q.skb_prog_id, q.hw_prog_id, q.prog_id})
            if (id == ourProg || (id && !f.progId)) f.progId = id;
    }
    return f;
}

}  // namespace

void Path::recheck() {
    for (auto& i : ifaces_) {
        if (!i->fellBack.empty()) continue;  // the sockets' since the start
        std::string current;
        LinkFacts f = linkFacts(i->name, i->ifindex, i->progId, current);
        std::string problem = linkProblem(i->name, i->ifindex, i->progId, f);
        if (problem != i->lost) {
            if (problem.empty()) {
                log::info("xdp on {}: serving again through AF_XDP", i->name);
                recordEvent(log::Level::Info, "xdp", i->name, "serving again");
            } else {
                log::warn("xdp on {}: not serving: {}", i->name, problem);
                recordEvent(log::Level::Warn, "xdp", i->name, "not serving: " + problem);
            }
            i->lost = problem;
        }
        if (!f.exists) continue;  // what its addresses were stays said
        std::string warning = listenProblem(i->name, listen_, interfaceAddresses(current));
        if (warning != i->warning) {
            if (warning.empty())
                log::info(
                    "xdp on {}: a listen address is one of its addresses now: the fast path can see "
                    "queries",
                    i->name);
            else
                log::warn("xdp on {}: {}", i->name, warning);
            i->warning = warning;
        }
    }
}

void Path::open(const ServerConf& sc, const std::vector<Host>& hosts) {
    if (sc.xdp.empty() || hosts.empty()) return;
    listen_ = sc.listen;
    ifaces_.reserve(sc.xdp.size());
    libbpf_set_print(libbpfPrint);
    size_t next = 0;
    for (const auto& name : sc.xdp) {
        // Logged once, and kept for /v1/status: the interface is then the sockets' alone.
        auto fail = [&](const std::string& why) {
            log::warn("{}", fallbackLine(name, why));
            auto gone = std::make_unique<Iface>();
            gone->name = name;
            gone->fellBack = why;
            ifaces_.push_back(std::move(gone));
        };
        uint32_t ifindex = 0;
        if (std::string why = interfaceProblem(name, &ifindex); !why.empty()) {
            fail(why);
            continue;
        }
        auto f = std::make_unique<Iface>();
        f->name = name;
        LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = "gslbd_xdp");
        f->obj = bpf_object__open_mem(kProgram, sizeof kProgram, &oo);
        if (!f->obj) {
            fail("cannot open the XDP program: " + errText(errno));
            continue;
        }
        if (int r = bpf_object__load(f->obj)) {
            fail("cannot load the XDP program: " + errText(r) +
                 (r == -EPERM ? " - needs CAP_BPF and CAP_NET_ADMIN (or root)" : ""));
            continue;
        }
        int xsks = bpf_object__find_map_fd_by_name(f->obj, "gslbd_xsks");
        int dests = bpf_object__find_map_fd_by_name(f->obj, "gslbd_dests");
        int fast = bpf_object__find_map_fd_by_name(f->obj, "gslbd_fast");
        bpf_program* prog = bpf_object__find_program_by_name(f->obj, "gslbd_xdp");
        if (xsks < 0 || dests < 0 || fast < 0 || !prog) {
            fail("the XDP program lacks its maps");
            continue;
        }
        uint8_t one = 1;
        std::vector<Dest> listened;
        for (const auto& l : sc.listen) {
            Dest d;
            if (!destOf(l.addr, l.wildcard, d)) continue;
            bpf_map_update_elem(dests, &d, &one, BPF_ANY);
            listened.push_back(d);
        }
        uint32_t zero = 0;
        FastDests table = fastDests(listened);
        if (bpf_map_update_elem(fast, &zero, &table, BPF_ANY) != 0) {
            fail("the XDP program's gslbd_fast table: " + errText(errno));
            continue;
        }
        size_t mtu = size_t(mtuOf(name));
        int nq = std::min(rxQueues(name), 256);
        std::string why;
        for (int q = 0; q < nq; ++q) {
            auto queue = std::make_unique<Queue>();
            queue->where = fmt::format("{} queue {}", name, q);
            queue->ifindex = ifindex;
            queue->mtu = mtu;
            if (!queue->open(name, uint32_t(q), why)) {
                // The queue is bound to an AF_XDP socket of another program (a second gslbd on the same
                // interface meets the first one's sockets before it would meet its program).
                if (queue->socketErrno == EBUSY) why += busyHint(name);
                break;
            }
            int fd = xsk_socket__fd(queue->xsk);
            uint32_t key = uint32_t(q);
            if (bpf_map_update_elem(xsks, &key, &fd, BPF_ANY) != 0) {
                why = "XSKMAP: " + errText(errno);
                break;
            }
            f->queues.push_back(std::move(queue));
        }
        if (f->queues.size() != size_t(nq)) {
            fail(fmt::format("queue {}: {}", f->queues.size(), why));
            continue;
        }
        // Sockets first, then the program: no frame is redirected before a socket can take it.
        f->link = bpf_program__attach_xdp(prog, int(ifindex));
        if (!f->link) {
            int e = errno;
            fail("cannot attach the XDP program: " + errText(e) +
                 (e == EBUSY || e == EEXIST ? busyHint(name) : ""));
            continue;
        }
        bool zc = true;
        for (auto& q : f->queues) {
            const Host& h = hosts[next++ % hosts.size()];
            q->responder = h.responder;
            h.attach(q.get());
            zc = zc && q->zeroCopy;
        }
        f->ifindex = ifindex;
        bpf_prog_info info{};
        uint32_t infoLen = sizeof info;
        if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &infoLen) == 0) f->progId = info.id;
        log::info("xdp on {}: {} queue(s), {} mode, UDP to the listen addresses answered from AF_XDP", name,
                  f->queues.size(), zc ? "zero-copy" : "copy");
        // It serves, but can it ever see a query? Said once here; recheck() follows the addresses.
        f->warning = listenProblem(name, sc.listen, interfaceAddresses(name));
        if (!f->warning.empty()) log::warn("xdp on {}: {}", name, f->warning);
        ifaces_.push_back(std::move(f));
    }
}

}  // namespace gslb::server::xdp
