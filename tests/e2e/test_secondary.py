#!/usr/bin/env python3
"""A real secondary (knotd; NSD when knotd cannot run) transfers the zone from gslbd by AXFR and then answers
exactly like gslbd."""
import os
import shutil
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (DATA, DaemonError, Gslbd, Knot, Nsd, diff_text, kdig, dig, response_key,  # noqa: E402
                     run_tests, strip_optional_apex_ns)

ORIGIN = "gslb.example.com."
ZONE_TEXT = open(os.path.join(DATA, "diff.zone")).read()

QUERIES = [
    ("@", "SOA"), ("@", "NS"), ("@", "MX"), ("www", "A"), ("www", "AAAA"), ("www", "TXT"), ("nothere", "A"),
    ("ent", "A"), ("a.b.c.ent", "A"), ("x.w", "A"), ("x.sub.w", "A"), ("x.wc", "A"), ("c1", "A"),
    ("loop1", "A"), ("dangling", "A"), ("del", "A"), ("del", "DS"), ("nods", "DS"), ("mx", "MX"),
    ("_sip._tcp", "SRV"), ("unk", "TYPE65534"), ("a\\.b", "A"), ("big", "A"), ("q.d.went", "A"),
]


def fqdn(n):
    return ORIGIN if n == "@" else n + "." + ORIGIN


def comparable(r):
    return strip_optional_apex_ns(response_key(r), r, ORIGIN)


class Secondary(unittest.TestCase):
    def run_secondary(self, g, make_secondary):
        sec = make_secondary(g.port)
        with sec:
            if isinstance(sec, Knot):
                sec.wait_zone(15)
            n = 0
            for name, qtype in QUERIES:
                for tool, opts in ((kdig, ["+tcp"]), (dig, ["+tcp"])):
                    a = tool(g.port, fqdn(name), qtype, *opts)
                    b = tool(sec.port, fqdn(name), qtype, *opts)
                    ka, kb = comparable(a), comparable(b)
                    self.assertEqual(ka, kb, f"{tool.__name__} {fqdn(name)} {qtype}\n"
                                             f"{diff_text(ka, kb, 'gslbd', 'secondary')}\n{b.text}")
                    n += 1
            self.assertGreaterEqual(n, 20)

    def test_knot_secondary(self):
        if not shutil.which("knotd"):
            self.skipTest("knotd not installed")
        with Gslbd(zones={ORIGIN: ZONE_TEXT}, server={"axfr_allow": ["127.0.0.1"]}) as g:
            try:
                self.run_secondary(g, lambda p: Knot(ORIGIN, p))
            except DaemonError as e:
                if "exited" in str(e) and "transfer" not in str(e).lower() and "AXFR" not in str(e):
                    # knotd cannot run here at all: fall back to NSD as the secondary
                    self.run_secondary(g, self.nsd_secondary)
                else:
                    raise
            g.stop()

    def test_knot_secondary_large_zone(self):
        # > 64 KiB: the AXFR spans several messages, each must be well-formed for a strict secondary
        if not shutil.which("knotd"):
            self.skipTest("knotd not installed")
        extra = "".join(f"h{i} IN TXT \"{'x' * 40} {i}\"\n" for i in range(3000))
        zone = ("$ORIGIN big.test.\n$TTL 300\n@ IN SOA ns1 admin 5 3600 900 604800 60\n@ IN NS ns1\n"
                "ns1 IN A 192.0.2.1\n" + extra)
        with Gslbd(zones={"big.test.": zone}) as g:
            with Knot("big.test.", g.port) as k:
                try:
                    k.wait_zone(15)
                except DaemonError as e:
                    self.fail(f"knotd could not transfer big.test. from gslbd: {e}")
                for name in ("h0.big.test.", "h1500.big.test.", "h2999.big.test."):
                    a, b = kdig(g.port, name, "TXT"), kdig(k.port, name, "TXT")
                    self.assertEqual(a.answer, b.answer, b.text)
            g.stop()

    @staticmethod
    def nsd_secondary(primary_port):
        return Nsd({ORIGIN: None}, extra_zone_conf={ORIGIN: [f"request-xfr: AXFR 127.0.0.1@{primary_port} NOKEY",
                                                             "allow-notify: 127.0.0.1 NOKEY"]})

    def test_nsd_secondary(self):
        with Gslbd(zones={ORIGIN: ZONE_TEXT}, server={"axfr_allow": ["127.0.0.1"]}) as g:
            self.run_secondary(g, self.nsd_secondary)
            g.stop()


if __name__ == "__main__":
    run_tests()
