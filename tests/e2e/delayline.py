#!/usr/bin/env python3
"""A delay line for network namespaces: a user-space router that holds each IPv4 packet between two networks
for a configured time before forwarding it. The kernel's netem qdisc does this job, but this machine's kernel
has no netem (sch_netem is not built), so the lab of test_rtt.py routes its client and site networks through
this instead.

Run inside the router namespace, whose kernel forwarding is off (a new namespace's default): the kernel still
answers ARP and traffic for the router's own addresses; every other IPv4 frame arriving on a listed interface is
read here (AF_PACKET), held for the delay of its (source network, destination network) pair, and sent out of the
interface of the destination network with the router's MAC as source and the neighbour's as destination, its TCP
or UDP checksum computed (a veth leaves it to offload). TTL is left alone (one hop that is not one).

    delayline.py CONFIG.json

CONFIG: {"links": [{"ifname": "rc1", "net": "10.2.1.0/24", "peer_mac": "aa:…"}, …],
         "delays_ms": {"10.2.1.0/24 10.1.2.0/24": 5, …}}     one-way, per direction; missing pairs: 0
Send SIGHUP after rewriting CONFIG to change the delays (links stay). SIGTERM ends it.
"""
import heapq
import ipaddress
import json
import os
import select
import signal
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import inet_checksum  # noqa: E402

ETH_P_IP = 0x0800
PACKET_OUTGOING = 4


def fix_l4_checksum(frame):
    """The frame with its TCP or UDP checksum computed. A veth hands the sender's packet over with the checksum
    left to offload (CHECKSUM_PARTIAL): read from an AF_PACKET socket and sent again, it would arrive wrong and
    the receiver would drop it."""
    ihl = (frame[14] & 0x0F) * 4
    proto = frame[23]
    total = struct.unpack("!H", frame[16:18])[0]
    if proto not in (6, 17) or (struct.unpack("!H", frame[20:22])[0] & 0x3FFF):
        return frame  # not TCP/UDP, or a fragment: left as it is
    l4 = bytearray(frame[14 + ihl:14 + total])
    at = 16 if proto == 6 else 6
    if len(l4) < at + 2:
        return frame
    l4[at:at + 2] = b"\0\0"
    pseudo = frame[26:34] + struct.pack("!BBH", 0, proto, len(l4))
    c = inet_checksum(pseudo + bytes(l4))
    if proto == 17 and c == 0:
        c = 0xFFFF
    l4[at:at + 2] = struct.pack("!H", c)
    return frame[:14 + ihl] + bytes(l4) + frame[14 + total:]


def load(path):
    with open(path) as f:
        return json.load(f)


def main():
    path = sys.argv[1]
    cfg = load(path)
    links = []
    for l in cfg["links"]:
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_IP))
        s.bind((l["ifname"], 0))
        s.setblocking(False)
        own = bytes.fromhex(open(f"/sys/class/net/{l['ifname']}/address").read().strip().replace(":", ""))
        links.append({"sock": s, "net": ipaddress.ip_network(l["net"]), "own": own,
                      "peer": bytes.fromhex(l["peer_mac"].replace(":", ""))})
    delays = {}
    reload = [True]

    def read_delays():
        d = {}
        for k, v in load(path).get("delays_ms", {}).items():
            a, b = k.split()
            d[(ipaddress.ip_network(a), ipaddress.ip_network(b))] = float(v) / 1000.0
        return d

    def on_hup(*_):
        reload[0] = True

    signal.signal(signal.SIGHUP, on_hup)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    by_fd = {l["sock"].fileno(): l for l in links}
    poller = select.poll()
    for fd in by_fd:
        poller.register(fd, select.POLLIN)
    held = []  # (release time, sequence, out link, frame)
    seq = 0
    print("delayline: ready", flush=True)
    while True:
        if reload[0]:
            reload[0] = False
            delays = read_delays()
        now = time.monotonic()
        while held and held[0][0] <= now:
            _, _, out, frame = heapq.heappop(held)
            try:
                out["sock"].send(frame)
            except OSError:
                pass  # a full queue drops, as a router would
        timeout = max(0, int((held[0][0] - now) * 1000)) if held else 200
        try:
            events = poller.poll(timeout)
        except InterruptedError:
            continue
        for fd, _ in events:
            link = by_fd[fd]
            while True:
                try:
                    frame, addr = link["sock"].recvfrom(65535)
                except (BlockingIOError, InterruptedError):
                    break
                if addr[2] == PACKET_OUTGOING or len(frame) < 34:
                    continue  # what we (or the kernel) sent out of this interface
                src = ipaddress.IPv4Address(frame[26:30])
                dst = ipaddress.IPv4Address(frame[30:34])
                out = next((l for l in links if dst in l["net"]), None)
                if out is None or out is link:
                    continue  # for the router itself, or not ours to route: the kernel's
                delay = 0.0
                for (a, b), d in delays.items():
                    if src in a and dst in b:
                        delay = d
                        break
                rewritten = out["peer"] + out["own"] + fix_l4_checksum(frame)[12:]
                seq += 1
                heapq.heappush(held, (time.monotonic() + delay, seq, out, rewritten))


if __name__ == "__main__":
    main()
