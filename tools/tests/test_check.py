# SPDX-License-Identifier: MIT
"""tools/check: its run list (the file it ships with, and what it refuses)
and its rows."""

import contextlib
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
import unittest
from pathlib import Path
from unittest import mock

from tools.commands import check
from tools.lib.analysis import ktap, results
from tools.lib.checks import python, referee, style
from tools.lib.checks.guests import Context, guest_run
from tools.lib.launch import serial
from tools.tests import rowchild
from tools.tests.fakehost import alive
from tools.lib.launch.scenario import RunSpec


class RunList(unittest.TestCase):
    def load(self, text):
        with tempfile.NamedTemporaryFile("w", suffix=".toml") as f:
            f.write(text)
            f.flush()
            return check.load_runs(f.name)

    def test_shipped_list(self):
        runs = check.load_runs(check.RUNS)
        names = [r.name for r in runs]
        self.assertEqual(len(names), len(set(names)), "run names are unique")
        # make check boots every path at least once, and the negative runs.
        for name in ("kernel", "bios", "uefi", "bad-cmdline", "crash"):
            self.assertIn(name, names)

    def test_shipped_list_keeps_its_rows(self):
        # A row's name is what CI and the README count by: the matrix
        # keeps make check's 51 runs, in order, with the nested legs.
        runs = check.load_runs(check.RUNS)
        self.assertEqual(len(runs), 51)
        self.assertEqual([r.name for r in runs[:3]], ["kernel", "bios",
                                                       "uefi"])
        self.assertEqual([r.name for r in runs if r.host_kernels],
                         ["l1-all", "l1-kvmclock", "l1-hyperv",
                          "l1-hyperv-only", "l1-hv-passthrough"])
        self.assertTrue(all(r.host_kernels == ["6.1", "6.12"]
                            for r in runs if r.host_kernels))
        self.assertEqual([r.name for r in runs if r.tool != "run"],
                         ["linux-referee"])
        self.assertEqual([r.name for r in runs if r.min_qemu],
                         ["x2apic-300"])
        self.assertIn("parallel-linux-6.5", [r.name for r in runs])

    def test_no_regex_reads_a_data_line(self):
        # A DATA value is checked by its path (expect_data), which a
        # reordered key cannot break; a regex over the JSON text could.
        json_key = re.compile(r'"[\w-]+"\s*:')
        runs = check.load_runs(check.RUNS)
        over_data = [(r.name, line) for r in runs for line in r.expect_lines
                     if json_key.search(line) or "DATA" in line]
        self.assertEqual(over_data, [])
        self.assertEqual(len([r for r in runs if r.expect_data]), 21)
        smp4 = next(r for r in runs if r.name == "smp-4")
        self.assertEqual(smp4.expect_data, {"smp.cpus": 4,
                                            "smp.calibrations": 1,
                                            "lpj.calibrations": 1})

    def test_defaults_are_said_once(self):
        doc = tomllib.loads(check.RUNS.read_text())
        defaults = doc["defaults"]
        self.assertEqual(defaults, {"boot": "kernel", "accel": "tcg"})
        repeated = [(t["name"], k) for t in doc["scenario"]
                    for k, v in defaults.items() if t.get(k) == v]
        self.assertEqual(repeated, [])

    def test_a_run_reads_as_its_tools_run_command_line(self):
        run = next(r for r in check.load_runs(check.RUNS)
                   if r.name == "acpi-exit-3g")
        self.assertEqual(run.run_argv(), [
            "--boot", "kernel", "--smp", "1", "--mem", "3072M", "--accel",
            "tcg", "--expect-status", "0", "--", "test=boot", "exit=acpi"])
        referee_run = next(r for r in check.load_runs(check.RUNS)
                           if r.tool == "linux-referee")
        self.assertEqual(referee.referee_argv(referee_run),
                         ["--accel", "tcg", "--smp", "4", "--numa", "2"])

    def expectation(self, name):
        run = next(r for r in check.load_runs(check.RUNS) if r.name == name)
        return run.expect_fail

    def test_shipped_negative_runs_match_the_contract(self):
        crashed = "crashed: unexpected #UD at RIP 0x106765"
        ap = "crashed: unexpected #UD at RIP 0x1 on CPU 1 (APIC ID 1)"
        hang = "TIMEOUT watchdog: still running after 2 s"
        for name, lines in (
                ("bad-cmdline", ["not ok 1 cmdline # ERROR unknown key "
                                 "'foo' (accepted: test, lpj, ...)"]),
                ("no-long-mode", ["not ok 1 boot # ERROR this CPU has no "
                                  "long mode"]),
                ("crash", ["    ok 1 about to execute ud2",
                           f"    not ok 2 the test ran to its end # ERROR "
                           f"{crashed}",
                           f"not ok 1 crash # ERROR {crashed}"]),
                ("fault-ap-crash", [
                    f"    not ok 2 the test ran to its end # ERROR {ap}",
                    f"not ok 1 crash_ap # ERROR {ap}"]),
                ("fault-hang", [
                    f"    not ok 2 the test ran to its end # {hang}",
                    f"not ok 1 hang # {hang}"])):
            report = ktap.parse(["KTAP version 1", "1..1", *lines,
                                 "# Totals: pass:0 fail:0 skip:0 error:1"])
            self.assertIsNotNone(results.expect_fail_match(
                report, self.expectation(name)), name)
            if len(lines) > 1:
                # The result line alone, its case line gone: not the
                # failure the row expects.
                alone = ktap.parse(["KTAP version 1", "1..1",
                                    "    ok 1 about to fail", lines[-1],
                                    "# Totals: pass:0 fail:0 skip:0 "
                                    "error:1"])
                self.assertIsNone(results.expect_fail_match(
                    alone, self.expectation(name)), name)

    def test_refusals(self):
        for bad in ("[[scenario", 'name = "x"\n',
                    '[[scenario]]\nname = "a b"\n',
                    '[[scenario]]\nname = "x"\n[[scenario]]\nname = "x"\n',
                    '[[cross]]\naxes = { vcpus = [1, 2] }\n',
                    'repeat = 2\n[[scenario]]\nname = "x"\n'):
            with self.assertRaises(check.UsageError, msg=bad):
                self.load(bad)

    def test_a_bad_key_says_which_and_where(self):
        for text, said in (
                ('[[scenario]]\nname = "x"\nexpect_lnes = ["a"]\n',
                 "scenario 1: unknown key 'expect_lnes' (accepted: "),
                ('[[scenario]]\nname = "x"\nhost_kernels = ["5.10"]\n',
                 "scenario 1: host_kernels must list host kernel series "),
                ('[[scenario]]\nname = "x"\nexpect_fail = "("\n',
                 "scenario 1: expect_fail: bad regular expression '('"),
                ('[[scenario]]\nname = "x"\nmin_qemu = "8"\n',
                 "scenario 1: min_qemu must be the oldest QEMU"),
                ('[[scenario]]\nname = "x"\ntool = "make"\n',
                 "scenario 1: tool must be what boots it, one of run, "
                 "linux-referee, not 'make'"),
                ('[[scenario]]\nname = "x"\niso_entry = "a.preset"\n',
                 "scenario 1: iso_entry needs boot bios or uefi")):
            with self.assertRaises(check.UsageError, msg=text) as caught:
                self.load(text)
            self.assertIn(said, str(caught.exception))

    def test_missing_file(self):
        with self.assertRaises(check.UsageError):
            check.load_runs("/nonexistent/runs.toml")


class Rows(unittest.TestCase):
    def test_rows_before_the_guest_runs(self):
        self.assertEqual([name for name, _ in check.ROWS],
                         ["layering", "format", "lint", "types", "unit",
                          "python", "fuzz", "host-probe"])
        self.assertTrue(all(callable(step) for _, step in check.ROWS))
        self.assertEqual([name for name, *_ in check.AFTER_RUNS], ["kunit"])
        self.assertLessEqual(check.BESIDE_RUNS,
                             {name for name, _ in check.ROWS})

    def test_python_row_finds_both_packages(self):
        def ids(suite):
            for test in suite:
                if isinstance(test, unittest.TestSuite):
                    yield from ids(test)
                else:
                    yield test.id()
        found = {i.split(".")[0] + "." + i.split(".")[2]
                 for i in ids(python.python_suite())}
        self.assertIn("tools.test_check", found)
        self.assertIn("bench.test_smp", found)
        self.assertFalse([i for i in ids(python.python_suite())
                          if "_FailedTest" in i or "ModuleImportFailure" in i])


@unittest.skipUnless(shutil.which(style.PYFLAKES),
                     "Debian's pyflakes (python3-pyflakes) is not installed")
class LintRow(unittest.TestCase):
    def lint(self, files):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            for name, text in files.items():
                (root / name).parent.mkdir(parents=True, exist_ok=True)
                (root / name).write_text(text)
            (root / "log").mkdir()
            return style.lint_row(root / "log", root)

    def test_unused_import_fails_its_file(self):
        counts, verdict, text = self.lint({
            "tools/good.py": "import os\nprint(os.sep)\n",
            "bench/bad.py": "import os\n"})
        self.assertEqual(verdict, "fail")
        self.assertEqual((counts.passed, counts.failed), (1, 1))
        self.assertIn("bench/bad.py:1:", text)
        self.assertIn("'os' imported but unused", text)

    def test_clean_tree_passes(self):
        counts, verdict, _ = self.lint({"tools/a.py": "x = 1\n",
                                        "bench/b.py": "print(1)\n"})
        self.assertEqual((verdict, counts.passed, counts.failed),
                         ("pass", 2, 0))

    def test_this_tree_is_clean(self):
        with tempfile.TemporaryDirectory() as tmp:
            counts, verdict, text = style.lint_row(Path(tmp))
        self.assertEqual(verdict, "pass", text)


class QuietChild(unittest.TestCase):
    """A test that runs a child which fails on purpose (make, say)."""

    def test_child(self):
        subprocess.run(["sh", "-c", "echo 'make[1]: *** [Makefile:2: all] "
                        "Error 2' >&2; echo child-out"], check=False)


class PythonRowOutput(unittest.TestCase):
    def row(self, d, *names, env="count"):
        tests = [f"{rowchild.__name__}.Outcomes.test_{n}"
                 for n in names]
        with mock.patch.dict(os.environ, {"HVPROBE_ROW_CHILD": env,
                                          "PIDS": str(Path(d) / "pids")}):
            return python.row(Path(d), tests)

    def test_counts_come_from_the_child(self):
        with tempfile.TemporaryDirectory() as d:
            counts, verdict, text = self.row(d, "passes", "fails", "skips")
        self.assertEqual((counts.passed, counts.failed, counts.skipped,
                          verdict), (1, 1, 1, "fail"))
        self.assertIn("test_fails", text)
        self.assertIn("AssertionError: on purpose", text)

    def test_a_child_without_counts_fails_with_its_output(self):
        with tempfile.TemporaryDirectory() as d:
            counts, verdict, text = self.row(d, "passes", "dies", env="die")
        self.assertEqual((counts.failed, verdict), (1, "fail"))
        self.assertIn("gave no counts (exit status 3)", text)
        self.assertIn("dying on purpose", text)

    def test_the_interrupt_kills_the_child(self):
        self.addCleanup(serial.STOP.clear)
        got = {}
        with tempfile.TemporaryDirectory() as d:
            worker = threading.Thread(
                target=lambda: got.setdefault(
                    "row", self.row(d, "sleeps", env="sleep")),
                daemon=True)
            worker.start()
            pids = wait_for_pids(Path(d) / "pids", 1)
            serial.stop_all()
            worker.join(60)
        self.assertFalse(worker.is_alive(), "the row outlived the interrupt")
        self.assertEqual(got["row"][1], "interrupted")
        self.assertTrue(gone(pids), "the suite outlived the interrupt")

    def test_a_child_error_stays_in_the_log(self):
        with tempfile.TemporaryDirectory() as d:
            terminal = Path(d) / "terminal"
            with python.fds_into(terminal):
                counts, verdict, _ = python.row(
                    Path(d), [f"{__name__}.QuietChild"])
            self.assertEqual((counts.passed, verdict), (1, "pass"))
            self.assertNotIn("Error 2", terminal.read_text())
            logged = (Path(d) / "python-output.log").read_text()
            self.assertIn("make[1]: *** [Makefile:2: all] Error 2", logged)
            self.assertIn("child-out", logged)


class LostRuns(unittest.TestCase):
    """A run this host cannot take: a skip with the reason, except that CI
    must not lose a run for want of the QEMU .ci/run installs."""

    def guest_run(self, run, ci, kvm=(False, "/dev/kvm cannot be opened")):
        ctx = Context(kvm, (7, 2))
        env = {"CI": "true"} if ci else {}
        with mock.patch.dict(os.environ, env, clear=False):
            if not ci:
                os.environ.pop("CI", None)
            counts, verdict, text = guest_run(run, "/nonexistent", ctx)
        return counts, verdict, text, ctx.seen

    def test_old_qemu_skips_outside_ci(self):
        counts, verdict, text, seen = self.guest_run(
            RunSpec("x2apic-300", "x2apic-300", min_qemu="8.0"), ci=False)
        self.assertEqual((counts.skipped, counts.failed, verdict), (1, 0, "skip"))
        self.assertEqual(seen, {"x2apic-300": "needs QEMU >= 8.0, found 7.2"})

    def test_old_qemu_fails_under_ci(self):
        counts, verdict, text, _ = self.guest_run(
            RunSpec("x2apic-300", "x2apic-300", min_qemu="8.0"), ci=True)
        self.assertEqual((counts.failed, verdict), (1, "lost"))
        self.assertIn("needs QEMU >= 8.0, found 7.2", text)

    def test_no_kvm_skips_even_under_ci(self):
        counts, verdict, text, seen = self.guest_run(
            RunSpec("kvm-4", "kvm-4", needs_kvm=True), ci=True)
        self.assertEqual((counts.skipped, counts.failed), (1, 0))
        self.assertEqual(text, "needs KVM: /dev/kvm cannot be opened\n")


class LegTime(unittest.TestCase):
    """An L1 leg's time holds each tools/run, the host probe and, where
    the leg runs it, the referee's two boots at their own timeouts: the
    referee alone (--only) once ran out of its leg's time while Linux
    booted slowly, and was a fail with no result."""

    def test_the_referee_boots_fit_in_the_leg(self):
        from tools.lib import referee as lib_referee
        from tools.lib.checks import nested as nested_row
        plain = nested_row.leg_timeouts(1, referee=False)
        self.assertEqual(plain, [nested_row.NESTED_TIMEOUT_S] * 2)
        self.assertGreaterEqual(
            sum(nested_row.leg_timeouts(1, referee=True)),
            sum(plain) + 2 * lib_referee.TIMEOUT_S)


class NestedLegs(unittest.TestCase):
    """The runs with host_kernels go to one L1 leg per series, under
    NAME@SERIES rows, beside the plain runs."""

    def check(self, *argv, rows=(), after=()):
        legs, self.guest_started = [], threading.Event()

        def nested_runs(label, runs, log_dir, ctx):
            legs.append((label, [r.name for r in runs]))
            names = [f"{r.name}@{label}" for r in runs] + \
                [f"host-probe@{label}"] + \
                ([f"{referee.REFEREE}@{label}"] if label == referee.REFEREE_L1
                 else [])
            return [(n, results.Counts(passed=1), "pass", "")
                    for n in names]

        def plain(run, log_dir, ctx):
            self.guest_started.set()
            return results.Counts(passed=2), "pass", ""

        with tempfile.TemporaryDirectory() as d:
            runs = Path(d) / "runs.toml"
            runs.write_text('[[scenario]]\nname = "p"\n'
                            '[[scenario]]\nname = "n"\n'
                            'host_kernels = ["6.1", "6.12"]\n')
            with mock.patch.object(check, "ROWS", rows), \
                    mock.patch.object(check, "AFTER_RUNS", after), \
                    mock.patch.object(check, "nested_runs", nested_runs), \
                    mock.patch.dict(check.TOOLS_RUN_BY_NAME, {"run": plain}), \
                    mock.patch.object(check, "kvm_works",
                                      return_value=(False, "not here")), \
                    mock.patch.object(check, "machine_lines",
                                      return_value=[]), \
                    contextlib.redirect_stdout(io.StringIO()):
                rc = check.main(["--no-build", "--runs", str(runs),
                                 "--results", d, "--json",
                                 str(Path(d) / "s.json"), *argv])
            doc = json.loads((Path(d) / "s.json").read_text())
        return rc, sorted(r["name"] for r in doc["rows"]), legs

    def test_every_leg_and_the_plain_run(self):
        rc, rows, legs = self.check()
        self.assertEqual(rc, 0)
        self.assertEqual(rows, ["host-probe@6.1", "host-probe@6.12",
                                "linux-referee@6.12", "n@6.1", "n@6.12", "p"])
        self.assertEqual(legs, [("6.1", ["n"]), ("6.12", ["n"])])

    def test_slow_rows_run_beside_the_guest_runs(self):
        order = []

        def python_row(log_dir):
            # Only a guest run sets it: run before the guest runs, as the
            # other rows are, this row would wait in vain.
            beside = self.guest_started.wait(120)
            return (results.Counts(passed=1) if beside else
                    results.Counts(failed=1)), "pass", ""

        def layering_row(log_dir):
            order.append("layering")
            return results.Counts(passed=1), "pass", ""

        def kunit_row(log_dir):
            order.append("kunit")
            return results.Counts(passed=1), "pass", ""

        rc, rows, _ = self.check(
            rows=(("layering", layering_row), ("python", python_row)),
            after=(("kunit", kunit_row, lambda: order.append("ready")),))
        self.assertEqual(rc, 0)
        self.assertEqual(rows.count("python"), 1)
        self.assertEqual(order, ["layering", "ready", "kunit"])

    def test_only_one_leg(self):
        rc, rows, legs = self.check("--only", "n@6.12")
        self.assertEqual(legs, [("6.12", ["n"])])
        self.assertNotIn("p", rows)


# A stand-in for tools/linux-referee that never ends: it says who it is
# (and, with a child, who that is), then waits.
STUCK_REFEREE = """import os, subprocess
with open(os.environ["PIDS"], "a") as f:
    {child}
    f.write(f"{{os.getpid()}}\\n")
os.execvp("sleep", ["sleep", "600"])
"""


def wait_for_pids(path, n, within=60):
    """The pids the stand-in wrote to path, once there are n of them."""
    end = time.monotonic() + within
    while time.monotonic() < end:
        try:
            pids = [int(x) for x in path.read_text().split()]
        except (OSError, ValueError):
            pids = []
        if len(pids) >= n:
            return pids
        time.sleep(0.05)
    raise AssertionError(f"the stand-in referee did not start in {within} s")


def gone(pids, within=30):
    """Whether every pid has ended within the bound."""
    end = time.monotonic() + within
    while alive(pids) and time.monotonic() < end:
        time.sleep(0.05)
    return not alive(pids)


class RefereeRow(unittest.TestCase):
    """tools/check's referee row starts tools/linux-referee as guest runs
    are started (serial.spawn): the interrupt stops it with them, and a
    killed tools/check takes it along."""

    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.dir = Path(tmp.name)
        self.pids = self.dir / "pids"
        self.run_spec = RunSpec("linux-referee", "linux-referee",
                                tool="linux-referee", accel="tcg")
        self.addCleanup(self.kill_left)
        self.addCleanup(serial.STOP.clear)

    def kill_left(self):
        try:
            pids = [int(x) for x in self.pids.read_text().split()]
        except (OSError, ValueError):
            return
        for pid in alive(pids):
            os.kill(pid, signal.SIGKILL)

    def stand_in(self, child="pass"):
        tool = self.dir / "linux-referee"
        tool.write_text(STUCK_REFEREE.format(child=child))
        return tool

    def test_the_interrupt_stops_it_and_its_children(self):
        tool = self.stand_in('f.write(f"{subprocess.Popen([\'sleep\', '
                             '\'600\']).pid}\\n")')
        got = {}

        def row():
            got["row"] = referee.referee_run(self.run_spec, self.dir, None)
        with mock.patch.object(referee, "TOOL", tool), \
                mock.patch.dict(os.environ, {"PIDS": str(self.pids)}):
            worker = threading.Thread(target=row, daemon=True)
            worker.start()
            pids = wait_for_pids(self.pids, 2)
            serial.stop_all()
            worker.join(60)
        self.assertFalse(worker.is_alive(), "the row outlived the interrupt")
        self.assertEqual(got["row"][1], "interrupted")
        self.assertTrue(gone(pids), f"left running: {alive(pids)}")

    def test_a_killed_check_takes_it_along(self):
        tool = self.stand_in()
        code = ("import sys\nfrom pathlib import Path\n"
                "from tools.lib.checks import referee\n"
                "from tools.lib.launch.scenario import RunSpec\n"
                f"referee.TOOL = Path({str(tool)!r})\n"
                "referee.referee_run(RunSpec('r', 'r', tool='linux-referee',"
                f" accel='tcg'), Path({str(self.dir)!r}), None)\n")
        check_proc = subprocess.Popen(
            [sys.executable, "-c", code], cwd=check.ROOT,
            env={**os.environ, "PIDS": str(self.pids)},
            stdin=subprocess.DEVNULL)
        self.addCleanup(check_proc.wait)
        self.addCleanup(lambda: check_proc.poll() is None
                        and check_proc.kill())
        pids = wait_for_pids(self.pids, 1)
        check_proc.kill()
        self.assertTrue(gone(pids), f"left running: {alive(pids)}")


class KvmAnswer(unittest.TestCase):
    """tools/check asks KVM and QEMU afresh in each main(): a host one
    call (a test's fake one, in the python row's own process) pretended
    to be is not the machine the next call reports."""

    def test_the_answer_follows_the_host(self):
        with mock.patch.object(check.kvm, "works",
                               return_value=(False, "fake host")):
            self.assertEqual(check.kvm_works(), (False, "fake host"))
        with mock.patch.object(check.kvm, "works",
                               return_value=(True, "probed")):
            self.assertEqual(check.kvm_works(), (True, "probed"))

    def test_the_qemu_version_follows_the_host(self):
        with mock.patch.object(check.hostinfo, "qemu_release",
                               return_value=(7, 2)):
            self.assertEqual(check.qemu_version(), (7, 2))
        with mock.patch.object(check.hostinfo, "qemu_release",
                               return_value=(10, 0)):
            self.assertEqual(check.qemu_version(), (10, 0))


class MachineLines(unittest.TestCase):
    def test_accelerators_flavour_and_what_was_not_exercised(self):
        docs = {"kernel": {"accel": "tcg", "tests": [], "host": {}},
                "kvm-4": {"accel": "kvm", "tests": [], "host": {
                    "kvm": {"module": "kvm_pvm"}},
                    "not_runnable": [{"test": "exceptions", "reason": "INT3"}]},
                "x2apic-300": "needs QEMU >= 8.0, found 7.2"}
        flavour = {"module": "kvm_pvm", "enable_pmu": False, "kernel": "6.18"}
        with mock.patch.object(check.kvm, "flavour", return_value=flavour), \
                mock.patch.object(check.hostinfo, "qemu_version", return_value="7.2.0"):
            lines = check.machine_lines(Context((True, "probed"), (7, 2),
                                                seen=docs))
        self.assertEqual(lines, [
            "qemu: 7.2.0",
            "accelerators: kvm (1 run), tcg (1 run)",
            "kvm: kvm_pvm, enable_pmu=N, host kernel 6.18: works (probed)",
            "not run under KVM (kvm_pvm): exceptions: INT3",
            "not run: x2apic-300: needs QEMU >= 8.0, found 7.2"])

    # Each L1 by name, and how many boots of it the leg took when L1
    # had to be booted again.
    def lines(self, boots):
        from tools.lib.hostkernels import nested
        outcome = nested.Outcome(
            [0], {"release": "6.12.95", "module": "kvm_amd",
                  "enable_pmu": "N", "boot_s": 5.2},
            nested.choose_l0(None, False), None, 121.4,
            Path("/nonexistent/on-6.12/l1/serial.log"), boots=boots)
        ctx = Context(kvm=(False, "no /dev/kvm"), qemu=(10, 0))
        ctx.nested["6.12"] = (outcome, ["l1-all"])
        with mock.patch.object(check.kvm, "flavour", return_value={
                    "module": None, "enable_pmu": None, "kernel": "6.1"}), \
                mock.patch.object(check.hostinfo, "qemu_version",
                                  return_value=(10, 0, 2)):
            return [line for line in check.machine_lines(ctx)
                    if line.startswith("host kernel 6.12")]

    def test_one_boot(self):
        self.assertEqual(self.lines(1), [
            "host kernel 6.12: Linux 6.12.95 as L1 under tcg (kvm_amd, "
            "enable_pmu=N), up in 5.2 s, 121 s in all: l1-all, host-probe"])

    def test_booted_again(self):
        self.assertEqual(self.lines(3), [
            "host kernel 6.12: Linux 6.12.95 as L1 under tcg (kvm_amd, "
            "enable_pmu=N), up in 5.2 s, 121 s in all over 3 L1 boots: "
            "l1-all, host-probe"])


if __name__ == "__main__":
    unittest.main()
