#!/usr/bin/env python3
"""The NS set on etcd (doc/ns-set.md "Shared state in etcd"): a real 3-node etcd cluster (Debian's etcd-server binary,
run here on free loopback ports with its own data directories, never the system service) and three gslbd members
on 127.0.0.2, .3 and .4 sharing drains, reports, verdicts and probe ownership through it. Member 3 reaches etcd
through TCP proxies the test stops and starts again (a member cut off from etcd while the others are not).

One etcd cluster and one set of members for the class (starting them is most of the time); the tests run in
name order, the last one stops etcd altogether. Figures are printed as MEASURED lines."""
import base64
import json
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import test_cluster  # noqa: E402
from harness import (REPO, DaemonError, Gslbd, build_query, decode_msg, free_port, gslbctl_path,  # noqa: E402
                     run_tests, udp_query)

ETCD = shutil.which("etcd") or "/usr/bin/etcd"
GSLBCTL = gslbctl_path()
TOKEN = test_cluster.TOKEN
ADDRS = ["127.0.0.2", "127.0.0.3", "127.0.0.4"]
ZONE = test_cluster.ZONE
PREFIX = "/gslbd-e2e/"
EAST, WEST = "192.0.2.10", "198.51.100.10"
ZONE_TEXT = test_cluster.ZONE_TEXT
# etcd's own election settings for the lab: a 50 ms heartbeat and a 500 ms election timeout (etcd's defaults are
# 100 ms and 1 s; its tuning guide allows this on a low-latency network such as loopback).
HEARTBEAT_MS, ELECTION_MS = 50, 500


def b64(s):
    return base64.b64encode(s.encode()).decode()


def etcd_call(url, path, body, timeout=2.0):
    req = urllib.request.Request(url + path, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read().decode())


class EtcdNode:
    """One etcd member: its own data directory and free loopback ports."""

    def __init__(self, name, tmp, client_port, peer_port):
        self.name, self.client_port, self.peer_port = name, client_port, peer_port
        self.dir = os.path.join(tmp, name)
        self.url = f"http://127.0.0.1:{client_port}"
        self.peer_url = f"http://127.0.0.1:{peer_port}"
        self.proc = None
        self.log = os.path.join(tmp, name + ".log")

    def start(self, initial_cluster, state):
        os.makedirs(self.dir, exist_ok=True)
        argv = [ETCD, "--name", self.name, "--data-dir", self.dir,
                "--listen-client-urls", self.url, "--advertise-client-urls", self.url,
                "--listen-peer-urls", self.peer_url, "--initial-advertise-peer-urls", self.peer_url,
                "--initial-cluster", initial_cluster, "--initial-cluster-state", state,
                "--initial-cluster-token", "gslbd-e2e", "--heartbeat-interval", str(HEARTBEAT_MS),
                "--election-timeout", str(ELECTION_MS), "--log-level", "warn", "--logger", "zap"]
        self.logf = open(self.log, "ab")
        self.proc = harness.spawn(argv, stdin=subprocess.DEVNULL, stdout=self.logf, stderr=self.logf)

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def kill(self):
        if self.alive():
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(5)
        if self.proc is not None:
            self.logf.close()
        self.proc = None

    def status(self):
        return etcd_call(self.url, "/v3/maintenance/status", {}, timeout=1.0)


class Proxy:
    """A TCP proxy from a loopback port to one etcd node, in a thread; stop() closes the listener and every
    connection (a member cut off from etcd), start() listens on the same port again."""

    def __init__(self, target_port):
        self.target = ("127.0.0.1", target_port)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.lsock = None
        self.thread = None
        self.stopping = False
        self.conns = []

    def start(self):
        self.lsock = socket.socket()
        self.lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.lsock.bind(("127.0.0.1", self.port))
        self.lsock.listen(64)
        self.stopping = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        pairs = {}
        lsock = self.lsock
        while not self.stopping:
            r, _, _ = select.select([lsock] + list(pairs), [], [], 0.05)
            for s in r:
                if s is lsock:
                    try:
                        c, _ = lsock.accept()
                    except OSError:
                        continue
                    try:
                        u = socket.create_connection(self.target, timeout=1)
                    except OSError:
                        c.close()  # the etcd node is down: so is this path to it
                        continue
                    pairs[c], pairs[u] = u, c
                    continue
                try:
                    data = s.recv(65536)
                except OSError:
                    data = b""
                other = pairs.get(s)
                if not data or other is None:
                    for x in (s, other):
                        if x is not None:
                            pairs.pop(x, None)
                            x.close()
                    continue
                try:
                    other.sendall(data)
                except OSError:
                    pass
        for s in list(pairs):
            s.close()
        lsock.close()

    def stop(self):
        self.stopping = True
        if self.thread:
            self.thread.join(2)
        self.thread = None


def config(addr, dns_port, control_port, etcd_urls, check_port, interval):
    """test_cluster.py's member config (only `addr` differs) with the etcd endpoints and this lab's prefix."""
    etcd = ", ".join(f'"{u}"' for u in etcd_urls)
    return test_cluster.config(addr, dns_port, control_port, ADDRS).replace(
        "[cluster]\n", f'[cluster]\netcd = [{etcd}]\netcd_prefix = "{PREFIX}"\n', 1)


class Member(Gslbd):
    def __init__(self, addr, dns_port, control_port, etcd_urls, check_port, interval):
        super().__init__(raw_config=config(addr, dns_port, control_port, etcd_urls, check_port, interval),
                         expect_start=False, files={"zone.db": ZONE_TEXT, "token": TOKEN + "\n"})
        self.addr, self.port, self.cport = addr, dns_port, control_port
        self.url = f"http://{addr}:{control_port}"

    def launch(self):
        self.write_config()
        self._spawn([os.environ.get("GSLBD") or os.path.join(REPO, "build", "server", "gslbd"),
                     "--config", self.config_path])

    def api(self, path, body=None, timeout=2.0):
        return test_cluster.api(self.addr, self.cport, path, body, timeout=timeout)

    def status(self):
        return self.api("/v1/status")

    def etcd(self):
        return self.status()["cluster"]["etcd"]

    def metric(self, name):
        for line in self.api("/metrics").splitlines():
            if line.startswith(name + " "):
                return float(line.split()[-1])
        return None

    def answers(self, timeout=0.5):
        r = udp_query(self.port, build_query("www." + ZONE, "A"), addr=self.addr, timeout=timeout)
        if r is None:
            raise OSError(f"no answer from {self.addr} within {timeout} s")
        return {rr[4] for rr in decode_msg(r).answer}

    def wait_up(self, timeout=10.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise DaemonError(f"gslbd {self.addr} exited {self.proc.returncode}:\n{self.stderr()}")
            try:
                self.answers(timeout=0.3)
                self.status()
                return
            except (OSError, urllib.error.URLError):
                time.sleep(0.05)
        raise DaemonError(f"gslbd {self.addr} not up within {timeout} s:\n{self.stderr()}")


def rank(site, address, n, member):
    """server/probes/health.hpp ownerRank: FNV-1a (64 bits) over SITE, ADDRESS, N and MEMBER, NUL-separated."""
    h = 0xcbf29ce484222325
    for c in f"{site}\0{address}\0{n}\0{member}".encode():
        h = ((h ^ c) * 0x100000001b3) % 2 ** 64
    return h


def wait_for(pred, seconds, what):
    return harness.wait_for(pred, seconds, what, step=0.005)


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p * (len(xs) - 1))))]


def loopback_aliases_work():
    try:
        for a in ADDRS:
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind((a, 0))
            s.close()
        return True
    except OSError:
        return False


class TcpBackend:
    """A TCP listener that counts the connections (health checks) it accepts, per source address."""

    def __init__(self, port):
        self.port = port
        self.count = {}
        self.lock = threading.Lock()
        self.sock = None
        self.stopping = False

    def start(self):
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", self.port))
        self.sock.listen(128)
        self.sock.settimeout(0.05)
        self.stopping = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stopping:
            try:
                c, peer = self.sock.accept()
            except (socket.timeout, OSError):
                continue
            with self.lock:
                self.count[peer[0]] = self.count.get(peer[0], 0) + 1
            c.close()
        self.sock.close()

    def stop(self):
        self.stopping = True
        self.thread.join(2)

    def snapshot(self):
        with self.lock:
            return dict(self.count)


@unittest.skipUnless(os.path.exists(ETCD), "etcd (Debian's etcd-server) is not installed")
@unittest.skipUnless(loopback_aliases_work(), "cannot bind 127.0.0.2-4")
class EtcdLab(unittest.TestCase):
    INTERVAL = 1.0  # s: the check interval (probe ownership is measured against it)

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="e2e-etcd-")
        ports = set()

        def port():
            while True:
                p = free_port()
                if p not in ports:
                    ports.add(p)
                    return p
        cls.nodes = [EtcdNode(f"e{i}", cls.tmp, port(), port()) for i in range(3)]
        cls.initial = ",".join(f"{n.name}={n.peer_url}" for n in cls.nodes)
        cls.members = []
        cls.proxies = []
        cls.backend = None
        try:
            for n in cls.nodes:
                n.start(cls.initial, "new")
            wait_for(lambda: cls.leader() is not None, 20, "the etcd cluster elects a leader")
            # Before any member starts: a drain of site east is already in etcd (a member joining reads the
            # whole state before its first answer).
            etcd_call(cls.nodes[0].url, "/v3/kv/put",
                      {"key": b64(PREFIX + "admin/site/east"),
                       "value": b64(json.dumps({"enabled": False, "origin": "e2e"}))})
            cls.proxies = [Proxy(n.client_port) for n in cls.nodes]
            for p in cls.proxies:
                p.start()
            cls.check_port = port()
            cls.backend = TcpBackend(cls.check_port)
            cls.backend.start()
            # The members share every other port (each its own loopback address).
            from test_cluster import shared_port
            cls.dns_port = shared_port()
            cls.cport = shared_port(avoid={cls.dns_port})
            direct = [n.url for n in cls.nodes]
            via_proxy = [p.url for p in cls.proxies]
            cls.members = [Member(a, cls.dns_port, cls.cport, via_proxy if i == 2 else direct, cls.check_port,
                                  cls.INTERVAL) for i, a in enumerate(ADDRS)]
            cls.first = {}
            for m in cls.members:
                m.launch()
                t0 = time.monotonic()
                m.wait_up()
                cls.first[m.addr] = (time.monotonic() - t0, m.answers())
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        for m in cls.members:
            m.close()
        for p in cls.proxies:
            p.stop()
        if cls.backend:
            cls.backend.stop()
        for n in cls.nodes:
            n.kill()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    @classmethod
    def leader(cls):
        for n in cls.nodes:
            if not n.alive():
                continue
            try:
                st = n.status()
            except (OSError, urllib.error.URLError, ValueError):
                continue
            if st.get("leader") and st.get("leader") == st.get("header", {}).get("member_id"):
                return n
        return None

    def all_answer(self, want, members=None, limit=5.0):
        t0 = time.monotonic()
        left = list(members or self.members)
        while left:
            left = [m for m in left if m.answers() != want]
            if time.monotonic() - t0 > limit:
                self.fail(f"{[m.addr for m in left]} do not answer {want} within {limit} s: "
                          f"{[m.answers() for m in left]}\n{left[0].stderr()[-3000:]}")
            time.sleep(0.002)
        return time.monotonic() - t0

    def drain(self, member, site, enable=False):
        return member.api(f"/v1/sites/{site}/{'enable' if enable else 'drain'}", body={})

    # ---- joining, drains

    def test_1_a_joining_member_reads_the_state_before_its_first_answer(self):
        for m in self.members:
            took, first = self.first[m.addr]
            self.assertEqual(first, {WEST}, f"{m.addr}'s first answer has the drained site: {first}")
            self.assertEqual(m.etcd()["state"], "live", m.stderr())
        print("MEASURED: start to first answer with etcd's state read: " +
              ", ".join(f"{a} {t * 1000:.0f} ms" for a, (t, _) in self.first.items()))
        self.drain(self.members[1], "east", enable=True)
        self.all_answer({EAST, WEST})

    def test_2_a_drain_through_any_member_reaches_every_member(self):
        times = []
        for i in range(100):
            via = self.members[i % 3]
            drain = i % 2 == 0
            t0 = time.monotonic()
            self.drain(via, "east", enable=not drain)
            self.all_answer({WEST} if drain else {EAST, WEST})
            times.append(time.monotonic() - t0)
        print(f"MEASURED: drain/enable through one member (round robin) -> all 3 members answer it: n=100 "
              f"p50 {pct(times, .5) * 1000:.0f} ms p99 {pct(times, .99) * 1000:.0f} ms max {max(times) * 1000:.0f} ms")
        self.assertLess(pct(times, .5), 0.5)
        for m in self.members:
            self.assertEqual(m.metric("gslbd_cluster_admin_sync_total"), None, "no /v1/admin polling")

    def test_3_a_report_is_written_once_and_read_by_all(self):
        self.members[0].api("/v1/sites/west/report", body={"cpu": 37})
        for m in self.members:
            wait_for(lambda: [s for s in m.status()["sites"] if s["name"] == "west"][0].get("cpu") == 37, 3,
                     f"{m.addr} has west's cpu")
        # No member forwarded it to another: each took it once (the one it was posted to, the others from
        # etcd's watch), and there is no forwarding left to count.
        for m in self.members:
            self.assertNotIn("forwards", m.status()["cluster"])
            self.assertEqual(m.metric("gslbd_cluster_forwards_total"), None)

    def test_4_hostile_data_is_refused_and_never_applied(self):
        m = self.members[0]
        before = m.metric("gslbd_etcd_refused_total")
        bad = [
            ("admin/site/west", '{"enabled": "no", "origin": "x"}'),      # wrong type
            ("admin/site/west", '{"enabled": false, "origin": "x", "extra": 1}'),  # unknown field
            ("admin/site/west", '{"enabled": false, "origin": "' + "x" * 300000 + '"}'),  # huge value
            ("admin/planet/west", '{"enabled": false, "origin": "x"}'),   # unknown key
            ("nonsense", "[]"),                                            # unknown kind
            ("report/west", '{"origin": "x", "body": "cpu=99"}'),          # body not an object
        ]
        for key, value in bad:
            etcd_call(self.nodes[0].url, "/v3/kv/put", {"key": b64(PREFIX + key), "value": b64(value)})
        # Another NS set's prefix: not this member's business at all.
        etcd_call(self.nodes[0].url, "/v3/kv/put", {"key": b64("/other/admin/site/west"),
                                                     "value": b64('{"enabled": false, "origin": "x"}')})
        wait_for(lambda: m.metric("gslbd_etcd_refused_total") >= before + len(bad), 3, "every bad key refused")
        time.sleep(0.2)
        for mm in self.members:
            self.assertEqual(mm.answers(), {EAST, WEST}, mm.addr)
            self.assertTrue([s for s in mm.status()["sites"] if s["name"] == "west"][0]["enabled"])
        self.assertIn("etcd: refused " + PREFIX + "admin/site/west", m.stderr())
        self.assertIn("not applied", m.stderr())
        etcd_call(self.nodes[0].url, "/v3/kv/deleterange", {"key": b64(PREFIX + "nonsense")})

    def test_4b_gslbctl_status_compares_the_members_from_etcd_alone(self):
        def status():
            p = subprocess.run([GSLBCTL, "status", "-c", self.members[0].config_path, "--json"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=20)
            self.assertTrue(p.stdout.startswith("{"), p.stdout + p.stderr)
            return json.loads(p.stdout)
        out = status()
        self.assertEqual(out["source"], "etcd")
        self.assertEqual(out["through"], self.members[0].url)
        self.assertEqual([m["url"] for m in out["members"] if m["reached"]], [m.url for m in self.members])
        # Member 3's config differs for real (it reaches etcd through the proxies): that alone, once every
        # entry was rewritten after the last drains (each within a lease renewal, <= 1 s).
        wait_for(lambda: len(status()["differences"]) == 1, 3, "the entries in etcd settle")
        base = status()["differences"]
        self.assertEqual(len(base), 1, base)
        self.assertTrue(base[0].startswith("config digest: "), base)
        self.assertIn(f" on {self.members[0].url}, {self.members[1].url}; ", base[0])
        self.assertTrue(base[0].endswith(f" on {self.members[2].url}"), base)
        # A drain of member 2 alone (?scope=member): its entry in etcd says so, and so does the comparison.
        m2 = self.members[1]
        m2.api("/v1/sites/east/drain?scope=member", body={})
        want = f"site east: enabled on {self.members[0].url}, {self.members[2].url}; drained on {m2.url}"
        t0 = time.monotonic()
        wait_for(lambda: want in status()["differences"], 5, "gslbctl status shows m2's drain from etcd")
        print(f"MEASURED: a member-only drain shows in gslbctl status (from etcd) {time.monotonic() - t0:.2f} s "
              f"later")
        m2.api("/v1/sites/east/enable?scope=member", body={})
        wait_for(lambda: status()["differences"] == base, 5, "the members agree again")

    # ---- etcd failures

    def test_5_the_etcd_leader_killed_drains_still_work(self):
        leader = self.leader()
        self.assertIsNotNone(leader)
        t0 = time.monotonic()
        leader.kill()
        # Through a member that may well have used the dead node: the drain is taken at once and written when
        # etcd has a leader again.
        self.drain(self.members[0], "east")
        took = self.all_answer({WEST}, limit=10)
        new = None
        while new is None and time.monotonic() - t0 < 10:
            new = self.leader()
        print(f"MEASURED: etcd leader {leader.name} killed, a drain through {self.members[0].addr} at once: "
              f"every member answers it {took * 1000:.0f} ms later (etcd election timeout {ELECTION_MS} ms)")
        self.assertLess(took, ELECTION_MS / 1000 * 4 + 2)
        self.drain(self.members[1], "east", enable=True)
        self.all_answer({EAST, WEST})
        leader.start(self.initial, "existing")

        def back():
            try:
                return leader.alive() and leader.status() is not None
            except (OSError, urllib.error.URLError, ValueError):
                return False
        wait_for(back, 10, "the old leader is back")

    def test_6_a_member_cut_off_serves_the_last_state_and_converges(self):
        m3 = self.members[2]
        for p in self.proxies:
            p.stop()
        wait_for(lambda: m3.etcd()["state"] == "cut", 5, "m3 says it is cut off")
        self.assertEqual(m3.metric("gslbd_etcd_up"), 0)
        self.assertIn("etcd: unreachable", m3.stderr())
        self.drain(self.members[0], "west")
        self.all_answer({EAST}, self.members[:2])
        time.sleep(0.5)
        self.assertEqual(m3.answers(), {EAST, WEST}, "m3 keeps the last state it read")
        for p in self.proxies:
            p.start()
        t0 = time.monotonic()
        took = self.all_answer({EAST}, [m3], limit=5)
        print(f"MEASURED: member cut off from etcd, then the cut healed: it answers the drain made meanwhile "
              f"{took * 1000:.0f} ms later")
        self.assertLess(took, 1.0 + 0.5)
        wait_for(lambda: m3.etcd()["state"] == "live", 2, "m3 live again")
        self.drain(self.members[2], "west", enable=True)
        self.all_answer({EAST, WEST})

    def test_9_etcd_entirely_gone_nothing_changes_nothing_is_lost(self):
        for n in self.nodes:
            n.kill()
        for m in self.members:
            wait_for(lambda: m.etcd()["state"] == "cut", 5, f"{m.addr} says it is cut off")
        for m in self.members:
            for _ in range(20):
                self.assertEqual(m.answers(), {EAST, WEST}, m.addr)
        # A drain taken while etcd is gone holds on that member and reaches the others when etcd is back.
        self.drain(self.members[1], "east")
        self.all_answer({WEST}, [self.members[1]])
        self.assertEqual(self.members[0].answers(), {EAST, WEST})
        for n in self.nodes:
            n.start(self.initial, "existing")
        t0 = time.monotonic()
        took = self.all_answer({WEST}, limit=15)
        print(f"MEASURED: etcd stopped entirely: answers unchanged; a drain taken meanwhile reached every member "
              f"{took * 1000:.0f} ms after etcd was started again")


def owner_key(url, site, address, slot):
    """The member holding owner key `slot` of a service in etcd at `url` (None: the key is free)."""
    r = etcd_call(url, "/v3/kv/range", {"key": b64(f"{PREFIX}owner/{site}/{address}/{slot}")})
    kvs = r.get("kvs") or []
    return json.loads(base64.b64decode(kvs[0]["value"]).decode()) if kvs else None


def quorum_config(addr, dns_port, control_port, etcd_urls, check_port, quorum=2):
    """The lab's member config with a TCP check of both services on 127.0.0.1:check_port (every 0.5 s, one
    result decides) and health_quorum = `quorum` (None: not set)."""
    text = config(addr, dns_port, control_port, etcd_urls, check_port, 0.5)
    if quorum:
        text = text.replace("[cluster]\n", f"[cluster]\nhealth_quorum = {quorum}\n", 1)
    for site in ("east", "west"):
        text = text.replace(f'site = "{site}"\n', f'site = "{site}"\ncheck = "c"\ncheck_address = "127.0.0.1"\n')
    return text + f"""
[check.c]
type = "tcp"
port = {check_port}
interval = 0.5
timeout = 0.3
rise = 1
fall = 1
"""


class OneNodeLab:
    """The set-up of the labs that need one etcd node (its failures are EtcdLab's) and three members checking
    both services over TCP every 0.5 s, with health_quorum = cls.QUORUM: `check_port(i, open, closed)` is the
    port member i checks (a TcpBackend listens on `open`, nothing on `closed`)."""

    @staticmethod
    def start(cls, check_port):
        cls.tmp = tempfile.mkdtemp(prefix="e2e-etcd-1-")
        cls.members, cls.proxies, cls.backend = [], [], None
        cls.node = EtcdNode("n0", cls.tmp, free_port(), free_port())
        cls.nodes = [cls.node]
        try:
            cls.node.start(f"n0={cls.node.peer_url}", "new")
            wait_for(lambda: EtcdLab.leader.__func__(cls) is not None, 20, "etcd answers")
            open_port, closed_port = free_port(), free_port()
            cls.backend = TcpBackend(open_port)
            cls.backend.start()
            from test_cluster import shared_port
            dns_port = shared_port()
            cport = shared_port(avoid={dns_port})
            for i, a in enumerate(ADDRS):
                m = Member(a, dns_port, cport, [cls.node.url], 0, 0.5)
                m.raw_config = quorum_config(a, dns_port, cport, [cls.node.url],
                                             check_port(i, open_port, closed_port), quorum=cls.QUORUM)
                cls.members.append(m)
            for m in cls.members:
                m.launch()
            for m in cls.members:
                m.wait_up()
        except BaseException:
            EtcdLab.tearDownClass.__func__(cls)
            raise


@unittest.skipUnless(os.path.exists(ETCD), "etcd (Debian's etcd-server) is not installed")
@unittest.skipUnless(loopback_aliases_work(), "cannot bind 127.0.0.2-4")
class EtcdQuorumLab(unittest.TestCase):
    """health_quorum = 3 over verdicts kept in etcd under each member's lease (with probe ownership, three
    owner slots per service: every member probes and votes): member 1 checks a closed port (its own verdict:
    down), members 2 and 3 an open one. One etcd node is enough here (its failures are EtcdLab's)."""

    QUORUM = 3

    @classmethod
    def setUpClass(cls):
        # Member 1 checks a port nobody listens on.
        OneNodeLab.start(cls, lambda i, open_port, closed_port: closed_port if i == 0 else open_port)

    @classmethod
    def tearDownClass(cls):
        EtcdLab.tearDownClass.__func__(cls)  # the members, the back end, etcd, the directory

    @staticmethod
    def quorum(m):
        return m.status()["health_quorum"] or {}

    def test_1_live_verdicts_in_etcd_decide_and_a_dead_member_loses_its_vote(self):
        m1, m2, m3 = self.members
        for m in self.members:
            wait_for(lambda: self.quorum(m).get("voting_members") == 3, 10,
                     f"{m.addr} counts three members' live verdicts in etcd")
            self.assertEqual(self.quorum(m)["source"], "etcd")
        # Member 1's own checks fail; one down vote of three is below the quorum of 3: it keeps both.
        svc = lambda m: [s for s in m.status()["services"] if s["site"] == "east"][0]["check"]
        wait_for(lambda: svc(m1)["own_state"] == "down", 5, "m1's own check says down")
        self.assertEqual(svc(m1)["state"], "up", svc(m1))
        self.assertEqual(m1.answers(), {EAST, WEST})
        # No member polls another's verdicts: there is no endpoint left to poll.
        for m in self.members:
            self.assertNotIn("peers", self.quorum(m))
            with self.assertRaises(urllib.error.HTTPError) as e:
                m.api("/v1/verdicts")
            self.assertEqual(e.exception.code, 404)
        ttl = self.quorum(m1)["verdict_ttl_s"]
        # Member 3 killed (no goodbye: SIGKILL): its lease expires, and its votes with it.
        t0 = time.monotonic()
        os.killpg(m3.proc.pid, signal.SIGKILL)
        wait_for(lambda: self.quorum(m1).get("voting_members") == 2, ttl + 5, "m3's verdicts expire")
        gone = time.monotonic() - t0
        print(f"MEASURED: a member killed: its verdicts leave the others' quorum {gone:.2f} s later "
              f"(lease TTL {ttl} s)")
        self.assertLessEqual(gone, ttl + 2)
        # Two voters cannot reach the quorum of 3: m1 decides on its own view, and says so.
        wait_for(lambda: self.quorum(m1).get("own_view"), 5, "m1 falls back on its own view")
        self.assertIn("1 of 2 peer(s) have live verdicts in etcd", m1.stderr())
        self.assertEqual(svc(m1)["state"], "down", svc(m1))

    def test_2_a_quorum_lowered_on_reload_gives_up_the_owner_keys_past_it(self):
        # After test_1, m1 and m2 hold two of east's and of west's owner keys 0-2 each (m3's went with its
        # lease, and a member holds one key of a service). Their leases live as long as they do, so a key past a
        # lowered quorum must be given up, not left to probe and vote beside the quorum's owners.
        live = self.members[:2]
        held = lambda site, address: sorted(n for n in range(3) if owner_key(self.node.url, site, address, n))
        for site, address in (("east", EAST), ("west", WEST)):
            wait_for(lambda: len(held(site, address)) == 2, 5, f"two of {site}'s keys held")
        t0 = time.monotonic()
        for m in live:
            self.assertIn("health_quorum = 3\n", m.raw_config)
            m.raw_config = m.raw_config.replace("health_quorum = 3\n", "health_quorum = 1\n")
            m.write_config()
            m.proc.send_signal(signal.SIGHUP)
        for site, address in (("east", EAST), ("west", WEST)):
            wait_for(lambda: held(site, address) == [0], 5,
                     f"{site}'s keys past 0 given up, key 0 held:\n" + "".join(m.stderr()[-1500:] for m in live))
        took = time.monotonic() - t0
        print(f"MEASURED: health_quorum 3 -> 1 on reload: owner keys past it given up {took * 1000:.0f} ms after "
              f"SIGHUP")
        self.assertTrue(any(re.search(r"health_quorum is now 1: owner key [12] is not needed", m.stderr())
                            for m in live))
        for m in live:
            self.assertNotIn("reload failed", m.stderr())
            wait_for(lambda: all(len(s["check"]["probe"]["owners"]) == 1 for s in m.status()["services"]), 5,
                     f"{m.addr}'s status names one owner per service")


@unittest.skipUnless(os.path.exists(ETCD), "etcd (Debian's etcd-server) is not installed")
@unittest.skipUnless(loopback_aliases_work(), "cannot bind 127.0.0.2-4")
class EtcdOwnershipLab(unittest.TestCase):
    """Probe ownership: three members check one back end (both services on it, every 0.5 s) without
    health_quorum, so each service is probed by one member; the owner killed, another takes it over; the owner
    back, it takes its key back; a service leaving its owner's config, another member takes it at once."""

    QUORUM = None

    @classmethod
    def setUpClass(cls):
        OneNodeLab.start(cls, lambda i, open_port, closed_port: open_port)

    @classmethod
    def tearDownClass(cls):
        EtcdLab.tearDownClass.__func__(cls)

    def owner(self, site, address):
        return owner_key(self.node.url, site, address, 0)

    def checks_per_second(self, seconds):
        before = sum(self.backend.snapshot().values())
        time.sleep(seconds)
        return (sum(self.backend.snapshot().values()) - before) / seconds

    def test_1_each_back_end_is_probed_once_and_handed_over_when_its_owner_dies(self):
        # The members go live one after another (the first claims everything at once); the others, as each
        # comes, take the keys they rank first for: the owners end in the rendezvous order.
        urls = [m.url for m in self.members]
        expected = {svc: max(urls, key=lambda u: rank(*svc, 0, u)) for svc in (("east", EAST), ("west", WEST))}
        wait_for(lambda: all(self.owner(*svc) == url for svc, url in expected.items()), 10,
                 f"both services owned as the rendezvous order says: {expected}")
        time.sleep(1.0)  # the start-up rounds (every member checks everything once) are over
        rate = self.checks_per_second(3.0)
        # Two services every 0.5 s: 4 checks a second by their owners, 12 if every member checked.
        print(f"MEASURED: probe ownership: the back end sees {rate:.1f} checks/s from 3 members "
              f"(2 services x 1 / 0.5 s = 4; without ownership 12)")
        self.assertLess(rate, 6.5)
        self.assertGreater(rate, 2.0)
        for m in self.members:
            self.assertEqual(m.answers(), {EAST, WEST}, m.addr)
            for svc in m.status()["services"]:
                self.assertEqual(svc["health"], "up", (m.addr, svc))
        # The owner of east killed without a goodbye: another member claims it once its lease expires.
        owner = self.owner("east", EAST)
        victim = [m for m in self.members if m.url == owner][0]
        ttl = self.members[0].etcd()["lease_ttl_s"]
        t0 = time.monotonic()
        os.killpg(victim.proc.pid, signal.SIGKILL)
        wait_for(lambda: self.owner("east", EAST) not in (None, owner), ttl + 5, "another member owns east")
        took = time.monotonic() - t0
        print(f"MEASURED: probe owner killed: east is probed by {self.owner('east', EAST)} {took:.2f} s later "
              f"(lease TTL {ttl} s, check interval 0.5 s)")
        self.assertLessEqual(took, ttl + 0.5 + 2)
        survivors = [m for m in self.members if m is not victim]
        # Whoever claimed it first, east ends with the survivor that ranks first: when that one was slow to see
        # the key free (a loaded machine) and the other took it after a check interval, the other hands it over
        # as soon as it sees the first-ranked one a candidate (not 30 s later, as a take-back of its own key).
        first = max(survivors, key=lambda m: rank("east", EAST, 0, m.url))
        wait_for(lambda: self.owner("east", EAST) == first.url, 3,
                 f"east owned by the first-ranked survivor {first.url}")
        rate = self.checks_per_second(2.0)
        self.assertGreater(rate, 2.0)  # both services still probed
        for m in survivors:
            self.assertEqual(m.answers(), {EAST, WEST}, m.addr)
        EtcdOwnershipLab.victim = victim

    def test_2_a_member_joining_takes_back_the_keys_it_ranks_first_for(self):
        # The killed owner of east ranked first for it (the members went live together, and the first-ranked
        # claims at once): started again, it is a candidate that outranks east's new owner, which releases the
        # key (compare-on-value) for it to claim at once, not only when an owner dies.
        victim = self.victim
        urls = [m.url for m in self.members]
        self.assertEqual(max(urls, key=lambda u: rank("east", EAST, 0, u)), victim.url)
        holder = self.owner("east", EAST)
        self.assertNotEqual(holder, victim.url)
        victim.launch()
        victim.wait_up()
        t0 = time.monotonic()
        wait_for(lambda: self.owner("east", EAST) == victim.url, 5, "the member that joined owns east again")
        took = time.monotonic() - t0
        print(f"MEASURED: a member joining that ranks first for east owns it {took * 1000:.0f} ms after its first "
              f"answer (its lease TTL {victim.etcd()['lease_ttl_s']} s is not waited out)")
        self.assertIn("probe ownership: east 192.0.2.10 handed over: a member that ranks first for it is live",
                      [m for m in self.members if m.url == holder][0].stderr())
        # Each service has the owner the rendezvous order says, and the back end still sees one set of checks.
        for site, address in (("east", EAST), ("west", WEST)):
            self.assertEqual(self.owner(site, address), max(urls, key=lambda u: rank(site, address, 0, u)))
        time.sleep(1.0)  # the joining member's start-up round is over
        rate = self.checks_per_second(2.0)
        self.assertLess(rate, 6.5)
        # Every member's /v1/status says who probes each service (from etcd alone), and gslbctl status too.
        for m in self.members:
            for svc in m.status()["services"]:
                owner = self.owner(svc["site"], svc["address"])
                self.assertEqual(svc["check"]["probe"], {"here": owner == m.url, "owners": [owner]}, m.addr)
        first = self.members[0]
        p = subprocess.run([GSLBCTL, "status", "--server", first.url], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=30)
        for site, address in (("east", EAST), ("west", WEST)):
            owner = self.owner(site, address)
            mark = "[probed here]" if owner == first.url else f"[verdict of {owner}]"
            line = [ln for ln in p.stdout.splitlines() if ln.startswith(site) and address in ln]
            self.assertTrue(line and mark in line[0], (mark, p.stdout))

    def test_3_a_service_leaving_its_owners_checks_is_taken_over_at_once(self):
        owner_url = self.owner("west", WEST)
        owner = [m for m in self.members if m.url == owner_url][0]
        # Its config stops checking west (the zone still has the address: the service stays, unchecked).
        checked = 'address = "198.51.100.10"\nsite = "west"\ncheck = "c"\ncheck_address = "127.0.0.1"\n'
        self.assertIn(checked, owner.raw_config)
        owner.raw_config = owner.raw_config.replace(checked, 'address = "198.51.100.10"\nsite = "west"\n')
        owner.write_config()
        t0 = time.monotonic()
        owner.proc.send_signal(signal.SIGHUP)
        wait_for(lambda: self.owner("west", WEST) not in (None, owner_url), 5,
                 f"another member owns west:\n{owner.stderr()[-3000:]}")
        took = time.monotonic() - t0
        ttl = owner.etcd()["lease_ttl_s"]
        print(f"MEASURED: west left its owner's config (SIGHUP): another member owns it {took * 1000:.0f} ms later "
              f"(its lease TTL {ttl} s not waited out)")
        self.assertNotIn("reload failed", owner.stderr())
        self.assertIsNone([x for x in owner.status()["services"] if x["address"] == WEST][0]["check"])
        self.assertIn("probe ownership: west 198.51.100.10 handed over: the service left this member's checks",
                      owner.stderr())
        self.assertLess(took, ttl)


if __name__ == "__main__":
    run_tests()
