#!/usr/bin/env python3
"""NOTIFY (RFC 1996): after `gslbctl zone add` and a reload, real Knot and NSD secondaries have the
new serial within seconds, without a refresh command and long before their SOA refresh timer (3600 s)."""
import os
import re
import shutil
import socket
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (XFR_ZONE, Gslbd, Knot, Nsd, decode_msg, free_port, run_tests,  # noqa: E402
                     secondaries_follow, soa_serial)

ORIGIN = "gslb.example.com."
ZONE = XFR_ZONE  # harness.py: shared with the other transfer test


def serial(port):
    return soa_serial(port, ORIGIN)


def config(port, targets):
    notify = ", ".join(f'"127.0.0.1:{p}"' for p in targets)
    return (f'[server]\nlisten = ["127.0.0.1:{port}"]\naxfr_allow = ["127.0.0.1"]\n\n'
            f'[[zone]]\nname = "{ORIGIN}"\nfile = "zone.db"\nnotify = [{notify}]\n')


@unittest.skipUnless(shutil.which("knotd") and shutil.which("nsd"), "needs knotd and nsd")
class Notify(unittest.TestCase):
    def test_secondaries_follow_a_reload_within_seconds(self):
        g = Gslbd(files={"zone.db": ZONE}, wait_zone=ORIGIN)
        knot = Knot(ORIGIN, g.port)
        nsd = Nsd({ORIGIN: None}, port=free_port(), extra_zone_conf={ORIGIN: [
            f"request-xfr: AXFR 127.0.0.1@{g.port} NOKEY", "allow-notify: 127.0.0.1 NOKEY"]})
        g.raw_config = config(g.port, [knot.port, nsd.port])
        with g, knot, nsd:
            knot.wait_zone(15)
            for sec in (knot, nsd):
                self.assertEqual(serial(sec.port), 2024010101)
            # The start-up NOTIFY reached both once they were up (retried with backoff until then).
            deadline = time.monotonic() + 20
            while len(re.findall(r"notify gslb\.example\.com\. serial 2024010101 to .*acknowledged",
                                 g.stderr())) < 2:
                self.assertLess(time.monotonic(), deadline, g.stderr())
                time.sleep(0.1)

            new = secondaries_follow(self, g, {"knot": knot, "nsd": nsd}, ORIGIN, "NOTIFY")
            self.assertRegex(g.stderr(), rf"notify gslb\.example\.com\. serial {new} to 127\.0\.0\.1:{knot.port}: "
                                         r"acknowledged after 1 attempt\(s\)")
            g.stop()


class Backoff(unittest.TestCase):
    def test_unanswered_notify_is_retried_with_backoff(self):
        # A secondary that ignores the first two NOTIFYs and acknowledges the third.
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.bind(("127.0.0.1", 0))
        sock.settimeout(10)
        g = Gslbd(files={"zone.db": ZONE}, wait_zone=ORIGIN)
        g.raw_config = config(g.port, [sock.getsockname()[1]])
        with g:
            times = []
            while len(times) < 3:
                data, peer = sock.recvfrom(512)
                times.append(time.monotonic())
                m = decode_msg(data)
                self.assertEqual(m.opcode, 4)
                self.assertTrue(m.aa)
                self.assertEqual(m.question, [(ORIGIN, 6, 1)])
                self.assertEqual(m.answer[0][3], "SOA")
            reply = bytearray(data[:12])
            reply[2] |= 0x80
            reply[3] = 0
            sock.sendto(bytes(reply), peer)
            gaps = [b - a for a, b in zip(times, times[1:])]
            self.assertAlmostEqual(gaps[0], 1.0, delta=0.4)
            self.assertAlmostEqual(gaps[1], 2.0, delta=0.5)
            deadline = time.monotonic() + 5
            while "acknowledged after 3 attempt(s)" not in g.stderr():
                self.assertLess(time.monotonic(), deadline, g.stderr())
                time.sleep(0.05)
            g.stop()
        sock.close()


if __name__ == "__main__":
    run_tests()
