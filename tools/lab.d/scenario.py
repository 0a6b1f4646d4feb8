"""The lab's scenarios and its one seeded session stream (Python 3 stdlib only).

A scenario is a timeline in lab seconds (real seconds: the lab compresses time, TTL 5 s standing for 30 s):
the offered load (a fraction of the sites' nominal total capacity) piecewise constant, capacity changes, and
health failures. The stream is drawn once per scenario from the seed and replayed to every policy, so policies
are compared on the same sessions: Poisson arrivals at rate load x capacity / mean duration (Little's law:
that many sessions in flight on average), exponential durations, each arrival from one caching resolver chosen
by the resolvers' Zipf client shares.
"""

import bisect
import random
from dataclasses import dataclass, field


@dataclass
class Scenario:
    name: str
    duration: float
    warmup: float
    loads: list                    # [(from_s, fraction of nominal capacity)], sorted, first at 0
    capacity_changes: list = field(default_factory=list)  # [(at_s, site, sessions)]
    failures: list = field(default_factory=list)          # [(site, from_s, to_s)]: health fails, sessions refused
    event: float = None            # what recovery is measured from (None: steady)
    event_end: float = None        # end of the recovery window
    recovery_over95: bool = True   # recovery waits for no site above 95 % too (not after a step to 90 %:
                                   # even the least-utilised bound has sites above 95 % then)
    what: str = ""


def build(name, a):
    """The named scenario with the command line's parameters `a` (see tools/lab --help)."""
    d, w, e = a.duration, a.warmup, a.event
    if name == "steady":
        return Scenario(name, d, w, [(0, a.load)], what=f"{a.load:.0%} of capacity offered")
    if name == "capacity-drop":
        top = max(range(len(a.capacities)), key=lambda i: a.capacities[i])
        left = round(a.capacities[top] * (1 - a.drop))
        return Scenario(name, d, w, [(0, a.drop_load)], capacity_changes=[(e, top, left)], event=e, event_end=d,
                        what=f"{a.drop_load:.0%} offered; site {top + 1} drops {a.capacities[top]} -> {left} "
                             f"sessions at {e:g} s")
    if name == "load-step":
        return Scenario(name, d, w, [(0, a.step_from), (e, a.step_to)], event=e, event_end=d,
                        recovery_over95=a.step_to < 0.85,
                        what=f"{a.step_from:.0%} -> {a.step_to:.0%} offered at {e:g} s")
    if name == "health-failure":
        top = max(range(len(a.capacities)), key=lambda i: a.capacities[i])
        return Scenario(name, d, w, [(0, a.fail_load)], failures=[(top, e, e + a.fail_for)], event=e,
                        event_end=e + a.fail_for,
                        what=f"{a.fail_load:.0%} offered; site {top + 1} fails its health check (and refuses "
                             f"sessions) from {e:g} s to {e + a.fail_for:g} s")
    raise ValueError(f"unknown scenario {name!r}")


NAMES = ("steady", "capacity-drop", "load-step", "health-failure")


def zipf_shares(n, s):
    """Client shares of n resolvers, share_i proportional to 1 / i**s (i = 1..n). n = 40, s = 1: the largest
    carries 23.4 %, the smallest 0.6 %."""
    raw = [1.0 / (i ** s) for i in range(1, n + 1)]
    total = sum(raw)
    return [x / total for x in raw]


@dataclass
class Session:
    idx: int
    t: float          # arrival, lab seconds from the start
    dur: float        # seconds
    resolver: int     # index into the resolvers

    @property
    def end(self):
        return self.t + self.dur


def stream(sc, capacities, mean_duration, shares, seed):
    """The scenario's sessions, in arrival order. Rates are piecewise constant, so the Poisson process restarts
    at each boundary (memoryless: the same process)."""
    rng = random.Random(f"{seed}/{sc.name}")
    cum, acc = [], 0.0
    for x in shares:
        acc += x
        cum.append(acc)
    total = sum(capacities)
    out = []
    bounds = [t for t, _ in sc.loads[1:]] + [sc.duration]
    for (start, load), stop in zip(sc.loads, bounds):
        rate = load * total / mean_duration
        t = start
        while rate > 0:
            t += rng.expovariate(rate)
            if t >= stop:
                break
            dur = rng.expovariate(1.0 / mean_duration)
            r = min(bisect.bisect_left(cum, rng.random() * acc), len(shares) - 1)
            out.append(Session(len(out), t, dur, r))
    return out


def capacity_at(sc, capacities, site, t, failures=True):
    """The site's session capacity at lab time t (0 while its health check fails: it refuses every session;
    failures=False: the table size its exposition shows then)."""
    if failures and not is_up(sc, site, t):
        return 0
    cap = capacities[site]
    for at, s, c in sc.capacity_changes:
        if s == site and t >= at:
            cap = c
    return cap


def is_up(sc, site, t):
    return not any(s == site and a <= t < b for s, a, b in sc.failures)
