#!/usr/bin/env python3
"""The build's own tools (issue 16, from a new user's trial of the AF_XDP path):

- `meson setup` ends with a summary that says whether the AF_XDP fast path is built (and why not), and it
  agrees with what this gslbd does with a `[server] xdp` config.
- tools/build passes a job count to ninja (-jN, -j N or $GSLBD_BUILD_JOBS; none: ninja's own default) and
  configures an existing build directory only once. Run against a stub ninja on PATH: nothing is built.
"""
import os
import stat
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import REPO, gslbd_path, run_tests  # noqa: E402

BUILD = os.environ.get("GSLBD_BUILD_ROOT") or os.path.dirname(os.path.dirname(gslbd_path()))


class BuildTest(unittest.TestCase):
    def test_summary_says_whether_xdp_is_built(self):
        with open(os.path.join(BUILD, "meson-logs", "meson-log.txt"), errors="replace") as f:
            log = f.read()
        line = next((l.strip() for l in log.splitlines() if l.strip().startswith("AF_XDP fast path")), None)
        self.assertIsNotNone(line, "meson setup printed no summary line for the AF_XDP fast path")
        value = line.split(":", 1)[1].strip()
        with tempfile.TemporaryDirectory() as d:
            cfg = os.path.join(d, "g.toml")
            with open(cfg, "w") as f:
                f.write('[server]\nlisten = ["127.0.0.1:10053"]\nxdp = ["eth0"]\n')
            p = subprocess.run([gslbd_path(), "--check", "-c", cfg], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, timeout=20)
        built = "built without the AF_XDP" not in p.stdout
        self.assertEqual(value.startswith("yes"), built, (line, p.stdout))
        if not built:
            self.assertRegex(value, r"^no \((-Dxdp=disabled|missing .+)")
        for part in ("libFuzzer targets", "GeoIP (libmaxminddb)", "systemd notify (libsystemd)"):
            self.assertIn(part, log)

    def run_build(self, *args, env=None):
        with tempfile.TemporaryDirectory() as d:
            stub = os.path.join(d, "ninja")
            record = os.path.join(d, "args")
            with open(stub, "w") as f:
                f.write(f'#!/bin/sh\necho "$@" > {record}\n')
            os.chmod(stub, stat.S_IRWXU)
            meson = os.path.join(d, "meson")
            with open(meson, "w") as f:
                f.write(f'#!/bin/sh\necho meson "$@" >> {record}.meson\n')
            os.chmod(meson, stat.S_IRWXU)
            bdir = os.path.join(d, "b")
            os.mkdir(bdir)
            open(os.path.join(bdir, "build.ninja"), "w").close()  # configured: no meson setup
            e = {k: v for k, v in os.environ.items() if k != "GSLBD_BUILD_JOBS"}
            e["PATH"] = d + os.pathsep + e["PATH"]
            e.update(env or {})
            p = subprocess.run(["bash", os.path.join(REPO, "tools", "build"), *[a.replace("DIR", bdir) for a in args]],
                               env=e, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=20)
            ran = open(record).read().split() if os.path.exists(record) else None
            self.meson_ran = (open(record + ".meson").read().replace(bdir, "DIR").splitlines()
                              if os.path.exists(record + ".meson") else [])
            return p.returncode, p.stdout, [a.replace(bdir, "DIR") for a in ran] if ran is not None else None

    def test_tools_build_jobs(self):
        self.assertEqual(self.run_build("DIR")[::2], (0, ["-C", "DIR"]))
        self.assertEqual(self.run_build("-j3", "DIR")[::2], (0, ["-C", "DIR", "-j", "3"]))
        self.assertEqual(self.run_build("DIR", "-j", "2")[::2], (0, ["-C", "DIR", "-j", "2"]))
        self.assertEqual(self.run_build("DIR", env={"GSLBD_BUILD_JOBS": "1"})[::2], (0, ["-C", "DIR", "-j", "1"]))
        self.assertEqual(self.run_build("DIR", "-j4", env={"GSLBD_BUILD_JOBS": "1"})[::2],
                         (0, ["-C", "DIR", "-j", "4"]))  # the command line wins
        rc, out, ran = self.run_build("DIR", "-jx")
        self.assertEqual((rc, ran), (2, None), out)
        self.assertIn("positive number of jobs", out)
        rc, out, ran = self.run_build("--help")
        self.assertEqual((rc, ran), (0, None), out)
        self.assertIn("GSLBD_BUILD_JOBS", out)

    def test_tools_build_options(self):
        # Options for a directory already configured are applied to it (README's two commands share build/, in
        # either order); none: meson is not run at all.
        self.assertEqual(self.run_build("DIR", "-j2")[::2], (0, ["-C", "DIR", "-j", "2"]))
        self.assertEqual(self.meson_ran, [])
        self.assertEqual(self.run_build("DIR", "-Dtests=false", "-j2")[::2], (0, ["-C", "DIR", "-j", "2"]))
        self.assertEqual(self.meson_ran, ["meson configure DIR -Dtests=false"])


if __name__ == "__main__":
    run_tests()
