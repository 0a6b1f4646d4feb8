#!/usr/bin/env python3
"""End-to-end tests of client-aware answers (doc/design.md "Client-aware answers"): EDNS Client Subnet (RFC 7871) with dig +subnet and raw
wire queries; topology (nets and a GeoIP mmdb generated here), nearest, the hashed chooser, and explain.
"""
import os
import re
import struct
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import DATA, Gslbd, build_query, decode_msg, run_tests, udp_query  # noqa: E402

ORIGIN = "gslb.example.com."
E, W = "192.0.2.10", "198.51.100.10"

ZONE = f"""$ORIGIN {ORIGIN}
$TTL 300
@ IN SOA ns1 hostmaster 2024010101 3600 900 604800 120
@ IN NS ns1
ns1 IN A 192.0.2.53
static IN A 192.0.2.77
""" + "".join(f"{h} IN A {a}\n" for h in ("plain", "topo", "near", "hash") for a in (E, W))

GEO = """198.51.100.0/24 EU DE BE 64500 52.52 13.40
203.0.113.0/24 NA US NY - 40.71 -74.01
2001:db8:100::/40 EU FR - - 48.85 2.35
"""


def hostname(name, policy, extra=""):  # noqa: E302
    fq = f"{name}.{ORIGIN}"
    out = f'\n[hostname."{fq}"]\npolicy = {policy}\n{extra}'
    for a, site in ((E, "east"), (W, "west")):
        out += f'[[hostname."{fq}".service]]\naddress = "{a}"\nsite = "{site}"\n'
    return out


def config(port, ecs=True):
    return (f'[server]\nlisten = ["127.0.0.1:{port}"]\nworkers = 1\necs = {"true" if ecs else "false"}\n\n'
            f'[[zone]]\nname = "{ORIGIN}"\nfile = "zone.db"\n\n'
            '[site.east]\n[site.west]\n'
            + hostname("plain", '["health", "random"]'))


def subnet(r):
    """The CLIENT-SUBNET dig printed: 'ADDR/SOURCE/SCOPE', or None."""
    m = re.search(r"CLIENT-SUBNET: (\S+)", r.text)
    return m.group(1) if m else None


def ecs_opt(family, source, scope, addr):
    return struct.pack("!HHHBB", 8, 4 + len(addr), family, source, scope) + addr


class Ecs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.g = Gslbd(files={"zone.db": ZONE}, wait_zone=ORIGIN)
        cls.g.raw_config = config(cls.g.port)
        cls.g.__enter__()

    @classmethod
    def tearDownClass(cls):
        cls.g.__exit__(None, None, None)

    def test_static_name_scope_zero(self):
        r = self.g.dig("static." + ORIGIN, "A", "+subnet=198.51.100.0/24")
        self.assertEqual(r.rcode, "NOERROR", r.text)
        self.assertEqual(subnet(r), "198.51.100.0/24/0", r.text)

    def test_policy_without_client_stages_scope_zero(self):
        r = self.g.dig("plain." + ORIGIN, "A", "+subnet=2001:db8:100::/48")
        self.assertEqual(r.rcode, "NOERROR", r.text)
        self.assertEqual(subnet(r), "2001:db8:100::/48/0", r.text)

    def test_no_ecs_no_echo(self):
        r = self.g.dig("plain." + ORIGIN, "A")
        self.assertIsNone(subnet(r), r.text)

    def test_malformed_formerr(self):
        bad = [ecs_opt(1, 33, 0, b"\x01\x02\x03\x04\x05"),   # source longer than the address
               ecs_opt(1, 22, 0, b"\xc6\x33\x65"),           # bits set past the source prefix
               ecs_opt(7, 8, 0, b"\x0a")]                    # unknown family
        for opt in bad:
            reply = udp_query(self.g.port, build_query("plain." + ORIGIN, "A", edns=True, edns_opts=opt))
            self.assertIsNotNone(reply)
            m = decode_msg(reply)
            self.assertEqual(m.rcode, "FORMERR", opt.hex())
            self.assertEqual(m.an, 0)
            self.assertIsNotNone(m.opt)
            self.assertEqual(m.opt["options"], [])

    def test_exact_echo_bytes(self):
        reply = udp_query(self.g.port, build_query("static." + ORIGIN, "A", edns=True,
                                                   edns_opts=ecs_opt(1, 20, 0, b"\xc6\x33\x60")))
        m = decode_msg(reply)
        self.assertEqual(m.opt["options"], [(8, b"\x00\x01\x14\x00\xc6\x33\x60")])


def make_mmdb(path):
    subprocess.run(["perl", os.path.join(DATA, "make_mmdb.pl"), path], input=GEO, text=True, check=True,
                   timeout=60)


def topo_config(port, cport):
    return (f'[server]\nlisten = ["127.0.0.1:{port}"]\nworkers = 1\n\n'
            f'[control]\nlisten = "127.0.0.1:{cport}"\ntoken_file = "control.token"\n\n'
            f'[[zone]]\nname = "{ORIGIN}"\nfile = "zone.db"\n\n'
            '[topology]\ngeoip = "geo.mmdb"\nnets_file = "nets.txt"\n'
            'nets = { "10.20.0.0/16" = "lab" }\n\n'
            '[site.east]\nregion = "US"\nlocation = [40.71, -74.01]\n'
            '[site.west]\nregion = "continent:EU"\nlocation = [50.11, 8.68]\n'
            + hostname("topo", '["health", "topology", "random"]',
                       'topology = { lab = ["west"], eu = ["west", "east"], default = ["east", "west"] }\n')
            + hostname("near", '["health", "topology", "random"]', 'topology = "nearest"\n')
            + hostname("hash", '["health", "hashed"]'))


class Topology(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        from harness import free_port
        cls.cport = free_port()
        cls.g = Gslbd(files={"zone.db": ZONE, "control.token": "client-e2e-token\n",
                             "nets.txt": "# big tables live in a file\n10.30.0.0/16 lab\n"},
                      wait_zone=ORIGIN)
        make_mmdb(cls.g.path("geo.mmdb"))
        cls.g.raw_config = topo_config(cls.g.port, cls.cport)
        cls.g.__enter__()

    @classmethod
    def tearDownClass(cls):
        cls.g.__exit__(None, None, None)

    def answers(self, name, sub, n=12):
        seen, scopes = set(), set()
        for _ in range(n):
            r = self.g.dig(name + "." + ORIGIN, "A", "+subnet=" + sub)
            self.assertEqual(r.rcode, "NOERROR", r.text)
            seen |= {x.rdata for x in r.rrs("answer", "A")}
            scopes.add(subnet(r))
        return seen, scopes

    def test_nets_region(self):
        self.assertEqual(self.answers("topo", "10.20.3.0/24"), ({W}, {"10.20.3.0/24/16"}))
        self.assertEqual(self.answers("topo", "10.30.3.0/24", 4)[0], {W})  # from nets_file

    def test_geoip_continent_and_default(self):
        self.assertEqual(self.answers("topo", "198.51.100.0/24"), ({W}, {"198.51.100.0/24/24"}))
        self.assertEqual(self.answers("topo", "203.0.113.0/24")[0], {E})  # US: default list
        self.assertEqual(self.answers("topo", "2001:db8:100::/48")[0], {W})

    def test_unknown_client_gets_the_default(self):
        # In no net and no database entry: the table's default, as for a client located where the table
        # names nothing (it used to pass every candidate).
        seen, _ = self.answers("topo", "192.0.2.0/24", 20)
        self.assertEqual(seen, {E})

    def test_nearest(self):
        self.assertEqual(self.answers("near", "198.51.100.0/24")[0], {W})  # Berlin: Frankfurt
        self.assertEqual(self.answers("near", "203.0.113.0/24")[0], {E})   # New York

    def test_hashed_persistent_with_scope(self):
        picks = {}
        for i in range(16):
            seen, scopes = self.answers("hash", f"100.64.{i}.0/24", 3)
            self.assertEqual(len(seen), 1, seen)
            self.assertEqual(scopes, {f"100.64.{i}.0/24/24"})
            picks[i] = seen.pop()
        self.assertEqual(set(picks.values()), {E, W})


    def explain(self, query):
        import urllib.request
        with urllib.request.urlopen(f"http://127.0.0.1:{self.cport}/v1/explain?{query}", timeout=5) as r:
            return r.read().decode()

    def test_explain_api(self):
        import json
        j = json.loads(self.explain("name=topo.gslb.example.com&type=A&client=10.0.0.1&ecs=198.51.100.0/24"))
        self.assertEqual([st["stage"] for st in j["stages"]], ["health", "topology"])
        self.assertEqual(j["location"]["geoip"]["country"], "DE")
        self.assertEqual(j["stages"][1]["bar"]["list_key"], "eu")
        self.assertEqual(j["stages"][1]["kept"], ["west/" + W])
        self.assertEqual(j["answer"]["records"], [W])
        self.assertEqual(j["answer"]["ecs_scope"], 24)
        text = self.explain("name=topo.gslb.example.com&client=203.0.113.5&format=text")
        self.assertIn("2. topology", text)
        self.assertIn("answer", text)

    def test_gslbctl_explain(self):
        ctl = os.environ.get("GSLBCTL")
        if not ctl:
            self.skipTest("GSLBCTL not set")
        p = subprocess.run([ctl, "explain", "hash." + ORIGIN, "--client", "192.0.2.1", "--ecs", "100.64.9.0/24",
                            "-c", self.g.config_path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=20)
        self.assertEqual(p.returncode, 0, p.stdout)
        self.assertIn("hashed (chooser)", p.stdout)
        self.assertIn("ECS scope /24", p.stdout)
        # hash has no AAAA service: explain says what the server sends, NODATA with the SOA at its negative TTL
        # (min(300, 120), RFC 2308 §3), and dig gets exactly that.
        p = subprocess.run([ctl, "explain", "hash." + ORIGIN, "--client", "192.0.2.1", "--type", "AAAA",
                            "-c", self.g.config_path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=20)
        self.assertEqual(p.returncode, 0, p.stdout)
        self.assertIn(f"answer   NOERROR NODATA, SOA {ORIGIN} ttl 120 in authority\n", p.stdout)
        r = self.g.dig("hash." + ORIGIN, "AAAA")
        self.assertEqual((r.rcode, r.answer), ("NOERROR", []), r.text)
        self.assertEqual([(rr.rtype, rr.ttl) for rr in r.authority], [("SOA", 120)], r.text)
        p = subprocess.run([ctl, "explain", "topo." + ORIGIN, "--client", "not-an-ip", "-c", self.g.config_path],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=20)
        self.assertEqual(p.returncode, 1, p.stdout)
        self.assertIn("not an IPv4 or IPv6 address", p.stdout)


class EcsOff(unittest.TestCase):
    def test_ecs_false_ignores_the_option(self):
        g = Gslbd(files={"zone.db": ZONE}, wait_zone=ORIGIN)
        g.raw_config = config(g.port, ecs=False)
        with g:
            r = g.dig("plain." + ORIGIN, "A", "+subnet=198.51.100.0/24")
            self.assertEqual(r.rcode, "NOERROR", r.text)
            self.assertIsNone(subnet(r), r.text)
            reply = udp_query(g.port, build_query("plain." + ORIGIN, "A", edns=True,
                                                  edns_opts=ecs_opt(7, 8, 0, b"\x0a")))
            self.assertEqual(decode_msg(reply).rcode, "NOERROR")


if __name__ == "__main__":
    run_tests()
