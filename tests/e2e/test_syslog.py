#!/usr/bin/env python3
"""`[server] log = "syslog"` end to end (doc/operating.md "Logs"): gslbd runs in a mount namespace of its
own (unshare -m) where /dev/log is this test's datagram socket, so the lines syslog(3) sends are read here, as
rsyslog or journald would read them, without touching the machine's /dev. Checked: RFC 3164 framing with
facility daemon and each line's priority (info, warning, error), the identifier gslbd[PID], the lines of a
start, a failed reload and a stop, and that nothing of them goes to stderr. Root only (mount namespaces);
skipped otherwise."""
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import build_query, decode_msg, free_port, gslbd_path, run_tests, spawn, udp_query  # noqa: E402

ZONE = """$ORIGIN t.test.
$TTL 300
@ IN SOA ns1 hostmaster 1 3600 900 604800 120
@ IN NS ns1
ns1 IN A 192.0.2.53
"""
DAEMON = 3  # RFC 5424 §6.2.1 facility
PRI = {"error": 3, "warning": 4, "info": 6}

# In the namespace: keep the real /dev under the test's dir, put a fresh tmpfs over /dev with only the nodes a
# program needs bound back in, and this test's socket as /dev/log (a bind needs an existing file to cover, and
# the machine may have no /dev/log; creating one on the shared /dev would be seen outside).
NAMESPACE = r"""set -e
mount --make-rprivate /
mount --rbind /dev "$T/realdev"
mount -t tmpfs -o mode=755 gslbd-test-dev /dev
for n in null zero random urandom; do touch "/dev/$n"; mount --bind "$T/realdev/$n" "/dev/$n"; done
touch /dev/log
mount --bind "$T/log.sock" /dev/log
umount -l "$T/realdev"
exec "$@"
"""


class Syslog(unittest.TestCase):
    def setUp(self):
        if os.geteuid() != 0 or not shutil.which("unshare"):
            self.skipTest("needs root and unshare(1) for a mount namespace with its own /dev/log")
        self.dir = tempfile.TemporaryDirectory(prefix="e2e-syslog-")
        self.t = self.dir.name
        os.mkdir(os.path.join(self.t, "realdev"))
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(os.path.join(self.t, "log.sock"))
        self.sock.settimeout(0.2)
        self.port = free_port()
        with open(os.path.join(self.t, "t.zone"), "w") as f:
            f.write(ZONE)
        self.write_config('file = "t.zone"')
        self.errf = open(os.path.join(self.t, "stderr.log"), "w+")
        self.proc = spawn(
            ["unshare", "-m", "sh", "-c", NAMESPACE, "sh", gslbd_path(), "--config", self.config],
            env=dict(os.environ, T=self.t), cwd=self.t, stdin=subprocess.DEVNULL, stdout=self.errf,
            stderr=self.errf)
        # A syslog daemon reads all the time: an AF_UNIX datagram socket queues only net.unix.max_dgram_qlen
        # datagrams (10 by default), and then syslog(3) in gslbd blocks, as it would behind a stalled journald.
        # So a thread reads every datagram as it comes, and the test looks at what it has read.
        self.lines = []
        self.bad = []
        self.cond = threading.Condition()
        self.stop_reading = False
        self.reader = threading.Thread(target=self.read_socket, daemon=True)
        self.reader.start()

    def tearDown(self):
        if getattr(self, "proc", None) and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(5)
        if getattr(self, "reader", None):
            self.stop_reading = True
            self.reader.join(5)
        if hasattr(self, "sock"):
            self.sock.close()
            self.errf.close()
            self.dir.cleanup()

    def write_config(self, zone_file):
        self.config = os.path.join(self.t, "gslbd.toml")
        with open(self.config, "w") as f:
            f.write(f'[server]\nlisten = ["127.0.0.1:{self.port}"]\nworkers = 1\nlog = "syslog"\n\n'
                    f'[[zone]]\nname = "t.test."\n{zone_file}\n')

    def read_socket(self):
        """The reader thread: every datagram on the socket, parsed, into self.lines (or self.bad)."""
        while not self.stop_reading:
            try:
                data = self.sock.recv(65536).decode(errors="replace")
            except socket.timeout:
                continue
            except OSError:
                return
            # RFC 3164 §4.1 as glibc writes it: <PRI>Mmm dd hh:mm:ss IDENT[PID]: MESSAGE
            m = re.match(r"<(\d+)>[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d (\S+?)\[(\d+)\]: (.*)$", data, re.S)
            with self.cond:
                if m:
                    self.lines.append((int(m[1]), m[2], int(m[3]), m[4]))
                else:
                    self.bad.append(data)
                self.cond.notify_all()

    def read_until(self, needle, seconds=5.0):
        """Waits until a datagram holding `needle` was read; returns it parsed: (priority, ident, pid, message)."""
        deadline = time.monotonic() + seconds
        with self.cond:
            while True:
                self.assertEqual(self.bad, [], "not syslog datagrams")
                for line in self.lines:
                    if needle in line[3]:
                        return line
                left = deadline - time.monotonic()
                if left <= 0 or (self.proc.poll() is not None and not needle.startswith("stopped")):
                    break
                self.cond.wait(min(left, 0.2))
            got = [l[3] for l in self.lines]
        self.errf.seek(0)
        self.fail(f"no syslog line with {needle!r} in {seconds} s; got {got}; stderr: {self.errf.read()}")

    def test_lines_reach_syslog_with_facility_daemon_and_their_priority(self):
        start = self.read_until("serving 1 zone(s)")
        self.assertEqual(start[0], DAEMON * 8 + PRI["info"], start)
        self.assertEqual(start[1], "gslbd")
        self.assertEqual(start[3], f"info: serving 1 zone(s) on 127.0.0.1:{self.port} with 1 worker(s)")
        # The pid is gslbd's (unshare and sh exec'd into it).
        self.assertEqual(start[2], self.proc.pid)
        # Running as root without `user`: a warning, at warning priority.
        warn = self.read_until("running as root")
        self.assertEqual(warn[0], DAEMON * 8 + PRI["warning"], warn)
        # It answers, and a broken reload is an error line while the old zones keep serving.
        r = decode_msg(udp_query(self.port, build_query("t.test.", "SOA"), timeout=2))
        self.assertEqual(r.rcode, "NOERROR")
        self.write_config('file = "missing.zone"')
        os.kill(self.proc.pid, signal.SIGHUP)
        err = self.read_until("reload failed")
        self.assertEqual(err[0], DAEMON * 8 + PRI["error"], err)
        self.assertIn("missing.zone", err[3])
        os.kill(self.proc.pid, signal.SIGTERM)
        self.assertEqual(self.proc.wait(20), 0)
        self.read_until("stopped")
        # Everything went to syslog: stderr has none of these lines.
        self.errf.seek(0)
        out = self.errf.read()
        for needle in ("serving 1 zone(s)", "reload failed", "stopped"):
            self.assertNotIn(needle, out)
        print(f"MEASURED: {len(self.lines)} syslog lines read from gslbd's /dev/log in its own mount namespace")


if __name__ == "__main__":
    run_tests()
