# SPDX-License-Identifier: MIT
"""nested.run_until_done(): an L1 that ends before its commands do is
booted again for those left, each boot in its own folder, until one
runs out of its time, two in a row finish none, or the boots allowed
are spent; nested.run() is a stand-in."""

import tempfile
import unittest
from pathlib import Path
from unittest import mock

from tools.lib.hostkernels import nested

RESET = "QEMU exited with status 0 after 30 s"


def booting(*plans):
    """A stand-in for nested.run(): boot N makes each command's folder,
    finishes the first plans[N] of them (all for a plan of None) and
    ends in the one after, or raises plans[N] where that is an
    exception."""
    boots = []

    def run(kernel, commands, share, timeout, l0, stream, own_dir):
        plan = plans[len(boots)]
        boots.append((own_dir, [c[0] for c in commands], timeout))
        if isinstance(plan, Exception):
            raise plan
        for c in commands:
            (share / c[0]).mkdir(exist_ok=True)
        finish = len(commands) if plan is None else plan
        return nested.Outcome([0] * finish + [None] * (len(commands) -
                                                       finish),
                              {}, None, None, 10.0, Path(own_dir),
                              ended=RESET)
    return run, boots


def until_done(plans, names=("a", "b", "c"), **kwargs):
    run, boots = booting(*plans)
    said = []
    with tempfile.TemporaryDirectory() as tmp, \
            mock.patch.object(nested, "run", run):
        outcome = nested.run_until_done(
            None, [[n] for n in names], list(names), [100, 200, 300][
                :len(names)], Path(tmp), None, log=said.append, **kwargs)
        kept = sorted(p.name for p in Path(tmp).iterdir())
    return outcome, boots, said, kept


class RunUntilDone(unittest.TestCase):
    def test_each_boot_takes_the_commands_left_and_their_time(self):
        outcome, boots, said, kept = until_done([1, 0, None])
        self.assertEqual(boots, [("l1", ["a", "b", "c"], 600),
                                 ("l1-2", ["b", "c"], 500),
                                 ("l1-3", ["b", "c"], 500)])
        self.assertEqual((outcome.statuses, outcome.wall_s, outcome.boots),
                         ([0, 0, 0], 30.0, 3))
        self.assertEqual(said[0], "L1 ended before 2 of its 3 commands did "
                         f"(b, c; {RESET}; its console: l1); booting it "
                         "again for them")
        # What an unfinished command left is kept beside its next run's.
        self.assertEqual(kept, ["a", "b", "b.l1-ended-1", "b.l1-ended-2",
                                "c", "c.l1-ended-1", "c.l1-ended-2"])

    def test_two_boots_in_a_row_that_finish_none_are_the_last(self):
        outcome, boots, said, _ = until_done([1, 0, 0, None])
        self.assertEqual(len(boots), 3)
        self.assertEqual((outcome.statuses, outcome.boots),
                         ([0, None, None], 3))
        self.assertTrue(said[-1].endswith(
            "; not booting it again: two boots in a row finished none"))

    def test_max_boots(self):
        outcome, boots, said, _ = until_done([1, 1, None], max_boots=2)
        self.assertEqual((len(boots), outcome.statuses), (2, [0, 0, None]))
        self.assertTrue(said[-1].endswith(
            "; not booting it again: that was boot 2 of 2"))

    def test_a_boot_that_runs_out_of_time_is_the_last(self):
        run, boots = booting(1, None)

        def timed_out(*args, **kwargs):
            outcome = run(*args, **kwargs)
            outcome.timed_out = True
            return outcome
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.object(nested, "run", timed_out):
            outcome = nested.run_until_done(
                None, [["a"], ["b"]], ["a", "b"], [1, 1], Path(tmp), None,
                log=lambda line: None)
        self.assertEqual((len(boots), outcome.statuses), (1, [0, None]))

    def test_an_l1_that_does_not_come_up_again_keeps_what_it_ran(self):
        outcome, boots, said, _ = until_done(
            [2, nested.NestedError("no init")])
        self.assertEqual((outcome.statuses, outcome.boots),
                         ([0, 0, None], 1))
        self.assertEqual(said[-1], "L1 did not come up again: no init")

    def test_a_first_boot_that_does_not_come_up_raises(self):
        with self.assertRaisesRegex(nested.NestedError, "no init"):
            until_done([nested.NestedError("no init")])


if __name__ == "__main__":
    unittest.main()
