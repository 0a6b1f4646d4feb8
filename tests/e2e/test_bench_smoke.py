"""Smoke run of tools/bench (doc/performance.md): every stage runs and prints numbers, with tiny sizes and 1 s runs.

No timing is asserted (the machine may be busy); only that each stage produced positive numbers for gslbd,
that every installed peer produced numbers, and that a peer that is not installed was skipped with a
message. Python 3 stdlib only; prints "N passed, N failed" as its last line (harness.run_tests).
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import REPO, gslbd_path, run_tests  # noqa: E402

BENCH = os.path.join(REPO, "tools", "bench")
PEERS = {"nsd": "nsd", "knot": "knotd", "gdnsd": "gdnsd"}


class BenchSmoke(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="bench-smoke.")
        cls.json_path = os.path.join(cls.tmp, "bench.json")
        env = dict(os.environ)
        env["GSLBD"] = gslbd_path()
        micro = os.environ.get("GSLBD_MICROBENCH") or os.path.join(REPO, "build", "tools", "microbench",
                                                                   "gslbd-microbench")
        env["GSLBD_MICROBENCH"] = micro
        cmd = [sys.executable, BENCH, "--quick", "--no-build", "--duration", "1", "--names", "1000",
               "--big-records", "5000", "--json", cls.json_path]
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=110)
        cls.rc, cls.out, cls.err = r.returncode, r.stdout, r.stderr
        print(cls.out)
        if cls.err:
            print(cls.err, file=sys.stderr)
        cls.res = None
        if os.path.exists(cls.json_path):
            with open(cls.json_path) as f:
                cls.res = json.load(f)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_exit_and_json(self):
        self.assertEqual(self.rc, 0, self.err[-2000:])
        self.assertIsNotNone(self.res, "no JSON written")

    def test_stages_printed(self):
        for h in ("== QPS", "== Zone load time", "== Memory per GSLB service", "== Microbenchmark",
                  "== QPS under load", "== Summary"):
            self.assertIn(h, self.out)

    def test_qps_numbers(self):
        g = self.res["qps"]["gslbd"]
        for key in ("static", "gslb", "gslb-default"):
            self.assertGreater(g[key]["qps"] or 0, 0, key)
            self.assertGreater(g[key]["avg_ms"] or 0, 0, key)
            self.assertGreater(g[key]["p99_ms"] or 0, 0, key)

    def test_peers_ran_or_were_skipped(self):
        for peer, binary in PEERS.items():
            if shutil.which(binary):
                self.assertIn(peer, self.res["qps"], f"{peer} is installed but has no QPS numbers")
                self.assertGreater(self.res["qps"][peer]["static"]["qps"] or 0, 0)
                if peer != "gdnsd":
                    self.assertGreater(self.res["load"][peer]["seconds"], 0)
            else:
                self.assertTrue(any(s.startswith(peer) for s in self.res["skipped"]), peer)

    def test_modes(self):
        """The performance work: UDP at a fixed load, TCP one query at a time and pipelined, each run labelled with what bound
        it (client-bound only when the server had CPU to spare)."""
        g = self.res["qps"]["gslbd"]
        for key in ("static-fixed", "static-tcp1", "static-tcp"):
            self.assertGreater(g[key]["qps"] or 0, 0, key)
            self.assertGreater(g[key]["cpu_us_per_q"] or 0, 0, key)
        for kind in self.res["qps"].values():
            for key, r in kind.items():
                for b, cli, srv in zip(r["bound"], r["runs"]["client_cpu_pct"], r["runs"]["cpu_pct"]):
                    self.assertIn(b, ("server-bound", "client-bound", "contended", "fixed", "fixed-short"), key)
                    if b == "client-bound":
                        self.assertLess(srv, 90, key)
                        self.assertGreaterEqual(cli, 90, key)
        self.assertTrue(any(k.endswith("vs nsd") or k.endswith("vs gdnsd") for k in self.res.get("ratio_spread", {}))
                        or not (shutil.which("nsd") or shutil.which("gdnsd")))

    def test_answer_sizes(self):
        """Like for like: every installed peer's GSLB answer is the size of gslbd's (one A, TTL 30)."""
        sizes = self.res["sizes"]
        self.assertEqual(sizes["gslbd"]["gslb"][2], 1)
        for peer, binary in PEERS.items():
            if shutil.which(binary):
                self.assertTrue(sizes[peer]["gslb_same"], (peer, sizes[peer]["gslb"], sizes["gslbd"]["gslb"]))
        if shutil.which("knotd"):
            self.assertEqual(sizes["knot"]["static_differ"], 0, sizes["knot"]["differences"])

    def test_load_numbers(self):
        g = self.res["load"]["gslbd"]
        self.assertGreater(g["seconds"], 0)
        self.assertGreater(g["rss_mib"], 0)
        if shutil.which("nsd"):
            # NSD's main process, xfrd and its server child: all of them are summed
            self.assertGreaterEqual(self.res["load"]["nsd"]["processes"], 2)

    def test_services_stage(self):
        sv = self.res["services"]
        self.assertGreater(sv["gslbd"]["seconds"], 0)
        self.assertGreater(sv["gslbd"]["bytes_per_service"], 0)
        if shutil.which("gdnsd"):
            self.assertGreater(sv["gdnsd"]["bytes_per_service"], 0)

    def test_microbench_numbers(self):
        rows = self.res["micro"]
        self.assertTrue(rows)
        for n in (2, 16, 64):
            self.assertTrue(any(r["part"] == "select" and r["services"] == n and r["ns"] > 0 for r in rows), n)
        self.assertTrue(any(r["part"] == "answer" and r["ns"] > 0 for r in rows))

    def test_checks_stage(self):
        c = self.res["checks"]
        if c is None:  # the stage may be skipped with a reason while the API / checks are incomplete
            self.assertTrue(any(s.startswith("checks") for s in self.res["skipped"]))
            return
        self.assertGreater(c["idle"]["qps"] or 0, 0)
        self.assertGreater(c["loaded"]["qps"] or 0, 0)

    def test_summary_ratios(self):
        self.assertTrue(any(v for v in self.res["ratios"].values()))


@unittest.skipUnless(shutil.which("valgrind") and shutil.which("dnsperf"), "valgrind or dnsperf not installed")
class BenchInstrSmoke(unittest.TestCase):
    """The instr stage (callgrind instructions per query) in quick mode: one short run of gslbd."""

    def test_instr_stage(self):
        with tempfile.TemporaryDirectory(prefix="bench-instr.") as tmp:
            out = os.path.join(tmp, "instr.json")
            env = dict(os.environ, GSLBD=gslbd_path())
            r = subprocess.run([sys.executable, BENCH, "--quick", "--no-build", "--stages", "instr", "--servers",
                                "gslbd", "--instr-queries", "300", "--json", out],
                               capture_output=True, text=True, env=env, timeout=100)
            print(r.stdout[-1500:])
            self.assertEqual(r.returncode, 0, r.stderr[-2000:])
            with open(out) as f:
                res = json.load(f)
        st = res["instr"]["gslbd"]["static"]
        self.assertGreater(st["answered"], 250)
        self.assertGreater(st["parts"]["zones"], 0)
        self.assertGreater(st["ir_per_q"], st["parts"]["zones"])


class InstrNames(unittest.TestCase):
    """The instr stage's per-function diff: one function gets one name whatever path its build recorded
    (last session's diff listed zones/answer.cpp:answer twice, once as build/../zones/answer.cpp)."""

    def test_function_key(self):
        raws = ["build/../zones/answer.cpp:gslb::zones::answer(std::span<unsigned char const>) [/x/gslbd]",
                "/work/wt/udp/build/../zones/answer.cpp:gslb::zones::answer(std::span<unsigned char const>)",
                "../zones/answer.cpp:gslb::zones::answer(int)",
                "zones/answer.cpp:gslb::zones::answer",
                "build/../zones/answer.cpp:gslb::zones::(anonymous namespace)::Ctx::mustSigned() [/x/gslbd]",
                "???:std::_Hash_bytes(void const*, unsigned long, unsigned long) [/usr/lib/libstdc++.so.6]"]
        code = ("import importlib.machinery, sys; m = importlib.machinery.SourceFileLoader('bench', sys.argv[1])"
                ".load_module(); print('\\n'.join(m._function_key(r) for r in sys.argv[2:]))")
        r = subprocess.run([sys.executable, "-c", code, BENCH] + raws, capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.splitlines(), ["zones/answer.cpp:gslb::zones::answer"] * 4 + [
            "zones/answer.cpp:gslb::zones::(anonymous namespace)::Ctx::mustSigned", "???:std::_Hash_bytes"])


class BenchXdpAb(unittest.TestCase):
    """The xdp stage's A/B server (doc/performance.md): gslbd-xdp-old is --gslbd-old-bin with `[server] xdp`, measured in
    the same rounds as gslbd-xdp, with its ratio printed; without the binary the stage refuses at once."""

    def test_old_needs_its_binary(self):
        r = subprocess.run([sys.executable, BENCH, "--no-build", "--stages", "xdp", "--xdp-servers",
                            "gslbd-xdp,gslbd-xdp-old"], capture_output=True, text=True,
                           env=dict(os.environ, GSLBD=gslbd_path()), timeout=30)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("gslbd-xdp-old needs --gslbd-old-bin", r.stdout + r.stderr)

    @unittest.skipUnless(os.geteuid() == 0 and shutil.which("dnsperf") and shutil.which("ip"),
                         "needs root, dnsperf and ip (network namespaces, XDP)")
    def test_ab_in_the_same_rounds(self):
        with tempfile.TemporaryDirectory(prefix="bench-xdp.") as tmp:
            out = os.path.join(tmp, "xdp.json")
            r = subprocess.run([sys.executable, BENCH, "--no-build", "--stages", "xdp", "--xdp-servers",
                                "gslbd-xdp,gslbd-xdp-old", "--gslbd-old-bin", gslbd_path(), "--xdp-modes", "udp",
                                "--repeat", "1", "--duration", "1", "--names", "1000",
                                "--xdp-sysfs", "napi_defer_hard_irqs=0", "--json", out],
                               capture_output=True, text=True, env=dict(os.environ, GSLBD=gslbd_path()),
                               timeout=100)
            print(r.stdout[-2500:])
            self.assertEqual(r.returncode, 0, r.stderr[-2000:])
            with open(out) as f:
                res = json.load(f)["xdp"]
        for kind in ("gslbd-xdp", "gslbd-xdp-old"):
            self.assertGreater(res[kind]["static"]["qps"] or 0, 0, kind)
            self.assertGreater(res[kind]["static"]["side_us_per_q"] or 0, 0, kind)
        self.assertIn("gslbd-xdp / gslbd-xdp-old", r.stdout)
        self.assertIn("server end napi_defer_hard_irqs=0", r.stdout)
        self.assertNotIn("served on sockets", r.stdout)


if __name__ == "__main__":
    run_tests()
