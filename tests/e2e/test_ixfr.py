#!/usr/bin/env python3
"""IXFR out (RFC 1995) and the catalog zone producer (RFC 9432), with real secondaries: Knot 3.2 and NSD
follow gslbd by IXFR after `gslbctl zone add` and a reload (Knot's own log says IXFR, and how many bytes
each transfer took: printed), across a restart (the journal in state_dir), and a Knot that interprets
gslbd's catalog adds and drops member zones on gslbd's reload alone."""
import os
import re
import shutil
import struct
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (Gslbd, Knot, Nsd, build_query, decode_msg, free_port, gslbctl, kdig, run_tests,  # noqa: E402
                     secondaries_follow, soa_serial, udp_query)

ORIGIN = "gslb.example.com."
RECORDS = 10000


def big_zone(serial=2024010101):
    lines = [f"$ORIGIN {ORIGIN}", "$TTL 300", f"@ IN SOA ns1 admin {serial} 3600 900 604800 60", "@ IN NS ns1",
             "ns1 IN A 192.0.2.1"]
    lines += [f"h{i} IN A 10.{i >> 16 & 255}.{i >> 8 & 255}.{i & 255}" for i in range(RECORDS - 3)]
    return "\n".join(lines) + "\n"


def config(port, state, notify, extra_zones="", catalog=""):
    n = ", ".join(f'"127.0.0.1:{p}"' for p in notify)
    return (f'[server]\nlisten = ["127.0.0.1:{port}"]\naxfr_allow = ["127.0.0.1"]\nstate_dir = "{state}"\n\n'
            f'[[zone]]\nname = "{ORIGIN}"\nfile = "zone.db"\nnotify = [{n}]\n' + extra_zones + catalog)


TRANSFER = re.compile(r"\[(\S+)\] (AXFR|IXFR), incoming, remote [^,]+, finished, [\d.]+ seconds, "
                      r"(\d+) messages, (\d+) bytes")


def knot_transfers(knot, zone=ORIGIN):
    """(kind, bytes) of every transfer Knot's log says it finished for `zone`."""
    return [(m.group(2), int(m.group(4))) for m in TRANSFER.finditer(knot.stderr()) if m.group(1) == zone]


def wait(pred, seconds, what):
    deadline = time.monotonic() + seconds
    while not pred():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out: {what}")
        time.sleep(0.05)


def received_bytes(port, *args):
    """What kdig says it received for a transfer (";; Received N B")."""
    p = subprocess.run(["kdig", "-p", str(port), "@127.0.0.1", *args], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=30)
    m = re.search(r";; Received (\d+) B", p.stdout)
    assert m, p.stdout[-2000:]
    return int(m.group(1)), p.stdout


def ixfr_query(zone, serial, qid=0x5151):
    """An IXFR request (RFC 1995 §3): the question, and the client's SOA in the authority section."""
    q = bytearray(build_query(zone, "IXFR", qid=qid))
    q[8:10] = struct.pack("!H", 1)
    rdata = b"\x00\x00" + struct.pack("!IIIII", serial, 0, 0, 0, 0)
    q += b"\xc0\x0c" + struct.pack("!HHIH", 6, 1, 0, len(rdata)) + rdata
    return bytes(q)


@unittest.skipUnless(shutil.which("knotd") and shutil.which("nsd") and shutil.which("kdig"),
                     "needs knotd, nsd and kdig")
class Ixfr(unittest.TestCase):
    def test_knot_and_nsd_follow_by_ixfr(self):
        g = Gslbd(files={"zone.db": big_zone()}, wait_zone=ORIGIN)
        knot = Knot(ORIGIN, g.port)
        # No "AXFR" in request-xfr: NSD asks for IXFR (over TCP) once it has the zone.
        nsd = Nsd({ORIGIN: None}, port=free_port(), extra_zone_conf={ORIGIN: [
            f"request-xfr: 127.0.0.1@{g.port} NOKEY", "allow-notify: 127.0.0.1 NOKEY"]})
        g.raw_config = config(g.port, g.path("state"), [knot.port, nsd.port])
        os.makedirs(g.path("state"))
        with g, knot, nsd:
            knot.wait_zone(20)
            wait(lambda: soa_serial(nsd.port, ORIGIN) == 2024010101, 20, "nsd loads the zone")
            wait(lambda: knot_transfers(knot), 10, "knot logs its first transfer")
            first = knot_transfers(knot)
            self.assertEqual(first[0][0], "AXFR", knot.stderr())
            axfr_bytes = first[0][1]

            new = secondaries_follow(self, g, {"knot": knot, "nsd": nsd}, ORIGIN, "IXFR")
            wait(lambda: len(knot_transfers(knot)) >= 2, 10, "knot logs the second transfer")
            kind, ixfr_bytes = knot_transfers(knot)[1]
            self.assertEqual(kind, "IXFR", knot.stderr())
            # NSD asked for IXFR and got the difference (gslbd's line for each transfer it sends).
            self.assertRegex(g.stderr(), rf"IXFR of {re.escape(ORIGIN)} to 127\.0\.0\.1:\d+: serial 2024010101 -> "
                                         rf"{new}")
            self.assertNotIn("AXFR-style", g.stderr())
            # The same two transfers as a client sees them.
            kd_axfr, _ = received_bytes(g.port, ORIGIN, "AXFR")
            kd_ixfr, text = received_bytes(g.port, ORIGIN, f"IXFR={2024010101}")
            self.assertIn("new.gslb.example.com.", text)
            print(f"{RECORDS}-record zone, one record added: Knot's log AXFR {axfr_bytes} B, IXFR {ixfr_bytes} B "
                  f"({ixfr_bytes / axfr_bytes:.4%}); kdig AXFR {kd_axfr} B, IXFR {kd_ixfr} B")
            self.assertLess(ixfr_bytes * 100, axfr_bytes)
            self.assertLess(kd_ixfr * 100, kd_axfr)

            # Over UDP (RFC 1995 §2): the difference fits one datagram; a client up to date gets the SOA.
            m = decode_msg(udp_query(g.port, ixfr_query(ORIGIN, 2024010101)))
            self.assertEqual([r[3] for r in m.answer], ["SOA", "SOA", "SOA", "A", "SOA"])
            self.assertEqual(m.answer[3][0], "new." + ORIGIN)
            m = decode_msg(udp_query(g.port, ixfr_query(ORIGIN, new)))
            self.assertEqual([r[3] for r in m.answer], ["SOA"])

            # A restart keeps the journal (state_dir/journal/): the difference is still answered.
            g.stop()
            self.assertTrue(os.path.exists(g.path("state/journal/gslb.example.com.ixfr")))
            g.files = {}  # start() must not write the zone file back as it was before `zone add`
            g.start()
            n, text = received_bytes(g.port, ORIGIN, f"IXFR={2024010101}")
            self.assertLess(n * 100, kd_axfr, text)
            self.assertNotIn("journal dropped", g.stderr())
            # A journal file that was tampered with is dropped, not trusted: AXFR-style.
            g.stop()
            path = g.path("state/journal/gslb.example.com.ixfr")
            data = bytearray(open(path, "rb").read())
            data[len(data) // 2] ^= 0x40
            open(path, "wb").write(bytes(data))
            g.start()
            self.assertRegex(g.stderr(), r"IXFR journal dropped, it is not sound \(octet \d+: checksum mismatch")
            n, _ = received_bytes(g.port, ORIGIN, f"IXFR={2024010101}")
            self.assertGreater(n, kd_axfr // 2)
            g.stop()


SIGNED = "signed.test."


@unittest.skipUnless(shutil.which("knotd"), "needs knotd")
class SignedIxfr(unittest.TestCase):
    def test_knot_follows_a_signed_zone_by_ixfr_after_a_change_and_a_resign(self):
        # A reload keeps the signatures of what did not change, and a re-sign renews only those due (about
        # half): both differences are far smaller than the zone, and Knot (validating nothing, just
        # transferring) takes each by IXFR.
        zone = ("$ORIGIN signed.test.\n$TTL 300\n@ SOA ns1 admin 1 3600 900 604800 60\n@ NS ns1\n"
                "ns1 A 192.0.2.1\n" + "".join(f"h{i} A 10.1.{i >> 8}.{i & 255}\n" for i in range(300)))
        g = Gslbd(files={"zone.db": zone}, wait_zone=SIGNED)
        p = gslbctl("dnssec", "keygen", SIGNED, "--dir", g.path("keys"))
        self.assertEqual(p.returncode, 0, p.stdout)
        knot = Knot(SIGNED, g.port)
        g.raw_config = (f'[server]\nlisten = ["127.0.0.1:{g.port}"]\naxfr_allow = ["127.0.0.1"]\n\n'
                        f'[[zone]]\nname = "{SIGNED}"\nfile = "zone.db"\ndnssec = true\nkey_dir = "keys"\n'
                        f'signature_validity = 24\nnotify = ["127.0.0.1:{knot.port}"]\n')
        with g, knot:
            knot.wait_zone(20)
            p = gslbctl("zone", "add", g.path("zone.db"), "new", "A", "192.0.2.77")
            self.assertEqual(p.returncode, 0, p.stdout)
            g.reload()
            wait(lambda: kdig(knot.port, "new." + SIGNED, "A").answer, 10, f"knot gets new.\n{knot.stderr()}")
            # The first re-sign comes 6 to 12 s after the start (a quarter to a half of the validity).
            wait(lambda: "re-signing" in g.stderr(), 20, f"a re-sign\n{g.stderr()}")
            resigned = soa_serial(g.port, SIGNED)
            wait(lambda: (soa_serial(knot.port, SIGNED) or 0) >= resigned, 10,
                 f"knot follows the re-sign\n{knot.stderr()}")
            kinds = knot_transfers(knot, SIGNED)
            self.assertEqual(kinds[0][0], "AXFR", knot.stderr())
            self.assertGreaterEqual(len(kinds), 3, knot.stderr())
            self.assertEqual({k for k, _ in kinds[1:]}, {"IXFR"}, knot.stderr())
            self.assertNotIn("AXFR-style", g.stderr())
            axfr = kinds[0][1]
            print("signed zone of 303 names: Knot's AXFR " + f"{axfr} B, then IXFR " +
                  ", ".join(f"{b} B ({b / axfr:.1%})" for _, b in kinds[1:]))
            # Each difference is smaller than the zone (else gslbd answers AXFR-style); a re-sign renews the
            # signatures due within a sixteenth of the validity: at 24 s, with whole seconds of spread, about a
            # third of them (a quarter at the default 14 days).
            self.assertLess(kinds[1][1], axfr // 20)
            for _, b in kinds[2:]:
                self.assertLess(b, axfr * 3 // 4)
            g.stop()


CAT = "catalog.gslb.example.com."
MEMBER = "$ORIGIN {z}\n$TTL 300\n@ IN SOA ns1 admin 1 3600 900 604800 60\n@ IN NS ns1\nns1 IN A 192.0.2.1\n"


def serves(port, zone):
    r = kdig(port, zone, "SOA", "+time=1")
    return r.rcode == "NOERROR" and bool(r.answer)


@unittest.skipUnless(shutil.which("knotd"), "needs knotd")
class Catalog(unittest.TestCase):
    def test_knot_adds_and_drops_members_on_gslbd_reload(self):
        g = Gslbd(files={"zone.db": big_zone(1), "a.zone": MEMBER.format(z="a.test."),
                         "b.zone": MEMBER.format(z="b.test."), "c.zone": MEMBER.format(z="c.test.")},
                  wait_zone=CAT)
        knot = Knot(CAT, g.port, catalog=True)
        zones = {"a.test.": 'catalog_group = "east"\n', "b.test.": ""}

        def write_config():
            extra = "".join(f'\n[[zone]]\nname = "{z}"\nfile = "{z[0]}.zone"\nnotify = ["127.0.0.1:{knot.port}"]\n'
                            + group for z, group in zones.items())
            g.raw_config = config(g.port, g.path("state"), [knot.port], extra,
                                  f'\n[[zone]]\nname = "{CAT}"\ncatalog = true\nnotify = ["127.0.0.1:{knot.port}"]\n')
            g.write("gslbd.toml", g.raw_config)

        write_config()
        os.makedirs(g.path("state"))
        with g, knot:
            t0 = time.monotonic()
            for z in ("a.test.", "b.test.", ORIGIN):
                wait(lambda: serves(knot.port, z), 30, f"knot serves {z} from the catalog\n{knot.stderr()}")
            print(f"catalog: knot serves the 3 members {time.monotonic() - t0:.2f} s after start")
            # The catalog's records: version 2, a PTR per member, a's group.
            r = kdig(g.port, "version." + CAT, "TXT")
            self.assertEqual([rr.rdata for rr in r.answer], ['"2"'])
            old = soa_serial(g.port, CAT)
            # Drop b, add c: gslbd's reload alone; knot's configuration is not touched.
            del zones["b.test."]
            zones["c.test."] = ""
            write_config()
            t0 = time.monotonic()
            g.reload()
            wait(lambda: serves(knot.port, "c.test."), 20, f"knot adds c.test.\n{knot.stderr()}\n{g.stderr()}")
            wait(lambda: not serves(knot.port, "b.test."), 20, f"knot drops b.test.\n{knot.stderr()}")
            print(f"catalog: knot added c.test. and dropped b.test. {time.monotonic() - t0:.2f} s after the reload")
            self.assertTrue(serves(knot.port, "a.test."))
            new = soa_serial(g.port, CAT)
            self.assertEqual(new, old + 1)
            # The catalog went by IXFR too (its journal), and a reload that changes nothing keeps its serial.
            self.assertRegex(g.stderr(), rf"IXFR of {re.escape(CAT)} to 127\.0\.0\.1:\d+: serial {old} -> {new}")
            g.reload()
            time.sleep(0.5)
            self.assertEqual(soa_serial(g.port, CAT), new)
            g.stop()


if __name__ == "__main__":
    run_tests()
