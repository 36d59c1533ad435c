# SPDX-License-Identifier: MIT
"""Draw hvprobe results: bring-up time against vCPU count, per-AP
timelines, PMI skid and delivery-gap distributions.

Takes what tools/report takes (batch or run folders, results.json files,
serial logs). Writes PNG or SVG files and prints their paths:

  bringup.EXT        bring-up time (guest's own clock, ms, log scale)
                     against vCPUs, one line per lpj mode and NUMA layout;
                     points are medians, bars the range of the repeats
  timeline-NAME.EXT  one scenario's APs (first run): INIT to SIPI, SIPI to
                     alive, alive to calibrated, calibrated to online
  pmi.EXT            pmi_stress skid and gap: histograms where DATA holds
                     samples or buckets, else its percentiles per scenario

A figure with no data is reported as such ("no data") and not drawn.
matplotlib comes from Debian's python3-matplotlib, installed on demand
(tools/deps) when missing.

Exit status: 0 at least one picture written, 1 nothing to draw, 2 bad
usage, 3 matplotlib unavailable.
"""

import os
import subprocess
import sys
from pathlib import Path

from tools import ROOT, TOOLS
from tools.lib import cli
from tools.lib.analysis import plotdata, resultset

# Debian's package installs for Debian's interpreter; this is what tools/deps
# checks for, and the interpreter to retry under when another python3
# (pyenv, a venv) runs this script.
MPL_PROBE = "/usr/lib/python3/dist-packages/matplotlib/__init__.py"
SYSTEM_PYTHON = "/usr/bin/python3"
MAX_TIMELINES = 12
PHASE_COLOURS = ("#c7c7c7", "#1f77b4", "#d62728", "#2ca02c")


def import_matplotlib():
    """matplotlib.pyplot with a file-only backend; installs Debian's
    package if it is missing, and moves to Debian's python3 if this one
    cannot see it. Returns None when neither works."""
    try:
        import matplotlib
    except ImportError:
        if not os.path.exists(MPL_PROBE):
            print("tools/plot: matplotlib is missing; tools/deps installs "
                  "Debian's python3-matplotlib (as root; else it says how)",
                  file=sys.stderr, flush=True)
            subprocess.run([str(TOOLS / "deps"),
                            f"{MPL_PROBE}:python3-matplotlib"],
                           stdin=subprocess.DEVNULL)
        if os.path.exists(MPL_PROBE) and os.path.exists(SYSTEM_PYTHON) and \
                os.path.realpath(sys.executable) != \
                os.path.realpath(SYSTEM_PYTHON) and \
                not os.environ.get("HVPROBE_PLOT_REEXEC"):
            os.environ["HVPROBE_PLOT_REEXEC"] = "1"
            os.execv(SYSTEM_PYTHON, [SYSTEM_PYTHON, *sys.argv])
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def parse_args(argv):
    p = cli.parser("tools/plot", __doc__)
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.add_argument("-o", "--output", metavar="DIR",
                   help="where pictures go (default: DIR/plots for a "
                        "folder given first, else results/plots)")
    p.add_argument("--format", choices=("png", "svg"), default="png")
    p.add_argument("--only", action="append",
                   choices=("bringup", "timeline", "pmi"),
                   help="draw only these (repeatable; default: all)")
    p.add_argument("--timeline", action="append", metavar="SCENARIO",
                   help="scenarios to draw timelines for (default: for "
                        "each lpj mode, the scenario with the most vCPUs "
                        "and nodes)")
    return p.parse_args(argv)


def bringup(plt, docs, path):
    series = plotdata.bringup_series(docs)
    if not series:
        return "no data (no run has smp DATA with a bring-up time)"
    fig, ax = plt.subplots(figsize=(8, 5))
    # One colour per lpj mode, one line style and marker per node count,
    # so that both dimensions read off the legend at a glance.
    modes = list(dict.fromkeys(s.label.rsplit(", ", 1)[0] for s in series))
    layouts = list(dict.fromkeys(s.label.rsplit(", ", 1)[-1]
                                 for s in series))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    styles, markers = ("-", "--", ":", "-."), "osD^v<>p"
    for s in series:
        mode, layout = s.label.rsplit(", ", 1)
        m_i, l_i = modes.index(mode), layouts.index(layout)
        xs = [v for v, _ in s.points]
        ys = [max(m.median, 1e-3) for _, m in s.points]
        err = [[max(m.median - m.low, 0) for _, m in s.points],
               [max(m.high - m.median, 0) for _, m in s.points]]
        ax.errorbar(xs, ys, yerr=err, color=colours[m_i % len(colours)],
                    linestyle=styles[l_i % len(styles)],
                    marker=markers[l_i % len(markers)], capsize=3,
                    label=s.label)
    ax.set_yscale("log")
    ax.set_xscale("log", base=2)
    vcpus = sorted({v for s in series for v, _ in s.points})
    ax.set_xticks(vcpus)
    ax.set_xticklabels([str(v) for v in vcpus])
    ax.set_xlabel("vCPUs")
    ax.set_ylabel("bring-up time, guest clock (ms, log scale)")
    ax.set_title("SMP bring-up time by lpj mode and NUMA layout")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return None


def timeline(plt, tl, path):
    height = max(2.5, 0.28 * len(tl.bars) + 1.5)
    fig, ax = plt.subplots(figsize=(9, height))
    for row, (_, segs) in enumerate(tl.bars):
        for start, length, phase in segs:
            ax.barh(row, max(length, 1e-3), left=start, height=0.7,
                    color=PHASE_COLOURS[phase])
        if segs:
            # A tick where the AP ended up, so that an AP whose phases
            # are all too short to see still shows.
            start, length, phase = segs[-1]
            ax.plot([start + length], [row], marker="|", color="black",
                    markersize=10)
    ax.set_yticks(range(len(tl.bars)))
    ax.set_yticklabels([label for label, _ in tl.bars], fontsize="small")
    ax.invert_yaxis()
    ax.set_xlabel("ms since bring-up began (guest clock)")
    title = f"AP bring-up timeline: {tl.name}"
    if tl.total_ms is not None:
        title += f" ({tl.total_ms:.1f} ms in all)"
    ax.set_title(title)
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in PHASE_COLOURS]
    ax.legend(handles, plotdata.AP_PHASES, fontsize="small",
              loc="upper left", bbox_to_anchor=(1.01, 1))
    ax.grid(True, axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def pmi(plt, data, path):
    if data.empty:
        return "no data (no pmi_stress skid or gap figures: the test " \
               "needs a vPMU, QEMU/KVM with -cpu host,pmu=on)"
    panels = [("samples", k, v) for k, v in data.samples.items()] + \
        [("histogram", k, v) for k, v in data.histograms.items()] + \
        [("percentiles", k, v) for k, v in data.percentiles.items()]
    fig, axes = plt.subplots(len(panels), 1, figsize=(8, 3.5 * len(panels)),
                             squeeze=False)
    for ax, (kind, key, by_run) in zip(axes[:, 0], panels):
        unit = "cycles" if "cycles" in key else "events"
        if kind == "samples":
            for name, values in by_run.items():
                ax.hist(values, bins=40, alpha=0.5, label=name)
            ax.set_ylabel("PMIs")
        elif kind == "histogram":
            for name, h in by_run.items():
                counts = h["counts"]
                edges = h.get("edges") or list(range(len(counts) + 1))
                ax.stairs(counts, edges[:len(counts) + 1], label=name)
            ax.set_ylabel("PMIs")
        else:
            names = list(by_run)
            keys = sorted({k for p in by_run.values() for k in p},
                          key=_percentile_order)
            width = 0.8 / max(len(keys), 1)
            for j, k in enumerate(keys):
                ax.bar([i + j * width for i in range(len(names))],
                       [by_run[n].get(k, 0) for n in names], width,
                       label=k)
            ax.set_xticks([i + width * (len(keys) - 1) / 2
                           for i in range(len(names))])
            ax.set_xticklabels(names, fontsize="small")
            ax.set_ylabel(unit)
        ax.set_title(f"pmi_stress {key} ({kind})")
        ax.set_xlabel(unit if kind != "percentiles" else "scenario")
        ax.legend(fontsize="small")
        ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return None


def _percentile_order(key):
    order = {"min": 0, "median": 50, "p50": 50, "mean": 51, "max": 1000}
    if key in order:
        return order[key]
    digits = "".join(c for c in key if c.isdigit())
    return int(digits) if digits else 999


def main(argv):
    args = parse_args(argv)
    docs = resultset.load_noting(args.paths, "tools/plot")
    if not docs:
        return 1
    plt = import_matplotlib()
    if plt is None:
        print("tools/plot: matplotlib is not available (Debian: apt-get "
              "install python3-matplotlib)", file=sys.stderr)
        return 3
    first = Path(args.paths[0])
    out = Path(args.output) if args.output else \
        (first / "plots" if first.is_dir() else ROOT / "results" / "plots")
    out.mkdir(parents=True, exist_ok=True)
    only = set(args.only or ("bringup", "timeline", "pmi"))
    written = []

    if "bringup" in only:
        path = out / f"bringup.{args.format}"
        why = bringup(plt, docs, path)
        print(f"bringup: {why}" if why else f"bringup: {path}")
        written += [] if why else [path]
    if "timeline" in only:
        groups = resultset.grouped(docs)
        names = args.timeline or plotdata.timeline_choice(docs)
        drawn = 0
        for name in names:
            if name not in groups:
                print(f"timeline: no scenario {name!r}")
                continue
            tl = plotdata.timeline(groups[name][0])
            if tl is None:
                if args.timeline:
                    print(f"timeline {name}: no data (no per-AP smp DATA)")
                continue
            if drawn == MAX_TIMELINES:
                print(f"timeline: more than {MAX_TIMELINES} scenarios; "
                      "name the rest with --timeline")
                break
            safe = "".join(c if c.isalnum() or c in "-_.+" else "_"
                           for c in name)
            path = out / f"timeline-{safe}.{args.format}"
            timeline(plt, tl, path)
            print(f"timeline: {path}")
            written.append(path)
            drawn += 1
        if not drawn and not args.timeline:
            print("timeline: no data (no run has per-AP smp DATA)")
    if "pmi" in only:
        path = out / f"pmi.{args.format}"
        why = pmi(plt, plotdata.pmi(docs), path)
        print(f"pmi: {why}" if why else f"pmi: {path}")
        written += [] if why else [path]
    return 0 if written else 1
