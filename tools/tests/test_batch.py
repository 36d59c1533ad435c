# SPDX-License-Identifier: MIT
"""batch.run_one, the one way a guest is booted: what a spec asks of
the run reaches guest.run, and a negative run's record says whether it
failed as it should."""

import tempfile
import unittest
from pathlib import Path
from unittest import mock

from tools import ROOT
from tools.lib.launch import batch, guest, kvm
from tools.lib.launch.scenario import RunSpec

# A host whose KVM is absent, as run_one() asks about it.
KVM = kvm.Availability(ROOT, "10.0.2", works=(False, "not here"))


class RunOne(unittest.TestCase):
    def test_expectations_reach_the_run(self):
        spec = RunSpec("neg", "neg", boot="bios", cmdline=["test=boot"],
                       expect_status=3, expect_fail="^not ok 1 boot",
                       expect_lines=["^# a$"], iso_entry="x.preset",
                       expect_data={"smp.cpus": 4})
        doc = {"verdict": "fail", "crash": None, "expected": True}
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.object(batch.guest, "run", return_value=guest.Outcome(
                    doc, [], True)) as run:
            record, outcome = batch.run_one(spec, Path(d), KVM)
            self.assertTrue((Path(d) / "neg").is_dir())
        kwargs = run.call_args.kwargs
        self.assertEqual((kwargs["expect_status"], kwargs["expect_fail"],
                          kwargs["expect_lines"], kwargs["iso_entry"],
                          kwargs["expect_data"]),
                         (3, "^not ok 1 boot", ["^# a$"], "x.preset",
                          {"smp.cpus": 4}))
        self.assertEqual(run.call_args.args[1], ["test=boot"])
        self.assertEqual((record["verdict"], record["expected"]),
                         ("fail", True))
        self.assertIs(outcome.doc, doc)

    def test_a_run_that_cannot_start_is_not_run(self):
        spec = RunSpec("r", "r")
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.object(batch.guest, "run",
                                  side_effect=guest.CannotRun("no build")):
            record, outcome = batch.run_one(spec, Path(d), KVM)
        self.assertEqual((record["verdict"], record["reason"], outcome),
                         ("not run", "no build", None))


if __name__ == "__main__":
    unittest.main()
