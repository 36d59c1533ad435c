# SPDX-License-Identifier: MIT
"""make check's nested leg rows: one per run, then host-probe, then the
referee under its series; every row skipped with the reason when the
host kernel cannot be had (lost under CI=true), failed when L1 does not
boot, and judged from the results each run left in L1's share when it
does. The host kernel, L1 and KVM are stand-ins."""

import contextlib
import io
import json
import os
import tempfile
import unittest
from pathlib import Path
from types import SimpleNamespace
from unittest import mock

from tools.lib.checks import nested as leg_module
from tools.lib.checks.guests import Context
from tools.lib.checks.referee import REFEREE, REFEREE_L1
from tools.lib.hostkernels import hostkernel, nested


def run(name):
    return SimpleNamespace(name=name, run_argv=lambda: ["--", "test=smp"])


class Kernel:
    def describe(self):
        return "Linux 6.1 (stand-in)"


def rows_of(label, resolve=None, boot=None, ci=None, share_files=None):
    """leg()'s rows with stand-ins for the kernel and L1, and ctx."""
    ctx = Context(kvm=(True, ""), qemu=(9, 2))
    with tempfile.TemporaryDirectory() as d, \
            mock.patch.object(hostkernel, "resolve",
                              resolve or (lambda label, log: Kernel())), \
            mock.patch.object(hostkernel, "fetch_debian"), \
            mock.patch.object(nested, "choose_l0", return_value="kvm"), \
            mock.patch.object(leg_module.kvm, "flavour",
                              return_value={"module": "kvm_intel"}), \
            mock.patch.object(nested, "run", boot), \
            mock.patch.dict(os.environ, {"CI": ci or "false"}), \
            contextlib.redirect_stdout(io.StringIO()):
        for path, text in (share_files or {}).items():
            f = Path(d) / f"on-{label}" / path
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(text)
        rows = leg_module.leg(label, [run("a"), run("b")], Path(d), ctx)
    return [(n, (c.passed, c.failed, c.skipped), v, t)
            for n, c, v, t in rows], ctx


def l1_ran(statuses, ended="", timed_out=False):
    """An L1 boot's Outcome: each command's status, None where L1 ended
    first."""
    return nested.Outcome(statuses, {}, None, None, 30.0, Path("c.log"),
                          ended=ended, timed_out=timed_out)


RESET = "QEMU exited with status 0 after 30 s, with no end marker: " \
    "the guest reset or powered off (-no-reboot)"


def no_kernel(label, log):
    raise hostkernel.HostKernelError("no such series")


class Leg(unittest.TestCase):
    def test_kernel_missing_skips_every_row(self):
        rows, ctx = rows_of("6.1", resolve=no_kernel)
        why = "host kernel 6.1: no such series\n"
        self.assertEqual(rows, [(n, (0, 0, 1), "skip", why) for n in
                                ("a@6.1", "b@6.1", "host-probe@6.1")])
        self.assertEqual(ctx.seen["a@6.1"], why.strip())

    def test_kernel_missing_under_ci_is_lost(self):
        rows, _ = rows_of(REFEREE_L1, resolve=no_kernel, ci="true")
        self.assertEqual([r[0] for r in rows],
                         [f"a@{REFEREE_L1}", f"b@{REFEREE_L1}",
                          f"host-probe@{REFEREE_L1}",
                          f"{REFEREE}@{REFEREE_L1}"])
        self.assertEqual({r[1:3] for r in rows}, {((0, 1, 0), "lost")})

    def test_l1_that_does_not_boot_fails_every_row(self):
        def boot(*args, **kwargs):
            raise nested.NestedError("L1 crashed")
        rows, _ = rows_of("6.1", boot=boot)
        self.assertEqual(rows, [(n, (0, 1, 0), "no L1", "L1 crashed\n")
                                for n in ("a@6.1", "b@6.1",
                                          "host-probe@6.1")])

    def test_booted_leg_judges_each_run(self):
        outcome = l1_ran([0, 1, 0])
        doc = {"verdict": "pass", "tests": [], "crash": None,
               "host_checks": [{"status": "pass"}]}
        rows, ctx = rows_of(
            "6.1", boot=lambda *a, **k: outcome,
            share_files={"a/results.json": json.dumps(doc),
                         "host-probe-row.json": json.dumps(
                             {"passed": 2, "failed": 0, "skipped": 1,
                              "verdict": "pass"}),
                         "host-probe/probe.txt": "probe said\n"})
        self.assertEqual([r[0] for r in rows],
                         ["a@6.1", "b@6.1", "host-probe@6.1"])
        self.assertEqual(rows[0][1:3], ((1, 0, 0), "pass"))
        self.assertEqual(rows[1][1:3], ((0, 1, 0), "no result"))
        self.assertEqual(rows[1][3], "inside L1 (Linux 6.1 (stand-in)): "
                         "exited 1; console c.log\n")
        self.assertEqual(rows[2][1:3], ((2, 0, 1), "pass"))
        self.assertEqual(ctx.seen["a@6.1"], doc)
        self.assertIn("6.1", ctx.nested)


    def test_an_l1_that_ends_is_booted_again_for_the_runs_left(self):
        # The first boot ends after run a, the second finishes the rest;
        # b's partial folder is kept beside the one its second run makes.
        boots = []

        def boot(kernel, commands, share, timeout, l0, stream, own_dir):
            boots.append((own_dir, len(commands)))
            if len(boots) == 1:
                (share / "b").mkdir(parents=True)
                return l1_ran([0, None, None], ended="QEMU exited with "
                              "status 0 after 30 s")
            return l1_ran([1, 0])
        rows, ctx = rows_of("6.1", boot=boot)
        self.assertEqual(boots, [("l1", 3), ("l1-2", 2)])
        outcome, _ = ctx.nested["6.1"]
        self.assertEqual((outcome.statuses, outcome.wall_s),
                         ([0, 1, 0], 60.0))
        self.assertEqual(rows[1][3], "inside L1 (Linux 6.1 (stand-in)): "
                         "exited 1; console c.log\n")

    def test_an_l1_that_ends_in_the_referee_twice_gets_a_third_boot(self):
        # make check once went red on this: the first boot finished all
        # but the referee, the second ended in it too, and the leg gave
        # up; a boot that finishes none proves nothing under a TCG L0.
        boots = []
        referee_doc = {"rows": [{"series": "6.1", "policy": "linux-6.1",
                                 "release": "6.1.0-test",
                                 "hvprobe": {"verdict": "pass"},
                                 "comparisons": []}]}

        def boot(kernel, commands, share, timeout, l0, stream, own_dir):
            boots.append((own_dir, len(commands)))
            if len(boots) == 1:
                return l1_ran([0, 0, 0, None], ended=RESET)
            if len(boots) == 2:
                return l1_ran([None], ended=RESET)
            (share / REFEREE).mkdir(parents=True)
            (share / REFEREE / "referee.json").write_text(
                json.dumps(referee_doc))
            return l1_ran([0])
        rows, ctx = rows_of(REFEREE_L1, boot=boot)
        self.assertEqual(boots, [("l1", 4), ("l1-2", 1), ("l1-3", 1)])
        self.assertEqual(rows[-1][:3], (f"{REFEREE}@{REFEREE_L1}",
                                        (1, 0, 0), "pass"))
        self.assertEqual(ctx.nested[REFEREE_L1][0].boots, 3)

    def test_a_run_l1_never_let_finish_says_how_l1_ended(self):
        boots = []

        def boot(kernel, commands, share, timeout, l0, stream, own_dir):
            boots.append(own_dir)
            return l1_ran([0, None, None] if len(boots) == 1
                          else [None, None], ended=RESET)
        rows, _ = rows_of("6.1", boot=boot)
        # Two boots in a row that finish none are the last.
        self.assertEqual(boots, ["l1", "l1-2", "l1-3"])
        self.assertEqual(rows[1][1:3], ((0, 1, 0), "no result"))
        self.assertEqual(rows[1][3], "inside L1 (Linux 6.1 (stand-in)): "
                         "did not finish: 3 L1 boots ended first, the "
                         f"last ({RESET}); console c.log\n")
        self.assertEqual(rows[2][3], "inside L1 the row did not finish: "
                         f"3 L1 boots ended first, the last ({RESET}) "
                         "and left no probe.txt\n")

    def test_the_referee_row_says_how_l1_ended(self):
        # An L1 that ran out of its time is not booted again.
        rows, _ = rows_of(REFEREE_L1, boot=lambda *a, **k: l1_ran(
            [0, 0, 0, None], ended="still running after 900 s",
            timed_out=True))
        self.assertEqual(rows[-1][1:], (
            (0, 1, 0), "no result", "tools/linux-referee did not finish: "
            "L1 ended first, the last (still running after 900 s) and "
            "wrote no referee.json\n"))


if __name__ == "__main__":
    unittest.main()
