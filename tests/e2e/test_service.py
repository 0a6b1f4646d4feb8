#!/usr/bin/env python3
"""gslbd as a service (doc/operating.md): one instance per address, dropping privileges, drains kept across
restarts, the systemd notify protocol, logs."""
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import sys
import threading
import time
import unittest
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import HAVE_IPV6, Gslbd, free_port, gslbd_path, TcpClient, build_query, run_tests  # noqa: E402

ORIGIN = "gslb.example.com."
ZONE = f"""$ORIGIN {ORIGIN}
$TTL 300
@ IN SOA ns1 admin 1 3600 900 604800 60
@ IN NS ns1
ns1 IN A 192.0.2.1
www IN A 192.0.2.10
"""


def second(port, listen):
    """A gslbd on `listen` (addresses at `port`) that is expected to be refused."""
    g = Gslbd(zones={ORIGIN: ZONE}, server={"listen": [a.format(port=port) for a in listen]},
              expect_start=False)
    g.port = port
    return g


class OneInstance(unittest.TestCase):
    def refused(self, port, listen):
        with second(port, listen) as g2:
            rc = g2.wait_exit(10)
            self.assertEqual(rc, 1, f"second gslbd on {listen} was not refused:\n{g2.stderr()}")
            self.assertRegex(g2.stderr(), r"already in use: another gslbd", g2.stderr())

    def test_same_address_refused(self):
        with Gslbd(zones={ORIGIN: ZONE}) as g:
            self.refused(g.port, ["127.0.0.1:{port}"])
            if HAVE_IPV6:
                self.refused(g.port, ["[::1]:{port}"])
            # The first one still answers every query (the second never joined its sockets).
            for _ in range(20):
                self.assertEqual(g.dig("www." + ORIGIN).rcode, "NOERROR")
            g.stop()

    def test_wildcard_overlap_refused(self):
        with Gslbd(zones={ORIGIN: ZONE}, ipv6=False) as g:
            self.refused(g.port, ["0.0.0.0:{port}"])
            g.stop()
        g = Gslbd(zones={ORIGIN: ZONE}, server={"listen": ["0.0.0.0:0"]}, ipv6=False)
        g.server_opts["listen"] = [f"0.0.0.0:{g.port}"] + ([f"[::]:{g.port}"] if HAVE_IPV6 else [])
        with g:
            self.refused(g.port, ["127.0.0.1:{port}"])
            if HAVE_IPV6:
                self.refused(g.port, ["[::1]:{port}"])
            g.stop()

    def test_wildcard_answers_from_the_address_asked(self):
        # On 0.0.0.0 a reply leaves from the address its query came to (IP_PKTINFO, server/net/udp.cpp): a
        # query to 127.0.0.2 answered from 127.0.0.1, the kernel's own choice, is dropped by the client.
        g = Gslbd(zones={ORIGIN: ZONE}, server={"listen": ["0.0.0.0:0"]}, ipv6=False)
        g.server_opts["listen"] = [f"0.0.0.0:{g.port}"]
        with g, socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.settimeout(5)
            s.bind(("127.0.0.1", 0))
            for dst in ("127.0.0.2", "127.0.0.1", "127.0.0.3"):
                s.sendto(build_query("www." + ORIGIN), (dst, g.port))
                data, src = s.recvfrom(4096)
                self.assertEqual(src, (dst, g.port), f"the query to {dst} was answered from {src[0]}")
                self.assertEqual(data[:2], b"\x12\x34")
            g.stop()

    def test_restart_after_tcp_reuses_port(self):
        # Connections the server closed (idle timeout) sit in TIME_WAIT on its port: a restart must not
        # count them as another instance.
        with Gslbd(zones={ORIGIN: ZONE}, server={"tcp_idle_timeout": 1}, ipv6=False) as g:
            c = TcpClient(g.port)
            self.assertEqual(c.query(build_query("www." + ORIGIN)).rcode, "NOERROR")
            self.assertTrue(c.is_closed(3), "the server did not close the idle connection")
            c.close()
            tw = subprocess.run(["ss", "-Htan", "state", "time-wait", f"sport = :{g.port}"],
                                stdout=subprocess.PIPE, text=True).stdout
            self.assertIn(f"127.0.0.1:{g.port}", tw, "no server-side TIME_WAIT to test with")
            g.stop()
            g.start()
            self.assertEqual(g.dig("www." + ORIGIN).rcode, "NOERROR")
            g.stop()


def proc_ids(pid):
    ids = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("Uid", "Gid", "Groups"):
                ids[k] = v.split()
    return ids


@unittest.skipUnless(os.geteuid() == 0, "needs root to drop privileges")
class Privileges(unittest.TestCase):
    def test_drops_to_user(self):
        import pwd
        nobody = pwd.getpwnam("nobody")
        with Gslbd(zones={ORIGIN: ZONE}, server={"user": "nobody"}) as g:
            ids = proc_ids(g.proc.pid)
            self.assertEqual(ids["Uid"], [str(nobody.pw_uid)] * 4, ids)
            self.assertEqual(ids["Gid"], [str(nobody.pw_gid)] * 4, ids)
            self.assertNotIn("0", ids.get("Groups", []), ids)
            # every thread, not just the main one
            for tid in os.listdir(f"/proc/{g.proc.pid}/task"):
                self.assertEqual(proc_ids(f"{g.proc.pid}/task/{tid}")["Uid"], [str(nobody.pw_uid)] * 4)
            self.assertRegex(g.stderr(), r"running as user nobody \(uid \d+, gid \d+\)")
            self.assertNotIn("running as root", g.stderr())
            self.assertEqual(g.dig("www." + ORIGIN).rcode, "NOERROR")
            g.stop()

    def test_root_without_user_warns(self):
        with Gslbd(zones={ORIGIN: ZONE}) as g:
            self.assertRegex(g.stderr(), r"warning: running as root: set \[server\] user")
            g.stop()

    def test_check_warns_about_unset_user_only_where_gslbd_stays_root(self):
        """gslbd --check warned about an unset user to every root check, doc/operating.md's `sudo gslbd --check` before
        `systemctl start` included, where the unit's User= drops root. Each case runs under unshare -m with a
        /run of its own: with or without /run/systemd/system (sd_booted), inside a unit (INVOCATION_ID) or
        not, root or nobody."""
        g = Gslbd(zones={ORIGIN: ZONE}, expect_start=False)
        try:
            g.write_config()
            os.chmod(g.dir, 0o755)
            env = {k: v for k, v in os.environ.items() if k != "INVOCATION_ID"}
            run_dir = "mount -t tmpfs none /run && if [ -n \"$SD\" ]; then mkdir -p /run/systemd/system; fi; "

            def check(systemd_host, unit=False, prefix=()):
                e = dict(env, SD="1" if systemd_host else "")
                if unit:
                    e["INVOCATION_ID"] = "0123456789abcdef0123456789abcdef"
                p = subprocess.run(["unshare", "-m", "sh", "-c", run_dir + 'exec "$@"', "sh", *prefix,
                                    gslbd_path(), "--check", "--config", g.config_path],
                                   env=e, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                   timeout=30)
                self.assertEqual(p.returncode, 0, p.stdout)
                return p.stdout

            stays = "[server] user is not set: gslbd started as root would keep running as root"
            self.assertIn(stays, check(systemd_host=False))
            out = check(systemd_host=True)
            self.assertNotIn("user is not set", out)
            self.assertRegex(out, r"ok: 1 zone\(s\), \d+ records, 0 GSLB hostname\(s\)\n$")  # no warning
            for host in (False, True):
                self.assertIn("[server] user is not set and this systemd unit runs gslbd as root: set User= in "
                              "the unit", check(systemd_host=host, unit=True))
            nobody = ("setpriv", "--reuid", "nobody", "--regid", "nogroup", "--clear-groups")
            self.assertNotIn("user is not set", check(systemd_host=False, prefix=nobody))
        finally:
            g.close()

    def test_privileged_port_says_how_to_bind_it(self):
        """Port 53 as an unprivileged user said only "Permission denied"."""
        with open("/proc/sys/net/ipv4/ip_unprivileged_port_start") as f:
            if int(f.read()) <= 53:
                self.skipTest("this kernel lets any user bind port 53")
        g = Gslbd(zones={ORIGIN: ZONE}, server={"listen": ["127.0.0.1:53"]}, expect_start=False)
        try:
            g.write_config()
            os.chmod(g.dir, 0o755)
            prefix = ["setpriv", "--reuid", "nobody", "--regid", "nogroup", "--clear-groups"] if os.geteuid() == 0 else []
            p = subprocess.run([*prefix, gslbd_path(), "--config", g.config_path], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, timeout=30)
            self.assertEqual(p.returncode, 1, p.stdout)
            self.assertIn("127.0.0.1:53 (udp): bind: Permission denied: port 53 is below 1024 and needs root or "
                          "CAP_NET_BIND_SERVICE: start gslbd as root with [server] user", p.stdout)
        finally:
            g.close()

    def test_unknown_user_refused(self):
        with Gslbd(zones={ORIGIN: ZONE}, server={"user": "no-such-user-gslbd"}, expect_start=False) as g:
            self.assertEqual(g.wait_exit(10), 1)
            self.assertIn('user "no-such-user-gslbd": no such user', g.stderr())


TOKEN = "e2e-service-token-81c3"
E, W = "192.0.2.10", "198.51.100.10"


def gslb_config(port, cport, sites=("east", "west"), extra=""):
    addrs = {"east": E, "west": W}
    zone = ZONE.replace("www IN A 192.0.2.10\n", "".join(f"www IN A {addrs[s]}\n" for s in sites))
    text = (f'[server]\nlisten = ["127.0.0.1:{port}"]\nstate_dir = "state"\n{extra}\n'
            f'[control]\nlisten = "127.0.0.1:{cport}"\ntoken_file = "control.token"\n\n'
            f'[[zone]]\nname = "{ORIGIN}"\nfile = "zone.db"\n\n'
            + "".join(f"[site.{s}]\n" for s in sites)
            + f'[hostname."www.{ORIGIN}"]\npolicy = ["health", "random"]\n'
            + "".join(f'[[hostname."www.{ORIGIN}".service]]\naddress = "{addrs[s]}"\nsite = "{s}"\n' for s in sites))
    return text, zone


def api(cport, method, path, token=TOKEN):
    req = urllib.request.Request(f"http://127.0.0.1:{cport}{path}", method=method, data=b"" if method == "POST" else None,
                                 headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(req, timeout=5) as r:
        return json.loads(r.read())


def wait_api(cport, g):
    deadline = time.monotonic() + 5
    while True:
        try:
            return api(cport, "GET", "/v1/status")
        except OSError:
            if time.monotonic() > deadline:
                raise AssertionError("control API did not answer:\n" + g.stderr())
            time.sleep(0.05)


class Drains(unittest.TestCase):
    def test_drain_survives_restart_and_departed_entries_are_dropped(self):
        cport = free_port()
        g = Gslbd(files={"control.token": TOKEN + "\n"}, wait_zone=ORIGIN)
        extra = 'user = "nobody"' if os.geteuid() == 0 else ""
        g.raw_config, zone = gslb_config(g.port, cport, extra=extra)
        g.files["zone.db"] = zone
        os.chmod(g.dir, 0o755)  # as /var/lib: the dropped user must reach its state_dir
        with g:
            wait_api(cport, g)
            api(cport, "POST", "/v1/sites/west/drain")
            api(cport, "POST", f"/v1/sites/east/services/{E}/drain")
            api(cport, "POST", f"/v1/sites/east/services/{E}/enable")
            state = json.load(open(g.path("state/admin-state.json")))
            self.assertEqual(state["drained_sites"], ["west"])
            self.assertEqual(state["drained_services"], [])
            g.stop()

            g.start()
            wait_api(cport, g)
            self.assertIn("admin state: 1 drain(s) restored", g.stderr())
            answers = {g.dig("www." + ORIGIN).answer[0].rdata for _ in range(15)}
            self.assertEqual(answers, {E}, "the drained site answered after the restart")
            sites = {s["name"]: s for s in api(cport, "GET", "/v1/status")["sites"]}
            self.assertFalse(sites["west"]["enabled"], sites)
            g.stop()

            # west leaves the config: its drain is dropped with a log line, and the file forgets it.
            g.raw_config, zone = gslb_config(g.port, cport, sites=("east",), extra=extra)
            g.files["zone.db"] = zone
            g.start()
            wait_api(cport, g)
            self.assertIn("admin state: dropped the drain of site west (no longer configured)", g.stderr())
            state = json.load(open(g.path("state/admin-state.json")))
            self.assertEqual(state["drained_sites"], [])
            g.stop()


class Logs(unittest.TestCase):
    def test_journal_stream_gets_priority_prefixes(self):
        g = Gslbd(zones={ORIGIN: ZONE}, server={"user": "no-such-user-gslbd"}, expect_start=False)
        open(g.stderr_path, "wb").close()
        st = os.stat(g.stderr_path)
        os.environ["JOURNAL_STREAM"] = f"{st.st_dev}:{st.st_ino}"
        try:
            with g:
                self.assertEqual(g.wait_exit(10), 1)
                err = g.stderr()
        finally:
            del os.environ["JOURNAL_STREAM"]
        self.assertRegex(err, r"(?m)^<3>error: \[server\] user \"no-such-user-gslbd\": no such user$")
        self.assertNotRegex(err, r"(?m)^\d{4}-")  # the journal stamps lines itself

    def test_journal_stream_of_another_file_is_ignored(self):
        os.environ["JOURNAL_STREAM"] = "1:1"
        try:
            with Gslbd(zones={ORIGIN: ZONE}) as g:
                g.stop()
                err = g.stderr()
        finally:
            del os.environ["JOURNAL_STREAM"]
        self.assertRegex(err, r"(?m)^\d{4}-\d\d-\d\dT.* gslbd info: serving 1 zone")


class NotifyListener:
    """The systemd side of sd_notify(3): a unix datagram socket the test owns, every message with its time."""

    def __init__(self, path):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.sock.settimeout(0.1)
        self.msgs = []  # (monotonic time, {key: value})
        self.stop = False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stop:
            try:
                data = self.sock.recv(4096)
            except socket.timeout:
                continue
            kv = dict(line.split("=", 1) for line in data.decode().splitlines() if "=" in line)
            self.msgs.append((time.monotonic(), kv))

    def wait_for(self, key, after=0, timeout=10):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for i, (t, kv) in enumerate(self.msgs[after:], after):
                if key in kv:
                    return i, t, kv
            time.sleep(0.02)
        raise AssertionError(f"no {key} from gslbd within {timeout}s; got {self.msgs}")

    def close(self):
        self.stop = True
        self.thread.join()
        self.sock.close()


class SilentBackend:
    """Accepts TCP connections and never answers: an http check against it lasts its whole timeout."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]


class Systemd(unittest.TestCase):
    def unit_copy(self, d):
        """The built unit with ExecStart pointing at the binary under test: `systemd-analyze verify` checks
        that the executable exists, and the installed path does not exist before `meson install`."""
        unit = os.environ.get("GSLBD_UNIT") or os.path.join(os.path.dirname(gslbd_path()), "..", "dist",
                                                            "gslbd.service")
        bindir = os.environ.get("GSLBD_BINDIR", "/usr/local/bin")
        text = open(unit).read()
        self.assertIn(f"ExecStart={bindir}/gslbd --config /etc/gslbd/gslbd.toml", text)
        path = os.path.join(d, "gslbd.service")
        with open(path, "w") as f:
            f.write(text.replace(f"{bindir}/gslbd", os.path.abspath(gslbd_path())))
        return path

    def test_unit_verifies_and_is_sandboxed(self):
        if not shutil.which("systemd-analyze"):
            self.skipTest("systemd-analyze not installed (tools/install-deps installs systemd)")
        with tempfile.TemporaryDirectory() as d:
            unit = self.unit_copy(d)
            # The unit's Documentation=man:… pages: `verify` runs man(1) on each, so they must be the ones this
            # build made (doc/, a MANPATH of man5/ and man8/ here); a build without pandoc has none, and then the
            # copy goes without those lines.
            docdir = os.path.join(os.path.dirname(gslbd_path()), "..", "doc")
            env = dict(os.environ)
            if os.path.exists(os.path.join(docdir, "gslbd.toml.5")):
                for page in ("gslbd.8", "gslbd.toml.5", "gslbctl.8"):
                    os.makedirs(os.path.join(d, "man", "man" + page[-1]), exist_ok=True)
                    os.symlink(os.path.abspath(os.path.join(docdir, page)),
                               os.path.join(d, "man", "man" + page[-1], page))
                env["MANPATH"] = os.path.join(d, "man")
            else:
                text = open(unit).read()
                with open(unit, "w") as f:
                    f.write("".join(l for l in text.splitlines(True) if not l.startswith("Documentation=man:")))
            p = subprocess.run(["systemd-analyze", "verify", unit], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, timeout=60, env=env)
            self.assertEqual(p.returncode, 0, p.stdout)
            self.assertEqual(p.stdout.strip(), "", p.stdout)  # no warnings either
            p = subprocess.run(["systemd-analyze", "security", "--offline=true", "--no-pager", unit],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
            m = re.search(r"Overall exposure level for gslbd.service: (\d+\.\d+)", p.stdout)
            self.assertTrue(m, p.stdout)
            print(f"systemd-analyze security: {m.group(1)}")
            self.assertLessEqual(float(m.group(1)), 2.0, p.stdout)

    def test_notify_protocol(self):
        backend = SilentBackend()
        cport = free_port()
        g = Gslbd(files={"control.token": TOKEN + "\n"}, wait_zone=ORIGIN)
        text, zone = gslb_config(g.port, cport)
        text = text.replace('[site.east]', '[check.slow]\ntype = "http"\nport = %d\ninterval = 5\n'
                            'timeout = 0.8\n\n[site.east]' % backend.port)
        text = text.replace(f'address = "{E}"\nsite = "east"\n', f'address = "{E}"\nsite = "east"\ncheck = "slow"\n')
        g.raw_config = text
        g.files["zone.db"] = zone
        n = NotifyListener(g.path("notify.sock"))
        os.environ["NOTIFY_SOCKET"] = n.path
        try:
            t0 = time.monotonic()
            with g:
                del os.environ["NOTIFY_SOCKET"]
                i, t_ready, kv = n.wait_for("READY")
                # Not before the initial round (the slow check's 0.8 s), and the listeners answer by then.
                self.assertGreaterEqual(t_ready - t0, 0.7, n.msgs)
                self.assertIn("health: initial round of 1 check(s)", g.stderr())
                self.assertRegex(kv.get("STATUS", ""), r"^serving 1 zone\(s\) on 127\.0\.0\.1:\d+$")
                self.assertEqual(g.dig("www." + ORIGIN).rcode, "NOERROR")
                self.assertFalse(any("RELOADING" in m or "STOPPING" in m for _, m in n.msgs[:i]), n.msgs)

                g.reload()
                j, _, _ = n.wait_for("RELOADING", after=i + 1)
                self.assertRegex(n.msgs[j][1].get("MONOTONIC_USEC", ""), r"^\d+$")
                k, _, kv = n.wait_for("READY", after=j + 1)
                self.assertRegex(kv["STATUS"], r"^reloaded ")

                # A failed reload still ends with READY=1 (the old snapshot serves), and says so.
                g.write("gslbd.toml", text + "\nbroken = 1\n")
                g.reload()
                j, _, _ = n.wait_for("RELOADING", after=k + 1)
                k, _, kv = n.wait_for("READY", after=j + 1)
                self.assertIn("the last reload failed", kv["STATUS"])

                g.stop()
                n.wait_for("STOPPING", after=k + 1)
        finally:
            os.environ.pop("NOTIFY_SOCKET", None)
            n.close()
            backend.sock.close()


def gslbctl(*args):
    exe = os.environ.get("GSLBCTL") or os.path.join(os.path.dirname(gslbd_path()), "..", "tools", "gslbctl")
    return subprocess.run([exe, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=30)


class Check(unittest.TestCase):
    def test_check_covers_what_a_start_checks_and_matches_gslbctl(self):
        cport = free_port()
        g = Gslbd(files={"control.token": "short\n"}, wait_zone=ORIGIN, expect_start=False)
        text, zone = gslb_config(g.port, cport, extra='user = "no-such-user-gslbd"')
        g.raw_config = text
        g.files["zone.db"] = zone
        try:
            g.write_config()
            rc, out = g.check()
            self.assertEqual(rc, 1, out)
            self.assertIn("control.token: the control token must be at least 8 characters", out)
            self.assertIn('[server] user "no-such-user-gslbd": no such user', out)
            self.assertRegex(out, r"state_dir .*/state: No such file or directory \(it is created at start\)")
            self.assertRegex(out, r"(?m)^.*gslbd\.toml: 2 problem\(s\), 1 warning\(s\)$")
            ctl = gslbctl("check", g.config_path)
            self.assertEqual(ctl.stdout, out)
            self.assertEqual(ctl.returncode, 1)

            # Fixed: ok, with the warnings still shown, and the same summary from both.
            g.files["control.token"] = TOKEN + "\n"
            g.raw_config, _ = gslb_config(g.port, cport)
            g.write_config()
            rc, out = g.check()
            self.assertEqual(rc, 0, out)
            self.assertRegex(out, r"(?m)^.*gslbd\.toml: ok: 1 zone\(s\), \d+ records, 1 GSLB hostname\(s\), "
                                  r"\d warning\(s\)$")
            # The same lines but the user gslbd would run as, which depends on how gslbd is started: gslbctl
            # checks the config for whoever edits it (and the count of warnings then differs).
            def lines(text):
                return [x for x in text.splitlines()[:-1] if "[server] user is not set" not in x]

            p = gslbctl("check", g.config_path)
            self.assertEqual(lines(p.stdout), lines(out))
            self.assertRegex(p.stdout, r"(?m)^.*gslbd\.toml: ok: 1 zone\(s\), \d+ records, 1 GSLB hostname\(s\)")
            self.assertNotIn("[server] user is not set", p.stdout)
        finally:
            g.close()


if __name__ == "__main__":
    run_tests()
