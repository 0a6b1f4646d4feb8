// The XDP program gslbd attaches to each interface of `[server] xdp` (server/net/xdp/path.cpp). It redirects
// one kind of frame into the AF_XDP socket of the receiving queue: Ethernet (no VLAN tag), IPv4 without
// options or fragmentation, or IPv6 whose next header is UDP, carrying UDP to an address and port gslbd listens
// on (the `gslbd_fast` list, or the `gslbd_dests` map when there are more; an all-zero address stands for a
// wildcard listen address). Everything else - ARP, ICMP, TCP (so DNS over TCP and AXFR), other ports,
// fragments, IPv6 extension headers - is XDP_PASS: the kernel handles it as if no program were there. A queue without a socket (its socket closed, or a gslbd that
// died) passes too: bpf_redirect_map's flags are the action when the key has no entry (Linux 5.3+).
//
// Compiled at build time with `clang -target bpf` (meson.build: no libxdp dispatcher, whose multi-program
// chaining needs BTF-annotated programs and a pinned bpffs; gslbd attaches one program through a bpf_link,
// which the kernel takes off the interface when the last file descriptor closes: at exit, and at a crash too).
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>

#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

// Keep in step with server/net/xdp/frame.hpp (Dest).
struct gslbd_dest {
    __u8 addr[16];  // IPv4 in the first 4 octets; all zero: any address (a wildcard listen address)
    __u16 port;     // network order
    __u16 family;   // 4 or 6
};

struct {
    __uint(type, BPF_MAP_TYPE_XSKMAP);
    __uint(max_entries, 256);  // [rx queue index] -> AF_XDP socket
    __type(key, __u32);
    __type(value, __u32);
} gslbd_xsks SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 256);
    __type(key, struct gslbd_dest);
    __type(value, __u8);
} gslbd_dests SEC(".maps");

// The listen addresses again, as a short list the program walks: a lookup in an array map is a few
// instructions the verifier inlines, where each hash lookup (a 20-octet jhash and a bucket walk, up to two a
// frame with the wildcard's) was 3 % of the veth's NAPI thread per query. Keep in step with frame.hpp
// (FastDests): the same 20-octet entries as struct gslbd_dest, the address read as four words.
#define GSLBD_FAST 8
struct gslbd_fast {
    __u32 n;  // listen addresses; more than GSLBD_FAST: look them up in gslbd_dests instead
    __u32 pad;
    struct {
        __u32 addr[4];
        __u16 port;
        __u16 family;
    } d[GSLBD_FAST];
};

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct gslbd_fast);
} gslbd_fast SEC(".maps");

static __always_inline int listened(struct gslbd_dest* d) {
    __u32 zero = 0;
    const struct gslbd_fast* f = bpf_map_lookup_elem(&gslbd_fast, &zero);
    if (!f) return 0;
    __u32 n = f->n;
    if (n <= GSLBD_FAST) {
        const __u32* a = (const __u32*)d->addr;
#pragma unroll
        for (int i = 0; i < GSLBD_FAST; ++i) {
            const __u32* e = f->d[i].addr;
            if (i >= n || f->d[i].port != d->port || f->d[i].family != d->family) continue;
            if ((e[0] | e[1] | e[2] | e[3]) == 0) return 1;  // a wildcard listen address
            if (e[0] == a[0] && e[1] == a[1] && e[2] == a[2] && e[3] == a[3]) return 1;
        }
        return 0;
    }
    if (bpf_map_lookup_elem(&gslbd_dests, d)) return 1;
    __builtin_memset(d->addr, 0, sizeof d->addr);
    return bpf_map_lookup_elem(&gslbd_dests, d) != 0;
}

SEC("xdp")
int gslbd_xdp(struct xdp_md* ctx) {
    void* data = (void*)(long)ctx->data;
    void* end = (void*)(long)ctx->data_end;
    struct ethhdr* eth = data;
    if ((void*)(eth + 1) > end) return XDP_PASS;
    struct gslbd_dest d __attribute__((aligned(4)));  // its address is read as words
    __builtin_memset(&d, 0, sizeof d);
    struct udphdr* udp;
    if (eth->h_proto == bpf_htons(ETH_P_IP)) {
        struct iphdr* ip = (void*)(eth + 1);
        if ((void*)(ip + 1) > end) return XDP_PASS;
        // No options (ihl 5), no fragment (MF clear, offset 0): the fast path builds its reply in place.
        if (ip->ihl != 5 || ip->version != 4 || ip->protocol != IPPROTO_UDP) return XDP_PASS;
        if (ip->frag_off & bpf_htons(0x3fff)) return XDP_PASS;
        udp = (void*)(ip + 1);
        __builtin_memcpy(d.addr, &ip->daddr, 4);
        d.family = 4;
    } else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
        struct ipv6hdr* ip6 = (void*)(eth + 1);
        if ((void*)(ip6 + 1) > end) return XDP_PASS;
        if (ip6->nexthdr != IPPROTO_UDP) return XDP_PASS;
        udp = (void*)(ip6 + 1);
        __builtin_memcpy(d.addr, &ip6->daddr, 16);
        d.family = 6;
    } else {
        return XDP_PASS;
    }
    if ((void*)(udp + 1) > end) return XDP_PASS;
    d.port = udp->dest;
    if (!listened(&d)) return XDP_PASS;
    return bpf_redirect_map(&gslbd_xsks, ctx->rx_queue_index, XDP_PASS);
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
