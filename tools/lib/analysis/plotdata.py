# SPDX-License-Identifier: MIT
"""What tools/plot draws, as plain data: bring-up series, per-AP
timelines and PMI distributions, taken from results documents. Kept apart
from the drawing so that it is tested without matplotlib.
"""

import collections
from dataclasses import dataclass, field
from typing import Any

from . import figures, resultset, stats

# The smp test's per-AP timestamps (µs since bring-up began), in the
# order an AP passes them, and the name of the phase each one ends.
AP_MARKS = ("init_us", "sipi_us", "alive_us", "calibrated_us", "online_us")
AP_PHASES = ("INIT to SIPI", "SIPI to alive", "alive to calibrated",
             "calibrated to online")


def _words(doc) -> dict[str, str]:
    words = {}
    for word in str(doc.get("cmdline") or "").split():
        key, _, value = word.partition("=")
        words[key] = value
    return words


def lpj_mode(doc) -> str:
    """How the APs got lpj in this run, as a legend label."""
    smp = figures.data(doc, "smp") or {}
    words = _words(doc)
    if words.get("lpj", "0") not in ("", "0"):
        return "preset (lpj=)"
    if words.get("lpj_source") == "calibrate" or \
            smp.get("lpj_reuse") == "none":
        return "per-CPU calibration"
    if smp.get("calibrations") == 0:
        return f"preset ({smp.get('lpj_source')})"
    return f"reuse per {smp.get('lpj_reuse', 'node')}"


@dataclass
class Series:
    label: str
    points: list = field(default_factory=list)   # (vcpus, Summary of ms)


def bringup_series(docs) -> list[Series]:
    """One series per (lpj mode, node count): bring-up ms against vCPUs,
    each point the median and range of a scenario's repeats."""
    cells = collections.defaultdict(list)
    for doc in docs:
        smp = figures.data(doc, "smp")
        if not smp or not isinstance(smp.get("total_us"), (int, float)) \
                or not isinstance(smp.get("cpus"), int):
            continue
        nodes = smp.get("nodes") or 1
        label = f"{lpj_mode(doc)}, {nodes} node{'s' * (nodes != 1)}"
        cells[(label, smp["cpus"])].append(smp["total_us"] / 1000)
    series: dict[str, Series] = {}
    for (label, vcpus), values in sorted(cells.items()):
        series.setdefault(label, Series(label)).points.append(
            (vcpus, stats.summarize(values)))
    return list(series.values())


@dataclass
class Timeline:
    name: str
    bars: list          # (label, [(start ms, length ms, phase index)])
    total_ms: float | None


def timeline(doc) -> Timeline | None:
    """The per-AP phases of one run, or None without per-AP data. A
    timestamp of 0 after the first means the AP never got there."""
    smp = figures.data(doc, "smp") or {}
    aps = figures.records(doc, "smp", "ap")
    if not aps:
        return None
    bars = []
    for ap in aps:
        marks: list[Any] = [ap.get(k) for k in AP_MARKS]
        segs = []
        for i in range(len(AP_PHASES)):
            a, b = marks[i], marks[i + 1]
            if not all(isinstance(x, (int, float)) for x in (a, b)) or \
                    b <= 0 or b < a:
                break
            segs.append((a / 1000, (b - a) / 1000, i))
        label = f"APIC {ap.get('apic_id')}"
        if "node" in ap:
            label += f" n{ap['node']}"
        bars.append((label, segs))
    total = smp.get("total_us")
    return Timeline(resultset.name_of(doc), bars,
                    total / 1000 if isinstance(total, (int, float)) else None)


def timeline_choice(docs) -> list[str]:
    """The scenarios whose timelines say most: for each lpj mode, the one
    with the most vCPUs, then the most nodes."""
    best: dict[str, tuple[tuple[int, int], str]] = {}
    for doc in docs:
        smp = figures.data(doc, "smp") or {}
        if not figures.records(doc, "smp", "ap"):
            continue
        key = (smp.get("cpus") or 0, smp.get("nodes") or 0)
        mode = lpj_mode(doc)
        if mode not in best or key > best[mode][0]:
            best[mode] = (key, resultset.name_of(doc))
    return [name for _, name in best.values()]


def _numbers(value) -> bool:
    return isinstance(value, list) and bool(value) and all(
        isinstance(v, (int, float)) and not isinstance(v, bool)
        for v in value)


@dataclass
class PmiData:
    # figure name -> {scenario: [samples]} where the DATA carries samples
    # or histogram buckets; figure -> {scenario: {percentile: value}}
    samples: dict = field(default_factory=dict)
    percentiles: dict = field(default_factory=dict)
    histograms: dict = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not (self.samples or self.percentiles or self.histograms)


def pmi(docs) -> PmiData:
    """Skid and delivery-gap distributions from pmi_stress DATA: raw
    samples (a list of numbers), histograms ({"edges": [...], "counts":
    [...]}), or percentile summaries ({"p50": .., "p99": .., "max": ..})
    as the documented DATA line gives them."""
    out = PmiData()
    for doc in docs:
        obj = figures.data(doc, "pmi_stress")
        if not obj:
            continue
        name = resultset.name_of(doc)
        for key, value in obj.items():
            if not any(w in key for w in ("skid", "gap")):
                continue
            if _numbers(value):
                out.samples.setdefault(key, {}).setdefault(name, []).extend(
                    value)
            elif isinstance(value, dict) and _numbers(value.get("counts")):
                out.histograms.setdefault(key, {})[name] = value
            elif isinstance(value, dict):
                pct = {k: v for k, v in value.items()
                       if isinstance(v, (int, float))
                       and not isinstance(v, bool)}
                if pct:
                    out.percentiles.setdefault(key, {}).setdefault(name, pct)
    return out
