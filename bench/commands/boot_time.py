# SPDX-License-Identifier: MIT
"""Boot-time benchmark: wall time from QEMU's start to the first KTAP line
and to the totals line, per boot path, median and spread of N runs.

The times are host-side (tools/run stamps each serial line as it arrives),
because a guest's own clock is unreliable under TCG. Firmware dominates
the bios and uefi rows; the kernel row is hvprobe's own start-up. Results
go to results/bench-boot.json as well as to the table.
"""

import argparse
import sys
import tempfile
from pathlib import Path

from tools import ROOT
from tools.lib import cli
from tools.lib.base import jsonfile
from tools.lib.analysis import stats
from tools.lib.launch import batch, qemu
from tools.lib.launch.scenario import RunSpec

BOOTS = qemu.BOOTS


def one_run(spec, results, kvm):
    """(first_ktap_s, totals_s) of one run of spec, booted as tools/run
    boots each run of a batch, or None when it failed (what tools/run
    would have printed goes to stderr)."""
    record, outcome = batch.run_one(spec, results, kvm)
    if outcome is None or not outcome.ok:
        said = outcome.lines if outcome else [f"{record['verdict'].upper()}"
                                              f": {record['reason']}"]
        sys.stderr.write("".join(f"{line}\n" for line in said))
        return None
    timing = outcome.doc["timing"]
    return timing["first_ktap_s"], timing["totals_s"]


def summary(values):
    s = stats.summarize(values)
    return {"median": round(s.median, 3), "min": round(s.low, 3),
            "max": round(s.high, 3)}


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                allow_abbrev=False)
    p.add_argument("-n", type=int, default=5, help="runs per boot path")
    p.add_argument("--accel", default="tcg", choices=("tcg", "kvm", "auto"))
    p.add_argument("--boot", action="append", choices=BOOTS,
                   help="boot path (repeatable; default: all three)")
    p.add_argument("cmdline", nargs="*", default=["test=all"],
                   help="kernel command line (default: test=all)")
    args = p.parse_args(argv)
    if args.n < 1:
        p.error("-n must be at least 1")

    if cli.build(ROOT):
        return 3
    sizes = {f: (ROOT / "build" / f).stat().st_size
             for f in ("hvprobe.elf", "hvprobe.elf32", "hvprobe.iso")}
    rows = {}
    kvm = batch.kvm_state()
    with tempfile.TemporaryDirectory() as results:
        for boot in args.boot or BOOTS:
            spec = RunSpec(name=boot, scenario=boot, boot=boot,
                           accel=args.accel, cmdline=list(args.cmdline))
            times = [one_run(spec, Path(results), kvm)
                     for _ in range(args.n)]
            if None in times:
                print(f"{boot}: a run failed", file=sys.stderr)
                return 1
            rows[boot] = {"first_ktap_s": summary([t[0] for t in times]),
                          "totals_s": summary([t[1] for t in times])}

    print(f"boot time, {args.accel}, median of {args.n} "
          f"(min..max), seconds from QEMU start")
    print(f"{'boot':8} {'first KTAP line':>24} {'totals line':>24}")
    for boot, row in rows.items():
        cells = [f"{r['median']:.3f} ({r['min']:.3f}..{r['max']:.3f})"
                 for r in (row["first_ktap_s"], row["totals_s"])]
        print(f"{boot:8} {cells[0]:>24} {cells[1]:>24}")
    print("image sizes: " + ", ".join(f"{f} {n} bytes"
                                      for f, n in sizes.items()))

    out = ROOT / "results" / "bench-boot.json"
    out.parent.mkdir(exist_ok=True)
    jsonfile.write(out, {"accel": args.accel, "runs": args.n,
                         "cmdline": args.cmdline, "sizes": sizes,
                         "boot": rows})
    return 0
