# SPDX-License-Identifier: MIT
"""tools/compare: only passing runs are compared, the others counted."""

import contextlib
import io
import json
import tempfile
import unittest
from pathlib import Path

from tools.commands import compare


def run_doc(name, total_us, verdict="pass", run="r"):
    return {"schema": 2, "run": run, "verdict": verdict, "crash": None,
            "scenario": {"name": name}, "tests": [{
                "name": "smp", "number": 1, "status": "pass", "reason": "",
                "cases": [], "time_s": None,
                "data": [{"test": "smp", "total_us": total_us}]}],
            "host_checks": [], "problems": []}


class PassingOnly(unittest.TestCase):
    def write(self, folder, docs):
        for i, doc in enumerate(docs):
            d = Path(folder) / f"run{i}"
            d.mkdir(parents=True)
            (d / "results.json").write_text(json.dumps(doc))
        return str(folder)

    def compare(self, base, new):
        err = io.StringIO()
        with tempfile.TemporaryDirectory() as d, \
                contextlib.redirect_stdout(io.StringIO()) as out, \
                contextlib.redirect_stderr(err):
            rc = compare.main([self.write(Path(d) / "a", base),
                               self.write(Path(d) / "b", new)])
        return rc, out.getvalue(), err.getvalue()

    def test_a_crashed_run_s_figures_are_left_out(self):
        base = [run_doc("s", v) for v in (100, 101, 102)]
        # A crashed run with a wild figure would widen the range into
        # "no change"; it is left out, and the doubling shows.
        new = [run_doc("s", v) for v in (198, 200)] + \
            [run_doc("s", 5, verdict="crash")]
        rc, out, err = self.compare(base, new)
        self.assertEqual(rc, 1, out)
        self.assertIn("new: left out 1 crash run", err)
        self.assertIn("up", out)

    def test_no_change_with_runs_left_out_is_not_a_clean_exit(self):
        base = [run_doc("s", v) for v in (100, 101)] + \
            [run_doc("s", 100, verdict="fail")]
        new = [run_doc("s", v) for v in (100, 101)]
        rc, _, err = self.compare(base, new)
        self.assertEqual(rc, 3)
        self.assertIn("base: left out 1 fail run", err)

    def test_clean(self):
        rc, _, err = self.compare([run_doc("s", 100)], [run_doc("s", 100)])
        self.assertEqual((rc, err), (0, ""))


if __name__ == "__main__":
    unittest.main()
