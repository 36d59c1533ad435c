# SPDX-License-Identifier: MIT
"""A referee that could not boot is not run, never a disagreement:
tools/linux-referee says NOT RUN with the last lines of Linux's console
and exits 3, and make check's referee row reads that row as a skip with
the reason."""

import contextlib
import io
import json
import tempfile
import unittest
from pathlib import Path
from types import SimpleNamespace
from unittest import mock

from tools.commands import linux_referee
from tools.lib import referee
from tools.lib.base.status import Status
from tools.lib.checks import referee as referee_row
from tools.lib.launch import serial

# hvprobe's side of a 2-vCPU boot: one AP that measured.
HVPROBE = {"calibrations": 1, "bsp_lpj_source": "lpj_fine",
           "classes": [[0], [1]], "tsc_unstable": None,
           "sync_checks": [1, 1], "verdict": "pass"}


def referee_main(results, boot):
    """tools/linux-referee's one-machine path for Linux 6.1 into results,
    with boot standing for referee.run(): (its exit status, what it
    printed)."""
    kernel = SimpleNamespace(vmlinuz="vmlinuz", release="6.1.0-57-amd64")
    with mock.patch.object(linux_referee.hostkernel, "fetch_debian",
                           return_value=kernel), \
            mock.patch.object(linux_referee.referee, "run", boot), \
            mock.patch.object(linux_referee, "hvprobe_side",
                              return_value=HVPROBE), \
            mock.patch.object(linux_referee.guest, "kvm_ok_for",
                              return_value=False), \
            contextlib.redirect_stdout(io.StringIO()) as out:
        rc = linux_referee.main(["--no-build", "--accel", "tcg",
                                 "--results", str(results), "--name", "r",
                                 "--series", "6.1"])
    return rc, out.getvalue()


class NotRun(unittest.TestCase):
    def setUp(self):
        self.dir = Path(self.enterContext(tempfile.TemporaryDirectory()))

    def referee(self, linux):
        """tools/linux-referee's one-machine path over a Linux that
        prints a stalled console (linux None) or finishes (a Verdict)."""
        def boot(vmlinuz, machine, run_dir, kvm_ok, timeout):
            Path(run_dir).mkdir(parents=True)
            (Path(run_dir) / serial.LOG).write_text(
                "Linux version 6.1.0-57-amd64\n\x1b]0;pwned\x07smpboot: "
                "Booting Node 1 Processor 1 APIC 0x1\n")
            return linux

        rc, out = referee_main(self.dir, boot)
        doc = json.loads((self.dir / "r" / "referee.json").read_text())
        return rc, out, doc

    def test_a_stalled_linux_is_not_run_with_its_last_lines(self):
        rc, out, doc = self.referee(None)
        self.assertEqual(rc, 3, out)
        self.assertNotIn("DISAGREE", out)
        self.assertIn("NOT RUN  6.1: Linux 6.1.0-57-amd64 never finished", out)
        self.assertIn("smpboot: Booting Node 1 Processor 1", out)
        self.assertNotIn("\x1b", out)
        self.assertTrue(doc["agree"])
        self.assertEqual(doc["not_run"], ["6.1"])
        counts, verdict, text = referee_row.referee_counts(self.dir / "r", rc)
        self.assertEqual((counts.passed, counts.failed, counts.skipped,
                          verdict), (0, 0, 1, Status.SKIP))
        self.assertIn("SKIP Linux 6.1: Linux 6.1.0-57-amd64 never finished",
                      text)

    def test_a_linux_that_reset_first_says_so(self):
        linux = referee.Verdict(cpus=[("0", "4000.00"), ("0", "4010.00")],
                                bsp_source="lpj_fine", calibrations=1,
                                resets=2)
        rc, out, doc = self.referee(linux)
        self.assertIn("  (Linux reset 2 times before this boot; consoles: "
                      "serial.log.reset-1, serial.log.reset-2)", out)
        self.assertEqual(doc["rows"][0]["linux"]["resets"], 2)

    def test_a_finished_linux_is_still_judged(self):
        linux = referee.Verdict(cpus=[("0", "4000.00"), ("0", "4000.00")],
                                bsp_source="lpj_fine", calibrations=0)
        rc, out, doc = self.referee(linux)
        self.assertEqual(rc, 1, out)
        self.assertIn("DISAGREE  6.1", out)
        counts, verdict, text = referee_row.referee_counts(self.dir / "r",
                                                           rc)
        # Both CPUs' bogomips are equal: Linux measured on neither AP and
        # they share one lpj, where hvprobe's AP measured its own.
        self.assertEqual((counts.failed, verdict), (2, Status.FAIL))
        self.assertIn("FAIL APs that calibrated: Linux 6.1.0-57-amd64 0, "
                      "hvprobe linux-6.1 1", text)
        self.assertIn("FAIL CPUs that share an lpj: Linux 6.1.0-57-amd64 "
                      "{0,1}, hvprobe linux-6.1 {0} {1}", text)
        self.assertIn("SKIP TSC-sync checks", text)
        self.assertIn("  disagree      CPUs that share an lpj   Linux {0,1}; "
                      "hvprobe {0} {1}", out)
        self.assertIn("DISAGREE  6.1: 2 agree, 2 disagree, 1 not compared",
                      out)
        self.assertEqual([c["verdict"] for c in doc["rows"][0]["comparisons"]],
                         ["disagree", "agree", "disagree", "agree",
                          "not compared"])


class Ending(unittest.TestCase):
    """Why a referee boot that never finished stopped: a QEMU that exits
    mid-line (a guest reset under -no-reboot) is not a timeout."""

    def boot(self, script, timeout=60):
        """referee.run() over a QEMU that is script, run in the run
        folder (self.dir)."""
        d = Path(self.enterContext(tempfile.TemporaryDirectory()))
        self.dir = d / "b"
        argv = ["sh", "-c", f"cd {self.dir} && {script}"]
        with mock.patch.object(referee, "initramfs", lambda out: Path(out)), \
                mock.patch.object(referee.qemu, "qemu_argv",
                                  lambda *a, **k: (argv, None)):
            verdict = referee.run("vmlinuz", referee.qemu.Machine(),
                                  self.dir, timeout=timeout)
        return verdict, referee.ending(self.dir)

    def test_a_reset_mid_line_says_qemu_exited(self):
        verdict, why = self.boot("printf 'Linux version 6.1\\nACPI: PCI: I'")
        self.assertIsNone(verdict)
        self.assertRegex(why, r"^QEMU exited with status 0 after \d+ s, "
                              r"with no end marker: the guest reset or "
                              r"powered off \(-no-reboot\); each of its 4 "
                              r"boots reset$")
        # Every reset's console is kept beside the last one's.
        self.assertEqual(sorted(p.name for p in self.dir.glob("serial.log*")),
                         ["serial.log", "serial.log.reset-1",
                          "serial.log.reset-2", "serial.log.reset-3"])

    def test_a_qemu_ended_by_a_signal_is_no_reset(self):
        # QEMU exits with status 0 on SIGTERM as well, and says why.
        verdict, why = self.boot(
            "printf 'Linux version 6.1\\n'; printf 'qemu-system-x86_64: "
            "terminating on signal 15 from pid 7 (bash)\\n' >&2")
        self.assertIsNone(verdict)
        self.assertRegex(why, r"^QEMU exited after \d+ s: qemu-system-x86_64: "
                              r"terminating on signal 15 from pid 7 \(bash\)$")
        self.assertEqual([p.name for p in self.dir.glob("serial.log*")],
                         ["serial.log"])

    def test_a_boot_that_reset_once_is_booted_again(self):
        marks = f"{referee.BEGIN}\\nprocessor : 0\\nbogomips : 4000.00" \
            f"\\n{referee.END}\\n"
        verdict, why = self.boot(
            "if [ -e once ]; then printf '" + marks + "'; "
            "else : > once; printf 'Linux version 6.1\\nNetLabel: I'; fi")
        self.assertEqual((verdict.resets, len(verdict.cpus), why),
                         (1, 1, ""))
        self.assertEqual(verdict.to_json()["resets"], 1)
        self.assertEqual((self.dir / "serial.log.reset-1").read_text(),
                         "Linux version 6.1\nNetLabel: I")

    def test_a_timeout_is_not_booted_again(self):
        verdict, why = self.boot("echo 'Linux version 6.1'; exec sleep 60",
                                 timeout=1)
        self.assertIsNone(verdict)
        self.assertEqual(why, "still running after 1 s")
        self.assertEqual([p.name for p in self.dir.glob("serial.log*")],
                         ["serial.log"])

    def test_the_row_names_why(self):
        def boot(vmlinuz, machine, run_dir, kvm_ok, timeout):
            Path(run_dir).mkdir(parents=True)
            (Path(run_dir) / serial.LOG).write_text("ACPI: PCI: I")
            (Path(run_dir) / referee.ENDED).write_text(
                "QEMU exited with status 0 after 18 s, with no end marker: "
                "the guest reset or powered off (-no-reboot)\n")
            return None

        d = Path(self.enterContext(tempfile.TemporaryDirectory()))
        rc, out = referee_main(d, boot)
        self.assertEqual(rc, 3)
        self.assertIn("NOT RUN  6.1: Linux 6.1.0-57-amd64 never finished "
                      "(QEMU exited with status 0 after 18 s, with no end "
                      "marker: the guest reset or powered off (-no-reboot)); "
                      "its console's last lines: ACPI: PCI: I", out)


class Console(unittest.TestCase):
    def test_the_boot_keeps_its_console_from_the_first_line(self):
        seen = {}

        def argv(machine, kvm_ok, kernel, cmdline):
            seen["cmdline"] = cmdline
            raise RuntimeError("stop here")

        with tempfile.TemporaryDirectory() as d, \
                mock.patch.object(referee, "initramfs",
                                  lambda out: Path(out)), \
                mock.patch.object(referee.qemu, "qemu_argv", argv), \
                self.assertRaises(RuntimeError):
            referee.run("vmlinuz", referee.qemu.Machine(), d)
        self.assertIn("earlyprintk=serial,ttyS0,115200", seen["cmdline"])
        self.assertNotIn("quiet", seen["cmdline"].split())


if __name__ == "__main__":
    unittest.main()
