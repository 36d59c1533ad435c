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
import contextlib
import datetime
import fnmatch
import functools
import io
import json
import os
import subprocess
import sys
import time
import unittest
import xml.etree.ElementTree as ET

from tools import ROOT, TOOLS
from tools.lib import cli, hostinfo, layering, style
from tools.lib.base import jsonfile, signals
from tools.lib.analysis import coverage, ktap, kunit, results
from tools.lib.base.exits import EXIT_INTERRUPTED
from tools.lib.hostkernels import hostkernel, nested
from tools.lib.launch import batch, kvm, serial
from tools.lib.launch import scenario as scen
from tools.lib.probe import probecheck
from tools.lib.base.status import Status

UNIT = ROOT / "build" / "unit" / "hvprobe-unit"
RUNS = TOOLS / "matrices" / "check.toml"
UNIT_TIMEOUT_S = 300
# tools/linux-referee enforces each guest's own timeout; this only
# catches a referee that itself got stuck.
RUN_TIMEOUT_S = 900
# One nested run's share of its L1's time: a nested boot takes 10-30 s
# under a TCG L0, the first one also KVM's probe boot.
NESTED_TIMEOUT_S = 180
FUZZ = ROOT / "tests" / "fuzz" / "run"
KUNIT_CACHE = ROOT / "build" / "kunit"


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
        names = [n for n, _ in ROWS + AFTER_RUNS] + \
            [r.name for r in args.guest_runs] + \
            [f"{r.name}@{k}" for r in args.guest_runs
             for k in r.host_kernels]
        unmatched = [o for o in args.only
                     if not any(fnmatch.fnmatchcase(n, o) for n in names)]
        if unmatched:
            p.error(f"--only {unmatched[0]!r} matches no row or run (rows: "
                    f"{', '.join(n for n, _ in ROWS + AFTER_RUNS)}; runs: "
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
    for goal in ([], [str(UNIT.relative_to(ROOT))], ["fuzz-build"]):
        cmd = ["make", "-s", *goal]
        if subprocess.run(cmd, cwd=ROOT, stdin=subprocess.DEVNULL,
                          **cli.as_owner(ROOT)).returncode:
            return " ".join(cmd)
    return None


def unit_binary(log_dir):
    """The C host unit tests: their KTAP, counted with the guest's rules.
    Returns (counts, verdict, text to show on failure)."""
    if not UNIT.exists():
        return results.Counts(failed=1), "missing", \
            f"{UNIT.relative_to(ROOT)} was not built\n"
    try:
        done = subprocess.run([str(UNIT)], cwd=ROOT, capture_output=True,
                              stdin=subprocess.DEVNULL,
                              timeout=UNIT_TIMEOUT_S)
        out, err, rc = done.stdout, done.stderr, done.returncode
    except subprocess.TimeoutExpired as timeout:
        out, err, rc = timeout.stdout or b"", timeout.stderr or b"", None
    except OSError as error:
        return results.Counts(failed=1), Status.ERROR, \
            f"cannot run it: {error}\n"
    (log_dir / "unit.log").write_bytes(out + err)
    report = ktap.parse(out.splitlines())
    counts = results.count_unit(report, -1 if rc is None else rc)
    status = f"timed out after {UNIT_TIMEOUT_S} s" if rc is None \
        else f"exit status {rc}"
    text = f"{status}\n{(out + err).decode(errors='replace')}"
    return counts, Status.FAIL if counts.failed else Status.PASS, text


def fuzz_targets(log_dir):
    """Each fuzz target over the same fixed inputs on every machine
    (tests/fuzz/run --check); it prints KTAP with one result per target,
    counted like the unit tests'."""
    cmd = [sys.executable, str(FUZZ), "--check"]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True,
                          stdin=subprocess.DEVNULL)
    out = done.stdout + done.stderr
    (log_dir / "fuzz.log").write_bytes(out)
    counts = results.count_unit(ktap.parse(out.splitlines()),
                                done.returncode)
    return counts, Status.FAIL if counts.failed else Status.PASS, \
        out.decode(errors="replace")


def python_suite():
    """The Python tests: what `python3 -m unittest` at the checkout's root
    finds (the tests of the tools and bench packages), found the same
    way."""
    return unittest.defaultTestLoader.discover(str(ROOT),
                                               top_level_dir=str(ROOT))


@contextlib.contextmanager
def fds_into(path):
    """Standard output and error, file descriptors included, into path
    for the time of the block: what a child process prints (a test that
    runs make) goes to the log, not to the terminal."""
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    saved = [os.dup(1), os.dup(2)]
    try:
        with open(path, "wb") as out:
            os.dup2(out.fileno(), 1)
            os.dup2(out.fileno(), 2)
            try:
                yield
            finally:
                for stream in (sys.stdout, sys.stderr):
                    stream.flush()
                os.dup2(saved[0], 1)
                os.dup2(saved[1], 2)
    finally:
        for fd in saved:
            os.close(fd)


def python_tests(log_dir):
    """The Python tests, run here: one case per test method. What they
    and their children print besides goes to python-output.log."""
    stream = io.StringIO()
    suite = python_suite()
    with fds_into(log_dir / "python-output.log"):
        result = unittest.TextTestRunner(stream=stream,
                                         verbosity=2).run(suite)
    (log_dir / "python.log").write_text(stream.getvalue())
    counts = results.count_unittest(result)
    return counts, Status.FAIL if counts.failed else Status.PASS, \
        stream.getvalue()


@functools.lru_cache(maxsize=None)
def qemu_version():
    """QEMU's (major, minor), or (0, 0) when it cannot say."""
    return hostinfo.qemu_release()


@functools.lru_cache(maxsize=None)
def kvm_works():
    """(ok, reason) of tools/lib/launch/kvm.py, asked once, before the runs
    start, so that parallel runs find its probe boot cached."""
    return kvm.works(str(ROOT), hostinfo.qemu_version())


def too_old_qemu(run):
    """Why this QEMU cannot take run (min_qemu = "8.0", e.g. for TCG's
    x2APIC), or None."""
    need = run.min_qemu
    have = qemu_version()
    if need and have < tuple(int(x) for x in need.split(".")):
        return f"needs QEMU >= {need}, found {have[0]}.{have[1]}"
    return None


def kvm_state():
    """batch.kvm_state() over kvm_works()'s answer, for batch.run_one
    (not cached: the python row's tests stand in for kvm_works)."""
    return batch.kvm_state(kvm_works())


def guest_run(run, log_dir, seen):
    """One guest run, as tools/run boots it (batch.run_one), in its own
    folder under log_dir; its results.json goes into seen[run name]. A run this host cannot take is a skip that
    says why: without a working KVM, always; for want of a newer QEMU
    only outside CI: .ci/run installs one, and under CI=true losing the
    run is a failure, not a quiet skip."""
    missing = None
    if run.needs_kvm and not kvm_works()[0]:
        missing = f"needs KVM: {kvm_works()[1]}"
    elif too_old_qemu(run):
        missing = too_old_qemu(run)
        if os.environ.get("CI") == "true":
            return (results.Counts(failed=1), "lost",
                    f"CI=true and this run cannot take place: {missing}\n")
    if missing:
        seen[run.name] = missing
        return results.Counts(skipped=1), Status.SKIP, missing + "\n"
    record, outcome = batch.run_one(run, log_dir, kvm_state())
    if record["verdict"] == batch.INTERRUPTED:
        return results.Counts(), "interrupted", ""
    if outcome is None:
        # Nothing booted (no build, no media, QEMU would not start): what
        # tools/run would have said before exiting 3.
        return results.Counts(failed=1), "no result", \
            f"{record['verdict']}: {record['reason']}\n"
    return judged(run.name, 0 if outcome.ok else 1,
                  "".join(f"{line}\n" for line in outcome.lines),
                  outcome.doc, seen)


def judged(name, rc, text, doc, seen):
    """A guest run's row from how it ended (rc: tools/run's exit status,
    0 when it passed or failed as expected), what it said (text) and
    wrote (its results.json document, or None)."""
    if doc is None:
        return results.Counts(failed=1), "no result", text
    seen[name] = doc
    counts = results.count_run(doc)
    verdict = doc["verdict"]
    if doc.get("expect_fail") is not None:
        verdict = "expected" if doc.get("expected") else "unexpected"
    if (rc == 0) != (counts.failed == 0):
        # The runner and the counts disagree; the runner knows something.
        counts.failed += 1
        text += f"(tools/run exited {rc})\n"
    return counts, verdict, text


# What each L1 host kernel was, for make check's last lines.
NESTED = {}


def nested_runs(label, runs, log_dir, seen):
    """Every run of the catalogue that names host kernel label, one after
    another inside one boot of it as L1 (tools/lib/hostkernels/nested.py), in
    log_dir/on-LABEL/: [(row name, Counts, verdict, text)]. A kernel that
    cannot be had here skips its runs with the reason, except under
    CI=true, where .ci/run provides both series."""
    referee = label == REFEREE_L1
    names = [f"{run.name}@{label}" for run in runs] + \
        [f"host-probe@{label}"] + \
        ([f"{REFEREE}@{label}"] if referee else [])

    def all_rows(counts, verdict, text):
        return [(n, results.Counts(**vars(counts)), verdict, text)
                for n in names]
    try:
        kernel = hostkernel.resolve(label, log=lambda line: print(
            line, flush=True))
    except hostkernel.HostKernelError as err:
        why = f"host kernel {label}: {err}"
        for n in names:
            seen[n] = why
        if os.environ.get("CI") == "true":
            return all_rows(results.Counts(failed=1), "lost",
                            f"CI=true and {why}\n")
        return all_rows(results.Counts(skipped=1), Status.SKIP, why + "\n")
    share = log_dir / f"on-{label}"
    commands = [[sys.executable, str(TOOLS / "run"), "--no-build", "--quiet",
                 "--results", str(share), "--name", run.name, *run.run_argv()]
                for run in runs]
    # The host probe in kprobe mode on a real KVM: nmi_storm's NMI IPIs
    # against kvm_inject_nmi, and the VM-entries they cancelled.
    commands.append([sys.executable, "-m", "tools.lib.probe.probecheck",
                     str(share)])
    if referee:
        # Linux itself beside hvprobe under this host's Hyper-V
        # emulation, Hyper-V alone on two packages: the TSC rate from
        # the frequency MSR, the TSC "running on Hyper-V" unstable.
        # (tools/linux-referee --matrix runs the other scenarios.)
        commands.append(referee_command(share, "--accel", "kvm", "--cpu",
                                        REFEREE_NESTED_CPU, "--smp", "2",
                                        "--numa", "2", "--series",
                                        REFEREE_L2))
    l0 = nested.choose_l0(kvm.flavour()["module"], kvm_works()[0])
    try:
        outcome = nested.run(kernel, commands, share,
                             NESTED_TIMEOUT_S * len(commands), l0,
                             stream=None)
    except (nested.NestedError, OSError) as err:
        return all_rows(results.Counts(failed=1), "no L1", f"{err}\n")
    NESTED[label] = (outcome, [run.name for run in runs])
    rows = []
    for name, run, rc in zip(names, runs, outcome.statuses[:len(runs)]):
        path = share / run.name / "results.json"
        try:
            doc = json.loads(path.read_text())
        except (OSError, ValueError):
            doc = None
        text = f"inside L1 ({kernel.describe()}): exit status {rc}; " \
            f"console {outcome.console}\n"
        rows.append((name, *judged(name, rc, text, doc, seen)))
    rows.append((f"host-probe@{label}",
                 *probe_row(share, outcome.statuses[len(runs)])))
    if referee:
        rows.append((names[-1], *referee_counts(share / REFEREE,
                                                outcome.statuses[-1])))
    return rows


REFEREE = "linux-referee"
# The one nested referee scenario: Debian's 6.1 as L2 under L1 6.12 (a
# Linux of one series judged under another's KVM).
REFEREE_L1, REFEREE_L2 = "6.12", "6.1"
REFEREE_NESTED_CPU = "host,-arch-capabilities,hv-relaxed,hv-vpindex," \
    "hv-time,hv-frequencies,kvm=off"


def referee_command(results_dir, *args):
    return [sys.executable, str(TOOLS / "linux-referee"), "--no-build",
            "--results", str(results_dir), "--name", REFEREE, *args]


def referee_counts(folder, rc):
    """A row from tools/linux-referee's referee.json: per Linux series,
    the count of APs that calibrated and the boot CPU's lpj source each
    equal to hvprobe's, and hvprobe's run passed. Exit 3 (no kernel to
    boot) is a skip, except under CI=true."""
    try:
        doc = json.loads((folder / "referee.json").read_text())
    except (OSError, ValueError):
        doc = None
    if doc is None:
        why = f"tools/linux-referee exited {rc} and wrote no referee.json"
        if rc == 3 and os.environ.get("CI") != "true":
            return results.Counts(skipped=1), Status.SKIP, why + "\n"
        return results.Counts(failed=1), "no result", why + "\n"
    counts, text = results.Counts(), ""
    for row in doc["rows"]:
        linux, ours = row["linux"] or {}, row["hvprobe"]
        for ok, what in (
                (ours["verdict"] == Status.PASS,
                 f"hvprobe {row['policy']} passed"),
                (linux.get("calibrations") == ours["calibrations"],
                 f"APs that calibrated: Linux {row['release']} "
                 f"{linux.get('calibrations')}, hvprobe {row['policy']} "
                 f"{ours['calibrations']}"),
                (linux.get("bsp_lpj_source") == ours["bsp_lpj_source"],
                 f"boot CPU's lpj: Linux {linux.get('bsp_lpj_source')}, "
                 f"hvprobe {ours['bsp_lpj_source']}")):
            counts.add(Status.PASS if ok else Status.FAIL)
            text += f"{'PASS' if ok else 'FAIL'} {what}\n"
    return counts, Status.FAIL if counts.failed else Status.PASS, text


def referee_argv(run):
    """tools/linux-referee's options for a run with tool =
    "linux-referee": its accel, vcpus, numa and cpu."""
    cpu = run.cpu_for(run.accel) if isinstance(run.cpu, dict) else run.cpu
    return ["--accel", run.accel, "--smp", str(run.vcpus), "--numa",
            str(run.numa), *(["--cpu", cpu] if cpu else [])]


def referee_run(run, log_dir, seen):
    """A run with tool = "linux-referee": Debian's Linux beside hvprobe's
    policies of the same name, in log_dir/NAME."""
    cmd = [sys.executable, str(TOOLS / "linux-referee"), "--no-build",
           "--results", str(log_dir), "--name", run.name, *referee_argv(run)]
    try:
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True,
                              errors="replace", stdin=subprocess.DEVNULL,
                              timeout=RUN_TIMEOUT_S)
        rc, said = done.returncode, done.stdout + done.stderr
    except subprocess.TimeoutExpired:
        rc, said = None, f"still running after {RUN_TIMEOUT_S} s\n"
    counts, verdict, text = referee_counts(log_dir / run.name, rc)
    return counts, verdict, text + (said if counts.failed else "")


# How a run of the matrix runs, by its tool (scenario.RUNNERS).
TOOLS_RUN_BY_NAME = {"run": guest_run, "linux-referee": referee_run}


def probe_row(share, rc):
    """The host-probe row that ran inside L1 (python3 -m
    tools.lib.probe.probecheck), from the counts and text it left in share."""
    try:
        said = json.loads((share / "host-probe-row.json").read_text())
        counts = results.Counts(said["passed"], said["failed"],
                                said["skipped"])
        verdict = said["verdict"]
    except (OSError, ValueError, KeyError, TypeError):
        counts, verdict = results.Counts(failed=1), "no result"
    try:
        text = (share / "host-probe" / "probe.txt").read_text()
    except OSError:
        text = f"inside L1 the row exited {rc} and left no probe.txt\n"
    return counts, verdict, text


def nmi_cancels(share):
    """(cancels, after an NMI injection, NMI injections) the host probe
    counted inside L1, or None."""
    try:
        doc = json.loads((share / "host-probe" / "host-probe.json")
                         .read_text())
        c = doc["nmi_cancels"]
        return c["cancels"], c["after_nmi"], c["nmi_injections"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def layering_row(log_dir):
    """The house plan (tools/lib/layering.py): one case for includes and
    imports that point one way, one for no cycle among folders and
    packages."""
    bad, loops = layering.check(ROOT)
    text = "".join(f"{line}\n" for line in bad)
    text += "".join(f"cycle: {loop}\n" for loop in loops)
    (log_dir / "layering.log").write_text(text or "the plan holds\n")
    counts = results.Counts()
    counts.add(Status.FAIL if bad else Status.PASS)
    counts.add(Status.FAIL if loops else Status.PASS)
    return counts, Status.FAIL if counts.failed else Status.PASS, text


# The Python trees the lint row reads, and Debian's pyflakes (package
# python3-pyflakes, which make check installs through tools/deps).
LINT_TREES = ("tools", "bench")
PYFLAKES = "pyflakes3"


def lint_row(log_dir, root=ROOT):
    """Debian's pyflakes over tools/ and bench/: one case per Python
    file, failed by any finding (an unused import or variable, an
    undefined name, an f-string without a placeholder)."""
    files = sorted(str(p.relative_to(root)) for tree in LINT_TREES
                   for p in (root / tree).rglob("*.py"))
    try:
        done = subprocess.run([PYFLAKES, *files], cwd=root, text=True,
                              capture_output=True, stdin=subprocess.DEVNULL)
    except OSError as err:
        text = (f"cannot run {PYFLAKES} ({err}); make check installs it "
                "(python3-pyflakes)\n")
        (log_dir / "lint.log").write_text(text)
        return results.Counts(failed=1), Status.FAIL, text
    text = done.stdout + done.stderr
    (log_dir / "lint.log").write_text(text or "no finding\n")
    flagged = {line.split(":", 1)[0] for line in text.splitlines()}
    counts = results.Counts()
    for name in files:
        counts.add(Status.FAIL if name in flagged else Status.PASS)
    if done.returncode and not flagged & set(files):
        counts.add(Status.FAIL)     # pyflakes itself broke, on no file
    return counts, Status.FAIL if counts.failed else Status.PASS, text


# The rows before the guest runs, in this order: a name and a function
# of the log folder that returns (Counts, verdict, text shown when
# something failed). A new row is one more line here.
ROWS = (
    ("layering", layering_row),
    ("format", functools.partial(style.format_row, root=ROOT)),
    ("lint", lint_row),
    ("types", functools.partial(style.types_row, root=ROOT)),
    ("unit", unit_binary),
    ("python", python_tests),
    ("fuzz", fuzz_targets),
    ("host-probe", probecheck.row),
)


def kunit_row(log_dir):
    """Linux's kunit.py parse (6.1 and 6.12, tools/lib/analysis/kunit.py)
    over the serial log of every guest run in log_dir: a case per log and version,
    passed when kunit.py reads it in time, without complaint, with the
    exit status hvprobe's verdict implies and ktap.py's leaf counts. A
    version that cannot be had here is one skipped case, with the reason."""
    counts, text, lines = results.Counts(), "", []
    logs = sorted(p for p in log_dir.glob("**/serial.log")
                  if (p.parent / "results.json").exists())
    for package in kunit.PACKAGES:
        if not kunit.cached(KUNIT_CACHE, package):
            print(f"running: apt-get download {package} for its kunit.py "
                  "(once; kept in build/kunit/)", flush=True)
        try:
            kunit_py = kunit.fetch(KUNIT_CACHE, package)
        except kunit.Unavailable as err:
            counts.add(Status.SKIP)
            lines.append(f"{package}: SKIP {err}")
            continue
        for log in logs:
            doc = json.loads((log.parent / "results.json").read_text())
            verdict = kunit.parse(kunit_py, log)
            problems = kunit.judge(verdict, kunit.report_of(log),
                                   doc["verdict"] == Status.PASS)
            counts.add(Status.FAIL if problems else Status.PASS)
            lines.append(f"{package} {log.parent.relative_to(log_dir)}: "
                         f"{verdict.summary or 'no summary'}, exit "
                         f"{verdict.exit_status}, {verdict.seconds:.2f} s")
            text += "".join(f"{package} {log.parent.relative_to(log_dir)}: {p}\n"
                            for p in problems)
    (log_dir / "kunit.log").write_text("".join(f"{x}\n" for x in lines))
    return counts, Status.FAIL if counts.failed else Status.PASS, text


# The rows after the guest runs, over what they wrote.
AFTER_RUNS = (
    ("kunit", kunit_row),
)


def machine_lines(seen):
    """What this machine ran the guests on and what it could not exercise:
    the lines before the total."""
    docs = [d for d in seen.values() if isinstance(d, dict)]
    skipped = sorted((n, d) for n, d in seen.items() if isinstance(d, str))
    accels = collections.Counter(d["accel"] for d in docs)
    used = ", ".join(f"{a} ({n} run{'s' * (n != 1)})"
                     for a, n in sorted(accels.items())) or "none"
    ok, why = kvm_works()
    f = kvm.flavour()
    pmu = {None: "enable_pmu unknown", True: "enable_pmu=Y",
           False: "enable_pmu=N"}[f["enable_pmu"]]
    lines = [f"qemu: {hostinfo.qemu_version() or 'version unknown'}",
             f"accelerators: {used}",
             f"kvm: {f['module'] or 'no vendor module'}, {pmu}, host "
             f"kernel {f['kernel']}: {'works' if ok else 'not used'} ({why})"]
    for label, (outcome, names) in sorted(NESTED.items()):
        info = outcome.info
        lines.append(f"host kernel {label}: Linux {info.get('release')} as "
                     f"L1 under {outcome.l0.accel} ({info.get('module')}, "
                     f"enable_pmu={info.get('enable_pmu')}), up in "
                     f"{info.get('boot_s')} s, {outcome.wall_s:.0f} s in "
                     f"all: {', '.join(names)}, host-probe")
        counted = nmi_cancels(outcome.console.parent.parent)
        if counted:
            lines.append(f"host kernel {label}: {counted[0]} VM-entries "
                         f"cancelled, {counted[1]} of them after an NMI "
                         f"injection, for {counted[2]} NMI injections "
                         "(kvm_inject_nmi) in nmi_storm's window")
    return lines + coverage.lines(docs, skipped)


def timed(step, *args):
    start = time.monotonic()
    return (*step(*args), time.monotonic() - start)


def main(argv):
    # SIGTERM and SIGHUP end it as Ctrl-C does: the runs stop, what ran
    # is kept, exit status 130.
    with signals.interruptible():
        return main_body(argv)


def main_body(argv):
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
    plain = [r for r in args.guest_runs if not r.host_kernels
             and chosen(args, r.name)]
    by_kernel = {}
    for run in args.guest_runs:
        for label in run.host_kernels:
            if chosen(args, run.name) or \
                    chosen(args, f"{run.name}@{label}"):
                by_kernel.setdefault(label, []).append(run)
    names = [name for name, _ in ROWS + AFTER_RUNS] + \
        [r.name for r in plain] + \
        [f"{r.name}@{k}" for k, runs in by_kernel.items() for r in runs] + \
        [f"{n}@{k}" for k in by_kernel for n in ("host-probe", REFEREE)]
    width = max(len(n) for n in names)
    total = results.Counts()

    if not args.no_build:
        print("running: make (the kernel, the unit tests, the fuzzers)",
              flush=True)
    failed = None if args.no_build else build()
    if failed:
        print(f"build: {failed} failed", flush=True)
        total.failed += 1

    rows = []

    def finished(name, counts, verdict, text, seconds):
        # Not in the form of the total, which must stay alone on its line.
        print(f"{name:{width}}  {verdict:10} {counts.passed:3} pass "
              f"{counts.failed:3} fail {counts.skipped:3} skip  "
              f"({seconds:.1f} s)", flush=True)
        if counts.failed:
            print(indented(text), end="", flush=True)
        rows.append({"name": name, "verdict": verdict,
                     "passed": counts.passed, "failed": counts.failed,
                     "skipped": counts.skipped, "seconds": round(seconds, 3),
                     "text": text if counts.failed or not counts.passed
                     else ""})
        return counts

    for name, step in ROWS:
        if chosen(args, name):
            total += finished(name, *timed(step, log_dir))
    kvm_works()
    seen = {}
    def leg(label, runs):
        start = time.monotonic()
        rows = nested_runs(label, runs, log_dir, seen)
        took = (time.monotonic() - start) / max(len(rows), 1)
        return [(*row, took) for row in rows]

    def one(run):
        step = TOOLS_RUN_BY_NAME[run.tool]
        return [(run.name, *timed(step, run, log_dir, seen))]

    pool = concurrent.futures.ThreadPoolExecutor(args.jobs)
    try:
        # The L1 legs first, one after another in one job: two L1s at
        # once share 2 cores four ways, and a starved L1 loses perf
        # records. The other workers take the plain runs meanwhile.
        futures = [pool.submit(lambda: [row for label, runs in
                                        by_kernel.items()
                                        for row in leg(label, runs)])] \
            if by_kernel else []
        futures += [pool.submit(one, run) for run in plain]
        for future in concurrent.futures.as_completed(futures):
            for name, *row in future.result():
                total += finished(name, *row)
    except KeyboardInterrupt:
        # No run starts any more, the running ones die with their QEMUs
        # and are counted as neither passed nor failed.
        serial.stop_all()
        pool.shutdown(wait=True, cancel_futures=True)
        print(f"tools/check: interrupted; logs: {log_dir}", file=sys.stderr)
        print(total)
        return EXIT_INTERRUPTED
    finally:
        pool.shutdown(wait=True)
    for name, step in AFTER_RUNS:
        if chosen(args, name):
            total += finished(name, *timed(step, log_dir))

    print(f"logs: {log_dir}", flush=True)
    for line in machine_lines(seen):
        print(line)
    try:
        if args.json:
            jsonfile.write(args.json, {
                "passed": total.passed, "failed": total.failed,
                "skipped": total.skipped, "logs": str(log_dir),
                "rows": rows})
        if args.junit:
            with open(args.junit, "w") as out:
                out.write(junit(rows, total, time.monotonic() - began))
    except OSError as err:
        print(f"tools/check: cannot write the summary: {err}",
              file=sys.stderr)
        total.failed += 1
    print(total)
    return 0 if total.failed == 0 else 1
