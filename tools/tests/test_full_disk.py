# SPDX-License-Identifier: MIT
"""A full disk while a guest's serial port is streamed to its run
folder, or while a batch's index is written: "cannot write PATH: No
space left on device", exit status 3, QEMU stopped and no further run
of the queue started; never a traceback (exit 70). The disk is /dev/full
(every write fails with ENOSPC) or a replace that fails as a full disk
makes it fail."""

import contextlib
import errno
import io
import os
import sys
import tempfile
import time
import unittest
from pathlib import Path
from unittest import mock

from tools import ROOT, entry
from tools.commands import check, run, soak
from tools.lib.base.exits import EXIT_CANNOT_RUN, CannotWrite
from tools.lib.launch import batch, guest, kvm, serial
from tools.lib.launch.scenario import RunSpec

FULL = Path("/dev/full")
KVM = kvm.Availability(ROOT, "10.0.2", works=(False, "not here"))
NO_SPACE = os.strerror(errno.ENOSPC)
# A stand-in QEMU that prints a line, then would go on for a minute.
CHATTY = ("import sys, time\nprint('KTAP version 1', flush=True)\n"
          "time.sleep(60)\n")


@unittest.skipUnless(FULL.exists(), "no /dev/full here")
class Streaming(unittest.TestCase):
    def boot(self, full):
        with tempfile.TemporaryDirectory() as d:
            (Path(d) / full).symlink_to(FULL)
            g = guest.Run(Path(d), quiet=True)
            start = time.monotonic()
            with self.assertRaises(CannotWrite) as caught:
                g.boot([sys.executable, "-c", CHATTY], 50)
            self.assertLess(time.monotonic() - start, 30)
        self.assertEqual(serial._live, set())   # QEMU was stopped
        return str(caught.exception)

    def test_the_serial_log(self):
        said = self.boot(serial.LOG)
        self.assertRegex(said, rf"^cannot write \S+/{serial.LOG}: {NO_SPACE}$")

    def test_the_times(self):
        said = self.boot(serial.TIMES)
        self.assertRegex(said, rf"^cannot write \S+/{serial.TIMES}: "
                         f"{NO_SPACE}$")


def full_replace(src, dst):
    raise OSError(errno.ENOSPC, NO_SPACE)


class Queue(unittest.TestCase):
    def setUp(self):
        self.addCleanup(serial.STOP.clear)
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.dir = Path(tmp.name)
        self.specs = [RunSpec(f"r{i}", f"r{i}") for i in range(4)]
        doc = {"verdict": "pass", "crash": None}
        self.booted = []

        def booted(*args, **kwargs):
            self.booted.append(args[2])
            return guest.Outcome(doc, [], True)
        self.run = booted

    def run_all(self, **patches):
        with mock.patch.object(batch.guest, "run",
                               side_effect=patches.get("run", self.run)), \
                mock.patch.object(batch, "kvm_state", return_value=KVM), \
                contextlib.ExitStack() as stack:
            if "replace" in patches:
                stack.enter_context(mock.patch.object(
                    batch.jsonfile.os, "replace", side_effect=full_replace))
            with self.assertRaises(CannotWrite) as caught:
                batch.run_all(self.specs, self.dir, 1, {"name": "m"},
                              stream=io.StringIO(), live=False)
        return str(caught.exception)

    def test_the_index(self):
        said = self.run_all(replace=True)
        self.assertEqual(said, f"cannot write {self.dir}/index.json: "
                         f"{NO_SPACE}")
        self.assertEqual(len(self.booted), 1)
        self.assertEqual([p.name for p in self.dir.glob(".*")], [])

    def test_a_run_that_cannot_write_its_log(self):
        def full(*args, **kwargs):
            self.booted.append(args[2])
            raise CannotWrite(f"cannot write {args[2]}/serial.log: "
                              f"{NO_SPACE}")
        said = self.run_all(run=full)
        self.assertIn("r0/serial.log", said)
        self.assertEqual(len(self.booted), 1)

    def test_one_run_alone(self):
        with mock.patch.object(batch.guest, "run",
                               side_effect=CannotWrite("cannot write x")), \
                self.assertRaises(CannotWrite):
            batch.run_one(self.specs[0], self.dir, KVM)


class Status(unittest.TestCase):
    def test_exit_3_with_the_message(self):
        for module in (run, soak, check):
            stub = mock.Mock(EXITS=module.EXITS, PROG="tools/x",
                             main=mock.Mock(side_effect=CannotWrite(
                                 f"cannot write r/serial.log: {NO_SPACE}")))
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                status = entry.call(stub, "tools/x", [])
            self.assertEqual(status, EXIT_CANNOT_RUN, module.__name__)
            self.assertEqual(err.getvalue(), "tools/x: cannot write "
                             f"r/serial.log: {NO_SPACE}\n")


if __name__ == "__main__":
    unittest.main()
