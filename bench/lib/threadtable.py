# SPDX-License-Identifier: MIT
"""bench/thread-table's table: the lpj thread's five rows (the variants
of tools/scenarios/lpj-thread.toml), each with hvprobe's figures under
every lpj policy and Debian's Linux 6.1 and 6.12 booted in the same
machine. Nothing here boots anything, so the tests can feed it made-up
results.

Every line says who produced its figures: "hvprobe" lines name the
policy and the bring-up (bringup=linux-6.5 is Linux 6.5's shape,
bringup=parallel hvprobe's own concurrent mode, never Linux's); "Linux"
lines are Linux's own boots, their time from host stamps of its serial
lines and their calibrations from each CPU's bogomips. The HZ on each
line is the one that kernel ran at: hvprobe's from its DATA, Linux's
from the config file beside its image; an hvprobe line at an HZ no Linux
line of its row runs at is hvprobe's alone, and says so.

The TSC-sync check's share is shown apart from the bring-up time: the
APs that ran it (hvprobe's smp DATA; Linux's pr_debug lines with
dyndbg="file tsc_sync.c +p", tools/lib/referee.py) and hvprobe's control
CPU's time in it (tsc_sync_us). Linux prints no time for it.
"""

import re
import statistics
from dataclasses import dataclass, field

from tools.lib import referee
from tools.lib.analysis import figures

from . import linuxref

SCENARIO = "lpj-thread"
# The rows, in the thread's order, with the figure it reported for
# each (ms of bring-up, as quoted in the thread; a field report, not a
# measurement of this bench).
ROWS = {"calibrating-16": "~1300", "preset-16": "~130",
        "one-node-32": "26", "four-nodes-32": "~210", "preset-32": "32"}
# hvprobe's (lpj_policy, bringup) per row: each Linux rule in its own
# Linux's shape, the thread's patch in both shapes, and hvprobe's own
# policy serially and in hvprobe's own concurrent mode.
CONFIGS = (("linux-6.1", "serial"), ("linux-6.5", "linux-6.5"),
           ("hv-preset", "serial"), ("hv-preset", "linux-6.5"),
           ("hvprobe", "serial"), ("hvprobe", "parallel"))
BRINGUP_NAMES = {"serial": "serial",
                 "linux-6.5": "bringup=linux-6.5 (Linux 6.5's shape)",
                 "parallel": "bringup=parallel (hvprobe's own, not Linux)"}
# Debian's kernels, by series, and the shape each brings CPUs up in.
LINUX = {"6.1": "serial", "6.12": "parallel, Linux's own"}
# --quick: fewer vCPUs, the same shapes (one node stays one, four stay
# four).
QUICK_VCPUS = {16: 4, 32: 8}
# --hyperv: KVM's Hyper-V emulation without KVM's own leaves, where Linux
# and hvprobe both take Hyper-V as the platform (Linux's
# ms_hyperv_platform()): the enlightenments mshyperv.c looks for, the
# reference TSC page (hv-time) and the frequency MSRs.
HYPERV_CPU = "host,-arch-capabilities,hv-relaxed,hv-vpindex,hv-time," \
    "hv-frequencies,kvm=off"


@dataclass
class Row:
    name: str
    cpu: str
    vcpus: int
    nodes: int
    preset: bool
    thread_ms: str
    # (policy, bringup) -> [figures of each run]; series -> [...]
    hvprobe: dict = field(default_factory=dict)
    linux: dict = field(default_factory=dict)
    linux_hz: dict = field(default_factory=dict)     # series -> HZ


def hvprobe_figures(doc):
    """One hvprobe run's figures from its results document: ms (total_us
    of the smp DATA line), the APs that calibrated (its per-AP records'
    lpj_source), the HZ it ran at, the boot CPU's lpj source, the policy
    and bring-up it states, and error when it gave no time."""
    smp = figures.data(doc or {}, "smp") or {}
    aps = [ap for ap in figures.records(doc or {}, "smp", "ap")
           if ap.get("cpu") != 0]
    sync = referee.hvprobe_facts(smp, aps, figures.data(doc or {}, "lpj"))
    sync_us = smp.get("tsc_sync_us")
    out = {"ms": None, "error": None,
           "sync_checks": (sync["sync_checks"] or [None])[0],
           "sync_ms": round(sync_us / 1000.0, 3)
           if isinstance(sync_us, (int, float)) else None,
           "ap_calibrations": sum(1 for ap in aps
                                  if ap.get("lpj_source") == "calibrate")
           if aps else None,
           "hz": smp.get("hz"), "bsp_lpj_source": smp.get("lpj_source"),
           "policy": smp.get("lpj_policy"), "bringup": smp.get("bringup"),
           "verdict": (doc or {}).get("verdict")}
    total = smp.get("total_us")
    if not isinstance(total, (int, float)) or isinstance(total, bool):
        out["error"] = "no smp DATA line with total_us"
    else:
        out["ms"] = round(total / 1000.0, 3)
    return out


def linux_figures(lines, text, vcpus):
    """One Linux run's figures: ms between its 'x86: Booting SMP
    configuration' and 'smp: Brought up' lines by host stamps (lines:
    (seconds, text)), and from the referee initramfs's output (text: the
    whole serial log) the APs that calibrated and the boot CPU's lpj
    source; error when either is missing."""
    b = linuxref.parse(lines)
    verdict = referee.parse(text)
    out = {"ms": None, "error": None, "cpus": b["cpus"],
           "ap_calibrations": verdict.calibrations if verdict else None,
           # APs that ran the TSC-sync check; None without dyndbg.
           "sync_checks": verdict.sync[0] if verdict and verdict.sync
           else None,
           "bsp_lpj_source": verdict.bsp_source if verdict else None,
           "tsc_unstable": verdict.tsc_unstable if verdict else None}
    if b["ms"] is None:
        out["error"] = b["fatal"] or "no 'smp: Brought up' line"
    elif b["cpus"] != vcpus:
        out["error"] = f"brought up {b['cpus']} of {vcpus} CPUs"
    else:
        out["ms"] = round(b["ms"], 3)
    if verdict is None and out["error"] is None:
        out["error"] = "the referee initramfs never finished"
    return out


def config_hz(vmlinuz):
    """CONFIG_HZ from the config file Debian ships beside the image
    (boot/config-RELEASE), or None."""
    release = vmlinuz.name.removeprefix("vmlinuz-")
    try:
        text = (vmlinuz.parent / f"config-{release}").read_text()
    except OSError:
        return None
    m = re.search(r"^CONFIG_HZ=(\d+)$", text, re.MULTILINE)
    return int(m.group(1)) if m else None


def agreed(runs, key):
    """A figure of a line's runs as text: the value when the runs agree,
    "?" when they differ, "" when none gave it."""
    got = {r.get(key) for r in runs if r.get(key) is not None}
    return "" if not got else (str(got.pop()) if len(got) == 1 else "?")


def sync_cell(runs):
    """(TSC-sync checks, median ms of the control CPU in them) of a
    line's runs as text; "-" for a time none of them gave (Linux's)."""
    ms = [r["sync_ms"] for r in runs if r.get("sync_ms") is not None]
    return (agreed(runs, "sync_checks"),
            f"{statistics.median(ms):.1f}" if ms else "-")


def cell(runs):
    """(median ms, min ms, AP calibrations, HZ) of a line's runs as
    text: the calibrations when the runs agree, "?" when they differ."""
    ms = [r["ms"] for r in runs if r.get("ms") is not None]
    hz = {r.get("hz") for r in runs if r.get("hz")}
    if not runs:
        med = low = "-"
    elif not ms:
        med = low = "FAIL"
    else:
        # A run may give a time and still fail (Linux brought its CPUs
        # up and never finished its initramfs): marked, never whole.
        failed = any(r.get("ms") is None or r.get("error") for r in runs)
        med = f"{statistics.median(ms):.1f}" + ("*" if failed else "")
        low = f"{min(ms):.1f}"
    cal = agreed(runs, "ap_calibrations")
    return med, low, cal, (str(hz.pop()) if len(hz) == 1 else
                           "?" if hz else "")


WHO = 88
HEADER = (f"{'row':<15} {'HZ':>4}  {'who':<{WHO}} {'cal':>3} {'chk':>3} "
          f"{'sync':>6} {'median':>8} {'min':>8}")


def machine_line(row):
    return (f"{row.name}: {row.vcpus} vCPUs on {row.nodes} node"
            f"{'s' if row.nodes > 1 else ''} (a socket per node), -cpu "
            f"{row.cpu}{', lpj= preset' if row.preset else ''}; the thread "
            f"reported {row.thread_ms} ms (its Linux, its host)")


def alone(row, hz) -> str:
    """What an hvprobe line at hz says of itself: nothing where a Linux
    line of its row ran at that HZ, else that it is hvprobe's alone."""
    linux = {h for s, h in row.linux_hz.items() if h and s in row.linux}
    if not hz or not linux or hz in {str(h) for h in linux}:
        return ""
    return f" [HZ {hz}: hvprobe's alone, Linux ran at " \
        f"{'/'.join(str(h) for h in sorted(linux))}]"


def line(hz, who, cal, sync, med, low) -> str:
    return (f"{'':<15} {hz:>4}  {who:<{WHO}} {cal:>3} {sync[0]:>3} "
            f"{sync[1]:>6} {med:>8} {low:>8}")


def lines_of(row, releases):
    """The table lines of one row: hvprobe's, then Linux's."""
    out = ["", machine_line(row)]
    for policy, bringup in CONFIGS:
        runs = row.hvprobe.get((policy, bringup), [])
        med, low, cal, hz = cell(runs)
        who = f"hvprobe lpj_policy={policy}, {BRINGUP_NAMES[bringup]}" + \
            alone(row, hz)
        out.append(line(hz, who, cal, sync_cell(runs), med, low))
    for series, shape in LINUX.items():
        runs = row.linux.get(series)
        if runs is None:
            continue
        med, low, cal, _ = cell(runs)
        hz = row.linux_hz.get(series)
        who = f"Linux {releases.get(series, series)} ({shape})"
        out.append(line(hz or "?", who, cal, sync_cell(runs), med, low))
    return out


def table(rows, runs, releases, accel, quick=False, vcpus=None):
    """The whole table as lines. releases: series -> the release that
    booted, for the Linux lines; quick: the rows have QUICK_VCPUS;
    vcpus: every row has that many (--vcpus)."""
    shape = f" (--vcpus {vcpus}: {vcpus} vCPUs and at most {vcpus} " \
        "nodes where the thread had 16 and 32 vCPUs)" if vcpus else \
        " (--quick: 4 and 8 vCPUs where the thread had 16 and 32)" \
        if quick else ""
    out = [f"The lpj thread's table: {accel.upper()}, q35, {runs} run"
           f"{'s' if runs != 1 else ''} per line{shape}", HEADER]
    for row in rows:
        out += lines_of(row, releases)
    out += [
        "",
        "ms of bring-up, median and min of the runs. hvprobe: total_us of "
        "its smp DATA",
        "line (first INIT to last AP online, by the guest's TSC). Linux: "
        "host stamps of its",
        "serial lines, 'x86: Booting SMP configuration' to 'smp: Brought "
        "up'. cal: APs that",
        "calibrated (hvprobe: its per-AP lpj_source; Linux: CPUs whose "
        "bogomips equals no",
        "earlier CPU's). HZ: the rate that kernel ran at (Debian's Linux is "
        "built with its",
        "own, whatever the row). Only the Linux lines are Linux's figures; "
        "bringup=parallel",
        "is hvprobe's own concurrent mode. chk: APs that ran the TSC-sync "
        "check (Linux: its",
        "dyndbg lines; none under Hyper-V, whose TSC is reliable or "
        "unstable). sync: ms the",
        "control CPU spent in those checks, inside the bring-up time "
        "(hvprobe's tsc_sync_us;",
        "Linux prints no time for it). *: a run failed (its error is in the "
        "JSON), FAIL: none",
        "gave a time, -: not run.",
    ]
    return out


def quick_rows(rows):
    """The rows with fewer vCPUs (QUICK_VCPUS), for a short test run."""
    for row in rows:
        row.vcpus = QUICK_VCPUS.get(row.vcpus, row.vcpus)
    return rows


def row_json(row):
    return {"name": row.name, "cpu": row.cpu, "vcpus": row.vcpus,
            "nodes": row.nodes, "preset": row.preset,
            "thread_ms": row.thread_ms,
            "hvprobe": [{"lpj_policy": p, "bringup": b,
                         "runs": row.hvprobe.get((p, b), [])}
                        for p, b in CONFIGS],
            "linux": [{"series": s, "hz": row.linux_hz.get(s), "runs": r}
                      for s, r in row.linux.items()]}


def rows_from_json(docs) -> list[Row]:
    """Rows back from row_json()'s documents (a run inside L1 writes
    them; the host prints their table)."""
    rows = []
    for d in docs:
        row = Row(d["name"], d["cpu"], d["vcpus"], d["nodes"], d["preset"],
                  d["thread_ms"])
        row.hvprobe = {(h["lpj_policy"], h["bringup"]): h["runs"]
                       for h in d["hvprobe"] if h["runs"]}
        row.linux = {x["series"]: x["runs"] for x in d["linux"]}
        row.linux_hz = {x["series"]: x["hz"] for x in d["linux"]}
        rows.append(row)
    return rows
