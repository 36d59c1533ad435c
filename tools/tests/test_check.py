# SPDX-License-Identifier: MIT
"""tools/check: its run list (the file it ships with, and what it refuses)
and its rows."""

import json
import tempfile
import unittest

from tools.commands import check
from tools.lib import ktap, results


class RunList(unittest.TestCase):
    def load(self, runs):
        with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
            f.write(runs if isinstance(runs, str) else json.dumps(runs))
            f.flush()
            return check.load_runs(f.name)

    def test_shipped_list(self):
        runs = check.load_runs(check.RUNS)
        names = [r["name"] for r in runs]
        self.assertEqual(len(names), len(set(names)), "run names are unique")
        # make check boots every path at least once, and the negative runs.
        for name in ("kernel", "bios", "uefi", "bad-cmdline", "crash"):
            self.assertIn(name, names)

    def expectation(self, name):
        run = next(r for r in check.load_runs(check.RUNS)
                   if r["name"] == name)
        return run["args"][run["args"].index("--expect-fail") + 1]

    def test_shipped_negative_runs_match_the_contract(self):
        for name, line in (
                ("bad-cmdline", "not ok 1 cmdline # ERROR unknown key 'foo' "
                                "(accepted: test, lpj, ...)"),
                ("crash", "not ok 1 crash # ERROR crashed: unexpected #UD "
                          "at RIP 0x106765")):
            report = ktap.parse(["KTAP version 1", "1..1", line,
                                 "# Totals: pass:0 fail:0 skip:0 error:1"])
            self.assertIsNotNone(results.expect_fail_match(
                report, self.expectation(name)), name)

    def test_refusals(self):
        for bad in ("{", {"name": "x"}, [{"name": "x"}],
                    [{"name": "x", "args": "--boot bios"}],
                    [{"name": "x", "args": [1]}],
                    [{"name": "a b", "args": []}],
                    [{"name": "x", "args": []}, {"name": "x", "args": []}]):
            with self.assertRaises(check.UsageError, msg=bad):
                self.load(bad)

    def test_missing_file(self):
        with self.assertRaises(check.UsageError):
            check.load_runs("/nonexistent/runs.json")


if __name__ == "__main__":
    unittest.main()


class Rows(unittest.TestCase):
    def test_rows_before_the_guest_runs(self):
        self.assertEqual([name for name, _ in check.ROWS],
                         ["layering", "unit", "python", "fuzz"])
        self.assertTrue(all(callable(step) for _, step in check.ROWS))

    def test_python_row_finds_both_packages(self):
        def ids(suite):
            for test in suite:
                if isinstance(test, unittest.TestSuite):
                    yield from ids(test)
                else:
                    yield test.id()
        found = {i.split(".")[0] + "." + i.split(".")[2]
                 for i in ids(check.python_suite())}
        self.assertIn("tools.test_check", found)
        self.assertIn("bench.test_smp", found)
        self.assertFalse([i for i in ids(check.python_suite())
                          if "_FailedTest" in i or "ModuleImportFailure" in i])
