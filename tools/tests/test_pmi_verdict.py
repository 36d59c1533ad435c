# SPDX-License-Identifier: MIT
"""tools/pmi-verdict without a vPMU: its arithmetic (period for a rate,
the sweep's rates, figures per vCPU, the verdict's thresholds) and its
whole course over fake probed runs of a host model: one that cancels a
VM-entry per PMI with LVTPC=NMI, one that does not, one without a vPMU,
one without kprobes."""

import contextlib
import io
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
import tempfile
import unittest
from collections import Counter
from pathlib import Path
from unittest import mock

from tools import ROOT
from tools.commands import pmi_verdict as pv
from tools.lib.launch import guest
from tools.lib.probe import hostprobe, probecount
from tools.tests.fakehost import KIND, alive, make_guest_host, tool_argv
from tools.tests.test_jsonfile import full_disk

A, B = 4242, 4243
KPROBE_EVENTS = ["kvm:kvm_pio", "kvm:kvm_entry", "kvm:kvm_exit",
                 "kvm:kvm_apic_ipi", "kvm:kvm_apic_accept_irq",
                 "hvprobe:cancel", "hvprobe:pmi",
                 "hvprobe:inject_nmi"]
NO_KPROBE_NOTE = ("cancelled VM-entries: not counted: they need kprobes, "
                  "and this kernel has no kprobe events")


class Model:
    """A host: the guest does INSTR instructions a second per vCPU, PMIs
    are capped at CAP a second (perf throttling), and with LVTPC=NMI a
    late host cancels LATE VM-entries per PMI."""
    INSTR = 3e9
    CAP = 20000

    def __init__(self, late=1.0, vpmu=True, kprobes=True, ipis_seen=None,
                 baseline=0.01, cause=1.0, lost=0, whole=True):
        self.late, self.vpmu, self.kprobes = late, vpmu, kprobes
        self.ipis_seen = ipis_seen
        # Fixed-vector cancels per PMI; the share of NMI-mode cancels
        # that follow the PMI's own NMI; perf's lost records; whether the
        # host saw both marks.
        self.baseline, self.cause = baseline, cause
        self.lost, self.whole = lost, whole
        self.boots = []

    def run(self, verdict, name, words, cpu, discover=False):
        self.boots.append((name, words))
        opts = dict(w.split("=", 1) for w in words)
        recorded = KPROBE_EVENTS if self.kprobes else KPROBE_EVENTS[:5]
        notes = [] if self.kprobes else [NO_KPROBE_NOTE]
        if opts["test"] == "nmi_storm":
            sent = 20000
            w = probecount.Window(begin=1.0, end=2.0, name="nmi_storm")
            w.counts = {A: Counter(nmi_ipi=sent // 2, entry=50000),
                        B: Counter(nmi_ipi=(self.ipis_seen or sent) // 2,
                                   entry=50000)}
            data = {"test": "nmi_storm", "sent": sent, "seconds": 1}
            test = {"name": "nmi_storm", "status": "pass", "reason": None,
                    "data": [data]}
        elif not self.vpmu:
            why = "no architectural PMU (CPUID.0AH:EAX[7:0]=0)"
            w = None
            test = {"name": "pmi_stress", "status": "skip", "reason": why,
                    "data": [{"test": "pmi_stress", "skipped": why}]}
        else:
            period, secs = int(opts["pmu.period"]), int(opts["pmu.seconds"])
            rate = min(self.INSTR / period, self.CAP)
            lvtpc = opts["pmu.lvtpc"]
            nmi = lvtpc == "nmi"
            cancels = rate * (self.late if nmi else self.baseline)
            caused = cancels * self.cause if nmi else 0
            accept = "accept_nmi" if nmi else "accept_fixed_34"
            w = probecount.Window(begin=10.0 if self.whole else None,
                                  end=10.0 + secs, name="pmi_stress")
            w.first = 10.0
            w.counts = {t: Counter({"pmi": int(rate * secs),
                                    accept: int(rate * secs),
                                    "inject_nmi": int(rate * secs) if nmi
                                    else 0,
                                    "cancel": int(cancels * secs),
                                    "caused_nmi": int(caused * secs),
                                    "caused_pmi_nmi": int(caused * secs),
                                    "entry": int(4 * rate * secs)})
                        for t in (A, B)}
            data = {"test": "pmi_stress", "lvtpc": lvtpc, "period": period,
                    "seconds": secs, "cpus": 2, "pmis": int(2 * rate * secs),
                    "pmis_per_s_per_cpu": int(rate)}
            test = {"name": "pmi_stress", "status": "pass", "reason": None,
                    "data": [data]}
        result = probecount.Result(
            mode="kprobe" if self.kprobes else "tracepoint", notes=notes,
            recorded=recorded, vcpus={A: 0, B: 1},
            vcpu_method="thread names (CPU n/KVM)",
            windows=[w] if w else [], fired={"kvm:kvm_entry": 1},
            discovery_tids=[A], lost=self.lost if w and
            w.name == "pmi_stress" else 0, events=0, perf_ok=True,
            throttle_messages=[], sample_rate_after=100000,
            cancel_symbol="vmx_cancel_injection" if self.kprobes else None)
        doc = {"verdict": "pass", "tests": [test]}
        record = {"name": name, "probe": result.to_json()}
        verdict.doc["runs"].append(record)
        return guest.Outcome(doc, [], True), result, record


class KvmRecord(Model):
    """A host whose guest writes pmi_stress's kvm record: kvm, what it
    infers of the four commits."""

    def __init__(self, kvm, **kw):
        super().__init__(**kw)
        self.kvm = kvm

    def run(self, verdict, name, words, cpu, discover=False):
        outcome, result, record = super().run(verdict, name, words, cpu,
                                              discover)
        for test in outcome.doc["tests"]:
            if test["name"] == "pmi_stress":
                test["data"].append({"test": "pmi_stress", "record": "kvm",
                                     **self.kvm})
        return outcome, result, record


def verdict_run(model, *argv, enable_pmu="Y", fixes=None):
    out = io.StringIO()
    def run(self, *a, **k):
        return model.run(self, *a, **k)
    with tempfile.TemporaryDirectory() as tmp, \
            mock.patch.object(pv.Verdict, "run", run), \
            mock.patch.object(pv.hostprobe, "host_facts", lambda: {
                "kernel": "6.6.0", "vendor_module": "kvm_intel",
                "enable_pmu": enable_pmu,
                "perf_event_max_sample_rate": 100000,
                "fixes": fixes or {"73554b29bd70": "unseen"}}), \
            contextlib.redirect_stdout(out):
        args = pv.parse_args(["--no-build", "--results", tmp, *argv])
        rc = pv.Verdict(args, Path(tmp)).main()
        saved = (Path(tmp) / "verdict.json").read_text()
    return rc, out.getvalue(), saved


class Arithmetic(unittest.TestCase):
    def test_period_for_a_rate(self):
        # 3000 PMIs/s at 1e6 instructions: 1500 PMIs/s at 2e6.
        self.assertEqual(pv.period_for(1500, 1000000, 3000), 2000000)
        self.assertEqual(pv.period_for(10**9, 1000000, 3000), pv.PERIOD_MIN)
        self.assertEqual(pv.period_for(1, 2**30, 3000), pv.PERIOD_MAX)
        self.assertIsNone(pv.period_for(1500, 1000000, 0))

    def test_sweep_rates(self):
        self.assertEqual(pv.sweep_rates(1500, 12000),
                         [1500, 3000, 6000, 12000])
        self.assertEqual(pv.sweep_rates(1500, 1000), [1500])

    def test_verdict_thresholds(self):
        def fig(lvtpc, per_pmi, caused_per_pmi, pmis=10000, **kw):
            return {"lvtpc": lvtpc, "pmis": pmis, "complete": True,
                    "lost": 0, "cancels": round(per_pmi * pmis),
                    "cancels_per_pmi": per_pmi,
                    "caused": round(caused_per_pmi * pmis),
                    "caused_per_pmi": caused_per_pmi, **kw}

        def line(a, b, cause=None, **kw):
            return pv.verdict(fig("nmi", a, a if cause is None else cause,
                                  **kw), fig("fixed", b, 0))
        self.assertEqual(line(0.97, 0.01), (
            "late", "0.97 cancels per PMI with LVTPC=NMI vs 0.01 on a fixed "
            "vector, 0.97 after the PMI's own NMI: this host notices the "
            "PMI's NMI late on VM-entry (NMI requests serviced before PMI "
            "requests)"))
        self.assertEqual(line(0.02, 0.01)[0], "on time")
        self.assertIn("services the PMI's NMI in the same VM-entry",
                      line(0.02, 0.01)[1])
        self.assertEqual(line(0.3, 0.01)[0], "inconclusive")
        self.assertIn("between the thresholds", line(0.3, 0.01)[1])
        # Many cancels, but not after the PMI's own NMI: not the cause.
        self.assertEqual(line(0.97, 0.01, cause=0.05)[0], "inconclusive")
        # Each requirement, alone, leaves no verdict.
        for kw, why in (({"complete": False}, "LVTPC=nmi window was not "
                         "seen whole"),
                        ({"lost": 3}, "perf lost 3 records in the LVTPC=nmi"),
                        ({"pmis": 999}, "PMIs with LVTPC=nmi, fewer than "
                         "1000"),
                        ({"caused": None}, "the cause was not counted"),
                        # A guest that lost PMIs measured no ratio.
                        ({"guest_failed": "2 PMIs lost"}, "the guest's "
                         "pmi_stress failed with LVTPC=nmi: 2 PMIs lost")):
            with self.subTest(kw=kw):
                status, text = line(0.97, 0.01, **kw)
                self.assertEqual(status, "inconclusive")
                self.assertIn(why, text)
        no_cancels = {**fig("nmi", 0, 0), "cancels": None}
        self.assertEqual(pv.verdict(no_cancels, fig("fixed", 0, 0)),
                         (None, None), "no kprobes: not counted at all")

    def test_a_high_baseline_is_no_verdict(self):
        # 0.65 vs 0.60: a difference of 0.05 once read as "on time".
        status, text = pv.verdict(
            {"lvtpc": "nmi", "pmis": 10000, "complete": True, "lost": 0,
             "cancels": 6500, "cancels_per_pmi": 0.65, "caused": 100,
             "caused_per_pmi": 0.01},
            {"lvtpc": "fixed", "pmis": 10000, "complete": True, "lost": 0,
             "cancels": 6000, "cancels_per_pmi": 0.60, "caused": 0,
             "caused_per_pmi": 0})
        self.assertEqual(status, "inconclusive")
        self.assertIn("the fixed-vector baseline is 0.60 cancels per PMI, "
                      "above 0.10", text)

    def test_host_pmis_by_what_was_counted(self):
        c = Counter(pmi=5, accept_nmi=7, accept_fixed_34=9)
        r = probecount.Result("kprobe", [], KPROBE_EVENTS, {}, "", [], {},
                              [], 0, 0, True, [], None)
        self.assertEqual(pv.host_pmis(r, c, "nmi")[0], 5)
        r.recorded = KPROBE_EVENTS[:5]
        self.assertEqual(pv.host_pmis(r, c, "nmi")[0], 7)
        self.assertEqual(pv.host_pmis(r, c, "fixed")[0], 9)
        r.recorded = []
        self.assertEqual(pv.host_pmis(r, c, "nmi")[0], None)


class Course(unittest.TestCase):
    def test_a_late_host(self):
        model = Model(late=0.97)
        rc, out, saved = verdict_run(model, "--sweep-max", "100000")
        self.assertEqual(rc, pv.EXIT_VERDICT, out)
        self.assertIn("PASS NMI IPIs: guest sent 20000, host counted 20000 "
                      "(kvm:kvm_apic_ipi) over the window: differ by 0, at "
                      "most 4 may", out)
        self.assertIn("3000 PMIs/s per vCPU at pmu.period=1000000", out)
        # 3e9 instructions / 1500 PMIs/s.
        self.assertIn("pmu.period=2000000 (asked 1500 PMIs/s per vCPU)", out)
        self.assertRegex(out, r"CPU 0 +4242 +1500\.0 +1500\.0 +6000\.0 "
                              r"+1455\.0 +0\.970 +0\.970")
        self.assertIn("all vCPUs: 15000 PMIs, 14550 cancels (0.970/PMI), "
                      "14550 after the PMI's own NMI (0.970/PMI)", out)
        self.assertIn("verdict: 0.97 cancels per PMI with LVTPC=NMI vs 0.01 "
                      "on a fixed vector, 0.97 after the PMI's own NMI: this "
                      "host notices the PMI's NMI late", out)
        # The host caps at 20000: 24000 asked is still 83 % of it, 48000
        # is not, and ends the sweep.
        asked = [n for n, _ in model.boots if n.startswith("sweep-")]
        self.assertEqual(asked, [f"sweep-{r}" for r in
                                 (1500, 3000, 6000, 12000, 24000, 48000)])
        self.assertIn("highest sustained: 20000 PMIs/s per vCPU (asked "
                      "24000)", out)
        self.assertIn('"verdict": "0.97 cancels per PMI', saved)
        lvtpcs = [dict(x.split("=") for x in w)["pmu.lvtpc"]
                  for n, w in model.boots if n.startswith("lvtpc-")]
        self.assertEqual(lvtpcs, ["nmi", "fixed"])
        for name, words in model.boots:
            if "test=pmi_stress" in words:
                self.assertIn("pmu.nmi_ipi=0", words, name)

    def test_a_fixed_host(self):
        rc, out, _ = verdict_run(Model(late=0.0), "--no-sweep")
        self.assertEqual(rc, pv.EXIT_VERDICT, out)
        self.assertIn("this host services the PMI's NMI in the same "
                      "VM-entry", out)
        self.assertNotIn("rate sweep", out)

    def test_no_vpmu(self):
        model = Model(vpmu=False, kprobes=False)
        rc, out, saved = verdict_run(model, enable_pmu="N")
        self.assertEqual(rc, pv.EXIT_NO_VERDICT, out)
        self.assertEqual([n for n, _ in model.boots],
                         ["probe-check", "calibrate"])
        self.assertIn("SKIP calibration: no vPMU: guest: no architectural "
                      "PMU (CPUID.0AH:EAX[7:0]=0); host: kvm.enable_pmu=N",
                      out)
        self.assertIn("SKIP LVTPC=nmi vs LVTPC=fixed at 1500 PMIs/s", out)
        self.assertIn("SKIP rate sweep", out)
        self.assertIn("verdict: none: no vPMU", out)
        self.assertIn("; and " + NO_KPROBE_NOTE, out)
        self.assertIn('"no_verdict": "no vPMU', saved)

    def test_no_kprobes(self):
        rc, out, _ = verdict_run(Model(kprobes=False), "--no-sweep")
        self.assertEqual(rc, pv.EXIT_NO_VERDICT, out)
        self.assertRegex(out, r"CPU 0 +4242 +1500\.0 +1500\.0 +6000\.0 +- "
                              r"+-")
        self.assertIn("verdict: none: " + NO_KPROBE_NOTE, out)
        self.assertIn("host PMIs/s: LVTPC interrupts accepted, shown, never "
                      "divided by", out)

    def test_a_baseline_as_high_as_the_nmi_mode_is_inconclusive(self):
        model = Model(late=0.65, baseline=0.60, cause=0.0)
        rc, out, saved = verdict_run(model, "--no-sweep")
        self.assertEqual(rc, pv.EXIT_NO_VERDICT, out)
        self.assertIn("verdict: 0.65 cancels per PMI with LVTPC=NMI vs 0.60 "
                      "on a fixed vector, 0.00 after the PMI's own NMI: "
                      "inconclusive: the fixed-vector baseline is 0.60", out)
        doc = json.loads(saved)
        self.assertEqual((doc["verdict"], doc["verdict_status"], doc["exit"]),
                         (None, "inconclusive", 4))

    def test_lost_records_and_a_partial_window_are_inconclusive(self):
        for model, why in ((Model(lost=12), "perf lost 12 records in the "
                            "LVTPC=nmi run"),
                           (Model(whole=False), "the LVTPC=nmi window was "
                            "not seen whole")):
            with self.subTest(why=why):
                rc, out, _ = verdict_run(model, "--no-sweep")
                self.assertEqual(rc, pv.EXIT_NO_VERDICT, out)
                self.assertIn(why, out)

    def test_the_guests_inference_beside_the_hosts_facts(self):
        kvm = {"a16eb25b09c0": "yes", "49ff3b4aec51": "either",
               "73554b29bd70": "yes", "fad505b2cb83": "unseen"}
        rc, out, saved = verdict_run(KvmRecord(kvm, late=0.97), "--quick",
                                     fixes={"73554b29bd70": "no"})
        self.assertEqual(rc, pv.EXIT_VERDICT, out)
        self.assertIn("guest infers (LVTPC=nmi): a16eb25b09c0 yes, "
                      "49ff3b4aec51 either, 73554b29bd70 yes, fad505b2cb83 "
                      "unseen", out)
        self.assertIn("73554b29bd70: the guest says yes, the host's "
                      "kallsyms no: they disagree", out)
        self.assertEqual(json.loads(saved)["guest_kvm"]["73554b29bd70"],
                         "yes")
        rc, out, _ = verdict_run(KvmRecord(kvm, late=0.97), "--quick")
        self.assertNotIn("disagree", out)

    def test_a_probe_that_miscounts_fails(self):
        rc, out, _ = verdict_run(Model(ipis_seen=19000), "--no-sweep")
        self.assertEqual(rc, pv.EXIT_FAILED, out)
        self.assertIn("FAIL NMI IPIs: guest sent 20000, host counted 19500",
                      out)

    def test_ipis_at_the_window_edges_are_allowed(self):
        # Measured on Linux 6.1 in L1: the guest sent 8391, the host
        # counted 8392.
        rc, out, _ = verdict_run(Model(ipis_seen=20002), "--no-sweep")
        self.assertEqual(rc, pv.EXIT_VERDICT, out)
        self.assertIn("PASS NMI IPIs: guest sent 20000, host counted 20001 "
                      "(kvm:kvm_apic_ipi) over the window: differ by 1, at "
                      "most 4 may (one per vCPU at each of the window's two "
                      "edges, 2 vCPUs)", out)

    def test_ipi_check_bound(self):
        self.assertTrue(pv.ipi_check(8391, 8392, 2)["ok"])
        self.assertTrue(pv.ipi_check(8391, 8387, 2)["ok"])
        self.assertFalse(pv.ipi_check(8391, 8386, 2)["ok"])
        self.assertEqual(pv.ipi_check(100, 108, 4)["bound"], 8)
        self.assertFalse(pv.ipi_check(8391, 8391, 2, lost=1)["ok"])
        self.assertFalse(pv.ipi_check(8391, 8391, 2, complete=False)["ok"])
        self.assertFalse(pv.ipi_check(None, 8391, 2)["ok"])


def expect_run(model, expect, *argv, enable_pmu="Y"):
    """(exit status under --expect, what it printed, stderr): the course
    as verdict_run() runs it, judged as main() judges it."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        rc, out, saved = verdict_run(model, "--expect", expect, *argv,
                                     enable_pmu=enable_pmu)
        doc = json.loads(saved)
        judged = {"status": doc["verdict_status"],
                  "failed": rc == pv.EXIT_FAILED,
                  "why": doc.get("verdict") or doc.get("no_verdict")}
        status = pv.bisect_exit(expect, judged)
    return status, out, err.getvalue()


class Bisect(unittest.TestCase):
    """--expect: what git bisect run reads: 0 good, 1 bad, 125 skip."""

    def test_the_expected_verdict_is_0_the_other_1(self):
        for model, expect, rc in ((Model(late=0.97), "late", 0),
                                  (Model(late=0.97), "on-time", 1),
                                  (Model(late=0.0), "on-time", 0),
                                  (Model(late=0.0), "late", 1)):
            with self.subTest(late=model.late, expect=expect):
                status, out, err = expect_run(model, expect, "--quick")
                self.assertEqual(status, rc, out + err)
        _, _, err = expect_run(Model(late=0.97), "on-time", "--quick")
        self.assertIn("the verdict is late, not on time", err)

    def test_no_verdict_is_125_with_the_reason(self):
        for model, pmu, why in (
                (Model(vpmu=False), "N", "no vPMU: guest: no architectural "
                 "PMU"),
                (Model(lost=12), "Y", "perf lost 12 records"),
                (Model(late=0.3, cause=1.0), "Y", "between the thresholds"),
                (Model(kprobes=False), "Y", "they need kprobes"),
                (Model(ipis_seen=19000), "Y", "a run or the probe check "
                 "failed")):
            with self.subTest(why=why):
                status, out, err = expect_run(model, "late", "--quick",
                                              enable_pmu=pmu)
                self.assertEqual(status, pv.EXIT_SKIP, out + err)
                self.assertIn("no verdict (125, git bisect's skip)", err)
                self.assertIn(why, err)

    def test_quick_is_the_comparison_alone(self):
        model = Model(late=0.97)
        rc, out, _ = verdict_run(model, "--quick")
        self.assertEqual(rc, pv.EXIT_VERDICT, out)
        self.assertEqual([n for n, _ in model.boots],
                         ["probe-check", "lvtpc-nmi", "lvtpc-fixed"])
        for name, words in model.boots[1:]:
            self.assertIn(f"pmu.period={pv.QUICK_PERIOD}", words, name)
            self.assertIn("pmu.counters=1", words, name)
        self.assertNotIn("calibration", out)
        self.assertNotIn("rate sweep", out)
        model = Model(late=0.97)
        verdict_run(model, "--quick", "--period", "4000000")
        self.assertIn("pmu.period=4000000", model.boots[1][1])
        model = Model(late=0.97)
        verdict_run(model)
        for name, words in model.boots:
            self.assertNotIn("pmu.counters=1", words, name)

    def test_quick_without_a_vpmu_says_so(self):
        model = Model(vpmu=False, kprobes=False)
        rc, out, saved = verdict_run(model, "--quick", enable_pmu="N")
        self.assertEqual(rc, pv.EXIT_NO_VERDICT, out)
        self.assertEqual([n for n, _ in model.boots],
                         ["probe-check", "lvtpc-nmi"])
        self.assertIn("verdict: none: no vPMU: guest: no architectural PMU "
                      "(CPUID.0AH:EAX[7:0]=0); host: kvm.enable_pmu=N", out)

    def test_a_host_kernel_without_a_vpmu_in_l1_is_125(self):
        # The fake host's kinds: no KVM at all, and a KVM (kvm_pvm) that
        # cannot boot a stock kernel: L1 would run under TCG, with no
        # vPMU, before anything is built or fetched.
        for kind in ("no-kvm", "kvm-works"):
            with self.subTest(kind=kind), \
                    tempfile.TemporaryDirectory() as tmp:
                results = Path(tmp) / "results"
                proc = subprocess.run(
                    tool_argv(KIND[kind], tmp, "tools/pmi-verdict",
                              "--quick", "--expect", "late",
                              "--host-kernel", "6.1", "--results", results),
                    cwd=ROOT, capture_output=True, text=True, timeout=60)
                self.assertEqual(proc.returncode, 125,
                                 proc.stdout + proc.stderr)
                self.assertIn("pmi-verdict: no verdict (125, git bisect's "
                              "skip): no vPMU in L1", proc.stderr)
                self.assertIn("TCG", proc.stderr)
                self.assertNotIn("Traceback", proc.stderr)
                self.assertFalse(results.exists(), "no folder made")

    def test_cannot_run_is_125(self):
        err = io.StringIO()
        with mock.patch.object(pv.kvm, "works",
                               lambda *a: (False, "no /dev/kvm")), \
                mock.patch.object(pv.hostprobe, "geteuid", lambda: 0), \
                contextlib.redirect_stderr(err):
            rc = pv.main(["--no-build", "--quick", "--expect", "on-time"])
        self.assertEqual(rc, pv.EXIT_SKIP)
        self.assertIn("needs KVM: no /dev/kvm", err.getvalue())

    def test_own_build_with_its_modules(self):
        # git bisect run's form: a bzImage and its modules, judged in L1;
        # a kernel that cannot be booted is a skip, not a bad commit.
        asked = []

        def resolve(spec, modules=None):
            asked.append((spec, modules))
            raise pv.hostkernel.HostKernelError(f"{spec}: no such file")
        err = io.StringIO()
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.object(pv.kvm, "flavour_works",
                                  lambda *a: ("kvm_intel", True)), \
                mock.patch.object(pv.kvm, "flavour",
                                  lambda: {"enable_pmu": True}), \
                mock.patch.object(pv.hostinfo, "qemu_version",
                                  lambda: "10.0.2"), \
                mock.patch.object(pv.hostkernel, "resolve", resolve), \
                contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(err):
            rc = pv.main(["--no-build", "--quick", "--expect", "on-time",
                          "--results", tmp, "--host-kernel",
                          "arch/x86/boot/bzImage", "--host-modules",
                          "/tmp/mods"])
        self.assertEqual(asked, [("arch/x86/boot/bzImage", "/tmp/mods")])
        self.assertEqual(rc, pv.EXIT_SKIP)
        self.assertIn("no verdict (125, git bisect's skip): "
                      "arch/x86/boot/bzImage: no such file", err.getvalue())
        with contextlib.redirect_stderr(io.StringIO()) as err, \
                self.assertRaises(SystemExit) as cm:
            pv.parse_args(["--host-modules", "/tmp/mods"])
        self.assertEqual(cm.exception.code, 2)
        self.assertIn("--host-modules goes with --host-kernel",
                      err.getvalue())

    def test_the_readme_recipe_parses(self):
        # README's git bisect run recipe, as pmi-verdict takes it.
        text = (ROOT / "README.md").read_text().replace("\\\n", " ")
        line = re.search(r"exec \S*tools/pmi-verdict ([^'\n]*)", text)
        self.assertIsNotNone(line, "README has the recipe")
        args = pv.parse_args(line.group(1).split())
        self.assertEqual((args.quick, args.expect, args.host_kernel,
                          args.host_modules),
                         (True, "on-time", ["arch/x86/boot/bzImage"],
                          "/tmp/mods"))

    def test_expect_with_several_kernels_is_a_usage_error(self):
        with contextlib.redirect_stderr(io.StringIO()) as err, \
                self.assertRaises(SystemExit) as cm:
            pv.parse_args(["--expect", "late", "--host-kernel", "6.1",
                           "--host-kernel", "6.12"])
        self.assertEqual(cm.exception.code, 2)
        self.assertIn("--expect judges one host kernel", err.getvalue())


class FullDisk(unittest.TestCase):
    def test_verdict_json_whole_or_not_at_all(self):
        with mock.patch("json.dump", full_disk), \
                tempfile.TemporaryDirectory() as tmp:
            out = io.StringIO()
            with mock.patch.object(pv.Verdict, "run",
                                   lambda self, *a, **k:
                                   Model().run(self, *a, **k)), \
                    mock.patch.object(pv.hostprobe, "host_facts",
                                      lambda: {"kernel": "6.6.0"}), \
                    contextlib.redirect_stdout(out):
                args = pv.parse_args(["--no-build", "--results", tmp,
                                      "--no-sweep"])
                rc = pv.Verdict(args, Path(tmp)).main()
            self.assertEqual(rc, pv.EXIT_FAILED, out.getvalue())
            self.assertIn("FAIL cannot write", out.getvalue())
            self.assertIn("verdict.json: No space left on device",
                          out.getvalue())
            self.assertEqual(os.listdir(tmp), [], "no partial verdict.json, "
                             "no temporary file")


class SideBySide(unittest.TestCase):
    """Several host kernels' outcomes in columns, for --host-kernel."""

    def kernels(self):
        _, _, late = verdict_run(Model(late=0.97), "--no-sweep")
        _, _, fixed = verdict_run(Model(late=0.0), "--no-sweep")
        _, _, no_pmu = verdict_run(Model(vpmu=False), enable_pmu="N")
        return [pv.kernel_summary("6.1", json.loads(late)),
                pv.kernel_summary("6.12", json.loads(fixed)),
                pv.kernel_summary("6.12-tcg", json.loads(no_pmu)),
                pv.kernel_summary("mine", error="L1 did not boot: no "
                                  "bzImage at /nonexistent")]

    def test_columns(self):
        kernels = self.kernels()
        lines = pv.side_by_side(kernels)
        self.assertRegex(lines[0], r"^host kernel +6\.1 +6\.12 +6\.12-tcg "
                                   r"+mine$")
        rows = {cells[0]: cells[1:] for cells in
                (re.split(r"\s{2,}", line) for line in lines[1:12])}
        self.assertEqual(rows["probe check"],
                         ["PASS 20000/20000"] * 3 + ["-"])
        self.assertEqual(rows["cancels/PMI, LVTPC=nmi"],
                         ["0.970", "0.000", "-", "-"])
        self.assertEqual(rows["caused/PMI, LVTPC=nmi"],
                         ["0.970", "0.000", "-", "-"])
        self.assertEqual(rows["PMIs (guest), nmi/fixed"],
                         ["15000/15000", "15000/15000", "-/-", "-"])
        self.assertEqual(rows["result"], ["late", "on time", "no verdict",
                                          "could not run"])
        self.assertEqual(rows["release"], ["6.6.0", "6.6.0", "6.6.0", "-"])
        text = "\n".join(lines)
        self.assertIn("6.1: verdict: 0.97 cancels per PMI with LVTPC=NMI",
                      text)
        self.assertIn("6.12: verdict: 0.00 cancels per PMI", text)
        self.assertIn("6.12-tcg: verdict: none: no vPMU", text)
        self.assertIn("6.12-tcg:   SKIP calibration: no vPMU: guest: no "
                      "architectural PMU", text)
        self.assertIn("mine: could not run: L1 did not boot: no bzImage at "
                      "/nonexistent", text)

    def test_combined_exit(self):
        late, fixed, no_pmu, broken = self.kernels()
        self.assertEqual(pv.combined_exit([late, fixed]), pv.EXIT_VERDICT)
        self.assertEqual(pv.combined_exit([late, no_pmu]),
                         pv.EXIT_NO_VERDICT)
        self.assertEqual(pv.combined_exit([late, broken]),
                         pv.EXIT_NO_VERDICT)
        self.assertEqual(pv.combined_exit([broken]), pv.EXIT_CANNOT)
        self.assertEqual(pv.combined_exit([late, {**fixed, "exit": 1}]),
                         pv.EXIT_FAILED)


class Signals(unittest.TestCase):
    """SIGTERM (and SIGHUP) to pmi-verdict as Ctrl-C: on the fake host
    with the fake QEMU and perf, run as a command in a process of its
    own, signalled while its first guest runs under the probe."""

    CODE = textwrap.dedent("""
        import sys
        from tools import entry
        from tools.commands import pmi_verdict as p
        from tools.lib.probe import probedrun
        from tools.tests.fakehost import FakeHost, guest_patches
        # The fake QEMU answers no QMP after "cont": to its SIGTERM soon.
        probedrun.KILL_WAIT_S = 1
        host = FakeHost.existing(sys.argv[1])
        with guest_patches(host):
            sys.exit(entry.call(p, "tools/pmi-verdict", [
                "--no-build", "--no-sweep", "--timeout", "60",
                "--results", sys.argv[2]]))
        """)

    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.dir = Path(tmp.name)
        self.host = make_guest_host(self.dir / "host", kprobes=True)

    def start(self, results, **env):
        tmp = self.dir / "tmp"
        tmp.mkdir(exist_ok=True)
        env = {**os.environ, **self.host.env, "TMPDIR": str(tmp),
               "FAKE_QEMU_OUT": str(self.host.dir / "serial.txt"), **env}
        return subprocess.Popen(
            [sys.executable, "-c", self.CODE, str(self.host.dir),
             str(results)], cwd=ROOT, env=env, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE), tmp

    def test_sigterm_leaves_nothing_behind(self):
        for sig in (signal.SIGTERM, signal.SIGHUP):
            with self.subTest(sig=sig.name):
                self.signalled(sig)

    @staticmethod
    def stop(proc):
        if proc.poll() is None:
            proc.kill()
            proc.communicate()

    def signalled(self, sig):
        pids = self.dir / f"pids-{sig.name}"
        events = self.host.tracefs / "kprobe_events"
        results = self.dir / f"results-{sig.name}"
        proc, tmp = self.start(results, FAKE_QEMU_HOLD="1",
                               FAKE_PIDS=str(pids))
        self.addCleanup(self.stop, proc)
        deadline = time.monotonic() + 60
        # The guest resumed (its serial log written) under the probe.
        while not ("hvprobe/cancel" in events.read_text() and any(
                "nmi_storm" in p.read_text() for p in
                results.glob("*/probe-check/serial.log"))):
            self.assertIsNone(proc.poll(), proc.stderr.read() if
                              proc.poll() is not None else "")
            self.assertLess(time.monotonic(), deadline, "never got there")
            time.sleep(0.05)
        qemu = [int(p) for p in pids.read_text().split()]
        self.assertTrue(alive(qemu), "QEMU and perf run")
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 130, out + err)
        self.assertIn("pmi-verdict: interrupted", err)
        self.assertEqual(events.read_text(), "", "no kprobe events left")
        self.assertEqual(alive(int(p) for p in pids.read_text().split()),
                         [], "no QEMU, no perf left running")
        self.assertEqual(os.listdir(tmp), [], "no temporary folder left")
        saved = json.loads(next(results.glob("*/verdict.json")).read_text())
        self.assertEqual(saved["interrupted"], sig.name)
        self.assertEqual([r["name"] for r in saved["runs"]], [],
                         "the probe check was cut short")
        # The next run starts: its probe opens where this one was.
        folder = self.dir / f"again-{sig.name}"
        folder.mkdir()
        with self.host.patched(), hostprobe.Probe(folder) as probe:
            self.assertEqual(probe.mode, "kprobe")
            self.assertIn("hvprobe/cancel", events.read_text())
        self.assertEqual(events.read_text(), "")


class Refusals(unittest.TestCase):
    def test_usage(self):
        for argv in (["--smp", "1"], ["--seconds", "0"], ["--period", "5"],
                     ["--rate", "0"], ["--name", "a b"], ["--bogus"],
                     ["--timeout", "inf"], ["--timeout", "nan"],
                     ["--timeout", "-1"], ["--timeout", "soon"],
                     ["--expect", "early"]):
            with self.subTest(argv=argv), \
                    contextlib.redirect_stderr(io.StringIO()), \
                    self.assertRaises(SystemExit) as cm:
                pv.parse_args(argv)
            self.assertEqual(cm.exception.code, 2)

    def test_a_duration_says_what_it_takes(self):
        for text in ("inf", "nan", "-inf", "0"):
            with self.subTest(text=text), \
                    contextlib.redirect_stderr(io.StringIO()) as err, \
                    self.assertRaises(SystemExit):
                pv.parse_args([f"--timeout={text}"])
            self.assertIn("--timeout: must be a number of seconds, 0 < S <",
                          err.getvalue())
            self.assertNotIn("Traceback", err.getvalue())

    def test_cannot_run(self):
        with mock.patch.object(pv.kvm, "works",
                               lambda *a: (False, "no /dev/kvm")), \
                mock.patch.object(pv.hostprobe, "geteuid", lambda: 0), \
                self.assertRaisesRegex(pv.CannotRun, "needs KVM"):
            pv.main(["--no-build"])
        with mock.patch.object(pv.kvm, "works", lambda *a: (True, "")), \
                mock.patch.object(pv.hostprobe, "geteuid", lambda: 1000), \
                self.assertRaisesRegex(pv.CannotRun, "needs root"):
            pv.main(["--no-build"])
        self.assertEqual(pv.EXITS[pv.CannotRun], 3)


if __name__ == "__main__":
    unittest.main()
