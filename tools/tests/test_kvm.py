# SPDX-License-Identifier: MIT
"""tools/lib/kvm.py: KVM found by trying it, its flavour from /sys, the
tests a flavour leaves out, and the cached probe."""

import json
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from tools.lib import kvm


class Flavour(unittest.TestCase):
    def sys_module(self, d, module, pmu):
        root = Path(d)
        if module:
            (root / module).mkdir()
        if pmu is not None:
            (root / "kvm" / "parameters").mkdir(parents=True)
            (root / "kvm" / "parameters" / "enable_pmu").write_text(pmu + "\n")
        return root

    def test_pvm_without_a_pmu(self):
        with tempfile.TemporaryDirectory() as d:
            f = kvm.flavour(self.sys_module(d, "kvm_pvm", "N"))
        self.assertEqual((f["module"], f["enable_pmu"]), ("kvm_pvm", False))

    def test_intel_with_a_pmu(self):
        with tempfile.TemporaryDirectory() as d:
            f = kvm.flavour(self.sys_module(d, "kvm_intel", "Y"))
        self.assertEqual((f["module"], f["enable_pmu"]), ("kvm_intel", True))

    def test_no_kvm_at_all(self):
        with tempfile.TemporaryDirectory() as d:
            f = kvm.flavour(self.sys_module(d, None, None))
        self.assertEqual((f["module"], f["enable_pmu"]), (None, None))

    def test_host_note_only_where_the_pmu_is_off(self):
        self.assertEqual(kvm.host_notes("kvm_pvm", False),
                         {"pmi_stress": "KVM on this host has enable_pmu=N"})
        self.assertEqual(kvm.host_notes("kvm_intel", True), {})
        self.assertEqual(kvm.host_notes(None, None), {})


class LeaveOut(unittest.TestCase):
    def test_all_under_pvm_skips_exceptions_by_name(self):
        words, left = kvm.leave_out(["test=all", "hz=250"], "kvm_pvm")
        self.assertEqual(words, ["test=all", "hz=250", "skip=exceptions"])
        self.assertEqual([x["test"] for x in left], ["exceptions"])
        self.assertIn("INT3", left[0]["reason"])

    def test_no_test_word_means_all(self):
        self.assertEqual(kvm.leave_out([], "kvm_pvm")[0], ["skip=exceptions"])

    def test_a_selection_without_it_is_untouched(self):
        self.assertEqual(kvm.leave_out(["test=smp,lpj"], "kvm_pvm"),
                         (["test=smp,lpj"], []))

    def test_merges_with_the_users_skip(self):
        words, left = kvm.leave_out(["skip=cpuinfo", "test=all"], "kvm_pvm")
        self.assertEqual(words, ["test=all", "skip=cpuinfo,exceptions"])
        self.assertEqual(len(left), 1)

    def test_already_skipped_is_not_listed_again(self):
        self.assertEqual(kvm.leave_out(["skip=exceptions"], "kvm_pvm"),
                         (["skip=exceptions"], []))

    def test_other_flavours_run_everything(self):
        for module in ("kvm_intel", "kvm_amd", None):
            self.assertEqual(kvm.leave_out(["test=all"], module),
                             (["test=all"], []))


class BootLimits(unittest.TestCase):
    def test_pvm_boots_kernel_but_not_firmware(self):
        self.assertIsNone(kvm.boot_limit("kvm_pvm", "kernel"))
        self.assertIn("77 s", kvm.boot_limit("kvm_pvm", "bios"))
        self.assertIn("INT3", kvm.boot_limit("kvm_pvm", "uefi"))

    def test_pvm_cannot_offer_hyperv(self):
        self.assertIn("Hyper-V", kvm.boot_limit(
            "kvm_pvm", "kernel", "host,-arch-capabilities,hv-relaxed,+hv-time"))
        self.assertIsNone(kvm.boot_limit("kvm_pvm", "kernel", "host,+invtsc"))
        # The model's name is no flag.
        self.assertIsNone(kvm.boot_limit("kvm_pvm", "kernel", "hv-lookalike"))

    def test_other_flavours_take_everything(self):
        for module in ("kvm_intel", "kvm_amd", None):
            for boot in ("kernel", "bios", "uefi"):
                self.assertIsNone(kvm.boot_limit(module, boot, "host,hv-time"))


class Works(unittest.TestCase):
    def test_a_missing_device_is_the_reason(self):
        ok, why = kvm.ioctl_check("/nonexistent/kvm")
        self.assertFalse(ok)
        self.assertIn("/nonexistent/kvm cannot be opened", why)

    def test_a_device_that_is_not_kvm_fails_the_ioctl(self):
        ok, why = kvm.ioctl_check("/dev/null")
        self.assertFalse(ok)
        self.assertIn("KVM_GET_API_VERSION", why)

    def run_works(self, root, probe):
        with mock.patch.object(kvm, "ioctl_check", return_value=(True, "")), \
                mock.patch.object(kvm, "probe_boot", probe):
            return kvm.works(root, "10.0.2")

    def test_the_probe_is_cached_per_qemu(self):
        with tempfile.TemporaryDirectory() as d:
            probe = mock.Mock(return_value=(True, "reached its totals"))
            self.assertEqual(self.run_works(d, probe), (True, "reached its totals"))
            self.assertEqual(self.run_works(d, probe), (True, "reached its totals"))
            self.assertEqual(probe.call_count, 1)
            saved = json.loads((Path(d) / "build" / "kvm-probe.json").read_text())
            self.assertEqual(saved["key"]["qemu"], "10.0.2")
            with mock.patch.object(kvm, "ioctl_check", return_value=(True, "")), \
                    mock.patch.object(kvm, "probe_boot", probe):
                kvm.works(d, "10.1.0")
            self.assertEqual(probe.call_count, 2, "a new QEMU probes again")

    def test_a_failed_probe_is_a_reason(self):
        with tempfile.TemporaryDirectory() as d:
            probe = mock.Mock(return_value=(False, "a boot under KVM failed"))
            self.assertEqual(self.run_works(d, probe),
                             (False, "a boot under KVM failed"))

    def test_no_image_yet_is_not_cached(self):
        with tempfile.TemporaryDirectory() as d:
            probe = mock.Mock(side_effect=FileNotFoundError("no build/hvprobe.elf32"))
            ok, why = self.run_works(d, probe)
            self.assertFalse(ok)
            self.assertIn("hvprobe.elf32", why)
            self.assertFalse((Path(d) / "build" / "kvm-probe.json").exists())

    def test_probe_boot_without_an_image(self):
        with tempfile.TemporaryDirectory() as d, \
                self.assertRaises(FileNotFoundError):
            kvm.probe_boot(d)


if __name__ == "__main__":
    unittest.main()
