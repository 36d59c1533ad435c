# SPDX-License-Identifier: MIT
"""The smaller findings of a review of the host tools, one class each:
what used to crash, hang, leave files behind or say the wrong thing."""

import contextlib
import io
import os
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from tools.commands import check
from tools.commands import report as report_cmd
from tools.commands import run, soak
from tools.lib import hostinfo
from tools.lib.base import jsonfile
from tools.lib.analysis import ktap, resultset
from tools.lib.hostkernels import nested
from tools.lib.launch import kvm, media
from tools.lib.launch import scenario as scen


def usage(parse, argv):
    """(exit status, stderr) of parse(argv), None when it parsed."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            parse(argv)
        except SystemExit as exit:
            return exit.code, err.getvalue()
    return None, err.getvalue()


def scenario_file(folder, text='description = "d"\ncmdline = "test=boot"\n'):
    path = Path(folder) / "s.toml"
    path.write_text(text)
    return path


class AccelWithAMatrix(unittest.TestCase):
    # The help says --accel overrides the scenarios' accelerator.
    def test_accel_overrides(self):
        with tempfile.TemporaryDirectory() as d:
            args = run.parse_args(["--scenario", str(scenario_file(d)),
                                   "--accel", "tcg"])
        self.assertEqual({s.accel for s in args.specs}, {"tcg"})

    def test_other_machine_options_are_still_refused(self):
        with tempfile.TemporaryDirectory() as d:
            status, err = usage(run.parse_args, [
                "--scenario", str(scenario_file(d)), "--smp", "2"])
        self.assertEqual(status, 2)


class Jobs(unittest.TestCase):
    # -j does not start a QEMU per core: at most 2, as tools/check and
    # tools/soak.
    def test_default(self):
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.object(os, "cpu_count", return_value=64):
            p = run.parse_args(["--scenario", str(scenario_file(d))])
        self.assertEqual(p.jobs, 2)
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.object(os, "cpu_count", return_value=1):
            p = run.parse_args(["--scenario", str(scenario_file(d))])
        self.assertEqual(p.jobs, 1)

    def test_check_and_soak_too(self):
        with mock.patch.object(os, "cpu_count", return_value=64):
            self.assertEqual(check.parse_args([]).jobs, 2)
            self.assertEqual(soak.parse_args(["--list"]).jobs, 2)


class Nested(unittest.TestCase):
    def test_hvprobe_nested_is_checked(self):
        for given, want in (
                ('{"host_kernel": "6.1", "l0": 3, "l1_vcpus": "x", '
                 '"junk": 1}', {"host_kernel": "6.1"}),
                ("[1, 2]", None), ("nope", None), ('"6.1"', None),
                ('{"host_kernel": "\\u001b]0;x\\u0007", "l0": {"accel": '
                 '"tcg", "cpu": 5}}', {"host_kernel": "\x1b]0;x\x07",
                                       "l0": {"accel": "tcg"}})):
            with mock.patch.dict(os.environ, {"HVPROBE_NESTED": given}):
                self.assertEqual(hostinfo.nested(), want, given)

    def test_a_number_for_l0_does_not_crash_the_report(self):
        for nest in ({"host_kernel": "6.1", "l0": 3}, {"l0": [1]},
                     {"host_kernel": {"a": 1}, "l0": {"accel": 2}}):
            doc = {"host": {"nested": nest}}
            self.assertTrue(resultset.host_label(doc).startswith("L1 "))

    def test_l1s_status_indices_are_not_trusted(self):
        self.assertEqual(nested.statuses("0 0\n7 1\n-1 4\nx y\n1 2 3\n"
                                         "1 300\n", 2), [0, None])
        self.assertEqual(nested.statuses("1 3\n", 2), [None, 3])


class Soak(unittest.TestCase):
    def test_a_bogus_accelerator_is_refused(self):
        with mock.patch.dict(os.environ, {"HVPROBE_ACCEL": "bogus"}):
            status, err = usage(soak.parse_args, ["--list"])
        self.assertEqual(status, 2)
        self.assertIn("HVPROBE_ACCEL", err)


class ReportOfNothing(unittest.TestCase):
    def test_dev_null(self):
        err = io.StringIO()
        out = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            status = report_cmd.main(["/dev/null"])
        self.assertNotEqual(status, 0)
        self.assertIn("/dev/null", err.getvalue())
        self.assertEqual(out.getvalue(), "")

    def test_an_empty_file(self):
        with tempfile.TemporaryDirectory() as d:
            (Path(d) / "x.serial.log").write_bytes(b"")
            docs, problems = resultset.load([Path(d) / "x.serial.log"])
        self.assertEqual(docs, [])
        self.assertIn("empty", problems[0])


class MakeIso(unittest.TestCase):
    def test_the_tree_goes_when_mkiso_fails(self):
        with tempfile.TemporaryDirectory() as d:
            src, run_dir = Path(d) / "src", Path(d) / "run"
            (src / "boot/grub").mkdir(parents=True)
            (src / "boot/grub/grub.cfg").write_text("x\n")
            run_dir.mkdir()
            failed = mock.Mock(returncode=1, stdout="", stderr="no xorriso")
            with mock.patch.object(media.subprocess, "run",
                                   return_value=failed), \
                    self.assertRaises(media.MediaError):
                media.make_iso(src, run_dir, ["test=boot"])
            self.assertEqual(list(run_dir.iterdir()), [])


class KvmCache(unittest.TestCase):
    def test_no_temporary_file_left_and_a_plain_mode(self):
        with tempfile.TemporaryDirectory() as d:
            cache = Path(d) / "kvm-probe.json"
            with mock.patch.dict(os.environ, {"HVPROBE_KVM_CACHE": str(cache)}), \
                    mock.patch.object(kvm, "ioctl_check",
                                      return_value=(True, "ok")), \
                    mock.patch.object(kvm, "probe_boot",
                                      return_value=(True, "booted")), \
                    mock.patch.object(kvm, "_cache_key", return_value={}):
                with mock.patch.object(os, "replace",
                                       side_effect=OSError(28, "full")):
                    self.assertEqual(kvm.works(d, "10.0"), (True, "booted"))
                self.assertEqual(list(Path(d).iterdir()), [])
                kvm.works(d, "10.0")
                self.assertEqual(cache.stat().st_mode & 0o777,
                                 0o666 & ~jsonfile._UMASK)


class Typo(unittest.TestCase):
    def test_cmdline_message(self):
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaises(scen.ScenarioError) as caught:
                scen.load_scenario(scenario_file(
                    d, 'description = "d"\ncmdline = 5\n'))
        self.assertIn("cmdline must be a string or a list of words",
                      str(caught.exception))


class AtomicText(unittest.TestCase):
    def test_a_failed_write_leaves_the_old_file(self):
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "junit.xml"
            path.write_text("old")
            with mock.patch.object(os, "replace",
                                   side_effect=OSError(28, "full")), \
                    self.assertRaises(OSError):
                jsonfile.write_text(path, "<new/>")
            self.assertEqual([p.name for p in Path(d).iterdir()],
                             ["junit.xml"])
            self.assertEqual(path.read_text(), "old")
            jsonfile.write_text(path, "<new/>")
            self.assertEqual(path.read_text(), "<new/>")


class JunitInPlace(unittest.TestCase):
    # tools/check --junit goes through the atomic write: a full disk
    # leaves the last file whole, and the check fails saying why.
    def test_a_failed_junit_leaves_the_old_one(self):
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "junit.xml"
            path.write_text("<old/>")
            args = mock.Mock(json=None, junit=str(path))
            board = check.Board(["row"])
            err = io.StringIO()
            with mock.patch.object(os, "replace",
                                   side_effect=OSError(28, "No space")), \
                    contextlib.redirect_stderr(err):
                check.write_summaries(args, board, Path(d), 0.0)
            self.assertEqual(path.read_text(), "<old/>")
            self.assertEqual([p.name for p in Path(d).iterdir()],
                             ["junit.xml"])
            self.assertEqual(board.total.failed, 1)
            self.assertIn("cannot write the summary", err.getvalue())
            check.write_summaries(args, board, Path(d), 0.0)
            self.assertIn("<testsuite", path.read_text())


class TotalsInWords(unittest.TestCase):
    def test_no_enum_reprs(self):
        report = ktap.parse(["KTAP version 1", "1..1", "ok 1 a",
                             "# Totals: pass:2 fail:0 skip:0 error:0"])
        text = " ".join(report.problems)
        self.assertIn("disagree", text)
        self.assertNotIn("Status.", text)
        self.assertNotIn("<", text)
        self.assertIn("pass:1", text)


class CrossLimit(unittest.TestCase):
    def test_the_limit_is_checked_before_the_product(self):
        axes = "\n".join(f"a{i} = {{ x = {{}}, y = {{}} }}"
                         for i in range(8))
        cross = f'[[cross]]\ncmdline = "test=boot"\n[cross.axes]\n{axes}\n'
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "m.toml"
            path.write_text(cross * 60)     # 60 x 256 runs
            built = []
            real = scen._copy

            def counting(*a, **k):
                built.append(1)
                return real(*a, **k)
            with mock.patch.object(scen, "_copy", side_effect=counting), \
                    self.assertRaisesRegex(scen.ScenarioError,
                                           str(scen.MAX_RUNS)):
                scen.load_matrix(path)
        self.assertLessEqual(len(built), scen.MAX_RUNS + 1)


if __name__ == "__main__":
    unittest.main()
