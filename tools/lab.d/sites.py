"""The lab's sites: a session table per site and per policy under test, and each site's HTTP endpoints.

Each site listens on its own loopback address (the address gslbd and gdnsd answer for it) on one port shared by
all sites, and serves, per policy lane L:
  GET /metrics/L   HAProxy's Prometheus exposition (the series gslbd's `haproxy` preset reads, in HAProxy 2.6's
                   names, HELP and TYPE lines): process current/max connections = lane L's sessions at the site
                   and its capacity now, idle time = 100 - utilisation, frontend `www` current sessions
  GET /health/L    200 "up", or 503 while the scenario fails the site's health check
The exposition stays up while the health check fails (HAProxy runs; its backends are down), so only the health
check can tell: what a metric-only policy would miss.

This is an emulation of HAProxy, not HAProxy: a lane's sessions are entries in a table, not TCP connections held
open (a 900-seat run per policy would need thousands of live connections per lane and HAProxy queues at maxconn
rather than refusing), and the capacity changes mid-run and the refusals must be exact. The exposition's names and
shape are HAProxy 2.6's (Debian 12); the scrape path against a real HAProxy is what tests/e2e/test_sources.py
covers.
"""

import asyncio
import heapq
import socket

from scenario import capacity_at, is_up


class LaneTable:
    """One lane's sessions at every site: counts, and a heap of end times per site (lab seconds). A site's
    sessions end when its health failure begins (its site is gone): `failures` [(site, from, to)]."""

    def __init__(self, n, failures=()):
        self.used = [0] * n
        self.ends = [[] for _ in range(n)]
        self.failures = sorted((a, site) for site, a, _ in failures)

    def settle(self, t):
        """Ends the sessions due by t. Every admission settles first, so a failure's clearing comes before
        any session admitted after it began."""
        while self.failures and self.failures[0][0] <= t:
            _, site = self.failures.pop(0)
            self.used[site] = 0
            self.ends[site] = []
        for i, h in enumerate(self.ends):
            while h and h[0] <= t:
                heapq.heappop(h)
                self.used[i] -= 1

    def admit(self, site, t, end, cap):
        """A session arriving at `site` at t: accepted (and held until `end`) when the site has a free seat."""
        self.settle(t)
        if self.used[site] >= cap:
            return False
        self.used[site] += 1
        heapq.heappush(self.ends[site], end)
        return True


EXPOSITION = """\
# HELP haproxy_process_max_connections Hard limit on the number of per-process connections (configured or imposed by Ulimit-n)
# TYPE haproxy_process_max_connections gauge
haproxy_process_max_connections {cap}
# HELP haproxy_process_current_connections Current number of connections on this worker process
# TYPE haproxy_process_current_connections gauge
haproxy_process_current_connections {used}
# HELP haproxy_process_idle_time_percent Percentage of last second spent waiting in the current worker thread
# TYPE haproxy_process_idle_time_percent gauge
haproxy_process_idle_time_percent {idle}
# HELP haproxy_frontend_current_sessions Number of current sessions on the frontend, backend or server
# TYPE haproxy_frontend_current_sessions gauge
haproxy_frontend_current_sessions{{proxy="www"}} {used}
"""


def shared_port(addrs, tries=200):
    """A TCP port free on every one of `addrs` (each site listens on its own address, on the same port: gdnsd's
    http_status checks one port for all addresses of a service type)."""
    for _ in range(tries):
        held = []
        try:
            s = socket.socket()
            s.bind((addrs[0], 0))
            held.append(s)
            port = s.getsockname()[1]
            for a in addrs[1:]:
                s = socket.socket()
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind((a, port))
                held.append(s)
            return port
        except OSError:
            continue
        finally:
            for s in held:
                s.close()
    raise RuntimeError("no port free on every site address")


class Sites:
    """Every site of a scenario run: addresses, capacities, the lanes' tables and the HTTP endpoints."""

    def __init__(self, sc, capacities, addrs, clock):
        self.sc, self.capacities, self.addrs, self.clock = sc, capacities, addrs, clock
        self.port = shared_port(addrs)
        self.tables = {}        # lane name -> LaneTable
        self.falls = {}         # lane name -> its checker's consecutive failures before "down"
        self.health_log = {}    # lane name -> [(lab time, site, ok)]
        self.scrapes = {}       # lane name -> scrapes served
        self.servers = []

    def add_lane(self, name, fall=None):
        self.tables[name] = LaneTable(len(self.capacities), self.sc.failures)
        self.falls[name] = fall
        self.health_log[name] = []
        self.scrapes[name] = 0
        return self.tables[name]

    def cap(self, site, t):
        return capacity_at(self.sc, self.capacities, site, t)

    async def start(self):
        for i, a in enumerate(self.addrs):
            srv = await asyncio.start_server(lambda r, w, i=i: self._serve(i, r, w), a, self.port)
            self.servers.append(srv)

    async def stop(self):
        for s in self.servers:
            s.close()
            await s.wait_closed()

    async def _serve(self, site, reader, writer):
        """One HTTP/1.x request, answered and closed (gslbd's checks send Connection: close; its scrapes and
        gdnsd's checks read to EOF)."""
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
            parts = head.split(b"\r\n", 1)[0].split()
            path = parts[1].decode("latin-1") if len(parts) >= 2 else ""
            status, body = self._answer(site, path)
            writer.write(f"HTTP/1.1 {status}\r\nContent-Type: text/plain; version=0.0.4\r\n"
                         f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)
            await writer.drain()
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, asyncio.TimeoutError, OSError):
            pass
        except asyncio.CancelledError:
            pass   # the run is over: a request still in flight (Python 3.11's streams log a cancelled handler)
        finally:
            writer.close()

    def _answer(self, site, path):
        t = self.clock()
        _, kind, lane = (path.split("/") + ["", "", ""])[:3]
        table = self.tables.get(lane)
        if table is None:
            return "404 Not Found", b"no such lane\n"
        if kind == "health":
            ok = is_up(self.sc, site, t)
            self.health_log[lane].append((t, site, ok))
            return ("200 OK", b"up\n") if ok else ("503 Service Unavailable", b"down\n")
        if kind == "metrics":
            self.scrapes[lane] += 1
            table.settle(t)
            cap = capacity_at(self.sc, self.capacities, site, t, failures=False)
            used = table.used[site]
            idle = max(0.0, 100.0 - 100.0 * used / cap) if cap else 100.0
            return "200 OK", EXPOSITION.format(cap=cap, used=used, idle=f"{idle:.0f}").encode()
        return "404 Not Found", b"not found\n"

    def first_failure(self, lane, site, since):
        """When lane's health checker first saw `site` fail after `since` (a failed check, not yet `fall` of
        them: the first moment the server could know anything): lab seconds, or None."""
        return next((t for t, s, ok in self.health_log.get(lane, []) if s == site and t >= since and not ok), None)

    def detection(self, lane, site, since):
        """When lane's health checker saw `site` fail for the fall-th time in a row after `since` (its checker
        then marks it down): lab seconds, or None."""
        fall = self.falls.get(lane)
        if not fall:
            return None
        n = 0
        for t, s, ok in self.health_log[lane]:
            if s != site or t < since:
                continue
            n = 0 if ok else n + 1
            if n >= fall:
                return t
        return None
