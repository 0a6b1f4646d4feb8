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

import json
import os
import socket
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (Gslbd, TcpClient, build_query, decode_msg, free_port, run_tests, udp_query)  # noqa: E402

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


TOKEN = "e2e-untrusted-token-8c1d"


def raw_http(port, data, timeout=5.0):
    """Sends `data` as it is over one TCP connection; returns (status, headers text, body) of the reply, read
    until the server closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(data)
        out = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            out += chunk
    head, _, body = out.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/") else 0
    return status, head.decode("latin-1"), body


class ControlWire(unittest.TestCase):
    """A NUL byte in the request line or a header, over a real connection (issue 10). evhttp reads header
    lines as C strings: "Authorization: Bearer TOKEN\\0junk" used to arrive as a valid token and drain the site.
    The control connection's filter now refuses such a head with 400 before evhttp parses it."""

    @classmethod
    def setUpClass(cls):
        cls.cport = free_port()
        cls.d = Gslbd(zones={"u.test.": ZONE}, files={"control.token": TOKEN + "\n"}, server={"workers": 1},
                      ipv6=False)
        cls.d.raw_config = (cls.d.make_config() +
                            f'\n[control]\nlisten = "127.0.0.1:{cls.cport}"\ntoken_file = "control.token"\n'
                            '\n[site.east]\n\n[hostname."www.u.test."]\npolicy = ["health", "random"]\n'
                            '[[hostname."www.u.test.".service]]\naddress = "192.0.2.10"\nsite = "east"\n')
        cls.d.__enter__()
        deadline = time.monotonic() + 5
        while True:
            try:
                if cls.get("/v1/status")[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError("control API did not answer:\n" + cls.d.stderr())
            time.sleep(0.05)

    @classmethod
    def tearDownClass(cls):
        cls.d.__exit__(None, None, None)

    @classmethod
    def get(cls, path):
        return raw_http(cls.cport, f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())

    def admin(self):
        code, _, body = self.get("/v1/status")
        self.assertEqual(code, 200)
        return json.loads(body)["sites"]

    def test_1_nul_refused_on_the_wire_nothing_changes(self):
        before = self.admin()
        drain = b"POST /v1/sites/east/drain HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
        auth = b"Authorization: Bearer " + TOKEN.encode()
        cases = {
            "in Authorization after the token": drain + auth + b"\0junk\r\nContent-Length: 0\r\n\r\n",
            "at the end of the request line": b"POST /v1/sites/east/drain HTTP/1.1\0x\r\nHost: x\r\nConnection: close\r\n" + auth +
                                              b"\r\nContent-Length: 0\r\n\r\n",
            "in another header": drain + auth + b"\r\nX-Note: a\0b\r\nContent-Length: 0\r\n\r\n",
            "in a header name": drain + auth + b"\r\nX\0: b\r\nContent-Length: 0\r\n\r\n",
        }
        for what, data in cases.items():
            with self.subTest(what):
                code, head, body = raw_http(self.cport, data)
                self.assertEqual(code, 400, head)
                self.assertIn("NUL", json.loads(body)["error"])
        # The same head sent one byte at a time, up to the NUL (the filter holds a head back until it is whole
        # or refused; the server answers and closes at the NUL).
        with socket.create_connection(("127.0.0.1", self.cport), timeout=5) as s:
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            trickle = cases["in Authorization after the token"]
            for b in trickle[:trickle.index(b"\0") + 1]:
                s.sendall(bytes([b]))
            reply = b""
            while chunk := s.recv(65536):
                reply += chunk
        self.assertTrue(reply.startswith(b"HTTP/1.1 400"), reply[:200])
        self.assertEqual(self.admin(), before)
        # Without the NUL the request drains the site: the refusals above were of the NUL alone.
        code, head, _ = raw_http(self.cport, drain + auth + b"\r\nContent-Length: 0\r\n\r\n")
        self.assertEqual(code, 200, head)
        self.assertIn("Connection: close", head)
        self.assertNotEqual(self.admin(), before)
        code, _, _ = raw_http(self.cport, b"POST /v1/sites/east/enable HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + auth +
                              b"\r\nContent-Length: 0\r\n\r\n")
        self.assertEqual(code, 200)

    def test_2_long_head_and_body(self):
        # Exactly the 64 KiB limit without the empty line that ends a head (no more: the server closes once it
        # has answered, and unread bytes would turn its close into a reset).
        head = b"GET /v1/status HTTP/1.1\r\nX: "
        code, _, body = raw_http(self.cport, head + b"a" * (65536 - len(head)))
        self.assertEqual(code, 431)
        self.assertIn("longer", json.loads(body)["error"])
        # A NUL in a body is not the head: the report's JSON refuses it (400), the daemon is fine.
        code, _, body = raw_http(self.cport, b"POST /v1/sites/east/report HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: "
                                 b"Bearer " + TOKEN.encode() + b"\r\nContent-Length: 9\r\n\r\n{\"cpu\":\0}")
        self.assertEqual(code, 400)
        self.assertEqual(self.get("/v1/status")[0], 200)
        self.assertNotIn("runtime error:", self.d.stderr())


if __name__ == "__main__":
    run_tests()
