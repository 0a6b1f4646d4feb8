#!/usr/bin/env python3
"""End-to-end test of the status page (doc/api.md "The status page and the dashboard") in a real browser: Debian's chromium, headless.

gslbd serves three sites (east and west checked against a small HTTP server here, south against a closed
port, so it is down with a reason); queries make answers; west is drained through the API. Then:
  - GET / without JavaScript: the server-rendered table has the sites, west drained;
  - chromium --dump-dom (JavaScript on, virtual time to let the polls run): the page filled itself from the
    API (data-loaded), the site rows and their states, west drained, south down with its reason, the
    events, the chart; no buttons without a token, drain/enable buttons with one;
  - chromium --screenshot: saved next to the test logs (the path is printed);
  - the explain form: GET /?name=… answered on the server (no JavaScript), and in chromium asked live from
    GET /v1/explain, both without a token;
  - metric sources: east's load balancer scraped here (ok), south's on a closed port (failing), shown on the
    page with their state and events, and in /metrics for the dashboard's panels;
  - health_quorum over a one-node etcd (class Quorum): the setting, another member's verdict in etcd (written
    by the test, which sees the service up), and the service the quorum keeps up while this member's own check
    says down, on the server-rendered page and in chromium.
"""
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.request
from html.parser import HTMLParser

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Gslbd, free_port, run_tests, udp_query, build_query  # noqa: E402
import test_etcd  # noqa: E402

ORIGIN = "gslb.example.com."
TOKEN = "e2e-page-token-7d3e1b"
SVCS = [("192.0.2.10", "east"), ("198.51.100.10", "west"), ("203.0.113.10", "south")]
ZONE = f"""$ORIGIN {ORIGIN}
$TTL 300
@ IN SOA ns1 hostmaster 2026120101 3600 900 604800 120
@ IN NS ns1
ns1 IN A 192.0.2.53
""" + "".join(f"www IN A {a}\napi IN A {a}\n" for a, _ in SVCS)
LOGDIR = os.environ.get("GSLBD_LOGDIR") or tempfile.gettempdir()
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


class Health(http.server.BaseHTTPRequestHandler):
    """/health for the checks; /metrics is east's load balancer, scraped by [source.east-lb]."""

    def answer(self):
        return b"# TYPE lb_cpu_percent gauge\nlb_cpu_percent 35\n" if self.path == "/metrics" else b"ok"

    def do_GET(self):
        body = self.answer()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


_HELD = []  # the closed ports' sockets, bound until the test process ends


def closed_port():
    """A loopback TCP port where a connect is refused for as long as this test runs: bound here and never
    listened on (Linux answers RST). A port bound and closed again (as before) went back to the kernel's
    ephemeral pool, and under the full suite another test's server took it: the "failing" source scraped ok."""
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    _HELD.append(s)
    return s.getsockname()[1]


def config(port, cport, hport, dead):
    c = (f'[server]\nlisten = ["127.0.0.1:{port}"]\nworkers = 1\n\n'
         f'[control]\nlisten = "127.0.0.1:{cport}"\ntoken_file = "control.token"\n\n'
         f'[[zone]]\nname = "{ORIGIN}"\nfile = "zone.db"\n\n'
         '[defaults]\nmax_age = 3\n\n'
         '[check.web]\ntype = "http"\npath = "/health"\ninterval = 1\ntimeout = 0.5\nrise = 1\nfall = 1\n\n'
         f'[source.east-lb]\nurl = "http://127.0.0.1:{hport}/metrics"\ninterval = 1\ntimeout = 0.5\n\n'
         f'[source.south-lb]\nurl = "http://127.0.0.1:{dead}/metrics"\ninterval = 1\ntimeout = 0.5\n\n'
         '[site.east]\ncpu = { source = "east-lb", metric = "lb_cpu_percent" }\n'
         '[site.west]\n'
         '[site.south]\ncpu = { source = "south-lb", metric = "lb_cpu_percent" }\n')
    for host, policy in (("www", '["health", "random"]'), ("api", '["health", "least-connections", "random"]')):
        c += f'\n[hostname."{host}.{ORIGIN}"]\npolicy = {policy}\n'
        for a, site in SVCS:
            c += (f'[[hostname."{host}.{ORIGIN}".service]]\naddress = "{a}"\nsite = "{site}"\ncheck = "web"\n'
                  f'check_address = "127.0.0.1"\nport = {dead if site == "south" else hport}\n')
    return c


class Dom(HTMLParser):
    """The few things the test reads from a page: rows by data-site / data-service / data-source with their
    cells' text, buttons, the body's attributes, event rows, whether the chart's SVG is there, the explain
    form's output (its attributes and text) and the explain card's attributes."""

    def __init__(self):
        super().__init__()
        self.rows, self.buttons, self.body, self.events = {}, [], {}, []
        self.svg = False
        self.explain, self.explain_text, self.explain_card = None, [], None
        self._pre = False
        self._row = None
        self._cell = None
        self._ev = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "body":
            self.body = a
        if tag == "svg" and a.get("aria-label") == "share of answers":
            self.svg = True
        if tag == "section" and a.get("id") == "explain-card":
            self.explain_card = a
        if tag == "pre" and a.get("id") == "explain-out":
            self.explain, self._pre = a, True
        key = a.get("data-site") or a.get("data-service") or a.get("data-source")
        if "data-peer" in a or "data-differs" in a:  # the health quorum's tables: their own name space
            key = "peer:" + a["data-peer"] if "data-peer" in a else "differs:" + a["data-differs"]
        if tag == "tr" and key:
            self._row = self.rows.setdefault(key, {"cells": [], "class": a.get("class", "")})
        if tag == "tr" and "data-seq" in a:
            self._ev = []
            self.events.append(self._ev)
        if tag == "td":
            self._cell = []
        if tag == "button" and "data-op" in a:
            self.buttons.append((a["data-op"], a.get("data-site"), a.get("data-address")))

    def handle_endtag(self, tag):
        if tag == "pre":
            self._pre = False
        if tag == "td" and self._cell is not None:
            text = " ".join(" ".join(self._cell).split())
            if self._row is not None:
                self._row["cells"].append(text)
            if self._ev is not None:
                self._ev.append(text)
            self._cell = None
        if tag == "tr":
            self._row = None
            self._ev = None

    def handle_data(self, data):
        if self._pre:
            self.explain_text.append(data)
        if self._cell is not None:
            self._cell.append(data)


def parse(html):
    d = Dom()
    d.feed(html)
    return d


class Page(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.hs = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Health)
        threading.Thread(target=cls.hs.serve_forever, daemon=True).start()
        cls.cport = free_port()
        cls.g = Gslbd(files={"zone.db": ZONE, "control.token": TOKEN + "\n"}, wait_zone=ORIGIN)
        cls.g.raw_config = config(cls.g.port, cls.cport, cls.hs.server_address[1], closed_port())
        cls.g.__enter__()
        cls.base = f"http://127.0.0.1:{cls.cport}"
        cls.profile = tempfile.TemporaryDirectory(prefix="e2e-chromium-")
        # west reports once now (stale by the time the page is read: max_age is 3 s), east keeps reporting.
        cls.post("/v1/sites/west/report", {"cpu": 71, "sessions_used": 91000, "sessions_max": 100000})
        cls.report_east()
        # A trickle of queries for the chart and the counters (www and api, from east and west: south is
        # down) until the test ends; west is drained after a while, so the chart shows the shift.
        cls.stop = threading.Event()
        cls.trickle = threading.Thread(target=cls.queries, daemon=True)
        cls.trickle.start()
        time.sleep(2.5)
        cls.post("/v1/sites/west/drain")
        time.sleep(2.5)

    @classmethod
    def queries(cls):
        i = 0
        while not cls.stop.is_set():
            for name in ("www", "api"):
                try:
                    udp_query(cls.g.port, build_query(f"{name}.{ORIGIN}", "A", qid=i % 65536), timeout=0.5)
                except OSError:
                    pass
            i += 1
            if i % 10 == 0:  # east keeps reporting: its metrics stay fresh however slow chromium starts
                try:
                    cls.report_east()
                except OSError:
                    pass
            cls.stop.wait(0.05)

    @classmethod
    def report_east(cls):
        cls.post("/v1/sites/east/report", {"cpu": 35, "sessions_used": 42000, "sessions_max": 100000,
                                           "services": {"192.0.2.10": {"connections": 310}}})

    @classmethod
    def tearDownClass(cls):
        cls.stop.set()
        cls.trickle.join(5)
        cls.g.__exit__(None, None, None)
        cls.hs.shutdown()
        cls.profile.cleanup()

    @classmethod
    def post(cls, path, body=None):
        req = urllib.request.Request(cls.base + path, method="POST",
                                     data=json.dumps(body).encode() if body is not None else b"",
                                     headers={"Authorization": "Bearer " + TOKEN})
        with urllib.request.urlopen(req, timeout=5) as r:
            assert r.status == 200, r.read()

    def get(self, path):
        with urllib.request.urlopen(self.base + path, timeout=5) as r:
            return r.status, r.headers.get("Content-Type"), r.read().decode()

    def chromium(self, *args, url=None, budget=6000):
        if not CHROMIUM:
            self.skipTest("chromium is not installed (tools/install-deps installs it)")
        cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
               "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--mute-audio",
               f"--user-data-dir={self.profile.name}", f"--virtual-time-budget={budget}", *args,
               url or self.base + "/"]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, f"{' '.join(cmd)}\n{p.stderr[-2000:]}")
        return p.stdout

    def site(self, d, name):
        self.assertIn(name, d.rows, f"no row for site {name}: {sorted(d.rows)}")
        # Site, Health, Admin, ...
        return d.rows[name]["cells"]

    def test_1_without_javascript_the_server_renders_the_table(self):
        code, ctype, html = self.get("/")
        self.assertEqual(code, 200)
        self.assertEqual(ctype, "text/html; charset=utf-8")
        self.assertIn("<noscript>", html)
        self.assertNotRegex(html, r"(src|href)=\"https?://")  # nothing from elsewhere
        d = parse(html)
        self.assertEqual(self.site(d, "east")[1:3], ["up", "enabled"])
        self.assertEqual(self.site(d, "west")[1:3], ["up", "drained"])
        self.assertEqual(self.site(d, "south")[1:3], ["down", "enabled"])
        self.assertEqual(d.body.get("data-loaded"), "0")
        # The metric sources' state, rendered on the server too.
        self.assertIn("ok", d.rows["east-lb"]["cells"])
        self.assertIn("failing", d.rows["south-lb"]["cells"])
        # The explain form is there, empty.
        self.assertIsNotNone(d.explain, "no explain form")
        self.assertEqual(d.explain.get("data-explained"), "")
        code, ctype, js = self.get("/ui/page.js")
        self.assertIn("javascript", ctype)
        code, ctype, css = self.get("/ui/page.css")
        self.assertIn("text/css", ctype)

    def test_2_chromium_renders_live_data_read_only(self):
        d = parse(self.chromium("--dump-dom"))
        self.assertEqual(d.body.get("data-loaded"), "1", "the page's script did not load the data")
        self.assertEqual(self.site(d, "east")[1:3], ["up", "enabled"])
        self.assertEqual(self.site(d, "west")[1:3], ["up", "drained"])
        self.assertEqual(self.site(d, "south")[1:3], ["down", "enabled"])
        self.assertIn("out", d.rows["west"]["class"])
        self.assertEqual(self.site(d, "east")[4], "35 %")
        self.assertRegex(self.site(d, "west")[7], r"stale$", "west's report is older than max_age")
        self.assertNotIn("stale", self.site(d, "east")[7])
        self.assertIn("site drained", d.rows["west/198.51.100.10"]["cells"][4])
        south = d.rows["south/203.0.113.10"]["cells"]
        self.assertRegex(south[3], r"^down down: connect: Connection refused \(first check\)")
        self.assertEqual(d.rows["east/192.0.2.10"]["cells"][3].split()[0], "up")
        # Events, newest first: the drain is there.
        self.assertTrue(any(e[2] == "admin" and e[3] == "site west" and "drained" in e[4] for e in d.events), d.events)
        self.assertTrue(any(e[2] == "health" and "203.0.113.10" in e[3] for e in d.events), d.events)
        self.assertTrue(d.svg, "no answer-share chart")
        self.assertEqual(d.buttons, [], "buttons without a token")
        # Metric sources, drawn by the script: their state, and the failing one's event.
        self.assertIn("ok", d.rows["east-lb"]["cells"])
        self.assertIn("failing", d.rows["south-lb"]["cells"])
        self.assertTrue(any(e[2] == "source" and e[3] == "south-lb" and e[4].startswith("failing:") for e in d.events),
                        d.events)
        self.assertIsNotNone(d.explain_card, "no explain form")
        self.assertNotIn("hidden", d.explain_card, "the explain form is hidden")

    def test_3_with_a_token_drain_and_enable_buttons_appear_and_a_screenshot(self):
        url = self.base + "/#token=" + TOKEN
        d = parse(self.chromium("--dump-dom", url=url))
        self.assertEqual(d.body.get("data-loaded"), "1")
        sites = {(s, op) for op, s, a in d.buttons if a is None}
        self.assertEqual(sites, {("east", "drain"), ("west", "enable"), ("south", "drain")})
        self.assertIn(("drain", "east", "192.0.2.10"), d.buttons)
        # The screenshot has an explanation in its explain form too.
        shot = os.path.join(LOGDIR, "e2e-page.png")
        self.chromium(f"--screenshot={shot}", "--window-size=1440,1500", "--hide-scrollbars",
                      url=self.base + f"/?name=www.{ORIGIN}&client=127.0.0.9#token=" + TOKEN)
        self.assertTrue(os.path.getsize(shot) > 20000, shot)
        print(f"screenshot: {shot}", flush=True)


    def explained(self, d):
        self.assertIsNotNone(d.explain, "no explain output")
        text = "".join(d.explain_text)
        # www: the health stage drops south (its check fails), random picks among east and west.
        self.assertIn(f"query    www.{ORIGIN} A from 127.0.0.9", text)
        self.assertIn("1. health", text)
        self.assertRegex(text, r"dropped \S*203\.0\.113\.10\S*: ")
        self.assertIn("random (chooser)", text)
        self.assertIn("answer", text)
        return text

    def test_5_the_explain_form_without_javascript_and_without_a_token(self):
        code, _, html = self.get(f"/?name=www.{ORIGIN}&type=A&client=127.0.0.9")
        self.assertEqual(code, 200)
        d = parse(html)
        self.assertEqual(d.explain.get("data-explained"), "server")
        self.explained(d)
        self.assertIn(f'href="/v1/explain?name=www.{ORIGIN}&amp;type=A&amp;client=127.0.0.9"', html)

    def test_6_the_explain_form_in_chromium_asks_v1_explain_live(self):
        d = parse(self.chromium("--dump-dom", url=self.base + f"/?name=www.{ORIGIN}&client=127.0.0.9#explain"))
        self.assertEqual(d.body.get("data-loaded"), "1")
        self.assertEqual(d.explain.get("data-explained"), "live", "the script did not ask /v1/explain")
        self.explained(d)
        self.assertEqual(d.buttons, [], "explain needs no token, and none was given")

    def test_4_metrics_parse_and_the_grafana_dashboard_queries_them(self):
        # The reference parser (python3-prometheus-client) reads /metrics with the histogram and the
        # per-hostname families in it.
        code, _, text = self.get("/metrics")
        parser = (
            "import sys, json\n"
            "from prometheus_client.parser import text_string_to_metric_families as f\n"
            "out = {}\n"
            "for fam in f(sys.stdin.read()):\n"
            "    out[fam.name] = [fam.type, [[s.name, s.labels, s.value] for s in fam.samples]]\n"
            "print(json.dumps(out))\n")
        r = subprocess.run(["/usr/bin/python3", "-c", parser], input=text, capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 0, f"the Prometheus parser refused /metrics:\n{r.stderr}")
        fams = json.loads(r.stdout)
        self.assertEqual(fams["gslbd_check_duration_seconds"][0], "histogram")
        buckets = [s for s in fams["gslbd_check_duration_seconds"][1] if s[0].endswith("_bucket")]
        self.assertTrue(any(s[1]["le"] == "+Inf" and s[1]["site"] == "south" and s[2] >= 1 for s in buckets))
        by_site = {s[1]["site"]: s[2] for s in fams["gslbd_hostname_site_answers"][1]
                   if s[1]["hostname"] == f"www.{ORIGIN}"}
        self.assertGreater(by_site["east"], 0)
        self.assertEqual(by_site["south"], 0)
        self.assertIn("gslbd_hostname_fallbacks", fams)
        self.assertIn("gslbd_hostname_answers", fams)
        # The metric sources' families, by source (and result), for the dashboard's scrape panels.
        up = {s[1]["source"]: s[2] for s in fams["gslbd_source_up"][1]}
        self.assertEqual(up, {"east-lb": 1.0, "south-lb": 0.0})
        self.assertEqual(fams["gslbd_source_scrapes"][0], "counter")
        failed = {s[1]["source"]: s[2] for s in fams["gslbd_source_scrapes"][1] if s[1].get("result") == "failed"}
        self.assertGreaterEqual(failed["south-lb"], 1)
        self.assertEqual(failed["east-lb"], 0)
        # Prometheus conventions: counters end in _total, durations are in seconds.
        for name, (kind, samples) in fams.items():
            if kind == "counter":
                self.assertTrue(all(s[0].endswith(("_total", "_created")) for s in samples), (name, samples))
            self.assertFalse(re.search(r"_(ms|millis|milliseconds|usec|microseconds)$", name), name)

        path = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                            "examples", "grafana", "gslbd.json")
        with open(path) as f:
            dash = json.load(f)  # valid JSON, importable as is: no ${DS_…} inputs to fill in
        self.assertEqual(dash["__inputs"], [])
        self.assertIn("datasource", [v["name"] for v in dash["templating"]["list"]])
        panels = {p["title"]: p for p in dash["panels"] if p["type"] != "row"}
        exprs = {t: [x["expr"] for x in p["targets"]] for t, p in panels.items()}
        want = {
            "QPS by rcode": "sum by (rcode) (rate(gslbd_responses_total",
            "Answers per site": "sum by (site) (rate(gslbd_hostname_site_answers_total",
            "Service health": "gslbd_service_up",
            "Flaps": "increase(gslbd_check_state_changes_total",
            "Check latency (p50 / p95 / p99)": "histogram_quantile(0.95, sum by (le, site) (rate(gslbd_check_duration_seconds_bucket",
            "Scrape state": "gslbd_source_up",
            "Reloads": "increase(gslbd_reloads_total",
        }
        for title, needle in want.items():
            self.assertIn(title, exprs, sorted(exprs))
            self.assertTrue(any(needle in e for e in exprs[title]), f"{title}: {exprs[title]}")
        ids = [p["id"] for p in dash["panels"]]
        self.assertEqual(len(ids), len(set(ids)))
        # Every family a panel reads is exported now (the metric sources' too: this gslbd has two).
        exported = set()
        for name, (kind, samples) in fams.items():
            exported |= {s[0] for s in samples}
        for title, es in exprs.items():
            for e in es:
                for m in re.findall(r"\b(gslbd_[a-z0-9_]+)", e):
                    self.assertIn(m, exported, f"panel {title!r} reads {m}, which /metrics does not have")


@unittest.skipUnless(os.path.exists(test_etcd.ETCD), "etcd (Debian's etcd-server) is not installed")
class Quorum(unittest.TestCase):
    """health_quorum over a one-node etcd: another member's verdict (written into etcd by the test, as that
    member would) sees east's service up while this member's own check sees it down."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="e2e-page-etcd-")
        cls.node = test_etcd.EtcdNode("n0", cls.tmp, free_port(), free_port())
        cls.node.start(f"n0={cls.node.peer_url}", "new")
        cls.g = None
        try:
            cls._start()
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def _start(cls):
        deadline = time.monotonic() + 20
        while True:
            try:
                test_etcd.etcd_call(cls.node.url, "/v3/maintenance/status", {}, timeout=1.0)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        cls.cport, dead, other = free_port(), closed_port(), free_port()
        cls.other_url = f"http://127.0.0.1:{other}"
        # The other member's verdict, as it writes it (cluster/etcd_wire.hpp PREFIX verdict/SITE/ADDRESS/MEMBER,
        # each part with "%" and "/" escaped).
        member = cls.other_url.replace("%", "%25").replace("/", "%2F")
        test_etcd.etcd_call(cls.node.url, "/v3/kv/put", {
            "key": test_etcd.b64(f"/gslbd/verdict/east/192.0.2.10/{member}"),
            "value": test_etcd.b64(json.dumps({"health": "up", "l4_ms": 0.4}))})
        zone = ZONE.split("www IN A")[0] + "www IN A 192.0.2.10\n"
        cls.g = Gslbd(files={"zone.db": zone, "control.token": TOKEN + "\n"}, wait_zone=ORIGIN)
        cls.g.raw_config = (
            f'[server]\nlisten = ["127.0.0.1:{cls.g.port}"]\nworkers = 1\n\n'
            f'[control]\nlisten = "127.0.0.1:{cls.cport}"\ntoken_file = "control.token"\n\n'
            f'[cluster]\nmembers = ["http://127.0.0.1:{cls.cport}", "{cls.other_url}"]\n'
            f'etcd = ["{cls.node.url}"]\nhealth_quorum = 2\n\n'
            f'[[zone]]\nname = "{ORIGIN}"\nfile = "zone.db"\n\n'
            '[check.web]\ntype = "tcp"\ninterval = 0.5\ntimeout = 0.5\nrise = 1\nfall = 1\n\n'
            f'[site.east]\n\n[hostname."www.{ORIGIN}"]\n[[hostname."www.{ORIGIN}".service]]\n'
            f'address = "192.0.2.10"\nsite = "east"\ncheck = "web"\ncheck_address = "127.0.0.1"\nport = {dead}\n')
        cls.g.__enter__()
        cls.base = f"http://127.0.0.1:{cls.cport}"
        cls.profile = tempfile.TemporaryDirectory(prefix="e2e-chromium-")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # the other's verdict in and the quorum overruling the own check
            with urllib.request.urlopen(cls.base + "/v1/status", timeout=5) as r:
                st = json.load(r)
            c = [s for s in st["services"] if s["address"] == "192.0.2.10"][0]["check"]
            if c["own_state"] == "down" and c["state"] == "up":
                break
            time.sleep(0.1)
        else:
            raise AssertionError(f"the quorum did not overrule the own check: {c}; etcd: "
                                 f"{st['cluster']['etcd']}\n{cls.g.stderr()}")

    @classmethod
    def tearDownClass(cls):
        if cls.g is not None:
            cls.g.__exit__(None, None, None)
        if getattr(cls, "profile", None) is not None:
            cls.profile.cleanup()
        cls.node.kill()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    chromium = Page.chromium

    def check_page(self, d):
        self.assertFalse([k for k in d.rows if k.startswith("peer:")], "no peer polls to show any more")
        differs = d.rows.get("differs:east/192.0.2.10")
        self.assertIsNotNone(differs, sorted(d.rows))
        self.assertEqual(differs["cells"][1:], ["down", "up", "1 of 2 votes down, quorum 2"])

    def test_1_the_server_renders_the_quorum(self):
        with urllib.request.urlopen(self.base + "/", timeout=5) as r:
            html = r.read().decode()
        self.assertIn("quorum 2 of 2 members; 2 with live verdicts in etcd (lease TTL 2 s)", html)
        self.assertNotIn('id="quorum-card" hidden', html)
        self.check_page(parse(html))

    def test_2_chromium_renders_the_quorum_live(self):
        d = parse(self.chromium("--dump-dom", budget=3000))
        self.assertEqual(d.body.get("data-loaded"), "1")
        self.check_page(d)


if __name__ == "__main__":
    run_tests()
