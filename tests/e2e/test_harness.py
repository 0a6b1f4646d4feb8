#!/usr/bin/env python3
"""The harness's own promise: no daemon outlives the test process that started it, even when that process is
SIGKILLed (meson's timeout, an OOM kill), so a dead test leaves no gslbd holding its ports (harness.keep).

Each case runs a python child that starts daemons with the harness and prints their pids, SIGKILLs the child
(no atexit, no cleanup), and waits for every pid to go:
- gslbd, and gslbd with `user = "nobody"` (root only): a uid change clears PR_SET_PDEATHSIG, the keeper does
  not care;
- NSD, which forks its xfrd and server processes (they are not the harness's children);
- a gslbd started from a thread that has ended: PR_SET_PDEATHSIG fires when the forking thread ends, so a
  daemon started by a helper thread died at once under it; here it lives on until the child dies.
"""
import os
import shutil
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import HERE, run_tests  # noqa: E402

ZONE = """$ORIGIN t.test.
$TTL 60
@ IN SOA ns1 hostmaster 1 3600 600 604800 5
@ IN NS ns1
ns1 IN A 192.0.2.1
"""

CHILD = r"""
import os, sys, threading, time
sys.path.insert(0, sys.argv[1])
import harness
from harness import Gslbd, Nsd
zone = {"t.test.": sys.argv[3]}
kind = sys.argv[2]
pids = []
if kind == "gslbd":
    d = Gslbd(zones=zone); d.start(); pids.append(d.proc.pid)
elif kind == "gslbd-user":
    d = Gslbd(zones=zone, server={"user": "nobody"})
    d.write_config(); os.chmod(d.dir, 0o755); d.start(); pids.append(d.proc.pid)
elif kind == "nsd":
    def session(p):
        try:
            with open(f"/proc/{p}/stat") as f:
                return f.read().rsplit(")", 1)[1].split()[3]
        except OSError:  # the process ended between listdir and open (any process of the machine may)
            return None
    d = Nsd(zone); d.start()
    deadline = time.time() + 5  # its xfrd and server processes, forked by NSD itself
    while time.time() < deadline:
        kids = [int(p) for p in os.listdir("/proc") if p.isdigit() and p != str(d.proc.pid)
                and session(p) == str(d.proc.pid)]
        if len(kids) >= 2:
            break
        time.sleep(0.05)
    pids += [d.proc.pid] + kids
elif kind == "gslbd-thread":
    box = []
    t = threading.Thread(target=lambda: box.append(Gslbd(zones=zone).__enter__()))
    t.start(); t.join()
    d = box[0]; pids.append(d.proc.pid)
    time.sleep(0.3)
    assert d.proc.poll() is None, "the daemon died with the thread that started it"
    assert d.dig("t.test.", "SOA").rcode == "NOERROR"
print(" ".join(map(str, pids)), flush=True)
time.sleep(120)
"""


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class NoDaemonOutlivesItsTest(unittest.TestCase):
    def run_child(self, kind):
        p = subprocess.Popen([sys.executable, "-c", CHILD, HERE, kind, ZONE], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            line = p.stdout.readline()
            pids = [int(x) for x in line.split()]
            self.assertTrue(pids, f"the child started nothing: {line!r} {p.stderr.read() if p.poll() else ''}")
            for pid in pids:
                self.assertTrue(alive(pid), pid)
            t0 = time.monotonic()
            p.kill()  # SIGKILL: no atexit, no finally
            p.wait(5)
            deadline = t0 + 5
            while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
                time.sleep(0.01)
            left = [pid for pid in pids if alive(pid)]
            print(f"MEASURED: {kind}: {len(pids)} process(es) gone {time.monotonic() - t0:.3f} s after the "
                  f"SIGKILL of the test process that started them")
            self.assertEqual(left, [], f"{kind} outlived the test process")
        finally:
            if p.poll() is None:
                p.kill()
            for pid in locals().get("pids", []):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass

    def test_gslbd(self):
        self.run_child("gslbd")

    @unittest.skipUnless(os.geteuid() == 0, "needs root to drop privileges")
    def test_gslbd_that_drops_privileges(self):
        self.run_child("gslbd-user")

    @unittest.skipUnless(shutil.which("nsd"), "needs NSD")
    def test_nsd_and_the_processes_it_forks(self):
        self.run_child("nsd")

    def test_gslbd_started_from_a_thread_that_ended(self):
        self.run_child("gslbd-thread")


class FreePortsAreNotHandedOutTwice(unittest.TestCase):
    """free_port() checks that a port is free, but the daemon binds it later: a port given out twice (by this
    process, or to two test processes running side by side) is "Address already in use" at that start."""

    def test_within_one_process(self):
        ports = [harness.free_port() for _ in range(400)]
        self.assertEqual(len(set(ports)), len(ports))

    def test_across_processes(self):
        # Another test process's ports (held in a child that prints them and waits) are never ours, although
        # none of them is bound: only their claims say they are taken.
        child = subprocess.Popen([sys.executable, "-c", "import sys; sys.path.insert(0, %r); import harness\n"
                                  "print(' '.join(str(harness.free_port()) for _ in range(300)), flush=True)\n"
                                  "sys.stdin.read()" % HERE],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            theirs = {int(p) for p in child.stdout.readline().split()}
            self.assertEqual(len(theirs), 300)
            mine = {harness.free_port() for _ in range(300)}
            self.assertFalse(mine & theirs)
        finally:
            child.stdin.close()
            child.wait(timeout=10)
        # Their claims went with them: a port they held can be claimed again. (Without the claims, 300 ports
        # each from the kernel's ~28,000 ephemeral ones overlap with a probability of about 96 %; 400 from one
        # process repeat one with about 94 %.)
        again = sorted(theirs)[:5]
        try:
            self.assertTrue(all(harness._claim(p) for p in again))
        finally:
            for p in again:
                os.unlink(os.path.join(harness._CLAIM_DIR, str(p)))


class RunTestsCounts(unittest.TestCase):
    """run_tests()' last line is what meson's log and a reader look at: it must count what passed."""

    def summary(self, body):
        src = ("import sys, unittest; sys.path.insert(0, %r)\nfrom harness import run_tests\n%s\nrun_tests()\n"
               % (HERE, body))
        r = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True, timeout=60)
        return r.returncode, r.stdout.strip().splitlines()[-1]

    def test_a_failing_setupclass_is_one_failure_and_the_tests_that_ran_still_count(self):
        rc, last = self.summary("class C(unittest.TestCase):\n"
                                "    @classmethod\n"
                                "    def setUpClass(cls): raise RuntimeError('no daemon')\n"
                                "    def test_a(self): pass\n"
                                "    def test_b(self): pass\n"
                                "class D(unittest.TestCase):\n"
                                "    def test_c(self): pass\n")
        self.assertEqual((rc, last), (1, "1 passed, 1 failed"))  # "0 passed" before (and "-1" alone)

    def test_passes_failures_and_skips(self):
        rc, last = self.summary("class C(unittest.TestCase):\n"
                                "    def test_a(self): pass\n"
                                "    def test_b(self): self.fail('b')\n"
                                "    @unittest.skip('s')\n"
                                "    def test_c(self): pass\n")
        self.assertEqual((rc, last), (1, "1 passed, 1 failed"))


class ParsesTsig(unittest.TestCase):
    """dig and kdig print a signed reply's TSIG RR in a pseudosection of its own (a transfer's between its records):
    it goes to `tsig`, never into the answer or additional section a test compares. The texts are dig 9.18's and
    kdig 3.2's for a query to gslbd signed with `-y hmac-sha256:xfr:...`."""

    SOA = ("gslb.example.com.\t300\tIN\tSOA\tns1.gslb.example.com. admin.gslb.example.com. "
           "2024010101 3600 900 604800 60\n")
    DIG = (";; ->>HEADER<<- opcode: QUERY, status: NOERROR, id: 14832\n"
           ";; flags: qr aa rd; QUERY: 1, ANSWER: 1, AUTHORITY: 0, ADDITIONAL: 2\n\n"
           ";; OPT PSEUDOSECTION:\n; EDNS: version: 0, flags:; udp: 1232\n"
           ";; QUESTION SECTION:\n;gslb.example.com.\t\tIN\tSOA\n\n;; ANSWER SECTION:\n" + SOA + "\n"
           ";; TSIG PSEUDOSECTION:\nxfr.\t\t\t0\tANY\tTSIG\thmac-sha256. 1796666362 300 32 "
           "zOBF7lFGR8QNa2fu8S7Avk6ddR857fwkdetkDNi1tDg= 14832 NOERROR 0 \n\n;; MSG SIZE  rcvd: 195\n")
    KDIG = (";; ->>HEADER<<- opcode: QUERY; status: NOERROR; id: 27315\n"
            ";; Flags: qr aa rd; QUERY: 1; ANSWER: 1; AUTHORITY: 0; ADDITIONAL: 1\n\n"
            ";; QUESTION SECTION:\n;; gslb.example.com.   \t\tIN\tSOA\n\n;; ANSWER SECTION:\n" + SOA + "\n"
            ";; TSIG PSEUDOSECTION:\nxfr.                \t0\tANY\tTSIG\thmac-sha256. 1796666362 300 32 "
            "qzHGQrYKUeAEpm1INZt6Au8O3NfgWO7MZHt9THg+xRc= 27315 NOERROR 0\n\n;; Received 156 B\n")

    def test_dig_and_kdig(self):
        for text, parse in ((self.DIG, harness.parse_dig), (self.KDIG, harness.parse_kdig)):
            r = parse(text)
            self.assertEqual([x.rtype for x in r.answer], ["SOA"], text)
            self.assertEqual(r.additional, [], text)
            self.assertEqual([(x.owner, x.rtype) for x in r.tsig], [("xfr.", "TSIG")], text)

    def test_a_transfer_signed_between_its_records(self):
        text = (self.SOA + "xfr.\t\t\t0\tANY\tTSIG\thmac-sha256. 1796666362 300 32 "
                "b7TJj2nQkT/4adSh6OzRzmBTyjpxzMx3HwhPaJTy6SQ= 29452 NOERROR 0 \n" + self.SOA)
        r = harness.parse_dig(text)
        self.assertEqual([x.rtype for x in r.answer], ["SOA", "SOA"])
        self.assertEqual(len(r.tsig), 1)


if __name__ == "__main__":
    run_tests()
