# SPDX-License-Identifier: MIT
"""tools/lib/kunit.py: how make check's kunit row reads kunit.py, judged
against stand-ins (kunit.py itself is fetched at test time, never kept)."""

import os
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from tools.lib import ktap, kunit

LOG = """KTAP version 1
1..2
    KTAP version 1
    # Subtest: timers
    ok 1 pit
    ok 2 apic # SKIP rate not stated
ok 1 timers
    KTAP version 1
    # Subtest: crash
    ok 1 started
    not ok 2 the test ran to its end # ERROR crashed: #UD
not ok 2 crash # ERROR crashed: #UD
# Cases: pass:2 fail:0 skip:1 error:1
# Totals: pass:1 fail:0 skip:0 error:1
"""


def fake_kunit(folder, body):
    path = Path(folder) / "kunit.py"
    path.write_text("import sys, time\n" + body)
    return path


class Parse(unittest.TestCase):
    def test_summary_and_complaints(self):
        with tempfile.TemporaryDirectory() as d:
            tool = fake_kunit(d, (
                "print('[09:22:14] \\x1b[1;31m[ERROR]\\x1b[0m Test: x: missing plan')\n"
                "print('[09:22:14] Testing complete. Ran 4 tests: passed: 2, "
                "failed: 1, skipped: 1')\nsys.exit(1)\n"))
            got = kunit.parse(tool, Path(d) / "serial.log")
        self.assertEqual(got.exit_status, 1)
        self.assertEqual(got.counts, {"passed": 2, "failed": 1, "skipped": 1,
                                      "total": 4})
        self.assertEqual(got.summary, "Ran 4 tests: passed: 2, failed: 1, skipped: 1")
        self.assertEqual(got.complaints, ["[09:22:14] [ERROR] Test: x: missing plan"])

    def test_a_parser_that_hangs_is_cut_off(self):
        with tempfile.TemporaryDirectory() as d:
            tool = fake_kunit(d, "time.sleep(30)\n")
            got = kunit.parse(tool, Path(d) / "serial.log", timeout=0.5)
        self.assertIsNone(got.exit_status)
        self.assertIn("ran past", kunit.judge(got, ktap.parse(LOG.splitlines()), False)[0])


class Judge(unittest.TestCase):
    report = ktap.parse(LOG.splitlines())

    def verdict(self, status, **counts):
        return kunit.Verdict(status, counts, [], "Ran ...", 0.1)

    def test_leaf_counts_take_an_error_for_a_failure(self):
        self.assertEqual(kunit.leaf_counts(self.report),
                         {"passed": 2, "failed": 1, "skipped": 1})

    def test_agreement(self):
        got = self.verdict(1, passed=2, failed=1, skipped=1)
        self.assertEqual(kunit.judge(got, self.report, hvprobe_passed=False), [])

    def test_a_crash_read_as_a_pass(self):
        got = self.verdict(0, passed=3, skipped=1)
        problems = kunit.judge(got, self.report, hvprobe_passed=False)
        self.assertEqual(len(problems), 2)
        self.assertIn("exit status 0, but hvprobe's verdict is not a pass", problems[0])
        self.assertIn("kunit.py counted", problems[1])

    def test_crashed_counts_as_failed(self):
        got = self.verdict(1, passed=2, crashed=1, skipped=1)
        self.assertEqual(kunit.judge(got, self.report, False), [])

    def test_complaints_are_problems(self):
        got = kunit.Verdict(1, {"passed": 2, "failed": 1, "skipped": 1},
                            ["[ERROR] Test: x: bad"], "Ran ...", 0.1)
        self.assertEqual(kunit.judge(got, self.report, False),
                         ["kunit.py: [ERROR] Test: x: bad"])


class Fetch(unittest.TestCase):
    def test_the_cache_is_used(self):
        with tempfile.TemporaryDirectory() as d:
            tool = Path(d, "linux-source-6.1", "linux-source-6.1-6.1.1",
                        "tools", "testing", "kunit", "kunit.py")
            tool.parent.mkdir(parents=True)
            tool.write_text("")
            self.assertEqual(kunit.fetch(d, "linux-source-6.1"), tool)

    def test_no_apt_is_a_reason(self):
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.dict(os.environ, {"PATH": d}):
            with self.assertRaises(kunit.Unavailable) as caught:
                kunit.fetch(d, "linux-source-6.1")
        self.assertIn("no apt-get", str(caught.exception))


if __name__ == "__main__":
    unittest.main()
