#!/usr/bin/env python3
"""Untrusted input on the wire (issue 10): the RFC answer matrix and the header-only crash.

Every opcode 0-15 x QDCOUNT 0, 1, 2 x UDP and TCP x with and without EDNS gets the RFC answer: NOTIMP for the
opcodes we do not implement (all but QUERY), FORMERR for a QUERY whose QDCOUNT is not 1, an answer otherwise;
responses (QR=1) get nothing. Each reply is well-formed: ID, opcode and RD echoed, the question echoed only when
exactly one came (QDCOUNT says so), an OPT exactly when the query had one. Afterwards the server still answers
and stops cleanly on SIGTERM: the 12-octet `00 00 08 00 ...` query used to corrupt the heap, and the next
SIGTERM aborted with "double free or corruption".

Run against the sanitizer build too (.ci/run): GSLBD=build-asan/server/gslbd python3 tests/e2e/test_untrusted.py
— any AddressSanitizer or UndefinedBehaviorSanitizer report in the daemon's stderr fails the test.
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (Gslbd, TcpClient, build_query, decode_msg, run_tests, udp_query)  # noqa: E402

ZONE = """$ORIGIN u.test.
$TTL 300
@    SOA ns1 host 1 3600 600 86400 60
@    NS  ns1
ns1  A   192.0.2.1
www  A   192.0.2.10
"""

# The exact bytes of the report: opcode 1 (IQUERY), QDCOUNT 0, nothing else.
CRASH = bytes.fromhex("000008000000000000000000")

SANITIZER_MARKS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:", "double free",
                   "corruption")


def matrix_query(qid, opcode, qd, edns, qr=0):
    return build_query("www.u.test.", "A", qid=qid, opcode=opcode, qr=qr, rd=1, edns=edns or None,
                       qdcount=qd, extra_questions=1 if qd == 2 else 0)


class Untrusted(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = Gslbd(zones={"u.test.": ZONE}, server={"workers": 1})
        cls.d.__enter__()

    @classmethod
    def tearDownClass(cls):
        cls.d.__exit__(None, None, None)

    def sanitizer_clean(self):
        err = self.d.stderr()
        for mark in SANITIZER_MARKS:
            self.assertNotIn(mark, err, err[-4000:])

    def check_reply(self, raw, qid, opcode, qd, edns, how):
        ctx = f"{how} opcode={opcode} qdcount={qd} edns={edns}"
        self.assertIsNotNone(raw, f"{ctx}: no reply")
        m = decode_msg(raw)  # parses, every counted record present, nothing trailing
        self.assertEqual(m.id, qid, ctx)
        self.assertTrue(m.qr, ctx)
        self.assertEqual(m.opcode, opcode, ctx)
        self.assertTrue(m.rd, ctx)
        want = "NOTIMP" if opcode != 0 else ("FORMERR" if qd != 1 else "NOERROR")
        self.assertEqual(m.rcode, want, ctx)
        self.assertEqual(m.qd, 1 if qd == 1 else 0, ctx)
        if qd == 1:
            self.assertEqual(m.question, [("www.u.test.", 1, 1)], ctx)
        self.assertEqual(m.opt is not None, bool(edns), ctx)
        self.assertLessEqual(m.opt_count, 1, ctx)
        if want == "NOERROR":
            self.assertTrue(m.aa, ctx)
            self.assertEqual([r[4] for r in m.answer], ["192.0.2.10"], ctx)
        else:
            self.assertFalse(m.aa, ctx)
            self.assertEqual((m.an, m.ns, m.ar - (1 if edns else 0)), (0, 0, 0), ctx)

    def test_1_matrix_udp(self):
        qid = 0x1000
        for opcode in range(16):
            for qd in (0, 1, 2):
                for edns in (False, True):
                    qid += 1
                    raw = udp_query(self.d.port, matrix_query(qid, opcode, qd, edns))
                    self.check_reply(raw, qid, opcode, qd, edns, "udp")
        self.sanitizer_clean()

    def test_2_matrix_tcp(self):
        # One connection, every query pipelined in one write, then the replies in order.
        cases = []
        qid = 0x2000
        for opcode in range(16):
            for qd in (0, 1, 2):
                for edns in (False, True):
                    qid += 1
                    cases.append((qid, opcode, qd, edns))
        with TcpClient(self.d.port) as c:
            c.send_raw(b"".join(TcpClient.frame(matrix_query(*k)) for k in cases))
            for k in cases:
                self.check_reply(c.recv_msg(), *k, how="tcp")
        self.sanitizer_clean()

    def test_3_responses_are_dropped(self):
        for opcode in (0, 1, 2, 4, 5, 15):
            for qd in (0, 1, 2):
                q = matrix_query(0x3000 + opcode, opcode, qd, True, qr=1)
                self.assertIsNone(udp_query(self.d.port, q, timeout=0.3), f"udp opcode={opcode} qd={qd}")
        with TcpClient(self.d.port) as c:
            c.send_msg(matrix_query(0x3100, 0, 1, False, qr=1))
            c.send_msg(matrix_query(0x3101, 0, 1, False))
            self.check_reply(c.recv_msg(), 0x3101, 0, 1, False, "tcp after a dropped response")

    def test_4_the_reported_bytes(self):
        for raw in (udp_query(self.d.port, CRASH), None):
            if raw is None:
                with TcpClient(self.d.port) as c:
                    c.send_msg(CRASH)
                    raw = c.recv_msg()
            self.assertEqual(raw, bytes.fromhex("000088040000000000000000"))
        # A stream of them (what killed the server), each answered.
        answered = 0
        for i in range(300):
            q = bytes([i >> 8, i & 0xFF]) + CRASH[2:]
            answered += udp_query(self.d.port, q, timeout=1.0) is not None
        self.assertEqual(answered, 300)
        self.sanitizer_clean()

    def test_5_still_answers_then_stops_cleanly(self):
        raw = udp_query(self.d.port, matrix_query(0x5000, 0, 1, False))
        self.check_reply(raw, 0x5000, 0, 1, False, "udp after the matrix")
        self.d.stop()  # SIGTERM: exit 0 within 5 s, or DaemonError with the log
        self.sanitizer_clean()


if __name__ == "__main__":
    run_tests()
