"""Config writers for the servers tools/bench runs (gslbd, NSD, Knot, gdnsd), each in its own directory on a
loopback port, with its own run/state files: nothing under /etc, /run or /var is touched.
"""

import os

from genzone import GSLB_ADDRS, ZONE


def _w(path, text):
    with open(path, "w") as f:
        f.write(text)


def gslbd(d, port, zonefile, workers=1, extra="", hostnames=True, addr="127.0.0.1", xdp=None, sites=None):
    """gslbd.toml: the bench zone, three sites, `www` (health, weighted-random: gdnsd's weighted plugin) and
    `www-default` (the default policy) over the zone's three A records. sites: {name: [lines of its table]}
    instead of the empty sites a, b, c (tools/lab gives each its `sources`)."""
    t = [
        "[server]",
        f'listen = ["{addr}:{port}"]',
        f"workers = {workers}",
    ] + ([f'xdp = ["{xdp}"]'] if xdp else []) + [
        "",
        "[[zone]]",
        f'name = "{ZONE}."',
        f'file = "{zonefile}"',
    ]
    for name, lines in (sites or {"a": [], "b": [], "c": []}).items():
        t += ["", f"[site.{name}]"] + list(lines)
    if hostnames:
        for name, policy in (("www", '["health", "weighted-random"]'), ("www-default", None)):
            t += ["", f'[hostname."{name}.{ZONE}."]']
            if policy:
                t.append(f"policy = {policy}")
            for addr, site in zip(GSLB_ADDRS, "abc"):
                t += [f'[[hostname."{name}.{ZONE}.".service]]', f'address = "{addr}"', f'site = "{site}"',
                      "weight = 1"]
    path = os.path.join(d, "gslbd.toml")
    _w(path, "\n".join(t) + "\n" + extra)
    return path


def nsd(d, port, zonefile):
    conf = f"""server:
    port: {port}
    ip-address: 127.0.0.1
    username: ""
    database: ""
    chroot: ""
    pidfile: "{d}/nsd.pid"
    xfrdfile: "{d}/xfrd.state"
    zonelistfile: "{d}/zone.list"
    zonesdir: "{d}"
    server-count: 1
    verbosity: 0
    # gslbd answers minimally by default (README: minimal_responses = true): the answer's RRset and the
    # addresses of MX/SRV/NS targets, no NS RRset in the authority section of a positive answer. NSD's default
    # adds that NS RRset and its glue to every positive answer (115 octets for an A that is 47 from gslbd): the
    # server then writes twice the octets per query, and "CPU per query vs NSD" flattered gslbd by ~10 %.
    minimal-responses: yes
    # NSD's response rate limiting (200 qps per source by default) would drop most benchmark queries
    rrl-ratelimit: 0
    rrl-whitelist-ratelimit: 0
remote-control:
    control-enable: no
zone:
    name: {ZONE}
    zonefile: "{zonefile}"
"""
    path = os.path.join(d, "nsd.conf")
    _w(path, conf)
    return ["nsd", "-d", "-c", path]


def knot(d, port, zonefile, addr="127.0.0.1", xdp=None):
    """Knot answers as gslbd does with its defaults (checked by tools/bench's answer-size probe): no NS RRset in
    the authority section of positive answers (Knot has no minimal-responses switch: it never adds one), the
    addresses of NS/MX/SRV targets in the additional section, in-zone CNAMEs followed."""
    os.makedirs(os.path.join(d, "db"), exist_ok=True)
    user = "    user: root:root\n" if os.geteuid() == 0 else ""
    # Knot's XDP mode (Debian's knotd is linked with libxdp): its own program on the interface, one AF_XDP
    # socket per queue, handled by the UDP workers; the sockets of `listen` stay (TCP, other interfaces).
    xdp_conf = f"\nxdp:\n    listen: {xdp}@{port}\n" if xdp else ""
    conf = f"""server:
    rundir: "{d}"
{user}    listen: {addr}@{port}
    udp-workers: 1
    tcp-workers: 1
    background-workers: 1
{xdp_conf}
log:
  - target: stderr
    any: warning

database:
    storage: "{d}/db"

template:
  - id: default
    storage: "{d}"
    zonefile-sync: -1
    zonefile-load: whole
    journal-content: none

zone:
  - domain: {ZONE}
    file: "{zonefile}"
"""
    path = os.path.join(d, "knot.conf")
    _w(path, conf)
    return ["knotd", "-c", path]


def gdnsd(d, port, zone_text_path, resources=None, addr="127.0.0.1", service_types="", resource_opts=None):
    """gdnsd 3.x: a config dir with `config` and `zones/`; `www` and `www-default` are `DYNA weighted!…`
    over the same three addresses, weight 1 each, monitored `up` (no checks), one answer (multi = false).
    resources: {name: [address or (address, weight), …]} more `weighted` resources; service_types: the text
    of a top-level `service_types => { … }` block's body; resource_opts: {name: lines for that resource's
    block} (`service_types = NAME`, `up_thresh = 0.1`).

    gdnsd 3 answers with less than gslbd, NSD and Knot, and has no option to do otherwise: it adds no
    additional data for MX/SRV/NS targets and does not follow in-zone CNAMEs (the answer is the CNAME alone).
    tools/bench's answer-size probe prints where its answers are smaller; GSLB answers (one A, TTL 30) are
    the same size as gslbd's."""
    for sub in ("zones", "run", "state"):
        os.makedirs(os.path.join(d, sub), exist_ok=True)
    res = "\n".join(f"      {l} = [ {a}, 1 ]" for l, a in zip("abc", GSLB_ADDRS))
    more = ""
    for name, addrs in (resources or {}).items():
        more += f"    {name} => {{\n" + (resource_opts or {}).get(name, "")
        for j, a in enumerate(addrs):
            a, w = a if isinstance(a, tuple) else (a, 1)
            more += f"      s{j} = [ {a}, {w} ]\n"
        more += "    }\n"
    types = f"service_types => {{\n{service_types}}}\n" if service_types else ""
    conf = f"""options => {{
  listen => [ "{addr}:{port}" ]
  run_dir = "{d}/run"
  state_dir = "{d}/state"
  udp_threads = 1
  tcp_threads = 1
}}
{types}plugins => {{
  weighted => {{
    multi = false
    www => {{
{res}
    }}
    www-default => {{
{res}
    }}
{more}  }}
}}
"""
    _w(os.path.join(d, "config"), conf)
    os.replace(zone_text_path, os.path.join(d, "zones", ZONE))
    return ["gdnsd", "-c", d, "start"]
