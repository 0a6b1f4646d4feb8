#!/usr/bin/env python3
"""End-to-end tests of gslbd's resource limits against hostile or broken clients (doc/testing.md): AXFR to clients
that do not read, the cap on concurrent transfers, TCP slowloris and a full connection table, zero-length TCP
messages, signals an operator may send, and control-API requests with bad bytes."""
import os
import signal
import socket
import struct
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import json  # noqa: E402

from harness import Gslbd, TcpClient, build_query, decode_msg, free_port, run_tests, udp_query  # noqa: E402


def simple_zone(origin, extra=""):
    return (f"$ORIGIN {origin}\n$TTL 300\n"
            f"@ 3600 IN SOA ns1.{origin} admin.{origin} 1 3600 900 604800 60\n"
            f"@ IN NS ns1\nns1 IN A 192.0.2.1\nwww IN A 192.0.2.2\n{extra}")


def rss_kb(pid, key="VmRSS"):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise AssertionError(f"no {key} for {pid}")


BIG_N = 100_000  # ~2.4 MB of AXFR: as much as a client that does not read would cost before the untrusted-input work, each
BIG = "big.test."
BIG_ZONE = simple_zone(BIG, "".join(f"h{i} IN A 10.{i >> 16}.{(i >> 8) & 255}.{i & 255}\n" for i in range(BIG_N)))
BIG_RECORDS = ({(f"h{i}.{BIG}", "A", f"10.{i >> 16}.{(i >> 8) & 255}.{i & 255}") for i in range(BIG_N)} |
               {(BIG, "NS", f"ns1.{BIG}"), (f"ns1.{BIG}", "A", "192.0.2.1"), (f"www.{BIG}", "A", "192.0.2.2")})


def stuck_axfr_client(port, qid):
    """Connects with a tiny receive window, asks for the AXFR and never reads."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.settimeout(3)
    s.connect(("127.0.0.1", port))
    q = build_query(BIG, "AXFR", qid=qid)
    s.sendall(struct.pack("!H", len(q)) + q)
    return s


def full_axfr(port, qid=7):
    """(rcode of the first message, the set of records between the SOAs, message count)."""
    with TcpClient(port, timeout=10) as c:
        c.send_msg(build_query(BIG, "AXFR", qid=qid))
        records, soas, msgs = set(), 0, 0
        while soas < 2:
            m = decode_msg(c.recv_msg())
            msgs += 1
            if m.rcode != "NOERROR" or m.id != qid:
                return m.rcode, records, msgs
            for name, _ttl, _cls, rtype, rdata in m.answer:
                if rtype == "SOA":
                    soas += 1
                else:
                    records.add((name, rtype, rdata))
        return "NOERROR", records, msgs


class AxfrLimits(unittest.TestCase):
    STUCK = 40

    def test_stuck_clients_cost_little_and_the_cap_holds(self):
        opts = {"axfr_max_concurrent": self.STUCK, "tcp_idle_timeout": 60}
        with Gslbd(zones={BIG: BIG_ZONE}, server=opts) as g:
            pid = g.proc.pid
            time.sleep(0.3)
            before = rss_kb(pid)
            socks = [stuck_axfr_client(g.port, 1000 + i) for i in range(self.STUCK)]
            peak = before
            for _ in range(15):  # the server writes what the kernel takes, then waits for the clients
                time.sleep(0.1)
                peak = max(peak, rss_kb(pid))
            grown = peak - before
            print(f"RSS before {before} kB, with {self.STUCK} stuck AXFR clients {peak} kB "
                  f"(+{grown} kB, {grown / self.STUCK:.0f} kB per client; the transfer is ~2200 kB)")
            # Before the untrusted-input work each stuck client held its whole transfer (~2.2 MB here: +88 MB for 40). Now ~140 kB
            # each (~260 kB under meson, whose MALLOC_PERTURB_ touches every page malloc hands out).
            self.assertLess(grown, 24 * 1024, g.stderr())

            # Every slot is taken: one more transfer is turned away, and at once (SERVFAIL: try later).
            rcode, _, msgs = full_axfr(g.port, qid=9)
            self.assertEqual((rcode, msgs), ("SERVFAIL", 1))
            # An ordinary query is still answered over TCP and UDP.
            with TcpClient(g.port) as c:
                self.assertEqual(c.query(build_query(f"www.{BIG}", "A")).answer[0][4], "192.0.2.2")
            self.assertEqual(decode_msg(udp_query(g.port, build_query(f"www.{BIG}", "A"))).rcode, "NOERROR")

            # A stuck client leaves: its slot is free again, and a full transfer is exact.
            socks.pop().close()
            deadline = time.time() + 5
            while True:
                rcode, records, msgs = full_axfr(g.port, qid=11)
                if rcode != "SERVFAIL" or time.time() > deadline:
                    break
                time.sleep(0.1)
            self.assertEqual(rcode, "NOERROR", g.stderr())
            self.assertGreater(msgs, 10)
            self.assertEqual(len(records), len(BIG_RECORDS))
            self.assertEqual(records, BIG_RECORDS)
            for s in socks:
                s.close()
            g.stop()


def idle_client(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=3)
    return s


def closed(sock, wait):
    """True when the peer closed (EOF or reset) within `wait` seconds."""
    sock.settimeout(wait)
    try:
        return sock.recv(65535) == b""
    except socket.timeout:
        return False
    except OSError:
        return True


class TcpLimits(unittest.TestCase):
    def test_slowloris_gets_a_deadline_for_the_whole_message(self):
        # Before the untrusted-input work each byte reset the idle timer: a client announcing 65535 octets and sending one a
        # second held its connection for 18 hours.
        with Gslbd(zones={"t.test.": simple_zone("t.test.")},
                   server={"tcp_idle_timeout": 10, "tcp_message_timeout": 2}) as g:
            s = idle_client(g.port)
            start = time.time()
            s.sendall(b"\xff\xff")
            gone = None
            while time.time() - start < 6:
                try:
                    s.sendall(b"x")
                except OSError:
                    gone = time.time() - start
                    break
                if closed(s, 0.25):
                    gone = time.time() - start
                    break
            self.assertIsNotNone(gone, "a message trickled in a byte at a time was never cut off")
            self.assertGreater(gone, 1.5)
            self.assertLess(gone, 3.5)
            # A client that is quick enough is unaffected, across several messages on one connection.
            with TcpClient(g.port) as c:
                for _ in range(3):
                    self.assertEqual(c.query(build_query("www.t.test.", "A")).rcode, "NOERROR")
                    time.sleep(1.2)  # idle between messages is the idle timeout's business, not this one's
                q = TcpClient.frame(build_query("www.t.test.", "A"))
                c.send_raw(q[:5])
                time.sleep(1.2)
                c.send_raw(q[5:])  # one message over 1.2 s: inside the 2 s deadline
                self.assertEqual(decode_msg(c.recv_msg()).rcode, "NOERROR")
            g.stop()

    def test_a_full_table_closes_the_oldest_idle_connection(self):
        cap = 8
        with Gslbd(zones={"t.test.": simple_zone("t.test.")},
                   server={"tcp_idle_timeout": 30, "tcp_message_timeout": 30, "tcp_max_connections": cap}) as g:
            holders = []
            for i in range(cap):
                s = idle_client(g.port)
                if i % 2:
                    s.sendall(b"\xff\xff\x00")  # slow: a message begun and never finished
                holders.append(s)
                time.sleep(0.05)  # so that their ages differ
            time.sleep(0.2)
            # A newcomer is answered at once, again and again: idle connections cannot lock TCP out.
            for _ in range(3):
                with TcpClient(g.port) as c:
                    self.assertEqual(c.query(build_query("www.t.test.", "A")).rcode, "NOERROR")
            # The oldest holders made room; the newest are still there.
            self.assertTrue(closed(holders[0], 1.0), "the oldest idle connection should have been closed")
            self.assertFalse(closed(holders[-1], 0.2))
            for s in holders:
                s.close()
            g.stop()

    def test_zero_length_message_closes_the_connection(self):
        with Gslbd(zones={"t.test.": simple_zone("t.test.")}) as g:
            with TcpClient(g.port) as c:
                c.send_raw(b"\x00\x00")
                self.assertTrue(c.is_closed(wait=2.0), "00 00 left the connection open")
            # Answers to what came before it are still sent, then the connection closes.
            with TcpClient(g.port) as c:
                c.send_raw(TcpClient.frame(build_query("www.t.test.", "A", qid=5)) + b"\x00\x00")
                m = decode_msg(c.recv_msg())
                self.assertEqual((m.id, m.rcode), (5, "NOERROR"))
                self.assertTrue(c.is_closed(wait=2.0))
            g.stop()


class Signals(unittest.TestCase):
    def test_only_term_and_int_stop_the_server(self):
        # Before the untrusted-input work SIGUSR1 and SIGUSR2 (a logrotate script's habit) killed gslbd: their default action.
        with Gslbd(zones={"t.test.": simple_zone("t.test.")}) as g:
            stray = [signal.SIGUSR1, signal.SIGUSR2, signal.SIGALRM, signal.SIGPIPE, signal.SIGIO, signal.SIGPWR,
                     signal.SIGVTALRM, signal.SIGPROF, signal.SIGRTMIN, signal.SIGRTMIN + 5, signal.SIGRTMAX]
            for sig in stray:
                g.proc.send_signal(sig)
                time.sleep(0.05)
                self.assertIsNone(g.proc.poll(), f"signal {int(sig)} stopped gslbd:\n{g.stderr()}")
                m = decode_msg(udp_query(g.port, build_query("www.t.test.", "A")))
                self.assertEqual(m.rcode, "NOERROR")
            # SIGUSR1 has a meaning: one status line in the log.
            deadline = time.time() + 3
            while "status:" not in g.stderr() and time.time() < deadline:
                time.sleep(0.05)
            self.assertRegex(g.stderr(), r"status: 1 zone\(s\), 4 records; queries udp \d+ tcp \d+")
            # SIGHUP still reloads, SIGTERM still stops cleanly (exit 0, checked by stop()).
            g.reload()
            deadline = time.time() + 3
            while "reloaded" not in g.stderr() and time.time() < deadline:
                time.sleep(0.05)
            self.assertIn("reloaded", g.stderr())
            g.stop()


TOKEN = "e2e-limits-token-5a1f"


def http(port, raw, timeout=3):
    """Sends raw request bytes; returns (status, parsed JSON body or None, raw body)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        s.sendall(raw)
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
            head, sep, body = data.partition(b"\r\n\r\n")
            if sep and b"content-length:" in head.lower():
                n = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
                if len(body) >= n:
                    break
    finally:
        s.close()
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ")[1]) if head.startswith(b"HTTP/") else 0
    try:
        return status, json.loads(body), body
    except ValueError:
        return status, None, body


def post(path, body=b"", auth=None):
    auth = f"Bearer {TOKEN}".encode() if auth is None else auth
    return (b"POST " + path + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: " + auth +
            b"\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)


class ControlApi(unittest.TestCase):
    def test_bad_bytes_get_a_clear_4xx(self):
        cport = free_port()
        g = Gslbd(zones={"t.test.": simple_zone("t.test.")}, files={"control.token": TOKEN + "\n"})
        g.raw_config = (g.make_config() + f'\n[control]\nlisten = "127.0.0.1:{cport}"\n'
                        f'token_file = "control.token"\n\n[site.east]\n')
        with g:
            # Invalid UTF-8 echoed in the error used to make nlohmann::json::dump throw: HTTP 500.
            for raw, want, says in [
                (post(b"/v1/sites/%FF%FE/drain"), 404, "unknown site"),
                (post(b"/v1/sites/\xff/drain"), 404, "unknown site"),
                (post(b"/v1/sites/east/report", b'{"cpu": "\xff"}'), 400, "not JSON"),
                (post(b"/v1/sites/east/report", b"\xc3\x28"), 400, "not JSON"),
                (b"GET /v1/%FF HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 404, "no such endpoint"),
            ]:
                status, j, body = http(cport, raw)
                self.assertEqual(status, want, (raw, body))
                self.assertIsNotNone(j, body)
                self.assertIn(says, j["error"])
            # The Bearer scheme is case-insensitive (RFC 7235 §2.1).
            for scheme in (b"bearer ", b"BEARER ", b"Bearer  "):
                status, j, body = http(cport, post(b"/v1/sites/east/drain", auth=scheme + TOKEN.encode()))
                self.assertEqual(status, 200, body)
            status, _, _ = http(cport, post(b"/v1/sites/east/enable", auth=b"Basic " + TOKEN.encode()))
            self.assertEqual(status, 401)
            status, j, _ = http(cport, b"GET /v1/status HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            self.assertEqual(status, 200)
            g.stop()


if __name__ == "__main__":
    run_tests()
