# SPDX-License-Identifier: MIT
"""tools/lib/launch/guest.py end to end over a stand-in QEMU: what a run
under a KVM flavour leaves out, says and records."""

import json
import os
import stat
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from tools.lib.launch import guest, kvm, qemu

# Answers like hvprobe: every test the kernel's skip= names reports SKIP
# by name, the others pass, the boot test echoes the command line.
FAKE_QEMU = r"""#!/usr/bin/env python3
import json, sys
args = sys.argv[1:]
cmdline = args[args.index("-append") + 1] if "-append" in args else "test=all"
tests = ["boot", "exceptions", "pmi_stress"]
skip = [w[5:].split(",") for w in cmdline.split() if w.startswith("skip=")]
skip = skip[-1] if skip else []
print("KTAP version 1")
print(f"1..{len(tests)}")
for n, name in enumerate(tests, 1):
    if name in skip:
        print(f"ok {n} {name} # SKIP skip= on the command line")
    elif name == "pmi_stress":
        print("    KTAP version 1")
        print("    # Subtest: pmi_stress")
        print("    ok 1 no PMU # SKIP no PMU")
        print(f"ok {n} pmi_stress # SKIP no PMU")
    else:
        print("    KTAP version 1")
        print(f"    # Subtest: {name}")
        print(f"    ok 1 {name} works")
        if name == "boot":
            print("    # DATA " + json.dumps({"test": "boot", "cmdline": cmdline,
                                               "mem_extent_kib": 262144}))
        print(f"ok {n} {name}")
print("# Totals: pass:%d fail:0 skip:%d error:0" % (3 - 1 - len(skip), 1 + len(skip)))
sys.exit(1)
"""


class UnderAFlavour(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        bin_dir = Path(self.tmp.name) / "bin"
        bin_dir.mkdir()
        fake = bin_dir / "qemu-system-x86_64"
        fake.write_text(FAKE_QEMU)
        fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
        path = f"{bin_dir}{os.pathsep}{os.environ['PATH']}"
        self.enterContext(mock.patch.dict(os.environ, {"PATH": path}))

    def run_under(self, module, enable_pmu, accel, words):
        state = {"module": module, "enable_pmu": enable_pmu,
                 "kernel": "6.18.44", "works": True, "reason": "probed"}
        run_dir = Path(self.tmp.name) / f"run-{accel}"
        run_dir.mkdir()
        with mock.patch.object(kvm, "state", return_value=state), \
                mock.patch.object(guest, "need", side_effect=lambda p, *a: p):
            outcome = guest.run(qemu.Machine(accel=accel), words, run_dir,
                                timeout=30, kvm_ok=True)
        saved = json.loads((run_dir / "results.json").read_text())
        self.assertEqual(saved["cmdline"], outcome.doc["cmdline"])
        return outcome

    def test_a_passing_run_leaves_no_iso(self):
        run_dir = Path(self.tmp.name) / "bios"
        run_dir.mkdir()

        def make_iso(isodir, into, words):
            iso = Path(into) / "hvprobe.iso"
            iso.write_bytes(b"\0" * 4096)
            return iso
        state = {"module": "kvm_intel", "enable_pmu": True, "kernel": "6",
                 "works": True, "reason": "probed"}
        with mock.patch.object(kvm, "state", return_value=state), \
                mock.patch.object(guest, "need", side_effect=lambda p, *a: p), \
                mock.patch.object(guest.media, "make_iso", make_iso):
            out = guest.run(qemu.Machine(boot="bios", accel="tcg"),
                            ["test=all"], run_dir, timeout=30, kvm_ok=False)
        self.assertTrue(out.ok, out.lines)
        self.assertFalse((run_dir / "hvprobe.iso").exists())

    def test_expect_data_fails_the_run_naming_path_and_values(self):
        state = {"module": "kvm_intel", "enable_pmu": True, "kernel": "6",
                 "works": True, "reason": "probed"}
        outcomes = {}
        for want in (262144, 1):
            run_dir = Path(self.tmp.name) / f"data-{want}"
            run_dir.mkdir()
            with mock.patch.object(kvm, "state", return_value=state), \
                    mock.patch.object(guest, "need",
                                      side_effect=lambda p, *a: p):
                outcomes[want] = guest.run(
                    qemu.Machine(accel="tcg"), ["test=all"], run_dir,
                    timeout=30, kvm_ok=False,
                    expect_data={"boot.mem_extent_kib": want})
        self.assertTrue(outcomes[262144].ok, outcomes[262144].lines)
        bad = outcomes[1]
        self.assertFalse(bad.ok)
        self.assertEqual(bad.doc["verdict"], "fail")
        self.assertIn("FAIL  host expect_data: boot.mem_extent_kib: "
                      "expected 1, saw 262144", bad.lines)

    def test_pvm_leaves_out_int3_and_says_why(self):
        out = self.run_under("kvm_pvm", False, "kvm", ["test=all"])
        doc = out.doc
        self.assertEqual(doc["cmdline"], "test=all skip=exceptions")
        self.assertEqual([x["test"] for x in doc["not_runnable"]], ["exceptions"])
        self.assertEqual(doc["host"]["kvm"]["module"], "kvm_pvm")
        self.assertEqual(doc["host_notes"],
                         {"pmi_stress": "KVM on this host has enable_pmu=N"})
        exceptions = next(t for t in doc["tests"] if t["name"] == "exceptions")
        self.assertEqual(exceptions["status"], "skip", "never a pass")
        self.assertTrue(out.ok, out.lines)
        self.assertIn("NOT RUN exceptions: INT3 in a guest hangs the vCPU under "
                      "kvm_pvm (its #BP case)", out.lines)
        self.assertTrue(any(line.startswith("SKIP  pmi_stress: no PMU (host: KVM "
                                            "on this host has enable_pmu=N)")
                            for line in out.lines), out.lines)

    def test_pvm_refuses_firmware_it_cannot_boot(self):
        state = {"module": "kvm_pvm", "enable_pmu": False, "kernel": "6.18",
                 "works": True, "reason": "probed"}
        run_dir = Path(self.tmp.name) / "uefi"
        run_dir.mkdir()
        with mock.patch.object(kvm, "state", return_value=state), \
                self.assertRaises(guest.CannotRun) as caught:
            guest.run(qemu.Machine(boot="uefi", accel="kvm"), [], run_dir,
                      timeout=30, kvm_ok=True)
        self.assertIn("--boot uefi --cpu host,-arch-capabilities under KVM (kvm_pvm): "
                      "OVMF stops at an INT3", str(caught.exception))

    def test_auto_boots_firmware_under_tcg_where_kvm_cannot(self):
        with mock.patch.object(kvm, "verdict", return_value=(True, "fake")), \
                mock.patch.object(kvm, "flavour", return_value={"module": "kvm_pvm"}):
            self.assertTrue(guest.kvm_ok_for("auto", "kernel"))
            self.assertFalse(guest.kvm_ok_for("auto", "bios"))
            self.assertFalse(guest.kvm_ok_for("auto", "uefi"))
            self.assertFalse(guest.kvm_ok_for("auto", "kernel", "host,hv-relaxed,hv-time"))
            self.assertTrue(guest.kvm_ok_for("auto", "kernel", "host,+invtsc"))
        with mock.patch.object(kvm, "verdict", return_value=(True, "fake")), \
                mock.patch.object(kvm, "flavour", return_value={"module": "kvm_intel"}):
            self.assertTrue(guest.kvm_ok_for("auto", "uefi"))

    def test_tcg_runs_everything_it_was_given(self):
        doc = self.run_under("kvm_pvm", False, "tcg", ["test=all"]).doc
        self.assertEqual(doc["cmdline"], "test=all")
        self.assertEqual((doc["not_runnable"], doc["host_notes"]), ([], {}))

    def test_a_full_kvm_leaves_nothing_out(self):
        doc = self.run_under("kvm_intel", True, "kvm", ["test=all"]).doc
        self.assertEqual(doc["cmdline"], "test=all")
        self.assertEqual((doc["not_runnable"], doc["host_notes"]), ([], {}))


if __name__ == "__main__":
    unittest.main()


class IsoEntryLpj(unittest.TestCase):
    """An ISO entry's lpj=host boots with this host's lpj, given to GRUB
    on the choice disk (the ISO carries no number of the build host's)."""

    def resolve(self, entry_words):
        machine = qemu.Machine(boot="bios", cpu="max")
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.object(guest, "iso_entry_words",
                                  return_value=entry_words), \
                mock.patch.object(guest.hostinfo, "tsc_mhz",
                                  return_value=(2000.0, "fake")), \
                mock.patch.object(guest.media, "choice_disk",
                                  return_value=Path(tmp) / "c.img") as disk:
            _, words = guest.resolved(machine, [], Path(tmp), "x.preset")
        return words, disk.call_args.args

    def test_lpj_host_is_this_hosts_on_the_disk(self):
        words, args = self.resolve(["test=smp", "hz=1000", "lpj=host"])
        self.assertEqual(words, ["test=smp", "hz=1000", "lpj=2000000"])
        self.assertEqual(args[1:], ("x.preset", "2000000"))

    def test_no_lpj_host_no_lpj_on_the_disk(self):
        words, args = self.resolve(["test=smp", "lpj=5"])
        self.assertEqual(words, ["test=smp", "lpj=5"])
        self.assertEqual(args[1:], ("x.preset", None))
