# SPDX-License-Identifier: MIT
"""What `make` prints, as Kbuild prints it: one `  CC      kernel/...o`
line per step, the whole command under V=1, nothing under -s (which
tools/lib/cli.py, buildinfo.py and tools/check pass), and a failed step
still named with make's own error. The build runs for real into a
scratch BUILD with `true` (or `false`) for the tools, so no compiler
runs and the tree's build/ is left alone."""

import subprocess
import tempfile
import unittest
from pathlib import Path

from tools import ROOT

TOOLS = ("CC=true", "LD=true", "OBJCOPY=true", "FUZZ_CC=true")


def make(build, *args, cc="true"):
    """make with the tools replaced, BUILD=build: (exit status, stdout,
    stderr)."""
    tools = [t if not t.startswith("CC=") else f"CC={cc}" for t in TOOLS]
    done = subprocess.run(
        ["make", "--no-print-directory", "-C", str(ROOT), f"BUILD={build}",
         *tools, *args],
        stdin=subprocess.DEVNULL, capture_output=True, text=True,
        env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"}, timeout=120)
    return done.returncode, done.stdout, done.stderr


class Quiet(unittest.TestCase):
    def setUp(self):
        scratch = tempfile.TemporaryDirectory()
        self.addCleanup(scratch.cleanup)
        self.build = Path(scratch.name)

    def test_one_line_per_step(self):
        rc, out, err = make(self.build, f"{self.build}/hvprobe.elf32",
                            f"{self.build}/unit/hvprobe-unit")
        self.assertEqual((rc, err), (0, ""))
        lines = out.splitlines()
        for step in ("  CC      kernel/x86/trap.o", "  CC      tests/smp.o",
                     "  AS      boot/entry.o"):
            self.assertTrue(step in lines, f"no {step!r} in:\n{out[:2000]}")
        self.assertEqual(lines[-3:], ["  LD      hvprobe.elf",
                                      "  OBJCOPY hvprobe.elf32",
                                      "  HOSTCC  unit/hvprobe-unit"])
        for line in lines:
            self.assertRegex(line, r"^  [A-Z]+ +[\w./-]+$")

    def test_every_step_has_its_word(self):
        rc, out, err = make(self.build, "-n", "-B", "all", "fuzz-build",
                            f"{self.build}/info.json")
        self.assertEqual(rc, 0, err)
        words = {line.split("'  ")[1].split()[0]
                 for line in out.splitlines() if "echo '  " in line}
        self.assertEqual(words, {"CC", "AS", "LD", "OBJCOPY", "COPY",
                                 "MKISO", "HOSTCC", "GEN"})

    def test_v1_prints_the_whole_command(self):
        rc, out, err = make(self.build, "V=1", f"{self.build}/hvprobe.elf32")
        self.assertEqual((rc, err), (0, ""))
        lines = out.splitlines()
        self.assertIn("  true -std=gnu11 -O2 -g -I. -ffreestanding", out)
        self.assertIn(f"  true -O elf32-i386 {self.build}/hvprobe.elf "
                      f"{self.build}/hvprobe.elf32", lines)
        self.assertTrue(any(line.endswith(
            f"-c kernel/x86/trap.c -o {self.build}/kernel/x86/trap.o")
            for line in lines), out)
        self.assertFalse("  CC      kernel/x86/trap.o" in lines)

    def test_s_prints_nothing(self):
        rc, out, err = make(self.build, "-s", f"{self.build}/hvprobe.elf32")
        self.assertEqual((rc, out, err), (0, "", ""))

    def test_a_failed_step_still_shows(self):
        rc, out, err = make(self.build, f"{self.build}/kernel/x86/trap.o",
                            cc="false")
        self.assertNotEqual(rc, 0)
        self.assertEqual(out.splitlines(), ["  CC      kernel/x86/trap.o"])
        self.assertIn("[Makefile:", err)
        self.assertIn(f"{self.build}/kernel/x86/trap.o] Error 1", err)


if __name__ == "__main__":
    unittest.main()
