#!/usr/bin/env python3
"""TSIG (RFC 8945): real Knot and NSD secondaries transfer a zone whose axfr_allow requires a key,
are told of a new serial by signed NOTIFYs, and serve a record added by `gslbctl zone add` within seconds of
the reload. An unsigned or wrongly keyed transfer is refused, and the log says from where and why. A query whose
MAC is truncated below the key's policy gets BADTRUNC (RFC 8945 §5.2.4), signed, on the wire (no client
truncates, so the test signs it itself)."""
import base64
import hmac
import os
import re
import shutil
import struct
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (XFR_ZONE, Gslbd, Knot, Nsd, build_query, encode_name, free_port, run_tests,  # noqa: E402
                     secondaries_follow, soa_serial, udp_query)

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
                  # doc/operating.md's: no AXFR in request-xfr, so NSD asks for IXFR once it has the zone
                  extra_zone_conf={ORIGIN: [f"request-xfr: 127.0.0.1@{g.port} xfr",
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
            # Both followed the change by a signed IXFR, not a whole transfer.
            ixfrs = re.findall(r"IXFR of gslb\.example\.com\. to 127\.0\.0\.1:\d+: serial \d+ -> \d+", g.stderr())
            self.assertGreaterEqual(len(ixfrs), 2, g.stderr())
            # The secondaries' own transfers were never refused: the one refusal is kdig's unsigned AXFR.
            self.assertEqual(len(re.findall(r"refused:", g.stderr())), 1, g.stderr())
            g.stop()


def signed_query(key, secret, mac_len, now):
    """A SOA query signed with hmac-sha256 (RFC 8945 §4.3.3: the message, then the TSIG variables), its MAC
    cut to its first `mac_len` octets (a truncation, §5.2.2.1 4). Returns (wire, the MAC as sent)."""
    q = build_query(ORIGIN, "SOA", qid=0x5151)
    name, alg = encode_name(key), encode_name("hmac-sha256.")
    times = struct.pack("!HIH", now >> 32, now & 0xFFFFFFFF, 300)  # Time Signed (48 bits), Fudge
    variables = name + struct.pack("!HI", 255, 0) + alg + times + struct.pack("!HH", 0, 0)
    mac = hmac.new(base64.b64decode(secret), q + variables, "sha256").digest()[:mac_len]
    rdata = alg + times + struct.pack("!H", mac_len) + mac + struct.pack("!HHH", 0x5151, 0, 0)
    rr = name + struct.pack("!HHIH", 250, 255, 0, len(rdata)) + rdata
    return q[:10] + struct.pack("!H", 1) + q[12:] + rr, mac


def tsig_tail(reply):
    """(MAC size, original id, error, other length) of the reply's TSIG RR, the last thing in it."""
    other = struct.unpack("!H", reply[-2:])[0]
    end = len(reply) - 6 - other
    orig, err = struct.unpack("!HH", reply[end:end + 4])
    for size in (0, 32):  # unsigned, or signed with the full hmac-sha256 MAC
        if struct.unpack("!H", reply[end - size - 2:end - size])[0] == size:
            return size, orig, err, other
    raise AssertionError(f"no TSIG MAC size found in {reply.hex()}")


class Truncation(unittest.TestCase):
    def test_a_mac_truncated_below_the_policy_is_badtrunc(self):
        g = Gslbd(files={"zone.db": ZONE, "xfr.key": SECRET + "\n"}, wait_zone=ORIGIN)
        g.raw_config = (f'[server]\nlisten = ["127.0.0.1:{g.port}"]\n\n'
                        f'[key.xfr]\nalgorithm = "hmac-sha256"\nsecret_file = "xfr.key"\n\n'
                        f'[key.short]\nalgorithm = "hmac-sha256"\nsecret_file = "xfr.key"\nmin_mac_size = 16\n\n'
                        f'[[zone]]\nname = "{ORIGIN}"\nfile = "zone.db"\n')
        with g:
            now = int(time.time())
            # The full MAC: answered, signed.
            wire, _ = signed_query("xfr.", SECRET, 32, now)
            r = udp_query(g.port, wire)
            self.assertEqual(r[3] & 0x0F, 0)
            self.assertEqual(tsig_tail(r)[:3], (32, 0x5151, 0))
            # Truncated to 16 octets (allowed by RFC 8945, below this key's policy, the full hash by default):
            # NOTAUTH with TSIG error BADTRUNC, signed with the full MAC since the truncated one verified.
            wire, _ = signed_query("xfr.", SECRET, 16, now)
            r = udp_query(g.port, wire)
            self.assertEqual(r[3] & 0x0F, 9, r.hex())  # NOTAUTH
            self.assertEqual(struct.unpack("!H", r[6:8])[0], 0)  # no answer
            self.assertEqual(tsig_tail(r), (32, 0x5151, 22, 0))
            # A key whose min_mac_size is 16 takes it.
            wire, _ = signed_query("short.", SECRET, 16, now)
            r = udp_query(g.port, wire)
            self.assertEqual(r[3] & 0x0F, 0, r.hex())
            self.assertEqual(tsig_tail(r)[:3], (32, 0x5151, 0))
            # Below max(10, half the hash) it is a format error, not BADTRUNC (§5.2.2.1).
            wire, _ = signed_query("short.", SECRET, 15, now)
            self.assertEqual(udp_query(g.port, wire)[3] & 0x0F, 1)
            deadline = time.monotonic() + 3
            while "BADTRUNC" not in g.stderr() and time.monotonic() < deadline:
                time.sleep(0.05)
            self.assertIn("TSIG key xfr.: BADTRUNC (MAC truncated to 16 octets, below the key's min_mac_size)",
                          g.stderr())


if __name__ == "__main__":
    run_tests()
