# SPDX-License-Identifier: MIT
"""Compare two sets of hvprobe results, scenario by scenario and figure
by figure, and say which figures changed beyond the noise.

BASE is a batch folder (tools/run --matrix ... --repeat N), a results
tree, a results.json file or a serial log; NEW is one or more of these. Runs are matched by scenario name;
repeats of a scenario give each figure's median and range (min to max).
A figure whose two ranges overlap is "no change": the repeats cannot tell
the difference from noise. Otherwise it went "up" or "down" by the
change of the medians; with a single run on a side the noise is unknown
and the verdict says so. Two sets of the same thing still miss each
other by chance 10 % of the time with 3 repeats, 0.8 % with 5
(tools/lib/analysis/stats.py says why): use --repeat 5 when it matters.

Only runs that passed are compared: the figures of a crashed or failed
run measure something else. The others are counted and named.

Exit status: 0 no figure changed, 1 some figure changed, 2 bad usage or
nothing to compare, 3 no figure changed but a side had runs that did not
pass (left out).
"""

import sys

from tools.lib import cli
from tools.lib.analysis import comparison, resultset, stats
from tools.lib.analysis.table import FORMATS, Column, render


def parse_args(argv):
    p = cli.parser("tools/compare", __doc__)
    p.add_argument("base", metavar="BASE", help="the reference results")
    p.add_argument("new", metavar="NEW", nargs="+",
                   help="the results to judge against BASE")
    p.add_argument("--figure", action="append", metavar="PATTERN",
                   help="only figures matching (smp.total_us, 'smp.*'); "
                        "repeatable (default: all)")
    p.add_argument("--changed", action="store_true",
                   help="list only the figures that changed")
    p.add_argument("--all", action="store_true",
                   help="also list figures that are the same constant "
                        "everywhere (configuration, not measurement)")
    p.add_argument("--format", choices=FORMATS, default="text",
                   help="default: text")
    return p.parse_args(argv)


def number(value):
    if value is None:
        return "-"
    if isinstance(value, float) and not value.is_integer():
        return f"{value:.4g}" if abs(value) < 1000 else f"{value:.0f}"
    return f"{int(value)}"


def summary(s):
    if s is None:
        return "-"
    if s.n == 1 or s.low == s.high:
        return f"{number(s.median)} (n={s.n})"
    return f"{number(s.median)} [{number(s.low)}..{number(s.high)}] (n={s.n})"


def verdict_text(row):
    v = row.verdict
    if v.verdict == stats.MISSING:
        return "only in base" if row.new is None else "only in new"
    text = v.verdict
    if v.verdict != stats.NO_CHANGE and not v.noise_known:
        text += " (1 run: noise unknown)"
    return text


def change_text(row):
    pct = row.verdict.change_pct
    return "-" if pct is None else f"{pct:+.1f} %"


def keep_passing(base, new):
    """Leave only the passing runs on each side, saying what was left out;
    {side: {verdict: count}} of what was."""
    left_out = {}
    for side, docs in (("base", base), ("new", new)):
        good, others = comparison.passing(docs)
        if others:
            left_out[side] = others
            print(f"tools/compare: {side}: left out "
                  + ", ".join(f"{n} {v}" for v, n in sorted(others.items()))
                  + f" run{'s' * (sum(others.values()) != 1)} (only "
                  "passing runs are compared)", file=sys.stderr)
        docs[:] = good
    return left_out


def columns(fmt):
    """The table's columns; csv and json spread each side's summary."""
    cols = [Column("scenario", "scenario"), Column("figure", "figure"),
            Column("unit", "unit"), Column("base", "base", numeric=True),
            Column("new", "new", numeric=True),
            Column("change", "change", numeric=True),
            Column("verdict", "verdict")]
    if fmt in ("csv", "json"):
        cols[3:6] = [Column(k, k, numeric=True) for k in (
            "base_median", "base_min", "base_max", "base_n", "new_median",
            "new_min", "new_max", "new_n", "change_pct")]
    return cols


def table_row(r):
    """One compared figure as the table's row."""
    row = {"scenario": r.scenario, "figure": r.figure, "unit": r.unit,
           "base": summary(r.base), "new": summary(r.new),
           "change": change_text(r), "verdict": verdict_text(r),
           "change_pct": None if r.verdict.change_pct is None
           else round(r.verdict.change_pct, 3)}
    for side, s in (("base", r.base), ("new", r.new)):
        for key, attr in (("median", "median"), ("min", "low"),
                          ("max", "high"), ("n", "n")):
            row[f"{side}_{key}"] = None if s is None else getattr(s, attr)
    return row


def main(argv):
    args = parse_args(argv)
    base = resultset.load_noting([args.base], "tools/compare", empty=None)
    new = resultset.load_noting(args.new, "tools/compare", empty=None)
    left_out = keep_passing(base, new)
    if not base or not new:
        print("tools/compare: nothing to compare (no passing results on "
              "one side)", file=sys.stderr)
        return 2
    rows, only_base, only_new = comparison.compare(base, new,
                                                   args.figure or ["*"])
    if not rows:
        print("tools/compare: the two sets share no scenario with figures "
              f"(base: {', '.join(resultset.grouped(base))}; new: "
              f"{', '.join(resultset.grouped(new))})", file=sys.stderr)
        return 2
    shown = [r for r in rows if (args.all or not r.constant) and
             (not args.changed or
              r.verdict.verdict in (stats.UP, stats.DOWN))]
    cols = columns(args.format)
    table = [table_row(r) for r in shown]
    hosts = {side: sorted({resultset.host_label(d) or "this machine"
                           for d in docs})
             for side, docs in (("base", base), ("new", new))}
    if args.format == "text" and hosts["base"] != hosts["new"]:
        # Comparing host kernels: say which ran where, and that nested
        # timing is not a host's.
        print("\n".join(f"{side}: ran on {', '.join(h)}"
                        for side, h in hosts.items()))
    sys.stdout.write(render(cols, table, args.format))
    counts = comparison.tally(rows)
    if args.format in ("text", "markdown"):
        print(f"\n{len(rows)} figures in "
              f"{len({r.scenario for r in rows})} scenarios: "
              f"{counts['no change']} no change, {counts['changed']} "
              f"changed, {counts['missing']} on one side only, "
              f"{counts['constant']} constant ("
              f"{'listed' if args.all else 'not listed'})")
        for name in only_base:
            print(f"only in base: {name}")
        for name in only_new:
            print(f"only in new: {name}")
    if counts["changed"]:
        return 1
    return 3 if left_out else 0
