# SPDX-License-Identifier: MIT
"""Whether hvprobe's concurrent bring-up (bringup=parallel, hvprobe's own
mode, not Linux's) is ever slower than its serial one beyond noise, row
by row of one bench run: the same machine and lpj mode, both orders
booted the same number of times in turn, so that both saw the same spells
of host noise.

The noise of a row is the wider of the two orders' spreads (max - min of
their repeats), never less than a floor: NOISE_FLOOR_PCT of serial's
median or NOISE_FLOOR_MS, whichever is larger. With one run per order
there is no spread and the floor alone decides, which the verdict says.
A row holds when parallel's median exceeds serial's by no more than the
noise.
"""

from dataclasses import dataclass

from tools.lib.analysis import stats

SERIAL, CONCURRENT = "serial", "parallel"
# The least a difference must be before it counts: a bring-up of a few
# milliseconds moves by a tick of the host's scheduler.
NOISE_FLOOR_PCT = 10.0
NOISE_FLOOR_MS = 0.5


@dataclass
class Judgement:
    machine: object             # sidebyside.Machine
    lpj_mode: str
    serial: stats.Summary | None
    concurrent: stats.Summary | None
    noise_ms: float | None
    repeats: int                # the fewer of the two orders' good runs

    @property
    def ratio(self):
        """Concurrent's median over serial's; None without both."""
        if self.serial is None or self.concurrent is None or \
                self.serial.median <= 0:
            return None
        return self.concurrent.median / self.serial.median

    @property
    def holds(self):
        """True: not slower beyond noise; False: slower; None: a side
        gave no time, so nothing can be said."""
        if self.serial is None or self.concurrent is None:
            return None
        return self.concurrent.median <= self.serial.median + self.noise_ms

    def to_json(self):
        def side(s):
            return None if s is None else {
                "median_ms": round(s.median, 3), "min_ms": round(s.low, 3),
                "max_ms": round(s.high, 3), "runs": s.n}
        return {"cpu": self.machine.cpu, "vcpus": self.machine.vcpus,
                "nodes": self.machine.nodes, "lpj_mode": self.lpj_mode,
                "serial": side(self.serial),
                "parallel": side(self.concurrent),
                "noise_ms": None if self.noise_ms is None
                else round(self.noise_ms, 3),
                "ratio": None if self.ratio is None else round(self.ratio, 4),
                "holds": self.holds}


def noise(serial, concurrent):
    """The noise of one row's two summaries (module doc), in ms."""
    floor = max(NOISE_FLOOR_MS, serial.median * NOISE_FLOOR_PCT / 100.0)
    return max(floor, serial.spread, concurrent.spread)


def judge(rows):
    """A Judgement per (machine, lpj mode) that has both a serial and a
    concurrent row with more than one vCPU (one vCPU has no AP, and both
    times are noise), in the rows' order."""
    by_key = {}
    for row in rows:
        if row.machine.vcpus > 1 and row.bringup in (SERIAL, CONCURRENT):
            by_key.setdefault((row.machine, row.lpj_mode), {})[row.bringup] \
                = row
    out = []
    for (machine, mode), pair in by_key.items():
        if len(pair) != 2:
            continue
        s = stats.summarize(r.get("ms") for r in pair[SERIAL].hvprobe_runs)
        c = stats.summarize(r.get("ms")
                            for r in pair[CONCURRENT].hvprobe_runs)
        out.append(Judgement(
            machine, mode, s, c,
            None if s is None or c is None else noise(s, c),
            min(s.n if s else 0, c.n if c else 0)))
    return out


def failures(judgements):
    return [j for j in judgements if j.holds is False]


def report(judgements, labels=None):
    """Lines for the end of the table: every row that fails, then the
    count that hold and the worst ratio."""
    labels = labels or {}
    if not judgements:
        return []
    out = ["", f"hvprobe's concurrent mode (bringup={CONCURRENT}, "
               "hvprobe's own, not Linux's) against serial, same machine "
               "and lpj:"]
    for j in failures(judgements):
        m = j.machine
        out.append(f"  SLOWER {m.cpu} {m.vcpus} vCPUs {m.nodes} node"
                   f"{'s' if m.nodes > 1 else ''} "
                   f"{labels.get(j.lpj_mode, j.lpj_mode)}: median "
                   f"{j.concurrent.median:.1f} ms against serial "
                   f"{j.serial.median:.1f} ms ({j.ratio:.2f}x), beyond "
                   f"{j.noise_ms:.1f} ms of noise")
    judged = [j for j in judgements if j.holds is not None]
    held = sum(1 for j in judged if j.holds)
    line = f"  {held} of {len(judged)} rows hold"
    ratios = [j for j in judged if j.ratio is not None]
    if ratios:
        worst = max(ratios, key=lambda j: j.ratio)
        m = worst.machine
        line += (f"; worst {worst.ratio:.2f}x ({m.cpu} {m.vcpus} vCPUs "
                 f"{m.nodes} node{'s' if m.nodes > 1 else ''}, "
                 f"{labels.get(worst.lpj_mode, worst.lpj_mode)})")
    unknown = len(judgements) - len(judged)
    if unknown:
        line += f"; {unknown} without a time on one side"
    out.append(line)
    fewest = min((j.repeats for j in judged), default=0)
    if fewest < 2:
        out.append(f"  (one run per order: no spread to measure, so the "
                   f"noise is the floor, {NOISE_FLOOR_PCT:g}% of serial or "
                   f"{NOISE_FLOOR_MS:g} ms; --runs 3 judges it)")
    else:
        out.append(f"  (noise: the wider spread of the two orders' "
                   f"{fewest}+ runs, at least {NOISE_FLOOR_PCT:g}% of "
                   f"serial or {NOISE_FLOOR_MS:g} ms)")
    return out
