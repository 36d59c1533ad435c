# SPDX-License-Identifier: MIT
"""tools/lib/launch/kvm.py: KVM found by trying it, its flavour from /sys, the
tests a flavour leaves out, and the cached probe."""

import json
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from tools.lib.launch import kvm
from tools.tests.fakehost import cpuinfo

# Both vendor modules built in: both listed, with no [module].
BOTH_BUILT_IN = ("ffffffff81049a10 t vmx_cancel_injection\n"
                 "ffffffff8106b2c0 t svm_cancel_injection\n"
                 "ffffffff81012340 T kvm_inject_nmi\n")
PVM = "ffffffffc0b01230 t pvm_cancel_injection\t[kvm_pvm]\n"


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
            f = kvm.flavour(self.sys_module(d, "kvm_pvm", "N"),
                           Path(d) / "no-proc")
        self.assertEqual((f["module"], f["enable_pmu"]), ("kvm_pvm", False))

    def test_intel_with_a_pmu(self):
        with tempfile.TemporaryDirectory() as d:
            f = kvm.flavour(self.sys_module(d, "kvm_intel", "Y"),
                           Path(d) / "no-proc")
        self.assertEqual((f["module"], f["enable_pmu"]), ("kvm_intel", True))

    def test_no_kvm_at_all(self):
        with tempfile.TemporaryDirectory() as d:
            f = kvm.flavour(self.sys_module(d, None, None),
                           Path(d) / "no-proc")
        self.assertEqual((f["module"], f["enable_pmu"]), (None, None))

    def test_flavour_reads_the_cpu_and_kallsyms(self):
        with tempfile.TemporaryDirectory() as d:
            root = self.sys_module(d, "kvm_intel", "Y")
            (root / "kvm_amd").mkdir()
            proc = Path(d) / "proc"
            proc.mkdir()
            (proc / "cpuinfo").write_text(cpuinfo("AuthenticAMD", "svm"))
            (proc / "kallsyms").write_text(BOTH_BUILT_IN)
            f = kvm.flavour(root, proc)
        self.assertEqual((f["module"], f["enable_pmu"]), ("kvm_amd", True))

    def test_host_note_only_where_the_pmu_is_off(self):
        self.assertEqual(kvm.host_notes("kvm_pvm", False),
                         {"pmi_stress": "KVM on this host has enable_pmu=N"})
        self.assertEqual(kvm.host_notes("kvm_intel", True), {})
        self.assertEqual(kvm.host_notes(None, None), {})


class VendorModule(unittest.TestCase):
    """The vendor module by the CPU's vendor and kallsyms, never by
    /sys/module's order."""

    def choose(self, vendor, flags, kallsyms, present=()):
        with tempfile.TemporaryDirectory() as d:
            for m in present:
                (Path(d) / m).mkdir()
            return kvm.vendor_module(cpuinfo(vendor, flags), kallsyms, d)

    def test_both_built_in(self):
        both = ("kvm_intel", "kvm_amd")
        module, how = self.choose("AuthenticAMD", "svm", BOTH_BUILT_IN, both)
        self.assertEqual(module, "kvm_amd")
        self.assertEqual(how, "CPU vendor AuthenticAMD with svm, "
                              "/sys/module/kvm_amd")
        self.assertEqual(self.choose("HygonGenuine", "svm", BOTH_BUILT_IN,
                                     both)[0], "kvm_amd")
        self.assertEqual(self.choose("GenuineIntel", "vmx", BOTH_BUILT_IN,
                                     both)[0], "kvm_intel")

    def test_a_module_on_a_distribution_kernel(self):
        syms = "ffffffffc1a0b2c0 t svm_cancel_injection\t[kvm_amd]\n"
        self.assertEqual(self.choose("AuthenticAMD", "svm", syms,
                                     ("kvm_amd",))[0], "kvm_amd")

    def test_kallsyms_read_only_in_doubt(self):
        reads = []

        def kallsyms():
            reads.append(1)
            return BOTH_BUILT_IN + PVM
        self.assertEqual(self.choose("AuthenticAMD", "svm", kallsyms,
                                     ("kvm_intel", "kvm_amd"))[0], "kvm_amd")
        self.assertEqual(reads, [], "/sys/module left no doubt")
        # kvm_pvm loaded beside a CPU that has VMX: kallsyms decides.
        module, how = self.choose("GenuineIntel", "vmx", kallsyms,
                                  ("kvm_intel", "kvm_pvm"))
        self.assertEqual((module, reads), ("kvm_intel", [1]))
        self.assertEqual(how, "CPU vendor GenuineIntel with vmx, "
                              "vmx_cancel_injection in kallsyms")
        # The CPU's own module not in /sys/module.
        self.assertEqual(self.choose("AuthenticAMD", "svm", BOTH_BUILT_IN,
                                     ("kvm_intel",))[0], "kvm_amd")

    def test_pvm_on_a_cpu_without_vmx(self):
        module, how = self.choose("GenuineIntel", "", BOTH_BUILT_IN + PVM,
                                  ("kvm_intel", "kvm_amd", "kvm_pvm"))
        self.assertEqual(module, "kvm_pvm")
        self.assertIn("the CPU (GenuineIntel) shows no vmx or svm", how)
        module, how = self.choose("GenuineIntel", "", BOTH_BUILT_IN + PVM,
                                  ("kvm_intel", "kvm_amd"))
        self.assertEqual(module, "kvm_pvm")
        self.assertIn("the CPU shows no vmx", how)
        self.assertEqual(self.choose("AuthenticAMD", "svm", PVM)[0],
                         "kvm_pvm", "the only one kallsyms lists")

    def test_without_kallsyms(self):
        self.assertEqual(self.choose("AuthenticAMD", "svm", "",
                                     ("kvm_intel", "kvm_amd"))[0],
                         "kvm_amd", "the CPU's own, where /sys has it")
        self.assertEqual(self.choose("GenuineIntel", "", "",
                                     ("kvm_pvm",))[0], "kvm_pvm")
        module, how = self.choose("GenuineIntel", "vmx", "")
        self.assertIsNone(module)
        self.assertIn("no cancel_injection in kallsyms", how)

    def test_cpuinfo(self):
        self.assertEqual(kvm.cpu_vendor("vendor_id\t:   Shanghai  \n"
                                        "flags\t\t: vmx ept\n"),
                         ("  Shanghai  ", {"vmx", "ept"}))
        self.assertEqual(kvm.cpu_vendor(""), (None, set()))


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
