"""A lane's row of the lab's table, computed from its sessions' records after the run (exact: a sweep over the
sessions' admissions and ends and the scenario's capacity changes, no sampling except the per-second series of
the oscillation column). Every figure covers lab time [warm-up, duration) unless it says otherwise.
"""

import bisect
import statistics

from scenario import capacity_at, zipf_shares

OVER = 0.95


def _timeline(sc, caps, records):
    """Sorted change points [(t, site, delta)] of the lane's sessions in flight; a session at a site that fails
    ends when the failure begins (its site is gone)."""
    ev = []
    for _, _, site, ok, t_in, end, *_ in records:
        if not ok:
            continue
        for s, a, _ in sc.failures:
            if s == site and t_in < a < end:
                end = a
        ev.append((t_in, site, 1))
        ev.append((end, site, -1))
    ev.sort()
    return ev


def _sweep(sc, caps, ev, t_from, t_to, samples, per_site=None):
    """(seconds with some site above 95 %, its intervals, the top utilisation at each sample time). A site
    failing its health check counts as no site (its capacity is 0 and it has no sessions). per_site: a list
    that gets every site's utilisation (percent) at each sample time."""
    n = len(caps)
    used = [0] * n
    points = sorted(set([t_from, t_to] + [a for a, _, _ in sc.capacity_changes] +
                        [x for _, a, b in sc.failures for x in (a, b)]))
    marks = sorted([(t, 0, None, 0) for t in points if t_from <= t <= t_to] +
                   [(t, 1, s, d) for t, s, d in ev] + [(t, 2, None, 0) for t in samples])
    over_s, spans, top, start = 0.0, [], [], None
    prev = None

    def util(t):
        return max((used[i] / c if (c := capacity_at(sc, caps, i, t)) > 0 else 0.0) for i in range(n))

    for t, kind, site, d in marks:
        if prev is not None and t > prev and t_from <= prev:
            seg_from, seg_to = max(prev, t_from), min(t, t_to)
            if seg_to > seg_from and util(seg_from) > OVER:
                over_s += seg_to - seg_from
                if start is None:
                    start = seg_from
            elif seg_to > seg_from and start is not None:
                spans.append((start, seg_from))
                start = None
        if kind == 1:
            used[site] += d
        elif kind == 2:  # after the changes at the same instant: the state from t on
            top.append(util(t))
            if per_site is not None:
                per_site.append([round(100.0 * used[i] / c, 1) if (c := capacity_at(sc, caps, i, t)) else 0.0
                                 for i in range(n)])
        prev = t
        if t > t_to:
            break
    if start is not None:
        spans.append((start, t_to))
    return over_s, spans, top


def _herd(queries, samples, shares, n):
    """At each sample time, the largest share of clients (by their resolvers' Zipf shares) whose resolvers hold
    an answer naming the same site, among the clients whose resolvers hold one: 1.0 when every cached answer
    names one site; answers in proportion to capacity give about the largest site's capacity share."""
    held = {}
    for _, r, at, ttl, site in queries:
        if at is not None and site is not None and ttl:
            held.setdefault(r, []).append((at, at + ttl, site))
    starts = {r: [x[0] for x in iv] for r, iv in held.items()}
    out = []
    for t in samples:
        by_site = [0.0] * n
        for r, iv in held.items():
            i = bisect.bisect_right(starts[r], t) - 1
            if i >= 0 and iv[i][1] > t:
                by_site[iv[i][2]] += shares[r]
        if sum(by_site) > 0:
            out.append(max(by_site) / sum(by_site))
    return out


def _recovery(bad, e, end, hold):
    """Seconds from e until refusals stopped and no site was above 95 % any more: the end of the last bad moment
    in [e, end), when nothing bad followed for at least `hold` s before `end`; None (never) otherwise. bad:
    [(from, to)] intervals above 95 % and refusal instants (t, t). 0 when nothing bad happened after e."""
    last = max((b for a, b in bad if b >= e and a < end), default=e)
    last = min(max(last, e), end)
    return last - e if end - last >= hold else None


def _site_back(sc, caps, ev, site, e, end, hold):
    """Seconds from e until `site`'s sessions are back at or under 95 % of its capacity and stay there for
    `hold` s (0 when they are from e on); None when that does not happen before `end`. ev: _timeline's change
    points."""
    used, spans, start = 0, [], None
    changes = [(at, s, 0) for at, s, _ in sc.capacity_changes if s == site]   # the capacity's own changes
    for t, s, d in sorted(ev + changes):
        if t >= end:
            break
        if s != site:
            continue
        used += d
        now_over = used > OVER * capacity_at(sc, caps, site, t)
        if now_over and start is None:
            start = t
        elif not now_over and start is not None:
            spans.append((start, t))
            start = None
    if start is not None:
        spans.append((start, end))
    spans = [(a, b) for a, b in spans if b > e]
    for t0 in [e] + [b for _, b in spans]:
        if t0 + hold > end:
            return None
        if not any(a < t0 + hold and b > t0 for a, b in spans):
            return t0 - e
    return None


def _site_osc(per_site, caps):
    """Each site's own oscillation (the mean absolute change of its utilisation per sample, percentage points),
    weighted by capacity. The top utilisation's (osc pp/s) also moves when the top changes from one site to
    another: sites balanced to the same utilisation swap the top often, and the maximum of several equally
    noisy series moves more than any one of them, so balance alone raises it."""
    if len(per_site) < 2:
        return 0.0
    steps = [statistics.fmean(abs(b[i] - a[i]) for a, b in zip(per_site, per_site[1:])) for i in range(len(caps))]
    return sum(x * c for x, c in zip(steps, caps)) / sum(caps)


def row(lane, sc, caps, n_resolvers, o, detect=None, stream=None, first_failure=None):
    """The lane's figures (a dict; None where a figure does not apply). stream: the sessions, for the sites the
    largest resolver's sessions went to. detect, first_failure: health-failure, when the lane's checker saw the
    fall-th and the first failed check of the failed site."""
    w, d = sc.warmup, sc.duration
    ttl = getattr(lane, "ttl", None) or o.ttl
    rec = [r for r in lane.records if w <= r[1] < d]
    arrivals = len(rec)
    refused = [r for r in rec if not r[3]]
    ev = _timeline(sc, caps, lane.records)
    samples = [w + k * o.sample for k in range(int((d - w) / o.sample) + 1) if w + k * o.sample < d]
    per_site = []
    over_s, spans, top = _sweep(sc, caps, ev, w, d, samples, per_site)
    steps = [abs(b - a) for a, b in zip(top, top[1:])]
    # Share error: each site's share of the sessions sent to it against its share of the capacity at each
    # session's arrival (the failed site's capacity is 0 while it fails), half the sum of the differences.
    sent = [r for r in rec if r[2] is not None]
    share, expect = [0.0] * len(caps), [0.0] * len(caps)
    for r in sent:
        share[r[2]] += 1
        now = [capacity_at(sc, caps, i, r[1]) for i in range(len(caps))]
        tot = sum(now) or 1
        for i, c in enumerate(now):
            expect[i] += c / tot
    if sent:
        share = [x / len(sent) for x in share]
        expect = [x / len(sent) for x in expect]
    out = {
        "policy": lane.label, "dns": lane.dns, "arrivals": arrivals, "accepted": arrivals - len(refused),
        "refused": len(refused), "refused_pct": 100.0 * len(refused) / arrivals if arrivals else 0.0,
        "unresolved": sum(1 for r in rec if r[2] is None),
        "over95_pct": 100.0 * over_s / (d - w), "share_pct": [100 * x for x in share],
        "capacity_share_pct": [100 * x for x in expect],
        "share_error_pp": 50.0 * sum(abs(a - b) for a, b in zip(share, expect)),
        "osc_step_pp": 100.0 * statistics.fmean(steps) if steps else 0.0,
        "osc_std_pp": 100.0 * statistics.pstdev(top) if len(top) > 1 else 0.0,
        "osc_site_pp": _site_osc(per_site, caps),
        "top_util_mean_pct": 100.0 * statistics.fmean(top) if top else 0.0,
        "all_arrivals": len(lane.records),
        "all_accepted": sum(1 for r in lane.records if r[3]),
        "top_util_series_pct": [round(100 * x, 1) for x in top],
        "site_util_series_pct": per_site,
    }
    herd = _herd(lane.queries, samples, zipf_shares(n_resolvers, o.zipf), len(caps)) if lane.dns else []
    out["herd_pct"] = 100.0 * statistics.fmean(herd) if herd else None
    out["herd_max_pct"] = 100.0 * max(herd) if herd else None
    if stream is not None:
        # The largest resolver (the first: Zipf shares decrease) must not fill a small site for a whole TTL.
        big = [r[2] for r in sent if stream[r[0]].resolver == 0]
        out["largest_resolver_share_pct"] = [100.0 * big.count(i) / len(big) if big else 0.0
                                             for i in range(len(caps))]
    q = [x for x in lane.queries if w <= x[0] < d]
    out["queries_per_resolver_min"] = len(q) / n_resolvers / ((d - w) / 60.0) if lane.dns else None
    ttls = [x[3] for x in q if x[3] is not None]
    out["mean_ttl_s"] = statistics.fmean(ttls) if ttls else None
    out["dns_timeouts"] = sum(1 for x in q if x[2] is None) if lane.dns else None
    # After the event: from when the lane could have adapted (see tools/lab --help) to the end of its phase.
    out["recovery_s"] = out["refused_after_pct"] = out["detect_s"] = out["last_to_failed_s"] = None
    out["last_to_failed_known_s"] = out["failed_floor_s"] = out["answered_to_failed_after_detect"] = None
    out["site_back_s"] = out["refused_after_known_pct"] = None
    if sc.event is not None:
        e, end = sc.event, sc.event_end
        after = e
        if sc.failures:
            site = sc.failures[0][0]
            det = detect if detect is not None else e
            out["detect_s"] = det - e
            late = [r for r in lane.records if r[2] == site and det <= r[1] < end]
            out["sent_to_failed_after_detect"] = len(late)
            out["last_to_failed_s"] = (max(r[1] for r in late) - det) if late else 0.0
            if lane.dns and first_failure is not None:
                # What the server could know: answers given from its first failed check on (those given before
                # carry the TTL of a healthy site, out of any server's hands once cached).
                known = [r[1] for r in late if r[6] is not None and r[6] >= first_failure]
                out["last_to_failed_known_s"] = (max(known) - det) if known else 0.0
                out["answered_to_failed_after_detect"] = sum(1 for r in late if r[6] is not None and r[6] >= det)
                # An answer given just before the first failed check, with the full TTL, can send sessions
                # until first + TTL: no server that cannot see the failure sooner does better than this.
                out["failed_floor_s"] = max(0.0, first_failure + ttl - det)
            after = det + ttl / 2
        elif sc.capacity_changes:
            after = e + ttl + o.settle
            out["site_back_s"] = _site_back(sc, caps, ev, sc.capacity_changes[0][1], e, end, o.hold)
        ra = [r for r in lane.records if after <= r[1] < end]
        out["refused_after_pct"] = 100.0 * sum(1 for r in ra if not r[3]) / len(ra) if ra else 0.0
        if sc.failures and lane.dns and first_failure is not None:
            # The same without the sessions that answers given before the first failed check sent to the failed
            # site: what the server's answers decided.
            site = sc.failures[0][0]
            rk = [r for r in ra if not (r[2] == site and (r[6] is None or r[6] < first_failure))]
            out["refused_after_known_pct"] = 100.0 * sum(1 for r in rk if not r[3]) / len(rk) if rk else 0.0
        _, spans_e, _ = _sweep(sc, caps, ev, e, end, []) if sc.recovery_over95 else (0, [], [])
        bad = spans_e + [(r[1], r[1]) for r in lane.records if not r[3] and e <= r[1] < end]
        out["recovery_s"] = _recovery(bad, e, end, o.hold)
    return out


COLUMNS = [  # (key, header, format)
    ("policy", "policy", "{}"),
    ("refused_pct", "refused %", "{:.2f}"),
    ("refused_after_pct", "after %", "{:.2f}"),
    ("refused_after_known_pct", "after known %", "{:.2f}"),
    ("over95_pct", ">95% time %", "{:.1f}"),
    ("share_error_pp", "share err pp", "{:.1f}"),
    ("osc_step_pp", "osc pp/s", "{:.1f}"),
    ("osc_ratio", "osc/static", "{:.2f}"),
    ("osc_site_ratio", "site osc/static", "{:.2f}"),
    ("recovery_s", "recovery s", "{:.1f}"),
    ("herd_pct", "herd %", "{:.0f}"),
    ("queries_per_resolver_min", "q/res/min", "{:.1f}"),
    ("mean_ttl_s", "mean TTL s", "{:.1f}"),
    ("site_back_s", "site <95% s", "{:.1f}"),
    ("detect_s", "detect s", "{:.1f}"),
    ("last_to_failed_s", "last->failed s", "{:.1f}"),
    ("failed_floor_s", "floor s", "{:.1f}"),
    ("last_to_failed_known_s", "known->failed s", "{:.1f}"),
    ("answered_to_failed_after_detect", "answered after det", "{:.0f}"),
]
FAILURE_ONLY = ("refused_after_known_pct", "detect_s", "last_to_failed_s", "failed_floor_s", "last_to_failed_known_s",
                "answered_to_failed_after_detect")


def table(rows, sc):
    """The scenario's table as Markdown: columns that apply to it, '-' where a figure does not apply to a row,
    `never` for a recovery that did not come (see row()); over several runs the mean and (min-max)."""
    static = next((r for r in rows if r["policy"] == "capacity-random (no DNS)"), None)
    for r in rows:
        r["osc_ratio"] = (r["osc_step_pp"] / static["osc_step_pp"]) if static and static["osc_step_pp"] else None
        r["osc_site_ratio"] = ((r["osc_site_pp"] / static["osc_site_pp"]) if static and static.get("osc_site_pp")
                               else None)
    cols = [c for c in COLUMNS if not (sc.event is None and c[0] in ("refused_after_pct", "recovery_s")) and
            not (not sc.failures and c[0] in FAILURE_ONLY) and not (not sc.capacity_changes and
                                                                   c[0] == "site_back_s")]
    lines = ["| " + " | ".join(c[1] for c in cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        cells = []
        for key, _, f in cols:
            v = r.get(key)
            if key in ("recovery_s", "site_back_s") and v is None:
                cells.append("never")
            elif v is not None and key in r.get("spread", {}):
                lo, hi = r["spread"][key]
                cells.append(f.format(v) + f" ({f.format(lo)}-{f.format(hi)})")
            else:
                cells.append("-" if v is None else f.format(v))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def targets(sc, rows, o):
    """Checks each DNS row against the balance the project aims for (information: nothing fails on them);
    sets row["targets"] and returns one line per row. The queries' reference is the row with the longest mean
    TTL (a fixed TTL)."""
    dns = [r for r in rows if r["dns"]]
    ref = max(dns, key=lambda r: r["mean_ttl_s"] or 0, default=None)
    lines = []
    for r in dns:
        t = []
        if sc.event is None:
            t += [("refused <= 0.5 %", r["refused_pct"], r["refused_pct"] <= 0.5),
                  ("> 95 % <= 5 % of the time", r["over95_pct"], r["over95_pct"] <= 5)]
        elif sc.capacity_changes:
            t += [("refused after <= 0.5 %", r["refused_after_pct"], r["refused_after_pct"] <= 0.5),
                  ("dropped site under 95 % within 2 x TTL", r["site_back_s"], r["site_back_s"] is not None and
                   r["site_back_s"] <= 2 * o.ttl)]
        elif sc.failures:
            t += [("last to the failed site <= detection + TTL/2", r["last_to_failed_s"],
                   r["last_to_failed_s"] is not None and r["last_to_failed_s"] <= o.ttl / 2),
                  ("the same for answers given from the first failed check on", r["last_to_failed_known_s"],
                   r["last_to_failed_known_s"] is not None and r["last_to_failed_known_s"] <= o.ttl / 2),
                  ("refused after <= 0.5 %", r["refused_after_pct"], r["refused_after_pct"] <= 0.5),
                  ("the same for answers given from the first failed check on", r["refused_after_known_pct"],
                   r["refused_after_known_pct"] is not None and r["refused_after_known_pct"] <= 0.5)]
        else:
            t += [("refused after <= 1.5 %", r["refused_after_pct"], r["refused_after_pct"] <= 1.5)]
        if r.get("osc_ratio") is not None:
            t.append(("oscillation <= 1.5 x static", r["osc_ratio"], r["osc_ratio"] <= 1.5))
        if ref is not None and ref["queries_per_resolver_min"]:
            q = r["queries_per_resolver_min"] / ref["queries_per_resolver_min"]
            t.append(("queries <= 2 x a fixed TTL's", q, q <= 2))
        r["targets"] = {name: ok for name, _, ok in t}
        met = sum(ok for _, _, ok in t)
        lines.append(f"  targets, {r['policy']}: {met} of {len(t)} met; " + ", ".join(
            f"{name} {'yes' if ok else 'NO'} ({'-' if v is None else format(v, '.2f')})" for name, v, ok in t))
    return lines


WORST = {"recovery_s", "last_to_failed_s", "last_to_failed_known_s", "site_back_s", "failed_floor_s",
         "answered_to_failed_after_detect"}   # combined over runs as the worst run (None: never recovered)
SPREAD = ("refused_pct", "refused_after_pct", "refused_after_known_pct", "over95_pct")


def combine(runs):
    """Rows of the same lanes over several runs (other seeds): means, the worst recovery and last session to a
    failed site, and the min-max of the refusal figures in row["spread"]."""
    out = []
    for rows in zip(*runs):
        c = {"policy": rows[0]["policy"], "dns": rows[0]["dns"], "runs": len(rows), "spread": {}}
        for k, v in rows[0].items():
            vals = [r.get(k) for r in rows]
            if k in c or isinstance(v, bool) or k == "targets":
                continue
            if k in WORST:
                c[k] = None if any(x is None for x in vals) else max(vals)
            elif isinstance(v, (int, float)) and all(isinstance(x, (int, float)) for x in vals):
                c[k] = sum(vals) / len(vals)
                if k in SPREAD:
                    c["spread"][k] = [min(vals), max(vals)]
            elif k == "share_pct" or k == "capacity_share_pct":
                c[k] = [sum(x) / len(x) for x in zip(*vals)]
            elif isinstance(v, list):
                continue   # per-run series: in the runs
            else:
                c[k] = None if any(x is None for x in vals) else vals[0]
        out.append(c)
    return out
