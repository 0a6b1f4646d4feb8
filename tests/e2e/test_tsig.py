#!/usr/bin/env python3
"""TSIG (RFC 8945, issue 11): real Knot and NSD secondaries transfer a zone whose axfr_allow requires a key,
are told of a new serial by signed NOTIFYs, and serve a record added by `gslbctl zone add` within seconds of
the reload. An unsigned or wrongly keyed transfer is refused, and the log says from where and why."""
import base64
import os
import re
import shutil
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import XFR_ZONE, Gslbd, Knot, Nsd, free_port, run_tests, secondaries_follow, soa_serial  # noqa: E402

ORIGIN = "gslb.example.com."
ZONE = XFR_ZONE  # harness.py: shared with the other transfer test
SECRET = base64.b64encode(bytes(range(1, 33))).decode()
WRONG = base64.b64encode(bytes(range(2, 34))).decode()


def serial(port):
    return soa_serial(port, ORIGIN)


def config(port, knot_port, nsd_port):
    # [server] admits 127.0.0.1 unsigned; the zone's own list replaces it and requires the key.
    return (f'[server]\nlisten = ["127.0.0.1:{port}"]\naxfr_allow = ["127.0.0.1"]\n\n'
            f'[key.xfr]\nalgorithm = "hmac-sha256"\nsecret_file = "xfr.key"\n\n'
            f'[[zone]]\nname = "{ORIGIN}"\nfile = "zone.db"\n'
            f'axfr_allow = [{{ address = "127.0.0.1", key = "xfr" }}]\n'
            f'notify = [{{ address = "127.0.0.1:{knot_port}", key = "xfr" }}, '
            f'{{ address = "127.0.0.1:{nsd_port}", key = "xfr" }}]\n')


def axfr(port, *opts):
    p = subprocess.run(["kdig", "-p", str(port), "@127.0.0.1", ORIGIN, "AXFR", "+time=2", *opts],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=15)
    return p.stdout


@unittest.skipUnless(shutil.which("knotd") and shutil.which("nsd") and shutil.which("kdig"),
                     "needs knotd, nsd and kdig")
class Tsig(unittest.TestCase):
    def test_signed_secondaries_follow_a_reload(self):
        g = Gslbd(files={"zone.db": ZONE, "xfr.key": f'key "xfr" {{\n\talgorithm hmac-sha256;\n'
                                                      f'\tsecret "{SECRET}";\n}};\n'}, wait_zone=ORIGIN)
        knot = Knot(ORIGIN, g.port, key=("xfr", "hmac-sha256", SECRET))
        nsd = Nsd({ORIGIN: None}, port=free_port(),
                  extra_conf=["key:", "    name: xfr", "    algorithm: hmac-sha256", f'    secret: "{SECRET}"'],
                  extra_zone_conf={ORIGIN: [f"request-xfr: AXFR 127.0.0.1@{g.port} xfr",
                                            "allow-notify: 127.0.0.1 xfr"]})
        g.raw_config = config(g.port, knot.port, nsd.port)
        with g, knot, nsd:
            knot.wait_zone(15)
            for sec in (knot, nsd):
                self.assertEqual(serial(sec.port), 2024010101)
            deadline = time.monotonic() + 20
            while len(re.findall(r"serial 2024010101 to .*acknowledged.*\(TSIG key xfr\)", g.stderr())) < 2:
                self.assertLess(time.monotonic(), deadline, g.stderr() + knot.stderr() + nsd.stderr())
                time.sleep(0.1)

            # Refused: unsigned (though [server] axfr_allow admits the address), and signed with a wrong secret.
            out = axfr(g.port)
            self.assertNotIn("IN\tSOA", out)
            self.assertIn("REFUSED", out)
            out = axfr(g.port, "-y", f"hmac-sha256:xfr:{WRONG}")
            self.assertIn("BADSIG", out)
            out = axfr(g.port, "-y", f"hmac-sha256:nokey:{SECRET}")
            self.assertIn("BADKEY", out)
            out = axfr(g.port, "-y", f"hmac-sha256:xfr:{SECRET}")
            self.assertRegex(out, r"Received \d+ B \(1 messages, 5 records\)")
            log = g.stderr()
            self.assertRegex(log, r"AXFR of gslb\.example\.com\. from 127\.0\.0\.1:\d+ refused: unsigned; "
                                  r"axfr_allow requires TSIG key xfr")
            self.assertRegex(log, r"query from 127\.0\.0\.1:\d+ with TSIG key xfr\.: BADSIG")
            self.assertRegex(log, r"query from 127\.0\.0\.1:\d+ with TSIG key nokey\.: BADKEY")

            secondaries_follow(self, g, {"knot": knot, "nsd": nsd}, ORIGIN, "TSIG")
            # The secondaries' own transfers were never refused: the one refusal is kdig's unsigned AXFR.
            self.assertEqual(len(re.findall(r"refused:", g.stderr())), 1, g.stderr())
            g.stop()


if __name__ == "__main__":
    run_tests()
