# SPDX-License-Identifier: MIT
"""The host probe against a host made of files (tools/tests/fakehost.py):
host facts, the vendor's cancel symbol, vCPU threads, the tracing state
it must leave as found, perf started through its control FIFO, and whole
probing sessions in kprobe and tracepoint mode, with tracefs mounted
for them or already there."""

import shutil
import tempfile
import threading
import time
import unittest
from pathlib import Path
from unittest import mock

from tools.lib.probe import hostprobe
from tools.tests.fakehost import (QEMU_PID, VCPU_TIDS, FakeHost,
                                  storm_script)

A, B = VCPU_TIDS
EV = "hvprobe:cancel"
OTHERS = "p:kprobes/mine vmx_cancel_injection\n"


class Host(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.host = FakeHost(tmp.name)

    def test_facts(self):
        with self.host.patched():
            facts = hostprobe.host_facts()
        self.assertEqual(facts["vendor_module"], "kvm_intel")
        self.assertEqual(facts["enable_pmu"], "Y")
        self.assertEqual(facts["perf_event_max_sample_rate"], 100000)
        self.assertIsNone(facts["throttle_messages_since_boot"],
                          "no /dev/kmsg here")
        text = "\n".join(hostprobe.facts_lines({**facts,
                                                "throttle_messages": []}))
        self.assertIn("vendor module kvm_intel (CPU vendor GenuineIntel with "
                      "vmx, /sys/module/kvm_intel), kvm.enable_pmu=Y", text)
        self.assertIn("throttling messages while probing: 0 (since boot: "
                      "?)", text)

    def test_pmu_model_and_fixes_read_from_the_host(self):
        with self.host.patched():
            facts = hostprobe.host_facts()
        self.assertEqual(facts["pmu_model"], "emulated")
        self.assertEqual(facts["fixes"], {"73554b29bd70": "unseen"})
        text = "\n".join(hostprobe.facts_lines(facts))
        self.assertIn("host: PMU model emulated (no "
                      "kvm_intel.enable_mediated_pmu)", text)
        # The parameter is the vendor module's (module_param in vmx.c and
        # svm.c, the kvm-x86-pmu-6.20 pull); kvm.ko has none of that name.
        wrong = self.host.sysmodule / "kvm/parameters/enable_mediated_pmu"
        wrong.write_text("Y\n")
        with self.host.patched():
            self.assertEqual(hostprobe.host_facts()["pmu_model"], "emulated")
        wrong.unlink()
        param = self.host.sysmodule / "kvm_intel/parameters/enable_mediated_pmu"
        param.parent.mkdir(parents=True, exist_ok=True)
        param.write_text("N\n")
        with self.host.patched():
            facts = hostprobe.host_facts()
        self.assertIn("host: PMU model emulated "
                      "(kvm_intel.enable_mediated_pmu=N)",
                      hostprobe.facts_lines(facts))
        param.write_text("Y\n")
        with open(self.host.proc / "kallsyms", "a") as f:
            f.write("ffffffffc0800200 t kvm_pmi_trigger_fn\t[kvm]\n")
        with self.host.patched():
            facts = hostprobe.host_facts()
        self.assertEqual(facts["pmu_model"], "mediated")
        self.assertEqual(facts["fixes"], {"73554b29bd70": "no"})
        text = "\n".join(hostprobe.facts_lines(facts))
        self.assertIn("host: PMU model mediated "
                      "(kvm_intel.enable_mediated_pmu=Y: counter reads and "
                      "writes do not exit (event selects still do), a guest "
                      "PMI reaches the host on its own vector; the verdict "
                      "still judges the PMI's NMI request at VM-entry)", text)
        self.assertIn("host: 73554b29bd70 no (kvm_pmi_trigger_fn in "
                      "kallsyms: the irq_work that delivers a PMI twice)",
                      text)

    def test_the_mediated_parameter_is_the_amd_modules_on_amd(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        host = FakeHost(tmp.name, vendor="kvm_amd", cpu="AuthenticAMD",
                        cpu_flags="svm")
        (host.sysmodule / "kvm_amd/parameters/enable_mediated_pmu") \
            .write_text("Y\n")
        with host.patched():
            facts = hostprobe.host_facts()
        self.assertEqual((facts["vendor_module"], facts["pmu_model"]),
                         ("kvm_amd", "mediated"))

    def test_kmsg_records_and_throttling(self):
        seq, text = hostprobe.kmsg_record(
            b"4,1234,5678,-;perf: interrupt took too long (2503 > 2500), "
            b"lowering kernel.perf_event_max_sample_rate to 79000\n"
            b" SUBSYSTEM=x\n")
        self.assertEqual(seq, 1234)
        self.assertEqual(hostprobe.throttling([text, "usb 1-1: new"]),
                         [text])
        self.assertEqual(hostprobe.kmsg_record(b"junk"), (None, None))

    def test_vendor_module_from_the_cpu_and_kallsyms(self):
        with self.host.patched():
            self.assertEqual(hostprobe.vendor_module(), "kvm_intel")
        # An AMD host whose kernel has both vendor modules built in.
        amd = FakeHost(self.host.dir / "amd", vendor="kvm_intel",
                       cpu="AuthenticAMD", cpu_flags="svm",
                       kallsyms="ffffffff81049a10 t vmx_cancel_injection\n"
                                "ffffffff8106b2c0 t svm_cancel_injection\n")
        (amd.sysmodule / "kvm_amd").mkdir()
        with amd.patched():
            self.assertEqual(hostprobe.vendor_module(), "kvm_amd")
            self.assertEqual(hostprobe.cancel_symbol(
                (amd.proc / "kallsyms").read_text(),
                hostprobe.vendor_module()), ("svm_cancel_injection", ""))

    def test_cancel_symbol(self):
        syms = ("ffffffffc0a01230 t vmx_cancel_injection\t[kvm_intel]\n"
                "ffffffffc0a01300 t vt_cancel_injection\t[kvm_intel]\n"
                "ffffffff812f6380 t pvm_cancel_injection\n"
                "ffffffff81000000 d svm_cancel_injection\n")
        self.assertEqual(hostprobe.cancel_symbol(syms, "kvm_intel"),
                         ("vmx_cancel_injection", "kvm_intel"))
        self.assertEqual(hostprobe.cancel_symbol(
            "ffffffffc0a01300 t vt_cancel_injection\t[kvm_intel]\n",
            "kvm_intel"), ("vt_cancel_injection", "kvm_intel"),
            "vmx_ inlined into the TDX wrapper")
        self.assertEqual(hostprobe.cancel_symbol(syms, "kvm_pvm"),
                         ("pvm_cancel_injection", ""))
        self.assertEqual(hostprobe.cancel_symbol(syms, "kvm_amd"),
                         (None, None), "a data symbol is no function")
        self.assertEqual(hostprobe.cancel_symbol(
            "ffffffff81 t foo_cancel_injection [kvm_foo]\n", "kvm_foo"),
            ("foo_cancel_injection", "kvm_foo"), "the only candidate")
        self.assertEqual(hostprobe.cancel_symbol(syms, None), (None, None),
                         "several candidates: none is guessed")

    def test_vcpu_threads(self):
        with self.host.patched():
            self.assertEqual(hostprobe.vcpus_by_name(QEMU_PID),
                             {A: 0, B: 1})
            vcpus, how = hostprobe.find_vcpus(QEMU_PID, want=2)
            self.assertEqual(vcpus, {A: 0, B: 1})
            self.assertEqual(how, "thread names (CPU n/KVM)")
            vm = self.host.debugfs / "kvm" / f"{QEMU_PID}-11"
            for i, tid in enumerate((A, B)):
                (vm / f"vcpu{i}").mkdir(parents=True)
                (vm / f"vcpu{i}" / "pid").write_text(f"{tid}\n")
            self.assertIn("debugfs agrees",
                          hostprobe.find_vcpus(QEMU_PID)[1])
            for tid in (A, B):
                (self.host.proc / str(QEMU_PID) / "task" / str(tid) /
                 "comm").write_text("qemu-system-x86\n")
            vcpus, how = hostprobe.find_vcpus(QEMU_PID, wait_s=0)
            self.assertEqual((vcpus, how[:7]), ({A: 0, B: 1}, "debugfs"))
            (vm / "vcpu1" / "pid").write_text("0\n")    # never ran yet
            self.assertEqual(hostprobe.vcpus_by_debugfs(QEMU_PID), {A: 0})
            vcpus, how = hostprobe.find_vcpus(QEMU_PID, want=2, wait_s=0)
            self.assertEqual(vcpus, {A: 0})
            shutil.rmtree(self.host.debugfs / "kvm")
            vcpus, how = hostprobe.find_vcpus(QEMU_PID, wait_s=0)
            self.assertEqual(set(vcpus), {QEMU_PID, A, B, 80})
            self.assertIn("debug-threads=on", how)

    def test_writes_append_never_truncate(self):
        # Opened for truncation, kprobe_events drops every probe on the
        # host: someone else's must survive ours.
        events = self.host.tracefs / "kprobe_events"
        events.write_text(OTHERS)
        with mock.patch.object(hostprobe, "TRACEFS", self.host.tracefs):
            hostprobe.write_tracefs("kprobe_events", "p:hvprobe/x foo\n")
        self.assertEqual(events.read_text(), OTHERS + "p:hvprobe/x foo\n")
        self.assertTrue(hostprobe.kprobe_listed(events.read_text(), "x"))
        self.assertFalse(hostprobe.kprobe_listed(events.read_text(), "mine"),
                         "another group's event is not ours")
        self.assertTrue(hostprobe.kprobe_listed(events.read_text(), "mine",
                                                group="kprobes"))

    def test_tracing_state_and_its_diff(self):
        with self.host.patched():
            self.assertTrue(hostprobe.tracefs_mounted())
            before = hostprobe.tracing_state()
            self.assertEqual(before["mounts"],
                             [f"tracefs {self.host.tracefs}"])
            self.assertEqual(before["current_tracer"], "nop")
            (self.host.tracefs / "kprobe_events").write_text(
                "p:probe/x foo\n")
            diff = hostprobe.state_diff(before, hostprobe.tracing_state())
        self.assertEqual(diff, ["kprobe_events: '' -> 'p:probe/x foo'"])


class Session(unittest.TestCase):
    """PerfSession: the control FIFO, the ack, SIGINT."""

    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.host = FakeHost(tmp.name)
        self.tmp = Path(tmp.name) / "s"
        self.tmp.mkdir()
        self.host.stat.write_text("CPU 0/KVM-1;3;;kvm:kvm_exit;1;100.00;;\n")

    def test_enabled_then_stopped(self):
        out = self.tmp / "out.csv"
        with self.host.patched():
            s = hostprobe.PerfSession(
                hostprobe.stat_argv("perf", out, [1]), self.tmp, "stat")
            self.assertEqual(s.command()[:6], [
                "perf", "stat", "-D", "-1", "--control",
                f"fifo:{self.tmp}/stat.ctl,{self.tmp}/stat.ack"])
            s.start()
            self.assertIsNone(s.proc.poll(), "runs until stopped")
            s.stop()
        self.assertTrue(s.ok, (s.rc, s.how))
        self.assertEqual(s.how, "stopped with SIGINT")
        self.assertIn("kvm:kvm_exit", out.read_text())
        self.assertFalse((self.tmp / "stat.ctl").exists(), "FIFOs removed")

    def test_perf_that_fails_or_never_acks(self):
        with self.host.patched():
            s = hostprobe.PerfSession(["perf", "nosuch"], self.tmp, "x")
            with self.assertRaisesRegex(hostprobe.CannotProbe,
                                        "exited 1 before"):
                s.start()
            s.stop()
        with self.host.patched(FAKE_NO_ACK="1"), \
                mock.patch.object(hostprobe, "PERF_WAIT_S", 0.5):
            s = hostprobe.PerfSession(
                hostprobe.stat_argv("perf", self.tmp / "o", [1]), self.tmp,
                "y")
            with self.assertRaisesRegex(hostprobe.CannotProbe,
                                        "did not acknowledge"):
                s.start()
            self.assertIsNotNone(s.proc.poll(), "and it was stopped")


class Probing(unittest.TestCase):
    """Probe from open to close, against the fake host."""

    def make(self, **kw):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.host = FakeHost(tmp.name, **kw)
        self.host.script.write_text(storm_script())
        self.host.stat.write_text(
            "CPU 0/KVM-4242;0;;kvm:kvm_entry;1;100.00;;\n"
            "CPU 0/KVM-4242;5;;kvm:kvm_msr;1;100.00;;\n")
        self.folder = Path(tmp.name) / "run"
        self.folder.mkdir()

    def session(self, **kw):
        with hostprobe.Probe(self.folder, **kw) as probe:
            probe.attach(QEMU_PID, want_vcpus=2, wait_s=0)
            result = probe.finish("# host mark 0xb0 (nmi_storm begins)\n")
        return probe, result

    def writes(self):
        """Every write to tracefs, as (file, text), recorded."""
        seen, real = [], self.host.write_tracefs

        def write(name, text):
            seen.append((name, text))
            return real(name, text)
        return seen, mock.patch.object(hostprobe, "write_tracefs", write)

    def test_kprobe_mode(self):
        self.make()
        events = self.host.tracefs / "kprobe_events"
        events.write_text(OTHERS)
        seen, spy = self.writes()
        with self.host.patched(), spy:
            probe, r = self.session()
            self.assertEqual(events.read_text(), OTHERS,
                             "ours removed, someone else's left alone")
        self.assertEqual(r.mode, "kprobe")
        self.assertEqual(r.cancel_symbol, "vmx_cancel_injection")
        self.assertEqual(seen, [
            ("kprobe_events", "p:hvprobe/cancel vmx_cancel_injection "
                              "vcpu=%di:x64\n"),
            ("kprobe_events", "p:hvprobe/pmi kvm_pmu_deliver_pmi "
                              "vcpu=%di:x64\n"),
            ("kprobe_events", "p:hvprobe/inject_nmi kvm_inject_nmi "
                              "vcpu=%di:x64\n"),
            ("kprobe_events", "-:hvprobe/inject_nmi\n"),
            ("kprobe_events", "-:hvprobe/pmi\n"),
            ("kprobe_events", "-:hvprobe/cancel\n")])
        calls = self.host.calls()
        self.assertFalse([c for c in calls if c.startswith("probe")],
                         "no perf probe: it cannot place module symbols")
        record = next(c for c in calls if c.startswith("record"))
        self.assertIn(f"-t {A},{B}", record)
        for event in ("-e kvm:kvm_pio --filter port == 0x80",
                      "-e kvm:kvm_entry", "-e kvm:kvm_apic_accept_irq",
                      f"-e {EV}", "-e hvprobe:inject_nmi"):
            self.assertIn(event, record)
        stat = next(c for c in calls if c.startswith("stat"))
        self.assertIn("-e kvm:*", stat)
        w = r.window("nmi_storm")
        self.assertTrue(w.complete)
        self.assertEqual(w.counts[A]["cancel"], 1)
        self.assertEqual(w.counts[A]["pmi"], 1)
        self.assertEqual(w.total("nmi_ipi"), 10)
        self.assertEqual(r.fired["kvm:kvm_msr"], 5)
        self.assertEqual(r.fired[EV], 1, "recorded events count themselves")
        self.assertEqual(r.fired["kvm:kvm_entry"], 0)
        self.assertEqual(r.leftovers, [])
        self.assertTrue(r.perf_ok)
        self.assertEqual(r.tracefs, f"already mounted on "
                                    f"{self.host.tracefs}: left as found")
        self.assertFalse((self.folder / "perf.data").exists(),
                         "perf.data removed unless kept")

    def test_tracepoint_mode_without_kprobe_events(self):
        self.make(kprobes=False)
        with self.host.patched():
            _, r = self.session()
        self.assertEqual(r.mode, "tracepoint")
        self.assertIn("they need kprobes, and this kernel has no kprobe "
                      "events", r.notes[0])
        self.assertFalse([c for c in self.host.calls()
                          if c.startswith("probe")])
        record = next(c for c in self.host.calls()
                      if c.startswith("record"))
        self.assertNotIn("probe:", record)
        self.assertEqual(r.leftovers, [])

    def test_tracepoint_mode_asked_for(self):
        self.make()
        with self.host.patched():
            _, r = self.session(kprobes="off", discover=False,
                                keep_data=True)
        self.assertEqual(r.mode, "tracepoint")
        self.assertFalse([c for c in self.host.calls()
                          if c.startswith(("probe", "stat"))])
        self.assertTrue((self.folder / "perf.data").exists())

    def test_tracefs_mounted_for_the_probe_and_unmounted(self):
        self.make(mounted=False)
        with self.host.patched():
            self.assertFalse(hostprobe.tracefs_mounted())
            _, r = self.session()
            self.assertFalse(hostprobe.tracefs_mounted())
        self.assertEqual(r.mode, "kprobe")
        self.assertIn("for the probe, unmounted after", r.tracefs)
        self.assertEqual(r.leftovers, [])

    def test_a_probe_left_behind_is_said(self):
        self.make()
        with self.host.patched(FAKE_KEEP_PROBES="1"), \
                mock.patch.object(hostprobe, "REMOVE_TRIES", 2):
            probe, r = self.session()
        self.assertEqual(len(r.leftovers), 1)
        self.assertIn("kprobe_events: '' -> 'p:hvprobe/cancel "
                      "vmx_cancel_injection vcpu=%di:x64", r.leftovers[0])
        self.assertIn("could not remove hvprobe:cancel: Device or resource "
                      "busy; run: echo '-:hvprobe/cancel' >> "
                      f"{self.host.tracefs}/kprobe_events", r.notes)

    def test_stale_probe_refused_untouched(self):
        self.make()
        stale = "p:hvprobe/cancel vmx_cancel_injection\n" + OTHERS
        (self.host.tracefs / "kprobe_events").write_text(stale)
        seen, spy = self.writes()
        with self.host.patched(), spy:
            with self.assertRaisesRegex(
                    hostprobe.CannotProbe,
                    "hvprobe:cancel already exists.*echo '-:hvprobe/cancel'"):
                self.session()
        self.assertEqual(seen, [], "nothing written, nothing removed")
        self.assertEqual((self.host.tracefs / "kprobe_events").read_text(),
                         stale)

    def test_an_optional_probe_that_fails_is_not_recorded(self):
        self.make(kallsyms="ffffffffc0a01230 t vmx_cancel_injection\t"
                           "[kvm_intel]\n"
                           "ffffffffc0800100 T kvm_inject_nmi\t[kvm]\n")
        with self.host.patched():
            _, r = self.session()
        self.assertEqual(r.mode, "kprobe")
        self.assertIn("kvm_pmu_deliver_pmi is not in /proc/kallsyms: PMIs "
                      "delivered (kprobe on kvm_pmu_deliver_pmi) not counted",
                      r.notes)
        self.assertNotIn("hvprobe:pmi", r.recorded)
        self.assertIn("hvprobe:inject_nmi", r.recorded)

    def test_cancel_probe_that_fails(self):
        self.make()
        events = self.host.tracefs / "kprobe_events"
        events.write_text(OTHERS)
        seen, spy = self.writes()
        with self.host.patched(FAKE_PROBE_FAIL="1"), spy:
            _, r = self.session()
        self.assertEqual(r.mode, "tracepoint")
        self.assertEqual(
            r.notes[0], "cancelled VM-entries: not counted: writing "
            "'p:hvprobe/cancel vmx_cancel_injection vcpu=%di:x64' to "
            f"{self.host.tracefs}/kprobe_events failed: Invalid argument "
            "(error_log: [ 12.345678] trace_kprobe: error: Failed to "
            "register probe event Command: p:hvprobe/cancel "
            "vmx_cancel_injection vcpu=%di:x64 ^)")
        self.assertEqual(len(seen), 1, "nothing removed that was not added")
        self.assertEqual(events.read_text(), OTHERS)
        self.assertEqual(r.leftovers, [])

    def test_a_module_symbol_the_kernel_lacks(self):
        # An AMD host whose kvm_amd is not loaded: kallsyms lists no
        # svm_cancel_injection, so the kernel refuses it (ENOENT).
        self.make(cpu="AuthenticAMD", cpu_flags="svm",
                  kallsyms="ffffffffc0a01230 t svm_cancel_injection\t"
                           "[kvm_amd]\n")
        (self.host.proc / "kallsyms").write_text("")
        with self.host.patched(), mock.patch.object(
                hostprobe, "cancel_symbol",
                lambda *a: ("svm_cancel_injection", "kvm_amd")):
            _, r = self.session()
        self.assertIn("failed: No such file or directory (error_log:",
                      r.notes[0])

    def test_refusals(self):
        self.make()
        with self.host.patched(euid=1000):
            with self.assertRaisesRegex(hostprobe.CannotProbe, "root"):
                hostprobe.Probe(self.folder).open()
        with self.host.patched():
            with self.assertRaisesRegex(hostprobe.CannotProbe, "not found"):
                hostprobe.Probe(self.folder, perf="no-such-perf").open()
            shutil.rmtree(self.host.tracefs / "events" / "kvm")
            with self.assertRaisesRegex(hostprobe.CannotProbe,
                                        "no kvm:kvm_pio"):
                with hostprobe.Probe(self.folder):
                    pass
        self.assertEqual(self.host.calls(), [])

    def test_vcpus_that_appear_late(self):
        self.make()
        task = self.host.proc / str(QEMU_PID) / "task"
        (task / str(B) / "comm").write_text("qemu-system-x86\n")

        def name_it():
            time.sleep(0.2)
            (task / str(B) / "comm").write_text("CPU 1/KVM\n")
        threading.Thread(target=name_it).start()
        with self.host.patched():
            vcpus, _ = hostprobe.find_vcpus(QEMU_PID, want=2, wait_s=5)
        self.assertEqual(vcpus, {A: 0, B: 1})


if __name__ == "__main__":
    unittest.main()
