# SPDX-License-Identifier: MIT
"""QEMU command lines and boot media, pinned argument by argument."""

import tempfile
import unittest
from pathlib import Path

from tools.lib.launch import media, qemu
from tools.lib.launch.qemu import ConfigError, Machine

COMMON = ["-nodefaults", "-display", "none", "-monitor", "none",
          "-serial", "stdio", "-no-reboot",
          "-name", "hvprobe,debug-threads=on",
          "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04"]


def after(argv, flag):
    """Values of every occurrence of flag in argv."""
    return [argv[i + 1] for i, a in enumerate(argv) if a == flag]


class BootPaths(unittest.TestCase):
    def test_kernel(self):
        argv, accel = qemu.qemu_argv(Machine(), kvm_ok=False,
                                     kernel="build/hvprobe.elf32",
                                     cmdline="test=boot hz=250")
        self.assertEqual(accel, "tcg")
        self.assertEqual(argv, [
            "qemu-system-x86_64", "-machine", "q35", "-accel", "tcg",
            "-cpu", qemu.TCG_CPU, "-m", "256M", "-smp", "1", *COMMON,
            "-kernel", "build/hvprobe.elf32", "-append", "test=boot hz=250"])

    def test_bios(self):
        argv, _ = qemu.qemu_argv(Machine(boot="bios"), kvm_ok=False,
                                 iso="r/hvprobe.iso")
        self.assertEqual(argv[-4:], ["-cdrom", "r/hvprobe.iso", "-boot", "d"])
        self.assertNotIn("-kernel", argv)
        self.assertEqual(after(argv, "-drive"), [])

    def test_uefi(self):
        argv, _ = qemu.qemu_argv(Machine(boot="uefi"), kvm_ok=False,
                                 iso="r/hvprobe.iso", vars_file="r/V,1.fd")
        self.assertEqual(after(argv, "-drive"), [
            f"if=pflash,format=raw,readonly=on,file={qemu.OVMF_CODE}",
            "if=pflash,format=raw,file=r/V,,1.fd"])
        self.assertEqual(argv[-4:], ["-cdrom", "r/hvprobe.iso", "-boot", "d"])

    def test_overrides_and_extra_arguments_last(self):
        m = Machine(smp=4, mem_mib=2048, cpu="Skylake-Server",
                    machine="q35,pit=off,hpet=off",
                    extra=["-device", "intel-iommu"])
        argv, _ = qemu.qemu_argv(m, kvm_ok=True, kernel="k")
        self.assertEqual(after(argv, "-machine"), ["q35,pit=off,hpet=off"])
        self.assertEqual(after(argv, "-cpu"), ["Skylake-Server"])
        self.assertEqual(after(argv, "-m"), ["2048M"])
        self.assertEqual(after(argv, "-smp"), ["4"])
        self.assertEqual(argv[-2:], ["-device", "intel-iommu"])

    def test_empty_command_line_is_still_passed(self):
        argv, _ = qemu.qemu_argv(Machine(), kvm_ok=False, kernel="k")
        self.assertEqual(after(argv, "-append"), [""])

    def test_bad_machines(self):
        for m in (Machine(boot="pxe"), Machine(smp=0),
                  Machine(smp=3, numa=2), Machine(accel="hvf")):
            with self.assertRaises(ConfigError):
                qemu.qemu_argv(m, kvm_ok=False, kernel="k")


class Accel(unittest.TestCase):
    def test_choice(self):
        self.assertEqual(qemu.resolve_accel("auto", True), ("kvm", qemu.KVM_CPU))
        self.assertEqual(qemu.resolve_accel("auto", False), ("tcg", qemu.TCG_CPU))
        self.assertEqual(qemu.resolve_accel("tcg", True), ("tcg", qemu.TCG_CPU))
        self.assertEqual(qemu.resolve_accel("kvm", True), ("kvm", qemu.KVM_CPU))
        with self.assertRaises(ConfigError):
            qemu.resolve_accel("kvm", False)

    def test_argv_follows_kvm(self):
        argv, accel = qemu.qemu_argv(Machine(), kvm_ok=True, kernel="k")
        self.assertEqual((accel, after(argv, "-accel"), after(argv, "-cpu")),
                         ("kvm", ["kvm"], [qemu.KVM_CPU]))

    def test_kvm_device_ok_on_a_missing_device(self):
        self.assertFalse(qemu.kvm_device_ok("/nonexistent/kvm"))


class Numa(unittest.TestCase):
    def test_even_split(self):
        self.assertEqual(qemu.numa_args(512, 4, 2), [
            "-object", "memory-backend-ram,id=m0,size=256M",
            "-numa", "node,nodeid=0,cpus=0-1,memdev=m0",
            "-object", "memory-backend-ram,id=m1,size=256M",
            "-numa", "node,nodeid=1,cpus=2-3,memdev=m1"])

    def test_one_cpu_per_node(self):
        args = qemu.numa_args(300, 3, 3)
        self.assertEqual(after(args, "-numa"), [
            "node,nodeid=0,cpus=0,memdev=m0",
            "node,nodeid=1,cpus=1,memdev=m1",
            "node,nodeid=2,cpus=2,memdev=m2"])

    def test_in_argv(self):
        argv, _ = qemu.qemu_argv(Machine(smp=8, numa=4, mem_mib=1024),
                                 kvm_ok=False, kernel="k")
        self.assertEqual(len(after(argv, "-numa")), 4)
        self.assertLess(argv.index("-smp"), argv.index("-numa"))

    def test_one_socket_per_node(self):
        # Linux reuses lpj within a package, so each node must be one.
        argv, _ = qemu.qemu_argv(Machine(smp=16, numa=4, mem_mib=1024),
                                 kvm_ok=False, kernel="k")
        self.assertEqual(after(argv, "-smp"), ["16,sockets=4"])
        self.assertEqual(after(argv, "-numa")[1],
                         "node,nodeid=1,cpus=4-7,memdev=m1")
        self.assertEqual(qemu.smp_arg(1, 1), "1,sockets=1")

    def test_no_numa_leaves_topology_to_qemu(self):
        argv, _ = qemu.qemu_argv(Machine(smp=16), kvm_ok=False, kernel="k")
        self.assertEqual(after(argv, "-smp"), ["16"])

    def test_uneven(self):
        with self.assertRaisesRegex(ConfigError, "CPUs do not split"):
            qemu.numa_args(256, 3, 2)
        with self.assertRaisesRegex(ConfigError, "whole MiB"):
            qemu.numa_args(256, 3, 3)
        with self.assertRaises(ConfigError):
            qemu.numa_args(256, 1, 0)


class Sizes(unittest.TestCase):
    def test_parse(self):
        for text, mib in (("256M", 256), ("256", 256), ("2G", 2048),
                          ("1g", 1024), ("512MiB", 512), ("1T", 1 << 20)):
            self.assertEqual(qemu.parse_size(text), mib, text)
        for text in ("", "0", "12X", "1.5G", "-1M", "256K"):
            with self.assertRaises(ConfigError, msg=text):
                qemu.parse_size(text)


CFG = """\
serial --unit=0 --speed=115200
terminal_output serial
set timeout=0
menuentry "hvprobe" {
\tmultiboot2 /boot/hvprobe.elf test=boot
\tboot
}
"""


class Grub(unittest.TestCase):
    def test_quote(self):
        self.assertEqual(media.grub_quote("test=boot"), "'test=boot'")
        self.assertEqual(media.grub_quote("a'b"), "'a'\\''b'")
        self.assertEqual(media.grub_quote("$x \\ \""), "'$x \\ \"'")

    def test_rewrite(self):
        out = media.rewrite_grub_cfg(CFG, ["test=boot,smp", "it's"])
        self.assertIn("\tmultiboot2 /boot/hvprobe.elf 'test=boot,smp' "
                      "'it'\\''s'\n\tboot\n", out)
        self.assertEqual(out.count("\n"), CFG.count("\n"))

    def test_rewrite_to_empty(self):
        out = media.rewrite_grub_cfg(CFG, [])
        self.assertIn("\tmultiboot2 /boot/hvprobe.elf\n", out)

    def test_no_multiboot2_line(self):
        with self.assertRaises(media.MediaError):
            media.rewrite_grub_cfg("menuentry x {\n}\n", ["a"])

    def test_make_iso_reports_missing_tree(self):
        with tempfile.TemporaryDirectory() as tmp:
            with self.assertRaises(media.MediaError):
                media.make_iso(Path(tmp) / "nope", tmp, ["a"])

    def test_ovmf_vars_copy(self):
        with tempfile.TemporaryDirectory() as tmp:
            source = Path(tmp) / "VARS.fd"
            source.write_bytes(b"\0" * 16)
            run_dir = Path(tmp) / "run"
            run_dir.mkdir()
            copy = media.copy_ovmf_vars(source, run_dir)
            self.assertEqual(copy.read_bytes(), b"\0" * 16)
            with self.assertRaises(media.MediaError):
                media.copy_ovmf_vars(Path(tmp) / "missing", run_dir)


if __name__ == "__main__":
    unittest.main()


class TscNote(unittest.TestCase):
    """tools/run says when a TCG model will make every AP calibrate."""

    def test_models(self):
        note = qemu.tcg_tsc_note
        self.assertIsNone(note(qemu.TCG_CPU))
        self.assertIsNone(note("Skylake-Client"))
        self.assertIsNone(note("max,+invtsc"))
        self.assertIsNone(note("qemu64,invtsc=on"))
        self.assertIsNone(note("max,vendor=GenuineIntel,family=6,model=0x0e"))
        self.assertIn("every AP will calibrate", note("max"))
        self.assertIn("-cpu qemu64 has no constant TSC", note("qemu64"))
        self.assertIsNotNone(note("max,vendor=GenuineIntel,family=6,model=13"))
        self.assertIsNotNone(note("EPYC"))
        self.assertIsNotNone(note("Skylake-Client,vendor=AuthenticAMD"))
        self.assertIsNotNone(note("max,family=x"))
