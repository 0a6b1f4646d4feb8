#!/usr/bin/env python3
"""Differential test: gslbd and NSD serve tests/e2e/data/diff.zone; their answers must agree.

Compared per case: RCODE, AA, TC and the sorted RRsets of answer / authority / additional (owner lowercased,
TTL included).  When both set TC only the header is compared, then the same query is compared over TCP.
Where NSD deviates from an RFC, the case says so with the RFC and gslbd is held to the RFC instead.

Env E2E_NSD_ONLY=1 runs only the NSD side and prints its answers (useful before gslbd builds).
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (DATA, Gslbd, Nsd, diff_text, dig, kdig, response_key, run_tests,
                     strip_optional_apex_ns)  # noqa: E402

ORIGIN = "gslb.example.com."
ZONE_TEXT = open(os.path.join(DATA, "diff.zone")).read()

# Variants: transport / EDNS settings, as options for dig and kdig.
VARIANTS = {
    "udp":       {"dig": ["+ignore"],                          "kdig": ["+ignore", "+edns", "+bufsize=1232"]},
    "udp-noedns": {"dig": ["+ignore", "+noedns"],              "kdig": ["+ignore"]},
    "udp-do":    {"dig": ["+ignore", "+dnssec"],               "kdig": ["+ignore", "+dnssec", "+bufsize=1232"]},
    "udp-512":   {"dig": ["+ignore", "+bufsize=512"],          "kdig": ["+ignore", "+edns", "+bufsize=512"]},
    "tcp":       {"dig": ["+tcp"],                             "kdig": ["+tcp", "+edns"]},
    "tcp-noedns": {"dig": ["+tcp", "+noedns"],                 "kdig": ["+tcp"]},
}
TCP_OF = {"udp": "tcp", "udp-do": "tcp", "udp-512": "tcp", "udp-noedns": "tcp-noedns"}

# Special handling, each with the RFC that makes it legitimate:
#   "any":     RFC 8482 §4.1/§4.2: ANY may be answered with one RRset (or a synthesized HINFO "RFC8482"), and
#              implementations differ in which one they pick.  Over UDP gslbd must give a NOERROR, AA answer with
#              one RRset that NSD also has (or the HINFO); over TCP (§4.4) a full answer is allowed as well.
#   "rfc9471": RFC 9471 §3: when all in-domain glue of a referral does not fit, TC MUST be set.  NSD 4.6 drops
#              the AAAA glue silently instead (no TC); gslbd must set TC, and the TCP answers must agree.
#   "trim":    RFC 2181 §9: additional data that does not fit is dropped without TC; which records survive is
#              implementation-defined, so compare all but the additional section, which must hold only
#              addresses of the answer's targets or the apex name servers.
#   "sibling": RFC 9471 §2.3: glue for name servers below a *sibling* delegation is optional (only in-domain
#              glue is required); compare everything but the additional section, which must be a subset of NSD's.
CASES = [
    # apex and plain data
    ("@", "SOA", ["udp", "tcp", "udp-noedns", "udp-do"]),
    ("@", "NS", ["udp", "tcp-noedns"]),
    ("@", "MX", ["udp", "udp-noedns"]),               # MX targets: mail in-zone gets A/AAAA, other.example not
    ("@", "TXT", ["udp"]),
    ("@", "A", ["udp", "tcp"]),                       # NODATA at the apex
    ("@", "DS", ["udp"]),                             # DS at the apex: NODATA (we are not the parent)
    ("www", "A", ["udp", "tcp", "udp-noedns", "udp-do"]),
    ("www", "AAAA", ["udp"]),
    ("www", "MX", ["udp", "tcp"]),                    # NODATA
    ("WwW.GsLb.ExAmPlE.CoM.", "A", ["udp"]),          # case-insensitive match
    ("www2", "A", ["udp"]),
    ("mixed.case", "TXT", ["udp"]),
    ("MIXED.Case", "TXT", ["udp"]),
    ("upper", "A", ["udp"]),                          # CNAME to a mixed-case owner
    ("ns1", "A", ["udp"]),
    ("mail", "AAAA", ["udp"]),                        # own TTL 600
    # negative answers
    ("nothere", "A", ["udp", "tcp", "udp-do"]),
    ("deep.nothere.www", "A", ["udp"]),
    ("gslb.example.com.", "TYPE65534", ["udp"]),
    # empty non-terminals
    ("ent", "A", ["udp", "tcp"]),
    ("c.ent", "TXT", ["udp"]),
    ("b.c.ent", "A", ["udp"]),
    ("a.b.c.ent", "A", ["udp"]),
    ("x.ent", "A", ["udp"]),
    ("x.c.ent", "A", ["udp"]),
    # wildcards
    ("x.w", "A", ["udp", "tcp", "udp-do"]),
    ("X.W", "TXT", ["udp"]),
    ("x.w", "MX", ["udp"]),                           # wildcard NODATA
    ("a.b.w", "A", ["udp"]),
    ("sub.w", "A", ["udp"]),
    ("sub.w", "TXT", ["udp"]),                        # exact match beats the wildcard: NODATA
    ("x.sub.w", "A", ["udp"]),                        # closest encloser sub.w has no wildcard: NXDOMAIN
    ("*.w", "A", ["udp"]),
    ("w", "A", ["udp"]),                              # w is an ENT
    ("x.wc", "A", ["udp", "tcp"]),                    # wildcard CNAME, owner = qname
    ("x.wc", "CNAME", ["udp"]),
    ("x.wc", "AAAA", ["udp"]),
    ("foo.wch", "A", ["udp"]),
    ("x.*.wch", "A", ["udp"]),
    ("y.*.wch", "A", ["udp"]),                        # NXDOMAIN: *.wch exists so no wildcard under it applies
    ("a.b.wch", "A", ["udp"]),
    ("q.d.went", "A", ["udp"]),
    ("d.went", "A", ["udp"]),
    ("went", "A", ["udp"]),
    ("q.x.went", "A", ["udp"]),
    ("x.wm", "MX", ["udp"]),
    ("x.wl", "A", ["udp"]),
    # CNAME chains
    ("c1", "A", ["udp", "tcp", "udp-noedns"]),
    ("c1", "CNAME", ["udp"]),
    ("c2", "AAAA", ["udp"]),
    ("c1", "MX", ["udp"]),
    ("loop1", "A", ["udp", "tcp"]),
    ("self", "A", ["udp"]),
    ("ext", "A", ["udp"]),
    ("dangling", "A", ["udp"]),
    ("tonodata", "TXT", ["udp"]),
    ("todel", "A", ["udp"]),
    # delegations
    ("del", "A", ["udp", "tcp", "udp-do"]),
    ("del", "NS", ["udp"]),
    ("del", "DS", ["udp", "tcp"]),
    ("ns.del", "A", ["udp"]),
    ("occluded.del", "A", ["udp"]),
    ("x.y.del", "AAAA", ["udp"]),
    ("del2", "A", ["udp"], "sibling"),
    ("nods", "A", ["udp"]),
    ("nods", "DS", ["udp"]),
    ("ns.nods", "A", ["udp"]),
    ("outonly", "A", ["udp"]),
    ("bigdel", "A", ["udp-noedns", "udp-512", "udp", "tcp-noedns"], "rfc9471"),
    ("x.bigdel", "AAAA", ["udp-noedns", "tcp-noedns"], "rfc9471"),
    ("x.del", "DS", ["udp"]),                        # below the cut: referral
    ("manymx", "MX", ["udp-noedns"], "trim"),
    ("manymx", "MX", ["udp", "tcp-noedns"]),
    # additional section for MX / SRV targets
    ("mx", "MX", ["udp", "tcp"]),
    ("_sip._tcp", "SRV", ["udp", "udp-noedns"]),
    # truncation
    ("big", "A", ["udp-noedns", "udp", "udp-512", "tcp-noedns"]),
    ("bigtxt", "TXT", ["udp", "udp-noedns", "udp-do", "tcp"]),
    # RFC 3597 and escapes
    ("unk", "TYPE65534", ["udp", "tcp"]),
    ("unk0", "TYPE65280", ["udp"]),
    ("unk", "A", ["udp"]),
    ("a\\.b", "A", ["udp"]),
    ("sp\\032ace", "A", ["udp"]),
    # outside every zone: REFUSED (gslbd adds EDE 20, RFC 8914 §4.21; NSD sends none)
    ("www.example.net.", "A", ["udp", "tcp", "udp-noedns"]),
    # minimal ANY (RFC 8482)
    ("www", "ANY", ["udp", "tcp"], "any"),
    ("@", "ANY", ["udp"], "any"),
]

NSD_ONLY = os.environ.get("E2E_NSD_ONLY") == "1"


def fqdn(name):
    if name == "@":
        return ORIGIN
    if name.endswith("."):
        return name
    return name + "." + ORIGIN


def answer_targets(resp):
    return {rr.rdata.split()[-1] for rr in resp.answer if rr.rtype in ("MX", "SRV", "NS")}


class DiffNsd(unittest.TestCase):
    nsd = None
    gslbd = None

    @classmethod
    def setUpClass(cls):
        cls.nsd = Nsd({ORIGIN: ZONE_TEXT})
        cls.nsd.__enter__()
        if not NSD_ONLY:
            try:
                # NSD adds the zone's NS RRset to positive answers; so does gslbd with minimal_responses = false.
                cls.gslbd = Gslbd(zones={ORIGIN: ZONE_TEXT},
                                  server={"axfr_allow": ["127.0.0.1"], "minimal_responses": False})
                cls.gslbd.__enter__()
            except BaseException:
                cls.nsd.close()
                raise

    @classmethod
    def tearDownClass(cls):
        if cls.gslbd:
            cls.gslbd.close()
        if cls.nsd:
            cls.nsd.close()

    def query(self, server, tool, qname, qtype, variant):
        fn = dig if tool == "dig" else kdig
        return fn(server.port, fqdn(qname), qtype, *VARIANTS[variant][tool])

    def compare(self, tool, qname, qtype, variant, special=None):
        n = self.query(self.nsd, tool, qname, qtype, variant)
        self.assertFalse(n.timeout, f"NSD timed out: {n.cmd}\n{n.text}")
        if NSD_ONLY:
            print(f"\n### {tool} {qname} {qtype} {variant}\n{n.text}")
            return
        g = self.query(self.gslbd, tool, qname, qtype, variant)
        where = f"{tool} {fqdn(qname)} {qtype} [{variant}]\n  gslbd: {g.cmd}"
        self.assertFalse(g.timeout or g.rcode is None, f"gslbd gave no answer: {where}\n{g.text}")
        nk, gk = response_key(n), response_key(g)
        # RFC 8914: NSD 4.6 sends no Extended DNS Error; gslbd adds one to its errors when the query had EDNS.
        # That is the one difference allowed: an EDE NSD also sent must be the same, and gslbd sends none on
        # a NOERROR or NXDOMAIN answer from the zone (none of these cases is a GSLB fallback).
        if n.ede != g.ede:
            allowed = not n.ede and g.edns and g.rcode in ("REFUSED", "NOTAUTH", "NOTIMP")
            self.assertTrue(allowed, f"EDE differs: nsd {n.ede}, gslbd {g.ede}: {where}\n{g.text}")

        if special == "any":
            # RFC 8482 §4: minimal ANY; NSD returns everything.
            self.assertEqual(g.rcode, "NOERROR", where)
            self.assertTrue(g.aa, where)
            types = {rr.rtype for rr in g.answer}
            self.assertTrue(all(rr.owner == fqdn(qname).lower() for rr in g.answer), where)
            if variant.startswith("tcp"):
                return  # RFC 8482 §4.4: over TCP a conventional (full) ANY answer is allowed too
            self.assertLessEqual(len(types), 1, f"{where}\nRFC 8482: one RRset expected, got {sorted(types)}")
            if types and types != {"HINFO"}:
                self.assertTrue(set(gk["answer"]) <= set(nk["answer"]), f"{where}\n{diff_text(nk, gk, 'nsd', 'gslbd')}")
            return
        if special == "rfc9471" and variant in ("udp-noedns", "udp-512"):
            self.assertTrue(g.tc, f"{where}\nRFC 9471 §3: in-domain glue does not fit, TC must be set\n{g.text}")
            self.assertEqual((g.rcode, g.aa, g.answer), ("NOERROR", False, []), where)
            self.compare(tool, qname, qtype, TCP_OF[variant])
            return
        if special == "trim":
            for k in ("rcode", "aa", "tc", "answer"):
                self.assertEqual(nk[k], gk[k], f"{where}\n{diff_text(nk, gk, 'nsd', 'gslbd')}\n{g.text}")
            ok = answer_targets(g) | {rr.rdata for rr in g.authority if rr.rtype == "NS"}
            bad = [rr for rr in g.additional if rr.owner not in ok or rr.rtype not in ("A", "AAAA")]
            self.assertEqual(bad, [], f"{where}\n{g.text}")
            self.assertFalse(g.tc, where)
            return
        if special == "sibling":
            # RFC 9471 §2.3: sibling glue optional.
            for k in ("rcode", "aa", "tc", "answer", "authority"):
                self.assertEqual(nk[k], gk[k], f"{where}\n{diff_text(nk, gk, 'nsd', 'gslbd')}")
            self.assertTrue(set(gk["additional"]) <= set(nk["additional"]),
                            f"{where}\n{diff_text(nk, gk, 'nsd', 'gslbd')}")
            return

        if n.tc and g.tc:
            # Content of a truncated UDP message is implementation-defined: compare the header, then TCP.
            self.assertEqual((n.rcode, n.aa), (g.rcode, g.aa), f"{where}\n{diff_text(nk, gk, 'nsd', 'gslbd')}")
            tv = TCP_OF[variant]
            self.compare(tool, qname, qtype, tv, special)
            return
        nk, gk = strip_optional_apex_ns(nk, n, ORIGIN), strip_optional_apex_ns(gk, g, ORIGIN)
        if nk != gk:
            self.fail(f"mismatch: {where}\n{diff_text(nk, gk, 'nsd', 'gslbd')}\n--- nsd ---\n{n.text}\n"
                      f"--- gslbd ---\n{g.text}")


def _make(tool, qname, qtype, variant, special):
    def t(self):
        self.compare(tool, qname, qtype, variant, special)
    return t


def _slug(s):
    return "".join(c if c.isalnum() else "_" for c in s)


_count = 0
for case in CASES:
    qname, qtype, variants = case[:3]
    special = case[3] if len(case) > 3 else None
    for v in variants:
        for tool in ("dig", "kdig"):
            _count += 1
            name = f"test_{_count:03d}_{tool}_{_slug(qname)}_{qtype}_{_slug(v)}"
            setattr(DiffNsd, name, _make(tool, qname, qtype, v, special))


if __name__ == "__main__":
    run_tests()
