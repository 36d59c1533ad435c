# SPDX-License-Identifier: MIT
"""tools/lib/analysis/kunit.py: how make check's kunit row reads
kunit.py, judged against stand-ins (kunit.py itself is fetched at test time, never kept)."""

import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from tools.lib.analysis import ktap, kunit
from tools.lib.base import aptdeb

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

    def test_fail_and_skip_counts_are_compared(self):
        # The same passes, a failure read as a skip: not the same reading.
        got = self.verdict(1, passed=2, failed=0, skipped=2)
        self.assertIn("kunit.py counted", kunit.judge(got, self.report,
                                                      False)[0])
        got = self.verdict(1, passed=2, failed=2, skipped=0)
        self.assertIn("kunit.py counted", kunit.judge(got, self.report,
                                                      False)[0])

    def test_complaints_are_problems(self):
        got = kunit.Verdict(1, {"passed": 2, "failed": 1, "skipped": 1},
                            ["[ERROR] Test: x: bad"], "Ran ...", 0.1)
        self.assertEqual(kunit.judge(got, self.report, False),
                         ["kunit.py: [ERROR] Test: x: bad"])


# A stand-in for apt-get: --print-uris names FAKE_APT_DEB's file, size
# and SHA256 (FAKE_APT_SHA256 lies about it when set); download copies
# it into the current folder, plants another .deb of the package beside
# it, and notes the folder's mode in FAKE_APT_MODES.
FAKE_APT = """#!/usr/bin/env python3
import hashlib, os, shutil, stat, sys
deb = os.environ["FAKE_APT_DEB"]
name = os.path.basename(deb)
data = open(deb, "rb").read()
sha = os.environ.get("FAKE_APT_SHA256") or hashlib.sha256(data).hexdigest()
if "--print-uris" in sys.argv:
    print(f"'http://deb.example/{name}' {name} {len(data)} SHA256:{sha}")
    sys.exit(0)
with open(os.environ["FAKE_APT_MODES"], "a") as f:
    f.write(oct(stat.S_IMODE(os.stat(".").st_mode)) + "\\n")
open(name.split("_")[0] + "_0planted_all.deb", "wb").write(b"planted")
if os.environ.get("FAKE_APT_VICTIM"):
    # _apt owns the folder: it can plant a link where root unpacks.
    os.symlink(os.environ["FAKE_APT_VICTIM"], "unpacked")
shutil.copy(deb, name)
"""


class FakeApt:
    """A PATH with the fake apt-get first, and a .deb holding kunit.py
    the way linux-source-X packages hold it."""

    def __init__(self, folder, package="linux-source-6.1"):
        self.dir = Path(folder)
        bin_dir = self.dir / "bin"
        bin_dir.mkdir()
        (bin_dir / "apt-get").write_text(FAKE_APT)
        (bin_dir / "apt-get").chmod(0o755)
        src = self.dir / "src" / "linux-source-6.1" / "tools" / \
            "testing" / "kunit"
        src.mkdir(parents=True)
        (src / "kunit.py").write_text("# the real one\n")
        pkg = self.dir / "pkg"
        (pkg / "usr" / "src").mkdir(parents=True)
        (pkg / "DEBIAN").mkdir()
        (pkg / "DEBIAN" / "control").write_text(
            f"Package: {package}\nVersion: 6.1.1-1\nArchitecture: all\n"
            "Maintainer: x <x@example.org>\nDescription: x\n")
        subprocess.run(["tar", "-cJf",
                        str(pkg / "usr" / "src" / "linux-source-6.1.tar.xz"),
                        "-C", str(self.dir / "src"), "linux-source-6.1"],
                       check=True)
        self.deb = self.dir / f"{package}_6.1.1-1_all.deb"
        subprocess.run(["dpkg-deb", "-b", "-Zgzip", str(pkg), str(self.deb)],
                       check=True, capture_output=True)
        self.modes = self.dir / "modes"
        self.env = {"PATH": f"{bin_dir}:{os.environ['PATH']}",
                    "FAKE_APT_DEB": str(self.deb),
                    "FAKE_APT_MODES": str(self.modes)}


@unittest.skipUnless(shutil.which("dpkg-deb"), "needs dpkg-deb")
class SafeFetch(unittest.TestCase):
    """kunit.py is run by make check, as root too: it must be the file
    apt's signed index names, fetched where nobody else can write."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.apt = FakeApt(self.tmp.name)
        self.cache = Path(self.tmp.name) / "cache"

    def tearDown(self):
        self.tmp.cleanup()

    def test_the_named_file_in_a_private_folder(self):
        with mock.patch.dict(os.environ, self.apt.env):
            found = kunit.fetch(self.cache, "linux-source-6.1")
        self.assertEqual(found.read_text(), "# the real one\n")
        self.assertEqual(found.parent.parent.parent.parent.name,
                         "linux-source-6.1-6.1.1-1")
        self.assertEqual(self.apt.modes.read_text(), "0o700\n")
        # Nothing of the download is left beside the cache.
        self.assertEqual(sorted(p.name for p in self.cache.iterdir()),
                         ["linux-source-6.1"])

    def test_nothing_is_unpacked_in_apts_folder(self):
        victim = Path(self.tmp.name) / "victim"
        victim.mkdir()
        env = dict(self.apt.env, FAKE_APT_VICTIM=str(victim))
        with mock.patch.dict(os.environ, env):
            found = kunit.fetch(self.cache, "linux-source-6.1")
        self.assertEqual(found.read_text(), "# the real one\n")
        self.assertEqual(list(victim.iterdir()), [])

    def test_a_file_that_is_not_the_index_s_is_refused(self):
        env = dict(self.apt.env, FAKE_APT_SHA256="0" * 64)
        with mock.patch.dict(os.environ, env):
            with self.assertRaises(kunit.Unavailable) as caught:
                kunit.fetch(self.cache, "linux-source-6.1")
        self.assertIn("not the file apt's index names", str(caught.exception))
        self.assertIsNone(kunit.cached(self.cache, "linux-source-6.1"))

    def test_print_uris_must_name_one_file(self):
        self.assertEqual(aptdeb.named_file("p=1", (
            "'http://x/p_1_all.deb' p_1_all.deb 10 SHA256:" + "a" * 64)),
            ("p_1_all.deb", 10, "a" * 64))
        for out in ("", "'http://x/q_1_all.deb' q_1_all.deb 1 SHA256:"
                    + "a" * 64, "'http://x/p_1_all.deb' ../p_1_all.deb 1 "
                    "SHA256:" + "a" * 64):
            with self.assertRaises(aptdeb.AptError):
                aptdeb.named_file("p", out)


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
