#!/usr/bin/env python3
"""The AF_XDP fast path (`[server] xdp`), in two network namespaces this test makes: gslbd in one with
XDP on its end of a veth pair, dig/kdig and raw frames from the other.

- The program is attached (ip link show), and the answers come through AF_XDP (gslbd_xdp_queries_total and
  gslbd_xdp_responses_total count them): static, GSLB, NXDOMAIN, EDNS, a cookie, IPv6, a TC answer for one that
  would not fit the link's MTU (never a fragment), FORMERR for a malformed DNS message.
- A malformed frame (a UDP length past the IP payload) is dropped without an answer and without a crash.
- TCP on the same address is the kernel's (the program passes it): it answers in full.
- SIGTERM takes the program off the interface; so does SIGKILL (a bpf_link dies with its process).
- Fallback: xdp on an interface that does not exist: one log line, and the sockets answer; `gslbd --check`
  warns in the same words; no gslbd_xdp_dropped_total without AF_XDP sockets.
- /v1/status, `gslbctl status` and the SIGUSR1 line say, per interface, serving (sockets, mode, counts) or
  fell back (and why).
- The listen addresses the program takes: a wildcard, IPv6, the short list (up to 8) and the hash map beyond;
  frames to another address or port pass to the kernel.
- A second gslbd on the same interface falls back, says another XDP program is attached and where to look,
  and answers on its sockets while the first keeps the fast path.
- After the start (LinkChanges, a lab of its own): a listen address that is not the interface's is warned about
  (start, --check, status) until it is added; down, no carrier, the program detached (BPF_LINK_DETACH, as
  bpftool does), the interface deleted and made again are each seen within a second or so, logged once,
  shown in /v1/status, gslbctl status and SIGUSR1, with what to do; down and no carrier heal by themselves.

Skipped, with the reason, where namespaces cannot be made (not root) or gslbd was built without libxdp.
"""
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (gslbctl_path, gslbd_path, inet_checksum, netns_available, parse_dig,  # noqa: E402
                     run_tests, sh, spawn)

TAG = f"{os.getpid() % 100000}"
SRV, CLI = f"gxs{TAG}", f"gxc{TAG}"
IF_SRV, IF_CLI = "gx0", "gx1"
A4, C4 = "10.231.0.1", "10.231.0.2"
A6, C6 = "fd00:231::1", "fd00:231::2"
ZONE = "xdp.test."
BIG = " ".join('"' + "x" * 250 + '"' for _ in range(8))  # a TXT of ~2 KB: more than a 1500-octet link holds


def can_run():
    ok, why = netns_available(f"gxprobe{TAG}", "network namespaces and a veth pair")
    if not ok:
        return False, why
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "g.toml")
        with open(path, "w") as f:
            f.write('[server]\nlisten = ["127.0.0.1:10053"]\nxdp = ["lo"]\n')
        p = sh(gslbd_path(), "--check", "--config", path, check=False)
        if "built without the AF_XDP" in p.stdout:
            return False, "this gslbd was built without libxdp (meson -Dxdp): " + p.stdout.strip()
    return True, ""


OK, WHY = can_run()

ZONE_TEXT = f"""$ORIGIN {ZONE}
$TTL 60
@ IN SOA ns1 hostmaster 1 3600 600 604800 5
@ IN NS ns1
ns1 IN A {A4}
static IN A 192.0.2.99
static IN AAAA 2001:db8::99
big IN TXT {BIG}
www IN A 192.0.2.1
www IN A 192.0.2.2
"""


def config(listen, xdp, cport, extra=""):
    return f"""{extra}
[server]
listen = [{", ".join('"' + l + '"' for l in listen)}]
workers = 1
udp_payload_max = 4096
xdp = [{", ".join('"' + x + '"' for x in xdp)}]

[control]
listen = "127.0.0.1:{cport}"
token_file = "token"

[[zone]]
name = "{ZONE}"
file = "zone.db"

[site.a]
[site.b]

[hostname."www.{ZONE}"]
policy = ["health", "random"]
answers = 1

[[hostname."www.{ZONE}".service]]
address = "192.0.2.1"
site = "a"

[[hostname."www.{ZONE}".service]]
address = "192.0.2.2"
site = "b"
"""


class Server:
    """gslbd in the server namespace, in its own process group."""

    def __init__(self, listen, xdp, cport=8053, extra="", ns=None):
        self.ns = ns or SRV
        self.dir = tempfile.mkdtemp(prefix="gslbd-xdp-")
        self.cport = cport
        for name, text in (("zone.db", ZONE_TEXT), ("token", "xdp-t0ken-16chars\n"),
                           ("gslbd.toml", config(listen, xdp, cport, extra))):
            with open(os.path.join(self.dir, name), "w") as f:
                f.write(text)
        os.chmod(os.path.join(self.dir, "token"), 0o600)  # gslbd refuses a token others can read
        self.log = open(os.path.join(self.dir, "log"), "wb")
        self.proc = spawn(["ip", "netns", "exec", self.ns, gslbd_path(), "-c", "gslbd.toml"], cwd=self.dir,
                          stdout=self.log, stderr=self.log)

    def text(self):
        with open(os.path.join(self.dir, "log"), errors="replace") as f:
            return f.read()

    def wait_serving(self):
        deadline = time.time() + 10
        while time.time() < deadline:
            if "serving 1 zone(s)" in self.text():
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise AssertionError(f"gslbd did not start:\n{self.text()}")

    def metrics(self):
        p = sh("ip", "netns", "exec", self.ns, "curl", "-s", "-H", "Authorization: Bearer xdp-t0ken-16chars",
               f"http://127.0.0.1:{self.cport}/metrics")
        out = {}
        for line in p.stdout.splitlines():
            if line and not line.startswith("#"):
                k, _, v = line.rpartition(" ")
                out[k] = float(v)
        return out

    def status(self):
        p = sh("ip", "netns", "exec", self.ns, "curl", "-s", "-H", "Authorization: Bearer xdp-t0ken-16chars",
               f"http://127.0.0.1:{self.cport}/v1/status")
        return json.loads(p.stdout)

    def gslbctl_status(self):
        """`gslbctl status` as an operator runs it on the server's host, with the server's config."""
        return subprocess.run(["ip", "netns", "exec", self.ns, gslbctl_path(), "status", "-c", "gslbd.toml"],
                              cwd=self.dir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=20).stdout

    def usr1_line(self):
        """The SIGUSR1 status line (the last one logged)."""
        n = self.text().count("status: ")
        os.kill(self.proc.pid, signal.SIGUSR1)
        deadline = time.time() + 5
        while time.time() < deadline and self.text().count("status: ") == n:
            time.sleep(0.05)
        return [l for l in self.text().splitlines() if "status: " in l][-1]

    def check(self):
        """`gslbd --check` of this server's config, in its namespace: (exit code, stdout + stderr)."""
        p = subprocess.run(["ip", "netns", "exec", self.ns, gslbd_path(), "--check", "-c", "gslbd.toml"], cwd=self.dir,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=20)
        return p.returncode, p.stdout

    def stop(self, sig=signal.SIGTERM):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, sig)
            try:
                return self.proc.wait(5)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)
        return self.proc.returncode

    def close(self):
        self.stop()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def q(server, qname, qtype="A", *opts):
    p = sh("ip", "netns", "exec", CLI, "dig", "@" + server, "+norec", "+time=1", "+tries=2", "+nocookie",
           *opts, qname, qtype, check=False)
    return parse_dig(p.stdout)


def xdp_attached():
    return "prog/xdp" in sh("ip", "-n", SRV, "link", "show", "dev", IF_SRV).stdout


def mac(ns, dev):
    return sh("ip", "-n", ns, "-o", "link", "show", "dev", dev).stdout.split("link/ether ")[1].split()[0]


def raw_frame(udp_len_delta, payload):
    """An Ethernet/IPv4/UDP frame from the client to the server's port 53, its UDP length off by the delta."""
    src, dst = bytes.fromhex(mac(CLI, IF_CLI).replace(":", "")), bytes.fromhex(mac(SRV, IF_SRV).replace(":", ""))
    udp = struct.pack("!HHHH", 40000, 53, 8 + len(payload) + udp_len_delta, 0) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0x4000, 64, 17, 0, socket.inet_aton(C4),
                     socket.inet_aton(A4))
    ip = ip[:10] + struct.pack("!H", inet_checksum(ip)) + ip[12:]
    return dst + src + b"\x08\x00" + ip + udp


@unittest.skipUnless(OK, WHY or "AF_XDP lab unavailable")
class XdpTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        try:
            cls._setup()
        except BaseException:
            cls.tearDownClass()  # unittest does not call it when setUpClass fails
            raise

    @classmethod
    def _setup(cls):
        sh("ip", "netns", "add", SRV)
        sh("ip", "netns", "add", CLI)
        sh("ip", "link", "add", IF_SRV, "netns", SRV, "type", "veth", "peer", "name", IF_CLI, "netns", CLI)
        for ns, dev, a4, a6 in ((SRV, IF_SRV, A4, A6), (CLI, IF_CLI, C4, C6)):
            sh("ip", "-n", ns, "addr", "add", a4 + "/24", "dev", dev)
            sh("ip", "-n", ns, "addr", "add", a6 + "/64", "dev", dev, "nodad")
            sh("ip", "-n", ns, "link", "set", dev, "up")
            sh("ip", "-n", ns, "link", "set", "lo", "up")
        cls.server = Server([f"{A4}:53", f"[{A6}]:53"], [IF_SRV])
        cls.server.wait_serving()
        # A kernel or sandbox that refuses XDP (no BPF, no AF_XDP) is the fallback's case, not a failure: the
        # tests that need the fast path skip with gslbd's own reason; TCP and the fallback still run.
        cls.unattached = next((l for l in cls.server.text().splitlines() if f"xdp on {IF_SRV}:" in l
                               and "answered on the sockets" in l), None)

    def need_xdp(self):
        if self.unattached:
            self.skipTest(f"XDP cannot be attached here: {self.unattached}")

    @classmethod
    def tearDownClass(cls):
        if getattr(cls, "server", None):
            cls.server.close()
        for ns in (SRV, CLI):
            sh("ip", "netns", "del", ns, check=False)

    def through_xdp(self, fn):
        """Runs fn(); returns how many queries and answers the fast path counted meanwhile."""
        before = self.server.metrics()
        fn()
        after = self.server.metrics()
        return (after["gslbd_xdp_queries_total"] - before["gslbd_xdp_queries_total"],
                after["gslbd_xdp_responses_total"] - before["gslbd_xdp_responses_total"])

    def test_1_attached(self):
        self.need_xdp()
        self.assertTrue(xdp_attached(), sh("ip", "-n", SRV, "link", "show").stdout)
        self.assertIn(f"xdp on {IF_SRV}: 1 queue(s)", self.server.text())
        m = self.server.metrics()
        self.assertEqual(m["gslbd_xdp_sockets"], 1)
        self.assertEqual(m['gslbd_xdp_dropped_total{reason="fill_empty"}'], 0)  # the kernel's own counts
        # Per interface, in /v1/status, `gslbctl status` and the SIGUSR1 line: serving, its sockets, the mode
        # (a veth has no zero-copy) and the counts, which follow the fast path's own.
        n_in, n_out = self.through_xdp(lambda: q(A4, "static." + ZONE))
        self.assertEqual((n_in, n_out), (1, 1))
        x = self.server.status()["xdp"]
        m = self.server.metrics()
        self.assertEqual(len(x), 1, x)
        self.assertEqual({k: x[0][k] for k in ("name", "state", "reason", "sockets", "mode")},
                         {"name": IF_SRV, "state": "serving", "reason": None, "sockets": 1, "mode": "copy"}, x)
        self.assertEqual((x[0]["queries"], x[0]["responses"]),
                         (m["gslbd_xdp_queries_total"], m["gslbd_xdp_responses_total"]), x)
        self.assertGreaterEqual(x[0]["queries"], 1)
        self.assertEqual(x[0]["dropped"]["fill_empty"], 0, x)
        # Answers the TX ring had no room for (tx_ring.hpp): none here, in both places.
        self.assertEqual(x[0]["dropped"]["tx_full"], 0, x)
        self.assertEqual(m['gslbd_xdp_dropped_total{reason="tx_full"}'], 0)
        out = self.server.gslbctl_status()
        self.assertIn(f"XDP: {IF_SRV} serving, 1 AF_XDP socket(s), copy mode, {x[0]['queries']} queries, "
                      f"{x[0]['responses']} responses", out)
        self.assertIn(f"; xdp {IF_SRV} serving, 1 socket(s), copy mode, queries {x[0]['queries']} responses "
                      f"{x[0]['responses']}", self.server.usr1_line())
        rc, out = self.server.check()  # the interface is there: no warning about it
        self.assertEqual(rc, 0, out)
        self.assertNotIn("xdp on", out)
        try:
            from prometheus_client.parser import text_string_to_metric_families
        except ImportError:
            return
        text = sh("ip", "netns", "exec", SRV, "curl", "-s", "-H", "Authorization: Bearer xdp-t0ken-16chars",
                  f"http://127.0.0.1:{self.server.cport}/metrics").stdout
        names = {f.name for f in text_string_to_metric_families(text)}  # the reference parser reads it all
        self.assertTrue({"gslbd_xdp_queries", "gslbd_xdp_responses", "gslbd_xdp_sockets", "gslbd_xdp_dropped"}
                        <= names, names)

    def test_2_answers_through_xdp(self):
        self.need_xdp()
        got = {}

        def run():
            got["static"] = q(A4, "static." + ZONE)
            got["gslb"] = q(A4, "www." + ZONE)
            got["nx"] = q(A4, "nope." + ZONE)
            got["edns"] = q(A4, "static." + ZONE, "AAAA", "+bufsize=1400", "+nsid")
            got["v6"] = q(A6, "static." + ZONE)
            got["cookie"] = q(A4, "static." + ZONE, "A", "+cookie")
            got["big"] = q(A4, "big." + ZONE, "TXT", "+bufsize=4096", "+ignore")
        n_in, n_out = self.through_xdp(run)
        self.assertEqual([str(r.rdata) for r in got["static"].answer], ["192.0.2.99"], got["static"])
        self.assertIn(got["gslb"].answer[0].rdata, ("192.0.2.1", "192.0.2.2"), got["gslb"])
        self.assertEqual(len(got["gslb"].answer), 1, got["gslb"])
        self.assertEqual(got["nx"].rcode, "NXDOMAIN", got["nx"])
        self.assertEqual(got["nx"].rrs("authority", "SOA")[0].rtype, "SOA")
        self.assertTrue(got["edns"].edns and got["edns"].edns_udp == 4096, got["edns"])
        self.assertEqual(got["edns"].answer[0].rdata, "2001:db8::99")
        self.assertEqual(got["v6"].answer[0].rdata, "192.0.2.99", got["v6"])
        self.assertIn("COOKIE", got["cookie"].text, got["cookie"])
        # ~2 KB asked for with a 4096 buffer, on a 1500-octet link: TC (retry over TCP), not a fragment.
        self.assertTrue(got["big"].tc, got["big"])
        self.assertEqual(got["big"].answer, [])
        self.assertEqual((n_in, n_out), (7, 7), "every query and answer above went through AF_XDP")

    def test_3_malformed(self):
        self.need_xdp()
        # A DNS message that is not one: FORMERR (or nothing), from the fast path, and the server lives.
        with_ns = ["ip", "netns", "exec", CLI, sys.executable, "-c"]
        prog = (f"import socket;s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM);s.settimeout(1);"
                f"s.sendto(bytes.fromhex('1234 0000 0005 0000 0000 0000 ff'.replace(' ','')),('{A4}',53));"
                f"print(s.recv(512).hex())")
        n_in, _ = self.through_xdp(lambda: sh(*with_ns, prog, check=False))
        self.assertEqual(n_in, 1)
        # A frame whose UDP length runs past its IP packet: parseFrame refuses it (dropped, counted).
        before = self.server.metrics()
        frames = [raw_frame(d, b"x" * 20).hex() for d in (40, 1, -9)]
        send = (f"import socket;s=socket.socket(socket.AF_PACKET,socket.SOCK_RAW);s.bind(('{IF_CLI}',0));"
                f"[s.send(bytes.fromhex(h)) for h in {frames!r}]")
        sh(*with_ns, send)
        time.sleep(0.3)
        after = self.server.metrics()
        self.assertEqual(after["gslbd_xdp_queries_total"] - before["gslbd_xdp_queries_total"], 3)
        self.assertEqual(after["gslbd_xdp_responses_total"] - before["gslbd_xdp_responses_total"], 0)
        self.assertEqual(after["gslbd_queries_dropped_total"] - before["gslbd_queries_dropped_total"], 3)
        self.assertIsNone(self.server.proc.poll(), self.server.text())
        self.assertEqual(q(A4, "static." + ZONE).answer[0].rdata, "192.0.2.99")

    def test_4_tcp_is_the_kernels(self):
        n_in, _ = self.through_xdp(lambda: setattr(self, "r", q(A4, "big." + ZONE, "TXT", "+tcp")))
        self.assertEqual(self.r.rcode, "NOERROR", self.r)
        self.assertEqual(len(self.r.answer), 1)
        self.assertEqual(n_in, 0)

    def test_4b_reload_keeps_the_fast_path(self):
        self.need_xdp()
        with open(os.path.join(self.server.dir, "zone.db"), "w") as f:
            f.write(ZONE_TEXT.replace(" 1 3600 600", " 2 3600 600") + "fresh IN A 192.0.2.77\n")
        os.kill(self.server.proc.pid, signal.SIGHUP)
        deadline, r = time.time() + 5, None
        while time.time() < deadline:
            r = q(A4, "fresh." + ZONE)
            if r.answer:
                break
            time.sleep(0.1)
        self.assertEqual(r.answer[0].rdata, "192.0.2.77", r)
        self.assertTrue(xdp_attached(), "a reload took the program off")
        n_in, n_out = self.through_xdp(lambda: q(A4, "fresh." + ZONE))
        self.assertEqual((n_in, n_out), (1, 1), "after a reload the answers still come through AF_XDP")

    def test_5_fallback_on_a_missing_interface(self):
        s = Server([f"{A4}:5300"], ["nosuch0"], cport=8054)
        try:
            s.wait_serving()
            self.assertIn("xdp on nosuch0: no such interface", s.text())
            self.assertIn("answered on the sockets", s.text())
            r = q(A4, "static." + ZONE, "A", "-p", "5300")
            self.assertEqual(r.answer[0].rdata, "192.0.2.99", r)
            m = s.metrics()
            self.assertEqual(m["gslbd_xdp_sockets"], 0)
            # No socket, nothing the kernel could drop: the family is left out rather than shown as zeros.
            self.assertFalse([k for k in m if k.startswith("gslbd_xdp_dropped_total")], m)
            self.assertIn("gslbd_xdp_queries_total", m)
            why = "no such interface (No such device)"
            x = s.status()["xdp"]
            self.assertEqual(x, [{"name": "nosuch0", "state": "fell back", "reason": why, "warning": None,
                                  "sockets": 0, "mode": None, "queries": 0, "responses": 0, "dropped": None}])
            self.assertIn(f"XDP: nosuch0 fell back: {why}", s.gslbctl_status())
            self.assertIn(f"; xdp nosuch0 fell back to the sockets: {why}", s.usr1_line())
            # --check cannot know the host the config is for: a warning in the daemon's words, exit 0.
            rc, out = s.check()
            self.assertEqual(rc, 0, out)
            self.assertIn(f"warning: xdp on nosuch0: {why}; its UDP queries are answered on the sockets", out)
        finally:
            s.close()

    def test_5b_fallback_on_loopback(self):
        # A new user put xdp on lo: IPv4 answers were lost while the counters said they were sent. The fast path
        # does not take a loopback interface: it says so and lo's queries stay on the sockets.
        s = Server([f"{A4}:5300", "127.0.0.1:5300"], ["lo"], cport=8054)
        try:
            s.wait_serving()
            self.assertIn("xdp on lo: a loopback interface, which the fast path does not serve", s.text())
            p = sh("ip", "netns", "exec", SRV, "dig", "@127.0.0.1", "-p", "5300", "+norec", "+time=1", "+tries=2",
                   "+nocookie", "static." + ZONE, "A", check=False)
            r = parse_dig(p.stdout)
            self.assertEqual(r.answer[0].rdata, "192.0.2.99", r)
            m = s.metrics()
            self.assertEqual(m["gslbd_xdp_sockets"], 0)
            self.assertEqual(m["gslbd_xdp_queries_total"], 0)
            rc, out = s.check()  # knowable without attaching: --check says it too
            self.assertEqual(rc, 0, out)
            self.assertIn("warning: xdp on lo: a loopback interface, which the fast path does not serve; its UDP "
                          "queries are answered on the sockets", out)
        finally:
            s.close()

    def test_6_detached_at_exit_and_at_a_crash(self):
        self.need_xdp()
        self.assertEqual(self.server.stop(signal.SIGTERM), 0, self.server.text())
        self.assertFalse(xdp_attached(), "SIGTERM left the program on the interface")
        self.assertIn("stopped", self.server.text())
        s = Server([f"{A4}:53", f"[{A6}]:53"], [IF_SRV])
        try:
            s.wait_serving()
            self.assertTrue(xdp_attached())
            s.stop(signal.SIGKILL)
            time.sleep(0.2)
            self.assertFalse(xdp_attached(), "a killed gslbd left its program on the interface")
        finally:
            s.close()

    def test_7_rrl_over_xdp(self):
        # The fast path answers with the sockets' per-datagram code: RRL included. 40 identical queries at
        # once from one client, 2 a second allowed, every limited one slipped (TC).
        self.need_xdp()
        s = Server([f"{A4}:53"], [IF_SRV], cport=8055,
                   extra="[rrl]\nresponses_per_second = 2\nslip = 1\nwindow = 1\n")
        try:
            s.wait_serving()
            self.assertTrue(xdp_attached(), s.text())
            prog = (f"import socket,struct;s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM);s.settimeout(0.5)\n"
                    f"q=lambda i:struct.pack('!HHHHHH',i,0,1,0,0,0)+b'\\x06static\\x03xdp\\x04test\\x00\\x00\\x01\\x00\\x01'\n"
                    f"[s.sendto(q(i),('{A4}',53)) for i in range(40)]\n"
                    f"tc=full=0\n"
                    f"try:\n"
                    f"    while True:\n"
                    f"        r=s.recv(512);f=struct.unpack('!H',r[2:4])[0]\n"
                    f"        tc+=bool(f&0x200);full+=not f&0x200\n"
                    f"except OSError: pass\n"
                    f"print(tc,full)")
            out = sh("ip", "netns", "exec", CLI, sys.executable, "-c", prog).stdout.split()
            tc, full = int(out[0]), int(out[1])
            m = s.metrics()
            self.assertGreaterEqual(tc, 20, out)
            self.assertLessEqual(full, 10, out)  # 2 a second, and what the window lets through
            self.assertEqual(m['gslbd_rrl_responses_total{action="slipped"}'], tc)
            self.assertEqual(m["gslbd_xdp_responses_total"], tc + full)
        finally:
            s.close()

    def test_8_second_gslbd_on_the_interface(self):
        # The interface's queue already has the first gslbd's AF_XDP socket (and its program): the second one
        # says what is busy and where to look, and answers on its sockets; the first keeps the fast path.
        self.need_xdp()
        first = Server([f"{A4}:53"], [IF_SRV], cport=8056)
        second = None
        try:
            first.wait_serving()
            second = Server([f"{A4}:5301"], [IF_SRV], cport=8057)
            second.wait_serving()
            hint = f"another XDP program is attached to {IF_SRV}: `ip link show {IF_SRV}`"
            line = next((l for l in second.text().splitlines() if f"xdp on {IF_SRV}:" in l), "")
            self.assertIn(hint, line, second.text())
            self.assertIn("answered on the sockets", line)
            x = second.status()["xdp"][0]
            self.assertEqual(x["state"], "fell back", x)
            self.assertIn(hint, x["reason"])
            r = q(A4, "static." + ZONE, "A", "-p", "5301")
            self.assertEqual(r.answer[0].rdata, "192.0.2.99", r)
            self.assertEqual(second.metrics()["gslbd_xdp_queries_total"], 0)
            before = first.metrics()["gslbd_xdp_queries_total"]
            self.assertEqual(q(A4, "static." + ZONE).answer[0].rdata, "192.0.2.99")
            self.assertEqual(first.metrics()["gslbd_xdp_queries_total"], before + 1)
        finally:
            if second:
                second.close()
            first.close()

    def test_9_listen_addresses(self):
        # The program walks a short list of the listen addresses (up to 8) and looks them up in a hash map
        # beyond that: a wildcard, an IPv6 address and a port nobody listens on, in each of the two ways.
        self.need_xdp()
        send = (f"import socket,struct,sys\n"
                f"q=struct.pack('!HHHHHH',7,0,1,0,0,0)+b'\\x06static\\x03xdp\\x04test\\x00\\x00\\x01\\x00\\x01'\n"
                f"for a in sys.argv[1:]:\n"
                f"    h,p=a.rsplit(':',1);h=h.strip('[]')\n"
                f"    s=socket.socket(socket.AF_INET6 if ':' in h else socket.AF_INET,socket.SOCK_DGRAM)\n"
                f"    s.sendto(q,(h,int(p)))\n")

        def counted(s, expect, *dests):
            """Sends a query to each of dests; how many the fast path took, once `expect` are counted (frames
            are taken in order: what is sent before the last expected one is counted by then)."""
            before = s.metrics()["gslbd_xdp_queries_total"]
            sh("ip", "netns", "exec", CLI, sys.executable, "-c", send, *dests)
            deadline = time.time() + 3
            while time.time() < deadline and s.metrics()["gslbd_xdp_queries_total"] - before < expect:
                time.sleep(0.05)
            return s.metrics()["gslbd_xdp_queries_total"] - before

        for listen, hit, miss in (
                (["0.0.0.0:5310", f"[{A6}]:5311"], [f"{A4}:5310", f"[{A6}]:5311"],
                 [f"{A4}:5312", f"[{A6}]:5310"]),
                ([f"{A4}:{p}" for p in range(5320, 5328)] + ["[::]:5329"], [f"{A4}:5327", f"[{A6}]:5329"],
                 [f"{A4}:5329", f"[{A6}]:5320"])):
            s = Server(listen, [IF_SRV], cport=8058)
            try:
                s.wait_serving()
                self.assertTrue(xdp_attached(), s.text())
                # the frames to what gslbd does not listen on first: they pass, and are not counted
                self.assertEqual(counted(s, len(hit), *miss, *hit), len(hit), (listen, s.text()))
                r = q(A4, "static." + ZONE, "A", "-p", hit[0].rsplit(":", 1)[1])
                self.assertEqual(r.answer[0].rdata, "192.0.2.99", r)
            finally:
                s.close()


# A second lab for what happens to an interface after the start: its own namespaces and veth pair, so that
# taking the interface down, detaching the program and deleting the interface leave XdpTest's alone.
LSRV, LCLI = f"gls{TAG}", f"glc{TAG}"
L_SRV, L_CLI = "gl0", "gl1"
L4, LC4 = "10.232.0.1", "10.232.0.2"


def bpf_link_detach(prog_id):
    """What `bpftool link detach` does (bpftool is not installed): BPF_LINK_DETACH on the XDP link whose program
    is `prog_id`, found with BPF_LINK_GET_NEXT_ID / BPF_LINK_GET_FD_BY_ID / BPF_OBJ_GET_INFO_BY_FD (x86-64)."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)

    def bpf(cmd, attr):
        buf = ctypes.create_string_buffer(bytes(attr), 128)
        r = libc.syscall(321, cmd, buf, 128)  # __NR_bpf
        if r < 0:
            raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
        return r, buf.raw
    link_id = 0
    while True:
        _, out = bpf(31, struct.pack("=III", link_id, 0, 0))  # BPF_LINK_GET_NEXT_ID (ENOENT at the end)
        link_id = struct.unpack_from("=I", out, 4)[0]
        fd, _ = bpf(30, struct.pack("=III", link_id, 0, 0))  # BPF_LINK_GET_FD_BY_ID
        try:
            info = ctypes.create_string_buffer(64)
            bpf(15, struct.pack("=IIQ", fd, 64, ctypes.addressof(info)))  # BPF_OBJ_GET_INFO_BY_FD
            kind, _, prog = struct.unpack_from("=III", info.raw, 0)
            if kind == 6 and prog == prog_id:  # BPF_LINK_TYPE_XDP
                bpf(34, struct.pack("=I", fd))  # BPF_LINK_DETACH
                return
        finally:
            os.close(fd)


@unittest.skipUnless(OK and os.uname().machine == "x86_64", WHY or "the bpf() syscall number here is x86-64's")
class LinkChanges(unittest.TestCase):
    """/v1/status said "serving" after the interface was deleted, taken down or had gslbd's program taken off:
    nothing looked again. Now the control thread does, once a second."""

    def setUp(self):
        self.s = None
        sh("ip", "netns", "add", LSRV)
        sh("ip", "netns", "add", LCLI)
        self.make_veth()

    def make_veth(self):
        sh("ip", "link", "add", L_SRV, "netns", LSRV, "type", "veth", "peer", "name", L_CLI, "netns", LCLI)
        for ns, dev in ((LSRV, L_SRV), (LCLI, L_CLI)):
            sh("ip", "-n", ns, "link", "set", dev, "up")
            sh("ip", "-n", ns, "link", "set", "lo", "up")
        sh("ip", "-n", LCLI, "addr", "add", LC4 + "/24", "dev", L_CLI)

    def tearDown(self):
        if self.s:
            self.s.close()
        for ns in (LSRV, LCLI):
            sh("ip", "netns", "del", ns, check=False)

    def curl(self, path):
        return sh("ip", "netns", "exec", LSRV, "curl", "-s", "-H", "Authorization: Bearer xdp-t0ken-16chars",
                  f"http://127.0.0.1:{self.s.cport}{path}").stdout

    def xdp(self):
        return self.s.status()["xdp"][0]

    def wait_state(self, state, reason_part, what):
        deadline, x = time.monotonic() + 5, None
        while time.monotonic() < deadline:
            x = self.xdp()
            if x["state"] == state and reason_part in (x["reason"] or ""):
                return x
            time.sleep(0.1)
        self.fail(f"{what}: {x}\n{self.s.text()}")

    def dig(self):
        p = sh("ip", "netns", "exec", LCLI, "dig", "@" + L4, "+norec", "+time=1", "+tries=2", "+nocookie",
               "static." + ZONE, "A", check=False)
        return parse_dig(p.stdout)

    def xdp_queries(self):
        return self.xdp()["queries"]

    def test_warned_then_down_no_carrier_detached_gone(self):
        # The listen address is on lo only, not on the interface: serving, but it can never see a query.
        sh("ip", "-n", LSRV, "addr", "add", L4 + "/32", "dev", "lo")
        self.s = Server([f"{L4}:53"], [L_SRV], cport=8058, ns=LSRV)
        self.s.wait_serving()
        if "answered on the sockets" in self.s.text():
            self.skipTest(f"XDP cannot be attached here: {self.s.text()}")
        warn = (f"none of the listen addresses ({L4}:53) is an address of {L_SRV} (")
        self.assertIn(f"warning: xdp on {L_SRV}: {warn}", self.s.text())
        x = self.xdp()
        self.assertEqual(x["state"], "serving", x)
        self.assertIn(warn, x["warning"])
        self.assertIn(f"XDP: {L_SRV} warning: {warn}", self.s.gslbctl_status())
        self.assertIn(f"(warning: {warn}", self.s.usr1_line())
        rc, out = self.s.check()
        self.assertEqual(rc, 0, out)
        self.assertIn(f"warning: xdp on {L_SRV}: {warn}", out)
        # The address added to the interface: the warning goes within the second, queries take the fast path.
        sh("ip", "-n", LSRV, "addr", "add", L4 + "/24", "dev", L_SRV)
        deadline = time.monotonic() + 5
        while self.xdp()["warning"] and time.monotonic() < deadline:
            time.sleep(0.1)
        self.assertIsNone(self.xdp()["warning"], self.s.text())
        self.assertIn(f"xdp on {L_SRV}: a listen address is one of its addresses now", self.s.text())
        n = self.xdp_queries()
        self.assertEqual(self.dig().answer[0].rdata, "192.0.2.99")
        self.assertEqual(self.xdp_queries(), n + 1)

        # Down, then up: it serves again by itself (the program and the sockets stay).
        t0 = time.monotonic()
        sh("ip", "-n", LSRV, "link", "set", L_SRV, "down")
        x = self.wait_state("not serving", "the interface is down", "down")
        print(f"MEASURED: link down seen in /v1/status after {time.monotonic() - t0:.2f} s")
        self.assertEqual(x["sockets"], 1)
        self.assertIn("gslbd_xdp_sockets 0", self.curl("/metrics"))
        self.assertIn(f"; xdp {L_SRV} not serving: the interface is down", self.s.usr1_line())
        sh("ip", "-n", LSRV, "link", "set", L_SRV, "up")
        self.wait_state("serving", "", "up again")
        self.assertIn(f"xdp on {L_SRV}: serving again through AF_XDP", self.s.text())
        self.assertIn("gslbd_xdp_sockets 1", self.curl("/metrics"))
        n = self.xdp_queries()
        self.assertEqual(self.dig().answer[0].rdata, "192.0.2.99")
        self.assertEqual(self.xdp_queries(), n + 1)
        # The peer down: no carrier.
        sh("ip", "-n", LCLI, "link", "set", L_CLI, "down")
        self.wait_state("not serving", "no carrier", "peer down")
        sh("ip", "-n", LCLI, "link", "set", L_CLI, "up")
        self.wait_state("serving", "", "peer up again")

        # `ip link set dev X xdp off` cannot take a bpf_link's program off; BPF_LINK_DETACH (bpftool) can.
        p = sh("ip", "-n", LSRV, "link", "set", "dev", L_SRV, "xdp", "off", check=False)
        self.assertNotEqual(p.returncode, 0, p.stdout)
        self.assertEqual(self.xdp()["state"], "serving")
        prog = json.loads(sh("ip", "-n", LSRV, "-j", "-d", "link", "show", "dev", L_SRV).stdout)[0]["xdp"]["prog"]["id"]
        bpf_link_detach(prog)
        x = self.wait_state("not serving", f"gslbd's XDP program was detached from {L_SRV} by someone else", "detached")
        self.assertIn("restart gslbd to attach it again", x["reason"])
        n = self.xdp_queries()
        self.assertEqual(self.dig().answer[0].rdata, "192.0.2.99")  # the sockets answer
        self.assertEqual(self.xdp_queries(), n)
        self.assertIn(f"XDP: {L_SRV} not serving: gslbd's XDP program was detached", self.s.gslbctl_status())

        # Deleted: gone; made again under the same name: a new interface, which needs a restart.
        sh("ip", "-n", LSRV, "link", "del", L_SRV)
        self.wait_state("not serving", "the interface is gone", "deleted")
        self.make_veth()
        sh("ip", "-n", LSRV, "addr", "add", L4 + "/24", "dev", L_SRV)
        x = self.wait_state("not serving", f"a new {L_SRV} (index", "made again")
        self.assertIn("restart gslbd to serve it through AF_XDP", x["reason"])
        self.assertEqual(self.dig().answer[0].rdata, "192.0.2.99")  # the sockets answer on the new one
        # Each change logged once (the checks run every second), and in the events.
        text = self.s.text()
        for why in ("the interface is down;", "gslbd's XDP program was detached", "the interface is gone\n",
                    "the interface is gone; a new"):
            self.assertEqual(text.count(f"xdp on {L_SRV}: not serving: {why}"), 1, text)
        # "no carrier" once for the peer down, and once more when a check fell in the moment after `link set
        # up` before the kernel's linkwatch marked the carrier (operstate follows up to a second later): a true
        # state, seen in the clean-clone CI.
        self.assertIn(text.count(f"xdp on {L_SRV}: not serving: no carrier"), (1, 2), text)
        events = [e for e in json.loads(self.curl("/v1/events"))["events"] if e["kind"] == "xdp"]
        self.assertGreaterEqual(len(events), 7, events)
        self.assertEqual(self.s.stop(), 0, self.s.text())


if __name__ == "__main__":
    run_tests()
