#!/usr/bin/env python3
"""Learned latency (the `rtt` stage and gslbd-agent), in a lab of network namespaces this test makes:

- three sites (s1, s2, s3) and three client networks (c1, c2, c3) behind one router namespace, where a delay line
  (tests/e2e/delayline.py: this kernel has no netem) holds each packet between a client network and a site for
  that pair's delay. Each client network is nearest to a different site, and deliberately NOT the one the
  topology map gives it: c1's map says s1 but s2 is fastest, c2's says s2 but s3 is, c3's says s3 but s1 is;
- real TCP traffic: each client keeps connections to an echo server at every site and talks on them;
- gslbd-agent in each site's namespace reads those connections' RTTs (sock_diag) and reports them to gslbd,
  two of them with their site's own agent token, one with the control token;
- gslbd (in the router namespace) answers www with policy health, rtt, topology, random.

Checks: after the agents' first reports each client network is answered with its fastest site at least 90 % of
the time, by ECS and by the resolver's own address (the rest: rtt_explore's 5 %); explain shows the client's
prefix and each site's RTT, age and samples; a delay change moves the answers within two report intervals (the
agent follows a path that grew longer: the kernel's own five-minute minimum would not); a killed agent's figures
age out to unknown, never to fast (the answers fall back to the topology map's site among the rest); reports
are refused whole with a reason (another prefix length, another site's token).

Skipped, with the reason, where namespaces or AF_PACKET sockets cannot be made (not root).
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import gslbd_path, netns_available, run_tests, sh, spawn  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
TAG = f"{os.getpid() % 100000}"
ROUTER = f"grr{TAG}"
SITES = [f"grs{i}{TAG}" for i in (1, 2, 3)]
CLIENTS = [f"grc{i}{TAG}" for i in (1, 2, 3)]
DNS = "10.200.0.1"
PORT = 5300
CPORT = 8053
ECHO = 8080
INTERVAL = 2  # s between agent reports
MAX_AGE = 8   # rtt_max_age
VIP = {1: "192.0.2.1", 2: "192.0.2.2", 3: "192.0.2.3"}  # site i's answer
TOKEN = "rtt-control-t0ken"
SITE_TOKENS = {1: "agent-s1-t0ken", 2: "agent-s2-t0ken"}  # s3's agent uses the control token

# RTT in ms between client network j and site i (one way is half). The fastest is never the map's choice.
RTT = {1: {1: 50, 2: 10, 3: 80},
       2: {1: 80, 2: 50, 3: 10},
       3: {1: 10, 2: 80, 3: 50}}
FASTEST = {1: 2, 2: 3, 3: 1}

QUERY_PROG = r"""
import json, socket, struct, sys
sys.path.insert(0, sys.argv[1])
from harness import build_query, decode_msg
server, n, ecs = sys.argv[2], int(sys.argv[3]), sys.argv[4]
opts = b""
if ecs != "-":
    net, bits = ecs.split("/")
    addr = socket.inet_aton(net)[: (int(bits) + 7) // 8]
    opts = struct.pack("!HHHBB", 8, 4 + len(addr), 1, int(bits), 0) + addr
counts = {}
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(2)
for i in range(n):
    s.sendto(build_query("www.gslb.example.com.", "A", qid=i, edns=True, edns_opts=opts), (server, %d))
    m = decode_msg(s.recvfrom(4096)[0])
    for rr in m.answer:
        counts[rr[4]] = counts.get(rr[4], 0) + 1
print(json.dumps(counts))
""" % PORT

ECHO_PROG = r"""
import asyncio
async def serve(r, w):
    try:
        while data := await r.read(1024):
            w.write(data)
            await w.drain()
    except ConnectionError:
        pass
async def main():
    srv = await asyncio.start_server(serve, "0.0.0.0", %d)
    async with srv:
        await srv.serve_forever()
asyncio.run(main())
""" % ECHO

# Each client keeps four connections to every site and sends a byte on each every 50 ms, so the kernel has a
# fresh RTT sample on each many times a second; a connection that breaks is made again.
TRAFFIC_PROG = r"""
import asyncio, sys
sites = sys.argv[1:]
async def talk(host):
    while True:
        try:
            r, w = await asyncio.open_connection(host, %d)
            while True:
                w.write(b"x")
                await w.drain()
                await r.readexactly(1)
                await asyncio.sleep(0.05)
        except (ConnectionError, OSError, asyncio.IncompleteReadError):
            await asyncio.sleep(0.2)
async def main():
    await asyncio.gather(*(talk(h) for h in sites for _ in range(4)))
asyncio.run(main())
""" % ECHO


def can_run():
    ok, why = netns_available(f"grprobe{TAG}", "network namespaces, veth pairs, AF_PACKET")
    if not ok:
        return False, why
    if not os.access(agent_path(), os.X_OK):
        return False, f"no gslbd-agent at {agent_path()} (GSLBD_AGENT)"
    return True, ""


def agent_path():
    return os.path.abspath(os.environ.get("GSLBD_AGENT") or os.path.join(os.path.dirname(os.path.dirname(
        gslbd_path())), "tools", "gslbd-agent"))


OK, WHY = can_run()


def site_net(i):
    return f"10.1.{i}.0/24"


def client_net(j):
    return f"10.2.{j}.0/24"


def mac(ns, dev):
    return sh("ip", "netns", "exec", ns, "cat", f"/sys/class/net/{dev}/address").stdout.strip()


@unittest.skipUnless(OK, WHY or "rtt lab unavailable")
class RttLab(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.procs, cls.agents = [], {}
        cls.dir = tempfile.mkdtemp(prefix="gslbd-rtt-")
        try:
            cls._setup()
        except BaseException:
            cls.tearDownClass()  # unittest does not call it when setUpClass fails
            raise

    @classmethod
    def _setup(cls):
        for ns in [ROUTER] + SITES + CLIENTS:
            sh("ip", "netns", "add", ns)
            sh("ip", "-n", ns, "link", "set", "lo", "up")
        sh("ip", "-n", ROUTER, "addr", "add", DNS + "/32", "dev", "lo")
        links = []
        for kind, names, prefix in (("s", SITES, "10.1"), ("c", CLIENTS, "10.2")):
            for k, ns in enumerate(names, 1):
                rif = f"r{kind}{k}"
                sh("ip", "link", "add", rif, "netns", ROUTER, "type", "veth", "peer", "name", "eth0", "netns", ns)
                sh("ip", "-n", ROUTER, "addr", "add", f"{prefix}.{k}.1/24", "dev", rif)
                sh("ip", "-n", ns, "addr", "add", f"{prefix}.{k}.2/24", "dev", "eth0")
                for n, d in ((ROUTER, rif), (ns, "eth0")):
                    sh("ip", "-n", n, "link", "set", d, "up")
                sh("ip", "-n", ns, "route", "add", "default", "via", f"{prefix}.{k}.1")
                links.append({"ifname": rif, "net": f"{prefix}.{k}.0/24", "peer_mac": mac(ns, "eth0")})
        cls.delay_conf = os.path.join(cls.dir, "delays.json")
        cls.links = links
        cls.write_delays(RTT)
        cls.delayline = cls.start([sys.executable, os.path.join(HERE, "delayline.py"), cls.delay_conf], ns=ROUTER,
                                  log="delayline.log")
        cls.wait_log("delayline.log", "delayline: ready", 10)

        for i, ns in enumerate(SITES, 1):
            cls.start([sys.executable, "-c", ECHO_PROG], ns=ns, log=f"echo{i}.log")
        cls.write_gslbd()
        cls.gslbd = cls.start([gslbd_path(), "-c", os.path.join(cls.dir, "gslbd.toml")], ns=ROUTER, log="gslbd.log")
        cls.wait(lambda: cls.status() is not None, 15, "gslbd's control API")
        time.sleep(0.3)  # the echo servers listen
        for j, ns in enumerate(CLIENTS, 1):
            cls.start([sys.executable, "-c", TRAFFIC_PROG] + [f"10.1.{i}.2" for i in (1, 2, 3)], ns=ns,
                      log=f"traffic{j}.log")
        for i in (1, 2, 3):
            cls.start_agent(i)

    @classmethod
    def start(cls, argv, ns, log):
        out = open(os.path.join(cls.dir, log), "w")
        p = spawn(["ip", "netns", "exec", ns] + argv, stdout=out, stderr=subprocess.STDOUT, cwd=cls.dir)
        cls.procs.append(p)
        return p

    @classmethod
    def start_agent(cls, i):
        tok = os.path.join(cls.dir, f"agent{i}.token")
        with open(tok, "w") as f:
            f.write(SITE_TOKENS.get(i, TOKEN) + "\n")
        cls.agents[i] = cls.start([agent_path(), "--site", f"s{i}", "--ports", str(ECHO), "--to",
                                   f"http://{DNS}:{CPORT}", "--token-file", tok, "--interval", str(INTERVAL),
                                   "--poll", "0.25"], ns=SITES[i - 1], log=f"agent{i}.log")

    @classmethod
    def write_delays(cls, rtt):
        delays = {}
        for j in (1, 2, 3):
            for i in (1, 2, 3):
                delays[f"{client_net(j)} {site_net(i)}"] = rtt[j][i] / 2
                delays[f"{site_net(i)} {client_net(j)}"] = rtt[j][i] / 2
        with open(cls.delay_conf, "w") as f:
            json.dump({"links": cls.links, "delays_ms": delays}, f)

    @classmethod
    def write_gslbd(cls):
        d = cls.dir
        with open(os.path.join(d, "control.token"), "w") as f:
            f.write(TOKEN + "\n")
        os.chmod(os.path.join(d, "control.token"), 0o600)
        for i, t in SITE_TOKENS.items():
            with open(os.path.join(d, f"s{i}.token"), "w") as f:
                f.write(t + "\n")
            os.chmod(os.path.join(d, f"s{i}.token"), 0o600)
        with open(os.path.join(d, "zone"), "w") as f:
            f.write("$ORIGIN gslb.example.com.\n$TTL 30\n"
                    "@ SOA ns1 hostmaster 1 3600 600 86400 30\n@ NS ns1\nns1 A 10.200.0.1\n"
                    + "".join(f"www A {VIP[i]}\n" for i in (1, 2, 3)))
        sites = "".join(f'[site.s{i}]\n' + (f'agent_token_file = "s{i}.token"\n' if i in SITE_TOKENS else "")
                        for i in (1, 2, 3))
        services = "".join(f'[[hostname."www.gslb.example.com.".service]]\naddress = "{VIP[i]}"\nsite = "s{i}"\n'
                           for i in (1, 2, 3))
        with open(os.path.join(d, "gslbd.toml"), "w") as f:
            f.write(f"""[server]
listen = ["{DNS}:{PORT}"]
workers = 1
ecs = true

[control]
listen = "{DNS}:{CPORT}"
token_file = "control.token"

[[zone]]
name = "gslb.example.com."
file = "zone"

[topology]
nets = {{ "{client_net(1)}" = "r1", "{client_net(2)}" = "r2", "{client_net(3)}" = "r3" }}

[rtt]
prefixes_max = 1024

{sites}
[hostname."www.gslb.example.com."]
policy = ["health", "rtt", "topology", "random"]
topology = {{ r1 = ["s1", "s2", "s3"], r2 = ["s2", "s3", "s1"], r3 = ["s3", "s1", "s2"], default = ["s1", "s2", "s3"] }}
rtt_max_age = {MAX_AGE}
rtt_explore = 5
{services}""")

    @classmethod
    def tearDownClass(cls):
        for p in getattr(cls, "procs", []):
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()
        for ns in [ROUTER] + SITES + CLIENTS:
            sh("ip", "netns", "del", ns, check=False)
        if getattr(cls, "dir", None):
            if os.environ.get("GSLBD_KEEP_LAB"):
                print(f"lab files kept in {cls.dir}")
            else:
                shutil.rmtree(cls.dir, ignore_errors=True)

    # ---- helpers

    @classmethod
    def wait(cls, pred, seconds, what):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if pred():
                return
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {what}; gslbd log:\n{cls.log('gslbd.log')[-3000:]}")

    @classmethod
    def wait_log(cls, name, text, seconds):
        cls.wait(lambda: text in cls.log(name), seconds, f"'{text}' in {name}")

    @classmethod
    def log(cls, name):
        try:
            with open(os.path.join(cls.dir, name)) as f:
                return f.read()
        except OSError:
            return ""

    @classmethod
    def api(cls, method, path, body=None, token=None):
        prog = ("import sys, urllib.request, urllib.error\n"
                "req = urllib.request.Request(sys.argv[1], data=sys.argv[2].encode() if sys.argv[2] else None,"
                " method=sys.argv[3])\n"
                "if sys.argv[4]: req.add_header('Authorization', 'Bearer ' + sys.argv[4])\n"
                "try:\n  r = urllib.request.urlopen(req, timeout=5); print(r.status); print(r.read().decode())\n"
                "except urllib.error.HTTPError as e:\n  print(e.code); print(e.read().decode())\n")
        p = sh("ip", "netns", "exec", ROUTER, sys.executable, "-c", prog, f"http://{DNS}:{CPORT}{path}",
               body or "", method, token or "", check=False)
        if p.returncode != 0:
            return None, p.stdout
        code, _, text = p.stdout.partition("\n")
        return int(code), text

    @classmethod
    def status(cls):
        code, text = cls.api("GET", "/v1/status")
        return json.loads(text) if code == 200 else None

    def query(self, ns, n, ecs="-"):
        p = sh("ip", "netns", "exec", ns, sys.executable, "-c", QUERY_PROG, HERE, DNS, str(n), ecs, timeout=60)
        return json.loads(p.stdout.strip().splitlines()[-1])

    def share(self, counts, site):
        total = sum(counts.values())
        return counts.get(VIP[site], 0) / total if total else 0.0

    def wait_reports(self, sites, count=2):
        def ok():
            st = self.status()
            return st and all(st["rtt"]["sites"].get(f"s{i}", {}).get("reports", 0) >= count for i in sites)
        self.wait(ok, 10 * INTERVAL + 10, f"{count} reports from sites {sites}")

    # ---- tests, in order

    def test_1_fastest_site_by_ecs_and_by_resolver_address(self):
        self.wait_reports((1, 2, 3))
        for j in (1, 2, 3):
            by_ecs = self.query(ROUTER, 200, ecs=client_net(j))
            by_addr = self.query(CLIENTS[j - 1], 200)
            for how, counts in (("ECS", by_ecs), ("resolver address", by_addr)):
                share = self.share(counts, FASTEST[j])
                self.assertGreaterEqual(share, 0.9, f"client network {j} by {how}: {counts}, fastest is "
                                        f"s{FASTEST[j]} ({VIP[FASTEST[j]]}); explain:\n{self.explain(j)}")
        st = self.status()["rtt"]
        self.assertGreaterEqual(st["prefixes"], 3)
        self.assertEqual(st["prefix_v4"], 24)

    def explain(self, j):
        code, text = self.api("GET", f"/v1/explain?name=www.gslb.example.com.&type=A&client=10.2.{j}.2")
        return text if code == 200 else f"{code} {text}"

    def test_2_explain_shows_prefix_rtt_age_and_samples(self):
        self.wait_reports((1, 2, 3))
        e = json.loads(self.explain(1))
        stage = next(s for s in e["stages"] if s["stage"] == "rtt")
        self.assertEqual(stage["bar"]["prefix"], "10.2.1.0/24")
        self.assertEqual(stage["bar"]["tolerance_percent"], 10)
        self.assertEqual(stage["bar"]["max_age_s"], MAX_AGE)
        values = {v["service"]: v for v in stage["values"]}
        for i in (1, 2, 3):
            v = values[f"s{i}/{VIP[i]}"]
            self.assertIsNotNone(v["value"]["rtt_ms"], v)
            self.assertGreaterEqual(v["value"]["samples"], 1)
            self.assertLessEqual(v["age_s"], 2 * INTERVAL + 1)
            # The delay line's RTT, give or take the scheduling of a loaded machine.
            self.assertGreater(v["value"]["rtt_ms"], RTT[1][i] * 0.8, v)
            self.assertLess(v["value"]["rtt_ms"], RTT[1][i] + 40, v)
        self.assertEqual(stage["kept"], [f"s2/{VIP[2]}"])

    def test_3_reports_refused_whole_with_a_reason(self):
        body = json.dumps({"prefixes": [{"prefix": "10.2.0.0/20", "rtt_ms": 1, "samples": 1}]})
        code, text = self.api("POST", "/v1/sites/s1/rtt", body, SITE_TOKENS[1])
        self.assertEqual(code, 400, text)
        self.assertIn("groups IPv4 clients by /24", text)
        # s1's token posts s1's reports only: not s2's, and no drain.
        ok = json.dumps({"prefixes": [{"prefix": "10.9.9.0/24", "rtt_ms": 1, "samples": 1}]})
        self.assertEqual(self.api("POST", "/v1/sites/s2/rtt", ok, SITE_TOKENS[1])[0], 401)
        self.assertEqual(self.api("POST", "/v1/sites/s1/drain", "", SITE_TOKENS[1])[0], 401)
        self.assertEqual(self.api("POST", "/v1/sites/s1/rtt", ok, SITE_TOKENS[1])[0], 200)
        self.assertEqual(self.api("POST", "/v1/sites/s9/rtt", ok, TOKEN)[0], 404)

    def test_3b_once_exits_1_when_its_report_is_refused(self):
        # --once is how a script checks an agent's set-up: its exit status says whether gslbd took the report
        # (it exited 0 after a 409 or 400). /20 is not gslbd's prefix_v4 (24): refused, the reason logged.
        tok = os.path.join(self.dir, "agent1.token")
        argv = ["ip", "netns", "exec", SITES[0], agent_path(), "--site", "s1", "--ports", str(ECHO), "--to",
                f"http://{DNS}:{CPORT}", "--token-file", tok, "--interval", "1", "--poll", "0.25", "--once"]
        p = sh(*argv, "--prefix-v4", "20", check=False)
        self.assertEqual(p.returncode, 1, p.stdout)
        self.assertIn("HTTP 400", p.stdout)
        self.assertIn("groups IPv4 clients by /24", p.stdout)
        p = sh(*argv, check=False)
        self.assertEqual(p.returncode, 0, p.stdout)
        self.assertRegex(p.stdout, r"/v1/sites/s1/rtt: taken \(\d+ prefix\(es\), [1-9]\d* connection\(s\) now\)")

    def test_4_a_delay_change_moves_the_answers_within_two_intervals(self):
        self.wait_reports((1, 2, 3))
        changed = json.loads(json.dumps(RTT), object_hook=lambda d: {int(k): v for k, v in d.items()})
        changed[1] = {1: 50, 2: 80, 3: 10}  # c1's path to s2 grew longer; s3 is now its fastest
        self.write_delays(changed)
        t0 = time.monotonic()
        os.kill(self.delayline.pid, signal.SIGHUP)  # ip netns exec execs: the pid is the delay line's
        moved = None
        while time.monotonic() - t0 < 4 * INTERVAL + 5:
            if self.share(self.query(ROUTER, 40, ecs=client_net(1)), 3) >= 0.9:
                moved = time.monotonic() - t0
                break
            time.sleep(0.2)
        self.assertIsNotNone(moved, f"c1 never moved to s3; explain:\n{self.explain(1)}")
        # Two report intervals, and the time the kernel's smoothed RTT takes to follow (a few dozen samples).
        self.assertLessEqual(moved, 2 * INTERVAL + 2, f"moved after {moved:.1f} s")
        print(f"  c1 moved to s3 {moved:.1f} s after the delay change (report interval {INTERVAL} s)")
        self.write_delays(RTT)
        os.kill(self.delayline.pid, signal.SIGHUP)

    def test_5_a_dead_agent_ages_out_to_unknown_never_to_fast(self):
        self.wait_reports((1, 2, 3))
        self.wait(lambda: self.share(self.query(ROUTER, 40, ecs=client_net(2)), 3) >= 0.9, 4 * INTERVAL + 5,
                  "c2 answered with s3 again")
        a = self.agents.pop(3)
        os.killpg(a.pid, signal.SIGKILL)
        a.wait()
        t0 = time.monotonic()
        # Until rtt_max_age the last figures still hold; then s3 is unknown for c2: kept beside the best known
        # (s2, 50 ms, over s1's 80), and the topology map's r2 list [s2, s3, s1] picks s2. Had the dead agent's
        # figures counted as zero, or been kept forever, s3 would go on winning.
        self.wait(lambda: self.share(self.query(ROUTER, 40, ecs=client_net(2)), 2) >= 0.9, MAX_AGE + 3 * INTERVAL + 5,
                  "c2 to fall back to s2 once s3's figures aged out")
        aged = time.monotonic() - t0
        self.assertGreaterEqual(aged, MAX_AGE - INTERVAL - 1, f"s3's figures went unknown after {aged:.1f} s")
        e = json.loads(self.explain(2))
        stage = next(s for s in e["stages"] if s["stage"] == "rtt")
        s3 = next(v for v in stage["values"] if v["service"] == f"s3/{VIP[3]}")
        self.assertIsNone(s3["value"]["rtt_ms"], s3)
        self.assertIn(f"s3/{VIP[3]}", stage["kept"])  # unknown is kept, never dropped as slow
        self.start_agent(3)


@unittest.skipUnless(os.path.exists(agent_path()), "no gslbd-agent (GSLBD_AGENT)")
class AgentCommandLine(unittest.TestCase):
    """gslbd-agent(8)'s exit status for its command line: 2 on a usage error (it returned CLI11's own 106 for a
    missing option), 0 after --help."""

    def run_agent(self, *args):
        return subprocess.run([agent_path(), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              timeout=30)

    def test_usage_errors_exit_2(self):
        for args, says in ((["--ports", "80"], "--site is required"),
                           (["--site", "east", "--ports", "0", "--to", "http://127.0.0.1:1", "--token-file", "t"],
                            '--ports: "0" is not a port'),
                           (["--site", "east", "--ports", "80", "--to", ",", "--token-file", "t"], "--to names no URL"),
                           (["--interval", "0.5"], "--interval")):
            p = self.run_agent(*args)
            self.assertEqual(p.returncode, 2, (args, p.stderr))
            self.assertIn(says, p.stderr, args)

    def test_help_exits_0(self):
        p = self.run_agent("--help")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("--token-file", p.stdout)


if __name__ == "__main__":
    run_tests()
