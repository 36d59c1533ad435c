# SPDX-License-Identifier: MIT
"""What the host probe reads from perf: perf script's lines cut into
the guest's marked windows and counted per vCPU thread, perf stat's CSV,
perf's lost records, and the figures a Result gives."""

import unittest
from collections import Counter

from tools.lib.probe import probecount as pc
from tools.tests.fakehost import (FIXED_IPI, NMI_IPI, accept, pio,
                                  script_line)

A, B = 4242, 4243


def lines(*events):
    return [script_line(*e) for e in events]


# Firmware's POST code, a window with a cancel, a PMI and an NMI IPI on
# each vCPU, an event after the end, and one at port 0x81.
RUN = lines(
    (A, 1.0, "kvm:kvm_pio", pio(0x2)),
    (A, 1.1, "kvm:kvm_entry", "vcpu 0, rip 0x1000"),
    (A, 2.0, "kvm:kvm_pio", pio(0xb0)),
    (A, 2.1, "kvm:kvm_entry", "vcpu 0, rip 0x1000"),
    (A, 2.2, "hvprobe:cancel", "(ffffffffc0a01230)"),
    (A, 2.3, "hvprobe:pmi", "(ffffffffc0800000)"),
    (B, 2.4, "kvm:kvm_apic_ipi", NMI_IPI),
    (B, 2.5, "kvm:kvm_apic_accept_irq", accept(0, 0, "NMI")),
    (B, 2.6, "kvm:kvm_apic_ipi", FIXED_IPI),
    (A, 2.7, "kvm:kvm_apic_accept_irq", accept(0, 34, "Fixed")),
    (B, 2.8, "kvm:kvm_pio", pio(0xb1, port=0x81)),
    (A, 3.0, "kvm:kvm_pio", pio(0xb1)),
    (A, 3.5, "kvm:kvm_exit", "vcpu 0 reason HLT"),
)


class Classify(unittest.TestCase):
    def test_keys(self):
        self.assertEqual(pc.classify("kvm:kvm_entry", ""), "entry")
        self.assertEqual(pc.classify("kvm:kvm_exit", ""), "exit")
        self.assertEqual(pc.classify("kvm:kvm_apic_ipi", NMI_IPI), "nmi_ipi")
        self.assertEqual(pc.classify("kvm:kvm_apic_ipi", FIXED_IPI),
                         "other_ipi")
        self.assertEqual(pc.classify("kvm:kvm_apic_accept_irq",
                                     accept(3, 2, "NMI")), "accept_nmi")
        self.assertEqual(pc.classify("kvm:kvm_apic_accept_irq",
                                     accept(3, 34, "Fixed")),
                         "accept_fixed_34")
        self.assertEqual(pc.classify("hvprobe:cancel", ""), "cancel")
        self.assertEqual(pc.classify("hvprobe:inject_nmi", ""), "inject_nmi")
        self.assertIsNone(pc.classify("probe:someone_elses", ""))
        self.assertIsNone(pc.classify("kvm:kvm_msr", "msr_write 830"))

    def test_event_keys(self):
        self.assertEqual(pc.event_keys("kvm:kvm_apic_ipi"),
                         ("nmi_ipi", "other_ipi"))
        self.assertEqual(pc.event_keys("hvprobe:pmi"), ("pmi",))
        self.assertEqual(pc.event_keys("kvm:kvm_msr"), ())


class Windows(unittest.TestCase):
    def test_one_marked_window(self):
        t = pc.tally(RUN)
        self.assertEqual(t.events, len(RUN))
        self.assertEqual(len(t.windows), 1)
        w = t.windows[0]
        self.assertTrue(w.complete)
        self.assertEqual((w.begin, w.end, w.tid), (2.0, 3.0, A))
        self.assertAlmostEqual(w.seconds, 1.0)
        self.assertEqual(w.counts[A], Counter(
            entry=1, cancel=1, pmi=1, accept_fixed_34=1))
        self.assertEqual(w.counts[B], Counter(nmi_ipi=1, accept_nmi=1,
                                              other_ipi=1))
        self.assertEqual(w.accepted_by_apic, Counter({0: 1}))
        self.assertEqual(w.total("nmi_ipi"), 1)
        self.assertEqual(w.total("entry", {B}), 0)
        # The whole recording, outside the window too.
        self.assertEqual(t.totals[A]["entry"], 2)
        self.assertEqual(t.totals[A]["exit"], 1)
        self.assertEqual((t.first, t.last), (1.0, 3.5))

    def test_recording_started_inside_the_window(self):
        t = pc.tally(RUN[3:])
        w = t.windows[0]
        self.assertIsNone(w.begin)
        self.assertEqual(w.end, 3.0)
        self.assertFalse(w.complete)
        self.assertAlmostEqual(w.seconds, 3.0 - 2.1, msg="from the first "
                               "event recorded to the end mark")
        self.assertEqual(w.counts[A]["entry"], 1)

    def test_window_not_ended(self):
        t = pc.tally(RUN[:6])
        w = t.windows[0]
        self.assertEqual((w.begin, w.end), (2.0, None))
        self.assertAlmostEqual(w.seconds, 2.3 - 2.0)

    def test_no_marks_is_the_whole_recording(self):
        t = pc.tally(RUN[4:10])
        w = t.windows[0]
        self.assertEqual((w.begin, w.end), (None, None))
        self.assertEqual(w.total("nmi_ipi"), 1)
        self.assertEqual(pc.tally([]).windows, [])

    def test_two_windows_and_junk(self):
        t = pc.tally(RUN[2:12] + RUN[2:12] + ["nonsense", "",
                                             "   1/2 x: kvm:kvm_pio: y"])
        self.assertEqual(len(t.windows), 2)
        self.assertTrue(all(w.complete for w in t.windows))
        json = t.windows[0].to_json()
        self.assertEqual(json["counts"][str(A)]["cancel"], 1)
        self.assertEqual(json["nmis_accepted_by_apic_id"], {"0": 1})

    def test_names_from_the_serial_log(self):
        log = ("    # host mark 0xb0 (pmi_stress begins)\n"
               "    # host mark 0xb1 (pmi_stress ends)\n"
               "    # host mark 0xb0 (nmi_storm begins)\n")
        self.assertEqual(pc.window_names(log), ["pmi_stress", "nmi_storm"])


P, Q = "0xffff888104a48000", "0xffff888104a50000"     # struct kvm_vcpu *


def kp(vcpu):
    return f"(ffffffffc0a01230) vcpu={vcpu}"


# vCPU 0 (thread A, pointer P) and vCPU 1 (thread B, pointer Q).
CAUSES = lines(
    (A, 1.00, "kvm:kvm_pio", pio(0xb0)),
    # The pre-6.7 sequence: PMI, its NMI, the cancel, all on A.
    (A, 1.01, "kvm:kvm_entry", "vcpu 0"),
    (A, 1.02, "hvprobe:pmi", kp(P)),
    (A, 1.03, "hvprobe:inject_nmi", kp(P)),
    (A, 1.04, "hvprobe:cancel", kp(P)),
    # A second cancel with no new injection: something else.
    (A, 1.05, "hvprobe:cancel", kp(P)),
    # An NMI IPI from B's thread into vCPU 0, then A cancels.
    (A, 1.06, "kvm:kvm_entry", "vcpu 0"),
    (B, 1.07, "kvm:kvm_apic_ipi", NMI_IPI),
    (B, 1.08, "hvprobe:inject_nmi", kp(P)),
    (A, 1.09, "hvprobe:cancel", kp(P)),
    # An injection the vCPU entered with: the cancel after is not its.
    (B, 1.10, "hvprobe:inject_nmi", kp(P)),
    (A, 1.11, "kvm:kvm_entry", "vcpu 0"),
    (A, 1.12, "hvprobe:cancel", kp(P)),
    # A PMI delivered, then the entry (LVTPC masked: no NMI), then an
    # injection from elsewhere: an NMI's cancel, not the PMI's.
    (B, 1.13, "hvprobe:pmi", kp(Q)),
    (B, 1.14, "kvm:kvm_entry", "vcpu 1"),
    (A, 1.15, "hvprobe:inject_nmi", kp(Q)),
    (B, 1.16, "hvprobe:cancel", kp(Q)),
    (A, 1.20, "kvm:kvm_pio", pio(0xb1)),
)


class Causes(unittest.TestCase):
    def test_cancels_and_what_preceded_them(self):
        w = pc.tally(CAUSES).windows[0]
        self.assertEqual(w.counts[A]["cancel"], 4)
        self.assertEqual(w.counts[A]["caused_nmi"], 2)
        self.assertEqual(w.counts[A]["caused_pmi_nmi"], 1)
        self.assertEqual(w.counts[B]["cancel"], 1)
        self.assertEqual(w.counts[B]["caused_nmi"], 1)
        self.assertEqual(w.counts[B]["caused_pmi_nmi"], 0)
        self.assertEqual(w.counts[B]["inject_nmi"], 2,
                         "injections count on the thread that ran them")

    def test_from_a_pmi_to_the_vm_entry_after_it(self):
        # A: PMI at 1.02, its entry (after two cancels) at 1.06; B: PMI
        # at 1.13, entry at 1.14. Per thread: the PMI's delivery runs on
        # its vCPU's own thread, in vcpu_enter_guest().
        w = pc.tally(CAUSES).windows[0]
        self.assertEqual((w.counts[A]["pmi_entries"],
                          w.counts[A]["pmi_to_entry_ns"]), (1, 40000000))
        self.assertEqual((w.counts[B]["pmi_entries"],
                          w.counts[B]["pmi_to_entry_ns"]), (1, 10000000))
        # Two PMIs before one entry: timed from the first.
        two = lines((A, 1.0, "kvm:kvm_pio", pio(0xb0)),
                    (A, 1.1, "hvprobe:pmi", kp(P)),
                    (A, 1.2, "hvprobe:pmi", kp(P)),
                    (A, 1.5, "kvm:kvm_entry", "vcpu 0"),
                    (A, 1.6, "kvm:kvm_entry", "vcpu 0"),
                    (A, 2.0, "kvm:kvm_pio", pio(0xb1)))
        w = pc.tally(two).windows[0]
        self.assertEqual((w.counts[A]["pmi_entries"],
                          w.counts[A]["pmi_to_entry_ns"]), (1, 400000000))
        r = result([w], recorded=("hvprobe:pmi", "kvm:kvm_entry"))
        r.fired = {"kvm:kvm_entry": 2}
        self.assertEqual(pc.causes(r, w)[0]["pmi_to_entry_us"], 400000.0)
        r.recorded = ("kvm:kvm_entry",)
        self.assertIsNone(pc.causes(r, w)[0]["pmi_to_entry_us"])

    def test_without_the_vcpu_argument_the_thread_stands_for_it(self):
        bare = [line.replace(f" vcpu={P}", "").replace(f" vcpu={Q}", "")
                for line in CAUSES]
        w = pc.tally(bare).windows[0]
        # Only A's own sequence is seen; B's injections into vCPU 0 are
        # taken for B's.
        self.assertEqual(w.counts[A]["caused_pmi_nmi"], 1)
        self.assertEqual(w.counts[A]["caused_nmi"], 1)
        self.assertEqual(w.counts[B]["caused_nmi"], 0)

    def test_rows_per_vcpu(self):
        w = pc.tally(CAUSES).windows[0]
        r = result([w], recorded=("hvprobe:cancel", "hvprobe:pmi",
                                  "hvprobe:inject_nmi", "kvm:kvm_entry"))
        r.fired = {"kvm:kvm_entry": 4}
        rows = pc.causes(r, w)
        self.assertEqual(rows[0], {
            "vcpu": 0, "tid": A, "cancels": 4, "after_nmi": 2,
            "after_pmi_nmi": 1, "entries": 3, "nmi_injections": 2,
            "pmis": 1, "pmi_entries": 1, "pmi_to_entry_us": 40000.0})
        self.assertEqual((rows[1]["cancels"], rows[1]["after_nmi"]), (1, 1))
        r.recorded = ("hvprobe:cancel", "kvm:kvm_entry")
        rows = pc.causes(r, w)
        self.assertEqual((rows[0]["cancels"], rows[0]["after_nmi"],
                          rows[0]["after_pmi_nmi"]), (4, None, None),
                         "no cause where injections were not counted")


STAT = """\
# started on Mon Dec  1 09:00:00 2026

CPU 0/KVM-4242;12;;kvm:kvm_apic_ipi;1000;100.00;;
CPU 1/KVM-4243;30;;kvm:kvm_apic_ipi;1000;100.00;;
CPU 0/KVM-4242;0;;kvm:kvm_entry;1000;100.00;;
CPU 0/KVM-4242;<not counted>;;kvm:kvm_exit;0;0.00;;
CPU 0/KVM-4242;<not supported>;;kvm:kvm_fpu;0;0.00;;
junk
"""


class PerfText(unittest.TestCase):
    def test_stat(self):
        self.assertEqual(pc.parse_stat(STAT), {
            "kvm:kvm_apic_ipi": 42, "kvm:kvm_entry": 0, "kvm:kvm_exit": 0,
            "kvm:kvm_fpu": 0})

    def test_lost(self):
        self.assertEqual(pc.parse_lost(
            "          TOTAL events:   33897\n"
            "           LOST events:       3  ( 0.0%)\n"
            "   LOST_SAMPLES events:       2\n"), 5)
        self.assertEqual(pc.parse_lost("TOTAL events: 1\n"), 0)


def result(windows, recorded=("kvm:kvm_pio", "kvm:kvm_entry",
                              "kvm:kvm_apic_ipi"), fired=None, **kw):
    fields = dict(mode="tracepoint", notes=[], recorded=list(recorded),
                  vcpus={A: 0, B: 1}, vcpu_method="thread names",
                  windows=windows, fired=fired or {}, discovery_tids=[A],
                  lost=0, events=0, perf_ok=True, throttle_messages=[],
                  sample_rate_after=None)
    fields.update(kw)
    return pc.Result(**fields)


class Reading(unittest.TestCase):
    def test_per_vcpu_in_order(self):
        w = pc.tally(RUN).windows[0]
        r = result([w], vcpus={B: 1, A: 0, 99: -1})
        self.assertEqual([(i, t) for i, t, _ in pc.per_vcpu(r, w)],
                         [(-1, 99), (0, A), (1, B)])

    def test_window_lines_only_what_was_counted(self):
        w = pc.tally(RUN).windows[0]
        w.name = "pmi_stress"
        text = "\n".join(pc.window_lines(
            result([w], fired={"kvm:kvm_entry": 2}), w))
        self.assertIn("window pmi_stress: 1.000 s between the guest's marks",
                      text)
        self.assertIn("entries/s", text)
        self.assertNotIn("cancels/s", text, "cancels were not recorded")
        self.assertRegex(text, r"CPU 1 +4243 +0\.0 +1\.0")
        r = result([w], recorded=("hvprobe:cancel",))
        self.assertIn("cancels/s", "\n".join(pc.window_lines(r, w)))
        # A vendor that never traces entries: "-", not 0.0 a second.
        text = "\n".join(pc.window_lines(result([w]), w))
        self.assertRegex(text, r"CPU 1 +4243 +- +1\.0")
        self.assertIn("- : never fired", text)

    def test_window_spans(self):
        self.assertIn("no marks", pc.span(pc.Window()))
        self.assertIn("recording's start", pc.span(pc.Window(end=1.0)))
        self.assertIn("had not ended", pc.span(pc.Window(begin=1.0)))

    def test_silent_tracepoints_said(self):
        r = result([], recorded=("kvm:kvm_pio", "kvm:kvm_entry",
                                 "kvm:kvm_exit", "kvm:kvm_apic_ipi"),
                   fired={"kvm:kvm_entry": 0, "kvm:kvm_exit": 0,
                          "kvm:kvm_apic_ipi": 7, "kvm:kvm_msr": 9})
        text = "\n".join(pc.silent_lines(r))
        self.assertIn("never fired during the run: kvm:kvm_entry, "
                      "kvm:kvm_exit", text)
        self.assertIn("VM-entries per second cannot be counted here", text)
        self.assertIn("kvm_msr 9, kvm_apic_ipi 7", text)
        self.assertFalse(r.fires("kvm:kvm_entry"))
        self.assertTrue(r.fires("kvm:kvm_apic_ipi"))

    def test_result_window_by_name(self):
        a, b = pc.Window(begin=1, end=2, name="x"), pc.Window(end=3)
        r = result([b, a])
        self.assertIs(r.window(), a, "the first complete one")
        self.assertIs(r.window("x"), a)
        self.assertIsNone(r.window("y"))
        self.assertEqual(r.to_json()["vcpus"], {str(A): 0, str(B): 1})


if __name__ == "__main__":
    unittest.main()
