# SPDX-License-Identifier: MIT
"""--resume DIR goes on only with the batch DIR's index names: the same
matrix or scenarios and the same runs. Another batch's folder is refused
before anything in it is touched, and a folder the index does not list
is never removed, whatever it holds."""

import contextlib
import io
import json
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from tools.commands import run
from tools.lib.launch import batch
from tools.lib.launch import scenario as scen


def scenario_file(folder, name="s"):
    path = Path(folder) / f"{name}.toml"
    path.write_text('description = "d"\ncmdline = "test=boot"\n')
    return path


def index_of(about, runs, plan=None):
    doc = {"schema": 1, "kind": "batch", **about, "jobs": 1,
           "complete": False,
           "runs": [{"name": n, "run": n, "repeat": 1, "verdict": "pass",
                     "reason": None, "wall_s": 1.0} for n in runs]}
    if plan is not None:
        doc["plan"] = plan
    return doc


class Refused(unittest.TestCase):
    def resume(self, folder, scenario):
        """tools/run --scenario scenario --resume folder, in process,
        with the batch itself a stand-in: (exit status, stderr)."""
        err = io.StringIO()
        fake = {"runs": [], "elapsed_s": 0.0}
        with mock.patch.object(batch, "run_all", return_value=fake) as ran, \
                mock.patch.object(run.report, "load_docs",
                                  return_value=([], [])), \
                contextlib.redirect_stderr(err), \
                contextlib.redirect_stdout(io.StringIO()):
            try:
                status = run.main(["--no-build", "--scenario", str(scenario),
                                   "--resume", str(folder)])
            except SystemExit as exit:
                status = exit.code
        return status, err.getvalue(), ran.called

    def test_another_matrix_is_refused_and_left_alone(self):
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            mine = scenario_file(d)
            old = d / "last-week"
            notes = old / "s" / "notes.txt"
            notes.parent.mkdir(parents=True)
            notes.write_text("a user's notes\n")
            (old / batch.INDEX).write_text(json.dumps(index_of(
                {"name": "pmu", "matrix": "tools/matrices/pmu.toml"},
                ["pmu-a"])))
            before = (old / batch.INDEX).read_text()
            status, err, ran = self.resume(old, mine)
            self.assertEqual(status, 2, err)
            self.assertIn("--resume", err)
            self.assertFalse(ran)
            self.assertEqual(notes.read_text(), "a user's notes\n")
            self.assertEqual((old / batch.INDEX).read_text(), before)

    def test_other_runs_are_refused(self):
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            mine = scenario_file(d)
            old = d / "b"
            old.mkdir()
            (old / batch.INDEX).write_text(json.dumps(index_of(
                {"name": "s", "scenarios": [str(mine)]}, ["t"])))
            status, err, ran = self.resume(old, mine)
            self.assertEqual(status, 2, err)
            self.assertFalse(ran)

    def test_a_changed_plan_is_refused(self):
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            mine = scenario_file(d)
            old = d / "b"
            old.mkdir()
            (old / batch.INDEX).write_text(json.dumps(index_of(
                {"name": "s", "scenarios": [str(mine)]}, ["s"],
                plan=["s", "s-r2"])))
            status, err, ran = self.resume(old, mine)
            self.assertEqual(status, 2, err)

    def test_an_unreadable_index_is_refused(self):
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            mine = scenario_file(d)
            old = d / "b"
            old.mkdir()
            (old / batch.INDEX).write_text("[1, 2")
            status, err, ran = self.resume(old, mine)
            self.assertEqual(status, 2, err)
            self.assertFalse(ran)

    def test_the_same_batch_goes_on(self):
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            mine = scenario_file(d)
            old = d / "b"
            old.mkdir()
            (old / batch.INDEX).write_text(json.dumps(index_of(
                {"name": "s", "scenarios": [str(mine)]}, [], plan=["s"])))
            status, err, ran = self.resume(old, mine)
            self.assertTrue(ran, err)


class NeverUnlisted(unittest.TestCase):
    def test_only_listed_folders_are_cleared(self):
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            specs = scen.repeated(scen.load_scenario(scenario_file(d)), 2)
            listed, unlisted = (d / s.run_name for s in specs)
            for folder in (listed, unlisted):
                folder.mkdir()
                (folder / "serial.log").write_text("KTAP version 1\n")
            self.assertIsNone(batch.earlier(specs[0], d, {listed.name}))
            self.assertFalse(listed.exists())
            self.assertIsNone(batch.earlier(specs[1], d, {listed.name}))
            self.assertTrue((unlisted / "serial.log").exists())

    def test_the_plan_is_in_the_index(self):
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            specs = scen.repeated(scen.load_scenario(scenario_file(d)), 2)
            with mock.patch.object(batch, "run_one", side_effect=lambda s, *a: (
                    {"name": s.name, "run": s.run_name, "repeat": s.repeat,
                     "verdict": "pass", "reason": None, "wall_s": 1.0},
                    None)), \
                    mock.patch.object(batch, "kvm_state", return_value={}):
                batch.run_all(specs, d, 1, {"name": "s"}, stream=io.StringIO(),
                              live=False)
            index = json.loads((d / batch.INDEX).read_text())
            self.assertEqual(index["plan"], ["s", "s-r2"])


if __name__ == "__main__":
    unittest.main()
