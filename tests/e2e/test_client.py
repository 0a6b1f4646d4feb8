#!/usr/bin/env python3
"""End-to-end tests of client-aware answers (issue 13): EDNS Client Subnet (RFC 7871) with dig +subnet and raw
wire queries; topology (nets and a GeoIP mmdb generated here), nearest, the hashed chooser, and explain.
"""
import os
import re
import struct
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Gslbd, build_query, decode_msg, run_tests, udp_query  # noqa: E402

ORIGIN = "gslb.example.com."
E, W = "192.0.2.10", "198.51.100.10"

ZONE = f"""$ORIGIN {ORIGIN}
$TTL 300
@ IN SOA ns1 hostmaster 2024010101 3600 900 604800 120
@ IN NS ns1
ns1 IN A 192.0.2.53
static IN A 192.0.2.77
""" + "".join(f"{h} IN A {a}\n" for h in ("plain",) for a in (E, W))


def hostname(name, policy, extra=""):
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
