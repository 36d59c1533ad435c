# SPDX-License-Identifier: MIT
"""tools/check's run list: the file it ships with, and what it refuses."""

import json
import sys
import tempfile
import unittest
from pathlib import Path

TOOLS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TOOLS))
from lib import ktap, results, script  # noqa: E402


def load_script(name):
    return script.load(TOOLS / name)


check = load_script("check")


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
