# SPDX-License-Identifier: MIT
"""The serial console both kernels are timed by: serial.times read back,
and a stand-in for QEMU run to its end, to a line that ends the run, and
past its deadline."""

import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from tools.lib.launch import serial

FAKE_QEMU = """\
import sys, time
print("one\\r", flush=True)
time.sleep(0.3)
sys.stdout.write("two\\x1b[2J\\nstop here\\nafter\\n")
sys.stdout.flush()
sys.stderr.write("qemu: said something\\n")
time.sleep(float(sys.argv[1]))
print("late", flush=True)
"""


class Stopper(serial.Console):
    def __init__(self, run_dir):
        super().__init__(run_dir)
        self.seen = []

    def line(self, raw, text, stamp):
        self.seen.append((raw, text))
        return text == "stop here"


class Asker(serial.Console):
    """Stops at its third asking, with no line to go by."""

    def __init__(self, run_dir):
        super().__init__(run_dir)
        self.asked = 0

    def stopped(self):
        self.asked += 1
        return self.asked == 3


class Console(unittest.TestCase):
    def setUp(self):
        self.dir = Path(self.enterContext(tempfile.TemporaryDirectory()))

    def fake(self, sleep):
        return [sys.executable, "-c", FAKE_QEMU, str(sleep)]

    def times(self):
        return serial.read_times((self.dir / serial.TIMES).read_text())

    def test_read_times(self):
        self.assertEqual(serial.read_times("0.5 a b\n1.25 \nno stamp\n2 c"),
                         [(0.5, "a b"), (1.25, ""), (2.0, "c")])

    def test_to_the_end(self):
        run = serial.Console(self.dir)
        run.boot(self.fake(0), timeout=30)
        self.assertEqual([t for _, t in self.times()],
                         ["one", "two", "stop here", "after", "late"])
        stamps = [s for s, _ in self.times()]
        self.assertEqual(stamps, sorted(stamps))
        self.assertGreater(stamps[1] - stamps[0], 0.2)
        self.assertEqual((run.exit_status, run.timed_out, run.cut_short),
                         (0, False, False))
        self.assertEqual(run.stderr_lines(), ["qemu: said something"])
        self.assertIn(b"two\x1b[2J\n", (self.dir / serial.LOG).read_bytes())

    def test_a_line_ends_the_run(self):
        run = Stopper(self.dir)
        run.boot(self.fake(30), timeout=20)
        self.assertEqual([t for _, t in self.times()],
                         ["one", "two", "stop here"])
        self.assertEqual(run.seen[0], (b"one\r", "one"))
        self.assertTrue(run.cut_short)
        self.assertFalse(run.timed_out)
        self.assertLess(run.wall, 10)
        self.assertNotEqual(run.exit_status, 0)     # killed

    def test_stopped_is_asked_between_lines_and_ends_the_run(self):
        # The fake says nothing for 30 s after its first lines: the run is
        # asked all the same, and ends at the third asking.
        run = Asker(self.dir)
        with mock.patch.object(serial, "POLL_S", 0.2):
            run.boot(self.fake(30), timeout=20)
        self.assertEqual(run.asked, 3)
        self.assertTrue(run.cut_short)
        self.assertFalse(run.timed_out)
        self.assertLess(run.wall, 10)

    def test_deadline(self):
        run = serial.Console(self.dir)
        run.boot(self.fake(30), timeout=1)
        self.assertTrue(run.timed_out and run.cut_short)
        self.assertEqual(self.times()[-1][1], "after")

    def test_no_qemu(self):
        with self.assertRaisesRegex(serial.CannotStart,
                                    "cannot start /nonexistent"):
            serial.Console(self.dir).boot(["/nonexistent"], timeout=1)


if __name__ == "__main__":
    unittest.main()
