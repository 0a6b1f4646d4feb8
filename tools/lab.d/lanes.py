"""Lanes: one per policy under test and one per bound, each with its own session table at every site, all fed the
same sessions at the same wall time by run().

A DNS lane's sessions find their site through caching resolvers: each resolver sends real UDP queries to the
lane's server from its own 127.0.x.y address (Linux accepts any 127/8 source), caches the answer for the TTL the
answer carries, and queries again only at a client lookup (a session arrival) after it expired; lookups while a
query is in flight wait for its answer, as a resolver coalesces them. A bound lane needs no DNS: `least-utilised`
sends each session to the site with the lowest utilisation now, `capacity-random` picks a site at random in
proportion to the capacities now (the static spread, without caching). A session arriving at a full site (or one
failing its health check) is refused.
"""

import asyncio
import random
import struct

import harness


class Resolver(asyncio.DatagramProtocol):
    """One caching resolver's UDP socket (shared by the lanes: each lane's server has its own port)."""

    def __init__(self):
        self.pending = {}      # (server port, id) -> future
        self.transport = None
        self.rng = random.Random()

    def connection_made(self, transport):
        self.transport = transport

    def datagram_received(self, data, addr):
        if len(data) >= 12:
            fut = self.pending.pop((addr[1], struct.unpack("!H", data[:2])[0]), None)
            if fut is not None and not fut.done():
                fut.set_result(data)

    async def query(self, port, qname, timeout=1.0, tries=3):
        """The answer's (address, TTL), None when it has no A record, or "timeout"."""
        loop = asyncio.get_running_loop()
        for _ in range(tries):
            qid = self.rng.randrange(65536)
            fut = loop.create_future()
            self.pending[(port, qid)] = fut
            self.transport.sendto(harness.build_query(qname, "A", qid=qid), ("127.0.0.1", port))
            try:
                msg = harness.decode_msg(await asyncio.wait_for(fut, timeout))
            except asyncio.TimeoutError:
                self.pending.pop((port, qid), None)
                continue
            except harness.WireError:
                return None
            for _, ttl, _, rtype, rdata in msg.answer:
                if rtype == "A":
                    return rdata, ttl
            return None
        return "timeout"


async def open_resolvers(n):
    """n resolvers on 127.0.1.1, 127.0.1.2, … (250 per /24)."""
    loop = asyncio.get_running_loop()
    out = []
    for r in range(n):
        addr = f"127.0.{1 + r // 250}.{1 + r % 250}"
        _, proto = await loop.create_datagram_endpoint(Resolver, local_addr=(addr, 0))
        out.append(proto)
    return out


class Lane:
    """Sessions' outcomes: records (idx, arrival, site or None, accepted, admitted at, end, answered at): the
    last, for a DNS lane, the lab time its resolver received the answer that sent the session there (None for a
    bound, or no answer)."""
    dns = False

    def __init__(self, label, lane_id, sites):
        self.label, self.id, self.sites = label, lane_id, sites
        self.table = sites.add_lane(lane_id, getattr(self, "fall", None))
        self.records = []
        self.queries = []      # (sent at, resolver, answered at or None, ttl or None, site or None)

    def admit(self, s, site, t, answered=None):
        ok = False
        if site is not None:
            ok = self.table.admit(site, t, s.end, self.sites.cap(site, t))
        self.records.append((s.idx, s.t, site, ok, t, s.end, answered))


class BoundLane(Lane):
    def __init__(self, label, lane_id, sites, kind, seed):
        super().__init__(label, lane_id, sites)
        self.kind = kind
        self.rng = random.Random(f"{seed}/{kind}")

    def arrive(self, s, _now):
        """At the session's own arrival time, not when the lab got to it: the bounds are exact and repeatable."""
        sites, t = self.sites, s.t
        cand = [i for i in range(len(sites.capacities)) if sites.cap(i, t) > 0]
        if not cand:
            return self.admit(s, None, t)
        if self.kind == "least-utilised":
            self.table.settle(t)
            site = min(cand, key=lambda i: (self.table.used[i] / sites.cap(i, t), -sites.cap(i, t)))
        else:
            site = self.rng.choices(cand, weights=[sites.cap(i, t) for i in cand])[0]
        self.admit(s, site, t)


class DnsLane(Lane):
    dns = True

    def __init__(self, label, lane_id, sites, server, resolvers, clock, fall, qname, ttl):
        self.fall, self.ttl = fall, ttl
        super().__init__(label, lane_id, sites)
        self.server, self.resolvers, self.clock, self.qname = server, resolvers, clock, qname
        self.cache = [None] * len(resolvers)      # (expires at, site, answered at)
        self.waiting = [None] * len(resolvers)    # sessions waiting for the resolver's query in flight
        self.site_of = {a: i for i, a in enumerate(sites.addrs)}
        self.tasks = set()
        self.unresolved = 0

    def arrive(self, s, t):
        r = s.resolver
        c = self.cache[r]
        if c is not None and t < c[0]:
            return self.admit(s, c[1], t, c[2])
        if self.waiting[r] is not None:
            self.waiting[r].append(s)
            return
        self.waiting[r] = [s]
        task = asyncio.ensure_future(self._resolve(r, t))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _resolve(self, r, sent):
        ans = await self.resolvers[r].query(self.server.port, self.qname)
        now = self.clock()
        site = ttl = None
        if isinstance(ans, tuple):
            site, ttl = self.site_of.get(ans[0]), ans[1]
            if site is not None:
                self.cache[r] = (now + ttl, site, now)
        self.queries.append((sent, r, None if ans == "timeout" else now, ttl, site))
        waiting, self.waiting[r] = self.waiting[r], None
        for s in waiting:
            if site is None:
                self.unresolved += 1
            self.admit(s, site, now, now if site is not None else None)


async def run(sc, stream, lanes, clock_base, late_after=0.1):
    """Replays the stream in real time to every lane; returns lateness stats. clock_base: a one-element list
    holding the loop time of lab time 0, set here (the sites' and lanes' clock reads it)."""
    loop = asyncio.get_running_loop()
    t0 = clock_base[0] = loop.time()
    lags = []
    for s in stream:
        delay = t0 + s.t - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)
        now = loop.time() - t0
        lags.append(now - s.t)
        for lane in lanes:
            lane.arrive(s, now)
    rest = t0 + sc.duration - loop.time()
    if rest > 0:
        await asyncio.sleep(rest)
    pending = [t for lane in lanes if lane.dns for t in lane.tasks]
    if pending:
        await asyncio.wait(pending, timeout=5)
    lags.sort()
    return {"arrivals": len(lags), "late": sum(1 for x in lags if x > late_after), "late_after_s": late_after,
            "max_lag_s": lags[-1] if lags else 0.0,
            "p99_lag_s": lags[int(0.99 * (len(lags) - 1))] if lags else 0.0}
