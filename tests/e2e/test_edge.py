#!/usr/bin/env python3
"""End-to-end tests of facing the internet (doc/operating.md "Facing the internet"): NSID, DNS Cookies, response rate limiting and per-client
limits, with real dig / kdig and raw sockets."""
import os
import re
import select
import socket
import json
import struct
import subprocess
import sys
import time
import unittest
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Gslbd, TcpClient, build_query, decode_msg, run_tests  # noqa: E402

ORIGIN = "edge.test."
SECRET = "e5e973e5a6b2a43f48e7dc849e37bfcf"
ZONE = f"""$ORIGIN {ORIGIN}
$TTL 300
@      3600 IN SOA ns1 admin 1 3600 900 604800 60
@           IN NS   ns1
ns1         IN A    192.0.2.1
www         IN A    192.0.2.2
"""


class Nsid(unittest.TestCase):
    def test_dig_nsid_shows_identity(self):
        with Gslbd(zones={ORIGIN: ZONE}, server={"identity": "ns1.edge", "nsid": True}) as g:
            r = g.dig("www." + ORIGIN, "A", "+nsid")
            self.assertEqual(r.rcode, "NOERROR", r.text)
            self.assertRegex(r.text, r'NSID: .*\("ns1\.edge"\)', r.text)
            k = g.kdig("www." + ORIGIN, "A", "+nsid")
            self.assertIn("ns1.edge", k.text)
            # Not asked for: not sent.
            self.assertNotIn("NSID", g.dig("www." + ORIGIN, "A").text)

    def test_nsid_off_by_default(self):
        with Gslbd(zones={ORIGIN: ZONE}, server={"identity": "ns1.edge"}) as g:
            r = g.dig("www." + ORIGIN, "A", "+nsid")
            self.assertEqual(r.rcode, "NOERROR", r.text)
            self.assertNotIn("NSID:", r.text)

    def test_nsid_without_identity_is_a_config_error(self):
        g = Gslbd(zones={ORIGIN: ZONE}, server={"nsid": True}, expect_start=False)
        try:
            g.write_config()
            rc, out = g.check()
        finally:
            g.close()
        self.assertEqual(rc, 1, out)
        self.assertIn("nsid", out)
        self.assertIn("identity", out)


COOKIE_RE = re.compile(r"COOKIE: ([0-9a-fA-F]+)(?: \((\w+)\))?")


class Cookies(unittest.TestCase):
    """RFC 7873 cookies with RFC 9018 server cookies, as BIND's dig and Knot's kdig see them."""
    g = None

    @classmethod
    def setUpClass(cls):
        cls.g = Gslbd(zones={ORIGIN: ZONE}, files={"cookie.secret": SECRET + "\n"},
                      server={"cookie_secret_file": "cookie.secret"})
        cls.g.__enter__()

    @classmethod
    def tearDownClass(cls):
        cls.g.__exit__(None, None, None)

    def test_dig_reports_the_server_cookie_good(self):
        r = self.g.dig("www." + ORIGIN, "A", "+cookie")
        self.assertEqual(r.rcode, "NOERROR", r.text)
        m = COOKIE_RE.search(r.text)
        self.assertIsNotNone(m, r.text)
        cookie, verdict = m.group(1), m.group(2)
        self.assertEqual(len(cookie), 48, r.text)       # client cookie (8) + server cookie (16)
        self.assertEqual(cookie[16:24], "01000000", r.text)  # RFC 9018: version 1, reserved 0
        self.assertEqual(verdict, "good", r.text)
        # Sent back, the server cookie is valid and young: it comes back as it went.
        r2 = self.g.dig("www." + ORIGIN, "A", "+cookie=" + cookie)
        self.assertEqual(r2.rcode, "NOERROR", r2.text)
        m2 = COOKIE_RE.search(r2.text)
        self.assertEqual((m2.group(1), m2.group(2)), (cookie, "good"), r2.text)
        self.assertEqual(len(r2.answer), 1, r2.text)

    def test_a_foreign_server_cookie_is_replaced_not_refused(self):
        # RFC 7873 §5.2.4: as if only the client cookie had come; answered, with a fresh server cookie.
        bogus = "0102030405060708" + "01000000" + "5cf79f11" + "0000000000000000"
        r = self.g.dig("www." + ORIGIN, "A", "+cookie=" + bogus)
        self.assertEqual(r.rcode, "NOERROR", r.text)
        m = COOKIE_RE.search(r.text)
        self.assertIsNotNone(m, r.text)
        self.assertEqual(m.group(1)[:16], "0102030405060708", r.text)
        self.assertNotEqual(m.group(1)[16:], bogus[16:], r.text)
        self.assertEqual(len(r.answer), 1, r.text)

    def test_kdig_cookie(self):
        r = self.g.kdig("www." + ORIGIN, "A", "+cookie")
        self.assertEqual(r.rcode, "NOERROR", r.text)
        m = COOKIE_RE.search(r.text)
        self.assertIsNotNone(m, r.text)
        self.assertEqual(len(m.group(1)), 48, r.text)
        self.assertEqual(m.group(1)[16:24], "01000000", r.text)  # kdig prints upper case hex
        if m.group(2):
            self.assertEqual(m.group(2), "good", r.text)
        self.assertEqual(len(r.answer), 1, r.text)

    def test_qdcount_zero_with_only_a_cookie_gets_noerror_and_the_cookie(self):
        # RFC 7873 §5.4: asking for a server cookie without a question.
        cc = bytes(range(11, 19))
        q = build_query(qdcount=0, edns=True, edns_opts=struct.pack("!HH", 10, 8) + cc)
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.settimeout(2)
        try:
            s.sendto(q, ("127.0.0.1", self.g.port))
            data = s.recv(4096)
            m = decode_msg(data)
            self.assertEqual((m.rcode, m.qd, m.an), ("NOERROR", 0, 0))
            i = data.find(struct.pack("!HH", 10, 24) + cc)
            self.assertGreater(i, 0, data)
            # The same with a server cookie we never made: BADCOOKIE, and a good one to use.
            q2 = build_query(qdcount=0, edns=True, edns_opts=struct.pack("!HH", 10, 24) + cc + bytes(16))
            s.sendto(q2, ("127.0.0.1", self.g.port))
            data2 = s.recv(4096)
            self.assertEqual(decode_msg(data2).rcode, "BADCOOKIE")
            self.assertGreater(data2.find(struct.pack("!HH", 10, 24) + cc), 0, data2)
        finally:
            s.close()

    def test_malformed_cookie_is_formerr(self):
        r = self.g.dig("www." + ORIGIN, "A", "+cookie=0102030405")  # 5 octets (RFC 7873 §5.2.2)
        self.assertEqual(r.rcode, "FORMERR", r.text)


RPS = 50
TOKEN = "edge-test-token-0123"


def flood(port, streams, duration):
    """Sends queries from several bound sources at fixed rates for `duration` s and collects the replies.

    streams: {name: (source address, queries per second)}. Returns {name: {"sent": n, "full": [t...],
    "tc": n, "other": n}} with the receive time (s since start) of each full answer.
    """
    socks, out, nxt = {}, {}, {}
    start = time.monotonic()
    for name, (src, rate) in streams.items():
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
        s.bind((src, 0))
        s.setblocking(False)
        socks[name] = s
        out[name] = {"sent": 0, "full": [], "tc": 0, "other": 0}
        nxt[name] = start
    query = build_query("www." + ORIGIN, "A", qid=7)
    try:
        end = start + duration
        while True:
            now = time.monotonic()
            if now >= end + 0.5:
                break
            for name, (src, rate) in streams.items():
                while now < end and nxt[name] <= now:
                    try:
                        socks[name].sendto(query, ("127.0.0.1", port))
                        out[name]["sent"] += 1
                    except BlockingIOError:
                        pass
                    nxt[name] += 1.0 / rate
            wake = min([nxt[n] for n in streams] + [end + 0.5]) if now < end else end + 0.5
            r, _, _ = select.select(list(socks.values()), [], [], max(0.0, min(0.01, wake - time.monotonic())))
            for s in r:
                name = next(n for n, x in socks.items() if x is s)
                while True:
                    try:
                        data = s.recv(4096)
                    except BlockingIOError:
                        break
                    m = decode_msg(data)
                    if m.flags & 0x0200:
                        out[name]["tc"] += 1
                    elif m.an >= 1:
                        out[name]["full"].append(time.monotonic() - start)
                    else:
                        out[name]["other"] += 1
    finally:
        for s in socks.values():
            s.close()
    return out


def reference_parse(text):
    """/metrics as the reference parser (Debian's python3-prometheus-client, for the system python3) reads it:
    {sample name: [[labels, value], ...]}."""
    parser = ("import sys, json\n"
              "from prometheus_client.parser import text_string_to_metric_families as f\n"
              "out = {}\n"
              "for fam in f(sys.stdin.read()):\n"
              "    for s in fam.samples:\n"
              "        out.setdefault(s.name, []).append([s.labels, s.value])\n"
              "print(json.dumps(out))\n")
    r = subprocess.run(["/usr/bin/python3", "-c", parser], input=text, capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        raise AssertionError(f"the Prometheus parser refused /metrics:\n{r.stderr}\n{text}")
    return json.loads(r.stdout)


class RateLimiting(unittest.TestCase):
    def test_flood_is_cut_to_the_rate_with_slip_other_prefixes_exempt_and_tcp_unaffected(self):
        control_port = None
        g = Gslbd(zones={ORIGIN: ZONE}, files={"control.token": TOKEN + "\n"}, ipv6=False)
        from harness import free_port
        control_port = free_port()
        base = g.make_config
        g.make_config = lambda: base() + f"""
[control]
listen = "127.0.0.1:{control_port}"
token_file = "control.token"

[rrl]
responses_per_second = {RPS}
window = 2
slip = 2
exempt = ["127.0.2.0/24"]
"""
        with g:
            duration = 3.0
            res = flood(g.port, {"flood": ("127.0.0.2", 10 * RPS), "other": ("127.0.1.5", RPS // 2),
                                 "exempt": ("127.0.2.9", 4 * RPS)}, duration)
            f = res["flood"]
            # After the first second's burst, full answers come at the rate (±10 %).
            steady = [t for t in f["full"] if 1.0 <= t < duration]
            rate = len(steady) / (duration - 1.0)
            summary = {k: (v["sent"], len(v["full"]), v["tc"], v["other"]) for k, v in res.items()}
            print(f"rrl flood (sent, full, tc, other): {summary}; steady full answers {rate:.1f}/s for "
                  f"responses_per_second {RPS}", file=sys.stderr)
            self.assertGreaterEqual(rate, RPS * 0.9, summary)
            self.assertLessEqual(rate, RPS * 1.1, summary)
            # Every 2nd limited response slips (TC), the rest are dropped.
            limited = f["sent"] - len(f["full"])
            self.assertGreater(limited, 0, summary)
            self.assertAlmostEqual(f["tc"] / limited, 0.5, delta=0.05, msg=summary)
            self.assertEqual(f["other"], 0, summary)
            # Another /24 and an exempt prefix: every query answered in full.
            for name in ("other", "exempt"):
                self.assertEqual(len(res[name]["full"]), res[name]["sent"], summary)
                self.assertEqual(res[name]["tc"], 0, summary)
            # TCP from the limited prefix is answered (the harness connects from 127.0.0.1, in 127.0.0.0/24).
            with TcpClient(g.port) as c:
                m = c.query(build_query("www." + ORIGIN, "A", qid=9))
                self.assertEqual(m.an, 1)
            # The log says when the prefix started being limited and, a window later, when it stopped.
            deadline = time.monotonic() + 6
            while time.monotonic() < deadline and "127.0.0.0/24 (answer responses) no longer limited" not in g.stderr():
                time.sleep(0.2)
            err = g.stderr()
            self.assertIn("rrl: 127.0.0.0/24 (answer responses) limited to 50 responses/s", err)
            self.assertIn("rrl: 127.0.0.0/24 (answer responses) no longer limited", err)
            self.assertNotIn("127.0.1.0/24", err)
            self.assertNotIn("127.0.2.0/24", err)
            text = urllib.request.urlopen(f"http://127.0.0.1:{control_port}/metrics", timeout=5).read().decode()
            m = re.search(r'gslbd_rrl_responses_total\{action="slipped"\} (\d+)', text)
            self.assertIsNotNone(m, text)
            self.assertEqual(int(m.group(1)), f["tc"])
            m = re.search(r'gslbd_rrl_responses_total\{action="dropped"\} (\d+)', text)
            self.assertEqual(int(m.group(1)), limited - f["tc"])
            # The names and labels pass the reference parser.
            parsed = reference_parse(text)
            actions = {lb["action"]: v for lb, v in parsed["gslbd_rrl_responses_total"]}
            self.assertEqual(actions, {"dropped": limited - f["tc"], "slipped": f["tc"]})
            self.assertIn("gslbd_rrl_limited_buckets", parsed)
            self.assertEqual({lb["server_cookie"] for lb, _ in parsed["gslbd_cookies_total"]},
                             {"none", "invalid", "valid"})
            self.assertEqual({lb["what"] for lb, _ in parsed["gslbd_client_limit_refused_total"]}, {"tcp", "axfr"})

    def test_slip_to_a_cookie_client_is_badcookie_and_a_valid_cookie_is_never_limited(self):
        g = Gslbd(zones={ORIGIN: ZONE}, ipv6=False)
        base = g.make_config
        g.make_config = lambda: base() + "\n[rrl]\nresponses_per_second = 5\nslip = 1\n"
        with g:
            cc = bytes(range(1, 9))
            opt = struct.pack("!HH", 10, 8) + cc
            q = build_query("www." + ORIGIN, "A", qid=3, edns=True, edns_opts=opt)
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.settimeout(2)
            s.bind(("127.0.0.3", 0))
            rcodes, server_cookie = [], None
            try:
                for _ in range(15):
                    s.sendto(q, ("127.0.0.1", g.port))
                    data = s.recv(4096)
                    m = decode_msg(data)
                    rcodes.append(m.rcode)
                    i = data.find(struct.pack("!HH", 10, 24) + cc)
                    self.assertGreater(i, 0)
                    server_cookie = data[i + 12:i + 28]
                self.assertEqual(rcodes[:5], ["NOERROR"] * 5)
                self.assertEqual(rcodes[5:], ["BADCOOKIE"] * 10)  # slip 1: every limited one, as BADCOOKIE
                # With the server cookie it was given, the same client is answered, however fast it asks.
                opt = struct.pack("!HH", 10, 24) + cc + server_cookie
                q2 = build_query("www." + ORIGIN, "A", qid=4, edns=True, edns_opts=opt)
                for _ in range(20):
                    s.sendto(q2, ("127.0.0.1", g.port))
                    m = decode_msg(s.recv(4096))
                    self.assertEqual((m.rcode, m.an), ("NOERROR", 1))
            finally:
                s.close()


def tcp_from(src, port, timeout=3.0):
    """A TCP connection to the server from source address `src`."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.bind((src, 0))
    s.connect(("127.0.0.1", port))
    return s


def tcp_query(s, q):
    s.sendall(struct.pack("!H", len(q)) + q)
    buf = b""
    while len(buf) < 2 or len(buf) < 2 + struct.unpack("!H", buf[:2])[0]:
        chunk = s.recv(65535)
        if not chunk:
            raise ConnectionError("closed by peer")
        buf += chunk
    return decode_msg(buf[2:2 + struct.unpack("!H", buf[:2])[0]])


def closed_at_once(s, wait=1.0):
    """True when the server closes `s` (EOF or reset) within `wait` s without answering anything."""
    s.settimeout(wait)
    try:
        return s.recv(1) == b""
    except socket.timeout:
        return False
    except OSError:
        return True


def metric(port, name, labels):
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    m = re.search(re.escape(name + "{" + labels + "}") + r" (\d+)", text)
    return int(m.group(1)) if m else None


BIG_N = 150_000  # ~3.6 MB of AXFR: more than the kernel buffers (~1.4 MB here) for a client that does not read
BIG_ZONE = ZONE + "".join(f"h{i} IN A 10.{i >> 16}.{(i >> 8) & 255}.{i & 255}\n" for i in range(BIG_N))


class PerClientLimits(unittest.TestCase):
    def start(self, server):
        from harness import free_port
        self.control = free_port()
        g = Gslbd(zones={ORIGIN: server.pop("zone", ZONE)}, files={"control.token": TOKEN + "\n"}, ipv6=False,
                  server=server)
        base = g.make_config
        g.make_config = lambda: base() + f'\n[control]\nlisten = "127.0.0.1:{self.control}"\n' \
                                         'token_file = "control.token"\n'
        return g

    def test_tcp_connections_per_client(self):
        with self.start({"tcp_max_connections_per_client": 3, "tcp_idle_timeout": 30}) as g:
            q = build_query("www." + ORIGIN, "A", qid=5)
            held = [tcp_from("127.0.0.5", g.port) for _ in range(3)]
            for s in held:
                self.assertEqual(tcp_query(s, q).an, 1)
            # A fourth from the same address is closed at once; the three it holds stay open and answered.
            extra = tcp_from("127.0.0.5", g.port)
            self.assertTrue(closed_at_once(extra), "a 4th connection from one client was kept")
            extra.close()
            for s in held:
                self.assertEqual(tcp_query(s, q).an, 1)
            # Another client is unaffected, whatever the first one holds.
            others = [tcp_from("127.0.0.6", g.port) for _ in range(3)]
            for s in others:
                self.assertEqual(tcp_query(s, q).an, 1)
            # When the client closes one, it may open one again.
            held.pop().close()
            deadline = time.monotonic() + 3
            while True:
                s = tcp_from("127.0.0.5", g.port)
                try:
                    self.assertEqual(tcp_query(s, q).an, 1)
                    held.append(s)
                    break
                except (ConnectionError, OSError):
                    s.close()
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)
            self.assertGreaterEqual(metric(self.control, "gslbd_client_limit_refused_total", 'what="tcp"'), 1)
            for s in held + others:
                s.close()

    def test_concurrent_transfers_per_client(self):
        with self.start({"zone": BIG_ZONE, "axfr_max_concurrent_per_client": 1, "axfr_allow": ["127.0.0.0/8"],
                         "tcp_idle_timeout": 30}) as g:
            # A transfer to a client that does not read stays in flight.
            stuck = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            stuck.bind(("127.0.0.8", 0))
            stuck.connect(("127.0.0.1", g.port))
            axfr = build_query(ORIGIN, "AXFR", qid=21)
            stuck.sendall(struct.pack("!H", len(axfr)) + axfr)
            time.sleep(0.5)
            # The same client's second transfer: SERVFAIL at once (try later), not a second slot.
            s = tcp_from("127.0.0.8", g.port)
            m = tcp_query(s, build_query(ORIGIN, "AXFR", qid=22))
            self.assertEqual(m.rcode, "SERVFAIL")
            # Its ordinary queries are answered; another client's transfer runs.
            self.assertEqual(tcp_query(s, build_query("www." + ORIGIN, "A", qid=23)).an, 1)
            s.close()
            other = tcp_from("127.0.0.9", g.port, timeout=10)
            m = tcp_query(other, build_query(ORIGIN, "AXFR", qid=24))
            self.assertEqual((m.rcode, m.answer[0][3]), ("NOERROR", "SOA"))
            other.close()
            self.assertEqual(metric(self.control, "gslbd_client_limit_refused_total", 'what="axfr"'), 1)
            # The stuck client goes away: its slot is free again.
            stuck.close()
            deadline = time.monotonic() + 5
            while True:
                s = tcp_from("127.0.0.8", g.port, timeout=10)
                m = tcp_query(s, build_query(ORIGIN, "AXFR", qid=25))
                s.close()
                if m.rcode == "NOERROR" or time.monotonic() > deadline:
                    break
                time.sleep(0.1)
            self.assertEqual(m.rcode, "NOERROR", g.stderr())


class ExtendedErrors(unittest.TestCase):
    """RFC 8914 Extended DNS Errors as dig and kdig print them: REFUSED outside our zones (20), an AXFR the
    ACL refuses (18), NOTAUTH for a TSIG that fails (0, with the TSIG error), only with EDNS."""

    def test_dig_and_kdig_show_the_ede_of_each_error(self):
        secret = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
        wrong = "ZmVkY2JhOTg3NjU0MzIxMGZlZGNiYTk4NzY1NDMyMTA="
        g = Gslbd(wait_zone=ORIGIN, files={"zone.db": ZONE,
                         "xfr.key": f'key "xfr" {{\n\talgorithm hmac-sha256;\n\tsecret "{secret}";\n}};\n'})
        g.raw_config = (f'[server]\nlisten = ["127.0.0.1:{g.port}"]\n'
                        'axfr_allow = [{ address = "192.0.2.0/24", key = "xfr" }]\n\n'
                        '[key.xfr]\nalgorithm = "hmac-sha256"\nsecret_file = "xfr.key"\n\n'
                        f'[[zone]]\nname = "{ORIGIN}"\nfile = "zone.db"\n')
        with g:
            for tool, edns in ((g.dig, []), (g.kdig, ["+edns"])):
                r = tool("www.example.net.", "A", *edns)
                self.assertEqual((r.rcode, r.ede), ("REFUSED", [(20, "")]), r.text)
                self.assertIn("EDE: 20 (Not Authoritative)", r.text)
                # Without EDNS there is no OPT record to carry it.
                r = tool("www.example.net.", "A", "+noedns")
                self.assertEqual((r.rcode, r.ede), ("REFUSED", []), r.text)
            # The source is not in axfr_allow: REFUSED, Prohibited. dig and kdig print no more of a refused
            # transfer than "Transfer failed" / "REFUSED": read the reply's OPT record.
            with TcpClient(g.port) as t:
                m = t.query(build_query(ORIGIN, "AXFR", edns=True))
            self.assertEqual(m.rcode, "REFUSED")
            self.assertEqual([o for o in m.opt["options"] if o[0] == 15], [(15, b"\x00\x12")], m)
            # An identity the operator did not configure is Prohibited too (version.bind, RFC 4892).
            r = g.dig("version.bind.", "TXT", qclass="CH")
            self.assertEqual((r.rcode, r.ede), ("REFUSED", [(18, "")]), r.text)
            self.assertIn("EDE: 18 (Prohibited)", r.text)
            # A TSIG that does not verify: NOTAUTH (RFC 8945 §5.2), the error named in the EDE's text.
            r = g.dig(ORIGIN, "SOA", "-y", f"hmac-sha256:xfr:{wrong}")
            self.assertIn("NOTAUTH", r.text)
            self.assertEqual(r.ede, [(0, "TSIG BADSIG")], r.text)
            self.assertIn("EDE: 0 (Other): (TSIG BADSIG)", r.text)
            r = g.kdig(ORIGIN, "SOA", "+edns", "-y", f"hmac-sha256:nokey:{secret}")
            self.assertIn("status: BADKEY", r.text)  # kdig names the TSIG error in place of NOTAUTH
            self.assertEqual(r.ede, [(0, "TSIG BADKEY")], r.text)
            # A good one: NOERROR, no EDE.
            r = g.dig(ORIGIN, "SOA", "-y", f"hmac-sha256:xfr:{secret}")
            self.assertEqual((r.rcode, r.ede), ("NOERROR", []), r.text)


if __name__ == "__main__":
    run_tests()
