#!/usr/bin/env python3
"""DNS over TLS (RFC 7858) and zone transfers over TLS (XoT, RFC 9103) with real kdig (+tls) and Python's ssl
module: queries, ALPN "dot", TLS 1.2 and 1.3, AXFR over TLS (plain, TSIG-signed, with a client certificate),
axfr_allow's `tls` and `client_cert`, a certificate reloaded on SIGHUP under an open connection, and a run of
TLS abuse (handshake floods, handshakes that never finish, garbage before and after the handshake, a client
that stops reading) after which UDP, TCP and TLS still answer. Certificates are made here with openssl.
Run against the sanitizer build too (.ci/run): GSLBD=build-asan/server/gslbd python3 tests/e2e/test_tls.py Tls TlsAbuse"""
import calendar
import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (Gslbd, TcpClient, build_query, decode_msg, free_port, kdig, run_tests,  # noqa: E402
                     udp_query, wait_for)

ORIGIN = "tls.test."
ZONE = f"""$ORIGIN {ORIGIN}
$TTL 300
@      3600 IN SOA ns1 admin 2024010101 3600 900 604800 60
@           IN NS   ns1
ns1         IN A    192.0.2.1
www         IN A    192.0.2.2
mail        IN A    192.0.2.3
"""
SECRET = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
KEYFILE = f'key "xfr" {{\n\talgorithm hmac-sha256;\n\tsecret "{SECRET}";\n}};\n'
SANITIZER_MARKS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:", "double free",
                   "corruption")
XOT = "xot.test."  # a second zone: transfers over TLS with a client certificate only
# 5,000 more records (about 150 KB: several messages of a transfer, written as the client reads them).
XOT_ZONE = ZONE.replace(ORIGIN, XOT) + "".join(f"h{i} IN A 10.{i // 250}.{i % 250}.1\n" for i in range(5000))


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def make_pki(d):
    """A CA, two server certificates it signed (for the reload), a client certificate, and a client
    certificate from another CA. EC P-256: quick to make."""
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    for ca in ("ca", "otherca"):
        openssl("req", "-x509", *ec, "-keyout", f"{ca}.key", "-out", f"{ca}.pem", "-days", "2",
                "-subj", f"/CN=gslbd test {ca}", cwd=d)
    # server2 (the reload's) runs a day longer: its notAfter tells /metrics' value from server's.
    for name, ca, ext, days in (("server", "ca", "subjectAltName=DNS:dot.test,IP:127.0.0.1", "2"),
                                ("server2", "ca", "subjectAltName=DNS:dot.test,IP:127.0.0.1", "3"),
                                ("client", "ca", "extendedKeyUsage=clientAuth", "2"),
                                ("rogue", "otherca", "extendedKeyUsage=clientAuth", "2")):
        openssl("req", *ec, "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={name}", cwd=d)
        with open(os.path.join(d, f"{name}.ext"), "w") as f:
            f.write(ext + "\n")
        openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key",
                "-CAcreateserial", "-days", days, "-extfile", f"{name}.ext", "-out", f"{name}.pem", cwd=d)


def config(port, tls_port, extra_server=""):
    return (f'[server]\nlisten = ["127.0.0.1:{port}"]\ntls_listen = ["127.0.0.1:{tls_port}"]\n'
            'tls_certificate = "server.pem"\ntls_key = "server.key"\ntls_client_ca = "ca.pem"\n'
            'tcp_idle_timeout = 3\ntcp_message_timeout = 1\n'
            # 127.0.0.1 may transfer tls.test. over TLS only; signed with xfr it may over TCP too.
            'axfr_allow = [{ address = "127.0.0.1", tls = true }, { address = "127.0.0.1", key = "xfr" }]\n'
            f'{extra_server}\n'
            '[key.xfr]\nalgorithm = "hmac-sha256"\nsecret_file = "xfr.key"\n\n'
            f'[[zone]]\nname = "{ORIGIN}"\nfile = "tls.zone"\n\n'
            f'[[zone]]\nname = "{XOT}"\nfile = "xot.zone"\n'
            'axfr_allow = [{ address = "127.0.0.1", key = "xfr", client_cert = true }]\n')


class TlsClient(TcpClient):
    """TcpClient over TLS (Python's ssl: the reload and abuse tests need what kdig does not expose)."""

    def __init__(self, port, ctx, addr="127.0.0.1", timeout=3.0):
        raw = socket.create_connection((addr, port), timeout=timeout)
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = ctx.wrap_socket(raw, server_hostname="dot.test")


def client_context(d, alpn=("dot",), cert=None, maximum=None):
    ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=os.path.join(d, "ca.pem"))
    if alpn:
        ctx.set_alpn_protocols(list(alpn))
    if cert:
        ctx.load_cert_chain(os.path.join(d, f"{cert}.pem"), os.path.join(d, f"{cert}.key"))
    if maximum:
        ctx.maximum_version = maximum
    return ctx


def start(pki, extra_server="", idle=3, zone=ZONE):
    """gslbd with the zones, the key and the certificates of `pki`: (daemon, its TLS port)."""
    files = {"tls.zone": zone, "xot.zone": XOT_ZONE, "xfr.key": KEYFILE}
    for f in ("ca.pem", "server.pem", "server.key"):
        files[f] = open(os.path.join(pki, f)).read()
    g = Gslbd(files=files, wait_zone=ORIGIN)
    tls_port = free_port()
    g.raw_config = config(g.port, tls_port, extra_server).replace("tcp_idle_timeout = 3", f"tcp_idle_timeout = {idle}")
    return g, tls_port


class WithGslbd(unittest.TestCase):
    """One gslbd for the class (EXTRA: more [server] keys; IDLE: tcp_idle_timeout)."""
    EXTRA, IDLE = "", 3

    @classmethod
    def setUpClass(cls):
        cls.pki = tempfile.mkdtemp(prefix="e2e-tls-pki-")
        try:
            make_pki(cls.pki)
            cls.g, cls.tls_port = start(cls.pki, cls.EXTRA, cls.IDLE)
            cls.g.__enter__()
        except BaseException:
            shutil.rmtree(cls.pki, ignore_errors=True)
            raise
        cls.ctx = client_context(cls.pki)

    def tearDown(self):
        # Against the sanitizer build too (.ci/run): a report fails the test that caused it.
        err = self.g.stderr()
        for mark in SANITIZER_MARKS:
            self.assertNotIn(mark, err, err[-4000:])

    @classmethod
    def tearDownClass(cls):
        try:
            cls.g.stop()  # exit 0 on SIGTERM: with ASan, no leak report either
        finally:
            cls.g.__exit__(None, None, None)
            shutil.rmtree(cls.pki, ignore_errors=True)


@unittest.skipUnless(shutil.which("kdig") and shutil.which("openssl"), "needs kdig and openssl")
class Tls(WithGslbd):
    EXTRA = "tcp_max_connections_per_client = 40"

    def kdig_tls(self, qname, qtype="A", *opts):
        return kdig(self.tls_port, qname, qtype, "+tls", *opts)

    def pki_file(self, name):
        return os.path.join(self.pki, name)

    def test_kdig_tls_query_opportunistic_and_authenticated(self):
        r = self.kdig_tls(f"www.{ORIGIN}")
        self.assertEqual(r.rcode, "NOERROR", r.text)
        self.assertEqual([rr.rdata for rr in r.answer], ["192.0.2.2"], r.text)
        self.assertIn("(TCP)", r.text)
        self.assertRegex(r.text, r"TLS session \(TLS1\.3\)")
        # Strict (RFC 8310 out-of-band key): the chain and the name verified.
        r = self.kdig_tls(f"www.{ORIGIN}", "A", f"+tls-ca={self.pki_file('ca.pem')}", "+tls-hostname=dot.test")
        self.assertEqual([rr.rdata for rr in r.answer], ["192.0.2.2"], r.text)
        # Errors are the same as over UDP, EDE included.
        r = self.kdig_tls("www.example.net.", "A", "+edns")
        self.assertEqual((r.rcode, r.ede), ("REFUSED", [(20, "")]), r.text)

    def test_padding_over_tls_only(self):
        # RFC 7830 §3: a query with the Padding option over TLS gets a padded response, to 468-octet blocks
        # (RFC 8467 §4.1); over plain TCP the same query gets none (RFC 7830 §6).
        def received(r):
            self.assertIsNotNone(r.msg_size, r.text)
            return r.msg_size
        r = self.kdig_tls(f"www.{ORIGIN}", "A", "+padding")
        self.assertEqual([rr.rdata for rr in r.answer], ["192.0.2.2"], r.text)
        self.assertIn("PADDING", r.text)
        self.assertEqual(received(r) % 468, 0, r.text)
        self.assertGreater(received(r), 0)
        r = kdig(self.g.port, f"www.{ORIGIN}", "A", "+tcp", "+padding")
        self.assertEqual([rr.rdata for rr in r.answer], ["192.0.2.2"], r.text)
        self.assertNotIn("PADDING", r.text)
        self.assertLess(received(r), 468, r.text)
        # Signed with TSIG: the padding goes in the OPT, before the TSIG RR, which kdig verifies; the message
        # with its TSIG RR is the block's multiple.
        r = self.kdig_tls(f"www.{ORIGIN}", "A", "+padding", "-y", f"hmac-sha256:xfr:{SECRET}")
        self.assertEqual([rr.rdata for rr in r.answer if rr.rtype == "A"], ["192.0.2.2"], r.text)
        self.assertIn("TSIG PSEUDOSECTION", r.text)
        self.assertIn("PADDING", r.text)
        self.assertEqual(r.returncode, 0, r.text)
        self.assertNotIn("WARNING", r.text)
        self.assertEqual(received(r) % 468, 0, r.text)

    def test_alpn_dot_tls12_pipelining(self):
        with TlsClient(self.tls_port, client_context(self.pki)) as t:
            self.assertEqual(t.sock.selected_alpn_protocol(), "dot")
            self.assertEqual(t.sock.version(), "TLSv1.3")
            # Pipelined: three queries in one write, three answers in order (RFC 7766 §6.2.1.1).
            qs = [build_query(f"{n}.{ORIGIN}", "A", qid=i + 1) for i, n in enumerate(("www", "mail", "ns1"))]
            t.send_raw(b"".join(TcpClient.frame(q) for q in qs))
            got = [decode_msg(t.recv_msg()) for _ in qs]
            self.assertEqual([m.id for m in got], [1, 2, 3])
            self.assertEqual([m.answer[0][4] for m in got], ["192.0.2.2", "192.0.2.3", "192.0.2.1"])
        with TlsClient(self.tls_port, client_context(self.pki, maximum=ssl.TLSVersion.TLSv1_2)) as t:
            self.assertEqual(t.sock.version(), "TLSv1.2")
            self.assertEqual(t.query(build_query(f"www.{ORIGIN}", "A")).rcode, "NOERROR")
            # A transfer is XoT over TLS 1.3 only (RFC 9103 §5.1): axfr_allow's `tls = true` refuses it here.
            m = t.query(build_query(ORIGIN, "AXFR", edns=True))
            self.assertEqual((m.rcode, [o for o in m.opt["options"] if o[0] == 15]), ("REFUSED", [(15, b"\x00\x12")]))
        # TLS 1.2 with CBC ciphers only (RFC 9325 §4.2 recommends AEAD): no shared cipher, the handshake fails.
        cbc = client_context(self.pki, maximum=ssl.TLSVersion.TLSv1_2)
        cbc.set_ciphers("ECDHE-ECDSA-AES128-SHA:ECDHE-ECDSA-AES256-SHA384")
        with self.assertRaises((ssl.SSLError, ConnectionError)):
            TlsClient(self.tls_port, cbc)
        with TlsClient(self.tls_port, client_context(self.pki, alpn=None)) as t:  # no ALPN: served
            self.assertEqual(t.query(build_query(f"www.{ORIGIN}", "A")).rcode, "NOERROR")
        # ALPN without "dot" (RFC 7301 §3.2): no_application_protocol.
        with self.assertRaises(ssl.SSLError):
            TlsClient(self.tls_port, client_context(self.pki, alpn=("h2",)))

    def test_xot_axfr_tls_required_and_refused_over_tcp(self):
        r = kdig(self.tls_port, ORIGIN, "AXFR", "+tls")
        self.assertRegex(r.text, r"Received \d+ B \(1 messages, 6 records\)", r.text)
        # The same request over TCP, unsigned: REFUSED, EDE 18 (Prohibited), and the log says why.
        with TcpClient(self.g.port) as t:
            m = t.query(build_query(ORIGIN, "AXFR", edns=True))
        self.assertEqual(m.rcode, "REFUSED")
        self.assertIn((15, b"\x00\x12"), m.opt["options"])
        # Logged (at most 5 refusal lines a second per worker: the TLS failures of another test may fill a
        # second, so ask again until the line shows).
        def logged():
            if "refused: unsigned; axfr_allow requires TSIG key xfr, or TLS (XoT, RFC 9103)" in self.g.stderr():
                return True
            with TcpClient(self.g.port) as t:
                t.query(build_query(ORIGIN, "AXFR", edns=True))
            time.sleep(0.3)
            return False
        wait_for(logged, 4, "the refusal logged")
        # Signed with the key, TCP is admitted (the second entry).
        r = kdig(self.g.port, ORIGIN, "AXFR", "-y", f"hmac-sha256:xfr:{SECRET}")
        self.assertRegex(r.text, r"Received \d+ B \(1 messages, 6 records\)", r.text)

    def test_xot_mutual_tls_with_tsig(self):
        key = ["-y", f"hmac-sha256:xfr:{SECRET}"]
        cert = [f"+tls-certfile={self.pki_file('client.pem')}", f"+tls-keyfile={self.pki_file('client.key')}"]
        # TSIG and a client certificate that verifies: the transfer, signed (kdig checks every message).
        r = kdig(self.tls_port, XOT, "AXFR", "+tls", *cert, *key)
        self.assertRegex(r.text, r"Received \d+ B \([2-9] messages, 5006 records\)", r.text)
        self.assertNotIn("WARNING", r.text)
        # Without the certificate: refused, though signed and over TLS.
        r = kdig(self.tls_port, XOT, "AXFR", "+tls", *key)
        self.assertIn("REFUSED", r.text)
        def logged():
            if "requires a client certificate that verifies against tls_client_ca" in self.g.stderr():
                return True
            kdig(self.tls_port, XOT, "AXFR", "+tls", *key)
            time.sleep(0.3)
            return False
        wait_for(logged, 4, "the refusal logged")
        # Without the key: refused, though the certificate verified.
        r = kdig(self.tls_port, XOT, "AXFR", "+tls", *cert)
        self.assertIn("REFUSED", r.text)
        # A certificate from another CA: the handshake fails.
        ctx = client_context(self.pki, cert="rogue")
        with self.assertRaises((ssl.SSLError, ConnectionError, OSError)):
            with TlsClient(self.tls_port, ctx) as t:
                t.query(build_query(f"www.{ORIGIN}", "A"))

    def test_tls_connections_count_against_the_tcp_limits(self):
        # tcp_max_connections_per_client = 40: forty handshakes that never start hold every slot of
        # 127.0.0.1, a forty-first TLS or TCP connection is closed at once; after tcp_message_timeout the
        # stalled ones are gone and TLS answers again.
        stalled = [socket.create_connection(("127.0.0.1", self.tls_port)) for _ in range(40)]
        try:
            time.sleep(0.2)
            extra = TcpClient(self.g.port)
            self.assertTrue(extra.is_closed(1.0), "a 41st connection of the client stayed open")
            extra.close()
            deadline = time.monotonic() + 3
            for s in stalled:
                s.settimeout(max(0.05, deadline - time.monotonic()))
                self.assertEqual(s.recv(1), b"", "a handshake that never started was not closed in time")
        finally:
            for s in stalled:
                s.close()
        r = self.kdig_tls(f"www.{ORIGIN}")
        self.assertEqual([rr.rdata for rr in r.answer], ["192.0.2.2"], r.text)
        self.assertIn("handshake not done within tcp_message_timeout", self.g.stderr())


def not_after(d, name):
    p = subprocess.run(["openssl", "x509", "-in", os.path.join(d, f"{name}.pem"), "-noout", "-enddate"],
                       stdout=subprocess.PIPE, text=True, check=True)
    return int(calendar.timegm(time.strptime(p.stdout.strip().split("=", 1)[1], "%b %d %H:%M:%S %Y %Z")))


def cert_der(d, name):
    p = subprocess.run(["openssl", "x509", "-in", os.path.join(d, f"{name}.pem"), "-outform", "DER"],
                       stdout=subprocess.PIPE, check=True)
    return p.stdout


@unittest.skipUnless(shutil.which("kdig") and shutil.which("openssl"), "needs kdig and openssl")
class TlsReload(unittest.TestCase):
    def test_sighup_new_certificate_for_new_connections_old_ones_kept(self):
        pki = tempfile.mkdtemp(prefix="e2e-tls-pki-")
        try:
            make_pki(pki)
            # tls.test. with 20,000 more records (about 0.5 MB): a transfer still under way at the reload.
            g, tls_port = start(pki, idle=30, zone=ZONE + "".join(f"t{i} IN A 10.{i // 250}.{i % 250}.2\n"
                                                                   for i in range(20000)))
            cport = free_port()
            g.files["control.token"] = "e2e-tls-token-7d1c0e2a\n"
            g.raw_config += f'\n[control]\nlisten = "127.0.0.1:{cport}"\ntoken_file = "control.token"\n'

            def expiry():  # the served certificate's notAfter, as /metrics has it
                with urllib.request.urlopen(f"http://127.0.0.1:{cport}/metrics", timeout=5) as r:
                    m = re.search(r"^gslbd_tls_certificate_expiry_timestamp_seconds (\S+)$", r.read().decode(), re.M)
                return int(float(m.group(1)))
            with g:
                self.assertEqual(expiry(), not_after(pki, "server"))
                ctx = client_context(pki)
                old = TlsClient(tls_port, ctx)
                self.assertEqual(old.sock.getpeercert(binary_form=True), cert_der(pki, "server"))
                self.assertEqual(old.query(build_query(f"www.{ORIGIN}", "A")).rcode, "NOERROR")
                # A transfer over TLS (XoT) whose client has read its first message only, on a connection of
                # its own with a small receive window: most of the zone is still to come at the reload.
                raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                raw.settimeout(5)
                raw.connect(("127.0.0.1", tls_port))
                xfr = TlsClient.__new__(TlsClient)
                xfr.sock = ctx.wrap_socket(raw, server_hostname="dot.test")
                xfr.send_msg(build_query(ORIGIN, "AXFR"))
                first = decode_msg(xfr.recv_msg())
                self.assertEqual(first.rcode, "NOERROR")
                # A new certificate and key, written over the files; SIGHUP.
                g.write("server.pem", open(os.path.join(pki, "server2.pem")).read())
                g.write("server.key", open(os.path.join(pki, "server2.key")).read())
                g.reload()
                wait_for(lambda: "reloaded" in g.stderr(), 5, "reload")
                # The transfer goes on to its last record, and its connection answers a query after it.
                records, msgs = len(first.answer), 1
                while records < 20006:
                    m = decode_msg(xfr.recv_msg())
                    records, msgs = records + len(m.answer), msgs + 1
                self.assertEqual((records, first.answer[0][3], m.answer[-1][3]), (20006, "SOA", "SOA"))
                self.assertGreater(msgs, 5)  # messages of up to 64 KiB
                self.assertEqual(xfr.query(build_query(f"t19999.{ORIGIN}", "A")).answer[0][4], "10.79.249.2")
                xfr.close()
                # The connection in flight goes on (its own context), the new one gets the new certificate.
                self.assertEqual(old.query(build_query(f"mail.{ORIGIN}", "A")).answer[0][4], "192.0.2.3")
                with TlsClient(tls_port, ctx) as new:
                    self.assertEqual(new.sock.getpeercert(binary_form=True), cert_der(pki, "server2"))
                    self.assertEqual(new.query(build_query(f"www.{ORIGIN}", "A")).rcode, "NOERROR")
                self.assertEqual(expiry(), not_after(pki, "server2"))
                r = kdig(tls_port, f"www.{ORIGIN}", "A", "+tls", f"+tls-ca={pki}/ca.pem", "+tls-hostname=dot.test")
                self.assertEqual([rr.rdata for rr in r.answer], ["192.0.2.2"], r.text)
                # A key that does not match the certificate: the reload fails, named, and TLS serves on with
                # the certificate before it.
                g.write("server.key", open(os.path.join(pki, "client.key")).read())
                g.reload()
                wait_for(lambda: re.search(r"reload failed, still serving the previous configuration: "
                                           r"tls_key \S+/server\.key: key values mismatch", g.stderr()),
                         5, "failed reload")
                with TlsClient(tls_port, ctx) as new:
                    self.assertEqual(new.sock.getpeercert(binary_form=True), cert_der(pki, "server2"))
                self.assertEqual(old.query(build_query(f"ns1.{ORIGIN}", "A")).rcode, "NOERROR")
                old.close()
        finally:
            shutil.rmtree(pki, ignore_errors=True)


def handshake_over(sock, ctx):
    """A TLS handshake through memory BIOs over a plain socket: the caller can then write raw octets on it."""
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(inc, out, server_hostname="dot.test")
    while True:
        try:
            obj.do_handshake()
            sock.sendall(out.read())
            return obj, inc, out
        except ssl.SSLWantReadError:
            sock.sendall(out.read())
            data = sock.recv(65536)
            if not data:
                raise ConnectionError("closed in the handshake")
            inc.write(data)


def closed_within(sock, seconds):
    """True when the peer closes (EOF or reset) within `seconds`, whatever it sends before."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            if sock.recv(65536) == b"":
                return True
        except socket.timeout:
            return False
        except OSError:
            return True
    return False


@unittest.skipUnless(shutil.which("kdig") and shutil.which("openssl"), "needs kdig and openssl")
class TlsAbuse(WithGslbd):
    """Untrusted TLS input: every abuse is cut off within the TCP limits, and gslbd answers UDP, TCP and TLS
    after each."""
    EXTRA, IDLE = "tcp_max_connections = 64", 2

    def assert_serving(self):
        self.assertIsNone(self.g.proc.poll(), self.g.stderr())
        m = decode_msg(udp_query(self.g.port, build_query(f"www.{ORIGIN}", "A")))
        self.assertEqual(m.answer[0][4], "192.0.2.2")
        with TcpClient(self.g.port) as t:
            self.assertEqual(t.query(build_query(f"www.{ORIGIN}", "A")).answer[0][4], "192.0.2.2")
        with TlsClient(self.tls_port, self.ctx) as t:
            self.assertEqual(t.query(build_query(f"www.{ORIGIN}", "A")).answer[0][4], "192.0.2.2")

    def client_hello(self):
        obj = self.ctx.wrap_bio(ssl.MemoryBIO(), out := ssl.MemoryBIO(), server_hostname="dot.test")
        with self.assertRaises(ssl.SSLWantReadError):
            obj.do_handshake()
        return out.read()

    def test_handshake_flood(self):
        # 200 connections that never send a ClientHello, then 100 full handshakes closed at once: the table
        # (64) makes room by closing the least recently active, the stalled ones end at tcp_message_timeout.
        stalled = [socket.create_connection(("127.0.0.1", self.tls_port)) for _ in range(200)]
        done = 0
        for _ in range(100):
            # While the flood is being accepted the table may be over its size by the evictions under way:
            # a newcomer is then closed at once (TCP's rule); most get through.
            try:
                with TlsClient(self.tls_port, self.ctx):
                    done += 1
            except (ConnectionError, ssl.SSLError):
                pass
        self.assertGreater(done, 50)
        self.assert_serving()
        for s in stalled:
            self.assertTrue(closed_within(s, 2.0), "a stalled handshake stayed open")
            s.close()
        self.assert_serving()

    def test_slow_handshake_is_cut_off(self):
        hello = self.client_hello()
        s = socket.create_connection(("127.0.0.1", self.tls_port))
        start = time.monotonic()
        try:
            for b in hello:  # one octet every 0.2 s: the idle timeout alone would never end it
                s.sendall(bytes([b]))
                time.sleep(0.2)
                if time.monotonic() - start > 3:
                    break
        except OSError:
            pass
        self.assertTrue(closed_within(s, 1.5))
        self.assertLess(time.monotonic() - start, 3.0, "a trickled handshake outlived tcp_message_timeout")
        s.close()
        self.assert_serving()

    def test_garbage_before_and_after_the_handshake(self):
        # Not TLS at all: a DNS query in TCP framing, then random octets.
        for junk in (TcpClient.frame(build_query(f"www.{ORIGIN}", "A")), os.urandom(3000)):
            s = socket.create_connection(("127.0.0.1", self.tls_port))
            s.sendall(junk)
            self.assertTrue(closed_within(s, 2.0))
            s.close()
        # A TLS record with a bad MAC, and a record header that claims 64 KiB, after a good handshake.
        for junk in (b"\x17\x03\x03\x00\x40" + os.urandom(64), b"\x17\x03\x03\xff\xff" + os.urandom(100)):
            s = socket.create_connection(("127.0.0.1", self.tls_port))
            s.settimeout(3)
            handshake_over(s, self.ctx)
            s.sendall(junk)
            self.assertTrue(closed_within(s, 3.0))
            s.close()
        wait_for(lambda: "TLS from 127.0.0.1" in self.g.stderr(), 3, "the failures logged")
        self.assert_serving()

    def test_a_client_that_stops_reading(self):
        # Pipelined queries, never a read: gslbd stops reading it once its answers back up, keeps answering
        # everyone else, and closes it when it has taken nothing for tcp_idle_timeout.
        raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        raw.connect(("127.0.0.1", self.tls_port))
        t = self.ctx.wrap_socket(raw, server_hostname="dot.test")
        batch = b"".join(TcpClient.frame(build_query(f"www.{ORIGIN}", "A", qid=i)) for i in range(1000))
        t.settimeout(1.0)
        sent = 0
        try:
            while sent < 200:  # at most 200,000 queries: gslbd must stop reading long before
                t.sendall(batch)
                sent += 1
        except (socket.timeout, ssl.SSLError, OSError):
            pass
        self.assertLess(sent, 200, "gslbd kept reading from a client that never reads")
        self.assert_serving()
        self.assertTrue(closed_within(t, 6.0), "a client that reads nothing was not closed")
        t.close()
        self.assert_serving()


if __name__ == "__main__":
    run_tests()
