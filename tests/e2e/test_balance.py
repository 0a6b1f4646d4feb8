#!/usr/bin/env python3
"""End-to-end test of the `headroom` chooser: a real gslbd, reports posted to the control API, queries sent with
dig from distinct loopback source addresses (each a resolver of its own), and /v1/explain read back.

One hostname over two sites: east with 490 of 500 session seats in use (10 free), west full (300 of 300). Its
target share is all east (west has no headroom), so every answer is east and the TTL is what is tested:
  - a light resolver (one query: the default demand, 1 session/s) brings 1 x 4 = 4 sessions over the ttl of 4 s,
    within half of east's 10 free seats: the full ttl (calm);
  - a heavy resolver (asking again before its answer expired: counted as large) would bring far more than east
    can take: ttl_min (headroom), and /v1/explain shows its demand, the committed flow of its answers, and the
    flow gone once their TTL has run out.
"""
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import control_api, run_tests, start_with_control  # noqa: E402

ORIGIN = "gslb.example.com."
TOKEN = "e2e-balance-token-7d1e"
E, W = "192.0.2.10", "198.51.100.10"
LIGHT, HEAVY, NEW = "127.0.0.61", "127.0.0.62", "127.0.0.63"

ZONE = f"""$ORIGIN {ORIGIN}
$TTL 300
@ IN SOA ns1 hostmaster 2024010101 3600 900 604800 120
@ IN NS ns1
ns1 IN A 192.0.2.53
bal IN A {E}
bal IN A {W}
"""


def config(port, cport):
    return (f'[server]\nlisten = ["127.0.0.1:{port}"]\nworkers = 2\n\n'
            f'[control]\nlisten = "127.0.0.1:{cport}"\ntoken_file = "control.token"\n\n'
            f'[[zone]]\nname = "{ORIGIN}"\nfile = "zone.db"\n\n'
            '[site.east]\n[site.west]\n'
            f'[hostname."bal.{ORIGIN}"]\npolicy = ["health", "headroom"]\nttl = 4\nttl_min = 1\nmax_age = 600\n'
            f'[[hostname."bal.{ORIGIN}".service]]\naddress = "{E}"\nsite = "east"\n'
            f'[[hostname."bal.{ORIGIN}".service]]\naddress = "{W}"\nsite = "west"\n')


class Balance(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        start_with_control(cls, {"zone.db": ZONE, "control.token": TOKEN + "\n"}, ORIGIN, config, TOKEN)

    @classmethod
    def tearDownClass(cls):
        cls.g.__exit__(None, None, None)

    @classmethod
    def api(cls, method, path, body=None):
        return control_api(cls.base, method, path, body, TOKEN)

    def answer(self, source):
        """One query from `source`: (address, ttl)."""
        r = self.g.dig(f"bal.{ORIGIN}", "A", "-b", source)
        self.assertEqual(r.rcode, "NOERROR", r.text)
        rrs = [rr for rr in r.answer if rr.rtype == "A"]
        self.assertEqual(len(rrs), 1, r.text)
        return rrs[0].rdata, rrs[0].ttl

    def explain(self, client):
        code, j = self.api("GET", f"/v1/explain?name=bal.{ORIGIN}&type=A&client={client}")
        self.assertEqual(code, 200, j)
        return j

    def test_heavy_resolver_on_a_nearly_full_site_gets_a_short_ttl_and_its_flow_is_counted(self):
        self.assertEqual(self.api("POST", "/v1/sites/east/report", {"sessions_used": 490, "sessions_max": 500})[0],
                         200)
        self.assertEqual(self.api("POST", "/v1/sites/west/report", {"sessions_used": 300, "sessions_max": 300})[0],
                         200)
        # Light: nothing measured yet, the default demand of 1/s: 4 sessions over 4 s, within 10 / 2.
        self.assertEqual(self.answer(LIGHT), (E, 4))
        j = self.explain(LIGHT)
        self.assertEqual(j["chooser"]["stage"], "headroom")
        self.assertEqual(j["answer"]["ttl"], 4)
        self.assertEqual(j["answer"]["ttl_reason"], "calm")
        east, west = j["chooser"]["values"]
        self.assertEqual(east["value"]["basis"], "sessions")
        self.assertAlmostEqual(east["value"]["utilisation"], 0.98)
        self.assertAlmostEqual(west["value"]["headroom"], 0.0)
        self.assertEqual(west["value"]["probability"], 0.0)
        self.assertEqual(east["value"]["probability"], 1.0)
        # Heavy: its first query is new to it (the default demand, the full ttl); asking again long before that
        # answer expired marks it as large: ttl_min, because east's free seats cannot take its batch.
        self.assertEqual(self.answer(HEAVY), (E, 4))
        for _ in range(3):
            self.assertEqual(self.answer(HEAVY), (E, 1))
        j = self.explain(HEAVY)
        bar = j["chooser"]["bar"]
        self.assertEqual(bar["demand_source"], "measured")
        self.assertGreater(bar["resolver_demand"], 100)
        self.assertEqual(j["answer"]["ttl"], 1)
        self.assertEqual(j["answer"]["ttl_reason"], "headroom")
        # The committed flow: the heavy resolver's answers (each its demand) are still cached.
        self.assertGreater(bar["committed_flow"], 100)
        self.assertEqual(j["chooser"]["values"][0]["value"]["flow"], bar["committed_flow"])
        # A resolver never seen: the hostname's prior (from the first measurements), not a guess of zero.
        self.assertEqual(self.explain(NEW)["chooser"]["bar"]["demand_source"], "prior")
        # Once the heavy answers' TTL (1 s, plus one bucket of 4 / 6 s) has run out, their flow is gone; the
        # light resolver's 1/s answer expires at 4 s after it was given.
        time.sleep(2.0)
        self.assertLess(self.explain(HEAVY)["chooser"]["bar"]["committed_flow"], 10)


if __name__ == "__main__":
    run_tests()
