# SPDX-License-Identifier: MIT
"""bench/smp's table: one row per hvprobe configuration (a scenario of the
bench-smp matrix) with, where Debian's Linux runs the same experiment, that
Linux run beside it; a section per CPU model, since the model decides what
Linux does without lpj=. The rows are also bench-smp.json's. Nothing here
boots anything, so the tests can feed it made-up runs.
"""

from dataclasses import dataclass, field

from tools.lib.analysis import stats

from . import linuxref

# The lpj axis of the matrix: how hvprobe's APs get lpj, as the table
# names it.
LPJ_LABELS = {"none": "per-CPU", "node": "per-node", "preset": "preset",
              "linux61": "6.1-rule", "linux65": "6.5-rule"}
# The bringup axis, as the table names it: the mode's own word.
BRINGUP_LABELS = {"linux65": "linux-6.5"}


@dataclass(frozen=True)
class Machine:
    cpu: str
    vcpus: int
    nodes: int


@dataclass
class Row:
    """One line of the table: an hvprobe configuration and, where Linux
    runs the same experiment, the Linux variant beside it."""
    machine: Machine
    lpj_mode: str
    bringup: str
    linux: str | None
    spec: object = None         # the matrix's RunSpec for the hvprobe runs
    hvprobe_runs: list = field(default_factory=list)
    linux_runs: list = field(default_factory=list)


def rows_for(specs):
    """The rows of the matrix's scenarios, in its order: each one's CPU
    model, vCPUs and nodes, and the entries of its lpj and bringup axes."""
    rows = []
    for spec in specs:
        mode, bringup = spec.axes["lpj"], spec.axes["bringup"]
        rows.append(Row(Machine(spec.cpu, spec.vcpus, spec.numa), mode,
                        bringup, linuxref.variant_for(mode, bringup,
                                                      spec.cpu), spec))
    return rows


def summary(runs):
    """(Summary of the runs' ms or None, number of runs)."""
    return stats.summarize(r.get("ms") for r in runs), len(runs)


def ratio(row):
    """hvprobe's median over Linux's; None without both, or with one
    vCPU, where there is no AP to bring up and both times are noise."""
    if row.machine.vcpus < 2:
        return None
    hv, _ = summary(row.hvprobe_runs)
    lx, _ = summary(row.linux_runs)
    if hv is None or lx is None or lx.median <= 0:
        return None
    return hv.median / lx.median


def calibrations(runs):
    """hvprobe's AP calibration count in this row's runs: the number when
    they agree, "?" when they differ, "" when none said."""
    seen = {r.get("calibrations") for r in runs
            if r.get("calibrations") is not None}
    if not seen:
        return ""
    return str(seen.pop()) if len(seen) == 1 else "?"


def ticks(runs):
    """hvprobe's median ticks per calibration in this row's runs: the
    middle of the runs' medians, "" when none calibrated."""
    seen = sorted(r["cal_ticks"] for r in runs
                  if isinstance(r.get("cal_ticks"), int) and r["cal_ticks"])
    return str(seen[len(seen) // 2]) if seen else ""


def _cells(runs, wanted=True):
    """min and median cells, 18 characters: a * after the median marks a
    row where some runs failed, FAIL one where all did, - no runs."""
    s, total = summary(runs)
    if total == 0:
        text = "-" if wanted else ""
        return f"{text:>8} {text:>8} "
    if s is None:
        return f"{'FAIL':>8} {'FAIL':>8} "
    return f"{s.low:8.1f} {s.median:8.1f}{'*' if s.n < total else ' '}"


HEADER = (f"{'vCPUs':>5} {'nodes':>5} {'lpj':<8} {'bringup':<9} {'cal':>3}"
          f" {'tick':>4} | {'hvprobe':<18} | {'Linux':<8} {'':<18} |"
          f" {'hv/Linux':>8}")
SUBHEADER = (f"{'':>5} {'':>5} {'':<8} {'':<9} {'':>3} {'':>4}"
             f" | {'min':>8} {'median':>8}  | {'':<8} {'min':>8} "
             f"{'median':>8}  | {'median':>8}")


def cpu_heading(model):
    if linuxref.constant_tsc(model):
        why = "constant TSC: Linux reuses lpj within a socket"
    else:
        why = "no constant TSC: every Linux AP calibrates"
    return f"-cpu {model} ({why})"


def table(rows, runs, hvprobe=True, linux=True, linux_ticks=None):
    """The table as a list of lines. Without hvprobe runs only the rows
    with Linux runs show. linux_ticks: (HZ, ticks) of Linux's direct
    calibration, for the note."""
    out = []
    any_failed = False
    if not hvprobe:
        rows = [r for r in rows if r.linux is not None]
    for model in dict.fromkeys(r.machine.cpu for r in rows):
        out += ["", cpu_heading(model), HEADER, SUBHEADER]
        last = None
        for row in (r for r in rows if r.machine.cpu == model):
            m = row.machine
            first, last = (m.vcpus, m.nodes) != last, (m.vcpus, m.nodes)
            has_linux = linux and row.linux is not None
            for rs in (row.hvprobe_runs, row.linux_runs):
                s, total = summary(rs)
                any_failed |= (s.n if s else 0) < total
            r = ratio(row)
            out.append(
                f"{m.vcpus if first else '':>5} {m.nodes if first else '':>5}"
                f" {LPJ_LABELS.get(row.lpj_mode, row.lpj_mode):<8}"
                f" {BRINGUP_LABELS.get(row.bringup, row.bringup):<9} {calibrations(row.hvprobe_runs):>3}"
                f" {ticks(row.hvprobe_runs):>4}"
                f" | {_cells(row.hvprobe_runs, hvprobe)}"
                f" | {linuxref.VARIANTS[row.linux] if has_linux else '-':<8}"
                f" {_cells(row.linux_runs, has_linux)}"
                f" | {'-' if r is None else f'{r:.2f}':>8}")
    notes = [
        "",
        f"ms of bring-up, min and median of {runs} run"
        + ("s" if runs != 1 else "") + ". hvprobe: total_us of its smp "
        "DATA line",
        "(from the first INIT to the last AP online, by the guest's TSC). "
        "Linux: host",
        "timestamps of its serial lines, 'x86: Booting SMP configuration' "
        "to 'smp: Brought",
        "up' (its own clock undercounts under TCG). cal: calibrations "
        "hvprobe reported.",
        "hv/Linux: ratio of medians (none with 1 vCPU: no APs, both times "
        "are noise).",
        "tick: median ticks (jiffies) per calibration, the figure a loaded "
        "host moves least"
        + (f"; Linux's calibrate_delay_direct() takes {linux_ticks[1]} at "
           f"HZ={linux_ticks[0]}." if linux_ticks else "."),
        "Linux 6.1 starts APs one at a time and copies lpj within a package "
        "when the TSC",
        "is constant: the serial 6.1-rule rows (lpj_policy=linux-6.1; a "
        "socket is a node",
        "here). Linux 6.12 starts them in parallel and copies the boot "
        "CPU's when the TSC",
        "is also synchronized: the 6.5-rule rows in Linux 6.5's shape "
        "(lpj_policy=linux-6.5",
        "bringup=linux-6.5). bringup=parallel is hvprobe's own concurrent "
        "mode, beside no Linux.",
    ]
    if any_failed:
        notes.append("*: some runs failed, FAIL: all did; the JSON says "
                     "why.")
    return out + notes


def row_json(row, hv_cmdline, linux_cmdline):
    hv, total = summary(row.hvprobe_runs)
    lx, ltotal = summary(row.linux_runs)
    r = ratio(row)
    return {
        "cpu": row.machine.cpu,
        "constant_tsc": linuxref.constant_tsc(row.machine.cpu),
        "vcpus": row.machine.vcpus, "nodes": row.machine.nodes,
        "lpj_mode": row.lpj_mode, "bringup": row.bringup,
        "hvprobe": {"cmdline": hv_cmdline, **_figures(hv, total),
                    "runs": row.hvprobe_runs},
        "linux": None if row.linux is None else {
            "variant": row.linux, "cmdline": linux_cmdline,
            **_figures(lx, ltotal), "runs": row.linux_runs},
        "ratio_median": None if r is None else round(r, 4),
    }


def _figures(s, total):
    return {"min_ms": None if s is None else round(s.low, 3),
            "median_ms": None if s is None else round(s.median, 3),
            "ok": 0 if s is None else s.n, "total": total}
