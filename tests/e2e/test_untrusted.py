#!/usr/bin/env python3
"""Untrusted input on the wire (doc/testing.md): the RFC answer matrix and the header-only crash.

Every opcode 0-15 x QDCOUNT 0, 1, 2 x UDP and TCP x with and without EDNS gets the RFC answer: NOTIMP for the
opcodes we do not implement (all but QUERY), FORMERR for a QUERY whose QDCOUNT is not 1, an answer otherwise;
responses (QR=1) get nothing. Each reply is well-formed: ID, opcode and RD echoed, the question echoed only when
exactly one came (QDCOUNT says so), an OPT exactly when the query had one. Afterwards the server still answers
and stops cleanly on SIGTERM: the 12-octet `00 00 08 00 ...` query used to corrupt the heap, and the next
SIGTERM aborted with "double free or corruption".

The control API's connections (ControlWire, ControlLarge): a NUL byte or an overlong head is refused on the wire;
large responses reach a client that asks late, has a small window or reads slowly, and one that stops reading is
let go.

Run against the sanitizer build too (.ci/run): GSLBD=build-asan/server/gslbd python3 tests/e2e/test_untrusted.py
— any AddressSanitizer or UndefinedBehaviorSanitizer report in the daemon's stderr fails the test.
"""

import json
import os
import re
import socket
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (Gslbd, TcpClient, build_query, decode_msg, free_port, run_tests, udp_query,  # noqa: E402
                     wait_for)

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


def http_get(port, path):
    return raw_http(port, f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())


class ControlWire(unittest.TestCase):
    """A NUL byte in the request line or a header, over a real connection (doc/testing.md). evhttp reads header
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
        return http_get(cls.cport, path)

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

    def test_3_errors_evhttp_makes_itself_are_json(self):
        """Requests evhttp refuses before any handler runs came back as its HTML page ("<H1>Bad Request</H1>"),
        where the API promises {"error": …} (found by fuzzing the control API). Each is now JSON that says what
        was wrong, with evhttp's status (a malformed chunked body is 400, not 413)."""
        post = b"POST /v1/reload HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
        cases = [
            ("malformed request line", b"GARBAGE\r\n\r\n", 400,
             'the request line "GARBAGE" is not METHOD PATH HTTP/1.1'),
            ("HTTP/9", b"GET /v1/status HTTP/9\r\nHost: x\r\n\r\n", 400, 'HTTP version "HTTP/9"'),
            ("unknown method", b"FOO /v1/status HTTP/1.1\r\nHost: x\r\n\r\n", 501,
             'method "FOO" is not one the control API knows'),
            ("Content-Length: -1", post + b"Content-Length: -1\r\n\r\n", 400,
             'Content-Length "-1" is not a number of octets'),
            ("body over 1 MiB", post + b"Content-Length: 2000000\r\n\r\n", 413,
             "the body (Content-Length 2000000) is over the 1048576 octets"),
            ("malformed chunked body", post + b"Transfer-Encoding: chunked\r\n\r\nZZ\r\n", 400,
             "the chunked body is malformed"),
            ("chunked body over 1 MiB", post + b"Transfer-Encoding: chunked\r\n\r\n200000\r\n" + b"a" * 100,
             413, "the chunked body is over the 1048576 octets"),
            ("header line without a colon", b"GET /v1/status HTTP/1.1\r\nHost: x\r\nNoColonHere\r\n\r\n", 400,
             'the header line "NoColonHere" is not NAME: VALUE'),
        ]
        for what, data, status, error in cases:
            with self.subTest(what):
                code, head, body = raw_http(self.cport, data)
                self.assertEqual(code, status, head)
                self.assertRegex(head, r"(?mi)^Content-Type: application/json\r?$")
                self.assertIn(f"Content-Length: {len(body)}", head)
                self.assertIn(error, json.loads(body)["error"])
        # HEAD gets the status and fields, no body (RFC 9110 §9.3.2).
        code, head, body = raw_http(self.cport, b"HEAD /v1/status HTTP/1.1\r\nHost: x\r\nNoColonHere\r\n\r\n")
        self.assertEqual((code, body), (400, b""), head)
        self.assertRegex(head, r"(?mi)^Content-Type: application/json\r?$")
        # What evhttp writes itself and is no error passes as it is: "100 Continue", then the handler's answer.
        with socket.create_connection(("127.0.0.1", self.cport), timeout=5) as sock:
            sock.sendall(post + b"Expect: 100-continue\r\nContent-Length: 2\r\n\r\n")
            self.assertEqual(sock.recv(65536), b"HTTP/1.1 100 Continue\r\n\r\n")
            sock.sendall(b"{}")
            reply = b""
            while chunk := sock.recv(65536):
                reply += chunk
        self.assertTrue(reply.startswith(b"HTTP/1.1 401 Unauthorized\r\n"), reply)
        self.assertIn(b'{"error":"a valid bearer token is required', reply)
        self.assertEqual(self.get("/v1/status")[0], 200)
        self.assertNotIn("runtime error:", self.d.stderr())


class ControlLarge(unittest.TestCase):
    """Large control responses (/metrics, /v1/status, /v1/history, the page) to a client that is slow: one
    whose request comes after the server has seen the new connection writable, with a small receive window
    (so the socket fills before the response is out), stalled at the first socket-full until evhttp's 10 s
    timeout (the control filter waited for a write event nothing had asked for). A client reading a large
    response slowly was cut 10 s after its request; one that stops reading is still let go."""

    # x 8 services: /v1/status is some 5 MB, more than the kernel buffers for a connection (so a response
    # cut early shows), and each response below is far more than a 536-octet-MSS socket takes at once.
    HOSTS = 2000

    @classmethod
    def setUpClass(cls):
        cls.cport = free_port()
        zone = ZONE + "".join(f"h{k} A 10.{k >> 8}.{k & 255}.{j + 1}\n" for k in range(cls.HOSTS) for j in range(8))
        cls.d = Gslbd(zones={"u.test.": zone}, files={"control.token": TOKEN + "\n"}, server={"workers": 1},
                      ipv6=False)
        conf = [f'[control]\nlisten = "127.0.0.1:{cls.cport}"\ntoken_file = "control.token"\n']
        conf += [f"[site.s{j}]" for j in range(8)]
        for k in range(cls.HOSTS):
            conf.append(f'[hostname."h{k}.u.test."]')
            conf += [f'[[hostname."h{k}.u.test.".service]]\naddress = "10.{k >> 8}.{k & 255}.{j + 1}"\nsite = "s{j}"'
                     for j in range(8)]
        cls.d.raw_config = cls.d.make_config() + "\n" + "\n".join(conf) + "\n"
        cls.d.__enter__()
        # Answers for the history: every hostname asked once.
        for k in range(cls.HOSTS):
            udp_query(cls.d.port, build_query(f"h{k}.u.test.", "A", qid=k), timeout=1.0)
        cls.sizes = {}
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # a history sample (every 2 s) holds the answers
            code, _, body = http_get(cls.cport, "/v1/history")
            if code == 200 and len(json.loads(body)["series"]) >= cls.HOSTS:
                break
            time.sleep(0.2)

    @classmethod
    def tearDownClass(cls):
        cls.d.__exit__(None, None, None)

    PATHS = ["/metrics", "/v1/status", "/v1/history", "/", "/ui/page.js",
             "/v1/explain?name=h1.u.test.&type=A&client=192.0.2.7"]

    def slow_client(self):
        s = socket.socket()
        # A small window and small segments: the server's send buffer is sized from the MSS (Linux
        # tcp_sndbuf_expand), so some 50 kB fill the socket instead of some 3.9 MB.
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, 536)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.connect(("127.0.0.1", self.cport))
        return s

    def read_all(self, s, pause_at=(), pause=0.0, idle=8.0):
        """Reads until the server closes, pausing `pause` seconds once the reply reaches each of `pause_at`
        (octets). Returns the octets and whether the server closed (else `idle` seconds passed without one).
        `idle` stays under evhttp's 10 s timeout, the stall this class catches, and well above the seconds the
        control thread (SCHED_BATCH) may take to build a 5 MB /v1/status on a loaded 2-core machine."""
        s.settimeout(idle)
        out, pauses = bytearray(), sorted(pause_at)
        try:
            while True:
                if pauses and len(out) >= pauses[0]:
                    pauses.pop(0)
                    time.sleep(pause)
                chunk = s.recv(65536)
                if not chunk:
                    break
                out += chunk
        except socket.timeout:
            return bytes(out), False
        except ConnectionResetError:
            pass
        return bytes(out), True

    def whole(self, reply, what):
        head, _, body = reply.partition(b"\r\n\r\n")
        self.assertTrue(head.startswith(b"HTTP/1.1 200"), f"{what}: {head[:200]!r}")
        m = re.search(rb"\r\nContent-Length: (\d+)", head, re.I)
        self.assertIsNotNone(m, head)
        self.assertEqual(len(body), int(m.group(1)), f"{what}: {len(body)} of {m.group(1)} octets")
        return len(body)

    def test_1_request_after_the_connection_was_writable(self):
        for path in self.PATHS:
            with self.subTest(path), self.slow_client() as s:
                time.sleep(0.3)  # the server has accepted and seen the socket writable, with nothing to write
                s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
                time.sleep(0.3)  # the response fills the socket before the client reads
                reply, closed = self.read_all(s)
                self.assertTrue(closed, f"{path}: stalled after {len(reply)} octets")
                n = self.whole(reply, path)
                if path not in ("/ui/page.js", "/v1/explain?name=h1.u.test.&type=A&client=192.0.2.7"):
                    self.assertGreater(n, 80_000, f"{path}: too small to fill the socket")

    def server_side(self, client):
        """The state of the server's end of `client`'s connection, from /proc/net/tcp (the test and the
        daemon share the network namespace): "01" ESTABLISHED; "04" FIN_WAIT1 and the others once the
        daemon has closed it; None once the kernel has forgotten it."""
        local = "0100007F:%04X" % self.cport
        peer = "0100007F:%04X" % client.getsockname()[1]
        with open("/proc/net/tcp") as f:
            for line in f.read().splitlines()[1:]:
                fields = line.split()
                if fields[1] == local and fields[2] == peer:
                    return fields[3]
        return None

    def test_2_slow_reader_served_stopped_reader_let_go(self):
        code, _, body = http_get(self.cport, "/v1/status")
        self.assertEqual(code, 200)
        stopped = self.slow_client()
        with self.slow_client() as s:
            for c in (s, stopped):
                c.sendall(b"GET /v1/status HTTP/1.1\r\nHost: x\r\n\r\n")
            # Seen open first (a lookup that never found the socket would pass the wait below).
            self.assertEqual(self.server_side(stopped), "01", "the server's end of the stopped client")
            # 6 s without reading at the start and again after a tenth: the response takes 12 s, never 10 s
            # idle, and 10 s after the request most of it is still the server's to write.
            reply, closed = self.read_all(s, pause_at=(0, len(body) // 10), pause=6.0)
            self.assertTrue(closed)
            self.whole(reply, "slow reader")
        # The server gives up on `stopped` 10 s after its last progress, when it filled that socket: after
        # building two 8 MB responses, up to 3 s after the request on a loaded 2-core machine, so not always before the 12 s above (reading then was progress, and the whole response
        # came). Wait for the server to close its end without reading: a server that waits for a client that
        # stopped reading keeps it ESTABLISHED, and fails here.
        wait_for(lambda: self.server_side(stopped) != "01", 30, "a client that stopped reading was let go")
        with stopped:
            reply, closed = self.read_all(stopped)
            self.assertTrue(closed)
            self.assertLess(len(reply), len(body), "a client that stopped reading was waited for")
        self.assertEqual(http_get(self.cport, "/v1/status")[0], 200)

if __name__ == "__main__":
    run_tests()
