#!/usr/bin/env python3
"""End-to-end tests of gslbd's active health checks (doc/design.md "Metric sources"): real HTTP back ends on their own loopback
addresses (127.0.0.11, …), gslbd checking them, dig watching the answers.

Every wait is a poll against a deadline computed from the check's own interval / rise / fall (+ 1 s)."""
import http.server
import os
import re
import socket
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Gslbd, run_tests  # noqa: E402

ORIGIN = "gslb.example.com."
INTERVAL, TIMEOUT, RISE, FALL = 0.2, 0.15, 2, 2


class Backend:
    """An HTTP server on (addr, port) in a thread; switchable to 503 / a delay, stoppable, restartable."""

    def __init__(self, addr, port=0):
        self.addr, self.port = addr, port
        self.status, self.delay = 200, 0.0
        self.httpd = None
        self.hits = 0

    def start(self):
        backend = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                backend.hits += 1
                if backend.delay:
                    time.sleep(backend.delay)
                body = b"ok\n" if backend.status == 200 else b"unavailable\n"
                try:
                    self.send_response(backend.status)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:
                    pass  # the checker gave up (timeout)

            def log_message(self, *a):
                pass

        class Server(http.server.ThreadingHTTPServer):
            allow_reuse_address = True
            daemon_threads = True

        self.httpd = Server((self.addr, self.port), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def stop(self):
        if self.httpd:
            self.httpd.shutdown()
            self.httpd.server_close()
            self.httpd = None


def zone_text(hosts):
    lines = [f"$ORIGIN {ORIGIN}", "$TTL 300", "@ IN SOA ns1 hostmaster 1 3600 900 604800 120", "@ IN NS ns1",
             "ns1 IN A 192.0.2.53"]
    for name, addrs in hosts.items():
        lines += [f"{name} IN A {a}" for a in addrs]
    return "\n".join(lines) + "\n"


def config_text(port, hostname, policy, services, answers, extra="", interval=INTERVAL, timeout=TIMEOUT):
    """services: [(address, site, backend port)]"""
    sites = sorted({s for _, s, _ in services})
    out = [f'[server]\nlisten = ["127.0.0.1:{port}"]\nworkers = 1\n',
           f'[[zone]]\nname = "{ORIGIN}"\nfile = "zone.db"\n',
           f'[check.web]\ntype = "http"\npath = "/health"\nexpect_status = [200]\ninterval = {interval}\n'
           f'timeout = {timeout}\nrise = {RISE}\nfall = {FALL}\n']
    out += [f"[site.{s}]" for s in sites]
    fq = f"{hostname}.{ORIGIN}"
    out.append(f'\n[hostname."{fq}"]\npolicy = {policy}\nanswers = {answers}\nfallback = "none"\n{extra}')
    for addr, site, bport in services:
        out.append(f'[[hostname."{fq}".service]]\naddress = "{addr}"\nsite = "{site}"\ncheck = "web"\n'
                   f'port = {bport}\n')
    return "\n".join(out) + "\n"


def answers(g, name):
    r = g.dig(f"{name}.{ORIGIN}", "A")
    assert r.rcode == "NOERROR", r
    return {rr.rdata for rr in r.answer if rr.rtype == "A"}


def wait_for(pred, seconds, what):
    deadline = time.monotonic() + seconds
    last = None
    while time.monotonic() < deadline:
        last = pred()
        if last:
            return last
        time.sleep(0.05)
    raise AssertionError(f"not within {seconds:.1f} s: {what}")


DOWN_WITHIN = INTERVAL * FALL + 1.0   # after a back end breaks
UP_WITHIN = INTERVAL * RISE + 1.0     # after it is fixed
A, B, C = "127.0.0.11", "127.0.0.12", "127.0.0.13"


class Availability(unittest.TestCase):
    """www: three sites (east A, west B, north C), policy health + random, up to 3 answers."""

    @classmethod
    def setUpClass(cls):
        cls.back = {a: Backend(a) for a in (A, B, C)}
        cls.back[A].start()
        cls.back[B].start()
        # C is down when gslbd starts; reserve its port by starting and stopping it
        cls.back[C].start().stop()
        cls.g = Gslbd(files={"zone.db": zone_text({"www": [A, B, C]})}, wait_zone=ORIGIN)
        cls.g.raw_config = config_text(
            cls.g.port, "www", '["health", "random"]',
            [(A, "east", cls.back[A].port), (B, "west", cls.back[B].port), (C, "north", cls.back[C].port)], 3)
        cls.g.__enter__()
        cls.first = answers(cls.g, "www")  # the very first answer, right after the listeners opened

    @classmethod
    def tearDownClass(cls):
        cls.g.__exit__(None, None, None)
        for b in cls.back.values():
            b.stop()

    def setUp(self):
        if self.back[C].httpd is None:
            self.back[C].start()
        for b in self.back.values():
            b.status, b.delay = 200, 0.0
        wait_for(lambda: answers(self.g, "www") == {A, B, C}, UP_WITHIN, "all three up")

    def log_has(self, pattern, seconds=1.0):
        return wait_for(lambda: re.search(pattern, self.g.stderr()), seconds, f"log line /{pattern}/")

    def test_00_first_answer_is_not_a_guess(self):
        # The initial round ran before the listeners opened: C was already known down.
        self.assertEqual(self.first, {A, B})
        self.assertRegex(self.g.stderr(), r"www\.gslb\.example\.com\./127\.0\.0\.13 \(north\) down: "
                                          r"connect: Connection refused \(first check\)")
        self.assertRegex(self.g.stderr(), r"health: initial round of 3 check\(s\)")

    def test_stopped_server_leaves_and_comes_back(self):
        self.back[A].stop()
        wait_for(lambda: answers(self.g, "www") == {B, C}, DOWN_WITHIN, "A gone after stop")
        self.log_has(r"127\.0\.0\.11 \(east\) down: connect: Connection refused after 2 failures")
        self.back[A].start()
        wait_for(lambda: answers(self.g, "www") == {A, B, C}, UP_WITHIN, "A back after restart")
        self.log_has(r"127\.0\.0\.11 \(east\) up after 2 successes")

    def test_503_counts_as_down(self):
        self.back[B].status = 503
        wait_for(lambda: answers(self.g, "www") == {A, C}, DOWN_WITHIN, "B gone on 503")
        self.log_has(r"127\.0\.0\.12 \(west\) down: http 503 after 2 failures")
        self.back[B].status = 200
        wait_for(lambda: answers(self.g, "www") == {A, B, C}, UP_WITHIN, "B back on 200")

    def test_slower_than_timeout_counts_as_down(self):
        self.back[C].delay = TIMEOUT * 3
        wait_for(lambda: answers(self.g, "www") == {A, B}, DOWN_WITHIN + TIMEOUT * 3, "C gone when slow")
        self.log_has(r"127\.0\.0\.13 \(north\) down: timeout after 2 failures")
        self.back[C].delay = 0.0
        wait_for(lambda: answers(self.g, "www") == {A, B, C}, UP_WITHIN + TIMEOUT * 3, "C back when fast")

    def test_all_down_gives_fallback(self):
        for b in self.back.values():
            b.status = 503
        wait_for(lambda: answers(self.g, "www") == set(), DOWN_WITHIN, "NODATA (fallback none) when all down")
        self.log_has(r"site (east|west|north) down")
        # The answer says why (RFC 8914 §4.1 "Other", as dig prints it).
        r = self.g.dig(f"www.{ORIGIN}", "A")
        self.assertIn(f"; EDE: 0 (Other): (all services of www.{ORIGIN} are down: fallback none)", r.text)
        for b in self.back.values():
            b.status = 200
        wait_for(lambda: answers(self.g, "www") == {A, B, C}, UP_WITHIN, "all back")


class FlashBack(unittest.TestCase):
    """fast: east (no delay) and west (a delay well inside the timeout); health, flashback, random."""
    FAST, SLOW = "127.0.0.21", "127.0.0.22"
    DELAY = 0.1  # s; the check's timeout is 0.5 s: slow but healthy

    def config(self, tolerance):
        return config_text(self.g.port, "fast", '["health", "flashback", "random"]',
                           [(self.FAST, "east", self.fast.port), (self.SLOW, "west", self.slow.port)], 1,
                           extra=f"flashback_tolerance = {tolerance}\n", interval=0.5, timeout=0.5)

    def setUp(self):
        self.fast = Backend(self.FAST).start()
        self.slow = Backend(self.SLOW).start()
        self.slow.delay = self.DELAY
        self.g = Gslbd(files={"zone.db": zone_text({"fast": [self.FAST, self.SLOW]})}, wait_zone=ORIGIN)
        self.g.raw_config = self.config(10)
        self.g.__enter__()

    def tearDown(self):
        self.g.__exit__(None, None, None)
        self.fast.stop()
        self.slow.stop()

    def test_slow_site_loses_then_wins_back_with_tolerance(self):
        seen = [next(iter(answers(self.g, "fast"))) for _ in range(20)]
        self.assertEqual(set(seen), {self.FAST}, "the slow site must lose on FlashBack at 10 %")
        self.assertGreater(self.slow.hits, 0, "the slow site is checked (and healthy)")
        # 100 % covers any gap: both are equal, random picks among them
        self.g.write("gslbd.toml", self.config(100))
        self.g.reload()
        wait_for(lambda: "reloaded" in self.g.stderr(), 5, "reload")
        got = set()
        wait_for(lambda: got.update(answers(self.g, "fast")) or self.SLOW in got, 10,
                 "slow site answered once the tolerance covers the gap")
        self.assertNotRegex(self.g.stderr(), r"127\.0\.0\.22 \(west\) down")


if __name__ == "__main__":
    run_tests()
