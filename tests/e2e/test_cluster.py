#!/usr/bin/env python3
"""Several gslbd instances as one NS set (doc/ns-set.md): three members on
127.0.0.2, .3 and .4, all on the same ports, so each member's config is the same file but for the address it
listens on (loopback answers on all of 127.0.0.0/8), without etcd: the members share nothing (as gdnsd's do) and
gslbctl reaches each of them itself. gslbctl's fan-out, status differences, a dead member, and what no longer
happens between members (no /v1/admin or /v1/verdicts polling, no report forwarding). The NS set that shares
its state is e2e-etcd's."""
import json
import os
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
        # setUpClass starts the three in one go: without etcd a member waits for no other at start.
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

    def test_5_without_etcd_the_members_share_nothing(self):
        m1, m2, m3 = self.members
        # gslbd --check says so, with the [cluster] line and what to do.
        gslbd = os.environ.get("GSLBD") or os.path.join(REPO, "build", "server", "gslbd")
        p = subprocess.run([gslbd, "--check", "--config", m1.config_path], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=30)
        line = config(m1.addr, self.dns_port, self.cport, ADDRS).splitlines().index("[cluster]") + 1
        self.assertIn(f"{m1.config_path}:{line}: warning: [cluster] has no `etcd`: the members share nothing",
                      p.stdout)
        self.assertIn('add etcd = ["http://ADDRESS:2379", …] to [cluster]', p.stdout)
        # A report to one member (an agent with one address) stays there: no forwarding, no storm.
        before = self.reports()
        r = api(m1.addr, m1.cport, "/v1/sites/west/report", {"cpu": 17})
        self.assertEqual(r["ok"], True)
        # A drain through one member's API stays there too: no member polls another's /v1/admin.
        api(m2.addr, m2.cport, "/v1/sites/east/drain", {})
        try:
            time.sleep(1.5)  # the old protocol polled every second: it would have spread by now
            self.assertEqual([a - b for a, b in zip(self.reports(), before)], [1, 0, 0])
            self.assertEqual(m1.site("west")["cpu"], 17)
            self.assertFalse(m2.site("east")["enabled"])
            for m in (m1, m3):
                self.assertTrue(m.site("east")["enabled"], m.addr)
            for m in self.members:
                for path in ("/v1/admin", "/v1/verdicts"):
                    with self.assertRaises(urllib.error.HTTPError) as e:
                        api(m.addr, m.cport, path)
                    self.assertEqual(e.exception.code, 404, (m.addr, path))
                self.assertNotIn("admin_sync", m.status()["cluster"])
                self.assertEqual(m.metric("gslbd_cluster_forwards_total", peer=m1.url, result="ok"), 0.0)
            # gslbctl report reaches every member itself, once each.
            before = self.reports()
            p = ctl("report", "west", "cpu=18", "-c", self.cfg)
            self.assertEqual(p.returncode, 0, p.out)
            self.assertEqual([a - b for a, b in zip(self.reports(), before)], [1, 1, 1])
        finally:
            p = ctl("enable", "east", "-c", self.cfg)
            self.assertEqual(p.returncode, 0, p.out)

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
            # The live members say nothing of the dead one: they never polled it.
            self.assertNotIn(dead.url, self.members[0].stderr())
        finally:
            ctl("enable", "east", "-c", self.cfg)


if __name__ == "__main__":
    run_tests()
