# SPDX-License-Identifier: MIT
"""The pure half of bench/smp: the sweep's plan, hvprobe's bring-up
markers in a run folder, the Linux counterpart of each hvprobe row,
statistics, the table and the JSON document. Nothing here starts QEMU,
so the unit tests can feed it synthetic logs.
"""

import json
import re
import statistics
from dataclasses import dataclass, field

VCPUS = (1, 4, 16, 32, 64)
NODES = (1, 4)
# hvprobe's three ways to get lpj on the APs, as the table names them.
LPJ_MODES = ("none", "node", "preset")
LPJ_LABELS = {"none": "per-CPU", "node": "per-node", "preset": "preset"}
BRINGUPS = ("serial", "parallel")
# Skylake-Client has a constant TSC, so Linux copies lpj from a CPU in the
# same package; qemu64 has none, so every Linux AP calibrates. Between
# them they give Linux counterparts for all three hvprobe modes.
CPUS = ("Skylake-Client", "qemu64")
QUICK_VCPUS = (1, 4, 16)

# Linux sets X86_FEATURE_CONSTANT_TSC on Intel family 6 from model 0x0e
# (Core) on, and on any CPU that reports an invariant TSC (CPUID
# 0x80000007 EDX[8], QEMU's "invtsc"). QEMU's named Intel models from
# Conroe on are all family 6 with a later model; its AMD models and the
# generic qemu64/kvm64/qemu32/kvm32 are not, and have no invtsc.
_CONSTANT_TSC_PREFIXES = (
    "Conroe", "Penryn", "Nehalem", "Westmere", "SandyBridge", "IvyBridge",
    "Haswell", "Broadwell", "Skylake", "Cascadelake", "Cooperlake",
    "Icelake", "SapphireRapids", "GraniteRapids", "SierraForest",
    "ClearwaterForest", "Snowridge", "Denverton", "KnightsMill")


def constant_tsc(model):
    """Whether Linux sees a constant TSC on QEMU CPU model `model`
    (a name, optionally followed by ,+feature or ,feature=on options)."""
    name, *opts = model.split(",")
    if "+invtsc" in opts or "invtsc=on" in opts:
        return True
    return name.startswith(_CONSTANT_TSC_PREFIXES)


def hvprobe_cmdline(lpj_mode, bringup, lpj=None):
    """hvprobe's kernel command line for one row."""
    words = ["test=smp"]
    if lpj_mode == "preset":
        if lpj is None:
            raise ValueError("preset mode needs an lpj value")
        words.append(f"lpj={lpj}")
    else:
        words.append(f"lpj_reuse={lpj_mode}")
    # Linux 6.1 waits 0 us after INIT on both CPU models benchmarked
    # (Intel family 6, AMD family >= 0xf); hvprobe's default is the SDM's
    # 10 ms, which would add ~10 ms per AP that Linux does not spend.
    return words + [f"bringup={bringup}", "init_udelay=0"]


def linux_variant(lpj_mode, bringup, model):
    """Which Linux run is the same experiment as this hvprobe row: "lpj"
    (lpj= given), "calibrate" (no lpj=) or None.

    Linux 6.1 starts its APs one at a time (parallel bring-up came in
    6.5), so only serial rows have a counterpart. Without lpj= Linux
    either calibrates every AP (no constant TSC) or copies lpj from a CPU
    of the same package (constant TSC); with -smp N,sockets=M a package is
    a NUMA node, which is hvprobe's per-node reuse."""
    if bringup != "serial":
        return None
    if lpj_mode == "preset":
        return "lpj"
    if lpj_mode == ("node" if constant_tsc(model) else "none"):
        return "calibrate"
    return None


LINUX_LABELS = {"calibrate": "no lpj=", "lpj": "lpj="}


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
    hvprobe_runs: list = field(default_factory=list)
    linux_runs: list = field(default_factory=list)


def split_machines(cpus, vcpus, nodes):
    """(machines, skipped): every combination, less those whose vCPUs do
    not split evenly into one socket per node, with the reason."""
    machines, skipped = [], []
    for cpu in cpus:
        for n in vcpus:
            for k in nodes:
                if n % k:
                    skipped.append(f"{n} vCPUs x {k} nodes: the vCPUs do "
                                   f"not split into {k} sockets")
                    continue
                machines.append(Machine(cpu, n, k))
    # The same reason for each CPU model once is enough.
    return machines, list(dict.fromkeys(skipped))


def plan(machines, lpj_modes, bringups):
    """The rows, machine by machine, in the order the table shows them."""
    return [Row(m, mode, b, linux_variant(mode, b, m.cpu))
            for m in machines for mode in lpj_modes for b in bringups]


# hvprobe's markers: KTAP diagnostics, at the top level or indented.
HV_START = re.compile(r"^\s*#\s*smp: booting (\d+) APs?\b")
HV_END = re.compile(r"^\s*#\s*smp: brought up (\d+) CPUs?\b")
DATA = re.compile(r"^\s*#\s*DATA\s+(\{.*\})\s*$")


def read_times(text):
    """(seconds, line) pairs from tools/run's serial.times: each line is
    the host time in seconds, one space, and the serial line as logged."""
    out = []
    for line in text.splitlines():
        stamp, _, rest = line.partition(" ")
        try:
            out.append((float(stamp), rest))
        except ValueError:
            continue  # not a stamped line; nothing to time
    return out


@dataclass
class HvprobeRun:
    start_s: float | None = None
    end_s: float | None = None
    aps: int | None = None
    cpus: int | None = None
    data: list = field(default_factory=list)

    @property
    def ms(self):
        if self.start_s is None or self.end_s is None:
            return None
        return (self.end_s - self.start_s) * 1000.0

    def smp_data(self):
        """The smp test's summary DATA object (the one with total_us, or
        failing that the first one), or {}."""
        smp = [d for d in self.data if d.get("test") == "smp"]
        for d in smp:
            if "total_us" in d:
                return d
        return smp[0] if smp else {}


def parse_hvprobe(lines):
    """HvprobeRun from (seconds, text) lines."""
    run = HvprobeRun()
    for stamp, text in lines:
        if run.start_s is None and (m := HV_START.search(text)):
            run.start_s, run.aps = stamp, int(m.group(1))
        elif run.end_s is None and (m := HV_END.search(text)):
            run.end_s, run.cpus = stamp, int(m.group(1))
        elif m := DATA.search(text):
            try:
                doc = json.loads(m.group(1))
            except ValueError:
                continue
            if isinstance(doc, dict):
                run.data.append(doc)
    return run


def _lpj_value(value):
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None


def bsp_lpj(data):
    """(lpj, where) for the preset rows from an hvprobe run's DATA
    objects, or (None, None). First choice is the lpj test's "lpj": the
    BSP's value, which under a TSC is lpj_fine = tsc_khz * 1000 / hz, the
    very number Linux prints and would preset; failing that, the first AP
    the smp test lists with a calibrated lpj."""
    objs = [d for d in data if isinstance(d, dict)]
    for d in objs:
        if d.get("test") == "lpj" and (v := _lpj_value(d.get("lpj"))):
            return v, "lpj test: BSP lpj"
    for d in objs:
        if d.get("test") != "smp":
            continue
        for ap in d.get("aps") or ():
            if isinstance(ap, dict) and (v := _lpj_value(ap.get("lpj"))):
                return v, f"smp test: APIC ID {ap.get('apic_id')} lpj"
    return None, None


# --- statistics, table, JSON ---------------------------------------------

def stats(runs):
    """(min, median, ok, total) of the runs' ms, None for no good run."""
    good = [r["ms"] for r in runs if r.get("ms") is not None]
    if not good:
        return None, None, 0, len(runs)
    return min(good), statistics.median(good), len(good), len(runs)


def ratio(row):
    """hvprobe's median over Linux's; None without both, or with one
    vCPU, where there is no AP to bring up and both times are noise."""
    if row.machine.vcpus < 2:
        return None
    _, hv, _, _ = stats(row.hvprobe_runs)
    _, lx, _, _ = stats(row.linux_runs)
    if hv is None or lx is None or lx <= 0:
        return None
    return hv / lx


def calibrations(runs):
    """hvprobe's AP calibration count in this row's runs: the number when
    they agree, "?" when they differ, "" when none said."""
    seen = {r.get("calibrations") for r in runs
            if r.get("calibrations") is not None}
    if not seen:
        return ""
    return str(seen.pop()) if len(seen) == 1 else "?"


def _cells(runs, wanted=True):
    """min and median cells, 18 characters: a * after the median marks a
    row where some runs failed, FAIL one where all did, - no runs."""
    lo, med, ok, total = stats(runs)
    if total == 0:
        text = "-" if wanted else ""
        return f"{text:>8} {text:>8} "
    if ok == 0:
        return f"{'FAIL':>8} {'FAIL':>8} "
    return f"{lo:8.1f} {med:8.1f}{'*' if ok < total else ' '}"


HEADER = (f"{'vCPUs':>5} {'nodes':>5} {'lpj':<8} {'bringup':<8} {'cal':>3}"
          f" | {'hvprobe':<18} | {'Linux':<7} {'':<18} | {'hv/Linux':>8}")
SUBHEADER = (f"{'':>5} {'':>5} {'':<8} {'':<8} {'':>3}"
             f" | {'min':>8} {'median':>8}  | {'':<7} {'min':>8} "
             f"{'median':>8}  | {'median':>8}")


def cpu_heading(model):
    if constant_tsc(model):
        why = "constant TSC: Linux reuses lpj within a socket"
    else:
        why = "no constant TSC: every Linux AP calibrates"
    return f"-cpu {model} ({why})"


def table(rows, runs, hvprobe=True, linux=True):
    """The table as a list of lines: a section per CPU model, since the
    model decides what Linux does without lpj= and so which row its runs
    sit on. Without hvprobe runs only the rows with Linux runs show."""
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
                _, _, ok, total = stats(rs)
                any_failed |= ok < total
            r = ratio(row)
            out.append(
                f"{m.vcpus if first else '':>5} {m.nodes if first else '':>5}"
                f" {LPJ_LABELS[row.lpj_mode]:<8} {row.bringup:<8}"
                f" {calibrations(row.hvprobe_runs):>3}"
                f" | {_cells(row.hvprobe_runs, hvprobe)}"
                f" | {LINUX_LABELS[row.linux] if has_linux else '-':<7}"
                f" {_cells(row.linux_runs, has_linux)}"
                f" | {'-' if r is None else f'{r:.2f}':>8}")
    notes = [
        "",
        f"ms of bring-up, min and median of {runs} run"
        + ("s" if runs != 1 else "") + ", from host timestamps of serial "
        "lines: hvprobe's",
        "'# smp: booting N APs' to '# smp: brought up N CPUs', Linux's "
        "'x86: Booting SMP",
        "configuration' to 'smp: Brought up'. cal: calibrations hvprobe "
        "reported.",
        "hv/Linux: ratio of medians (none with 1 vCPU: no APs, both times "
        "are noise).",
        "Linux 6.1 starts APs one at a time, so parallel rows have no Linux "
        "counterpart.",
        "Without lpj= it calibrates every AP on a CPU without constant TSC "
        "(per-CPU row)",
        "and once per socket on one with it (per-node row; a socket is a "
        "node here).",
    ]
    if any_failed:
        notes.append("*: some runs failed, FAIL: all did; the JSON says "
                     "why.")
    return out + notes


def row_json(row, hv_cmdline, linux_cmdline):
    lo, med, ok, total = stats(row.hvprobe_runs)
    llo, lmed, lok, ltotal = stats(row.linux_runs)
    r = ratio(row)
    return {
        "cpu": row.machine.cpu, "constant_tsc": constant_tsc(row.machine.cpu),
        "vcpus": row.machine.vcpus, "nodes": row.machine.nodes,
        "lpj_mode": row.lpj_mode, "bringup": row.bringup,
        "hvprobe": {"cmdline": hv_cmdline, "min_ms": _round(lo),
                    "median_ms": _round(med), "ok": ok, "total": total,
                    "runs": row.hvprobe_runs},
        "linux": None if row.linux is None else {
            "variant": row.linux, "cmdline": linux_cmdline,
            "min_ms": _round(llo), "median_ms": _round(lmed),
            "ok": lok, "total": ltotal, "runs": row.linux_runs},
        "ratio_median": None if r is None else round(r, 4),
    }


def _round(value):
    return None if value is None else round(value, 3)
