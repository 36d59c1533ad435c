# SPDX-License-Identifier: MIT
"""tools/soak's draws: the same (seed, index) gives the same run, every
run is one tools/run and the kernel accept, and failures group by case."""

import re
import unittest

from tools.commands import run, soak
from tools.lib import buildinfo
from tools.lib.launch import qemu

N = 500


def accepts(key, value):
    """Whether the kernel's option table, as the build exports it, takes
    key=value."""
    o = buildinfo.options()[key]
    if o["kind"] == "enum":
        return value in o["values"]
    if o["kind"] == "u64_or_auto" and value == "auto":
        return True
    return bool(re.fullmatch(r"\d+", value)) and \
        o["min"] <= int(value) <= o["max"]


class Draws(unittest.TestCase):
    def test_same_seed_same_runs(self):
        a = [soak.plan(7, i) for i in range(N)]
        self.assertEqual(a, [soak.plan(7, i) for i in range(N)])
        # An index alone reproduces, whatever was drawn before it.
        self.assertEqual(soak.plan(7, 123), a[123])
        self.assertNotEqual(a, [soak.plan(8, i) for i in range(N)])

    def test_values_valid(self):
        for i in range(N):
            p = soak.plan(2024, i)
            self.assertIn(p.boot, qemu.BOOTS)
            self.assertTrue(1 <= p.smp <= soak.MAX_CPUS)
            self.assertIn(p.numa, (0, 1, 2, 4))
            if p.numa:
                self.assertEqual(p.smp % p.numa, 0, p)
            keys = []
            for word in p.cmdline:
                key, _, value = word.partition("=")
                keys.append(key)
                if word != "lpj=host":      # tools/run resolves it
                    self.assertTrue(accepts(key, value), word)
            self.assertEqual(len(keys), len(set(keys)), p)
            # lpj_source=cmdline without lpj= is an error by design.
            self.assertEqual("lpj_source=cmdline" in p.cmdline,
                             "lpj" in keys, p)

    def test_every_value_drawn(self):
        plans = [soak.plan(1, i) for i in range(N)]
        words = {w for p in plans for w in p.cmdline}
        for key, values in soak.choices().items():
            for value in values:
                self.assertIn(f"{key}={value}", words)
        self.assertEqual({p.boot for p in plans}, set(qemu.BOOTS))
        self.assertEqual({p.numa for p in plans}, {0, 1, 2, 4})
        self.assertIn(1, {p.smp for p in plans})
        self.assertIn(soak.MAX_CPUS, {p.smp for p in plans})
        boots = [p.boot for p in plans]
        self.assertLess(boots.count("uefi"), boots.count("bios"))

    def test_choices_are_the_kernels_words(self):
        # Every enum word the kernel states is drawn or excluded by name:
        # a new word is drawn without an edit here or in the soak.
        for key, values in soak.choices().items():
            if key in soak.NUMBERS:
                continue
            self.assertEqual(set(values) | soak.EXCLUDED.get(key, set()),
                             set(buildinfo.words(key)), key)
            self.assertLessEqual(soak.EXCLUDED.get(key, set()),
                                 set(buildinfo.words(key)), key)
        self.assertLessEqual(set(soak.EXCLUDED), set(soak.KEYS))

    def test_lpj_preset_matches_hz(self):
        for i in range(N):
            p = soak.plan(3, i, tsc_mhz=3000)
            words = dict(w.split("=", 1) for w in p.cmdline)
            if "lpj" in words:
                hz = int(words.get("hz", 250))
                self.assertEqual(int(words["lpj"]), 3000000000 // hz)

    def test_no_x2apic_keeps_other_draws(self):
        for i in range(N):
            a, b = soak.plan(5, i), soak.plan(5, i, x2apic=False)
            self.assertNotIn("apic=x2apic", b.cmdline)
            self.assertEqual(
                [w.replace("apic=x2apic", "apic=xapic") for w in a.cmdline],
                b.cmdline)
            self.assertEqual((a.boot, a.smp, a.numa), (b.boot, b.smp, b.numa))

    def test_kvm_joins_the_mix_only_where_it_works(self):
        without = [soak.plan(9, i) for i in range(N)]
        mixed = [soak.plan(9, i, kvm=True) for i in range(N)]
        self.assertEqual({p.accel for p in without}, {"tcg"})
        kvm = [p for p in mixed if p.accel == "kvm"]
        self.assertTrue(N / soak.KVM_SHARE * 0.7 < len(kvm) < N / soak.KVM_SHARE * 1.3,
                        len(kvm))
        for p in kvm:
            self.assertLessEqual(p.smp, soak.KVM_MAX_CPUS, p)
            self.assertIn(p.cpu, soak.KVM_CPUS)
            self.assertIn(f"--cpu {p.cpu}", soak.reproduce(p))
            if p.numa:
                self.assertEqual(p.smp % p.numa, 0, p)
        self.assertEqual({p.cpu for p in kvm}, set(soak.KVM_CPUS))
        # The TCG part of the mix is the very runs drawn without KVM.
        self.assertEqual([p for p in mixed if p.accel == "tcg"],
                         [w for w, m in zip(without, mixed) if m.accel == "tcg"])
        self.assertEqual({p.accel for p in (soak.plan(9, i, kvm="all")
                                            for i in range(50))}, {"kvm"})

    def test_kvm_boots_only_the_paths_its_flavour_takes(self):
        plans = [soak.plan(9, i, kvm="all", kvm_boots=("kernel",)) for i in range(50)]
        self.assertEqual({p.boot for p in plans}, {"kernel"})
        plans = [soak.plan(9, i, kvm="all") for i in range(N)]
        self.assertEqual({p.boot for p in plans}, set(qemu.BOOTS))

    def test_tools_run_accepts_every_draw(self):
        for i in range(N):
            p = soak.plan(11, i)
            args = run.parse_args(p.run_args())
            m = qemu.Machine(boot=args.boot, smp=args.smp, numa=args.numa,
                             mem_mib=args.mem_mib, accel=args.accel)
            qemu.qemu_argv(m, False, kernel="k", iso="i", vars_file="v")
            self.assertEqual(args.cmdline, p.cmdline)
        cmd = soak.reproduce(soak.plan(11, 0))
        self.assertTrue(re.match(r"tools/run --timeout \d+ --boot ", cmd), cmd)


def doc(tests=(), crash=None, checks=(), verdict="fail"):
    return {"crash": crash, "tests": list(tests), "verdict": verdict,
            "host_checks": list(checks)}


class Timeouts(unittest.TestCase):
    def test_grow_with_vcpus_from_the_boot_paths_own(self):
        small = soak.Plan(0, "kernel", 1, 0, "256M")
        big = soak.Plan(1, "kernel", 53, 0, "512M")
        uefi = soak.Plan(2, "uefi", 1, 0, "256M")
        self.assertEqual(small.timeout(), 63)
        self.assertGreater(big.timeout(), 200)
        self.assertEqual(uefi.timeout() - small.timeout(), 60)

    def test_the_reproduce_command_carries_it(self):
        big = soak.Plan(1, "kernel", 53, 0, "512M")
        self.assertIn(f"--timeout {big.timeout()}", soak.reproduce(big))


def test(name, status, cases=()):
    return {"name": name, "status": status, "cases": list(cases)}


class Failures(unittest.TestCase):
    def test_pass(self):
        self.assertEqual(soak.failures(doc(
            [test("lpj", "pass", [test("a", "pass")])], verdict="pass"), 0),
            [])

    def test_case_numbers_become_n(self):
        d = doc([test("lpj", "fail", [
            test("udelay", "fail",
                 [test("udelay(10000) lasts 11234 us (within 10 %)",
                       "fail")]),
            test("ok one", "pass")])])
        self.assertEqual(soak.failures(d, 1),
                         ["lpj / udelay / udelay(N) lasts N us (within N %)"])

    def test_crash_check_and_missing_result(self):
        d = doc([test("smp", "error")], crash="timed out after 60 s before "
                "the totals line", checks=[{"name": "smp_cpus",
                                            "status": "fail"}])
        self.assertEqual(soak.failures(d, 1), [
            "crash: timed out after N s before the totals line", "smp",
            "host smp_cpus"])
        self.assertEqual(soak.failures(None, None, "build/hvprobe.elf32 is "
                                       "missing"),
                         ["not run: build/hvprobe.elf32 is missing"])

    def test_summary_groups(self):
        p1, p2 = soak.plan(9, 1), soak.plan(9, 2)
        lines = soak.summarise([(p1, ["a"], None), (p2, ["a", "b"], None),
                                (soak.plan(9, 3), [], None)], 9)
        self.assertEqual(lines[0], "soak seed 9: 3 boots, 1 passed, 2 failed")
        self.assertEqual(lines[1], "  2x a")
        self.assertIn("tools/soak --seed 9 --index 1", "\n".join(lines))
        self.assertIn("  1x b", lines)


if __name__ == "__main__":
    unittest.main()
