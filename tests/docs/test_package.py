#!/usr/bin/env python3
"""The Debian package (debian/): built from this tree with `dpkg-buildpackage -b -us -uc` (README's command), held
to lintian (no error), installed on this machine, checked as an operator would (`gslbd --check` on the installed
example, `man gslbd.toml`, the unit, the user, conffiles) and purged.

Root only (it installs a package), and only where gslbd is not already installed (it would replace the machine's
own). The package enables and starts no service at install (dh_installsystemd --no-enable: deb-systemd-invoke
starts no disabled unit), so no gslbd takes ports other tests use; the test checks that none runs. The purge runs
however the test ends.
"""
import glob
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from harness import REPO, run_tests  # noqa: E402

APT = ["apt-get", "-y", "-q", "-o", "DPkg::Lock::Timeout=600"]


def run(argv, timeout=120, **kw):
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout, **kw)


def installed(pkg):
    p = run(["dpkg-query", "-W", "-f=${Status}", pkg])
    return p.returncode == 0 and "install ok installed" in p.stdout


def gslbd_processes():
    """PIDs of processes running the packaged binary."""
    pids = []
    for exe in glob.glob("/proc/[0-9]*/exe"):
        try:
            if os.readlink(exe).startswith("/usr/bin/gslbd"):
                pids.append(int(exe.split("/")[2]))
        except OSError:
            pass
    return pids


class Package(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if os.geteuid() != 0:
            raise unittest.SkipTest("root only: the test installs the package")
        for tool in ("dpkg-buildpackage", "dh", "lintian", "pandoc"):
            if not shutil.which(tool):
                raise unittest.SkipTest(f"{tool} is not installed (tools/install-deps --test installs it)")
        if installed("gslbd"):
            raise unittest.SkipTest("gslbd is installed on this machine: the test would replace it")
        # A directory named for this checkout, the same at every run: the package's compile commands carry it
        # (-ffile-prefix-map), so ccache serves the second build of the same tree.
        cls.tmp = os.path.join(tempfile.gettempdir(), "gslbd-deb-" + hashlib.sha256(REPO.encode()).hexdigest()[:12])
        shutil.rmtree(cls.tmp, ignore_errors=True)
        src = os.path.join(cls.tmp, "gslbd")
        os.makedirs(src)
        # The tree as it is (committed or not), without build directories.
        files = run(["git", "-C", REPO, "ls-files", "-co", "--exclude-standard"]).stdout.split("\n")
        for f in files:
            if not f or f.startswith(("build", "obj-")) or not os.path.isfile(os.path.join(REPO, f)):
                continue
            os.makedirs(os.path.dirname(os.path.join(src, f)), exist_ok=True)
            shutil.copy2(os.path.join(REPO, f), os.path.join(src, f))
        env = dict(os.environ, DEB_BUILD_OPTIONS="parallel=2")
        # In a session of its own, so that a timeout ends the compilers too, not dpkg-buildpackage alone.
        build = subprocess.Popen(["dpkg-buildpackage", "-b", "-us", "-uc"], cwd=src, env=env, text=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            cls.build_log, _ = build.communicate(timeout=3300)
        except subprocess.TimeoutExpired:
            os.killpg(build.pid, signal.SIGKILL)
            build.communicate()
            raise AssertionError("dpkg-buildpackage took more than 55 minutes")
        if build.returncode != 0:
            raise AssertionError("dpkg-buildpackage failed:\n" + cls.build_log[-6000:])
        cls.debs = glob.glob(os.path.join(cls.tmp, "gslbd_*.deb"))
        cls.changes = glob.glob(os.path.join(cls.tmp, "gslbd_*.changes"))

    @classmethod
    def tearDownClass(cls):
        if installed("gslbd"):
            run(APT + ["purge", "gslbd"], timeout=600)
        shutil.rmtree(getattr(cls, "tmp", "/nonexistent"), ignore_errors=True)

    def test_1_lintian_has_no_error(self):
        self.assertEqual(len(self.debs), 1, self.build_log[-3000:])
        p = run(["lintian", "--fail-on", "error", "--display-info", *self.changes], timeout=600)
        print(p.stdout)
        errors = [l for l in p.stdout.splitlines() if l.startswith("E:")]
        self.assertEqual(errors, [], p.stdout)
        self.assertEqual(p.returncode, 0, p.stdout)

    def test_2_install_check_purge(self):
        before = set(gslbd_processes())
        p = run(APT + ["install", "--no-install-recommends", self.debs[0]], timeout=600,
                env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
        self.assertEqual(p.returncode, 0, p.stdout)
        try:
            # The binaries, the unit, the user, the example config as a conffile, the manual.
            for path in ("/usr/bin/gslbd", "/usr/bin/gslbctl", "/lib/systemd/system/gslbd.service",
                         "/usr/bin/gslbd-agent", "/lib/systemd/system/gslbd-agent.service",
                         "/usr/lib/sysusers.d/gslbd.conf", "/etc/gslbd/gslbd.toml", "/etc/gslbd/gslb.example.com.zone",
                         "/usr/share/doc/gslbd/manual/getting-started.md", "/usr/share/doc/gslbd/examples/gslbd.toml"):
                self.assertTrue(os.path.exists(path), path)
            conffiles = run(["dpkg-query", "-W", "-f=${Conffiles}", "gslbd"]).stdout
            self.assertIn("/etc/gslbd/gslbd.toml", conffiles)
            self.assertEqual(run(["getent", "passwd", "gslbd"]).returncode, 0, "the gslbd user")

            # What README tells the operator to run next.
            p = run(["gslbd", "--check", "--config", "/etc/gslbd/gslbd.toml"])
            self.assertEqual(p.returncode, 0, p.stdout)
            self.assertIn("/etc/gslbd/gslbd.toml: ok: 1 zone(s)", p.stdout)
            p = run(["gslbctl", "check", "-c", "/etc/gslbd/gslbd.toml"])
            self.assertEqual(p.returncode, 0, p.stdout)
            env = dict(os.environ, MANPAGER="cat", PAGER="cat", MANWIDTH="100")
            for page, word in (("gslbd.toml", "token_file"), ("gslbd", "SIGHUP"), ("gslbctl", "rollover"),
                               ("gslbd-agent", "NETLINK_SOCK_DIAG")):
                p = run(["man", page], env=env)
                self.assertEqual(p.returncode, 0, p.stdout)
                self.assertIn(word, p.stdout.replace("\b", ""), page)
            if shutil.which("systemd-analyze"):
                for unit in ("gslbd.service", "gslbd-agent.service"):
                    p = run(["systemd-analyze", "verify", "/lib/systemd/system/" + unit])
                    self.assertEqual((p.returncode, p.stdout.strip()), (0, ""), p.stdout)

            # Nothing started: neither a gslbd process nor, under systemd, an enabled or active unit.
            self.assertEqual(set(gslbd_processes()) - before, set())
            if os.path.isdir("/run/systemd/system"):
                self.assertNotEqual(run(["systemctl", "is-enabled", "gslbd"]).stdout.strip(), "enabled")
                self.assertNotEqual(run(["systemctl", "is-active", "gslbd"]).stdout.strip(), "active")
        finally:
            p = run(APT + ["purge", "gslbd"], timeout=600, env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
        self.assertEqual(p.returncode, 0, p.stdout)
        self.assertFalse(installed("gslbd"))
        for path in ("/usr/bin/gslbd", "/etc/gslbd/gslbd.toml", "/lib/systemd/system/gslbd.service"):
            self.assertFalse(os.path.exists(path), path)


if __name__ == "__main__":
    run_tests()
