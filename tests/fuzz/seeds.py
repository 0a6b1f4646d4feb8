#!/usr/bin/python3
# Writes the hand-made seed inputs of the fuzz targets into corpus/TARGET/ (named by their SHA-1, as libFuzzer
# names what it adds). Run once when a target's input format changes; `tools/fuzz --merge` keeps the corpus
# minimal afterwards. Needs python3-dnspython.
import hashlib
import os
import struct

import dns.edns
import dns.flags
import dns.message

HERE = os.path.dirname(os.path.abspath(__file__))


def save(target, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)


def answer():
    names = ["f.test.", "www.f.test.", "WwW.F.TeSt.", "rr.f.test.", "wrr.f.test.", "bs.f.test.", "ls.f.test.",
             "lf.f.test.", "none.f.test.", "fixed.f.test.", "static.f.test.", "mixed.case.f.test.", "a.wild.f.test.",
             "a.b.wild.f.test.", "x.deep.wild.f.test.", "q.cn.f.test.", "alias.f.test.", "chain1.f.test.",
             "loop1.f.test.", "self.f.test.", "out.f.test.", "outloop.f.test.", "dangling.f.test.", "tosub.f.test.",
             "www.dn.f.test.", "a.b.dnself.f.test.", "dn.f.test.", "ent.f.test.", "y.ent.f.test.", "x.y.ent.f.test.",
             "sub.f.test.", "host.sub.f.test.", "ns.sub.f.test.", "unglued.f.test.", "_sip._tcp.f.test.",
             "ptr.f.test.", "caa.f.test.", "unknown.f.test.", "empty.f.test.", "big.f.test.", "huge.f.test.",
             "mx.f.test.", "gslbcname.f.test.", "nx.f.test.", "other.test.", "q.x.other.test.", "back.other.test.",
             "a.below.other.test.", "example.com.", "."]
    types = ["A", "AAAA", "ANY", "TXT", "MX", "NS", "SOA", "CNAME", "DS", "SRV", "DNAME", "PTR", "CAA"]
    i = 0
    for n in names:
        for t in types:
            i += 1
            if i % 3 and t not in ("A", "AAAA", "ANY"):
                continue
            m = dns.message.make_query(n, t)
            m.flags &= ~dns.flags.RD
            m.id = i & 0xFFFF
            save("answer", m.to_wire())
        for size in (512, 1232, 4096, 65535):
            m = dns.message.make_query(n, "A" if size != 4096 else "ANY", use_edns=0, payload=size,
                                       want_dnssec=size == 4096)
            save("answer", m.to_wire())
    for t in ("AXFR", "IXFR"):
        for z in ("f.test.", "other.test.", "www.f.test.", "nx.test."):
            save("answer", dns.message.make_query(z, t).to_wire())
    for n in ("version.bind.", "id.server.", "hostname.bind.", "version.server."):
        save("answer", dns.message.make_query(n, "TXT", rdclass="CH").to_wire())
    save("answer", dns.message.make_query("www.f.test.", "A", rdclass="HS").to_wire())
    # Every opcode with QDCOUNT 0, 1 and 2 (the header-only class of the untrusted-input work).
    question = dns.message.make_query("www.f.test.", "A").to_wire()[12:]
    for op in range(16):
        for qd in (0, 1, 2):
            save("answer", struct.pack(">HHHHHH", 0x4242, op << 11, qd, 0, 0, 0) + question * qd)
    save("answer", b"\x00\x00\x08\x00" + b"\x00" * 8)
    save("answer", dns.message.make_query("www.f.test.", "A", use_edns=1).to_wire())
    w = dns.message.make_query("www.f.test.", "A", use_edns=0).to_wire()
    save("answer", w[:10] + b"\x00\x02" + w[12:] + w[-11:])  # two OPT records
    save("answer", b"\x12\x34\x81\x00" + w[4:])  # a response
    save("answer", b"\x12\x34\x01")  # a runt
    save("answer", b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\xc0\x0c\x00\x01\x00\x01")  # pointer loop
    save("answer", b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x40" + b"a" * 64 + b"\x00\x00\x01\x00\x01")
    m = dns.message.make_query("www.f.test.", "A", use_edns=0,
                               options=[dns.edns.GenericOption(10, b"12345678"),
                                        dns.edns.GenericOption(8, b"\x00\x01\x18\x00\xc0\x00\x02")])
    save("answer", m.to_wire())


ZONE = """$ORIGIN f.test.
$TTL 300
@ IN SOA ns1 hostmaster 2024010101 3600 900 604800 120
@ IN NS ns1
ns1 IN A 192.0.2.53
www 60 IN A 192.0.2.1
    IN AAAA 2001:db8::1
mail MX 10 mail.example.
_sip._tcp SRV 0 5 5060 www
txt TXT "a b" c
alias CNAME www
dn DNAME other.test.
ptr PTR @
"""


def loader():
    save("loader", ZONE)
    save("loader", ZONE + "$INCLUDE inc.zone\nafter A 192.0.2.9\n")
    save("loader", ZONE + "$INCLUDE inc2.zone sub\n$INCLUDE f.zone\n")
    save("loader", "$TTL 0\n@ SOA ns1 h 1 2 3 4 5\n@ NS ns1\nns1 A 192.0.2.1\n")
    save("loader", "@ IN SOA ns1 h (\n 1 ; serial\n 2 3 4 5 )\n\n; comment\n\n@ NS ns1\nbad A 1.2.3\n\n; after\n")
    save("loader", "@ SOA ns1 h 1 2 3 4 5\n@ NS ns1\nx TYPE65280 \\# 2 0102\ny HINFO \"cpu\" \"os\"\n"
                   "a\\.b A 192.0.2.1\nz\\000 A 192.0.2.2\nq \\\n A 192.0.2.3\nc CH A 192.0.2.4\n")
    save("loader", "@ SOA ns1 h 1 2 3 4 5\n$ORIGIN sub\nw A 192.0.2.1\n$ORIGIN f.test.\nv 1h A 192.0.2.1\n"
                   "u IN 30 A 192.0.2.1\nt A 300.1.1.1\n")
    save("loader", "\r\n@ SOA ns1 h 1 2 3 4 5\r\n@ NS ns1\r\nwww A 192.0.2.1 ; c\r\n  TXT \"x;y\"\n")
    # The zone-data trial (session 6): no $TTL (RFC 1035 §5.1: the last TTL written), TTLs above 2^31 - 1 and
    # beyond 32 bits, data below a DNAME and below a cut, an IPv4 address out of range, gdnsd's DYNA.
    save("loader", "@ 1h IN SOA ns1 h 1 2 3 4 5m\n@ NS ns1\nns1 1d A 192.0.2.1\ncaa CAA 0 issue \"ca.test\"\n"
                   "www A 192.0.2.2\n$TTL 120\nafter A 192.0.2.3\n")
    save("loader", "$TTL 3600\n@ SOA ns1 h 1 2 3 4 5\n@ NS ns1\nb1 2147483648 IN A 192.0.2.1\n"
                   "b2 4294967295 IN A 192.0.2.2\nb3 IN 4294967294 A 192.0.2.3\n$TTL 4294967295\nb4 A 192.0.2.4\n")
    save("loader", "@ SOA ns1 h 1 2 3 4 5\n@ NS ns1\nw 99999999999 IN A 192.0.2.1\n")
    save("loader", "$TTL 300\n@ SOA ns1 h 1 2 3 4 5\n@ NS ns1\nold DNAME new\nnested.old A 192.0.2.5\n"
                   "sub NS ns.sub\nns.sub A 192.0.2.53\nx.sub A 192.0.2.54\n")
    save("loader", "$TTL 300\n@ SOA ns1 h 1 2 3 4 5\n@ NS ns1\nmx1 IN A 192.0.2.300\n")
    save("loader", "$TTL 300\n@ SOA ns1 h 1 2 3 4 5\n@ NS ns1\nwww IN DYNA weighted!www\n")


def config():
    base = """[server]
listen = ["127.0.0.1:5353", "[::1]:5353"]
workers = 2
udp_payload_max = 1232
axfr_allow = ["127.0.0.1", "10.0.0.0/8"]

[control]
listen = "127.0.0.1:8053"
token_file = "control.token"

[[zone]]
name = "t.test."
file = "t.zone"
"""
    gslb = """
[defaults]
ttl = 30
answers = 1
fallback = "all"
policy = ["health", "session-threshold", "session-capacity", "flashback", "least-connections", "random"]
session_threshold = 90
factor = 0.25
max_age = 60

[check.web]
type = "http"
port = 80
path = "/health"
expect_status = [200, 204]
expect_body = "OK"
interval = 5
timeout = 2
rise = 2
fall = 3

[load]
decay = 2
history = 9
[load.metric.busy]
weight = 1
capacity = 1

[site.east]
preference = 128
[site.west]
[site.south]
preference = 0

[hostname."www.t.test."]
policy = ["health", "cpu", "preference", "weighted-round-robin"]
[[hostname."www.t.test.".service]]
address = "192.0.2.1"
site = "east"
weight = 3
check = "web"
[[hostname."www.t.test.".service]]
address = "192.0.2.2"
site = "west"
check_address = "127.0.0.1"
port = 8080
[[hostname."www.t.test.".service]]
address = "192.0.2.3"
site = "south"
capacity = 100

[hostname."dual.t.test."]
fallback = "192.0.2.99"
policy = ["best-server"]
[[hostname."dual.t.test.".service]]
address = "192.0.2.1"
site = "east"
[[hostname."dual.t.test.".service]]
address = "2001:db8::1"
site = "west"
"""
    save("config", base + gslb)
    save("config", base + '\n[[zone]]\nname = "u.test."\nfile = "u.zone"\n[site.a]\n'
                          '[hostname."v6.u.test."]\npolicy = ["load-factor"]\n'
                          '[[hostname."v6.u.test.".service]]\naddress = "2001:db8::9"\nsite = "a"\n'
                          '[[hostname."v6.u.test.".service]]\naddress = "2001:db8::10"\nsite = "a"\n')
    save("config", base)
    save("config", '[server]\nlisten = ["0.0.0.0:53"]\nidentity = "x"\nversion = "y"\nminimal_responses = false\n'
                   'tcp_idle_timeout = 3600\ntcp_max_connections = 1\n[[zone]]\nname = "t.test"\nfile = "t.zone"\n'
                   '[site.east]\n[hostname."www.t.test."]\nanswers = 64\nwieght = 1\n')
    save("config", base + '[[zone]]\nname = "t.test."\nfile = "t.zone"\n')
    save("config", base + '[hostname."txt.t.test."]\n[hostname."alias.t.test."]\n[hostname."sub.t.test."]\n')


def config_cluster():
    """[cluster] (doc/ns-set.md): members, self, health_quorum, and the refusals of each."""
    base = """[server]
listen = ["127.0.0.1:5353"]

[control]
listen = "127.0.0.1:8053"
token_file = "control.token"

[[zone]]
name = "t.test."
file = "t.zone"

[check.web]
type = "http"
port = 80
interval = 1
timeout = 0.5

[site.east]
[site.west]

[hostname."www.t.test."]
[[hostname."www.t.test.".service]]
address = "192.0.2.1"
site = "east"
check = "web"
[[hostname."www.t.test.".service]]
address = "192.0.2.2"
site = "west"
check = "web"
"""
    for cluster in ['members = ["http://127.0.0.1:8053", "http://127.0.0.2:8053"]\nhealth_quorum = 2\n',
                    'members = ["http://192.0.2.9:8053", "http://127.0.0.1:8053/", "http://[::1]:8053"]\n'
                    'self = "http://127.0.0.1:8053"\nhealth_quorum = 3\n',
                    'members = ["http://127.0.0.1:8053"]\n',
                    'members = ["127.0.0.1:8053", "https://127.0.0.2:8053", "http://ns1.example:8053"]\n',
                    'members = ["http://127.0.0.1:8053", "http://127.0.0.1:8053/"]\n',
                    'members = ["http://127.0.0.1:8053", "http://127.0.0.2:8053"]\nhealth_quorum = 3\n',
                    'members = ["http://127.0.0.2:8053", "http://127.0.0.3:8053"]\nself = "http://127.0.0.4:8053"\n',
                    'members = []\nhealth_quorum = 0\n']:
        save("config", base + "\n[cluster]\n" + cluster)


def api():
    tok = "Authorization: Bearer s3cret-token-0123"
    reqs = [
        "GET /v1/status\n\n",
        "GET /metrics\n\n",
        "HEAD /v1/status?x=1\n\n",
        f"POST /v1/sites/east/report\n{tok}\nContent-Type: application/json\n\n"
        '{"cpu": 35, "sessions_used": 200000, "sessions_max": 1000000, "loads": {"busy": 0.3, "mem": 2},'
        ' "services": {"192.0.2.1": {"connections": 900}}}',
        f"POST /v1/sites/west/report\n{tok}\n\n" '{"cpu": 101}',
        f"POST /v1/sites/west/report\n{tok}\n\n" '{"sessions_used": 5}',
        f"POST /v1/sites/west/report\n{tok}\n\n" '{"services": {"192.0.2.1": {"connections": 1}}}',
        f"POST /v1/sites/east/report\n{tok}\n\n" '{"cpu": 1, "loads": {"nope": 1}}',
        f"POST /v1/sites/east/report\n{tok}\n\n" '[1, 2]',
        f"POST /v1/sites/nowhere/report\n{tok}\n\n" '{}',
        f"POST /v1/sites/east/drain\n{tok}\n\n",
        f"POST /v1/sites/east/enable\n{tok}\n\n",
        f"POST /v1/sites/west/services/192.0.2.2/drain\n{tok}\n\n",
        f"POST /v1/sites/west/services/2001%3Adb8%3A%3A1/enable\n{tok}\n\n",
        f"POST /v1/sites/west/services/192.0.2.9/drain\n{tok}\n\n",
        "POST /v1/sites/east/drain\nAuthorization: Bearer wrong\n\n",
        "POST /v1/sites/east/drain\nauthorization: bearer s3cret-token-0123\n\n",
        "POST /v1/sites/east/drain\n\n",
        f"POST /v1/reload\n{tok}\n\n",
        f"GET /v1/reload\n{tok}\n\n",
        "PUT /v1/status\n\n",
        f"POST /v1/sites/%ff%fe/report\n{tok}\n\n" '{"cpu": 1}',
        f"POST /v1/sites/east/report\n{tok}\n\n" '{"cpu": "\xff"}',
    ]
    for r in reqs:
        save("api", r)
    save("api", "\n###\n".join(reqs[3:8] + [reqs[0]]))
    save("api", "\n###\n".join([reqs[10], reqs[15], reqs[18], reqs[18], reqs[11]]))


def http_response():
    resps = [
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nOK",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nOK\r\n3;x=y\r\nabc\r\n0\r\n\r\n",
        "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\n\r\ndown",
        "HTTP/1.0 204 No Content\r\n\r\n",
        "HTTP/1.1 200 OK\nConnection: close\n\nbody until the end OK",
        "HTTP/1.1 301 Moved\r\nLocation: /\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.1 200\r\nContent-Length: -1\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
        "HTTP/1.1 200 OK\r\ntransfer-encoding: Chunked\r\n\r\nzz\r\n",
        "HTTP/1.1 101 Switching Protocols\r\n\r\n",
        "SSH-2.0-OpenSSH_9.2\r\n",
        "",
    ]
    for r in resps:
        for flags in (0, 1, 2, 0xFC, 0x81):
            save("http_response", bytes([flags]) + r.encode())


def zonetext():
    z = ZONE.replace("$ORIGIN f.test.\n", "$ORIGIN f.test.\n", 1)
    for cmd in ["add www 300 A 192.0.2.7", "add new TXT \"hello world\"", "add @ MX 20 mx.example.",
                "add www A 192.0.2.1", "add x 1h30m IN AAAA 2001:db8::7", "add y CNAME www",
                "del www", "del www AAAA", "del www A 192.0.2.1", "del @ SOA", "del nothere",
                "del alias CNAME www.f.test.", "serial", "serial 2030010101", "list"]:
        save("zonetext", cmd + "\n" + z)
    save("zonetext", "del a\n$ORIGIN f.test.\n@ SOA ns1 h 1 2 3 4 5\n@ NS ns1\na A 192.0.2.1\n  TXT \"inherits\"\n"
                     "$ORIGIN sub.f.test.\nb A 192.0.2.2\n  AAAA 2001:db8::2\n")
    save("zonetext", "add z A 192.0.2.3\n@ SOA ns1 h (\n 7 ; serial\n 2 3 4 5 )\n$TTL 60\n@ NS ns1\n"
                     "$INCLUDE inc.zone\n; no line end at the end")
    save("zonetext", "serial\nf.test. 300 IN SOA ns1.f.test. h.f.test. 4294967295 2 3 4 5\nf.test. NS ns1.f.test.\n")


def tsig():
    import dns.rcode
    import dns.tsig
    import dns.tsigkeyring
    secret = "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA="
    ring = dns.tsigkeyring.from_text({"xfr.": ("hmac-sha256", secret), "md5.key.": (dns.tsig.HMAC_MD5, secret),
                                      "big.": ("hmac-sha512", secret), "nokey.": ("hmac-sha256", secret),
                                      "wrong.": ("hmac-sha1", secret)})
    for kn in ["xfr.", "md5.key.", "big.", "nokey.", "wrong."]:
        for qname, qtype, edns in [("f.test.", "SOA", False), ("f.test.", "AXFR", False), ("f.test.", "IXFR", True),
                                   ("www.f.test.", "A", True)]:
            q = dns.message.make_query(qname, qtype, use_edns=0 if edns else None)
            q.use_tsig(ring, keyname=kn, fudge=300)
            w = q.to_wire()
            save("tsig", w)
            # The same with a MAC cut to 10 octets, and with a byte of the MAC flipped.
            save("tsig", w[:-8] + bytes([w[-8] ^ 1]) + w[-7:])
    # A signed NOTIFY reply, a BADKEY complaint (unsigned), an unsigned reply, replies with other ids.
    for rcode, err, mac in [(0, 0, 32), (9, 17, 0), (9, 16, 0), (9, 18, 32), (0, 0, 0)]:
        hdr = struct.pack(">HHHHHH", 0x1234, 0xA000 | 0x0400 | rcode, 1, 0, 0, 1)
        question = b"\x01f\x04test\x00" + struct.pack(">HH", 6, 1)
        alg = b"\x0bhmac-sha256\x00"
        other = struct.pack(">Q", 1700000000)[2:] if err == 18 else b""
        rdata = alg + struct.pack(">Q", 1700000000)[2:] + struct.pack(">HH", 300, mac) + bytes(mac) + \
            struct.pack(">HHH", 0x1234, err, len(other)) + other
        rr = b"\x03xfr\x00" + struct.pack(">HHIH", 250, 255, 0, len(rdata)) + rdata
        save("notify_reply", hdr + question + rr)
        save("notify_reply", hdr[:10] + b"\x00\x00" + question)
    save("notify_reply", struct.pack(">HHHHHH", 0x4321, 0xA000, 0, 0, 0, 0))


def nets():
    # The text half (first byte even): nets_file lines as an operator writes them, and broken ones.
    files = ["10.0.0.0/8 corp\n10.1.0.0/16 corp-eu\n10.1.2.0/24 lab # the lab\n2001:db8::/32 v6\n",
             "# only a comment\n\n   \n198.51.100.0/24 eu\n198.51.100.128/25 eu-west\n0.0.0.0/0 world\n::/0 world6\n",
             "10.0.0.1 host\n2001:db8::1 host6\n192.0.2.0/24\n", "10.0.0.0/33 bad\n", "10.0.0.1/8 hostbits\n",
             "10.0.0.0/8 a\n10.0.0.0/8 b\n", "10.0.0.0/8 a extra\n", "not-an-address x\n", "1.2.3.4/0009 x\n"]
    for f in files:
        save("nets", b"\x00" + f.encode())
    # The table half (first byte odd): count, then per prefix a header (bit 0: IPv6; bit 7: keep host bits),
    # the address bytes (IPv4: 4; IPv6: 6 after 2001: and the last one) and the length; then clients.
    def v4(a, b, c, d, bits, keep=False):
        return bytes([0x80 if keep else 0, a, b, c, d, bits])

    def v6(six, last, bits):
        return bytes([1]) + bytes(six) + bytes([last, bits])
    tables = [
        [v4(10, 0, 0, 0, 8), v4(10, 1, 0, 0, 16), v4(10, 1, 2, 0, 24), v4(10, 1, 2, 128, 25)],
        [v4(0, 0, 0, 0, 0), v4(255, 255, 255, 255, 32), v4(128, 0, 0, 0, 1), v4(127, 255, 255, 255, 32)],
        [v4(192, 0, 2, 0, 24), v4(192, 0, 3, 0, 24), v4(192, 0, 2, 0, 23)],
        [v4(10, 0, 0, 1, 8, keep=True)],
        [v4(10, 0, 0, 0, 8), v4(10, 0, 0, 0, 8)],
        [v6([0x0d, 0xb8, 0, 0, 0, 0], 0, 32), v6([0x0d, 0xb8, 0, 1, 0, 0], 0, 48), v6([0x0d, 0xb8, 0, 1, 0, 0], 1, 128),
         v4(10, 0, 0, 0, 8)],
    ]
    clients = bytes([0, 10, 1, 2, 200, 0, 10, 1, 3, 1, 1, 0x0d, 0xb8, 0, 1, 0, 0, 1, 0, 11, 0, 0, 0])
    for t in tables:
        save("nets", b"\x01" + bytes([len(t)]) + b"".join(t) + clients)


def ixfr_journal():
    # zones/journal.hpp's file: magic, version, apex, serial, digest, changesets, SHA-256. Saved without the
    # SHA-256 (the target appends the right one) and, once, with it.
    def name(n):
        return b"".join(bytes([len(l)]) + l.encode() for l in n.split(".") if l) + b"\0"

    apex = name("j.test.")

    def rec(owner, rtype, ttl, rdata):
        return owner + struct.pack(">HIH", rtype, ttl, len(rdata)) + rdata

    def soa(serial):
        return rec(apex, 6, 300, name("ns1.j.test.") + name("h.j.test.") + struct.pack(">IIIII", serial, 3600, 600,
                                                                                       86400, 60))

    def cs(frm, to, removed, added):
        body = soa(frm) + b"".join(removed) + soa(to) + b"".join(added)
        return struct.pack(">IIIII", frm, to, 1 + len(removed), 1 + len(added), len(body)) + body

    a = rec(name("www.j.test."), 1, 300, bytes([192, 0, 2, 1]))
    b = rec(name("www.j.test."), 1, 300, bytes([192, 0, 2, 2]))
    t = rec(name("t.j.test."), 16, 60, b"\x05hello")
    sig = rec(name("www.j.test."), 46, 300, bytes(range(40)))
    chains = [
        (2, [cs(1, 2, [], [a])]),
        (4, [cs(1, 2, [], [a]), cs(2, 3, [a], [b, t]), cs(3, 4, [t], [sig])]),
        (7, []),
        (4294967295, [cs(4294967290, 4294967295, [b], [a])]),
    ]
    for serial, entries in chains:
        head = b"GSLBIXFR" + struct.pack(">H", 1) + bytes([len(apex)]) + apex + struct.pack(">I", serial) + bytes(32)
        body = head + struct.pack(">I", len(entries)) + b"".join(entries)
        save("ixfr_journal", body)
        if serial == 4:
            save("ixfr_journal", body + hashlib.sha256(body).digest())


answer()
loader()
config()
config_cluster()
api()
http_response()
zonetext()
tsig()
nets()
ixfr_journal()
