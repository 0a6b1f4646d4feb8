#!/usr/bin/env python3
"""Several gslbd instances as one NS set (doc/ns-set.md): three members on
127.0.0.2, .3 and .4, all on the same ports, so each member's config is the same file but for the address it
listens on (loopback answers on all of 127.0.0.0/8). gslbctl's fan-out, report forwarding, status differences,
a dead member, drains converging on a member that was stopped or down during them."""
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import (REPO, DaemonError, Gslbd, build_query, decode_msg, free_port, gslbctl_path,  # noqa: E402
                     run_tests, udp_query)

GSLBCTL = gslbctl_path()
if os.environ.get("GSLBD"):
    os.environ["GSLBD"] = os.path.abspath(os.environ["GSLBD"])
TOKEN = "cluster-e2e-token-0123"
ADDRS = ["127.0.0.2", "127.0.0.3", "127.0.0.4"]
ZONE = "gslb.example.com."
ZONE_TEXT = """$ORIGIN gslb.example.com.
$TTL 300
@   IN SOA ns1 hostmaster 2026120101 3600 600 604800 60
    IN NS  ns1
    IN NS  ns2
    IN NS  ns3
ns1 IN A 127.0.0.2
ns2 IN A 127.0.0.3
ns3 IN A 127.0.0.4
www IN A 192.0.2.10
www IN A 198.51.100.10
"""


def ports_free_on_all(port):
    held = []
    try:
        for a in ADDRS:
            for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
                s = socket.socket(socket.AF_INET, kind)
                held.append(s)
                s.bind((a, port))
        return True
    except OSError:
        return False
    finally:
        for s in held:
            s.close()


def shared_port(avoid=()):
    for _ in range(100):
        p = free_port()
        if p not in avoid and ports_free_on_all(p):
            return p
    raise RuntimeError("no port free on every member address")


def config(addr, dns_port, control_port, members):
    """The config every member runs: only `addr` differs."""
    m = ", ".join(f'"http://{a}:{control_port}"' for a in members)
    return f"""[server]
listen = ["{addr}:{dns_port}"]
workers = 1
state_dir = "state"

[control]
listen = "{addr}:{control_port}"
token_file = "token"

[cluster]
members = [{m}]

[[zone]]
name = "{ZONE}"
file = "zone.db"

[defaults]
max_age = 60

[site.east]
[site.west]

[hostname."www.{ZONE}"]
answers = 2
fallback = "none"
[[hostname."www.{ZONE}".service]]
address = "192.0.2.10"
site = "east"
[[hostname."www.{ZONE}".service]]
address = "198.51.100.10"
site = "west"
"""


def ctl(*args, timeout=30):
    p = subprocess.run([GSLBCTL, *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=timeout)
    p.out = p.stdout + p.stderr
    return p


def api(addr, port, path, body=None, headers=None, timeout=2.0):
    h = {"Authorization": f"Bearer {TOKEN}"}
    h.update(headers or {})
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        h["Content-Type"] = "application/json"
    req = urllib.request.Request(f"http://{addr}:{port}{path}", data=data, headers=h,
                                 method="POST" if body is not None else "GET")
    with urllib.request.urlopen(req, timeout=timeout) as r:
        text = r.read().decode()
        return json.loads(text) if text.startswith("{") else text


def wait_for(pred, seconds, what):
    return harness.wait_for(pred, seconds, what, step=0.01)  # finer: some waits here time a fan-out


class Member(Gslbd):
    def __init__(self, addr, dns_port, control_port, members):
        super().__init__(raw_config=config(addr, dns_port, control_port, members), expect_start=False,
                         files={"zone.db": ZONE_TEXT, "token": TOKEN + "\n"})
        self.addr, self.port, self.cport = addr, dns_port, control_port
        self.url = f"http://{addr}:{control_port}"

    def wait_up(self, timeout=10.0):
        q = build_query(ZONE, "SOA")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise DaemonError(f"gslbd {self.addr} exited {self.proc.returncode}:\n{self.stderr()}")
            try:
                r = udp_query(self.port, q, addr=self.addr, timeout=0.3)
                if r and decode_msg(r).rcode == "NOERROR":
                    api(self.addr, self.cport, "/v1/status")
                    return
            except (OSError, urllib.error.URLError):
                pass
            time.sleep(0.05)
        raise DaemonError(f"gslbd {self.addr} not up within {timeout} s:\n{self.stderr()}")

    def status(self):
        return api(self.addr, self.cport, "/v1/status")

    def service(self, address):
        return [s for s in self.status()["services"] if s["address"] == address][0]

    def metric(self, name, **labels):
        """The value of one sample of /metrics (0 when absent)."""
        want = ",".join(f'{k}="{v}"' for k, v in labels.items())
        key = f"{name}{{{want}}}" if want else name
        for line in api(self.addr, self.cport, "/metrics").splitlines():
            if line.startswith(key + " "):
                return float(line.split()[-1])
        return 0.0

    def site(self, name):
        return [s for s in self.status()["sites"] if s["name"] == name][0]


def first_answers(members, spawned, timeout=10.0):
    """Seconds from each member's spawn to its first DNS answer, every member polled in turn each 5 ms."""
    q = build_query(ZONE, "SOA")
    took, deadline = {}, time.monotonic() + timeout
    while len(took) < len(members) and time.monotonic() < deadline:
        for m in members:
            if m.addr in took:
                continue
            if m.proc.poll() is not None:
                raise DaemonError(f"gslbd {m.addr} exited {m.proc.returncode}:\n{m.stderr()}")
            try:
                r = udp_query(m.port, q, addr=m.addr, timeout=0.005)
                if r and decode_msg(r).rcode == "NOERROR":
                    took[m.addr] = time.monotonic() - spawned[m.addr]
            except OSError:
                time.sleep(0.001)
    return took


class Cluster(unittest.TestCase):
    """One cluster for the class; the tests run in name order and the last one kills a member."""

    @classmethod
    def setUpClass(cls):
        if not ports_free_on_all(free_port()):
            raise unittest.SkipTest("cannot bind 127.0.0.2-4 (loopback is not the whole 127.0.0.0/8 here)")
        cls.dns_port = shared_port()
        cls.cport = shared_port(avoid={cls.dns_port})
        cls.members = [Member(a, cls.dns_port, cls.cport, ADDRS) for a in ADDRS]
        try:
            for m in cls.members:
                m.write_config()
            spawned = {}
            for m in cls.members:
                m._spawn([os.environ.get("GSLBD") or os.path.join(REPO, "build", "server", "gslbd"),
                          "--config", m.config_path])
                spawned[m.addr] = time.monotonic()
            cls.first_answer = first_answers(cls.members, spawned)
            for m in cls.members:
                m.wait_up()
        except BaseException:
            for m in cls.members:
                m.close()
            raise
        cls.cfg = cls.members[0].config_path

    @classmethod
    def tearDownClass(cls):
        for m in cls.members:
            m.close()

    def live(self):
        return [m for m in self.members if m.proc.poll() is None]

    def test_0_members_started_together_answer_at_once(self):
        # setUpClass starts the three in one go. A starting member served its control API only after its
        # initial drain sync, so each one that found a peer already listening waited out that peer's sync
        # (kInitialWaitSec, 1 s) before its first answer; it now answers GET /v1/admin while it starts.
        print("MEASURED: members started together, spawn to first DNS answer: " +
              ", ".join(f"{a} {t * 1000:.0f} ms" for a, t in sorted(self.first_answer.items())))
        self.assertEqual(len(self.first_answer), len(self.members), self.first_answer)
        for m in self.members:
            self.assertNotIn("at start; answering with the drains this member knows", m.stderr())
            self.assertLess(self.first_answer[m.addr], 0.9, m.stderr())

    # ---- gslbctl fan-out
    def test_1_drain_reaches_every_member(self):
        t0 = time.monotonic()
        p = ctl("drain", "east", "-c", self.cfg)
        self.assertEqual(p.returncode, 0, p.out)
        for m in self.members:
            self.assertIn(f"{m.url}: ok: drained: east (every service of the site)", p.stdout)
        # Every member answers without east's address: the drain is in effect everywhere.
        q = build_query("www." + ZONE, "A")

        def answers(m):
            return {rr[4] for rr in decode_msg(udp_query(m.port, q, addr=m.addr)).answer}
        for m in self.members:
            wait_for(lambda: answers(m) == {"198.51.100.10"}, 2, f"{m.addr} stops answering east")
        took = time.monotonic() - t0
        print(f"MEASURED: gslbctl drain east -c CONFIG: every one of {len(self.members)} members answers "
              f"without east {took * 1000:.0f} ms after the command started")
        for m in self.members:
            self.assertFalse(m.site("east")["enabled"], m.addr)
        p = ctl("enable", "east", "-c", self.cfg)
        self.assertEqual(p.returncode, 0, p.out)
        self.assertEqual(p.stdout.count(": ok: enabled: east"), 3, p.out)
        for m in self.members:
            self.assertTrue(m.site("east")["enabled"], m.addr)

    def test_2_member_option_reaches_one(self):
        m2 = self.members[1]
        p = ctl("drain", "west", "198.51.100.10", "-c", self.cfg, "--member", m2.url + "/")
        self.assertEqual(p.returncode, 0, p.out)
        self.assertEqual(p.stdout.strip(), f"{m2.url}: ok: drained: west 198.51.100.10")
        try:
            self.assertFalse(m2.service("198.51.100.10")["enabled"])
            for m in (self.members[0], self.members[2]):
                self.assertTrue(m.service("198.51.100.10")["enabled"], m.addr)
            # status shows where the members differ, and only that.
            p = ctl("status", "-c", self.cfg)
            self.assertEqual(p.returncode, 0, p.out)
            m1, m3 = self.members[0], self.members[2]
            diff = p.stdout[p.stdout.index("DIFFERENCES"):]
            self.assertEqual(diff, f"DIFFERENCES\n  service west 198.51.100.10: enabled on {m1.url}, {m3.url}; "
                                   f"drained on {m2.url}\n", p.stdout)
            self.assertIn(f"== {m1.url} (the first member reached", p.stdout)
        finally:
            p = ctl("enable", "west", "198.51.100.10", "-c", self.cfg, "--member", m2.url)
            self.assertEqual(p.returncode, 0, p.out)
        p = ctl("status", "-c", self.cfg)
        self.assertEqual(p.returncode, 0, p.out)
        self.assertIn("DIFFERENCES: none, all 3 members agree", p.stdout)
        # The members' configs differ only in their listen addresses: one digest.
        digests = {m.status()["config_digest"] for m in self.members}
        self.assertEqual(len(digests), 1, digests)
        self.assertEqual(len(digests.pop()), 64)
        p = ctl("status", "-c", self.cfg, "--json")
        self.assertEqual(p.returncode, 0, p.out)
        j = json.loads(p.stdout)
        self.assertEqual([m["url"] for m in j["members"]], [m.url for m in self.members])
        self.assertEqual(j["differences"], [])
        p = ctl("drain", "west", "-c", self.cfg, "--member", "http://127.0.0.9:1")
        self.assertEqual(p.returncode, 1)
        self.assertIn("--member http://127.0.0.9:1 is not one of the [cluster] members", p.stderr)

    def test_3_reload_and_report_reach_every_member(self):
        p = ctl("reload", "-c", self.cfg)
        self.assertEqual(p.returncode, 0, p.out)
        self.assertEqual(p.stdout.count(": ok: ok"), 3, p.out)
        p = ctl("report", "east", "cpu=42", "-c", self.cfg)
        self.assertEqual(p.returncode, 0, p.out)
        for m in self.members:
            self.assertEqual(m.site("east")["cpu"], 42, m.addr)

    def test_4_an_unanswering_member_costs_its_timeout_once(self):
        # A peer that accepts connections and never answers (a hung gslbd): with two of them, the drain
        # still ends in about one timeout, since every member is asked at once.
        hung = [socket.socket(), socket.socket()]
        try:
            for s, a in zip(hung, ("127.0.0.5", "127.0.0.6")):
                s.bind((a, self.cport))
                s.listen(8)
            d = tempfile.mkdtemp(prefix="e2e-cluster-ctl-")
            cfg = os.path.join(d, "ctl.toml")
            with open(cfg, "w") as f:
                # gslbctl reads only [control] and [cluster] members: this is all it needs.
                members = [m.url for m in self.members[:2]] + [f"http://127.0.0.5:{self.cport}",
                                                               f"http://127.0.0.6:{self.cport}"]
                f.write(f'[control]\ntoken_file = "{self.members[0].path("token")}"\n'
                        f'[cluster]\nmembers = {json.dumps(members)}\n')
            t0 = time.monotonic()
            p = ctl("drain", "east", "-c", cfg, "--timeout", "0.5")
            took = time.monotonic() - t0
            self.assertEqual(p.returncode, 1, p.out)
            for m in self.members[:2]:
                self.assertIn(f"{m.url}: ok: drained: east", p.stdout)
            self.assertIn(f"http://127.0.0.5:{self.cport}: FAILED: unreachable: no answer within 500 ms", p.stdout)
            self.assertIn(f"http://127.0.0.6:{self.cport}: FAILED: unreachable: no answer within 500 ms", p.stdout)
            self.assertIn("2 of 4 member(s) failed", p.stderr)
            self.assertLess(took, 0.95, f"two hung members cost one timeout, not two: {took:.2f} s")
            print(f"MEASURED: drain with 2 of 4 members hung (--timeout 0.5): {took * 1000:.0f} ms")
        finally:
            for s in hung:
                s.close()
            p = ctl("enable", "east", "-c", self.cfg)
            self.assertEqual(p.returncode, 0, p.out)

    # ---- report forwarding
    def reports(self):
        return [m.metric("gslbd_control_reports_total") for m in self.members]

    def forwards(self, m, result="ok"):
        return {p.url: m.metric("gslbd_cluster_forwards_total", peer=p.url, result=result)
                for p in self.members if p is not m}

    def test_5_a_report_to_one_member_reaches_the_others_once(self):
        m1, m2, m3 = self.members
        before, fw_before = self.reports(), [self.forwards(m) for m in self.members]
        t0 = time.monotonic()
        r = api(m1.addr, m1.cport, "/v1/sites/west/report", {"cpu": 17})  # an agent: one address
        self.assertEqual(r["ok"], True)
        for m in self.members:
            wait_for(lambda: m.site("west")["cpu"] == 17, 3, f"{m.addr} has the report")
        print(f"MEASURED: a report to one member is on every member {(time.monotonic() - t0) * 1000:.0f} ms later")
        wait_for(lambda: self.forwards(m1) == {u: v + 1 for u, v in fw_before[0].items()}, 3,
                 "m1 counts one forward ok per peer")
        time.sleep(0.3)  # a loop or a storm would show up as more reports by now
        self.assertEqual([a - b for a, b in zip(self.reports(), before)], [1, 1, 1])
        # The peers took it as forwarded: they did not send it on.
        for i in (1, 2):
            self.assertEqual(self.forwards(self.members[i]), fw_before[i], self.members[i].addr)
        self.assertEqual(m1.metric("gslbd_cluster_forward_pending", peer=m2.url), 0)
        # gslbctl report reaches each member itself, marked: no forwarding on top of it.
        before = self.reports()
        p = ctl("report", "west", "cpu=18", "-c", self.cfg)
        self.assertEqual(p.returncode, 0, p.out)
        time.sleep(0.3)
        self.assertEqual([a - b for a, b in zip(self.reports(), before)], [1, 1, 1])

    # ---- drains converge (doc/ns-set.md "Drains converge")
    def admin_file(self, m):
        with open(m.path("state/admin-state.json")) as f:
            return json.load(f)

    def test_6_a_member_stopped_during_a_drain_converges(self):
        m1, m2, m3 = self.members
        # gslbctl reaches m1 and m2 only (a config listing those two: m3 is cut off from the operator), while
        # m3 is stopped as a hung machine would be; a SIGSTOPped m3 reached by gslbctl would still read the
        # queued request after SIGCONT and drain by itself.
        d = tempfile.mkdtemp(prefix="e2e-cluster-ctl-")
        two = os.path.join(d, "ctl.toml")
        with open(two, "w") as f:
            f.write(f'[control]\ntoken_file = "{m1.path("token")}"\n'
                    f'[cluster]\nmembers = {json.dumps([m1.url, m2.url])}\n')
        os.kill(m3.proc.pid, signal.SIGSTOP)
        try:
            p = ctl("drain", "east", "-c", two)
            self.assertEqual(p.returncode, 0, p.out)
            time.sleep(0.3)
        finally:
            os.kill(m3.proc.pid, signal.SIGCONT)
        t0 = time.monotonic()
        wait_for(lambda: not m3.site("east")["enabled"], 4, "m3 drains east after SIGCONT")
        took = time.monotonic() - t0
        q = build_query("www." + ZONE, "A")
        self.assertEqual({rr[4] for rr in decode_msg(udp_query(m3.port, q, addr=m3.addr)).answer}, {"198.51.100.10"})
        print(f"MEASURED: a member SIGSTOPped during gslbctl drain drains {took * 1000:.0f} ms after SIGCONT")
        changes = {(c["site"], c.get("address")): c for c in api(m3.addr, m3.cport, "/v1/admin")["changes"]}
        east = changes[("east", None)]
        self.assertFalse(east["enabled"])
        self.assertIn(east["origin"], {m1.url, m2.url})
        self.assertIn("site east drained by the cluster: the change of ", m3.stderr())
        # Its status says from whom (GET /v1/status cluster.admin_sync, /metrics).
        sync = m3.status()["cluster"]["admin_sync"]
        self.assertEqual(set(sync), {m1.url, m2.url})
        self.assertGreaterEqual(sum(p["changes_applied"] for p in sync.values()), 1, sync)
        self.assertTrue(any(p["last_success"] for p in sync.values()), sync)
        self.assertGreaterEqual(sum(m3.metric("gslbd_cluster_admin_changes_applied_total", peer=u) for u in sync), 1)
        # Persisted, with what orders it.
        on_disk = {c["site"]: c for c in self.admin_file(m3)["changes"]}
        self.assertEqual(on_disk["east"]["time_ms"], east["time_ms"])
        self.assertEqual(self.admin_file(m3)["drained_sites"], ["east"])
        p = ctl("enable", "east", "-c", self.cfg)
        self.assertEqual(p.returncode, 0, p.out)

    def test_7_a_restarted_member_adopts_a_newer_enable_and_spreads_no_older_drain(self):
        m1, m2, m3 = self.members
        svc = "198.51.100.10"
        p = ctl("drain", "west", svc, "-c", self.cfg)
        self.assertEqual(p.returncode, 0, p.out)
        drained_at = [c for c in self.admin_file(m2)["changes"] if c.get("address") == svc][0]["time_ms"]
        m2.kill()  # its state_dir keeps the drain
        p = ctl("enable", "west", svc, "-c", self.cfg, "--timeout", "0.5")
        self.assertEqual(p.returncode, 1, p.out)
        self.assertIn(f"{m2.url}: FAILED: unreachable: connection refused", p.stdout)
        m2._spawn([os.environ.get("GSLBD") or os.path.join(REPO, "build", "server", "gslbd"),
                   "--config", m2.config_path])
        m2.wait_up()
        # Before its first answer it read the peers: the newer enable beat the drain it had kept on disk.
        self.assertTrue(m2.service(svc)["enabled"], m2.stderr())
        self.assertIn("admin state: 1 drain(s) restored", m2.stderr())
        self.assertIn(f"service {svc} (west) enabled by the cluster", m2.stderr())
        change = [c for c in self.admin_file(m2)["changes"] if c.get("address") == svc][0]
        self.assertTrue(change["enabled"])
        self.assertGreater(change["time_ms"], drained_at)
        self.assertEqual(self.admin_file(m2)["drained_services"], [])
        # The older drain went nowhere: after a poll interval the peers still have the service enabled.
        time.sleep(1.2)
        for m in (m1, m3):
            self.assertTrue(m.service(svc)["enabled"], m.addr)
        # Reports live in memory only: give the restarted member the sites' metrics again, then all agree.
        for site, cpu in (("east", 42), ("west", 18)):
            self.assertEqual(ctl("report", site, f"cpu={cpu}", "-c", self.cfg).returncode, 0)
        p = ctl("status", "-c", self.cfg)
        self.assertIn("DIFFERENCES: none, all 3 members agree", p.stdout)

    def test_8_a_drain_a_hung_member_reads_late_cannot_undo_a_later_enable(self):
        # The new-user trial's case: gslbctl drain reaches a SIGSTOPped member (the request waits in its socket,
        # gslbctl says FAILED), the operator enables on another member, then the stopped one runs again and reads
        # the drain. Taken with its own "now" the drain was the newest change and every member drained; it
        # carries the command's time (at_ms), older than the enable, so every member stays enabled.
        m1, m2, m3 = self.members
        os.kill(m3.proc.pid, signal.SIGSTOP)
        try:
            p = ctl("drain", "east", "-c", self.cfg, "--timeout", "0.5")
            self.assertEqual(p.returncode, 1, p.out)
            self.assertIn(f"{m3.url}: FAILED", p.stdout)
            time.sleep(0.05)  # the enable comes later by the operator's clock
            p = ctl("enable", "east", "-c", self.cfg, "--server", m1.url)
            self.assertEqual(p.returncode, 0, p.out)
            wait_for(lambda: m2.site("east")["enabled"], 3, "m2 takes over m1's enable")
        finally:
            os.kill(m3.proc.pid, signal.SIGCONT)
        time.sleep(1.5)  # m3 read the queued drain and polled its peers (every second)
        for m in (m1, m2, m3):
            self.assertTrue(m.site("east")["enabled"], f"{m.addr}: {m.stderr()[-1500:]}")
        q = build_query("www." + ZONE, "A")
        self.assertIn("192.0.2.10", {rr[4] for rr in decode_msg(udp_query(m3.port, q, addr=m3.addr)).answer})

    def test_9_killed_member_is_unreachable_and_the_others_drain(self):
        dead = self.members[2]
        dead.kill()
        try:
            p = ctl("drain", "east", "-c", self.cfg)
            self.assertEqual(p.returncode, 1, p.out)
            for m in self.members[:2]:
                self.assertIn(f"{m.url}: ok: drained: east", p.stdout)
                self.assertFalse(m.site("east")["enabled"], m.addr)
            self.assertIn(f"{dead.url}: FAILED: unreachable: connection refused", p.stdout)
            self.assertIn("1 of 3 member(s) failed", p.stderr)
            p = ctl("status", "-c", self.cfg)
            self.assertEqual(p.returncode, 1, p.out)
            self.assertIn(f"  {dead.url}  unreachable: connection refused", p.stdout)
            self.assertIn(f"DIFFERENCES\n  {dead.url}: unreachable: connection refused\n", p.stdout)
            self.assertIn("(the 2 members reached agree)", p.stdout)
            # The live members' drain sync shows the dead peer failing (status, metrics, gslbctl status).
            m1 = self.members[0]
            wait_for(lambda: m1.status()["cluster"]["admin_sync"][dead.url]["state"] == "failing", 3,
                     "m1's admin sync sees the dead peer")
            self.assertEqual(m1.status()["cluster"]["admin_sync"][dead.url]["last_error"], "connect or read failed")
            self.assertEqual(m1.metric("gslbd_cluster_admin_sync_up", peer=dead.url), 0)
            self.assertGreater(m1.metric("gslbd_cluster_admin_sync_total", peer=dead.url, result="failed"), 0)
            p = ctl("status", "-c", self.cfg)
            self.assertIn(f"ADMIN SYNC: {dead.url} failing: connect or read failed, last read ", p.stdout)
            # A report to a member whose peer is dead is still answered at once, and reaches the live peer;
            # the dead one counts as failed.
            m1, m2 = self.members[:2]
            failed = m1.metric("gslbd_cluster_forwards_total", peer=dead.url, result="failed")
            t0 = time.monotonic()
            api(m1.addr, m1.cport, "/v1/sites/west/report", {"cpu": 33})
            self.assertLess(time.monotonic() - t0, 0.5)
            wait_for(lambda: m2.site("west")["cpu"] == 33, 3, "the live peer has the report")
            wait_for(lambda: m1.metric("gslbd_cluster_forwards_total", peer=dead.url, result="failed") == failed + 1,
                     3, "the dead peer's forward counts as failed")
            self.assertIn(f"cluster: forwarding a report to {dead.url} failed", m1.stderr())
        finally:
            ctl("enable", "east", "-c", self.cfg)


if __name__ == "__main__":
    run_tests()
