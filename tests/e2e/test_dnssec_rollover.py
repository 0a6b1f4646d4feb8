#!/usr/bin/env python3
"""DNSSEC key rollover (doc/dnssec.md "Key state and rollover"): `gslbctl dnssec rollover` writes RFC 7583's schedule
into the key files and gslbd follows it on its own (it sees the new key files within a second and reloads at
every key event), while a validating Unbound keeps getting AD and ldns-verify-zone accepts the AXFR at every
step. TTLs of 2 s and --propagation 1 keep each rollover under ten seconds."""
import json
import os
import re
import shutil
import sys
import time
import unittest
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Gslbd, free_port, run_tests  # noqa: E402
from test_dnssec import ZONE, Unbound, ctl, digp, flags, run, status  # noqa: E402

TOKEN = "rollover-e2e-token"
ZONE_TEXT = f"""$ORIGIN {ZONE}
$TTL 2
@ 2 SOA ns1 hostmaster 2024010101 3600 600 604800 2
@ NS ns1
ns1 A 127.0.0.1
static A 192.0.2.1
www A 192.0.2.10
www A 192.0.2.11
"""


def config(port, cport):
    return (f'[server]\nlisten = ["127.0.0.1:{port}"]\nworkers = 2\naxfr_allow = ["127.0.0.1"]\n\n'
            f'[control]\nlisten = "127.0.0.1:{cport}"\ntoken_file = "control.token"\n\n'
            f'[[zone]]\nname = "{ZONE}"\nfile = "zone.db"\ndnssec = true\nkey_dir = "keys"\n\n'
            '[defaults]\nttl = 2\n\n[site.a]\n[site.b]\n\n'
            f'[hostname."www.{ZONE}"]\n'
            f'[[hostname."www.{ZONE}".service]]\naddress = "192.0.2.10"\nsite = "a"\n'
            f'[[hostname."www.{ZONE}".service]]\naddress = "192.0.2.11"\nsite = "b"\n')


def dnskey_tags(port):
    out = digp(port, "+norec", "+multi", ZONE, "DNSKEY")
    return frozenset(int(t) for t in re.findall(r"key id = (\d+)", out))


def signers(port, name, qtype):
    """Key tags of the RRSIGs over (name, qtype), straight from gslbd."""
    out = digp(port, "+norec", "+dnssec", name, qtype)
    return frozenset(int(m) for m in re.findall(rf"RRSIG\s+{qtype} \d+ \d+ \d+ \d{{14}} \d{{14}} (\d+) ", out))


class Rollover(unittest.TestCase):
    def start(self, *keygen):
        self.g = Gslbd(files={"zone.db": ZONE_TEXT, "control.token": TOKEN + "\n"}, wait_zone=ZONE)
        r = ctl("dnssec", "keygen", ZONE, "--dir", self.g.path("keys"), *keygen)
        self.assertEqual(r.returncode, 0, r.out)
        self.cport = free_port()
        self.g.raw_config = config(self.g.port, self.cport)
        self.g.__enter__()
        self.addCleanup(self.g.close)
        time.sleep(1)  # the rollover starts after the snapshot's signing second

    def key_event_at(self):
        req = urllib.request.Request(f"http://127.0.0.1:{self.cport}/v1/status",
                                     headers={"Authorization": f"Bearer {TOKEN}"})
        with urllib.request.urlopen(req, timeout=5) as r:
            st = json.load(r)
        (z,) = [z for z in st["zones"] if z["name"] == ZONE]
        return z["dnssec"]["key_event_at"]

    def roll(self, kind, *extra):
        r = ctl("dnssec", "rollover", ZONE, "-c", self.g.config_path, "--kind", kind, "--propagation", "1", *extra)
        self.assertEqual(r.returncode, 0, r.out)
        m = re.search(r"key (\d+) replaces key (\d+)", r.stdout)
        self.assertTrue(m, r.out)
        return int(m.group(1)), int(m.group(2)), r.stdout

    def verify_axfr(self, step):
        text = digp(self.g.port, ZONE, "AXFR", "+nocmd", "+nostats")
        path = self.g.path(f"axfr-{step}.txt")
        with open(path, "w") as f:
            f.write(text)
        p = run("ldns-verify-zone", path)
        self.assertEqual(p.returncode, 0, f"step {step}:\n{p.out}\n{text}")

    def follow(self, unbound, gone, watch):
        """Until key `gone` has left the DNSKEY RRset (and 2 s more): every 0.2 s, static and GSLB answers
        through `unbound` must be NOERROR with AD; each new (DNSKEY tags, signers of `watch`) state of gslbd is
        recorded and its AXFR verified. Returns the states in order."""
        states, deadline, gone_at = [], time.monotonic() + 30, None
        while time.monotonic() < deadline:
            # Tags, signers, tags again: a reload between the queries shows as a change of tags (each
            # step changes the tags or the signers, never both), and is read again.
            tags = dnskey_tags(self.g.port)
            sig = signers(self.g.port, *watch)
            if dnskey_tags(self.g.port) != tags:
                continue
            st = (tags, sig)
            if not states or states[-1] != st:
                states.append(st)
                self.verify_axfr(len(states))
            for name in ("static." + ZONE, "www." + ZONE):
                out = digp(unbound.port, "+dnssec", name, "A")
                self.assertEqual(status(out), "NOERROR", f"{states}\n{out}\n{self.g.stderr()}")
                self.assertIn("ad", flags(out), f"{states}\n{out}")
            if gone not in tags and gone_at is None:
                gone_at = time.monotonic()
            if gone_at is not None and time.monotonic() > gone_at + 2:
                return states
            time.sleep(0.2)
        self.fail(f"key {gone} still published: {states}\n{self.g.stderr()}")

    def assert_logged(self, *events):
        log = self.g.stderr()
        for e in events:
            self.assertIn(f"zone {ZONE}: key {e}", log)

    def test_zsk_pre_publication(self):
        self.start("--ksk-zsk")
        ds = [line for line in ctl("dnssec", "ds", ZONE, "--dir", self.g.path("keys")).stdout.splitlines() if line]
        (k,) = [int(line.split()[3]) for line in ds]  # "zone. IN DS TAG ALG 2 HEX": the KSK
        with Unbound(self.g.port, ds) as u:
            new, old, out = self.roll("zsk")
            self.assertIn("Ipub = Dprp + TTLkey = 3 s", out)  # 1 + 2
            self.assertIn("Iret = Dsgn + Dprp + TTLsig = 3 s", out)  # 0 + 1 + 2 (GSLB ttl 2 included)
            self.assertNotIn("parent:", out)  # the DS stays
            # A second rollover while this one runs is refused.
            again = ctl("dnssec", "rollover", ZONE, "-c", self.g.config_path, "--kind", "zsk")
            self.assertEqual(again.returncode, 1, again.out)
            self.assertIn("already under way", again.stderr)
            # /v1/status shows the next key event once gslbd has the new key: its activation, 3 s away.
            deadline = time.monotonic() + 3
            while self.key_event_at() is None and time.monotonic() < deadline:
                time.sleep(0.1)
            saw_event = self.key_event_at()
            self.assertIsNotNone(saw_event, self.g.stderr())
            self.assertLessEqual(abs(saw_event - (time.time() + 2)), 2.5)
            states = self.follow(u, old, ("static." + ZONE, "A"))
        want = [(frozenset({k, old, new}), frozenset({old})), (frozenset({k, old, new}), frozenset({new})),
                (frozenset({k, new}), frozenset({new}))]
        if states[0] == (frozenset({k, old}), frozenset({old})):
            states = states[1:]  # seen before gslbd picked the new key up
        self.assertEqual(states, want, self.g.stderr())
        self.assertIsNone(self.key_event_at())  # nothing scheduled once the old key is gone
        self.assert_logged(f"{new} (ZSK) is published", f"{new} (ZSK) becomes active",
                           f"{old} (ZSK) becomes inactive", f"{old} (ZSK) is deleted")
        self.assertIn("the key files in", self.g.stderr())  # picked up without a reload

    def test_csk_double_ds(self):
        self.start()
        # TTLds 3: the swap 4 s after the start, time enough to start Unbound (it needs both DS) before it.
        new, old, out = self.roll("csk", "--parent-propagation", "1", "--parent-ds-ttl", "3")
        self.assertIn("Ipub = Dprp + TTLkey = 3 s", out)
        self.assertIn("IpubP = DprpP + TTLds = 4 s", out)
        self.assertIn("Iret = Dsgn + Dprp + max(TTLsig, TTLkey) = 3 s", out)
        self.assertIn(f"parent: add the DS of key {new}", out)
        self.assertIn(f"parent: remove the DS of key {old}", out)
        # The parent's DS set during the rollover: both keys' (ds --all: the new one is not published yet).
        ds = [line for line in ctl("dnssec", "ds", "--all", ZONE, "--dir", self.g.path("keys")).stdout.splitlines()
              if line]
        self.assertEqual({int(line.split()[3]) for line in ds}, {new, old}, ds)
        with Unbound(self.g.port, ds) as u:
            states = self.follow(u, old, (ZONE, "DNSKEY"))
        # The CSK signs the DNSKEY RRset and the zone: pre-published, then the swap, then the old key leaves.
        want = [(frozenset({old, new}), frozenset({old})), (frozenset({old, new}), frozenset({new})),
                (frozenset({new}), frozenset({new}))]
        if states[0] == (frozenset({old}), frozenset({old})):
            states = states[1:]
        self.assertEqual(states, want, self.g.stderr())
        self.assertEqual(signers(self.g.port, "static." + ZONE, "A"), frozenset({new}))
        self.assert_logged(f"{new} (CSK) is published", f"{new} (CSK) becomes active",
                           f"{old} (CSK) becomes inactive", f"{old} (CSK) is deleted")

    def test_ksk_double_ds(self):
        self.start("--ksk-zsk")
        new, old, out = self.roll("ksk", "--parent-propagation", "1", "--parent-ds-ttl", "3")
        self.assertIn("IpubP = DprpP + TTLds = 4 s", out)
        self.assertIn("Iret = Dprp + TTLkey = 3 s", out)
        ds = [line for line in ctl("dnssec", "ds", "--all", ZONE, "--dir", self.g.path("keys")).stdout.splitlines()
              if line]
        with Unbound(self.g.port, ds) as u:
            zsk = signers(self.g.port, "static." + ZONE, "A")
            states = self.follow(u, old, (ZONE, "DNSKEY"))
        # One load swaps the KSKs (double-DS): the new one is never published beside the old one.
        want = [(frozenset({old}) | zsk, frozenset({old})), (frozenset({new}) | zsk, frozenset({new}))]
        self.assertEqual(states, want, self.g.stderr())
        self.assertEqual(signers(self.g.port, "static." + ZONE, "A"), zsk)  # the ZSK's signatures never change
        self.assert_logged(f"{new} (KSK) is published", f"{old} (KSK) is deleted")


class Refusals(unittest.TestCase):
    def test_refusals(self):
        g = Gslbd(files={"zone.db": ZONE_TEXT})
        g.write_config()
        keys = g.path("keys")
        self.assertEqual(ctl("dnssec", "keygen", ZONE, "--dir", keys).returncode, 0)
        zf = g.path("zone.db")
        # No key of that kind: a CSK zone has no ZSK.
        r = ctl("dnssec", "rollover", ZONE, "--zone-file", zf, "--dir", keys, "--kind", "zsk")
        self.assertEqual(r.returncode, 1, r.out)
        self.assertIn("no ZSK to roll", r.stderr)
        # Times in the past.
        r = ctl("dnssec", "rollover", ZONE, "--zone-file", zf, "--dir", keys, "--kind", "csk", "--start", "now-60")
        self.assertEqual(r.returncode, 1, r.out)
        self.assertIn("in the past", r.stderr)
        # Neither a config nor a zone file: no TTLs to plan with.
        r = ctl("dnssec", "rollover", ZONE, "--dir", keys, "--kind", "csk")
        self.assertEqual(r.returncode, 2, r.out)
        # Another algorithm is another procedure (RFC 6781 §4.1.4).
        r = ctl("dnssec", "rollover", ZONE, "--zone-file", zf, "--dir", keys, "--kind", "csk", "--algorithm", "ed25519")
        self.assertEqual(r.returncode, 1, r.out)
        self.assertIn("algorithm rollover", r.stderr)
        self.assertEqual(len([f for f in os.listdir(keys) if f.endswith(".key")]), 1)  # nothing was written
        # Without --propagation, Dprp is the SOA's refresh + retry (a lost NOTIFY): 3600 + 600.
        r = ctl("dnssec", "rollover", ZONE, "--zone-file", zf, "--dir", keys, "--kind", "csk", "--start", "now+60")
        self.assertEqual(r.returncode, 0, r.out)
        self.assertIn("Dprp 4200 s (SOA refresh 3600 + retry 600", r.stdout)
        self.assertIn("Ipub = Dprp + TTLkey = 4202 s", r.stdout)
        self.assertIn("IpubP = DprpP + TTLds = 90000 s", r.stdout)  # BIND's defaults: 3600 + 86400
        r = ctl("dnssec", "rollover", ZONE, "--zone-file", zf, "--dir", keys, "--kind", "csk")
        self.assertEqual(r.returncode, 1, r.out)
        self.assertIn("already under way", r.stderr)
        g.close()


Rollover = unittest.skipUnless(shutil.which("unbound") and shutil.which("ldns-verify-zone"),
                               "unbound and ldnsutils needed")(Rollover)

if __name__ == "__main__":
    run_tests()
