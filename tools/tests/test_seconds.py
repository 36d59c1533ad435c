# SPDX-License-Identifier: MIT
"""One type for every duration, on command lines and in files: a
timeout or window that is infinite, not a number, absurdly large or not
a number at all is a clear error naming its option or key, never a
traceback or an endless run."""

import argparse
import contextlib
import io
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from bench.commands import linux_bringup, smp, thread_table
from tools.commands import host_cancel_probe, lava_run, pmi_verdict, run, soak
from tools.lib.base import seconds
from tools.lib.launch import scenario

BAD = ("inf", "-inf", "nan", "1e300", "0", "-1", "x", "")


class Type(unittest.TestCase):
    def test_finite_numbers_pass(self):
        self.assertEqual(seconds.finite(2.5), 2.5)
        self.assertEqual(seconds.finite(120), 120.0)
        self.assertEqual(seconds.option("2.5"), 2.5)
        self.assertEqual(seconds.finite(0.001), 0.001)

    def test_the_rest_is_refused(self):
        for value in (float("inf"), float("nan"), 1e300, 10 ** 400, 0, -1,
                      True, None, [1], "60", seconds.MAX_S):
            with self.assertRaises(ValueError, msg=repr(value)) as caught:
                seconds.finite(value)
            self.assertIn("seconds", str(caught.exception))

    def test_option_is_an_argparse_type(self):
        for text in BAD:
            with self.assertRaises(argparse.ArgumentTypeError) as caught:
                seconds.option(text)
            self.assertIn("seconds", str(caught.exception))
        self.assertEqual(seconds.option("3"), 3.0)


class CommandLines(unittest.TestCase):
    def refused(self, parse, argv, option, unit="seconds"):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), \
                self.assertRaises(SystemExit) as caught:
            parse(argv)
        self.assertEqual(caught.exception.code, 2, argv)
        self.assertIn(option, err.getvalue())
        self.assertIn(unit, err.getvalue())
        self.assertNotIn("Traceback", err.getvalue())

    def test_every_duration_option(self):
        for value in BAD:
            for parse, option in (
                    (run.parse_args, "--timeout"),
                    (soak.parse_args, "--timeout"),
                    (pmi_verdict.parse_args, "--timeout"),
                    (host_cancel_probe.parse_args, "--duration"),
                    (smp.parse_args, "--timeout"),
                    (linux_bringup.parse_args, "--timeout"),
                    (thread_table.parse_args, "--timeout")):
                flag = "-d" if option == "--duration" else option
                self.refused(parse, [f"{flag}={value}"], option)

    def test_lava_minutes(self):
        for value in (*BAD, "1.5", str(10 ** 20)):
            self.refused(lava_run.parse_args, [f"--timeout={value}"],
                         "--timeout", "minutes")
        self.assertEqual(lava_run.parse_args(["--timeout", "7"]).timeout, 7)


class Files(unittest.TestCase):
    def load(self, timeout):
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "s.toml"
            path.write_text('description = "d"\ncmdline = "test=boot"\n'
                            f"timeout = {timeout}\n")
            return scenario.load_scenario(path)

    def test_a_scenario_timeout(self):
        self.assertEqual(self.load("30")[0].timeout_s, 30.0)
        for value in ("inf", "nan", "-inf", "1e300", "0", "true", '"60"'):
            with self.assertRaises(scenario.ScenarioError,
                                   msg=value) as caught:
                self.load(value)
            self.assertIn("timeout", str(caught.exception))
            self.assertIn("seconds", str(caught.exception))

    def test_the_bench_smp_sweep_timeout(self):
        for value in (float("inf"), float("nan"), 1e300):
            with mock.patch.object(smp, "sweep_table",
                                   return_value={"timeout": value}), \
                    self.assertRaises(smp.Fatal) as caught:
                smp.sweep_timeout()
            self.assertIn("timeout", str(caught.exception))
        with mock.patch.object(smp, "sweep_table", return_value={}):
            self.assertEqual(smp.sweep_timeout(), 300.0)


if __name__ == "__main__":
    unittest.main()
