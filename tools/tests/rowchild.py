# SPDX-License-Identifier: MIT
"""Tests for make check's python row to run in its child: one that
passes, fails, skips, dies or never ends. Not named test_*, so that the
suite itself does not find them."""

import os
import time
import unittest


class Outcomes(unittest.TestCase):
    """What the python row's child runs for test_check.PythonRowOutput;
    HVPROBE_ROW_CHILD says whether it sleeps or dies."""

    def test_passes(self):
        pass

    def test_fails(self):
        self.fail("on purpose")

    def test_skips(self):
        self.skipTest("on purpose")

    def test_dies(self):
        if os.environ["HVPROBE_ROW_CHILD"] != "die":
            self.skipTest("not asked to die")
        print("dying on purpose", flush=True)
        os._exit(3)

    def test_sleeps(self):
        if os.environ["HVPROBE_ROW_CHILD"] != "sleep":
            self.skipTest("not asked to sleep")
        with open(os.environ["PIDS"], "a") as f:
            f.write(f"{os.getpid()}\n")
        time.sleep(600)
