#!/usr/bin/env python3
"""A real ECS-aware resolver in front of gslbd (doc/design.md "Client-aware answers"): Unbound with its subnetcache module
(module-config "subnetcache validator iterator", send-client-subnet) and a stub zone pointing at gslbd on
loopback. Answers differ by client subnet, and Unbound caches each for the scope gslbd returned: a second
client in the same /24 is answered from the cache, a client in another /24 is not.
"""
import json
import os
import shutil
import sys
import time
import unittest
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import unbound_server_conf, Gslbd, _Daemon, build_query, decode_msg, dig, free_port, run_tests, udp_query  # noqa: E402
from test_client import E, W, ORIGIN, ZONE, make_mmdb, topo_config  # noqa: E402


class Unbound(_Daemon):
    name = "unbound"

    def __init__(self, upstream_port):
        super().__init__()
        self.port = free_port()
        self.upstream = upstream_port

    def start(self):
        conf = unbound_server_conf(self.port, self.dir) + f"""    module-config: "subnetcache validator iterator"
    send-client-subnet: 127.0.0.1
    max-client-subnet-ipv4: 24
    max-client-subnet-ipv6: 56
    domain-insecure: "{ORIGIN}"
stub-zone:
    name: "{ORIGIN}"
    stub-addr: 127.0.0.1@{self.upstream}
"""
        self.write("unbound.conf", conf)
        self._spawn(["unbound", "-d", "-c", self.path("unbound.conf")])
        # A resolver recurses only when asked (RD=1); the harness's wait_soa asks without.
        q = build_query(ORIGIN, "SOA", rd=1)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            r = udp_query(self.port, q, timeout=0.5)
            if r and decode_msg(r).rcode == "NOERROR":
                return
            time.sleep(0.1)
        raise AssertionError("unbound did not resolve the SOA through gslbd:\n" + self.stderr())


@unittest.skipUnless(shutil.which("unbound"), "unbound is not installed (tools/install-deps)")
class Resolver(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.cport = free_port()
        cls.g = Gslbd(files={"zone.db": ZONE, "control.token": "client-e2e-token\n", "nets.txt": ""},
                      wait_zone=ORIGIN)
        make_mmdb(cls.g.path("geo.mmdb"))
        cls.g.raw_config = topo_config(cls.g.port, cls.cport)
        cls.g.__enter__()
        cls.u = Unbound(cls.g.port)
        cls.u.__enter__()

    @classmethod
    def tearDownClass(cls):
        cls.u.__exit__(None, None, None)
        cls.g.__exit__(None, None, None)

    def answered(self):
        """Answers gslbd has given for the topo hostname, over all its services."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.cport}/v1/status", timeout=5) as r:
            st = json.load(r)
        return sum(s["answers"] for s in st["services"] if ("topo." + ORIGIN) in s["hostnames"])

    def ask(self, sub):
        r = dig(self.u.port, "topo." + ORIGIN, "A", "+rec", "+subnet=" + sub, "+timeout=3")
        self.assertEqual(r.rcode, "NOERROR", r.text)
        return {x.rdata for x in r.rrs("answer", "A")}

    def test_answers_by_subnet_cached_per_scope(self):
        self.assertEqual(self.ask("198.51.100.0/24"), {W})   # EU client: west
        self.assertEqual(self.ask("203.0.113.0/24"), {E})    # US client: default list, east
        upstream = self.answered()
        self.assertGreaterEqual(upstream, 2)
        # Unbound has cached each answer for its /24 scope: clients inside those /24s come from the cache.
        for _ in range(3):
            self.assertEqual(self.ask("198.51.100.77/32"), {W})
            self.assertEqual(self.ask("203.0.113.9/32"), {E})
        self.assertEqual(self.answered(), upstream, "Unbound should answer these from its per-scope cache")
        # A client in another network is a cache miss: Unbound asks gslbd again, with that client's prefix.
        self.assertEqual(self.ask("2001:db8:100:1::/56"), {W})
        self.assertEqual(self.answered(), upstream + 1)


if __name__ == "__main__":
    run_tests()
