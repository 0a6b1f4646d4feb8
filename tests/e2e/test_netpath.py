#!/usr/bin/env python3
"""End-to-end tests of the UDP and TCP socket paths (issue 16): answers larger than the link's MTU go out as TC
instead of fragments, SIGTERM stops a server busy with UDP promptly, and TCP clients that pipeline, ask one
query at a time, split their messages or read slowly all get every answer, in order.

The MTU test runs in a network namespace of its own (`unshare -rn`), whose loopback it sets to 1280 octets."""
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Gslbd, TcpClient, build_query, decode_msg, run_tests, udp_query  # noqa: E402

ZONE = "net.test."
BIG_TXT = "".join(f'big IN TXT "{i:03d}{"x" * 200}"\n' for i in range(15))  # ~3.2 KB of TXT
ZONE_TEXT = (f"$ORIGIN {ZONE}\n$TTL 300\n"
             f"@ 3600 IN SOA ns1.{ZONE} admin.{ZONE} 1 3600 900 604800 60\n"
             f"@ IN NS ns1\nns1 IN A 192.0.2.1\n"
             + "".join(f"h{i} IN A 10.0.{i >> 8}.{i & 255}\n" for i in range(300)) + BIG_TXT)

INNER = "--inner-small-mtu"


def in_small_mtu_netns():
    """True when this process runs in the namespace test_udp_answer_over_mtu made (loopback MTU 1280)."""
    return os.environ.get("GSLBD_NETPATH_INNER") == "1"


class UdpMtu(unittest.TestCase):
    def test_udp_answer_over_mtu_is_tc_not_fragments(self):
        """A 3 KB answer on a 1280-octet link: IP_PMTUDISC_PROBE makes the kernel refuse to fragment it, and
        the server sends the header and question with TC (RFC 9715 §3.1 R3). Before, the kernel fragmented it
        and the full answer arrived in pieces."""
        if in_small_mtu_netns():
            self._inner()
            return
        if not shutil.which("unshare") or not shutil.which("ip"):
            self.skipTest("unshare or ip missing")
        probe = subprocess.run(["unshare", "-rn", "true"], capture_output=True)
        if probe.returncode != 0:
            self.skipTest(f"no network namespaces here: {probe.stderr.decode().strip()}")
        env = dict(os.environ, GSLBD_NETPATH_INNER="1")
        cmd = ("ip link set lo up && ip link set lo mtu 1280 && exec " + sys.executable + " " +
               os.path.abspath(__file__) + " UdpMtu.test_udp_answer_over_mtu_is_tc_not_fragments")
        p = subprocess.run(["unshare", "-rn", "sh", "-c", cmd], capture_output=True, text=True, env=env,
                           timeout=60)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def _inner(self):
        with Gslbd(zones={ZONE: ZONE_TEXT}, server={"udp_payload_max": 4096}) as g:
            addrs = ["127.0.0.1"] + (["::1"] if g.ipv6 else [])
            for addr in addrs:
                q = build_query(f"big.{ZONE}", "TXT", qid=77, edns=True, udp_size=4096)
                t0 = time.monotonic()
                r = udp_query(g.port, q, addr=addr, timeout=2.0)
                self.assertIsNotNone(r, f"{addr}: no answer (dropped instead of TC)")
                m = decode_msg(r)
                self.assertEqual(m.id, 77)
                self.assertTrue(m.tc, f"{addr}: {len(r)} octets without TC: the kernel fragmented it")
                self.assertEqual(m.an, 0)
                self.assertIsNotNone(m.opt, f"{addr}: TC reply keeps the OPT record")
                self.assertLess(time.monotonic() - t0, 1.0)
                # Smaller answers still go out whole.
                small = decode_msg(udp_query(g.port, build_query(f"h1.{ZONE}", "A", edns=True), addr=addr))
                self.assertFalse(small.tc)
                self.assertEqual(small.an, 1)
            # Over TCP the whole answer comes back (the retry TC asks for).
            with TcpClient(g.port) as c:
                m = c.query(build_query(f"big.{ZONE}", "TXT", qid=78))
                self.assertEqual(m.an, 15)


if __name__ == "__main__":
    run_tests()
