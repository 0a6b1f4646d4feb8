"""Deterministic zone and dnsperf query-file generator for tools/bench (Python 3 stdlib only).

The zone `bench.test.` (one file, valid for gslbd, NSD and Knot; gdnsd gets the same file with its GSLB
names written as DYNA records):

  apex       SOA, NS ns1 / ns2, MX 10 mail
  ns1, ns2, mail   A
  www, www-default  A 192.0.2.1 .2 .3 — the GSLB hostnames (gslbd: services; NSD/Knot: plain RRset, of one
                   record with plain_records=1, the size of a one-answer GSLB reply; gdnsd: `DYNA weighted!www`)
  per name i (h<i>), by i % 10:
    0..6  A 10.x.y.z          (1 record)
    3     + AAAA 2001:db8::hi:lo  (i % 10 == 3)
    5     + MX 10 h<i - 5>    (i % 10 == 5)
    6     + TXT "bench i"     (i % 10 == 6)
    7..9  CNAME h<i - i % 10>  (a name with an A record)
  -> 13 records per 10 names; names_for_records(R) gives the count that yields about R records.

`extra_lines` lets callers add records (the 500-service config adds svc<k> A RRsets).

Query files (dnsperf text format "name type"), drawn with a fixed seed:
  static: 70 % hits (A of A names, AAAA of the AAAA names, MX, TXT), 10 % NXDOMAIN, 10 % NODATA (AAAA of an
          A-only name), 10 % CNAME (A of a CNAME name)
  gslb:   "www.bench.test A" only
"""

import random

ZONE = "bench.test"
GSLB_ADDRS = ["192.0.2.1", "192.0.2.2", "192.0.2.3"]
SOA = "@ 300 IN SOA ns1 hostmaster 2024010101 7200 3600 1209600 300"


def names_for_records(records):
    return max(10, records * 10 // 13)


def _a(i):
    return f"10.{(i >> 16) & 255}.{(i >> 8) & 255}.{i & 255}"


def write_zone(path, names, gdnsd=False, gslb_names=("www", "www-default"), extra_lines=(), plain_records=None):
    """Writes the zone; returns (record count, name of the last owner written). plain_records: write only the
    first N addresses of each GSLB name (for NSD and Knot, which answer the whole RRset: one record is the size
    of gslbd's and gdnsd's one-answer GSLB reply)."""
    count = 0
    with open(path, "w") as f:
        w = f.write
        w(f"$ORIGIN {ZONE}.\n$TTL 3600\n{SOA}\n@ NS ns1\n@ NS ns2\n@ MX 10 mail\n")
        w("ns1 A 127.0.0.1\nns2 A 127.0.0.2\nmail A 127.0.0.3\n")
        count += 7
        for g in gslb_names:
            if gdnsd:
                w(f"{g} 30 DYNA weighted!{g}\n")
                count += 1
            else:
                for a in GSLB_ADDRS[:plain_records]:
                    w(f"{g} 30 A {a}\n")
                    count += 1
        for line in extra_lines:
            w(line + "\n")
            count += 1
        buf = []
        for i in range(names):
            r = i % 10
            if r <= 6:
                buf.append(f"h{i} A {_a(i)}\n")
                count += 1
                if r == 3:
                    buf.append(f"h{i} AAAA 2001:db8::{i >> 16:x}:{i & 0xffff:x}\n")
                    count += 1
                elif r == 5:
                    buf.append(f"h{i} MX 10 h{i - 5}\n")
                    count += 1
                elif r == 6:
                    buf.append(f'h{i} TXT "bench {i}"\n')
                    count += 1
            else:
                buf.append(f"h{i} CNAME h{i - r}\n")
                count += 1
            if len(buf) >= 10000:
                w("".join(buf))
                buf = []
        w("".join(buf))
    last = f"h{names - 1}.{ZONE}"
    return count, last


def last_a_name(names):
    """A name near the end of the zone that has an A record (for load-time polling)."""
    i = names - 1
    while i % 10 > 6:
        i -= 1
    return f"h{i}.{ZONE}"


def write_static_queries(path, names, count=100000, seed=1):
    rnd = random.Random(seed)
    lines = []
    for _ in range(count):
        p = rnd.random()
        if p < 0.70:
            i = rnd.randrange(0, names)
            while i % 10 > 6:  # CNAME names are the CNAME share below
                i = rnd.randrange(0, names)
            r = i % 10
            q = rnd.random()
            if r == 3 and q < 0.5:
                lines.append(f"h{i}.{ZONE} AAAA")
            elif r == 5 and q < 0.5:
                lines.append(f"h{i}.{ZONE} MX")
            elif r == 6 and q < 0.5:
                lines.append(f"h{i}.{ZONE} TXT")
            else:
                lines.append(f"h{i}.{ZONE} A")
        elif p < 0.80:
            lines.append(f"nx{rnd.randrange(0, 10 * names)}.{ZONE} A")
        elif p < 0.90:
            i = rnd.randrange(0, names)
            while i % 10 > 6 or i % 10 == 3:
                i = (i + 1) % names
            lines.append(f"h{i}.{ZONE} AAAA")
        else:
            i = rnd.randrange(0, names)
            i = i - i % 10 + 7 + rnd.randrange(0, 3)
            if i >= names:
                i = 7
            lines.append(f"h{i}.{ZONE} A")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def write_gslb_queries(path, name="www", count=1000):
    with open(path, "w") as f:
        f.write(f"{name}.{ZONE} A\n" * count)


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description="write the bench zone and query files")
    ap.add_argument("--names", type=int, default=1000)
    ap.add_argument("--zone", default="bench.test.zone")
    ap.add_argument("--gdnsd", action="store_true", help="write the GSLB names as gdnsd DYNA records")
    ap.add_argument("--static-queries")
    ap.add_argument("--gslb-queries")
    a = ap.parse_args()
    n, last = write_zone(a.zone, a.names, gdnsd=a.gdnsd)
    print(f"{a.zone}: {n} records, last name {last}")
    if a.static_queries:
        write_static_queries(a.static_queries, a.names)
    if a.gslb_queries:
        write_gslb_queries(a.gslb_queries)
