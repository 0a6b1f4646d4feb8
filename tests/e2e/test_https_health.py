#!/usr/bin/env python3
"""End-to-end tests of the https health check (doc/design.md "Metric sources"): real TLS servers on loopback (python's ssl) with
certificates made here by openssl — one signed by a CA of the test's own, one self-signed — and gslbd checking
them: a good certificate with ca_file is up; a self-signed one against the system store is down with a clear
reason; insecure = true is up; a name the certificate does not hold is down; each certificate's notAfter shows
in /v1/status and /metrics."""
import calendar
import http.server
import json
import os
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Gslbd, free_port, run_tests  # noqa: E402

ORIGIN = "gslb.example.com."
GOOD, SELF, INSEC, WRONG = "127.0.0.21", "127.0.0.22", "127.0.0.23", "127.0.0.24"
NAME = "svc.h.test"


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def make_certs(d):
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "30", "-subj", "/CN=gslbd e2e CA",
            cwd=d)
    openssl("req", *ec, "-keyout", "good.key", "-out", "good.csr", "-subj", f"/CN={NAME}", cwd=d)
    with open(os.path.join(d, "san.ext"), "w") as f:
        f.write(f"subjectAltName=DNS:{NAME}\nbasicConstraints=CA:FALSE\n")
    openssl("x509", "-req", "-in", "good.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", "good.pem", "-days", "10", "-extfile", "san.ext", cwd=d)
    openssl("req", "-x509", *ec, "-keyout", "self.key", "-out", "self.pem", "-days", "5", "-subj", f"/CN={NAME}",
            "-addext", f"subjectAltName=DNS:{NAME}", cwd=d)


def not_after(d, pem):
    out = subprocess.run(["openssl", "x509", "-enddate", "-noout", "-in", os.path.join(d, pem)], check=True,
                         capture_output=True, text=True).stdout.strip()
    return calendar.timegm(time.strptime(out.split("=", 1)[1], "%b %d %H:%M:%S %Y %Z"))


class TlsBackend:
    def __init__(self, addr, certdir, cert):
        self.addr = addr
        self.hits = 0
        backend = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                backend.hits += 1
                body = b"ok\n"
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a):
                pass

        class Server(http.server.ThreadingHTTPServer):
            allow_reuse_address = True
            daemon_threads = True

            def handle_error(self, request, client_address):
                pass  # a refused handshake (the checker did not trust us): expected

        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(os.path.join(certdir, cert + ".pem"), os.path.join(certdir, cert + ".key"))
        self.httpd = Server((addr, 0), Handler)
        self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def check(name, extra):
    return (f'[check.{name}]\ntype = "https"\npath = "/health"\ninterval = 0.3\ntimeout = 0.25\nrise = 1\n'
            f'fall = 1\n{extra}\n')


class HttpsHealth(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="e2e-https-")
        d = cls.tmp.name
        make_certs(d)
        cls.back = {GOOD: TlsBackend(GOOD, d, "good"), SELF: TlsBackend(SELF, d, "self"),
                    INSEC: TlsBackend(INSEC, d, "self"), WRONG: TlsBackend(WRONG, d, "good")}
        cls.cport = free_port()
        with open(os.path.join(d, "ca.pem")) as f:
            ca = f.read()
        zone = (f"$ORIGIN {ORIGIN}\n$TTL 300\n@ IN SOA ns1 hostmaster 1 3600 900 604800 120\n@ IN NS ns1\n"
                f"ns1 IN A 192.0.2.53\n" + "".join(f"www IN A {a}\n" for a in cls.back))
        cls.g = Gslbd(files={"zone.db": zone, "ca.pem": ca, "token": "e2e-https-token\n"}, wait_zone=ORIGIN)
        checks = {GOOD: ("good", f'ca_file = "ca.pem"\nsni = "{NAME}"'),
                  SELF: ("strict", f'sni = "{NAME}"'),
                  INSEC: ("insec", "insecure = true"),
                  WRONG: ("wrongname", 'ca_file = "ca.pem"\nsni = "other.h.test"')}
        cls.checks = checks
        sites = {GOOD: "east", SELF: "west", INSEC: "south", WRONG: "north"}
        cfg = [f'[server]\nlisten = ["127.0.0.1:{cls.g.port}"]\nworkers = 1\n',
               f'[control]\nlisten = "127.0.0.1:{cls.cport}"\ntoken_file = "token"\n',
               f'[[zone]]\nname = "{ORIGIN}"\nfile = "zone.db"\n']
        cfg += [check(n, x) for n, x in checks.values()]
        cfg += [f"[site.{s}]" for s in sites.values()]
        cfg.append(f'[hostname."www.{ORIGIN}"]\npolicy = ["health", "random"]\nanswers = 4\nfallback = "none"\n')
        for a, b in cls.back.items():
            cfg.append(f'[[hostname."www.{ORIGIN}".service]]\naddress = "{a}"\nsite = "{sites[a]}"\n'
                       f'check = "{checks[a][0]}"\nport = {b.port}\n')
        cls.g.raw_config = "\n".join(cfg) + "\n"
        cls.g.__enter__()

    @classmethod
    def tearDownClass(cls):
        cls.g.__exit__(None, None, None)
        for b in cls.back.values():
            b.stop()
        cls.tmp.cleanup()

    def get(self, path):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.cport}{path}", timeout=5) as r:
            return r.read().decode()

    def services(self):
        return {s["address"]: s for s in json.loads(self.get("/v1/status"))["services"]}

    def wait_settled(self):
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            s = self.services()
            if all(s[a]["check"]["successes"] + s[a]["check"]["failures"] >= 2 for a in self.back):
                return s
            time.sleep(0.1)
        raise AssertionError(f"checks did not run: {s}\n{self.g.stderr()}")

    def test_1_verdicts_and_reasons(self):
        s = self.wait_settled()
        state = {a: s[a]["check"]["state"] for a in self.back}
        self.assertEqual(state, {GOOD: "up", SELF: "down", INSEC: "up", WRONG: "down"},
                         json.dumps({a: s[a]["check"] for a in self.back}, indent=1))
        self.assertEqual(s[GOOD]["check"]["type"], "https")
        self.assertRegex(s[SELF]["check"]["last_error"], r"^tls: certificate verify failed: self[- ]signed")
        self.assertRegex(s[WRONG]["check"]["last_error"], r"^tls: certificate verify failed: hostname mismatch")
        # The up ones were really asked (GET after the handshake), and their FlashBack times are known.
        self.assertGreater(self.back[GOOD].hits, 0)
        self.assertGreater(self.back[INSEC].hits, 0)
        self.assertEqual(self.back[SELF].hits, 0)
        for a in (GOOD, INSEC):
            self.assertIsNotNone(s[a]["check"]["l4_ms"], s[a]["check"])
            self.assertIsNotNone(s[a]["check"]["l7_ms"], s[a]["check"])
        r = self.g.dig(f"www.{ORIGIN}", "A")
        self.assertEqual({rr.rdata for rr in r.answer}, {GOOD, INSEC})

    def test_2_expiry_in_status_and_metrics(self):
        s = self.wait_settled()
        d = self.tmp.name
        good, selfsigned = not_after(d, "good.pem"), not_after(d, "self.pem")
        want = {GOOD: good, SELF: selfsigned, INSEC: selfsigned, WRONG: good}  # shown even when not trusted
        for a, t in want.items():
            c = s[a]["check"]
            self.assertEqual(c["cert_not_after"], time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(t)), c)
            self.assertAlmostEqual(c["cert_expires_in_s"], t - time.time(), delta=30)
        metrics = self.get("/metrics")
        lines = [l for l in metrics.splitlines() if l.startswith("gslbd_check_cert_not_after_seconds{")]
        for a, t in want.items():
            mine = [l for l in lines if f'"{a}"' in l]
            self.assertEqual(len(mine), 1, lines)
            self.assertEqual(float(mine[0].rsplit(" ", 1)[1]), t, mine)
        self.assertIn("# TYPE gslbd_check_cert_not_after_seconds gauge", metrics)


if __name__ == "__main__":
    run_tests()
