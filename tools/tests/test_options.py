# SPDX-License-Identifier: MIT
"""What users of kunit.py, run_tests.sh and avocado expect of the command
lines: the QEMU binary chosen by $QEMU or --qemu, HVPROBE_ACCEL for
scenarios too, --help that says what the exit statuses mean."""

import contextlib
import io
import os
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from tools.commands import check, run, soak
from tools.lib import cli, hostinfo
from tools.lib.launch import qemu


class QemuBinary(unittest.TestCase):
    def test_env_and_option(self):
        m = qemu.Machine()
        with mock.patch.dict(os.environ, {"QEMU": "/opt/q/qemu"}):
            self.assertEqual(qemu.qemu_argv(m, False, kernel="k")[0][0],
                             "/opt/q/qemu")
            self.assertIsNone(hostinfo.qemu_version())    # no such file
        with mock.patch.dict(os.environ, {}, clear=False):
            os.environ.pop("QEMU", None)
            self.assertEqual(qemu.qemu_argv(m, False, kernel="k")[0][0],
                             "qemu-system-x86_64")
            args = run.parse_args(["--qemu", "/opt/q2/qemu"])
            run.cli.use_qemu(args)
            self.assertEqual(os.environ["QEMU"], "/opt/q2/qemu")


class Accel(unittest.TestCase):
    def test_hvprobe_accel_reaches_scenarios(self):
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "s.toml"
            path.write_text('description = "d"\naccel = "kvm"\n')
            with mock.patch.dict(os.environ, {"HVPROBE_ACCEL": "tcg"}):
                args = run.parse_args(["--scenario", str(path)])
        self.assertEqual([s.accel for s in args.specs], ["tcg"])


def refusal(parse, argv):
    """parse(argv)'s error line, with its usage and program left off."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), \
            contextlib.suppress(SystemExit):
        parse(argv)
    return err.getvalue().splitlines()[-1].split(": error: ")[-1]


class OneAccelRule(unittest.TestCase):
    """tools/run's runs and scenarios and tools/soak take the accelerator
    by one rule (cli.accel): --accel, else $HVPROBE_ACCEL, checked, else
    the command's default."""

    def accel(self, env, given=None, default=None):
        p = cli.parser("t", "doc")
        with mock.patch.dict(os.environ, {}, clear=False):
            os.environ.pop("HVPROBE_ACCEL", None)
            os.environ.update(env)
            return cli.accel(p, given, qemu.ACCELS, default)

    def test_the_option_then_the_environment_then_the_default(self):
        self.assertEqual(self.accel({"HVPROBE_ACCEL": "kvm"}, "tcg"), "tcg")
        self.assertEqual(self.accel({"HVPROBE_ACCEL": "kvm"}), "kvm")
        self.assertEqual(self.accel({}, default="auto"), "auto")
        self.assertIsNone(self.accel({}))
        self.assertIsNone(self.accel({"HVPROBE_ACCEL": ""}))

    def test_a_bogus_environment_is_refused_alike_everywhere(self):
        with mock.patch.dict(os.environ, {"HVPROBE_ACCEL": "bogus"}):
            said = {refusal(run.parse_args, []),
                    refusal(run.parse_args, ["--matrix", "check"]),
                    refusal(soak.parse_args, ["--list"]),
                    refusal(lambda argv: self.accel(
                        {"HVPROBE_ACCEL": "bogus"}), [])}
        self.assertEqual(said, {"HVPROBE_ACCEL='bogus' is not one of "
                                "auto, kvm, tcg"})


class CheckMatrix(unittest.TestCase):
    def test_tools_run_boots_checks_plain_runs_and_says_what_it_left(self):
        with mock.patch.dict(os.environ, {}, clear=False):
            os.environ.pop("HVPROBE_ACCEL", None)
            args = run.parse_args(["--matrix", "check"])
        names = [s.name for s in args.specs]
        self.assertEqual(names[:3], ["kernel", "bios", "uefi"])
        self.assertNotIn("l1-all", names)
        self.assertNotIn("linux-referee", names)
        self.assertIn("linux-referee: runs under tools/check only (tool)",
                      args.left_out)
        self.assertIn("l1-all: runs under tools/check only (host_kernels)",
                      args.left_out)


class Latest(unittest.TestCase):
    def test_results_latest_is_the_last_run(self):
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.dict(os.environ, {"HVPROBE_RESULTS": d}):
            first = run.built_and_made(run.parse_args(["--no-build",
                                                       "--name", "a"]),
                                       "x", "run")
            second = run.built_and_made(run.parse_args(["--no-build",
                                                        "--name", "b"]),
                                        "x", "run")
            self.assertEqual(os.readlink(Path(d) / "latest"), "b")
            self.assertEqual((first.name, second.name), ("a", "b"))
            # Folders a check or a soak names are not the user's last run.
            other = Path(d) / "check"
            run.built_and_made(run.parse_args([
                "--no-build", "--results", str(other), "--name", "c"]),
                "x", "run")
            self.assertFalse((other / "latest").exists())


class Help(unittest.TestCase):
    def test_exit_statuses_are_in_the_help(self):
        for parse in (run.parse_args, check.parse_args, soak.parse_args):
            with contextlib.redirect_stdout(io.StringIO()) as out, \
                    self.assertRaises(SystemExit):
                parse(["--help"])
            self.assertIn("Exit status:", out.getvalue(), parse)
            self.assertIn("130", out.getvalue(), parse)


if __name__ == "__main__":
    unittest.main()
