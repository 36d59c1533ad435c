# SPDX-License-Identifier: MIT
"""The report table: one row per scenario (its repeats folded into the
median and range), the bring-up columns where the smp test ran, the PMI
columns where pmi_stress did, and any figures asked for by name.

tools/report prints it; tools/run prints it after a batch.
"""

import collections
import fnmatch
from typing import Any

from ..base import text
from . import figures, resultset, stats, table
from .table import Column, render as render_table

# The formats report's tables come in, for the commands' --format.
FORMATS = table.FORMATS

load_docs = resultset.load

# Figures shown as columns whenever a run has any of them: the PMU
# stress (pmi_stress's documented DATA line) and the NMI IPI storm.
OPTIONAL_COLUMNS = (
    ("pmi_stress.pmis_per_s_per_cpu", "PMIs/s/CPU", ""),
    ("pmi_stress.unknown_nmis", "unknown NMIs", ""),
    ("pmi_stress.unserviced", "unserviced", ""),
    ("pmi_stress.skid.median", "skid p50", "events"),
    ("pmi_stress.gap_cycles.p99", "gap p99", "cycles"),
    ("nmi_storm.sent_per_s_per_cpu", "NMI IPIs/s/CPU", ""),
    ("nmi_storm.received", "NMIs received", ""),
    ("nmi_storm.unknown_nmis", "NMIs, no source", ""),
    ("nmi_storm.nested", "nested", ""),
)


def ms(value) -> str:
    if value is None:
        return "-"
    return f"{value:.1f}" if abs(value) < 100 else f"{value:.0f}"


def _verdicts(docs) -> str:
    counts = collections.Counter(d.get("verdict") or "?" for d in docs)
    if len(counts) == 1:
        return next(iter(counts))
    return ", ".join(f"{n} {v}" for v, n in counts.most_common())


def ap_sources(doc) -> str | None:
    """How the APs got lpj, e.g. "calibrate 15" or "reuse 28, calibrate
    3", from the smp test's per-AP list."""
    if figures.data(doc, "smp") is None:
        return None
    counts = collections.Counter(str(ap.get("lpj_source"))
                                 for ap in figures.records(doc, "smp", "ap"))
    return ", ".join(f"{s} {n}" for s, n in counts.most_common()) or "no APs"


def _vcpus(doc) -> int | None:
    smp = figures.data(doc, "smp") or {}
    if isinstance(smp.get("cpus"), int):
        return smp["cpus"]
    machine = (doc.get("scenario") or {}).get("machine") or {}
    return machine.get("vcpus")


def _median(docs, name,
            scale=1) -> tuple[float | None, float | None, float | None]:
    s = stats.summarize(figures.of_run(d).get(name) for d in docs)
    if s is None:
        return None, None, None
    if scale == 1:
        return s.median, s.low, s.high     # counts stay whole numbers
    return s.median / scale, s.low / scale, s.high / scale


def rows_for(docs, extra=(), per_run=False
             ) -> tuple[list[Column], list[dict[str, Any]], list[str]]:
    """(columns, rows, notes) for the report. extra: figure names or
    fnmatch patterns to add as columns."""
    groups = [(resultset.name_of(d) + (f" ({d.get('run')})" if per_run
                                       else "")
               + (f" @ {resultset.host_label(d)}"
                  if resultset.host_label(d) else ""), [d]) for d in docs] \
        if per_run else list(resultset.grouped(docs, by_host=True).items())
    if any(resultset.host_label(d) for d in docs):
        notes = ["runs marked @ L1 ran under a host kernel nested in this "
                 "machine: their timing is not that host's"]
    else:
        notes = []
    all_figs: dict[str, None] = {}     # insertion-ordered set
    for d in docs:
        for name in figures.of_run(d):
            all_figs.setdefault(name, None)
    have_smp = any(n.startswith("smp.") for n in all_figs)
    wanted = []
    for pattern in extra:
        hits = [n for n in all_figs if fnmatch.fnmatchcase(n, pattern)]
        if not hits:
            notes.append(f"no figure matches {pattern!r}")
        wanted += [h for h in hits if h not in wanted]
    cols = columns(all_figs, wanted, have_smp,
                   any(len(g) > 1 for _, g in groups))
    rows = [row_of(name, group, cols, have_smp) for name, group in groups]
    return cols, rows, notes


def columns(all_figs, wanted, have_smp, repeats) -> list[Column]:
    """The report's columns: the run's, the bring-up's where there is an
    smp DATA (with its range where there are repeats), the optional
    figures present, then those asked for."""
    cols = [Column("scenario", "scenario"),
            Column("runs", "runs", numeric=True),
            Column("verdict", "verdict")]
    if have_smp:
        cols += [Column("vcpus", "vCPUs", numeric=True),
                 Column("nodes", "nodes", numeric=True),
                 Column("lpj", "lpj on APs"),
                 Column("calibrations", "calibrations", numeric=True),
                 Column("bringup_ms", "bring-up", "ms", ms, True)]
        if repeats:
            cols += [Column("bringup_min_ms", "min", "ms", ms, True),
                     Column("bringup_max_ms", "max", "ms", ms, True)]
        cols += [Column("per_ap_ms", "per AP", "ms", ms, True)]
    cols += [Column(key, header, unit, numeric=True)
             for key, header, unit in OPTIONAL_COLUMNS if key in all_figs]
    cols += [Column(name, name, figures.unit_of(name), numeric=True)
             for name in wanted]
    return cols


def row_of(name, group, cols, have_smp) -> dict[str, Any]:
    """One group's row: its bring-up from the first run's smp DATA and
    the medians over its runs."""
    row = {"scenario": name, "runs": len(group),
           "verdict": _verdicts(group)}
    if have_smp:
        first = group[0]
        smp = figures.data(first, "smp") or {}
        row["vcpus"] = _vcpus(first)
        row["nodes"] = smp.get("nodes")
        row["lpj"] = ap_sources(first)
        row["calibrations"] = _median(group, "smp.calibrations")[0]
        (row["bringup_ms"], row["bringup_min_ms"],
         row["bringup_max_ms"]) = _median(group, "smp.total_us", 1000)
        row["per_ap_ms"] = _median(group, "smp.per_ap_us.median", 1000)[0]
    for col in cols:
        if col.key not in row:
            row[col.key] = _median(group, col.key)[0]
    return row


def render(docs, fmt="text", extra=(), per_run=False) -> str:
    cols, rows, notes = rows_for(docs, extra, per_run)
    out = render_table(cols, rows, fmt)
    if fmt == "text" and notes:
        out += "".join(f"note: {text.escaped(n)}\n" for n in notes)
    return out


def long_form(docs, fmt="text", patterns=("*",)) -> str:
    """Every figure of every scenario, one per row: scenario, figure,
    median, range, unit, runs."""
    cols = [Column("scenario", "scenario"), Column("figure", "figure"),
            Column("median", "median", numeric=True),
            Column("min", "min", numeric=True),
            Column("max", "max", numeric=True),
            Column("unit", "unit"), Column("n", "n", numeric=True)]
    rows = []
    for name, group in resultset.grouped(docs).items():
        values = collections.defaultdict(list)
        for d in group:
            for fig, v in figures.of_run(d).items():
                values[fig].append(v)
        for fig, vals in values.items():
            if not any(fnmatch.fnmatchcase(fig, p) for p in patterns):
                continue
            s = stats.summarize(vals)
            if s is None:   # never: every figure here has a value
                continue
            rows.append({"scenario": name, "figure": fig,
                         "median": s.median, "min": s.low, "max": s.high,
                         "unit": figures.unit_of(fig), "n": s.n})
    return render_table(cols, rows, fmt)
