# SPDX-License-Identifier: MIT
"""Print the figures of one or many hvprobe runs as a table.

Takes results.json files, run or batch folders (tools/run --matrix), whole
results trees, and raw serial logs (a Hyper-V VM's COM1 as tools/hyperv
saves it: X.serial.log, described by X.meta.json), which are parsed here.
Repeats of one scenario fold into one row: median, and the range when
there are repeats. Times are in ms; the unit of any other figure follows
its DATA key (docs/results.md).

Exit status: 0 a table was printed, 1 nothing readable was found, 2 bad
usage.
"""

import sys

from tools.lib import cli
from tools.lib.base import text
from tools.lib.analysis import report, resultset


def parse_args(argv):
    p = cli.parser("tools/report", __doc__)
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="results.json, run or batch folder, or serial log")
    p.add_argument("--format", choices=report.FORMATS, default="text",
                   help="text (aligned columns), csv, json or markdown "
                        "(default: text)")
    p.add_argument("--figure", action="append", default=[],
                   metavar="NAME",
                   help="add a column for a figure (smp.total_us, or a "
                        "pattern: 'timers.*'); repeatable")
    p.add_argument("--runs", action="store_true",
                   help="one row per run instead of per scenario")
    p.add_argument("--all", action="store_true",
                   help="every figure, one per line (scenario, figure, "
                        "median, range, unit); --figure narrows it")
    p.add_argument("--problems", action="store_true",
                   help="also list what the parser could not read in each "
                        "log")
    return p.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    docs = resultset.load_noting(args.paths, "tools/report")
    if not docs:
        return 1
    if args.all:
        out = report.long_form(docs, args.format, args.figure or ["*"])
    else:
        out = report.render(docs, args.format, args.figure, args.runs)
    sys.stdout.write(out)
    if args.problems:
        for doc in docs:
            for problem in doc.get("problems") or []:
                print(text.escaped(f"{doc.get('run')}: {problem}"),
                      file=sys.stderr)
    return 0
