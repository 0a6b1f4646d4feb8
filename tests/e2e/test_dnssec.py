#!/usr/bin/env python3
"""DNSSEC (doc/dnssec.md): keys in BIND's format with gslbctl, checked against ldns, BIND's and Knot's tools."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import unbound_server_conf, REPO, Gslbd, Knot, Nsd, _Daemon, build_query, decode_msg, free_port, run_tests, udp_query  # noqa: E402

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



SIGNED_ZONE = f"""$ORIGIN {ZONE}
$TTL 300
@ SOA ns1 hostmaster 2024010101 3600 600 604800 60
@ NS ns1
ns1 A 127.0.0.1
static A 192.0.2.1
static AAAA 2001:db8::1
alias CNAME static
*.wild TXT "wild"
a.b.c TXT "deep"
big TXT "{'x' * 200}" "{'y' * 200}"
sub NS ns.sub
ns.sub A 192.0.2.53
www A 192.0.2.10
www A 192.0.2.11
www A 192.0.2.12
fbnone A 127.0.0.2
fbaddr A 127.0.0.3
"""


def gslb_config(port, validity=None, cport=None, denial="nsec", zone_extra="", server_extra=""):
    extra = f"signature_validity = {validity}\n" if validity else ""
    extra += f'denial = "{denial}"\n' + zone_extra
    control = f'[control]\nlisten = "127.0.0.1:{cport}"\ntoken_file = "control.token"\n\n' if cport else ""
    out = (f'[server]\nlisten = ["127.0.0.1:{port}"]\nworkers = 2\naxfr_allow = ["127.0.0.1"]\n{server_extra}\n'
           f'{control}'
           f'[[zone]]\nname = "{ZONE}"\nfile = "zone.db"\ndnssec = true\nkey_dir = "keys"\n{extra}\n'
           '[check.dead]\ntype = "tcp"\nport = 1\ninterval = 1\ntimeout = 1\nrise = 1\nfall = 1\n\n'
           '[site.a]\n[site.b]\n[site.c]\n')
    out += f'\n[hostname."www.{ZONE}"]\nanswers = 1\n'
    for site, a in (("a", "192.0.2.10"), ("b", "192.0.2.11"), ("c", "192.0.2.12")):
        out += f'[[hostname."www.{ZONE}".service]]\naddress = "{a}"\nsite = "{site}"\n'
    out += f'\n[hostname."fbnone.{ZONE}"]\nfallback = "none"\n'
    out += f'[[hostname."fbnone.{ZONE}".service]]\naddress = "127.0.0.2"\nsite = "a"\ncheck = "dead"\n'
    out += f'\n[hostname."fbaddr.{ZONE}"]\nfallback = "192.0.2.99"\n'
    out += f'[[hostname."fbaddr.{ZONE}".service]]\naddress = "127.0.0.3"\nsite = "a"\ncheck = "dead"\n'
    return out


class Unbound(_Daemon):
    """A validating Unbound that reaches the zone through a stub to gslbd, with `anchor` (DS lines) as the
    zone's trust anchor."""
    name = "unbound"

    def __init__(self, upstream_port, anchors, stubs=None):
        super().__init__()
        self.port = free_port()
        self.stubs = stubs or {ZONE: upstream_port}  # {zone: port on 127.0.0.1}
        self.anchors = anchors

    def start(self):
        anchors = "".join(f'    trust-anchor: "{a}"\n' for a in self.anchors)
        conf = unbound_server_conf(self.port, self.dir) + f"""    aggressive-nsec: no
    module-config: "validator iterator"
{anchors}"""
        for zone, port in self.stubs.items():
            conf += f'stub-zone:\n    name: "{zone}"\n    stub-addr: 127.0.0.1@{port}\n'
        self.write("unbound.conf", conf)
        self._spawn(["unbound", "-d", "-c", self.path("unbound.conf")])
        q = build_query("static." + ZONE, "A", rd=1)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            r = udp_query(self.port, q, timeout=0.5)
            if r and decode_msg(r).rcode in ("NOERROR", "SERVFAIL"):
                return
            time.sleep(0.1)
        raise AssertionError("unbound did not answer:\n" + self.stderr())

    def __exit__(self, *a):
        self.close()


def digp(port, *args):
    p = run("dig", "-p", port, "@127.0.0.1", "+time=5", "+tries=1", *args, timeout=30)
    return p.stdout


def status(text):
    m = re.search(r"status: (\w+)", text)
    return m.group(1) if m else None


def flags(text):
    m = re.search(r";; flags: ([a-z ]*);", text)
    return set(m.group(1).split()) if m else set()


def rrs(text, section):
    """[(owner, type, rdata)] of one section of dig's output."""
    out, on = [], False
    for line in text.splitlines():
        if line.startswith(";; ") and "SECTION" in line:
            on = line.startswith(f";; {section} SECTION")
            continue
        if on and line.strip() and not line.startswith(";"):
            f = line.split(None, 4)
            out.append((f[0], f[3], f[4] if len(f) > 4 else ""))
    return out


@unittest.skipUnless(shutil.which("unbound"), "unbound is not installed (tools/install-deps)")
def dnsviz_grok(probe, anchor, out):
    """`dnsviz grok -P -r probe -t anchor` as parsed JSON. Debian's dnsviz 0.9.4 refuses to grok with its own
    python3-pygraphviz 1.7 ("pygraphviz is required": it looks for pygraphviz.release, gone since 1.7), and
    grok draws nothing, so its check is skipped here rather than the whole command."""
    p = run("/usr/bin/python3", "-c", "import sys, dnsviz.commands.grok as g; g.test_pygraphviz = lambda: None; "
            "sys.exit(g.main(['grok'] + sys.argv[1:]))", "-P", "-r", probe, "-t", anchor, "-o", out, timeout=60)
    assert p.returncode == 0, p.out
    with open(out) as f:
        return json.load(f)


def dnsviz_problems(node, path=""):
    """([errors], [warnings]) anywhere in dnsviz grok's JSON, each as "path: CODE: description"."""
    errors, warnings = [], []
    if isinstance(node, dict):
        for k, v in node.items():
            if k in ("errors", "warnings") and isinstance(v, list):
                for e in v:
                    text = f"{path}: {e.get('code')}: {e.get('description')}" if isinstance(e, dict) else f"{path}: {e}"
                    (errors if k == "errors" else warnings).append(text)
            else:
                e, w = dnsviz_problems(v, f"{path}/{k}")
                errors += e
                warnings += w
    elif isinstance(node, list):
        for i, v in enumerate(node):
            e, w = dnsviz_problems(v, f"{path}[{i}]")
            errors += e
            warnings += w
    return errors, warnings


def dnsviz_statuses(node, out=None):
    """{status: count} over every "status" in dnsviz grok's JSON (SECURE, VALID, BOGUS, INSECURE, ...)."""
    out = {} if out is None else out
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "status" and isinstance(v, str):
                out[v] = out.get(v, 0) + 1
            else:
                dnsviz_statuses(v, out)
    elif isinstance(node, list):
        for v in node:
            dnsviz_statuses(v, out)
    return out


class Signed(unittest.TestCase):
    DENIAL = "nsec"

    @classmethod
    def setUpClass(cls):
        cls.g = Gslbd(files={"zone.db": SIGNED_ZONE, "control.token": "dnssec-e2e-token\n"}, wait_zone=ZONE)
        r = ctl("dnssec", "keygen", ZONE, "--dir", cls.g.path("keys"))
        assert r.returncode == 0, r.out
        cls.cport = free_port()
        cls.g.raw_config = gslb_config(cls.g.port, cport=cls.cport, denial=cls.DENIAL)
        cls.g.__enter__()
        ds = [line for line in ctl("dnssec", "ds", ZONE, "--dir", cls.g.path("keys")).stdout.splitlines() if line]
        cls.u = Unbound(cls.g.port, ds)
        cls.u.__enter__()
        # The negative control: an anchor for another key of the zone. Every answer must then be bogus.
        other = tempfile.mkdtemp(prefix="gslbd-dnssec-other-")
        ctl("dnssec", "keygen", ZONE, "--dir", other)
        wrong = [line for line in ctl("dnssec", "ds", ZONE, "--dir", other).stdout.splitlines() if line]
        shutil.rmtree(other, ignore_errors=True)
        cls.bad = Unbound(cls.g.port, wrong)
        cls.bad.__enter__()

    @classmethod
    def tearDownClass(cls):
        for d in (cls.bad, cls.u, cls.g):
            d.close()

    def resolve(self, name, qtype="A"):
        return digp(self.u.port, "+dnssec", name + "." + ZONE, qtype)

    def test_axfr_verifies_with_ldns(self):
        text = digp(self.g.port, ZONE, "AXFR", "+nocmd", "+nostats")
        path = self.g.path("axfr.txt")
        with open(path, "w") as f:
            f.write(text)
        self.assertIn("DNSKEY", text)
        p = run("ldns-verify-zone", path)
        self.assertEqual(p.returncode, 0, p.out)
        self.assertIn("verified", p.out)
        # Every GSLB candidate set is there, signed as a whole RRset; NS and glue at the cut are not signed.
        self.assertEqual(len(re.findall(r"^www\.\S+\s+\d+\s+IN\s+A\s", text, re.M)), 3, text)
        self.assertNotRegex(text, r"(?m)^sub\.\S+\s+\d+\s+IN\s+RRSIG\s+NS\b")
        self.assertNotRegex(text, r"(?m)^ns\.sub\.\S+\s+\d+\s+IN\s+RRSIG")

    def test_rrsig_only_with_do(self):
        plain = digp(self.g.port, "+norec", "static." + ZONE, "A")
        self.assertNotIn("RRSIG", plain)
        signed = digp(self.g.port, "+norec", "+dnssec", "static." + ZONE, "A")
        self.assertEqual([t for _, t, _ in rrs(signed, "ANSWER")], ["A", "RRSIG"], signed)
        nx = digp(self.g.port, "+norec", "+dnssec", "nope." + ZONE, "A")
        self.assertEqual(status(nx), "NXDOMAIN")
        want = (["NSEC", "NSEC", "RRSIG", "RRSIG", "RRSIG", "SOA"] if self.DENIAL == "nsec" else
                ["NSEC3"] * 3 + ["RRSIG"] * 4 + ["SOA"])  # RFC 5155 §7.2.2: the closest encloser proof + wildcard
        self.assertEqual(sorted(t for _, t, _ in rrs(nx, "AUTHORITY")), want, nx)

    def test_validated_answers(self):
        cases = [("static", "A", "NOERROR", True), ("nope", "A", "NXDOMAIN", False),
                 ("static", "TXT", "NOERROR", False), ("b.c", "TXT", "NOERROR", False),
                 ("x.wild", "TXT", "NOERROR", True), ("y.wild", "A", "NOERROR", False),
                 ("alias", "A", "NOERROR", True), ("www", "A", "NOERROR", True),
                 ("fbaddr", "A", "NOERROR", True), ("fbnone", "A", "NOERROR", False),
                 ("sub", "DS", "NOERROR", False)]
        for name, qtype, rcode, has_answer in cases:
            with self.subTest(name=name, qtype=qtype):
                out = self.resolve(name, qtype)
                self.assertEqual(status(out), rcode, out)
                self.assertIn("ad", flags(out), out)
                self.assertEqual(bool([r for r in rrs(out, "ANSWER") if r[1] != "RRSIG"]), has_answer, out)
        self.assertIn("192.0.2.99", self.resolve("fbaddr"))

    def test_every_gslb_answer_validates(self):
        seen = set()
        for _ in range(12):
            out = digp(self.u.port, "+dnssec", "www." + ZONE, "A")
            self.assertIn("ad", flags(out), out)
            seen |= {r[2] for r in rrs(out, "ANSWER") if r[1] == "A"}
        self.assertTrue(seen)

    def online_signatures(self):
        req = urllib.request.Request(f"http://127.0.0.1:{self.cport}/v1/status",
                                     headers={"Authorization": "Bearer dnssec-e2e-token"})
        with urllib.request.urlopen(req, timeout=5) as r:
            st = json.load(r)
        (z,) = [z for z in st["zones"] if z["name"] == ZONE]
        self.assertIn("dnssec", z)
        return z["dnssec"]["online_signatures"]

    def test_gslb_signatures_cached(self):
        # 3 services, answers = 1: at most 3 signatures for www however many queries, then none at all.
        before = self.online_signatures()
        seen = set()
        for _ in range(40):
            out = digp(self.g.port, "+norec", "+dnssec", "www." + ZONE, "A")
            seen |= {r[2] for r in rrs(out, "ANSWER") if r[1] == "A"}
        mid = self.online_signatures()
        self.assertLessEqual(mid - before, 3)
        self.assertEqual(len(seen), 3, "the default policy spreads answers over the three services")
        for _ in range(40):
            digp(self.g.port, "+norec", "+dnssec", "www." + ZONE, "A")
        self.assertEqual(self.online_signatures(), mid, "steady state: no query signs")

    def test_bogus_without_the_right_anchor(self):
        for name, qtype in (("static", "A"), ("www", "A"), ("nope", "A")):
            out = digp(self.bad.port, "+dnssec", name + "." + ZONE, qtype)
            self.assertEqual(status(out), "SERVFAIL", out)

    @unittest.skipUnless(shutil.which("knotd"), "knotd is not installed")
    def test_knot_secondary_serves_a_valid_signed_zone(self):
        # Knot transfers the signed zone (candidate sets as whole signed RRsets) and serves it; a validating
        # Unbound in front of Knot gets AD from it too.
        with Knot(ZONE, self.g.port) as k:
            k.wait_zone()
            ds = [line for line in ctl("dnssec", "ds", ZONE, "--dir", self.g.path("keys")).stdout.splitlines()
                  if line]
            with Unbound(k.port, ds) as u:
                for name, qtype, rcode in (("static", "A", "NOERROR"), ("nope", "A", "NXDOMAIN"),
                                           ("www", "A", "NOERROR"), ("static", "TXT", "NOERROR")):
                    out = digp(u.port, "+dnssec", name + "." + ZONE, qtype)
                    self.assertEqual(status(out), rcode, out)
                    self.assertIn("ad", flags(out), out)

    def ds_lines(self):
        return [line for line in ctl("dnssec", "ds", ZONE, "--dir", self.g.path("keys")).stdout.splitlines()
                if line]

    def axfr_zone_text(self):
        """The signed zone as a zone file: dig's AXFR without comments and without the closing SOA."""
        lines = [line for line in digp(self.g.port, ZONE, "AXFR", "+nocmd", "+nostats").splitlines()
                 if line.strip() and not line.startswith(";")]
        self.assertRegex(lines[-1], r"\sSOA\s")
        return "\n".join(lines[:-1]) + "\n"

    @unittest.skipUnless(shutil.which("nsd"), "nsd is not installed")
    def test_nsd_secondary_serves_a_valid_signed_zone(self):
        with Nsd({ZONE: None}, extra_zone_conf={ZONE: [f"request-xfr: AXFR 127.0.0.1@{self.g.port} NOKEY"]}) as n:
            with Unbound(n.port, self.ds_lines()) as u:
                for name, qtype, rcode in (("static", "A", "NOERROR"), ("nope", "A", "NXDOMAIN"),
                                           ("www", "A", "NOERROR"), ("static", "TXT", "NOERROR"),
                                           ("x.wild", "TXT", "NOERROR")):
                    out = digp(u.port, "+dnssec", name + "." + ZONE, qtype)
                    self.assertEqual(status(out), rcode, out)
                    self.assertIn("ad", flags(out), out)

    @unittest.skipUnless(shutil.which("nsd"), "nsd is not installed")
    def test_tampered_signature_is_bogus(self):
        # The negative control with the right anchor: NSD serves gslbd's signed zone with the signature bytes of
        # static's RRSIG A changed. Unbound must give SERVFAIL for that RRset and AD for the untouched ones.
        text = self.axfr_zone_text()
        pat = re.compile(r"(?m)^(static\.\S+\s+\d+\s+IN\s+RRSIG\s+A\s+(?:\S+\s+){7})(\S+)(.*)$")
        m = pat.search(text)
        self.assertTrue(m, text)
        sig = m.group(2)  # the first chunk of the base64 signature (dig may split it)
        flipped = sig[:4] + ("B" if sig[4] != "B" else "C") + sig[5:]
        tampered = text[:m.start(2)] + flipped + text[m.end(2):]
        self.assertNotEqual(tampered, text)
        with Nsd({ZONE: tampered}) as n:
            with Unbound(n.port, self.ds_lines()) as u:
                out = digp(u.port, "+dnssec", "static." + ZONE, "A")
                self.assertEqual(status(out), "SERVFAIL", out)
                out = digp(u.port, "+dnssec", "static." + ZONE, "AAAA")
                self.assertEqual(status(out), "NOERROR", out)
                self.assertIn("ad", flags(out), "only the tampered RRset is bogus: " + out)
            # The same zone untampered from the same NSD setup validates (the SERVFAIL is the flipped bytes).
        with Nsd({ZONE: text}) as n:
            with Unbound(n.port, self.ds_lines()) as u:
                out = digp(u.port, "+dnssec", "static." + ZONE, "A")
                self.assertIn("ad", flags(out), out)

    @unittest.skipUnless(shutil.which("nsd") and shutil.which("ldns-signzone"), "nsd or ldnsutils missing")
    def test_hierarchy_lab_from_a_fake_root(self):
        # A fake root and example.com. signed by ldns-signzone and served by one NSD; example.com. holds the DS
        # that `gslbctl dnssec ds` prints. Unbound's only anchor is the root's DS, so every AD below means it
        # walked root -> example.com. -> gslb.example.com. (stubs point each zone at its server).
        lab = tempfile.mkdtemp(prefix="gslbd-dnssec-lab-")
        try:
            parent = "example.com."
            zones = {
                ".": ". 3600 IN SOA a.root. hostmaster.root. 1 3600 600 604800 60\n"
                     ". 3600 IN NS a.root.\na.root. 3600 IN A 127.0.0.1\n"
                     f"{parent} 3600 IN NS ns.{parent}\nns.{parent} 3600 IN A 127.0.0.1\n",
                parent: f"{parent} 3600 IN SOA ns.{parent} hostmaster.{parent} 1 3600 600 604800 60\n"
                        f"{parent} 3600 IN NS ns.{parent}\nns.{parent} 3600 IN A 127.0.0.1\n"
                        f"www.{parent} 3600 IN A 192.0.2.80\n"
                        f"{ZONE} 3600 IN NS ns1.{ZONE}\nns1.{ZONE} 3600 IN A 127.0.0.1\n"
                        + "".join(line + "\n" for line in self.ds_lines()),
            }
            keys, signed = {}, {}
            for zone in (parent, "."):  # the child first: the root needs example.com.'s DS
                r = run("ldns-keygen", "-a", "ECDSAP256SHA256", "-k", zone, cwd=lab)
                self.assertEqual(r.returncode, 0, r.out)
                keys[zone] = r.stdout.strip()
                if zone == ".":
                    with open(os.path.join(lab, keys[parent] + ".ds")) as f:
                        zones["."] += f.read()
                path = os.path.join(lab, (zone.rstrip(".") or "root") + ".zone")
                with open(path, "w") as f:
                    f.write(zones[zone])
                r = run("ldns-signzone", "-o", zone, "-f", path + ".signed", path, keys[zone], cwd=lab)
                self.assertEqual(r.returncode, 0, r.out)
                with open(path + ".signed") as f:
                    signed[zone] = f.read()
            with open(os.path.join(lab, keys["."] + ".ds")) as f:
                root_ds = [line.strip() for line in f if line.strip()]
            with Nsd({".": signed["."], parent: signed[parent]}) as n:
                stubs = {".": n.port, parent: n.port, ZONE: self.g.port}
                with Unbound(None, root_ds, stubs=stubs) as u:
                    out = digp(u.port, "+dnssec", "www." + parent, "A")
                    self.assertIn("ad", flags(out), out)
                    cases = [("static", "A", "NOERROR", True), ("www", "A", "NOERROR", True),
                             ("nope", "A", "NXDOMAIN", False), ("static", "TXT", "NOERROR", False),
                             ("x.wild", "TXT", "NOERROR", True)]
                    for name, qtype, rcode, has_answer in cases:
                        with self.subTest(name=name, qtype=qtype):
                            out = digp(u.port, "+dnssec", name + "." + ZONE, qtype)
                            self.assertEqual(status(out), rcode, out)
                            self.assertIn("ad", flags(out), out)
                            self.assertEqual(bool([r for r in rrs(out, "ANSWER") if r[1] != "RRSIG"]),
                                             has_answer, out)
        finally:
            shutil.rmtree(lab, ignore_errors=True)

    @unittest.skipUnless(shutil.which("dnsviz"), "dnsviz is not installed (apt-get install dnsviz)")
    def test_dnsviz_finds_no_errors(self):
        # DNSViz's authoritative-only mode: every query goes to this gslbd ("ZONE+" stops the analysis at the
        # zone, so nothing asks the real root), EDNS compatibility probes included (-E). The trust anchor is
        # the zone's own DNSKEY (the DS side is the hierarchy lab's). Static, GSLB (online signatures),
        # fallback none (online NSEC/NSEC3) and fallback address answers, a CNAME, a wildcard, an empty
        # non-terminal; dnsviz adds its own NXDOMAIN and NODATA probes for each name.
        names = [ZONE] + [n + "." + ZONE for n in ("static", "www", "fbnone", "fbaddr", "alias", "x.wild", "a.b.c")]
        probe, grok, anchor = self.g.path("dnsviz-probe.json"), self.g.path("dnsviz-grok.json"), self.g.path("ta")
        p = run("dnsviz", "probe", "-A", "-4", "-E", "-x", f"{ZONE}+:ns1.{ZONE}=127.0.0.1:{self.g.port}",
                "-o", probe, *names, timeout=60)
        self.assertEqual(p.returncode, 0, p.out)
        with open(anchor, "w") as f:
            f.write(digp(self.g.port, "+norec", "+noall", "+answer", ZONE, "DNSKEY"))
        self.assertIn("DNSKEY", open(anchor).read())
        result = dnsviz_grok(probe, anchor, grok)
        errors, warnings = dnsviz_problems(result)
        if warnings:
            print(f"dnsviz warnings ({self.DENIAL}):", *warnings, sep="\n  ")
        self.assertEqual(errors, [], "dnsviz grok errors")
        statuses = dnsviz_statuses(result)
        self.assertGreater(statuses.get("SECURE", 0), 20, statuses)
        self.assertEqual(set(statuses) - {"SECURE", "VALID", "NOERROR", "NXDOMAIN"}, set(), statuses)
        # The control: with another key as the anchor nothing is secure (so SECURE above is not a default).
        other = tempfile.mkdtemp(prefix="gslbd-dnssec-viz-")
        try:
            ctl("dnssec", "keygen", ZONE, "--dir", other)
            with open(anchor, "w") as f:
                for name in os.listdir(other):
                    if name.endswith(".key"):
                        f.write(open(os.path.join(other, name)).read())
            self.assertNotIn("SECURE", dnsviz_statuses(dnsviz_grok(probe, anchor, grok)))
        finally:
            shutil.rmtree(other, ignore_errors=True)

    def test_tc_when_signed_answer_does_not_fit(self):
        plain = digp(self.g.port, "+norec", "+bufsize=512", "+ignore", "big." + ZONE, "TXT")
        self.assertNotIn("tc", flags(plain), plain)
        signed = digp(self.g.port, "+norec", "+dnssec", "+bufsize=512", "+ignore", "big." + ZONE, "TXT")
        self.assertIn("tc", flags(signed), signed)
        self.assertNotIn("RRSIG", signed)  # never the RRset without its signature, nor the other way round
        tcp = run("kdig", "-p", self.g.port, "@127.0.0.1", "+dnssec", "+tcp", "big." + ZONE, "TXT").stdout
        self.assertIn("RRSIG", tcp)


class SignedNsec3(Signed):
    """The same checks with denial = "nsec3" (RFC 9276: iterations 0, no salt)."""
    DENIAL = "nsec3"

    def test_nsec3param_at_apex(self):
        out = digp(self.g.port, "+norec", "+dnssec", ZONE, "NSEC3PARAM")
        self.assertRegex(out, r"NSEC3PARAM\s+1 0 0 -", out)


class Resign(unittest.TestCase):
    def test_signatures_renewed_without_reload(self):
        g = Gslbd(files={"zone.db": SIGNED_ZONE}, wait_zone=ZONE)
        ctl("dnssec", "keygen", ZONE, "--dir", g.path("keys"))
        g.raw_config = gslb_config(g.port, validity=10)
        with g:
            def expiry():
                out = digp(g.port, "+norec", "+dnssec", "static." + ZONE, "A")
                m = re.search(r"RRSIG\s+A \d+ \d+ \d+ (\d{14})", out)
                self.assertTrue(m, out)
                return m.group(1)
            first = expiry()
            deadline = time.monotonic() + 12
            while expiry() == first and time.monotonic() < deadline:
                time.sleep(0.5)
            self.assertNotEqual(expiry(), first, g.stderr())
            self.assertIn("re-signing", g.stderr())

    @staticmethod
    def soa_serial(port):
        out = digp(port, "+norec", "+short", ZONE, "SOA")
        return int(out.split()[2])

    @staticmethod
    def rrsig_times(port, name="static." + ZONE):
        """(expiration, inception) of the RRSIG over `name`'s A, as dig prints them (YYYYMMDDHHMMSS)."""
        out = digp(port, "+norec", "+dnssec", name, "A")
        m = re.search(r"RRSIG\s+A \d+ \d+ \d+ (\d{14}) (\d{14})", out)
        assert m, out
        return m.group(1), m.group(2)

    @unittest.skipUnless(shutil.which("knotd"), "knotd is not installed")
    def test_secondary_follows_the_resign(self):
        # A re-sign serves a greater serial (serial_policy = "unixtime", the default for signed zones) and
        # NOTIFYs the secondary, so Knot transfers the new signatures instead of serving the old ones until
        # they expire. The file's serial (2024010101) is ahead of unix time in RFC 1982, so each re-sign is +1.
        g = Gslbd(files={"zone.db": SIGNED_ZONE}, wait_zone=ZONE)
        ctl("dnssec", "keygen", ZONE, "--dir", g.path("keys"))
        k = Knot(ZONE, g.port)
        g.raw_config = gslb_config(g.port, validity=12, zone_extra=f'notify = ["127.0.0.1:{k.port}"]\n',
                                   server_extra='state_dir = "state"\n')
        with g, k:
            k.wait_zone()
            first = self.soa_serial(g.port)
            self.assertGreaterEqual(first, 2024010101, g.stderr())
            deadline = time.monotonic() + 8
            while self.soa_serial(g.port) == first and time.monotonic() < deadline:
                time.sleep(0.2)
            second = self.soa_serial(g.port)
            self.assertEqual(second, first + 1, g.stderr())
            # Knot is told (NOTIFY), transfers, and serves the new serial and the new signatures at once,
            # long before its SOA refresh (3600 s).
            # Later re-signs follow every second or so here (each renews the signatures due within a sixteenth
            # of the validity): Knot is compared with gslbd once both serve the same serial.
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                ks = self.soa_serial(k.port)
                if ks >= second and ks == self.soa_serial(g.port) and \
                        self.rrsig_times(k.port) == self.rrsig_times(g.port):
                    break
                time.sleep(0.2)
            self.assertGreaterEqual(self.soa_serial(k.port), second, k.stderr() + g.stderr())
            self.assertRegex(g.stderr(), rf"notify {re.escape(ZONE)} serial {second} to 127\.0\.0\.1:{k.port}: "
                                         r"acknowledged")
            # The transferred zone is the re-signed one, and it verifies (signatures, chain, serial).
            text = digp(g.port, ZONE, "AXFR", "+nocmd", "+nostats")
            m = re.search(rf"(?m)^{re.escape(ZONE)}\s+\d+\s+IN\s+SOA\s+\S+ \S+ (\d+) ", text)
            self.assertTrue(m, text)
            self.assertGreaterEqual(int(m.group(1)), second)
            path = g.path("axfr.txt")
            with open(path, "w") as f:
                f.write(text)
            p = run("ldns-verify-zone", path)
            self.assertEqual(p.returncode, 0, p.out)
            with open(g.path("state/zone-serials.json")) as f:
                self.assertGreaterEqual(json.load(f)["zones"][ZONE], second)

    @unittest.skipUnless(shutil.which("knotd"), "knotd is not installed")
    def test_dnssec_off_never_sends_the_serial_back(self):
        # The new-user trial: signed, every reload served a serial above the file's (2024010101 is ahead of
        # unix time, so +1 each); then dnssec = false with serial_policy "keep" (the default). gslbd served the
        # file's serial again, which Knot (RFC 1982) took for an old one: it kept the signed zone and its
        # DNSKEY, silently, while gslbd logged the NOTIFY as acknowledged.
        g = Gslbd(files={"zone.db": SIGNED_ZONE}, wait_zone=ZONE)
        ctl("dnssec", "keygen", ZONE, "--dir", g.path("keys"))
        k = Knot(ZONE, g.port)
        conf = gslb_config(g.port, zone_extra=f'notify = ["127.0.0.1:{k.port}"]\n',
                           server_extra='state_dir = "state"\n')
        g.raw_config = conf

        def wait_serial(port, want, timeout=6):
            deadline = time.monotonic() + timeout
            while self.soa_serial(port) != want and time.monotonic() < deadline:
                time.sleep(0.2)
            return self.soa_serial(port)

        with g, k:
            k.wait_zone()
            g.reload()
            signed = wait_serial(g.port, 2024010102)
            self.assertEqual(signed, 2024010102, g.stderr())
            self.assertEqual(wait_serial(k.port, signed), signed, k.stderr() + g.stderr())
            self.assertIn("DNSKEY", digp(k.port, "+norec", ZONE, "DNSKEY"))
            g.write("gslbd.toml", conf.replace("dnssec = true\n", "dnssec = false\n"))
            g.reload()
            # Not the file's 2024010101: one above what was served, so Knot transfers the unsigned zone.
            self.assertEqual(wait_serial(g.port, signed + 1), signed + 1, g.stderr())
            self.assertEqual(wait_serial(k.port, signed + 1), signed + 1, k.stderr() + g.stderr())
            self.assertNotIn("DNSKEY", digp(k.port, "+norec", "+noall", "+answer", ZONE, "DNSKEY"))
            self.assertRegex(g.stderr(), rf"warn.*zone {re.escape(ZONE)}: serving serial {signed + 1}, not the "
                                         r"file's 2024010101: it is not greater than the 2024010102 served before")
            # A reload with nothing changed keeps that serial (no transfer at every reload) and warns again.
            g.reload()
            deadline = time.monotonic() + 5
            while g.stderr().count("not the file's 2024010101") < 2 and time.monotonic() < deadline:
                time.sleep(0.1)
            self.assertEqual(g.stderr().count("not the file's 2024010101"), 2, g.stderr())
            self.assertEqual(self.soa_serial(g.port), signed + 1)
            with open(g.path("state/zone-serials.json")) as f:
                self.assertEqual(json.load(f)["zones"][ZONE], signed + 1)

    def test_restart_never_serves_an_older_serial(self):
        # serial_policy = "increment" counts from the file's serial; only state_dir carries it over a restart.
        g = Gslbd(files={"zone.db": SIGNED_ZONE}, wait_zone=ZONE)
        ctl("dnssec", "keygen", ZONE, "--dir", g.path("keys"))
        g.raw_config = gslb_config(g.port, zone_extra='serial_policy = "increment"\n',
                                   server_extra='state_dir = "state"\n')
        with g:
            self.assertEqual(self.soa_serial(g.port), 2024010101)
            g.reload()
            deadline = time.monotonic() + 5
            while self.soa_serial(g.port) == 2024010101 and time.monotonic() < deadline:
                time.sleep(0.1)
            self.assertEqual(self.soa_serial(g.port), 2024010102, g.stderr())
            g.stop()
            g.start()
            self.assertEqual(self.soa_serial(g.port), 2024010103, g.stderr())


if __name__ == "__main__":
    run_tests()
