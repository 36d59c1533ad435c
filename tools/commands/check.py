# SPDX-License-Identifier: MIT
"""Run every hvprobe test there is and count the cases: the host unit test
binary, the tools' own Python tests, a short run of each parser fuzz
target, then the guest runs of tools/matrices/check.toml (each one a
scenario, booted as tools/run boots it), a few at a time.

A case is one leaf KTAP result, one Python test method, one fuzz target,
one host check of a guest run, one crash, or one negative run. Logs go to
results/check-<date-time>/. The last line is `N passed, N failed, N
skipped`; --json and --junit write the rows for machines as well.

Exit status: 0 nothing failed, 1 something failed, 2 bad usage, 130
interrupted (Ctrl-C, SIGTERM or SIGHUP: the running guests are killed).
"""

import collections
import concurrent.futures
import datetime
import fnmatch
import functools
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

from tools import ROOT, TOOLS
from tools.lib import cli, hostinfo
from tools.lib.analysis import coverage, results
from tools.lib.base import jsonfile
from tools.lib.base.exits import (EXIT_CANNOT_RUN, EXIT_INTERRUPTED,
                                  CannotWrite)
from tools.lib.checks import fuzz, kunit, python, referee, style, unit
from tools.lib.checks.guests import Context, guest_run
from tools.lib.checks.nested import leg as nested_runs
from tools.lib.checks.nested import nmi_cancels
from tools.lib.checks.referee import REFEREE
from tools.lib.launch import kvm, serial
from tools.lib.launch import scenario as scen
from tools.lib.probe import probecheck

RUNS = TOOLS / "matrices" / "check.toml"

# The rows before the guest runs, in this order: a name and a function
# of the log folder that returns (Counts, verdict, text shown when
# something failed). A new row is one more line here.
ROWS = (
    ("layering", style.layering_row),
    ("format", functools.partial(style.format_row, root=ROOT)),
    ("lint", style.lint_row),
    ("types", functools.partial(style.types_row, root=ROOT)),
    ("unit", unit.row),
    ("python", python.row),
    ("fuzz", fuzz.row),
    ("host-probe", probecheck.row),
)
# The rows of ROWS that need no guest run and take a minute or more: they
# run beside the guest runs, as workers come free, for the L1 legs keep
# one worker for minutes while the other runs out of plain runs.
BESIDE_RUNS = frozenset({"python", "fuzz"})
# How a run of the matrix runs, by its tool (scenario.RUNNERS): a
# function of the run, the log folder and the runs' Context.
TOOLS_RUN_BY_NAME = {"run": guest_run, "linux-referee": referee.referee_run}
# The rows after the guest runs, over what they wrote, each with what can
# be made ready beside the guest runs (a function of nothing) or None.
AFTER_RUNS = (
    ("kunit", kunit.row, kunit.prefetch),
)


class UsageError(Exception):
    pass


def parse_args(argv):
    p = cli.parser("tools/check", __doc__)
    p.add_argument("-j", "--jobs", type=int, default=2, metavar="N",
                   help="guest runs at a time (default: 2)")
    cli.no_build(p, " (make check already did)")
    cli.results_option(p, ROOT, "parent of the check-* log folder")
    p.add_argument("--runs", metavar="FILE", default=str(RUNS),
                   help="the guest runs, a matrix file (default: "
                        "tools/matrices/check.toml)")
    p.add_argument("--only", action="append", metavar="PATTERN",
                   help="only the rows and guest runs whose name matches "
                        "(a glob: 'smp-*', kunit); repeatable")
    p.add_argument("--json", metavar="FILE",
                   help="also write the rows and the total as JSON")
    p.add_argument("--junit", metavar="FILE",
                   help="also write the rows as JUnit XML (one test case "
                        "per row, for CI systems)")
    cli.qemu_option(p)
    args = p.parse_args(argv)
    if args.jobs < 1:
        p.error("-j needs at least 1")
    try:
        args.guest_runs = load_runs(args.runs)
    except UsageError as err:
        p.error(str(err))
    if args.only:
        names = [n for n, *_ in ROWS + AFTER_RUNS] + \
            [r.name for r in args.guest_runs] + \
            [f"{r.name}@{k}" for r in args.guest_runs
             for k in r.host_kernels]
        unmatched = [o for o in args.only
                     if not any(fnmatch.fnmatchcase(n, o) for n in names)]
        if unmatched:
            p.error(f"--only {unmatched[0]!r} matches no row or run (rows: "
                    f"{', '.join(n for n, *_ in ROWS + AFTER_RUNS)}; runs: "
                    f"{os.path.relpath(args.runs)})")
    return args


def chosen(args, name):
    """Whether --only (if given) names this row or run."""
    return not args.only or any(fnmatch.fnmatchcase(name, o)
                                for o in args.only)


def junit(rows, total, seconds):
    """The rows as JUnit XML: a test case each, failed with its text, or
    skipped when it only skipped."""
    suite = ET.Element("testsuite", name="hvprobe", tests=str(len(rows)),
                       failures=str(sum(r["failed"] > 0 for r in rows)),
                       skipped=str(sum(r["failed"] == 0 and r["passed"] == 0
                                       and r["skipped"] > 0 for r in rows)),
                       time=f"{seconds:.3f}")
    for r in rows:
        case = ET.SubElement(suite, "testcase", classname="hvprobe.check",
                             name=r["name"], time=f"{r['seconds']:.3f}")
        if r["failed"]:
            failure = ET.SubElement(case, "failure", message=(
                f"{r['verdict']}: {r['failed']} failed"))
            failure.text = r["text"]
        elif r["skipped"] and not r["passed"]:
            ET.SubElement(case, "skipped", message=r["text"].strip()[:200])
        case.set("assertions", str(r["passed"] + r["failed"]))
    out = ET.ElementTree(ET.Element("testsuites"))
    out.getroot().append(suite)
    ET.indent(out)
    return ET.tostring(out.getroot(), encoding="unicode") + "\n"


def load_runs(path):
    """The guest runs: the RunSpecs of a matrix file, which
    tools/lib/launch/scenario.py checks (make check's names, keys and
    values)."""
    try:
        specs, left_out, _, repeat = scen.load_matrix(path)
    except scen.ScenarioError as err:
        raise UsageError(str(err)) from None
    if left_out or repeat != 1 or any(s.axes for s in specs):
        # Each row is one run: a row may not vanish, nor count twice.
        raise UsageError(f"{path}: make check's runs are listed one by "
                         "one, without cross or repeat")
    return specs


def indented(text, limit=40):
    lines = text.rstrip().splitlines()[-limit:]
    return "".join(f"    {line}\n" for line in lines)


def build():
    """The default goal, the unit test binary, the fuzz targets; None when
    all built, else the command that failed."""
    for goal in ([], [str(unit.UNIT.relative_to(ROOT))], ["fuzz-build"]):
        cmd = ["make", "-s", *goal]
        if subprocess.run(cmd, cwd=ROOT, stdin=subprocess.DEVNULL,
                          **cli.as_owner(ROOT)).returncode:
            return " ".join(cmd)
    return None


def qemu_version():
    """QEMU's (major, minor), or (0, 0) when it cannot say (hostinfo
    caches it; a cache here would keep a fake host's, as kvm_works()
    says)."""
    return hostinfo.qemu_release()


def kvm_works():
    """(ok, reason) of tools/lib/launch/kvm.py, asked before the runs
    start, so that parallel runs find its probe boot cached. Not cached
    here: the python row runs tools/check in this process under fake
    hosts, whose answers must not become this machine's."""
    return kvm.works(str(ROOT), hostinfo.qemu_version())


def machine_lines(ctx):
    """What this machine ran the guests on and what it could not exercise:
    the lines before the total."""
    docs = [d for d in ctx.seen.values() if isinstance(d, dict)]
    skipped = sorted((n, d) for n, d in ctx.seen.items()
                     if isinstance(d, str))
    accels = collections.Counter(d["accel"] for d in docs)
    used = ", ".join(f"{a} ({n} run{'s' * (n != 1)})"
                     for a, n in sorted(accels.items())) or "none"
    ok, why = ctx.kvm
    f = kvm.flavour()
    pmu = {None: "enable_pmu unknown", True: "enable_pmu=Y",
           False: "enable_pmu=N"}[f["enable_pmu"]]
    lines = [f"qemu: {hostinfo.qemu_version() or 'version unknown'}",
             f"accelerators: {used}",
             f"kvm: {f['module'] or 'no vendor module'}, {pmu}, host "
             f"kernel {f['kernel']}: {'works' if ok else 'not used'} ({why})"]
    for label, (outcome, names) in sorted(ctx.nested.items()):
        info = outcome.info
        lines.append(f"host kernel {label}: Linux {info.get('release')} as "
                     f"L1 under {outcome.l0.accel} ({info.get('module')}, "
                     f"enable_pmu={info.get('enable_pmu')}), up in "
                     f"{info.get('boot_s')} s, {outcome.wall_s:.0f} s in "
                     f"all{boots_of(outcome)}: {', '.join(names)}, "
                     "host-probe")
        counted = nmi_cancels(outcome.console.parent.parent)
        if counted:
            lines.append(f"host kernel {label}: {counted[0]} VM-entries "
                         f"cancelled, {counted[1]} of them after an NMI "
                         f"injection, for {counted[2]} NMI injections "
                         "(kvm_inject_nmi) in nmi_storm's window")
    return lines + coverage.lines(docs, skipped)


def boots_of(outcome) -> str:
    """The L1 boots a leg took, where L1 was booted again."""
    return f" over {outcome.boots} L1 boots" if outcome.boots > 1 else ""


def timed(step, *args):
    start = time.monotonic()
    return (*step(*args), time.monotonic() - start)


def split_runs(args):
    """(the plain runs --only chooses, {host kernel label: its runs})."""
    plain = [r for r in args.guest_runs if not r.host_kernels
             and chosen(args, r.name)]
    by_kernel = {}
    for run in args.guest_runs:
        for label in run.host_kernels:
            if chosen(args, run.name) or \
                    chosen(args, f"{run.name}@{label}"):
                by_kernel.setdefault(label, []).append(run)
    return plain, by_kernel


class Board:
    """The rows as they finish: a line each (and the text of a failure),
    kept for --json and --junit, and their total."""

    def __init__(self, names):
        self.width = max(len(n) for n in names)
        self.rows = []
        self.total = results.Counts()

    def finished(self, name, counts, verdict, text, seconds):
        # Not in the form of the total, which must stay alone on its line.
        print(f"{name:{self.width}}  {verdict:10} {counts.passed:3} pass "
              f"{counts.failed:3} fail {counts.skipped:3} skip  "
              f"({seconds:.1f} s)", flush=True)
        if counts.failed:
            print(indented(text), end="", flush=True)
        self.rows.append({
            "name": name, "verdict": verdict, "passed": counts.passed,
            "failed": counts.failed, "skipped": counts.skipped,
            "seconds": round(seconds, 3),
            "text": text if counts.failed or not counts.passed else ""})
        self.total += counts

    def steps(self, args, table, log_dir):
        """The rows of table (ROWS or AFTER_RUNS) that --only chooses,
        but for those that run beside the guest runs."""
        for name, step, *_ in table:
            if chosen(args, name) and name not in BESIDE_RUNS:
                self.finished(name, *timed(step, log_dir))


def guest_runs(args, plain, by_kernel, log_dir, ctx, board):
    """The guest runs and the rows beside them (BESIDE_RUNS, and what
    AFTER_RUNS can ready), args.jobs at a time, onto board;
    KeyboardInterrupt (or CannotWrite: a full disk) once every run has
    stopped, when one came."""
    def leg(label, runs):
        start = time.monotonic()
        rows = nested_runs(label, runs, log_dir, ctx)
        took = (time.monotonic() - start) / max(len(rows), 1)
        return [(*row, took) for row in rows]

    def one(run):
        step = TOOLS_RUN_BY_NAME[run.tool]
        return [(run.name, *timed(step, run, log_dir, ctx))]

    def row(name, step):
        return [(name, *timed(step, log_dir))]

    def ready(job):
        job()
        return []

    pool = concurrent.futures.ThreadPoolExecutor(args.jobs)
    try:
        # The L1 legs first, one after another in one job: two L1s at
        # once share 2 cores four ways, and a starved L1 loses perf
        # records. The other workers take the plain runs meanwhile.
        futures = [pool.submit(lambda: [row for label, runs in
                                        by_kernel.items()
                                        for row in leg(label, runs)])] \
            if by_kernel else []
        futures += [pool.submit(row, name, step) for name, step in ROWS
                    if name in BESIDE_RUNS and chosen(args, name)]
        futures += [pool.submit(ready, job) for name, _, job in AFTER_RUNS
                    if job and chosen(args, name)]
        futures += [pool.submit(one, run) for run in plain]
        for future in concurrent.futures.as_completed(futures):
            for name, *row in future.result():
                board.finished(name, *row)
    except (KeyboardInterrupt, CannotWrite):
        # No run starts any more, the running ones die with their QEMUs
        # and are counted as neither passed nor failed.
        serial.stop_all()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    finally:
        pool.shutdown(wait=True)


def write_summaries(args, board, log_dir, began):
    """--json and --junit; a summary that cannot be written fails."""
    total = board.total
    try:
        if args.json:
            jsonfile.write(args.json, {
                "passed": total.passed, "failed": total.failed,
                "skipped": total.skipped, "logs": str(log_dir),
                "rows": board.rows})
        if args.junit:
            jsonfile.write_text(args.junit, junit(board.rows, total,
                                                  time.monotonic() - began))
    except OSError as err:
        print(f"tools/check: cannot write the summary: {err}",
              file=sys.stderr)
        total.failed += 1


def main(argv):
    args = parse_args(argv)
    cli.use_qemu(args)
    began = time.monotonic()
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    try:
        log_dir = results.new_dir(args.results, f"check-{stamp}")
    except OSError as err:
        print(f"tools/check: cannot make a log folder: {err}",
              file=sys.stderr)
        return 2
    plain, by_kernel = split_runs(args)
    board = Board([name for name, *_ in ROWS + AFTER_RUNS] +
                  [r.name for r in plain] +
                  [f"{r.name}@{k}" for k, runs in by_kernel.items()
                   for r in runs] +
                  [f"{n}@{k}" for k in by_kernel
                   for n in ("host-probe", REFEREE)])

    if not args.no_build:
        print("running: make (the kernel, the unit tests, the fuzzers)",
              flush=True)
    failed = None if args.no_build else build()
    if failed:
        print(f"build: {failed} failed", flush=True)
        board.total.failed += 1

    board.steps(args, ROWS, log_dir)
    ctx = Context(kvm_works(), qemu_version())
    try:
        guest_runs(args, plain, by_kernel, log_dir, ctx, board)
    except KeyboardInterrupt:
        print(f"tools/check: interrupted; logs: {log_dir}", file=sys.stderr)
        print(board.total)
        return EXIT_INTERRUPTED
    board.steps(args, AFTER_RUNS, log_dir)

    print(f"logs: {log_dir}", flush=True)
    for line in machine_lines(ctx):
        print(line)
    write_summaries(args, board, log_dir, began)
    print(board.total)
    return 0 if board.total.failed == 0 else 1


# What tools/entry.py turns into an exit status, with the message.
EXITS = {CannotWrite: EXIT_CANNOT_RUN}
