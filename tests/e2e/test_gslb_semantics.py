#!/usr/bin/env python3
"""End-to-end tests of the GSLB-semantics defects a new-user trial found, each as the user met it (gslbctl and
dig against one gslbd with a control API):

  - a drain holds through the fallback: `gslbctl drain a` when site a holds api's only AAAA answered ::1 anyway;
    now NODATA, with a warning from gslbctl drain, a NOTHING UNDRAINED line in gslbctl status, explain's
    "left out" and gslbd_hostname_fallbacks_total{fallback="drained"};
  - a topology table's `default` applies to a client of unknown location (no nets prefix, no GeoIP);
  - explain: unknown session capacity is null, FlashBack times rounded, a name with a NUL is a 400.
"""
import json
import os
import re
import socket
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Gslbd, free_port, gslbctl, run_tests, wait_for  # noqa: E402

ORIGIN = "eval.test."
TOKEN = "e2e-semantics-token-77a1"
A, B, C = "192.0.2.10", "198.51.100.10", "203.0.113.10"
GA = "192.0.2.11"  # geo's site-a address: not www's, which is down by its check
SITE = {A: "a", B: "b", C: "c"}

ZONE = f"""$ORIGIN {ORIGIN}
$TTL 300
@ IN SOA ns1 hostmaster 2024010101 3600 900 604800 120
@ IN NS ns1
ns1 IN A 192.0.2.53
api IN A {B}
api IN AAAA ::1
geo IN A {GA}
geo IN A {B}
geo IN A {C}
www IN A {A}
www IN A {B}
www IN A {C}
"""


def services(fq, pairs):
    return "".join(f'[[hostname."{fq}".service]]\naddress = "{addr}"\nsite = "{site}"\n' for addr, site in pairs)


def config(port, cport, check_port):
    return (f'[server]\nlisten = ["127.0.0.1:{port}"]\nworkers = 1\necs = true\n\n'
            f'[control]\nlisten = "127.0.0.1:{cport}"\ntoken_file = "control.token"\n\n'
            f'[[zone]]\nname = "{ORIGIN}"\nfile = "zone.db"\n\n'
            '[topology]\nnets = { "198.51.100.0/24" = "eu", "203.0.113.0/24" = "us" }\n\n'
            f'[check.dead]\ntype = "tcp"\nport = {check_port}\ninterval = 1\ntimeout = 0.3\nrise = 1\nfall = 1\n\n'
            '[site.a]\n[site.b]\n[site.c]\n'
            f'\n[hostname."api.{ORIGIN}"]\npolicy = ["health", "random"]\nfallback = "all"\n'
            + services(f"api.{ORIGIN}", [(B, "b"), ("::1", "a")])
            + f'\n[hostname."www.{ORIGIN}"]\npolicy = ["health", "random"]\nanswers = 3\nfallback = "all"\n'
            + f'[[hostname."www.{ORIGIN}".service]]\naddress = "{A}"\nsite = "a"\ncheck = "dead"\n'
               'check_address = "127.0.0.1"\n'
            + services(f"www.{ORIGIN}", [(B, "b"), (C, "c")])
            + f'\n[hostname."geo.{ORIGIN}"]\npolicy = ["health", "topology", "random"]\n'
              'topology = { eu = ["a", "c"], us = ["b", "c"], default = ["c"] }\n'
            + services(f"geo.{ORIGIN}", [(GA, "a"), (B, "b"), (C, "c")]))


class Semantics(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.cport = free_port()
        cls.g = Gslbd(files={"zone.db": ZONE, "control.token": TOKEN + "\n"}, wait_zone=ORIGIN)
        # Nothing listens on this port: www's site-a service is down by its health check.
        cls.g.raw_config = config(cls.g.port, cls.cport, free_port())
        cls.g.__enter__()
        wait_for(lambda: cls.ctl("status").returncode == 0, 5, "the control API answers")

    @classmethod
    def tearDownClass(cls):
        cls.g.__exit__(None, None, None)

    @classmethod
    def ctl(cls, *args):
        return gslbctl(*args, "-c", cls.g.config_path)

    def setUp(self):
        for s in ("a", "b", "c"):
            self.assertEqual(self.ctl("enable", s).returncode, 0)

    def addrs(self, name, qtype="A", *opts):
        r = self.g.dig(f"{name}.{ORIGIN}", qtype, *opts)
        self.assertEqual(r.rcode, "NOERROR", r.text)
        return r, {rr.rdata for rr in r.answer if rr.rtype == qtype}

    def fallbacks(self, host, kind):
        p = subprocess.run(["curl", "-sS", "-m", "5", f"http://127.0.0.1:{self.cport}/metrics"],
                           stdout=subprocess.PIPE, text=True, timeout=10)
        m = re.search(r'^gslbd_hostname_fallbacks_total\{hostname="%s",fallback="%s"\} (\S+)$'
                      % (re.escape(host + "." + ORIGIN), kind), p.stdout, re.M)
        self.assertIsNotNone(m, p.stdout)
        return float(m.group(1))

    def test_drain_of_the_only_aaaa_site_holds(self):
        self.assertEqual(self.addrs("api", "AAAA")[1], {"::1"})
        p = self.ctl("drain", "a")
        self.assertEqual(p.returncode, 0, p.stdout)
        self.assertIn(f"warning: api.{ORIGIN} AAAA: every candidate is drained now: answered NODATA", p.stdout)
        self.assertNotIn(f"api.{ORIGIN} A:", p.stdout)  # b still answers A
        before = self.fallbacks("api", "drained")
        r, got = self.addrs("api", "AAAA")
        self.assertEqual(got, set(), r.text)
        self.assertEqual([rr.rtype for rr in r.authority], ["SOA"], r.text)
        self.assertEqual(self.addrs("api", "A")[1], {B})
        self.assertEqual(self.fallbacks("api", "drained"), before + 1)
        st = self.ctl("status")
        self.assertIn(f"NOTHING UNDRAINED (NODATA or the fallback address): api.{ORIGIN} AAAA", st.stdout)
        ex = self.ctl("explain", f"api.{ORIGIN}", "--type", "AAAA")
        self.assertEqual(ex.returncode, 0, ex.stdout)
        self.assertIn("left out a/::1: site drained", ex.stdout)
        self.assertIn("every candidate is drained", ex.stdout)
        # explain says what dig got: NODATA, the SOA in authority at its negative TTL (RFC 2308 §3)
        self.assertRegex(ex.stdout, r"answer\s+NOERROR NODATA, SOA %s ttl %d in authority"
                         % (re.escape(ORIGIN), r.authority[0].ttl))
        self.assertEqual(self.ctl("enable", "a").returncode, 0)
        self.assertEqual(self.addrs("api", "AAAA")[1], {"::1"})
        self.assertNotIn("NOTHING UNDRAINED", self.ctl("status").stdout)

    def test_site_down_and_the_others_drained_answers_the_down_one_only(self):
        # www's a is down by health (its check has nothing to connect to).
        wait_for(lambda: self.addrs("www")[1] == {B, C}, 10, "site a's service down by its check")
        self.assertEqual(self.ctl("drain", "b").returncode, 0)
        p = self.ctl("drain", "c")
        self.assertEqual(p.returncode, 0, p.stdout)
        self.assertNotIn(f"www.{ORIGIN}", p.stdout)  # a is down, not drained: the fallback still has it
        # fallback all: every candidate not drained, so a alone (down, but the operator did not take it out).
        self.assertEqual(self.addrs("www")[1], {A})
        p = self.ctl("drain", "a")
        self.assertIn(f"warning: www.{ORIGIN} A: every candidate is drained now", p.stdout)
        r, got = self.addrs("www")
        self.assertEqual(got, set(), r.text)

    def test_topology_default_for_a_client_nobody_placed(self):
        for _ in range(10):
            self.assertEqual(self.addrs("geo", "A", "+subnet=198.51.100.0/24")[1], {GA})  # eu -> a
            self.assertEqual(self.addrs("geo", "A", "+subnet=203.0.113.0/24")[1], {B})   # us -> b
            # The trial: 192.0.2.0/24 is in no net; `default` (site c) answers, never b.
            r, got = self.addrs("geo", "A", "+subnet=192.0.2.0/24")
            self.assertEqual(got, {C}, r.text)
            self.assertEqual(self.addrs("geo", "A", "+subnet=0.0.0.0/0")[1], {C})
        # The scope is the span over which the client matches no net: 192.0.0.0/2 holds neither /24 (a /0: 0).
        r, _ = self.addrs("geo", "A", "+subnet=192.0.2.0/24")
        self.assertIn("CLIENT-SUBNET: 192.0.2.0/24/", r.text)
        self.assertNotIn("/24/0", r.text)
        r, _ = self.addrs("geo", "A", "+subnet=0.0.0.0/0")
        self.assertIn("CLIENT-SUBNET: 0.0.0.0/0/0", r.text)
        ex = self.ctl("explain", f"geo.{ORIGIN}", "--client", "127.0.0.1", "--ecs", "192.0.2.0/24")
        self.assertIn("the client's location is unknown: the default list", ex.stdout)
        self.assertNotIn("all pass", ex.stdout)

    def test_explain_unknown_capacity_and_bad_names(self):
        def get(query):
            p = subprocess.run(["curl", "-sS", "-m", "5", "-w", "\n%{http_code}",
                                f"http://127.0.0.1:{self.cport}/v1/explain?{query}"],
                               stdout=subprocess.PIPE, text=True, timeout=10)
            body, _, code = p.stdout.rpartition("\n")
            return int(code), body
        code, body = get("name=a%00b.eval.test.")
        self.assertEqual(code, 400, body)
        self.assertIn("a NUL octet (%00)", json.loads(body)["error"])
        code, body = get("name=a%20b.eval.test.")
        self.assertEqual(code, 400, body)
        code, body = get(f"name=api.{ORIGIN}&type=A")
        self.assertEqual(code, 200, body)


class FallbackLog(unittest.TestCase):
    """A hostname answered by its fallback (every service down) left no log line, only a counter moved. gslbd now
    logs once when it enters the fallback and once when its services answer again, from the control thread."""

    def test_enter_and_leave_are_logged_once(self):
        check_port = free_port()
        zone = ZONE.split("api IN A")[0] + f"solo IN A {A}\n"
        g = Gslbd(files={"zone.db": zone}, wait_zone=ORIGIN)
        g.raw_config = (f'[server]\nlisten = ["127.0.0.1:{g.port}"]\nworkers = 1\n\n'
                        f'[[zone]]\nname = "{ORIGIN}"\nfile = "zone.db"\n\n'
                        f'[check.tcp]\ntype = "tcp"\nport = {check_port}\ninterval = 0.5\ntimeout = 0.3\n'
                        'rise = 1\nfall = 1\n\n[site.a]\n\n'
                        f'[hostname."solo.{ORIGIN}"]\npolicy = ["health", "random"]\nfallback = "all"\n'
                        f'[[hostname."solo.{ORIGIN}".service]]\naddress = "{A}"\nsite = "a"\ncheck = "tcp"\n'
                        'check_address = "127.0.0.1"\n')
        entered = f'hostname solo.{ORIGIN}: answered by its fallback "all": no service passed the policy'
        left = f"hostname solo.{ORIGIN}: answered by its services again"
        listener = None
        try:
            g.start()
            wait_for(lambda: "down" in g.stderr(), 10, "the service's check fails")
            for _ in range(20):  # many queries: one line
                self.assertEqual([r.rdata for r in g.dig(f"solo.{ORIGIN}").answer], [A])
            wait_for(lambda: entered in g.stderr(), 10, "the fallback is logged")
            listener = socket.socket()
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind(("127.0.0.1", check_port))
            listener.listen(16)
            wait_for(lambda: re.search(r"192\.0\.2\.10.* up", g.stderr()), 10, "the service's check passes")
            # The return is logged for a second in which every answer came from the services, and the first
            # queries after the check's "up" line can still meet the old state (it reaches the answer path a
            # moment later): so query until it is logged, as a resolver would go on asking.
            def answered_again():
                g.dig(f"solo.{ORIGIN}")
                return left in g.stderr()

            wait_for(answered_again, 10, "the return is logged")
            log = g.stderr()
            self.assertEqual(log.count(entered), 1, log)
            self.assertEqual(log.count(left), 1, log)
            self.assertRegex(log, r"warning: hostname solo\.eval\.test\.: answered by its fallback")
            g.stop()
        finally:
            if listener:
                listener.close()
            g.close()


if __name__ == "__main__":
    run_tests()
