#!/usr/bin/env python3
"""DNSSEC (issue 15): keys in BIND's format with gslbctl, checked against ldns, BIND's and Knot's tools."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import REPO, run_tests  # noqa: E402

GSLBCTL = os.path.abspath(os.environ.get("GSLBCTL") or os.path.join(REPO, "build", "tools", "gslbctl"))
if os.environ.get("GSLBD"):
    os.environ["GSLBD"] = os.path.abspath(os.environ["GSLBD"])
ZONE = "gslb.example.com."


def run(*args, cwd=None, timeout=60):
    p = subprocess.run(list(map(str, args)), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=timeout, cwd=cwd)
    p.out = p.stdout + p.stderr
    return p


def ctl(*args, **kw):
    return run(GSLBCTL, *args, **kw)


def ds_rdata(text):
    """{(tag, alg, digest type, HEX DIGEST)} of every DS line in `text`."""
    out = set()
    for line in text.splitlines():
        m = re.search(r"\bDS\s+(\d+)\s+(\d+)\s+(\d+)\s+([0-9A-Fa-f ]+)$", line.strip())
        if m:
            out.add((int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4).replace(" ", "").upper()))
    return out


class Keys(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="gslbd-dnssec-")
        self.keys = os.path.join(self.dir, "keys")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def key_files(self):
        return sorted(f for f in os.listdir(self.keys) if f.endswith(".key"))

    def test_csk_default_ds_matches_ldns_and_bind(self):
        p = ctl("dnssec", "keygen", ZONE, "--dir", self.keys)
        self.assertEqual(p.returncode, 0, p.out)
        files = self.key_files()
        self.assertEqual(len(files), 1, files)
        self.assertRegex(files[0], r"^Kgslb\.example\.com\.\+013\+\d{5}\.key$")
        priv = os.path.join(self.keys, files[0][:-4] + ".private")
        self.assertEqual(os.stat(priv).st_mode & 0o777, 0o600)
        ours = ds_rdata(ctl("dnssec", "ds", ZONE, "--dir", self.keys).stdout)
        self.assertEqual(len(ours), 1, ours)
        key = os.path.join(self.keys, files[0])
        ldns = ds_rdata(run("ldns-key2ds", "-n", "-2", key).stdout)
        bind = ds_rdata(run("dnssec-dsfromkey", "-2", key).stdout)
        self.assertEqual(ours, ldns)
        self.assertEqual(ours, bind)
        # Knot's keymgr reads our files as BIND keys and computes the same DS.
        kdb = os.path.join(self.dir, "kasp")
        os.makedirs(kdb)
        r = run("keymgr", "-D", kdb, ZONE, "import-bind", key[:-4])
        self.assertEqual(r.returncode, 0, r.out)
        knot = {d for d in ds_rdata(run("keymgr", "-D", kdb, ZONE, "ds").stdout) if d[2] == 2}
        self.assertEqual(ours, knot)
        listing = ctl("dnssec", "list", "--dir", self.keys)
        self.assertEqual(listing.returncode, 0, listing.out)
        self.assertIn("CSK ECDSAP256SHA256 flags 257 active", listing.stdout)

    def test_ed25519_ksk_zsk(self):
        p = ctl("dnssec", "keygen", ZONE, "--dir", self.keys, "--algorithm", "ed25519", "--ksk-zsk")
        self.assertEqual(p.returncode, 0, p.out)
        files = self.key_files()
        self.assertEqual(len(files), 2, files)
        self.assertTrue(all("+015+" in f for f in files), files)
        ours = ds_rdata(ctl("dnssec", "ds", ZONE, "--dir", self.keys).stdout)
        self.assertEqual(len(ours), 1, "only the KSK goes to the parent")
        ldns = set()
        for f in files:
            ldns |= ds_rdata(run("ldns-key2ds", "-n", "-2", os.path.join(self.keys, f)).stdout)
        self.assertEqual(ours, ldns)  # ldns-key2ds skips non-SEP keys too
        listing = ctl("dnssec", "list", ZONE, "--dir", self.keys).stdout
        self.assertIn("KSK ED25519 flags 257", listing)
        self.assertIn("ZSK ED25519 flags 256", listing)

    def test_reads_keys_of_ldns_bind_and_knot(self):
        os.makedirs(self.keys)
        run("ldns-keygen", "-a", "ECDSAP256SHA256", "-k", ZONE, cwd=self.keys)
        run("dnssec-keygen", "-q", "-a", "ED25519", "-f", "KSK", ZONE, cwd=self.keys)
        expected = set()
        for f in self.key_files():
            expected |= ds_rdata(run("dnssec-dsfromkey", "-2", os.path.join(self.keys, f)).stdout)
        self.assertEqual(len(expected), 2, self.key_files())
        self.assertEqual(ds_rdata(ctl("dnssec", "ds", ZONE, "--dir", self.keys).stdout), expected)

    def test_refuses_mismatched_pair(self):
        ctl("dnssec", "keygen", ZONE, "--dir", self.keys)
        ctl("dnssec", "keygen", ZONE, "--dir", self.keys)
        a, b = self.key_files()
        pa = os.path.join(self.keys, a[:-4] + ".private")
        pb = os.path.join(self.keys, b[:-4] + ".private")
        with open(pb) as f:
            other = f.read()
        with open(pa, "w") as f:
            f.write(other)
        p = ctl("dnssec", "ds", ZONE, "--dir", self.keys)
        self.assertEqual(p.returncode, 1, p.out)
        self.assertIn("does not match", p.stderr)


if __name__ == "__main__":
    run_tests()
