#!/usr/bin/env python3
"""End-to-end tests of metric sources (doc/design.md "Metric sources"), all on loopback with real components: three sites, each a real
HAProxy (with its prometheus-exporter service) in front of a small HTTP backend, node_exporter for one site;
gslbd scrapes them directly, then the same through a Prometheus server scraping the same exporters.

Two hostnames share the three service addresses (so they share the scraped state): `lc` ranks on
least-connections (factor 0.5), `st` on session-threshold (90 %). Sources scrape every 0.3 s; max_age is 2 s.

NginxPreset: the `nginx` preset against a real nginx (stub_status) and Debian's prometheus-nginx-exporter."""
import http.server
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Gslbd, build_query, decode_msg, free_port, run_tests, spawn, udp_query  # noqa: E402

ORIGIN = "gslb.example.com."
SITES = ["east", "west", "north"]
ADDR = {"east": "192.0.2.1", "west": "192.0.2.2", "north": "192.0.2.3"}
MAXCONN = 30  # east's HAProxy: a small session table to push past 90 %
MAX_AGE = 2


def wait_for(pred, timeout, what):
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        last = pred()
        if last:
            return last
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout}s waiting for: {what} (last: {last!r})")


class Backend:
    def __init__(self):
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = b"ok\n"
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a):
                pass

        class Server(http.server.ThreadingHTTPServer):
            daemon_threads = True

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


class Proc:
    """A child process in its own session, killed (group) on stop."""

    def __init__(self, argv, cwd):
        self.log = open(os.path.join(cwd, os.path.basename(argv[0]) + ".log"), "ab")
        self.p = spawn(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log)

    def stop(self):
        if self.p.poll() is None:
            try:
                os.killpg(self.p.pid, 15)
                self.p.wait(3)
            except (OSError, subprocess.TimeoutExpired):
                try:
                    os.killpg(self.p.pid, 9)
                except OSError:
                    pass
                self.p.wait(3)
        self.log.close()


def wait_http(port, path="/metrics", timeout=10):
    def up():
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=1) as r:
                return r.status == 200
        except OSError:
            return False
    wait_for(up, timeout, f"http on port {port}")


class Site:
    def __init__(self, name, tmp):
        self.name = name
        self.backend = Backend()
        self.prom_port, self.www_port = free_port(), free_port()
        maxconn = MAXCONN if name == "east" else 1000
        cfg = f"""global
  maxconn {maxconn}
defaults
  mode http
  timeout connect 1s
  timeout client 60s
  timeout server 60s
frontend prom
  bind 127.0.0.1:{self.prom_port}
  http-request use-service prometheus-exporter if {{ path /metrics }}
frontend www
  bind 127.0.0.1:{self.www_port}
  default_backend be
backend be
  server s1 127.0.0.1:{self.backend.port}
"""
        self.dir = os.path.join(tmp, name)
        os.makedirs(self.dir)
        with open(os.path.join(self.dir, "haproxy.cfg"), "w") as f:
            f.write(cfg)
        self.haproxy = None
        self.conns = []

    def start(self):
        self.haproxy = Proc(["haproxy", "-db", "-f", "haproxy.cfg"], self.dir)
        wait_http(self.prom_port)

    def open_connections(self, n):
        for _ in range(n):
            s = socket.create_connection(("127.0.0.1", self.www_port), timeout=2)
            self.conns.append(s)

    def close_connections(self):
        for s in self.conns:
            s.close()
        self.conns = []

    def stop(self):
        self.close_connections()
        if self.haproxy:
            self.haproxy.stop()
            self.haproxy = None

    def close(self):
        self.stop()
        self.backend.stop()


def zone_text():
    lines = [f"$ORIGIN {ORIGIN}", "$TTL 300", "@ IN SOA ns1 hostmaster 1 3600 900 604800 120", "@ IN NS ns1",
             "ns1 IN A 192.0.2.53"]
    for h in ("lc", "st"):
        lines += [f"{h} IN A {ADDR[s]}" for s in SITES]
    return "\n".join(lines) + "\n"


def gslbd_config(port, control_port, sources, site_sources):
    out = [f'[server]\nlisten = ["127.0.0.1:{port}"]\nworkers = 1\n',
           f'[control]\nlisten = "127.0.0.1:{control_port}"\ntoken_file = "token"\n',
           f'[[zone]]\nname = "{ORIGIN}"\nfile = "zone.db"\n', f"[defaults]\nmax_age = {MAX_AGE}\n"]
    out += sources
    for s in SITES:
        out.append(f"[site.{s}]\nsources = {json.dumps(site_sources[s])}\n")
    out.append('[hostname."lc.gslb.example.com."]\npolicy = ["health", "least-connections", "random"]\n'
               "factor = 0.5\n")
    for s in SITES:
        out.append(f'[[hostname."lc.gslb.example.com.".service]]\naddress = "{ADDR[s]}"\nsite = "{s}"\n')
    out.append('[hostname."st.gslb.example.com."]\npolicy = ["health", "session-threshold", "random"]\n')
    for s in SITES:
        out.append(f'[[hostname."st.gslb.example.com.".service]]\naddress = "{ADDR[s]}"\nsite = "{s}"\n')
    return "\n".join(out)


class SourcesBase:
    """Three HAProxy sites (+ node_exporter at east); subclasses say how gslbd reads them."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="e2e-sources-")
        cls.sites = {s: Site(s, cls.tmp) for s in SITES}
        for s in cls.sites.values():
            s.start()
        cls.node_port = free_port()
        cls.node = Proc(["prometheus-node-exporter", f"--web.listen-address=127.0.0.1:{cls.node_port}",
                         "--collector.disable-defaults", "--collector.cpu"], cls.tmp)
        wait_http(cls.node_port)
        cls.extra_setup()
        cls.g = Gslbd(files={"zone.db": zone_text(), "token": "e2e-token-123456\n"}, wait_zone=ORIGIN)
        cls.control = free_port()
        cls.g.raw_config = cls.config()
        cls.g.__enter__()

    @classmethod
    def extra_setup(cls):
        pass

    @classmethod
    def tearDownClass(cls):
        cls.g.__exit__(None, None, None)
        cls.extra_teardown()
        cls.node.stop()
        for s in cls.sites.values():
            s.close()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    @classmethod
    def extra_teardown(cls):
        pass

    def status(self):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.control}/v1/status", timeout=2) as r:
            return json.loads(r.read())

    def conns(self):
        st = self.status()
        return {s["site"]: s["connections"] for s in st["services"]}

    def answers(self, host, n=40):
        seen = {}
        for i in range(n):
            m = decode_msg(udp_query(self.g.port, build_query(f"{host}.{ORIGIN}", "A", qid=i + 1)))
            for rr in m.answer:
                if rr[3] == "A":
                    seen[rr[4]] = seen.get(rr[4], 0) + 1
        return seen

    def sites_answered(self, host, n=40):
        by_addr = {v: k for k, v in ADDR.items()}
        return {by_addr[a] for a in self.answers(host, n)}

    def test_1_connections_move_answers_then_sessions_take_the_site_out(self):
        wait_for(lambda: all(v is not None for v in self.conns().values()), 10, "connections from every site")
        wait_for(lambda: self.sites_answered("lc") == set(SITES), 10, "lc spread over the three sites")
        east = self.sites["east"]
        east.open_connections(12)  # 12 of 30: 40 % of the table, well ahead on connections
        try:
            wait_for(lambda: (self.conns()["east"] or 0) >= 12, 10, "east's connections scraped")
            wait_for(lambda: "east" not in self.sites_answered("lc"), 10, "lc answers leave east")
            self.assertEqual(self.sites_answered("st"), set(SITES), "st: 40 % is under the threshold")
            east.open_connections(28 - 12)  # 28 (+ the scrape's own) of 30: over 90 %
            wait_for(lambda: "east" not in self.sites_answered("st"), 10, "st answers leave east past 90 %")
        finally:
            east.close_connections()
        wait_for(lambda: self.sites_answered("lc") == set(SITES), 10, "lc back on east when its connections go")
        wait_for(lambda: self.sites_answered("st") == set(SITES), 10, "st back on east")

    def test_2_a_stopped_exporter_ages_out(self):
        west = self.sites["west"]
        wait_for(lambda: self.conns()["west"] is not None, 10, "west scraped")
        west.stop()
        try:
            wait_for(lambda: self.source_state_for("west") == "failing", 5, "west's source failing")
            # The value stays (with its age) until max_age, then reads as unknown: never zero.
            wait_for(lambda: self.stale("west"), MAX_AGE + 3, "west's connections older than max_age")
            self.assertIn("west", self.sites_answered("lc"), "unknown is kept by least-connections")
        finally:
            west.start()
        wait_for(lambda: self.source_state_for("west") == "ok", 10, "west's source ok again")

    def stale(self, site):
        for s in self.status()["services"]:
            if s["site"] == site:
                return s["connections_age_s"] is not None and s["connections_age_s"] > MAX_AGE
        return False


class Scrape(SourcesBase, unittest.TestCase):
    @classmethod
    def config(cls):
        src = []
        for s in SITES:
            src.append(f'[source.{s}-lb]\nurl = "http://127.0.0.1:{cls.sites[s].prom_port}/metrics"\n'
                       'interval = 0.3\ntimeout = 0.25\npreset = "haproxy"\n')
        src.append(f'[source.east-node]\nurl = "http://127.0.0.1:{cls.node_port}/metrics"\n'
                   'interval = 0.3\ntimeout = 0.25\npreset = "node"\n')
        return gslbd_config(cls.g.port, cls.control, src,
                            {"east": ["east-node", "east-lb"], "west": ["west-lb"], "north": ["north-lb"]})

    def source_state_for(self, site):
        for s in self.status()["sources"]:
            if s["name"] == f"{site}-lb":
                return s["state"]

    def test_0_status_shows_each_source(self):
        wait_for(lambda: all(s["state"] == "ok" for s in self.status()["sources"]), 10, "every source ok")
        srcs = {s["name"]: s for s in self.status()["sources"]}
        self.assertEqual(set(srcs), {"east-lb", "west-lb", "north-lb", "east-node"})
        lb = srcs["west-lb"]
        self.assertEqual(lb["preset"], "haproxy")
        self.assertGreater(lb["series"], 100)
        self.assertGreaterEqual(lb["series_matched"], 4)
        self.assertIsNotNone(lb["duration_ms"])
        self.assertIn("west cpu", lb["feeds"])
        self.assertIn("east cpu", srcs["east-node"]["feeds"])  # first source of east with a cpu mapping
        self.assertNotIn("east cpu", srcs["east-lb"]["feeds"])
        # node_exporter's cpu is a rate: known from the second scrape on.
        wait_for(lambda: next(s for s in self.status()["sites"] if s["name"] == "east")["cpu"] is not None, 5,
                 "east cpu from node_exporter")
        sites = {s["name"]: s for s in self.status()["sites"]}
        self.assertEqual(sites["west"]["sessions_max"], 1000)
        self.assertEqual(sites["east"]["sessions_max"], MAXCONN)
        with urllib.request.urlopen(f"http://127.0.0.1:{self.control}/metrics", timeout=2) as r:
            text = r.read().decode()
        self.assertRegex(text, r'gslbd_source_up\{source="west-lb"\} 1')
        self.assertRegex(text, r'gslbd_source_series_matched\{source="east-node"\} [1-9]')

    def test_3_failure_is_logged_once(self):
        # test_2 stopped west once: one "failing" line for it, however many scrapes failed.
        lines = re.findall(r"source west-lb .* failing", self.g.stderr())
        self.assertLessEqual(len(lines), 1)


class ThroughPrometheus(SourcesBase, unittest.TestCase):
    """The same run through a Prometheus server scraping the same exporters, queried with PromQL."""

    @classmethod
    def extra_setup(cls):
        cls.prom_port = free_port()
        jobs = []
        for s in SITES:
            jobs.append(f"""  - job_name: haproxy-{s}
    scrape_interval: 500ms
    scrape_timeout: 400ms
    static_configs:
      - targets: ["127.0.0.1:{cls.sites[s].prom_port}"]
        labels: {{site: {s}}}
""")
        pdir = os.path.join(cls.tmp, "prom")
        os.makedirs(pdir)
        with open(os.path.join(pdir, "prometheus.yml"), "w") as f:
            f.write("global:\n  scrape_interval: 500ms\n  evaluation_interval: 1s\nscrape_configs:\n" + "".join(jobs))
        cls.prom = Proc(["prometheus", "--config.file=prometheus.yml", "--storage.tsdb.path=data",
                         f"--web.listen-address=127.0.0.1:{cls.prom_port}"], pdir)
        wait_http(cls.prom_port, "/-/ready", 20)

    @classmethod
    def extra_teardown(cls):
        cls.prom.stop()

    @classmethod
    def config(cls):
        src = [f'[source.prom]\ntype = "prometheus"\nurl = "http://127.0.0.1:{cls.prom_port}"\n'
               'interval = 0.3\ntimeout = 0.25\npreset = "haproxy"\nsite_label = "site"\n']
        return gslbd_config(cls.g.port, cls.control, src, {s: ["prom"] for s in SITES})

    def source_state_for(self, site):
        # One Prometheus for every site: the source stays ok; west's series vanish (stale) from its answers.
        return "failing" if self.stale(site) else "ok"

    def test_0_status_shows_the_prometheus_source(self):
        wait_for(lambda: self.status()["sources"][0]["state"] == "ok", 10, "prom source ok")
        wait_for(lambda: self.status()["sources"][0]["series_matched"] >= 9, 10, "results for every site")


class NginxSite:
    """A real nginx (Debian's, one process, everything under its own prefix) with stub_status and a /hold
    location that keeps a response going for minutes (limit_rate), and Debian's prometheus-nginx-exporter
    in front of its stub_status."""

    def __init__(self, name, tmp):
        self.dir = os.path.join(tmp, name)
        os.makedirs(os.path.join(self.dir, "www"))
        os.makedirs(os.path.join(self.dir, "temp"))
        with open(os.path.join(self.dir, "www", "hold"), "wb") as f:
            f.write(b"x" * 65536)  # at 1 KiB/s: a minute per request
        self.port, self.exporter_port = free_port(), free_port()
        temps = "".join(f"  {k}_temp_path temp/{k};\n" for k in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
        with open(os.path.join(self.dir, "nginx.conf"), "w") as f:
            f.write(f"""daemon off;
master_process off;
pid nginx.pid;
error_log error.log notice;
events {{ worker_connections 128; }}
http {{
  access_log off;
{temps}  server {{
    listen 127.0.0.1:{self.port};
    root www;
    location = /stub_status {{ stub_status; }}
    location = /hold {{ limit_rate 1k; }}
  }}
}}
""")
        self.nginx = self.exporter = None
        self.conns = []

    def start(self):
        self.nginx = Proc(["nginx", "-p", self.dir + "/", "-c", "nginx.conf", "-e", "error.log"], self.dir)
        wait_http(self.port, "/stub_status")
        self.start_exporter()

    def start_exporter(self):
        self.exporter = Proc(["prometheus-nginx-exporter", "-nginx.scrape-uri",
                              f"http://127.0.0.1:{self.port}/stub_status",
                              "-web.listen-address", f"127.0.0.1:{self.exporter_port}"], self.dir)
        wait_http(self.exporter_port)

    def stop_exporter(self):
        if self.exporter:
            self.exporter.stop()
            self.exporter = None

    def hold(self, n):
        """n requests to /hold whose responses stay in flight (the client never reads)."""
        for _ in range(n):
            s = socket.create_connection(("127.0.0.1", self.port), timeout=2)
            s.sendall(b"GET /hold HTTP/1.1\r\nHost: x\r\n\r\n")
            self.conns.append(s)

    def release(self):
        for s in self.conns:
            s.close()
        self.conns = []

    def close(self):
        self.release()
        self.stop_exporter()
        if self.nginx:
            self.nginx.stop()
            self.nginx = None


class NginxPreset(unittest.TestCase):
    """preset = "nginx": two sites, each a real nginx and its prometheus-nginx-exporter, scraped by gslbd;
    `web` ranks on least-connections. Connections held open at alpha show as its services' connections and move
    the answers to beta; stopping alpha's exporter ages its value out (unknown, kept, never zero)."""

    HOLD = 6
    NGX_MAX_AGE = 1
    NSITES = {"alpha": "192.0.2.11", "beta": "192.0.2.12"}

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="e2e-nginx-")
        cls.sites = {}
        try:
            for s in cls.NSITES:
                cls.sites[s] = NginxSite(s, cls.tmp)
                cls.sites[s].start()
            zone = "\n".join([f"$ORIGIN {ORIGIN}", "$TTL 300", "@ IN SOA ns1 hostmaster 1 3600 900 604800 120",
                              "@ IN NS ns1", "ns1 IN A 192.0.2.53"] +
                             [f"web IN A {a}" for a in cls.NSITES.values()]) + "\n"
            cls.g = Gslbd(files={"zone.db": zone, "token": "e2e-token-123456\n"}, wait_zone=ORIGIN)
            cls.control = free_port()
            out = [f'[server]\nlisten = ["127.0.0.1:{cls.g.port}"]\nworkers = 1\n',
                   f'[control]\nlisten = "127.0.0.1:{cls.control}"\ntoken_file = "token"\n',
                   f'[[zone]]\nname = "{ORIGIN}"\nfile = "zone.db"\n', f"[defaults]\nmax_age = {cls.NGX_MAX_AGE}\n"]
            for s, site in cls.sites.items():
                out.append(f'[source.{s}-nginx]\nurl = "http://127.0.0.1:{site.exporter_port}/metrics"\n'
                           'interval = 0.2\ntimeout = 0.15\npreset = "nginx"\n')
                out.append(f'[site.{s}]\nsources = ["{s}-nginx"]\n')
            out.append('[hostname."web.gslb.example.com."]\npolicy = ["health", "least-connections", "random"]\n'
                       "factor = 0.5\n")
            for s, a in cls.NSITES.items():
                out.append(f'[[hostname."web.gslb.example.com.".service]]\naddress = "{a}"\nsite = "{s}"\n')
            cls.g.raw_config = "\n".join(out)
            cls.g.__enter__()
        except BaseException:
            for site in cls.sites.values():
                site.close()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.g.__exit__(None, None, None)
        for site in cls.sites.values():
            site.close()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def status(self):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.control}/v1/status", timeout=2) as r:
            return json.loads(r.read())

    def service(self, site):
        return next(s for s in self.status()["services"] if s["site"] == site)

    def source(self, site):
        return next(s for s in self.status()["sources"] if s["name"] == f"{site}-nginx")

    def sites_answered(self, n=30):
        by_addr = {v: k for k, v in self.NSITES.items()}
        seen = set()
        for i in range(n):
            m = decode_msg(udp_query(self.g.port, build_query(f"web.{ORIGIN}", "A", qid=i + 1)))
            seen |= {by_addr[rr[4]] for rr in m.answer if rr[3] == "A"}
        return seen

    def test_held_connections_then_the_exporter_stops(self):
        wait_for(lambda: all(self.source(s)["state"] == "ok" for s in self.NSITES), 5, "both nginx sources ok")
        src = self.source("alpha")
        self.assertEqual(src["preset"], "nginx")
        self.assertGreaterEqual(src["series_matched"], 1)
        self.assertIn(f"alpha/{self.NSITES['alpha']} connections", src["feeds"])
        # Idle: only the exporter's own connection to stub_status (kept alive between its scrapes).
        wait_for(lambda: self.service("alpha")["connections"] is not None, 5, "alpha's connections scraped")
        self.assertLessEqual(self.service("alpha")["connections"], 2)
        alpha = self.sites["alpha"]
        alpha.hold(self.HOLD)
        try:
            # nginx_connections_active counts the held requests plus the exporter's own (one, two mid-scrape).
            c = wait_for(lambda: (lambda v: v if v is not None and v >= self.HOLD else None)(
                self.service("alpha")["connections"]), 5, f"alpha's connections reach {self.HOLD}")
            self.assertLessEqual(c, self.HOLD + 2)
            self.assertEqual(self.source("alpha")["state"], "ok")
            wait_for(lambda: self.sites_answered() == {"beta"}, 5, "web's answers leave alpha")
            # Stop alpha's exporter: the source fails, the value's age passes max_age and it reads as unknown —
            # kept beside beta, not zero (zero would be the best and take every answer).
            alpha.stop_exporter()
            wait_for(lambda: self.source("alpha")["state"] == "failing", 3, "alpha's source failing")
            self.assertIsNotNone(self.source("alpha")["last_error"])
            wait_for(lambda: (self.service("alpha")["connections_age_s"] or 0) > self.NGX_MAX_AGE,
                     self.NGX_MAX_AGE + 2, "alpha's connections older than max_age")
            wait_for(lambda: self.sites_answered() == {"alpha", "beta"}, 3, "alpha unknown: back beside beta")
            self.assertEqual(self.source("beta")["state"], "ok")
        finally:
            alpha.release()
        alpha.start_exporter()
        wait_for(lambda: self.source("alpha")["state"] == "ok", 3, "alpha's source ok again")
        wait_for(lambda: (self.service("alpha")["connections"] or 99) <= 2, 3, "alpha's held connections gone")


if __name__ == "__main__":
    run_tests()
