"""End-to-end test harness for gslbd (Python 3 stdlib only).

Pieces:
  free_port()          a port free for UDP and TCP on 127.0.0.1 and ::1
  Gslbd / Nsd / Knot   context managers running the real daemons in a temp dir
  dig() / kdig()       run the real tools and parse their text output into a Response
  wire helpers         a tiny DNS encoder/decoder for raw UDP/TCP cases
  run_tests()          unittest runner printing the final "N passed, N failed" line CI reads
"""

import atexit
import json
import os
import random
import re
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.join(HERE, "data")


def gslbd_path():
    p = os.environ.get("GSLBD") or os.path.join(REPO, "build", "server", "gslbd")
    return os.path.abspath(p)  # daemons run in their temp dir: GSLBD=build-asan/server/gslbd must still work


def gslbctl_path():
    """$GSLBCTL (meson sets it), else the gslbctl of gslbd's build directory."""
    p = os.environ.get("GSLBCTL") or os.path.join(os.path.dirname(os.path.dirname(gslbd_path())), "tools",
                                                  "gslbctl")
    return os.path.abspath(p)


def gslbctl(*args, timeout=30):
    """Runs gslbctl; stdout and stderr together in .stdout."""
    return subprocess.run([gslbctl_path(), *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=timeout)


def sh(*argv, check=True, timeout=20, **kw):
    """Runs argv; its output (stdout and stderr together) in .stdout. A non-zero exit fails the test when check."""
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout, **kw)
    if check and p.returncode != 0:
        raise AssertionError(f"{' '.join(argv)} -> {p.returncode}:\n{p.stdout}")
    return p


def netns_available(name, what):
    """(True, "") when this process may create network namespaces (root, iproute2): tried with a namespace
    NAME made and deleted at once; else (False, why), WHAT saying what the test needs them for."""
    import shutil

    if os.geteuid() != 0 or not shutil.which("ip"):
        return False, f"needs root and iproute2 ({what})"
    p = sh("ip", "netns", "add", name, check=False)
    if p.returncode != 0:
        return False, f"`ip netns add` failed ({p.stdout.strip()})"
    sh("ip", "netns", "del", name, check=False)
    return True, ""


def inet_checksum(data):
    """The Internet checksum of `data` (RFC 1071): the ones' complement of the ones' complement sum of its
    16-bit words, an odd length padded with a zero octet."""
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def wait_for(pred, seconds, what, step=0.05):
    """pred()'s first true value within `seconds`, polled every `step` s; AssertionError naming `what` else."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(step)
    raise AssertionError(f"not within {seconds:.1f} s: {what}")


def control_api(base, method, path, body=None, token=None):
    """curl the control API at `base` (http://HOST:PORT); (status, parsed JSON or text). body: JSON-able or a
    string sent as it is."""
    cmd = ["curl", "-sS", "-m", "5", "-o", "-", "-w", "\n%{http_code}", "-X", method]
    if token is not None:
        cmd += ["-H", f"Authorization: Bearer {token}"]
    if body is not None:
        cmd += ["-H", "Content-Type: application/json", "--data-binary", "@-"]
    cmd.append(base + path)
    p = subprocess.run(cmd, input=(body if isinstance(body, str) else json.dumps(body)) if body is not None
                       else "", stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=10)
    if p.returncode != 0:
        raise AssertionError(f"curl failed ({p.returncode}): {p.stderr}")
    text, _, code = p.stdout.rpartition("\n")
    try:
        return int(code), json.loads(text)
    except ValueError:
        return int(code), text


def wait_control(g, base, token, seconds=5):
    """Until the control API of gslbd `g` answers /v1/status (its listener opens with the DNS listeners: be
    tolerant of a slow start); AssertionError with the daemon's log else."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            if control_api(base, "GET", "/v1/status", token=token)[0] == 200:
                return
        except AssertionError:
            pass
        if time.monotonic() > deadline:
            raise AssertionError("control API did not answer:\n" + g.stderr())
        time.sleep(0.05)


# --------------------------------------------------------------------------- ports


def start_with_control(cls, files, origin, config, token):
    """For a test class's setUpClass: starts a Gslbd of `files` (name -> text) on a free DNS port and a free
    control port, its config `config(dns_port, control_port)`, waits for zone `origin` and the control API, and
    sets cls.g, cls.cport and cls.base (http://127.0.0.1:PORT). tearDownClass stops it with
    cls.g.__exit__(None, None, None)."""
    cls.cport = free_port()
    cls.g = Gslbd(files=files, wait_zone=origin)
    cls.g.raw_config = config(cls.g.port, cls.cport)
    cls.g.__enter__()
    cls.base = f"http://127.0.0.1:{cls.cport}"
    wait_control(cls.g, cls.base, token)

def _try_bind(family, kind, addr, port):
    s = socket.socket(family, kind)
    try:
        if kind == socket.SOCK_STREAM:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((addr, port))
        return s
    except OSError:
        s.close()
        return None


def _have_ipv6():
    s = _try_bind(socket.AF_INET6, socket.SOCK_DGRAM, "::1", 0)
    if s:
        s.close()
        return True
    return False


HAVE_IPV6 = _have_ipv6()


# Ports this process has handed out, and a claim on each shared with every other test process of the machine.
# A port free when free_port() probes it is bound only later, by the daemon the test then starts; until then
# the kernel may hand it to anyone's bind(port 0). Within one process that is the next free_port() call (a
# test takes a DNS port and a control port, then starts gslbd: "Address already in use" on the second), and
# since e2e suites run two at a time, another test process's. So a port is given out once per process, and
# only when this process can create its claim file (O_EXCL) in a directory every test process shares; a
# claim goes when the process ends, and one older than _CLAIM_TTL seconds (longer than any suite's timeout)
# is left over from a killed run and is taken over.
_HANDED_OUT = set()
_CLAIM_DIR = os.path.join(tempfile.gettempdir(), "gslbd-e2e-ports")
_CLAIM_TTL = 900


def _release_claims():
    for port in _HANDED_OUT:
        try:
            os.unlink(os.path.join(_CLAIM_DIR, str(port)))
        except OSError:
            pass


atexit.register(_release_claims)


def _claim(port):
    try:
        if not os.path.isdir(_CLAIM_DIR):
            os.makedirs(_CLAIM_DIR, exist_ok=True)
            os.chmod(_CLAIM_DIR, 0o1777)  # sticky and shared, as /tmp: tests that run as another user claim too
        path = os.path.join(_CLAIM_DIR, str(port))
        try:
            if time.time() - os.stat(path).st_mtime > _CLAIM_TTL:
                os.unlink(path)
        except OSError:
            pass
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
        return True
    except FileExistsError:
        return False
    except OSError:
        return True  # no shared directory to claim in (read-only /tmp): the in-process check still holds


def _ephemeral_range():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            lo, hi = (int(x) for x in f.read().split())
        return lo, hi
    except (OSError, ValueError):
        return 32768, 60999  # Linux's default


# Ports are taken below the kernel's ephemeral range when it leaves room (10000 up to it): a client's source
# port comes from that range, and a UDP client whose random source port equals the server's port can receive
# its own query (dig did, in the full suite: "query response not set", its query echoed back with flags "ad"):
# with SO_REUSEADDR on both sides the kernel lets the client bind the wildcard address on the port the server
# holds on 127.0.0.1, and a connected socket outranks it for a datagram from itself.
_EPHEMERAL = _ephemeral_range()
_PICK = (10000, _EPHEMERAL[0] - 1) if _EPHEMERAL[0] - 1 - 10000 >= 4096 else None


def free_port():
    """A port free for UDP and TCP on 127.0.0.1 and ::1 (when IPv6 exists), below the ephemeral range when the
    machine's range leaves room (see _PICK), never handed out before by this process and claimed against every
    other test process of the machine (see _claim)."""
    for _ in range(200):
        probe = _try_bind(socket.AF_INET, socket.SOCK_STREAM, "127.0.0.1", random.randint(*_PICK) if _PICK else 0)
        if probe is None:
            continue
        port = probe.getsockname()[1]
        held = [probe]
        ok = port > 1024 and port not in _HANDED_OUT
        combos = [(socket.AF_INET, socket.SOCK_DGRAM, "127.0.0.1")]
        if HAVE_IPV6:
            combos += [(socket.AF_INET6, socket.SOCK_STREAM, "::1"), (socket.AF_INET6, socket.SOCK_DGRAM, "::1")]
        for fam, kind, addr in combos:
            if not ok:
                break
            s = _try_bind(fam, kind, addr, port)
            if s is None:
                ok = False
                break
            held.append(s)
        ok = ok and _claim(port)
        for s in held:
            s.close()
        if ok:
            _HANDED_OUT.add(port)
            return port
    raise RuntimeError("no free port")


# --------------------------------------------------------------------------- responses

NAME_RDATA_TYPES = {"NS", "CNAME", "DNAME", "PTR", "MX", "SRV", "SOA", "NAPTR", "AFSDB", "RP", "KX", "RT"}


class RR(tuple):
    """(owner lowercased, ttl, class, type, rdata normalised)"""
    __slots__ = ()

    def __new__(cls, owner, ttl, klass, rtype, rdata):
        return tuple.__new__(cls, (owner, ttl, klass, rtype, rdata))

    owner = property(lambda s: s[0])
    ttl = property(lambda s: s[1])
    klass = property(lambda s: s[2])
    rtype = property(lambda s: s[3])
    rdata = property(lambda s: s[4])


def norm_rdata(rtype, rdata):
    rdata = " ".join(rdata.split())
    if rtype in NAME_RDATA_TYPES:
        rdata = rdata.lower()
    if rtype in ("AAAA",):
        rdata = rdata.lower()
    if rdata.startswith("\\# "):
        rdata = rdata.lower()
    return rdata


def parse_rr_line(line):
    parts = line.split(None, 4)
    if len(parts) < 4:
        return None
    owner, ttl, klass, rtype = parts[0], parts[1], parts[2], parts[3]
    rdata = parts[4] if len(parts) > 4 else ""
    try:
        ttl = int(ttl)
    except ValueError:
        return None
    return RR(owner, ttl, klass.upper(), rtype.upper(), norm_rdata(rtype.upper(), rdata)), owner


class Response:
    def __init__(self):
        self.text = ""
        self.cmd = ""
        self.opcode = None
        self.rcode = None
        self.id = None
        self.flags = set()
        self.counts = {}
        self.edns = False
        self.edns_version = None
        self.edns_udp = None
        self.edns_do = False
        self.edns_flags = set()
        self.question = []      # [(qname as printed, class, type)]
        self.answer = []
        self.authority = []
        self.additional = []
        self.answer_owner_raw = []  # owners exactly as printed (case preserved)
        self.timeout = False
        self.transfer_failed = False
        self.msg_size = None
        self.ede = []           # RFC 8914 Extended DNS Errors: [(INFO-CODE, EXTRA-TEXT)] in order
        self.tsig = []          # the TSIG RRs printed (RFC 8945), never in a section: [RR]

    @property
    def aa(self):
        return "aa" in self.flags

    @property
    def tc(self):
        return "tc" in self.flags

    def rrs(self, section, rtype=None):
        sec = getattr(self, section)
        return [r for r in sec if rtype is None or r.rtype == rtype]

    def summary(self):
        return f"rcode={self.rcode} flags={sorted(self.flags)} edns={self.edns}/{self.edns_version}/{self.edns_udp}"

    def __repr__(self):
        return f"<Response {self.summary()}>\n{self.text}"


def _parse_common(text, kind):
    r = Response()
    r.text = text
    section = None
    sawheader = False
    for line in text.splitlines():
        s = line.strip()
        if not s:
            continue
        if "connection timed out" in s or "no servers could be reached" in s or "failed to receive" in s.lower() \
                or "timed out" in s:
            r.timeout = True
        if "Transfer failed" in s or "failed (" in s.lower() and "transfer" in s.lower():
            r.transfer_failed = True
        if "->>HEADER<<-" in s:
            sawheader = True
            m = re.search(r"opcode: (\w+)[,;] status: (\w+)[,;] id: (\d+)", s)
            if m:
                r.opcode, r.rcode, r.id = m.group(1), m.group(2), int(m.group(3))
            continue
        m = re.match(r";; [Ff]lags:([^;]*);(.*)$", s)
        if m and sawheader:
            r.flags = set(m.group(1).split())
            for k, v in re.findall(r"(\w+): (\d+)", m.group(2)):
                r.counts[k] = int(v)
            continue
        if s.startswith(";; MSG SIZE") or s.startswith(";; Received"):
            m = re.search(r"(\d+) B", s) or re.search(r"rcvd: (\d+)", s)
            if m:
                r.msg_size = int(m.group(1))
            continue
        if s in (";; OPT PSEUDOSECTION:", ";; EDNS PSEUDOSECTION:"):
            r.edns = True
            section = "opt"
            continue
        # dig: "; EDE: 20 (Not Authoritative)", "; EDE: 0 (Other): (some text)";
        # kdig: ";; EDE: 20 (Not Authoritative)", ";; EDE: 0 (Other): 'some text'".
        m = re.match(r";;? EDE: (\d+)(?: \([^)]*\))?(?::\s*(.*))?$", s)
        if m:
            text = (m.group(2) or "").strip()
            if len(text) >= 2 and (text[0], text[-1]) in (("(", ")"), ("'", "'"), ('"', '"')):
                text = text[1:-1]
            r.ede.append((int(m.group(1)), text))
            continue
        if kind == "dig" and s.startswith("; EDNS:"):
            # ; EDNS: version: 0, flags: do; udp: 1232
            m = re.search(r"version: (\d+)", s)
            r.edns_version = int(m.group(1)) if m else None
            m = re.search(r"flags:([^;]*);", s)
            r.edns_flags = set(m.group(1).split()) if m else set()
            m = re.search(r"udp: (\d+)", s)
            r.edns_udp = int(m.group(1)) if m else None
            r.edns_do = "do" in r.edns_flags
            continue
        if kind == "kdig" and s.startswith(";; Version:"):
            # ;; Version: 0; flags: do; UDP size: 1232 B; ext-rcode: NOERROR
            m = re.search(r"Version: (\d+)", s)
            r.edns_version = int(m.group(1)) if m else None
            m = re.search(r"flags:([^;]*);", s)
            r.edns_flags = set(m.group(1).split()) if m else set()
            m = re.search(r"UDP size: (\d+)", s)
            r.edns_udp = int(m.group(1)) if m else None
            r.edns_do = "do" in r.edns_flags
            m = re.search(r"(?:ext-rcode|status): (\w+)", s)
            if m and m.group(1) != "NOERROR":
                r.rcode = m.group(1)
            continue
        if s == ";; TSIG PSEUDOSECTION:":
            section = "tsig"
            continue
        m = re.match(r";; (QUESTION|ANSWER|AUTHORITY|ADDITIONAL) SECTION:", s)
        if m:
            section = m.group(1).lower()
            continue
        if s.startswith(";"):
            if section == "question":
                q = s.lstrip(";").split()
                if len(q) >= 3:
                    r.question.append((q[0], q[1], q[2]))
            continue
        if section in (None, "opt") and not sawheader:
            section = "answer"  # AXFR style output (no header)
        if section in ("answer", "authority", "additional", "tsig"):
            p = parse_rr_line(s)
            if p is None:
                continue
            rr, raw_owner = p
            if rr.rtype == "TSIG":  # its pseudosection, or a transfer's message signature between records
                r.tsig.append(rr)
                continue
            getattr(r, section).append(RR(rr.owner.lower(), rr.ttl, rr.klass, rr.rtype, rr.rdata))
            if section == "answer":
                r.answer_owner_raw.append(raw_owner)
    return r


def parse_dig(text):
    return _parse_common(text, "dig")


def parse_kdig(text):
    return _parse_common(text, "kdig")


def _host_args(server):
    return server if server else "127.0.0.1"


def dig(port, qname, qtype="A", *opts, server="127.0.0.1", qclass=None, timeout=15):
    """Run dig and parse.  opts are extra dig options like '+tcp', '+dnssec', '+bufsize=512'."""
    cmd = ["dig", "@" + server, "-p", str(port), "+norec", "+time=2", "+tries=1", "+nocookie"]
    cmd += list(opts)
    if qclass:
        cmd += ["-c", qclass]
    cmd += ["-q", qname, "-t", qtype]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
    r = parse_dig(p.stdout)
    r.cmd = " ".join(cmd)
    r.returncode = p.returncode
    return r


def kdig(port, qname, qtype="A", *opts, server="127.0.0.1", qclass=None, timeout=15):
    cmd = ["kdig", "@" + server, "-p", str(port), "+norec", "+time=2", "+retry=0"]
    cmd += list(opts)
    if qclass:
        cmd += ["-c", qclass]
    cmd += ["-q", qname, "-t", qtype]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
    r = parse_kdig(p.stdout)
    r.cmd = " ".join(cmd)
    r.returncode = p.returncode
    return r


TOOLS = {"dig": dig, "kdig": kdig}


# --------------------------------------------------------------------------- wire format

TYPES = {"A": 1, "NS": 2, "CNAME": 5, "SOA": 6, "PTR": 12, "HINFO": 13, "MX": 15, "TXT": 16, "AAAA": 28,
         "SRV": 33, "DS": 43, "OPT": 41, "AXFR": 252, "IXFR": 251, "ANY": 255}
TYPE_NAMES = {v: k for k, v in TYPES.items()}
RCODES = {0: "NOERROR", 1: "FORMERR", 2: "SERVFAIL", 3: "NXDOMAIN", 4: "NOTIMP", 5: "REFUSED", 16: "BADVERS",
          23: "BADCOOKIE"}


def encode_name(name):
    """Presentation name (no escapes) -> wire."""
    if name in (".", ""):
        return b"\x00"
    out = b""
    for label in name.rstrip(".").split("."):
        lb = label.encode()
        out += bytes([len(lb)]) + lb
    return out + b"\x00"


def build_query(qname="gslb.example.com.", qtype="A", qclass=1, qid=0x1234, opcode=0, qr=0, rd=0,
                qdcount=None, edns=None, do=False, edns_version=0, edns_opts=b"", raw_qname=None,
                extra_questions=0, udp_size=1232):
    """A query built by hand.  edns=None → no OPT; edns=True → one OPT record."""
    if isinstance(qtype, str):
        qtype = TYPES[qtype]
    flags = (qr << 15) | (opcode << 11) | (rd << 8)
    qn = raw_qname if raw_qname is not None else encode_name(qname)
    question = qn + struct.pack("!HH", qtype, qclass)
    questions = question * (1 + extra_questions)
    nq = 1 + extra_questions
    if qdcount is not None:
        nq = qdcount
        if qdcount == 0:
            questions = b""
    arcount = 0
    add = b""
    if edns:
        ttl = (0 << 24) | (edns_version << 16) | (0x8000 if do else 0)
        add = b"\x00" + struct.pack("!HHIH", 41, udp_size, ttl, len(edns_opts)) + edns_opts
        arcount = 1
    hdr = struct.pack("!HHHHHH", qid, flags, nq, 0, 0, arcount)
    return hdr + questions + add


class WireError(Exception):
    pass


def decode_name(msg, off):
    labels = []
    jumps = 0
    end = None
    while True:
        if off >= len(msg):
            raise WireError("name past end")
        ln = msg[off]
        if ln & 0xC0 == 0xC0:
            if off + 1 >= len(msg):
                raise WireError("pointer past end")
            ptr = ((ln & 0x3F) << 8) | msg[off + 1]
            if end is None:
                end = off + 2
            jumps += 1
            if jumps > 64 or ptr >= len(msg):
                raise WireError("bad pointer")
            off = ptr
            continue
        if ln & 0xC0:
            raise WireError("bad label type")
        off += 1
        if ln == 0:
            break
        labels.append(msg[off:off + ln])
        off += ln
    name = ".".join(l.decode("latin-1") for l in labels) + "."
    return name, (end if end is not None else off)


class WireMsg:
    def __init__(self):
        self.id = self.flags = 0
        self.qd = self.an = self.ns = self.ar = 0
        self.question = []
        self.answer, self.authority, self.additional = [], [], []
        self.opt = None  # dict(udp, version, do, ext_rcode, options)
        self.opt_count = 0
        self.owners_raw = {"answer": [], "authority": [], "additional": []}  # owners as sent (case kept)
        self.raw = b""

    @property
    def rcode(self):
        code = self.flags & 0xF
        if self.opt:
            code |= self.opt["ext_rcode"] << 4
        return RCODES.get(code, str(code))

    qr = property(lambda s: bool(s.flags & 0x8000))
    opcode = property(lambda s: (s.flags >> 11) & 0xF)
    aa = property(lambda s: bool(s.flags & 0x0400))
    tc = property(lambda s: bool(s.flags & 0x0200))
    rd = property(lambda s: bool(s.flags & 0x0100))
    ra = property(lambda s: bool(s.flags & 0x0080))

    def __repr__(self):
        return (f"<WireMsg id={self.id} rcode={self.rcode} qr={self.qr} aa={self.aa} tc={self.tc} "
                f"counts={self.qd}/{self.an}/{self.ns}/{self.ar} q={self.question} an={self.answer} "
                f"ns={self.authority} ar={self.additional} opt={self.opt}>")


def decode_msg(msg):
    if len(msg) < 12:
        raise WireError("short message")
    m = WireMsg()
    m.raw = msg
    m.id, m.flags, m.qd, m.an, m.ns, m.ar = struct.unpack("!HHHHHH", msg[:12])
    off = 12
    for _ in range(m.qd):
        name, off = decode_name(msg, off)
        qtype, qclass = struct.unpack("!HH", msg[off:off + 4])
        off += 4
        m.question.append((name, qtype, qclass))
    for sec, cnt in (("answer", m.an), ("authority", m.ns), ("additional", m.ar)):
        for _ in range(cnt):
            name, off = decode_name(msg, off)
            if off + 10 > len(msg):
                raise WireError("rr past end")
            rtype, rclass, ttl, rdlen = struct.unpack("!HHIH", msg[off:off + 10])
            off += 10
            rdata = msg[off:off + rdlen]
            if len(rdata) != rdlen:
                raise WireError("rdata past end")
            rdoff = off
            off += rdlen
            if rtype == 41:
                m.opt_count += 1
                opts = []
                o = 0
                while o + 4 <= len(rdata):
                    code, ln = struct.unpack("!HH", rdata[o:o + 4])
                    opts.append((code, rdata[o + 4:o + 4 + ln]))
                    o += 4 + ln
                m.opt = {"udp": rclass, "ext_rcode": ttl >> 24, "version": (ttl >> 16) & 0xFF,
                         "do": bool(ttl & 0x8000), "options": opts, "owner": name}
                continue
            m.owners_raw[sec].append(name)
            getattr(m, sec).append((name.lower(), ttl, rclass, TYPE_NAMES.get(rtype, rtype),
                                    _rdata_text(msg, rtype, rdata, rdoff)))
    if off != len(msg):
        raise WireError(f"trailing bytes: {len(msg) - off}")
    return m


def _rdata_text(msg, rtype, rdata, rdoff):
    try:
        if rtype == 1:
            return socket.inet_ntop(socket.AF_INET, rdata)
        if rtype == 28:
            return socket.inet_ntop(socket.AF_INET6, rdata)
        if rtype in (2, 5, 12):
            return decode_name(msg, rdoff)[0].lower()
        if rtype == 15:
            return f"{struct.unpack('!H', rdata[:2])[0]} {decode_name(msg, rdoff + 2)[0].lower()}"
    except Exception:
        pass
    return rdata.hex()


def udp_query(port, data, addr="127.0.0.1", timeout=2.0):
    """Send raw bytes over UDP; returns the reply bytes or None on timeout."""
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.settimeout(timeout)
    try:
        s.sendto(data, (addr, port))
        try:
            return s.recv(65535)
        except socket.timeout:
            return None
    finally:
        s.close()


class TcpClient:
    """Raw TCP DNS client: send() with or without the length prefix, recv_msg() reads one framed message."""

    def __init__(self, port, addr="127.0.0.1", timeout=3.0):
        fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
        self.sock = socket.socket(fam, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.connect((addr, port))

    @staticmethod
    def frame(data):
        return struct.pack("!H", len(data)) + data

    def send_raw(self, data):
        self.sock.sendall(data)

    def send_msg(self, data):
        self.sock.sendall(self.frame(data))

    def _recv_exact(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("closed by peer")
            buf += chunk
        return buf

    def recv_msg(self):
        ln = struct.unpack("!H", self._recv_exact(2))[0]
        return self._recv_exact(ln)

    def is_closed(self, wait=0.0):
        """True when the peer closed (EOF or reset) within `wait` seconds."""
        self.sock.settimeout(max(wait, 0.01))
        try:
            d = self.sock.recv(1)
            return d == b""
        except socket.timeout:
            return False
        except (ConnectionResetError, BrokenPipeError, OSError):
            return True

    def query(self, data):
        self.send_msg(data)
        return decode_msg(self.recv_msg())

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.close()


def tcp_query(port, data, addr="127.0.0.1"):
    with TcpClient(port, addr) as c:
        return c.query(data)


# The zone of the transfer tests (NOTIFY, TSIG): gslb.example.com. at serial 2024010101.
XFR_ZONE = """$ORIGIN gslb.example.com.
$TTL 300
@ IN SOA ns1 admin 2024010101 3600 900 604800 60
@ IN NS ns1
ns1 IN A 192.0.2.1
static IN A 192.0.2.5
"""


def soa_serial(port, zone, server="127.0.0.1"):
    """The SOA serial `server`:`port` serves for `zone` (kdig), None when it gives no SOA."""
    r = kdig(port, zone, "SOA", "+time=1", server=server)
    soa = [rr for rr in r.answer if rr.rtype == "SOA"]
    return int(soa[0].rdata.split()[2]) if soa else None


def secondaries_follow(test, g, secondaries, zone, label, limit=5.0):
    """`gslbctl zone add` of new.ZONE A 192.0.2.77 to gslbd `g`'s zone.db and a reload; then every secondary
    (name -> daemon with .port) must serve the new serial with that record within `limit` s of the SIGHUP.
    Returns the new serial. (NOTIFY and TSIG share this: the secondaries follow without a refresh command.)"""
    old = soa_serial(g.port, zone)
    p = gslbctl("zone", "add", g.path("zone.db"), "new", "A", "192.0.2.77")
    test.assertEqual(p.returncode, 0, p.stdout)
    t0 = time.monotonic()
    g.reload()
    deadline = time.monotonic() + 20
    while soa_serial(g.port, zone) == old:
        test.assertLess(time.monotonic(), deadline, g.stderr())
        time.sleep(0.05)
    new = soa_serial(g.port, zone)
    done = {}
    while len(done) < len(secondaries):
        for name, sec in secondaries.items():
            if name not in done and soa_serial(sec.port, zone) == new:
                r = kdig(sec.port, "new." + zone, "A")
                if [rr.rdata for rr in r.answer] == ["192.0.2.77"]:
                    done[name] = time.monotonic() - t0
        test.assertLess(time.monotonic(), deadline, f"secondaries did not follow: {done}\n{g.stderr()}\n" +
                        "\n".join(sec.stderr() for sec in secondaries.values()))
        time.sleep(0.05)
    print(f"{label}: new serial {new} served by " +
          ", ".join(f"{name} after {done[name]:.2f} s" for name in secondaries) + " (from SIGHUP)")
    test.assertLess(max(done.values()), limit)
    return new


# --------------------------------------------------------------------------- daemons

class DaemonError(AssertionError):
    pass


_LIVE = set()  # every daemon we started, killed at exit whatever happens


def _kill_all():
    for d in list(_LIVE):
        d.kill()


atexit.register(_kill_all)


# A keeper process kills what this test process started when the test process dies without running atexit
# (SIGKILL, meson's timeout, an OOM kill): each daemon is in a session of its own (start_new_session, so the
# test's signals do not reach it), and would otherwise live on, holding its ports. PR_SET_PDEATHSIG does not
# do it: set in preexec_fn it is unsafe with threads, and it fires when the *thread* that forked the daemon
# ends; `setpriv --pdeathsig KILL` as an exec prefix has the same thread semantics, and the kernel clears
# the setting when the daemon changes its uid (gslbd's `user`, NSD's and Knot's drop) and in every child it
# forks. The keeper holds the read end of a pipe whose only write end is this process's (not inherited:
# os.pipe() is close-on-exec, Popen closes fds), so it reads EOF exactly when this process is gone; it then
# SIGKILLs each daemon registered with keep() that is still the same process (pid and start time), its
# descendants, and every process in its session (a daemon's forked workers, those of a daemon that dropped
# privileges: the keeper keeps the test's own uid). Only a daemon that forks and calls setsid() itself
# escapes it; the harness runs every daemon in the foreground.
_KEEPER_CODE = r"""
import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
fd = int(sys.argv[1])
data = b""
while True:
    try:
        chunk = os.read(fd, 4096)
    except InterruptedError:
        continue
    if not chunk:
        break
    data += chunk
def stat(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            rest = f.read().rsplit(")", 1)[1].split()
        return int(rest[1]), int(rest[3]), rest[19]  # ppid, session, start time
    except (OSError, IndexError, ValueError):
        return None
procs = {}
for name in os.listdir("/proc"):
    if name.isdigit():
        st = stat(int(name))
        if st:
            procs[int(name)] = st
roots = set()
for line in data.decode().split():
    pid, _, start = line.partition(":")
    if pid.isdigit() and procs.get(int(pid), (0, 0, None))[2] == start:
        roots.add(int(pid))
doomed, todo = set(), list(roots)
while todo:
    p = todo.pop()
    if p in doomed:
        continue
    doomed.add(p)
    todo += [c for c, st in procs.items() if st[0] == p or (p in roots and st[1] == p)]
doomed.discard(os.getpid())
for p in sorted(doomed, key=lambda p: p not in roots):  # the daemons first: no new workers forked
    try:
        os.kill(p, signal.SIGKILL)
    except OSError:
        pass
"""
_keeper = None  # (Popen, write fd), started with the first daemon


def keep(proc):
    """Registers `proc` (a subprocess.Popen of a daemon, started with start_new_session=True) with the keeper,
    which SIGKILLs it, its descendants and its session if this test process dies before stopping it."""
    global _keeper
    try:
        with open(f"/proc/{proc.pid}/stat") as f:
            start = f.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return proc  # already gone
    if _keeper is None:
        r, w = os.pipe()
        # Its stdout and stderr are not the test's: meson reads those until EOF.
        k = subprocess.Popen([sys.executable, "-S", "-c", _KEEPER_CODE, str(r)], pass_fds=(r,),
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
        os.close(r)
        _keeper = (k, w)
    os.write(_keeper[1], f"{proc.pid}:{start}\n".encode())
    return proc


def spawn(argv, **kw):
    """subprocess.Popen(argv, start_new_session=True, **kw), registered with keep()."""
    return keep(subprocess.Popen(argv, start_new_session=True, **kw))


def unbound_server_conf(port, directory):
    """The `server:` clause every test's Unbound shares: loopback only, in the foreground, logging to stderr, no
    chroot or user change, one thread, allowed to query 127.0.0.1 (where the test's servers listen), and no QNAME
    minimisation (so the queries gslbd sees are the client's). Callers append their own module-config and zones."""
    return f"""server:
    interface: 127.0.0.1
    port: {port}
    do-ip6: no
    do-daemonize: no
    use-syslog: no
    logfile: ""
    chroot: ""
    username: ""
    directory: "{directory}"
    pidfile: ""
    num-threads: 1
    verbosity: 1
    access-control: 127.0.0.0/8 allow
    do-not-query-localhost: no
    qname-minimisation: no
"""


def is_token_file(name):
    """A control token file as the tests name them ("token", "control.token"): a secret, which gslbd refuses when
    other users may read it, so the harness writes it owner-only as an operator must."""
    base = os.path.basename(name)
    return base == "token" or base.endswith(".token")


def write_secret(path, text):
    """Writes `text` to `path` readable by its owner only (0600), as a control token or TSIG secret must be."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.chmod(path, 0o600)
    return path


class _Daemon:
    name = "daemon"

    def __init__(self):
        self.tmp = tempfile.TemporaryDirectory(prefix=f"e2e-{self.name}-")
        self.dir = self.tmp.name
        self.proc = None
        self.port = None
        self.stderr_path = os.path.join(self.dir, "stderr.log")
        self._errf = None

    def path(self, name):
        return os.path.join(self.dir, name)

    def write(self, name, content):
        p = self.path(name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(content)
        if is_token_file(name):
            os.chmod(p, 0o600)
        return p

    def stderr(self):
        try:
            with open(self.stderr_path, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def _spawn(self, argv):
        self._errf = open(self.stderr_path, "ab")
        self.proc = spawn(argv, cwd=self.dir, stdin=subprocess.DEVNULL, stdout=self._errf, stderr=self._errf)
        _LIVE.add(self)

    def wait_soa(self, zone, timeout=10.0, port=None):
        q = build_query(zone, "SOA", qid=0x4242)
        deadline = time.time() + timeout
        port = port or self.port
        while time.time() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raise DaemonError(f"{self.name} exited with {self.proc.returncode} before answering:\n{self.stderr()}")
            try:
                r = udp_query(port, q, timeout=0.3)
                if r:
                    m = decode_msg(r)
                    if m.rcode == "NOERROR" and m.answer:
                        return m
            except (OSError, WireError):
                pass
            time.sleep(0.1)
        raise DaemonError(f"{self.name} did not answer SOA {zone} on port {port} within {timeout}s:\n{self.stderr()}")

    def kill(self):
        """SIGTERM, then SIGKILL, to the daemon's own process group (it was started in a new session, so this
        reaches NSD's / Knot's helper processes too and nothing else)."""
        if self.proc is not None and self.proc.poll() is None:
            pgid = self.proc.pid
            try:
                os.killpg(pgid, signal.SIGTERM)
                self.proc.wait(2)
            except (OSError, subprocess.TimeoutExpired):
                pass
            try:
                os.killpg(pgid, signal.SIGKILL)
            except OSError:
                pass
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                pass
        _LIVE.discard(self)

    def close(self):
        self.kill()
        if self._errf:
            self._errf.close()
            self._errf = None
        self.tmp.cleanup()

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *a):
        self.close()


def toml_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


class Gslbd(_Daemon):
    """gslbd in a temp dir.

    zones: {zone_name: zone_text_or_(filename, text)}; files: extra files {relpath: text};
    server: dict of extra [server] keys (python values → TOML); raw_config replaces the generated config.
    """
    name = "gslbd"

    def __init__(self, zones=None, files=None, server=None, raw_config=None, ipv6=True, expect_start=True,
                 wait_zone=None):
        super().__init__()
        self.zones = zones or {}
        self.files = files or {}
        self.server_opts = dict(server or {})
        self.raw_config = raw_config
        self.ipv6 = ipv6 and HAVE_IPV6
        self.expect_start = expect_start
        self.wait_zone = wait_zone
        self.port = free_port()
        self.config_path = self.path("gslbd.toml")

    @staticmethod
    def toml_value(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, float)):
            return str(v)
        if isinstance(v, str):
            return toml_str(v)
        if isinstance(v, (list, tuple)):
            return "[" + ", ".join(Gslbd.toml_value(x) for x in v) + "]"
        raise TypeError(v)

    def make_config(self):
        listen = [f"127.0.0.1:{self.port}"]
        if self.ipv6:
            listen.append(f"[::1]:{self.port}")
        opts = {"listen": listen, "workers": 2, "udp_payload_max": 1232, "tcp_idle_timeout": 10,
                "tcp_max_connections": 1024, "axfr_allow": ["127.0.0.1"]}
        opts.update(self.server_opts)
        lines = ["[server]"]
        for k, v in opts.items():
            if v is None:
                continue
            lines.append(f"{k} = {self.toml_value(v)}")
        for zname, content in self.zones.items():
            if isinstance(content, tuple):
                fname, content = content
            else:
                fname = zname.rstrip(".") + ".zone"
            self.write(fname, content)
            lines += ["", "[[zone]]", f"name = {toml_str(zname)}", f"file = {toml_str(fname)}"]
        return "\n".join(lines) + "\n"

    def write_config(self):
        for rel, text in self.files.items():
            self.write(rel, text)
        self.write("gslbd.toml", self.raw_config if self.raw_config is not None else self.make_config())

    def start(self):
        self.write_config()
        exe = gslbd_path()
        if not os.path.exists(exe):
            raise DaemonError(f"gslbd binary not found at {exe} (set GSLBD)")
        self._spawn([exe, "--config", self.config_path])
        if self.expect_start:
            zone = self.wait_zone or (next(iter(self.zones)) if self.zones else ".")
            self.wait_soa(zone)

    def check(self):
        """Run gslbd --check on the current config; returns (exit code, output)."""
        p = subprocess.run([gslbd_path(), "--check", "--config", self.config_path], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=30, cwd=self.dir)
        return p.returncode, p.stdout

    def wait_exit(self, timeout=5.0):
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def reload(self):
        self.proc.send_signal(signal.SIGHUP)

    def stop(self, tc=None):
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.kill()
            raise DaemonError(f"gslbd did not exit within 5s of SIGTERM:\n{self.stderr()}")
        if rc != 0:
            raise DaemonError(f"gslbd exited {rc} after SIGTERM:\n{self.stderr()}")
        return rc

    def dig(self, qname, qtype="A", *opts, **kw):
        return dig(self.port, qname, qtype, *opts, **kw)

    def kdig(self, qname, qtype="A", *opts, **kw):
        return kdig(self.port, qname, qtype, *opts, **kw)


class Nsd(_Daemon):
    name = "nsd"

    def __init__(self, zones, extra_zone_conf=None, port=None, extra_conf=None):
        super().__init__()
        self.zones = zones  # {zone: text}
        self.port = port or free_port()
        self.extra_zone_conf = extra_zone_conf or {}
        self.extra_conf = extra_conf or []  # top-level lines (e.g. a key: clause)

    def start(self):
        conf = [
            "server:",
            f'    port: {self.port}',
            "    ip-address: 127.0.0.1",
            '    username: ""',
            '    database: ""',
            f'    pidfile: "{self.path("nsd.pid")}"',
            f'    xfrdfile: "{self.path("xfrd.state")}"',
            f'    zonelistfile: "{self.path("zone.list")}"',
            f'    zonesdir: "{self.dir}"',
            f'    chroot: ""',
            "    server-count: 1",
            "    verbosity: 1",
            "    hide-version: yes",
            "    minimal-responses: no",
            "    refuse-any: no",
            "remote-control:",
            "    control-enable: no",
        ] + list(self.extra_conf)
        for zname, text in self.zones.items():
            fname = zname.rstrip(".") + ".zone"
            if text is not None:
                self.write(fname, text)
            conf += ["zone:", f"    name: {zname}"]
            if text is not None:
                conf += [f"    zonefile: {fname}"]
            for line in self.extra_zone_conf.get(zname, []):
                conf.append("    " + line)
        self.write("nsd.conf", "\n".join(conf) + "\n")
        self._spawn(["nsd", "-d", "-c", self.path("nsd.conf")])
        self.wait_soa(next(iter(self.zones)), timeout=15)

    def dig(self, qname, qtype="A", *opts, **kw):
        return dig(self.port, qname, qtype, *opts, **kw)

    def kdig(self, qname, qtype="A", *opts, **kw):
        return kdig(self.port, qname, qtype, *opts, **kw)


class Knot(_Daemon):
    """knotd as a secondary of a primary at 127.0.0.1@primary_port."""
    name = "knot"

    def __init__(self, zone, primary_port, key=None, catalog=False):
        super().__init__()
        self.zone = zone
        self.primary_port = primary_port
        self.port = free_port()
        self.key = key  # (name, algorithm, base64 secret): transfers and NOTIFY signed with it (TSIG)
        # `zone` is an RFC 9432 catalog (catalog-role: interpret): its members get the template "member",
        # transferred from the same primary; none of them is in this configuration.
        self.catalog = catalog

    def start(self):
        key_conf = remote_key = ""
        if self.key:
            name, alg, secret = self.key
            key_conf = f"""key:
  - id: {name}
    algorithm: {alg}
    secret: {secret}

"""
            remote_key = f"\n    key: {name}"
        member = catalog = ""
        if self.catalog:
            member = f"""  - id: member
    storage: "{self.dir}/zones"
    zonefile-sync: -1
    zonefile-load: none
    journal-content: none
    master: primary
    acl: notify_from_primary
"""
            catalog = "\n    catalog-role: interpret\n    catalog-template: member"
        conf = key_conf + f"""server:
    rundir: "{self.dir}"
    user: root:root
    listen: 127.0.0.1@{self.port}
    background-workers: 1
    udp-workers: 1
    tcp-workers: 1

log:
  - target: stderr
    any: info

database:
    storage: "{self.dir}/db"

remote:
  - id: primary
    address: 127.0.0.1@{self.primary_port}{remote_key}

acl:
  - id: notify_from_primary
    address: 127.0.0.1{remote_key}
    action: notify

template:
  - id: default
    storage: "{self.dir}/zones"
    zonefile-sync: -1
    zonefile-load: none
    journal-content: none
{member}
zone:
  - domain: {self.zone}
    master: primary
    acl: notify_from_primary{catalog}
"""
        os.makedirs(self.path("zones"), exist_ok=True)
        os.makedirs(self.path("db"), exist_ok=True)
        self.write("knot.conf", conf)
        self._spawn(["knotd", "-c", self.path("knot.conf")])

    def wait_zone(self, timeout=15.0):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise DaemonError(f"knotd exited {self.proc.returncode}:\n{self.stderr()}")
            r = kdig(self.port, self.zone, "SOA", "+time=1")
            if r.rcode == "NOERROR" and r.answer:
                return r
            time.sleep(0.3)
        raise DaemonError(f"knotd did not load {self.zone} within {timeout}s:\n{self.stderr()}")


# --------------------------------------------------------------------------- helpers for tests

def sorted_rrs(rrs):
    return sorted(tuple(r) for r in rrs)


def response_key(r, ttl=True):
    """A comparable view of a parsed Response (dig/kdig): rcode, aa, tc and sorted sections."""
    def sec(rrs):
        return sorted((o, t if ttl else 0, c, ty, d) for (o, t, c, ty, d) in rrs)
    return {"rcode": r.rcode, "aa": r.aa, "tc": r.tc, "answer": sec(r.answer), "authority": sec(r.authority),
            "additional": sec(r.additional)}


def strip_optional_apex_ns(key, resp, origin):
    """RFC 2181 §6.1 / RFC 1034 §4.3.2: in a positive answer the zone's apex NS RRset in the authority section is
    optional, and so are the addresses added only for it.  Return `key` without them (both servers' answers go
    through this, so either choice compares equal).  Addresses of MX/SRV/NS targets in the answer are kept."""
    if not resp.answer or resp.rcode != "NOERROR" or not resp.authority:
        return key
    if any(rr.rtype != "NS" or rr.owner != origin for rr in resp.authority):
        return key
    ns_targets = {rr.rdata for rr in resp.authority}
    need = {rr.rdata.split()[-1] for rr in resp.answer if rr.rtype in ("MX", "SRV", "NS")}
    k = dict(key)
    k["authority"] = []
    # A record already in the answer section is kept, so repeating it in the additional section (which NSD, BIND
    # and Knot avoid) still shows up as a difference.
    answer = set(key["answer"])
    k["additional"] = [rr for rr in key["additional"] if rr[0] not in ns_targets or rr[0] in need or rr in answer]
    return k


def diff_text(a, b, name_a="expected", name_b="actual"):
    out = []
    for k in ("rcode", "aa", "tc"):
        if a.get(k) != b.get(k):
            out.append(f"  {k}: {name_a}={a.get(k)} {name_b}={b.get(k)}")
    for k in ("answer", "authority", "additional"):
        if k in a and a[k] != b[k]:
            sa, sb = set(a[k]), set(b[k])
            out.append(f"  {k}:")
            for x in sorted(sa - sb):
                out.append(f"    - {name_a} only: {' '.join(map(str, x))}")
            for x in sorted(sb - sa):
                out.append(f"    + {name_b} only: {' '.join(map(str, x))}")
            if sa == sb:
                out.append(f"    (same set, different multiplicity) {name_a}={len(a[k])} {name_b}={len(b[k])}")
    return "\n".join(out)


class _CountingResult(unittest.TextTestResult):
    """Counts the tests that passed, as they pass: testsRun minus the failures is wrong when a setUpClass
    fails (its error is one entry, its tests never run), which printed "-1 passed"."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.passed = 0

    def addSuccess(self, test):
        super().addSuccess(test)
        self.passed += 1


def run_tests(module_name="__main__"):
    """Run every unittest TestCase in the module; print 'N passed, N failed'; exit 0 only when all pass."""
    def _on_term(signum, frame):
        raise SystemExit(f"killed by signal {signum}")
    signal.signal(signal.SIGTERM, _on_term)
    loader = unittest.TestLoader()
    if len(sys.argv) > 1:
        suite = loader.loadTestsFromNames(sys.argv[1:], sys.modules[module_name])
    else:
        suite = loader.loadTestsFromModule(sys.modules[module_name])
    runner = unittest.TextTestRunner(stream=sys.stdout, verbosity=2, resultclass=_CountingResult)
    res = runner.run(suite)
    failed = len(res.failures) + len(res.errors) + len(getattr(res, "unexpectedSuccesses", []))
    skipped = len(res.skipped)
    passed = res.passed
    if skipped:
        print(f"{skipped} skipped")
    sys.stdout.flush()
    print(f"{passed} passed, {failed} failed")
    sys.exit(0 if failed == 0 and res.testsRun > 0 else 1)
