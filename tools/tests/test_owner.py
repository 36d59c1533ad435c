# SPDX-License-Identifier: MIT
"""A root run in a user's checkout leaves nothing there that blocks the
user's next run: the folders it makes under results/, the run folders
and what is in them, the latest link and the KVM probe's cache go to the
checkout's owner. The owner is a fake one (uid 4321), and lchown a
stand-in that records what it was asked."""

import os
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from tools.lib.analysis import results
from tools.lib.base import owner
from tools.lib.launch import kvm

USER = (4321, 4322)


class HandedOver(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.checkout = Path(tmp.name).resolve()
        self.given = {}

        def lchown(path, uid, gid):
            self.given[Path(path)] = (uid, gid)
        for patch in (mock.patch.object(owner, "CHECKOUT", self.checkout),
                      mock.patch.object(owner.os, "geteuid", return_value=0),
                      mock.patch.object(owner, "_owner_of",
                                        return_value=USER),
                      mock.patch.object(owner.os, "lchown",
                                        side_effect=lchown)):
            patch.start()
            self.addCleanup(patch.stop)

    def test_the_folders_a_run_makes(self):
        (self.checkout / "results").mkdir()     # the user's own, kept
        run_dir = results.new_dir(self.checkout / "results" / "batch-1",
                                  "run")
        results.point_latest(run_dir)
        self.assertEqual(self.given, {
            self.checkout / "results" / "batch-1": USER,
            run_dir: USER,
            self.checkout / "results" / "batch-1" / results.LATEST: USER})

    def test_what_is_in_a_run_folder(self):
        run_dir = self.checkout / "results" / "r"
        (run_dir / "l1" / "deep").mkdir(parents=True)
        (run_dir / "l1" / "deep" / "results.json").write_text("{}")
        (run_dir / "serial.log").write_text("")
        (run_dir / "planted").write_text("")
        os.link(run_dir / "planted", self.checkout / "elsewhere")
        owner.hand_over(run_dir, recursive=True)
        self.assertEqual(set(self.given), {
            run_dir, run_dir / "l1", run_dir / "l1" / "deep",
            run_dir / "l1" / "deep" / "results.json",
            run_dir / "serial.log"})

    def test_the_kvm_probes_cache(self):
        with mock.patch.dict(os.environ, {"HVPROBE_KVM_CACHE": ""}), \
                mock.patch.object(kvm, "ioctl_check",
                                  return_value=(True, "ok")), \
                mock.patch.object(kvm, "probe_boot",
                                  return_value=(True, "booted")), \
                mock.patch.object(kvm, "_cache_key", return_value={}):
            kvm.works(self.checkout, "10.0")
        cache = self.checkout / "build" / "kvm-probe.json"
        self.assertTrue(cache.exists())
        self.assertEqual(self.given, {self.checkout / "build": USER,
                                      cache: USER})

    def test_nothing_outside_the_checkout(self):
        with tempfile.TemporaryDirectory() as elsewhere:
            results.new_dir(Path(elsewhere) / "results", "run")
            owner.hand_over(Path(elsewhere), recursive=True)
        self.assertEqual(self.given, {})

    def test_nothing_when_not_root_or_the_checkout_is_roots(self):
        with mock.patch.object(owner.os, "geteuid", return_value=1000):
            results.new_dir(self.checkout / "results", "run")
        with mock.patch.object(owner, "_owner_of", return_value=(0, 0)):
            results.new_dir(self.checkout / "results", "run")
        self.assertEqual(self.given, {})


if __name__ == "__main__":
    unittest.main()
