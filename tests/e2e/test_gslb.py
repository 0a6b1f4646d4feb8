#!/usr/bin/env python3
"""End-to-end tests of GSLB selection driven by the control API: a real gslbd with one GSLB address set over
three sites (no health checks), reports and drains posted with curl, answers watched with dig.

Hostnames (all over the same three (site, address) services, so a report or a drain reaches each of them):
  www     health, session-threshold, least-connections, random; 1 answer
  pool    health, session-threshold, random; 3 answers (shows exactly who is eligible); fallback all
  fbnone  health, random; fallback none
  fbaddr  health, random; fallback 192.0.2.99
"""
import json
import os
import re
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import control_api, run_tests, start_with_control  # noqa: E402

ORIGIN = "gslb.example.com."
TOKEN = "e2e-gslb-token-4f2a9c"
E, W, S = "192.0.2.10", "198.51.100.10", "203.0.113.10"
SITE = {E: "east", W: "west", S: "south"}
ALL = {E, W, S}
FIXED = "192.0.2.99"

ZONE = f"""$ORIGIN {ORIGIN}
$TTL 300
@ IN SOA ns1 hostmaster 2024010101 3600 900 604800 120
@ IN NS ns1
ns1 IN A 192.0.2.53
""" + "".join(f"{h} IN A {a}\n" for h in ("www", "pool", "fbnone", "fbaddr") for a in (E, W, S))

WWW_POLICY = '["health", "session-threshold", "least-connections", "random"]'


def hostname(name, policy, answers=1, fallback="all", extra=""):
    fq = f"{name}.{ORIGIN}"
    out = f'\n[hostname."{fq}"]\npolicy = {policy}\nanswers = {answers}\nfallback = "{fallback}"\n{extra}'
    for a in (E, W, S):
        out += f'[[hostname."{fq}".service]]\naddress = "{a}"\nsite = "{SITE[a]}"\n'
    return out


def config(port, cport, www_policy=WWW_POLICY, www_answers=1, broken=""):
    return (f'[server]\nlisten = ["127.0.0.1:{port}"]\nworkers = 2\n\n'
            f'[control]\nlisten = "127.0.0.1:{cport}"\ntoken_file = "control.token"\n\n'
            f'[[zone]]\nname = "{ORIGIN}"\nfile = "zone.db"\n\n'
            f'[defaults]\nttl = 30\nsession_threshold = 90\nmax_age = 600\n{broken}\n'
            '[site.east]\n[site.west]\n[site.south]\n'
            + hostname("www", www_policy, www_answers)
            + hostname("pool", '["health", "session-threshold", "random"]', 3, "all")
            + hostname("fbnone", '["health", "random"]', 1, "none")
            + hostname("fbaddr", '["health", "random"]', 1, FIXED))


class Gslb(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        start_with_control(cls, {"zone.db": ZONE, "control.token": TOKEN + "\n"}, ORIGIN, config, TOKEN)

    @classmethod
    def tearDownClass(cls):
        cls.g.__exit__(None, None, None)

    # ----------------------------------------------------------------------------------------- helpers

    @classmethod
    def api(cls, method, path, body=None, token=TOKEN):
        """curl the control API; returns (status, parsed JSON or text)."""
        return control_api(cls.base, method, path, body, token)

    def ok(self, method, path, body=None):
        code, j = self.api(method, path, body)
        self.assertEqual(code, 200, f"{method} {path} {body}: {j}")
        return j

    def report(self, site, conns=None, **kw):
        body = dict(kw)
        if conns is not None:
            body["services"] = {a: {"connections": c} for a, c in conns.items()}
        return self.ok("POST", f"/v1/sites/{site}/report", body)

    def dig(self, name, qtype="A"):
        r = self.g.dig(f"{name}.{ORIGIN}", qtype)
        self.assertEqual(r.rcode, "NOERROR", r.text)
        self.assertIn("aa", r.flags, r.text)
        return r

    def addrs(self, name, qtype="A"):
        return {rr.rdata for rr in self.dig(name, qtype).answer if rr.rtype == qtype}

    def union(self, name, n=15):
        seen = set()
        for _ in range(n):
            seen |= self.addrs(name)
        return seen

    def status(self):
        code, j = self.api("GET", "/v1/status", token=None)
        self.assertEqual(code, 200)
        return j

    def state(self):
        """The status without what moves by itself (ages) or by our queries (answers)."""
        j = self.status()
        sites = {s["name"]: {k: v for k, v in s.items() if k not in ("report_age_s", "ages_s")} for s in j["sites"]}
        svcs = {(s["site"], s["address"]): {k: v for k, v in s.items() if k not in ("connections_age_s", "answers")}
                for s in j["services"]}
        return sites, svcs

    def answers_total(self):
        return sum(s["answers"] for s in self.status()["services"])

    def reload_api(self):
        return self.api("POST", "/v1/reload", "")

    def write_config(self, **kw):
        self.g.write("gslbd.toml", config(self.g.port, self.cport, **kw))

    def setUp(self):
        # A known state: everything enabled, fresh reports with room in every session table.
        for a in ALL:
            self.ok("POST", f"/v1/sites/{SITE[a]}/enable", "")
            self.ok("POST", f"/v1/sites/{SITE[a]}/services/{a}/enable", "")
            self.report(SITE[a], {a: 100}, cpu=10, sessions_used=1000, sessions_max=1000000)

    # ------------------------------------------------------------------------------------------- tests

    def test_least_connections_switch(self):
        self.report("east", {E: 900}, sessions_used=1000, sessions_max=1000000)
        self.report("west", {W: 400}, sessions_used=1000, sessions_max=1000000)
        self.report("south", {S: 5000}, sessions_used=1000, sessions_max=1000000)
        self.assertEqual(self.union("www"), {W})
        self.report("west", {W: 2000}, sessions_used=1000, sessions_max=1000000)
        self.assertEqual(self.union("www"), {E})

    def test_drained_site_disappears_and_comes_back(self):
        self.assertEqual(self.addrs("pool"), ALL)
        j = self.ok("POST", "/v1/sites/west/drain", "")
        self.assertEqual(j.get("enabled"), False)
        self.assertEqual(self.addrs("pool"), {E, S})
        self.report("west", {W: 1}, sessions_used=1000, sessions_max=1000000)  # the fewest, but drained
        self.assertEqual(self.union("www", 30), {E, S})
        self.ok("POST", "/v1/sites/west/enable", "")
        self.assertEqual(self.addrs("pool"), ALL)
        self.assertEqual(self.union("www"), {W})  # and, with the fewest connections, it wins again

    def test_drained_service_disappears(self):
        self.ok("POST", f"/v1/sites/south/services/{S}/drain", "")
        self.assertEqual(self.addrs("pool"), {E, W})
        self.ok("POST", f"/v1/sites/south/services/{S}/enable", "")
        self.assertEqual(self.addrs("pool"), ALL)

    def test_full_session_table_drops_out(self):
        self.report("east", {E: 100}, sessions_used=950000, sessions_max=1000000)  # 95 % > 90 %
        self.assertEqual(self.addrs("pool"), {W, S})
        self.assertNotIn(E, self.union("www", 30))
        self.report("east", {E: 100}, sessions_used=900000, sessions_max=1000000)  # 90 %: at the threshold
        self.assertEqual(self.addrs("pool"), ALL)

    def test_all_down_fallback(self):
        for a in ALL:
            j = self.ok("POST", f"/v1/sites/{SITE[a]}/services/{a}/drain", "")
        # The last drain says which names it left with nothing undrained.
        self.assertEqual({(w["hostname"], w["type"], w["answer"]) for w in j["nothing_undrained"]},
                         {(f"{h}.{ORIGIN}", "A", "NODATA") for h in ("www", "pool", "fbnone")}
                         | {(f"fbaddr.{ORIGIN}", "A", f"fallback {FIXED}")})
        # A drain holds through the fallback: with every candidate drained, fallback all gives what none
        # gives (NODATA, the SOA in authority), never the drained addresses.
        for name in ("pool", "www", "fbnone"):
            r = self.dig(name)
            self.assertEqual(r.answer, [], r.text)
            self.assertEqual([rr.rtype for rr in r.authority], ["SOA"], r.text)
        # a fixed address: that address.
        self.assertEqual(self.addrs("fbaddr"), {FIXED})
        # One back: it alone answers everywhere.
        self.ok("POST", f"/v1/sites/west/services/{W}/enable", "")
        self.assertEqual(self.addrs("pool"), {W})
        self.assertEqual(self.addrs("fbnone"), {W})
        self.assertEqual(self.addrs("fbaddr"), {W})

    def test_a_fallback_answer_says_so_in_an_ede(self):
        # RFC 8914 §4.1: code 0 (Other) with the reason, as dig prints it; only a fallback answer has one.
        # (Down by health checks: e2e-health's test_all_down_gives_fallback.)
        r = self.dig("pool")
        self.assertEqual(r.ede, [], r.text)
        for a in ALL:  # every service drained: the fallback answers, and says why
            self.ok("POST", f"/v1/sites/{SITE[a]}/services/{a}/drain", "")
        r = self.dig("fbnone")
        self.assertEqual(r.answer, [], r.text)
        self.assertIn(f"; EDE: 0 (Other): (all services of fbnone.{ORIGIN} are drained: fallback none)", r.text)
        r = self.g.kdig(f"fbaddr.{ORIGIN}", "A", "+edns")
        self.assertEqual([rr.rdata for rr in r.answer], [FIXED], r.text)
        self.assertEqual(r.ede, [(0, f"all services of fbaddr.{ORIGIN} are drained: fallback {FIXED}")], r.text)
        # Without EDNS the same answer, no EDE.
        r = self.g.dig(f"fbaddr.{ORIGIN}", "A", "+noedns")
        self.assertEqual(([rr.rdata for rr in r.answer], r.ede), ([FIXED], []), r.text)

    def test_aaaa_on_v4_only_name_is_nodata(self):
        r = self.dig("www", "AAAA")
        self.assertEqual(r.answer, [], r.text)
        self.assertEqual([rr.rtype for rr in r.authority], ["SOA"], r.text)

    def test_status_counts_answers(self):
        n = 25
        before = self.answers_total()
        for _ in range(n):
            self.assertEqual(len(self.addrs("www")), 1)
        self.assertEqual(self.answers_total(), before + n)
        # pool answers 3 records per query: 3 counted per query.
        before = self.answers_total()
        for _ in range(4):
            self.addrs("pool")
        self.assertEqual(self.answers_total(), before + 12)

    def test_metrics_parse_as_prometheus_text(self):
        # Parsed by the reference parser (Debian's python3-prometheus-client, for the system python3), not ours.
        for _ in range(3):
            self.addrs("www")
        p = subprocess.run(["curl", "-sS", "-m", "5", self.base + "/metrics"], capture_output=True, text=True,
                           timeout=10)
        self.assertEqual(p.returncode, 0, p.stderr)
        parser = (
            "import sys, json\n"
            "from prometheus_client.parser import text_string_to_metric_families as f\n"
            "out = {}\n"
            "for fam in f(sys.stdin.read()):\n"
            "    for s in fam.samples:\n"
            "        out.setdefault(s.name, []).append([s.labels, s.value])\n"
            "print(json.dumps(out))\n")
        r = subprocess.run(["/usr/bin/python3", "-c", parser], input=p.stdout, capture_output=True, text=True,
                           timeout=30)
        self.assertEqual(r.returncode, 0, f"the Prometheus parser refused /metrics:\n{r.stderr}\n{p.stdout}")
        m = json.loads(r.stdout)
        self.assertGreater(sum(v for _, v in m["gslbd_queries_total"]), 0)
        self.assertIn("gslbd_responses_total", m)
        self.assertIn("gslbd_queries_by_type_total", m)
        answered = {l["address"]: v for l, v in m["gslbd_service_answers_total"]}
        self.assertGreater(sum(answered.values()), 2)

    def test_status_shows_reports(self):
        self.report("east", {E: 321}, cpu=42, sessions_used=5000, sessions_max=10000)
        self.ok("POST", f"/v1/sites/south/services/{S}/drain", "")
        sites, svcs = self.state()
        self.assertEqual(sites["east"]["cpu"], 42)
        self.assertEqual(sites["east"]["sessions_used"], 5000)
        self.assertEqual(sites["east"]["sessions_max"], 10000)
        self.assertEqual(svcs[("east", E)]["connections"], 321)
        self.assertEqual(svcs[("south", S)]["enabled"], False)
        self.assertEqual(set(svcs[("east", E)]["hostnames"]), {f"{h}.{ORIGIN}" for h in ("www", "pool", "fbnone", "fbaddr")})
        code, text = self.api("GET", "/metrics", token=None)
        self.assertEqual(code, 200)
        self.assertIn(f'gslbd_service_connections{{site="east",address="{E}"}} 321\n', text)

    def test_refused_requests_change_nothing(self):
        self.report("east", {E: 100})
        self.report("west", {W: 400})
        self.report("south", {S: 900})
        self.assertEqual(self.union("www"), {E})
        before = self.state()
        pool = self.addrs("pool")
        good = {"cpu": 5, "services": {W: {"connections": 1}}}  # would make west the best
        cases = [
            (401, "POST", "/v1/sites/west/report", good, "not-the-token"),
            (401, "POST", "/v1/sites/west/report", good, None),
            (401, "POST", "/v1/sites/east/drain", "", "not-the-token"),
            (401, "POST", f"/v1/sites/east/services/{E}/drain", "", None),
            (400, "POST", "/v1/sites/west/report", "{not json", TOKEN),
            (400, "POST", "/v1/sites/west/report", {"cpu": 5, "services": {W: {"connections": -1}}}, TOKEN),
            (400, "POST", "/v1/sites/west/report", {"cpu": 101, "services": {W: {"connections": 1}}}, TOKEN),
            (400, "POST", "/v1/sites/west/report", {"services": {W: {"connections": 1}}, "sessions_used": 5}, TOKEN),
            (400, "POST", "/v1/sites/west/report", {"services": {W: {"connections": 1}}, "bogus": 1}, TOKEN),
            (404, "POST", "/v1/sites/nowhere/report", good, TOKEN),
            (404, "POST", "/v1/sites/nowhere/drain", "", TOKEN),
            (404, "POST", f"/v1/sites/west/services/{E}/drain", "", TOKEN),
            (404, "POST", "/v1/sites/west/report", {"services": {W: {"connections": 1}, E: {"connections": 1}}},
             TOKEN),
            (405, "GET", "/v1/sites/west/drain", None, TOKEN),
            # Methods no endpoint takes: a JSON 405 too (evhttp answered these with an HTML 501 page).
            (405, "PUT", "/v1/sites/west/report", good, TOKEN),
            (405, "DELETE", "/v1/sites/west/drain", None, TOKEN),
            (405, "PATCH", "/v1/status", None, TOKEN),
        ]
        for want, method, path, body, token in cases:
            with self.subTest(method=method, path=path, body=body, token=token):
                code, j = self.api(method, path, body, token=token)
                self.assertEqual(code, want, j)
                self.assertIsInstance(j, dict, j)
                self.assertIn("error", j)
        # A 405 names the methods the resource takes (RFC 9110 §15.5.6), with the standard reason phrase.
        for method, path, allow in (("DELETE", "/v1/sites/west/drain", "POST"), ("PUT", "/v1/status", "GET, HEAD")):
            with self.subTest(method=method, path=path):
                p = subprocess.run(["curl", "-sS", "-m", "5", "-D", "-", "-o", "/dev/null", "-X", method,
                                    "-H", f"Authorization: Bearer {TOKEN}", self.base + path],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=10)
                head = p.stdout.lower()
                self.assertIn("405 method not allowed", head.splitlines()[0] if head else "", p.stdout)
                self.assertIn(f"allow: {allow.lower()}", head.splitlines(), p.stdout)
        self.assertEqual(self.state(), before)
        self.assertEqual(self.union("www"), {E})
        self.assertEqual(self.addrs("pool"), pool)

    def test_reload_api_switches_policy_and_survives_a_broken_config(self):
        try:
            self.report("east", {E: 100})
            self.report("west", {W: 400})
            self.report("south", {S: 900})
            self.assertEqual(self.union("www"), {E})
            # Switch www to plain random over 3 answers.
            self.write_config(www_policy='["health", "random"]', www_answers=3)
            code, j = self.reload_api()
            self.assertEqual(code, 200, j)
            self.assertEqual(j.get("ok"), True, j)
            self.assertEqual(self.addrs("www"), ALL)
            pol = {h["name"]: h["policy"] for h in self.status()["hostnames"]}
            self.assertEqual(pol[f"www.{ORIGIN}"], ["health", "random"])
            # The reports survived the reload: back to least connections, east still wins.
            self.write_config()
            self.assertEqual(self.reload_api()[0], 200)
            self.assertEqual(self.union("www"), {E})
            # A broken config: 500 naming file:line, and the previous configuration keeps serving.
            broken = config(self.g.port, self.cport, broken='answers = "two"\n')
            self.g.write("gslbd.toml", broken)
            lineno = broken.split("\n").index('answers = "two"') + 1
            code, j = self.reload_api()
            self.assertEqual(code, 500, j)
            self.assertIn(f'{self.g.path("gslbd.toml")}:{lineno}: [defaults] answers: must be an integer',
                          j.get("error", ""))
            self.assertEqual(self.union("www"), {E})
            self.assertEqual(self.dig("www").answer[0].ttl, 30)
            self.assertRegex(self.g.stderr(), r"reload failed, still serving the previous configuration")
        finally:
            self.write_config()
            self.assertEqual(self.reload_api()[0], 200)

    def test_sighup_keeps_a_drained_service_drained(self):
        self.ok("POST", f"/v1/sites/west/services/{W}/drain", "")
        self.assertEqual(self.addrs("pool"), {E, S})
        done = len(re.findall(r"reloaded ", self.g.stderr()))
        self.g.reload()
        deadline = time.monotonic() + 5
        while len(re.findall(r"reloaded ", self.g.stderr())) <= done:
            self.assertLess(time.monotonic(), deadline, "no 'reloaded' log line after SIGHUP:\n" + self.g.stderr())
            time.sleep(0.05)
        self.assertEqual(self.addrs("pool"), {E, S})
        self.assertNotIn(W, self.union("www", 30))
        self.assertEqual(self.state()[1][("west", W)]["enabled"], False)
        self.ok("POST", f"/v1/sites/west/services/{W}/enable", "")
        self.assertEqual(self.addrs("pool"), ALL)


if __name__ == "__main__":
    run_tests()
