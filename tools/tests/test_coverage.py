# SPDX-License-Identifier: MIT
"""tools/lib/analysis/coverage.py: what make check says it could not
exercise."""

import unittest

from tools.lib.analysis import coverage


def case(name, status="pass", reason=None, cases=()):
    return {"name": name, "status": status, "reason": reason,
            "cases": list(cases)}


def doc(tests, module=None, not_runnable=(), notes=None):
    return {"tests": tests, "host": {"kvm": {"module": module}},
            "not_runnable": list(not_runnable), "host_notes": notes or {}}


class Lines(unittest.TestCase):
    def test_a_case_that_passed_anywhere_is_exercised(self):
        tcg = doc([case("hv", cases=[case("kvm", "skip", "no KVM leaves")])])
        kvm = doc([case("hv", cases=[case("kvm")])])
        self.assertEqual(coverage.lines([tcg, kvm]), [])

    def test_a_case_that_only_skipped_is_named_with_its_reasons(self):
        a = doc([case("hv", cases=[case("hyperv", "skip", "no Hyper-V leaves (TCG)")])])
        b = doc([case("hv", cases=[case("hyperv", "skip", "no Hyper-V leaves (KVM)")])])
        self.assertEqual(coverage.lines([a, b]), [
            "not exercised: hv / hyperv: no Hyper-V leaves (TCG); "
            "no Hyper-V leaves (KVM)"])

    def test_a_whole_test_skip_is_named_once_with_the_host_note(self):
        why = "no architectural PMU (CPUID.0AH:EAX[7:0]=0)"
        d = doc([case("pmi_stress", "skip", why, [case(why, "skip", why)])],
                notes={"pmi_stress": "KVM on this host has enable_pmu=N"})
        self.assertEqual(coverage.lines([d]), [
            f"not exercised: pmi_stress: {why} (host: KVM on this host has "
            "enable_pmu=N)"])

    def test_a_case_that_ran_says_more_than_its_skip(self):
        tcg = doc([case("timers", cases=[case("apic", "skip", "rate not stated")])])
        kvm = doc([case("timers", cases=[
            case("apic: TSC measured at 2596118122 Hz (32-bit, 1000000000 Hz)")])])
        self.assertEqual(coverage.lines([tcg, kvm]), [])
        other = doc([case("timers", cases=[case("apicx: something")])])
        self.assertEqual(len(coverage.lines([tcg, other])), 1)

    def test_a_whole_test_skip_differs_by_host_but_is_one_line(self):
        a = doc([case("pmi_stress", "skip", "no PMU", [case("no PMU", "skip", "no PMU")])])
        b = doc([case("pmi_stress", "skip", "AMD: no counters",
                      [case("AMD: no counters", "skip", "AMD: no counters")])])
        self.assertEqual(coverage.lines([a, b]), [
            "not exercised: pmi_stress: no PMU; AMD: no counters"])
        ran = doc([case("pmi_stress", cases=[case("every PMI was seen")])])
        self.assertEqual(coverage.lines([a, ran]), [])

    def test_a_failure_counts_as_exercised(self):
        a = doc([case("smp", cases=[case("nmi", "fail", "lost")])])
        b = doc([case("smp", cases=[case("nmi", "skip", "one CPU")])])
        self.assertEqual(coverage.lines([a, b]), [])

    def test_flavour_limits_and_lost_runs(self):
        d = doc([case("exceptions", "skip", "skip= on the command line")],
                module="kvm_pvm",
                not_runnable=[{"test": "exceptions", "reason": "INT3 hangs"}])
        self.assertEqual(coverage.lines([d], [("x2apic-300", "needs QEMU >= 8.0")]), [
            "not run under KVM (kvm_pvm): exceptions: INT3 hangs",
            "not run: x2apic-300: needs QEMU >= 8.0"])


if __name__ == "__main__":
    unittest.main()
