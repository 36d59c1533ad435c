# SPDX-License-Identifier: MIT
"""What the referee judges beyond the count of APs that calibrated and
the boot CPU's source: which CPUs share an lpj, why the TSC was marked
unstable, and how many TSC-sync checks ran, each over a console Linux
could print and DATA hvprobe did print.

The consoles are written by hand from the kernel's formats:
show_cpuinfo() (arch/x86/kernel/cpu/proc.c, "bogomips\\t: %lu.%02lu"),
calibrate_delay() (init/calibrate.c), mark_tsc_unstable() (tsc.c,
pr_fmt "tsc: ", "Marking TSC unstable due to %s"), check_tsc_sync_source()
and check_tsc_sync_target() (tsc_sync.c v6.1 and v6.12: pr_debug
"TSC synchronization [CPU#%d -> CPU#%d]: passed", pr_warn "TSC
synchronization [CPU#%d -> CPU#%d]:" and "Measured %Ld cycles TSC warp
between CPUs, turning off TSC clock.", pr_warn "TSC ADJUST compensate:
CPU%u observed %lld warp. Adjust: %lld"; tsc_sync.c has no pr_fmt) and
ddebug_proc_show() (lib/dynamic_debug.c: "%s:%u [%s]%s =%s \\"fmt\\"").
The hvprobe DATA follows a linux-6.1 boot of 4 vCPUs on 2 nodes under
TCG (apic/smp/smp_json.c's keys)."""

import unittest

from tools.commands import linux_referee
from tools.lib import buildinfo, referee

# Dynamic debug's control lines for the pr_debug, as Debian's
# 6.1.0-57-amd64 and 6.12.95+deb12-amd64 printed them in a referee boot
# under TCG (6.12's target CPU is unsigned).
CONTROL_ON = ('dyndbg: arch/x86/kernel/tsc_sync.c:398 [tsc_sync]'
              'check_tsc_sync_source =p "TSC synchronization [CPU#%d -> '
              'CPU#%d]: passed\\n"')
CONTROL_612 = ('dyndbg: arch/x86/kernel/tsc_sync.c:391 [tsc_sync]'
               'check_tsc_sync_source =p "TSC synchronization [CPU#%d -> '
               'CPU#%u]: passed\\n"')
CONTROL_OFF = CONTROL_ON.replace(" =p ", " =_ ")


def console(bogomips, packages, dmesg, control=CONTROL_ON):
    """The referee's output between its markers: /proc/cpuinfo's lines
    the init keeps, dmesg's, and dynamic debug's control line."""
    out = [referee.BEGIN]
    for cpu, (b, p) in enumerate(zip(bogomips, packages)):
        out += [f"processor\t: {cpu}", f"physical id\t: {p}",
                f"bogomips\t: {b}"]
    out += [x.strip() for x in dmesg.strip().splitlines()]
    if control:
        out.append(control)
    return "\n".join(out + [referee.END, ""])


# Linux 6.1, constant TSC, 4 CPUs on 2 packages: the boot CPU from
# lpj_fine, CPU 1 copies it, CPU 2 (first of package 1) measures, CPU 3
# copies CPU 2; every AP ran the check and passed.
SYNCED_61 = console(["4890.83", "4890.83", "5129.52", "5129.52"],
                    [0, 0, 1, 1], """
[    0.000000] tsc: Detected 2445.417 MHz processor
[    0.104000] Calibrating delay loop (skipped), value calculated using timer frequency.. 4890.83 BogoMIPS (lpj=9781668)
[    0.212000] smpboot: CPU0: Intel Core Processor (Skylake) (family: 0x6, model: 0x5e, stepping: 0x3)
[    0.236000] TSC synchronization [CPU#0 -> CPU#1]: passed
[    0.360000] TSC synchronization [CPU#0 -> CPU#2]: passed
[    0.364000] Calibrating delay loop... 5129.52 BogoMIPS (lpj=10259040)
[    0.392000] TSC synchronization [CPU#0 -> CPU#3]: passed
[    0.396000] smp: Brought up 2 nodes, 4 CPUs
[    0.396000] smpboot: Max logical packages: 2
[    0.396000] smpboot: Total of 4 processors activated (20039.70 BogoMIPS)
""")

# The same machine where CPU 2's TSC warped: the check fails at once,
# the TSC is marked unstable, and CPU 3 runs no check (unsynchronized).
WARPED_61 = console(["4890.83", "4890.83", "5129.52", "5129.52"],
                    [0, 0, 1, 1], """
[    0.104000] Calibrating delay loop (skipped), value calculated using timer frequency.. 4890.83 BogoMIPS (lpj=9781668)
[    0.236000] TSC synchronization [CPU#0 -> CPU#1]: passed
[    0.360000] TSC synchronization [CPU#0 -> CPU#2]:
[    0.360000] Measured 1203398 cycles TSC warp between CPUs, turning off TSC clock.
[    0.360000] tsc: Marking TSC unstable due to check_tsc_sync_source failed
[    0.364000] Calibrating delay loop... 5129.52 BogoMIPS (lpj=10259040)
[    0.396000] smp: Brought up 2 nodes, 4 CPUs
""")

# Linux 6.12 with TSC_ADJUST: CPU 2 warped once, adjusted, then passed.
ADJUSTED_612 = console(["4890.83"] * 4, [0, 0, 1, 1], """
[    0.104000] Calibrating delay loop (skipped), value calculated using timer frequency.. 4890.83 BogoMIPS (lpj=9781668)
[    0.236000] TSC synchronization [CPU#0 -> CPU#1]: passed
[    0.340000] TSC ADJUST compensate: CPU2 observed 86311 warp. Adjust: 86311
[    0.360000] TSC synchronization [CPU#0 -> CPU#2]: passed
[    0.392000] TSC synchronization [CPU#0 -> CPU#3]: passed
""", CONTROL_612)

# Linux 6.1 under Hyper-V without the invariant-TSC privilege, 4 CPUs on
# 4 packages: unstable before any check, each package's CPU measures.
HYPERV_61 = console(["4890.83", "5012.44", "4987.01", "5101.90"],
                    [0, 1, 2, 3], """
[    0.000000] tsc: Marking TSC unstable due to running on Hyper-V
[    0.000000] tsc: Detected 2445.417 MHz processor
[    0.104000] Calibrating delay loop (skipped), value calculated using timer frequency.. 4890.83 BogoMIPS (lpj=9781668)
[    0.240000] Calibrating delay loop... 5012.44 BogoMIPS (lpj=10024880)
""")


def ap(cpu, package, lpj, source, lpj_from=None, sync_ms=20, runs=None):
    """One AP record of hvprobe's smp DATA."""
    rec = {"record": "ap", "cpu": cpu, "package": package, "online": True,
           "lpj": lpj, "lpj_source": source, "tsc_sync_ms": sync_ms}
    if lpj_from is not None:
        rec["lpj_from"] = lpj_from
    if runs:
        rec["tsc_sync_runs"] = runs
    return rec


def hvprobe(aps, bsp="lpj_fine", checks=3, warps=0, lpj=None):
    """referee.hvprobe_facts() over a boot's smp summary, AP records and
    lpj DATA (a synchronized TSC unless lpj says otherwise)."""
    smp = {"lpj_source": bsp, "tsc_sync_checks": checks, "tsc_warps": warps}
    return referee.hvprobe_facts(
        smp, aps, {"tsc_synchronized": True} if lpj is None else lpj)


SYNCED_APS = [ap(1, 0, 9781676, "reuse", 0, 2),
              ap(2, 1, 12823860, "calibrate", None, 20),
              ap(3, 1, 12823860, "reuse", 2, 2)]


def verdicts(linux_text, ours):
    """{comparison: (verdict, Linux's, hvprobe's)}."""
    return {c["what"]: (c["verdict"], c["linux"], c["hvprobe"])
            for c in referee.compare(referee.parse(linux_text), ours)}


class LinuxSide(unittest.TestCase):
    def test_classes_are_bogomips_to_the_last_digit(self):
        v = referee.parse(SYNCED_61)
        self.assertEqual(referee.linux_classes(v), [[0, 1], [2, 3]])
        self.assertEqual(v.calibrations, 1)
        self.assertEqual(referee.linux_classes(referee.parse(HYPERV_61)),
                         [[0], [1], [2], [3]])

    def test_sync_checks_counted_from_dyndbg_lines(self):
        self.assertEqual(referee.parse(SYNCED_61).sync, (3, 3))
        # A failed check is a pr_warn: printed with or without dyndbg.
        self.assertEqual(referee.parse(WARPED_61).sync, (2, 2))
        # Each TSC_ADJUST retry is one more run of the same AP's check.
        self.assertEqual(referee.parse(ADJUSTED_612).sync, (3, 4))
        self.assertEqual(referee.parse(HYPERV_61).sync, (0, 0))

    def test_without_dyndbg_there_is_no_count(self):
        off = SYNCED_61.replace(CONTROL_ON, CONTROL_OFF)
        self.assertIsNone(referee.parse(off).sync)
        gone = SYNCED_61.replace(CONTROL_ON + "\n", "")
        self.assertIsNone(referee.parse(gone).sync)

    def test_the_first_reason_wins(self):
        self.assertEqual(referee.parse(WARPED_61).tsc_unstable,
                         "check_tsc_sync_source failed")
        self.assertEqual(referee.parse(HYPERV_61).tsc_unstable,
                         "running on Hyper-V")
        self.assertIsNone(referee.parse(SYNCED_61).tsc_unstable)

    def test_the_init_asks_for_the_control_line(self):
        self.assertIn("/proc/dynamic_debug/control", referee.INIT)
        self.assertIn('dyndbg="file tsc_sync.c +p"', referee.CMDLINE)


class HvprobeSide(unittest.TestCase):
    def test_classes_follow_lpj_from(self):
        ours = hvprobe(SYNCED_APS)
        self.assertEqual(ours["classes"], [[0, 1], [2, 3]])
        self.assertEqual(ours["calibrations"], 1)
        self.assertEqual(ours["sync_checks"], [3, 3])

    def test_a_preset_is_one_class(self):
        aps = [ap(i, i, 8000000, "kvmclock", None, 0) for i in (1, 2, 3)]
        ours = hvprobe(aps, bsp="kvmclock", checks=0)
        self.assertEqual(ours["classes"], [[0, 1, 2, 3]])
        self.assertEqual(ours["bsp_lpj_source"], "preset")

    def test_unstable_in_linux_words(self):
        lpj = {"tsc_synchronized": False,
               "hyperv_tsc": "running on Hyper-V: TSC marked unstable"}
        self.assertEqual(hvprobe(SYNCED_APS, lpj=lpj)["tsc_unstable"],
                         "running on Hyper-V")
        lpj = {"tsc_synchronized": False, "linux_tsc_khz":
               "could not calculate TSC khz: HPET reads too slow"}
        self.assertEqual(hvprobe(SYNCED_APS, lpj=lpj)["tsc_unstable"],
                         "could not calculate TSC khz")
        lpj = {"tsc_synchronized": False}
        self.assertEqual(hvprobe(SYNCED_APS, warps=1, lpj=lpj)
                         ["tsc_unstable"], "check_tsc_sync_source failed")
        self.assertEqual(hvprobe(SYNCED_APS, lpj=lpj)["tsc_unstable"],
                         referee.UNSTATED)
        self.assertIsNone(hvprobe(SYNCED_APS)["tsc_unstable"])

    def test_a_retry_counts_its_runs(self):
        aps = [ap(1, 0, 1, "reuse", 0, 2), ap(2, 1, 1, "reuse", 0, 20, 2),
               ap(3, 1, 1, "reuse", 0, 2)]
        self.assertEqual(hvprobe(aps, checks=4)["sync_checks"], [3, 4])


class Compare(unittest.TestCase):
    def test_a_synchronized_boot_agrees_in_every_row(self):
        got = verdicts(SYNCED_61, hvprobe(SYNCED_APS))
        self.assertEqual(list(got), list(referee.COMPARISONS))
        self.assertEqual({v for v, _, _ in got.values()}, {referee.AGREE})
        self.assertEqual(got["CPUs that share an lpj"][1:],
                         ("{0,1} {2,3}", "{0,1} {2,3}"))
        self.assertEqual(got["TSC-sync checks"][1:],
                         ("3 APs, 3 runs", "3 APs, 3 runs"))
        self.assertEqual(got["why the TSC is unstable"][1:],
                         ("stable", "stable"))

    def test_a_copy_from_the_wrong_cpu_disagrees(self):
        # The same count of calibrations, but CPU 3 copied the boot CPU.
        aps = SYNCED_APS[:2] + [ap(3, 1, 9781676, "reuse", 0, 2)]
        got = verdicts(SYNCED_61, hvprobe(aps))
        self.assertEqual(got["APs that calibrated"][0], referee.AGREE)
        self.assertEqual(got["CPUs that share an lpj"],
                         (referee.DISAGREE, "{0,1} {2,3}", "{0,1,3} {2}"))

    def test_a_warp_is_judged_by_reason_and_checks(self):
        lpj = {"tsc_synchronized": False}
        aps = SYNCED_APS[:2] + [ap(3, 1, 12823860, "reuse", 2, 0)]
        got = verdicts(WARPED_61, hvprobe(aps, checks=2, warps=1, lpj=lpj))
        self.assertEqual(got["why the TSC is unstable"],
                         (referee.AGREE, "check_tsc_sync_source failed",
                          "check_tsc_sync_source failed"))
        self.assertEqual(got["TSC-sync checks"][0], referee.AGREE)
        # hvprobe checking CPU 3 as well is a disagreement.
        got = verdicts(WARPED_61, hvprobe(SYNCED_APS, checks=3, warps=1,
                                          lpj=lpj))
        self.assertEqual(got["TSC-sync checks"],
                         (referee.DISAGREE, "2 APs, 2 runs", "3 APs, 3 runs"))

    def test_what_a_side_does_not_print_is_not_compared(self):
        off = SYNCED_61.replace(CONTROL_ON, CONTROL_OFF)
        c = {x["what"]: x for x in referee.compare(
            referee.parse(off), hvprobe(SYNCED_APS))}
        self.assertEqual(c["TSC-sync checks"]["verdict"],
                         referee.NOT_COMPARED)
        self.assertIn("dyndbg", c["TSC-sync checks"]["why"])
        c = {x["what"]: x for x in referee.compare(
            referee.parse(SYNCED_61),
            hvprobe(SYNCED_APS, lpj={"tsc_synchronized": False}))}
        self.assertEqual(c["why the TSC is unstable"]["verdict"],
                         referee.NOT_COMPARED)
        self.assertIn("hvprobe", c["why the TSC is unstable"]["why"])
        # Linux's clocksource watchdog has no counterpart in hvprobe.
        watchdog = SYNCED_61.replace(
            "[    0.396000] smp: Brought up",
            "[    0.390000] tsc: Marking TSC unstable due to clocksource "
            "watchdog\n[    0.396000] smp: Brought up")
        c = {x["what"]: x for x in referee.compare(
            referee.parse(watchdog), hvprobe(SYNCED_APS))}
        self.assertEqual(c["why the TSC is unstable"]["verdict"],
                         referee.NOT_COMPARED)
        # An AP record without its source: no classes from hvprobe.
        bare = [dict(SYNCED_APS[0], lpj_source=None)] + SYNCED_APS[1:]
        c = {x["what"]: x for x in referee.compare(
            referee.parse(SYNCED_61), hvprobe(bare))}
        self.assertEqual(c["CPUs that share an lpj"]["verdict"],
                         referee.NOT_COMPARED)

    def test_not_compared_is_never_agreement(self):
        off = SYNCED_61.replace(CONTROL_ON, CONTROL_OFF)
        rows = referee.compare(referee.parse(off), hvprobe(SYNCED_APS))
        self.assertTrue(referee.agrees(rows))
        self.assertEqual(referee.tally(rows), (4, 0, 1))
        bad = verdicts(HYPERV_61, hvprobe(SYNCED_APS))
        self.assertEqual(bad["why the TSC is unstable"][0], referee.DISAGREE)


class Policies(unittest.TestCase):
    def test_each_series_has_the_policy_of_its_version(self):
        # Linux 6.12 defers mark_tsc_unstable() and counts packages in
        # unsynchronized_tsc(): linux-6.12's rules, not 6.5.0's.
        self.assertEqual(linux_referee.POLICIES,
                         {"6.1": ("linux-6.1", "serial"),
                          "6.12": ("linux-6.12", "linux-6.5")})
        for policy, bringup in linux_referee.POLICIES.values():
            self.assertIn(policy, buildinfo.words("lpj_policy"))
            self.assertIn(bringup, buildinfo.words("bringup"))


if __name__ == "__main__":
    unittest.main()
