# SPDX-License-Identifier: MIT
"""make check's host-probe row: judged on a probed run of the fake QEMU
and the fake perf (tools/tests/fakehost.guest_host), a SKIP for
each missing piece, and a failed case for each count that does not add
up."""

import contextlib
import io
import json
import os
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from tools.lib.launch import guest, kvm
from tools.lib.probe import hostprobe, probecheck, probecount
from tools.tests.fakehost import guest_host
from tools.tests.test_jsonfile import full_disk_for


class Row(unittest.TestCase):
    def setUp(self):
        self.host, self.dir = guest_host(self)

    def test_row_on_a_fake_host(self):
        counts, verdict, text = probecheck.row(self.dir)
        self.assertEqual(verdict, "pass", text)
        # VM-entries never fired in the fake recording: that case SKIPs.
        self.assertEqual((counts.passed, counts.failed, counts.skipped),
                         (8, 0, 1), text)
        self.assertIn("SKIP VM-entries per vCPU thread # SKIP kvm:kvm_entry "
                      "never fired", text)
        self.assertIn("PASS NMI IPIs: guest sent 10, host counted 10 "
                      "(kvm:kvm_apic_ipi) over the window: differ by 0, at "
                      "most 4 may", text)
        saved = json.loads((self.dir / "host-probe" / "host-probe.json")
                           .read_text())
        self.assertEqual(saved["mode"], "tracepoint")
        self.assertIsNone(saved["nmi_cancels"], "no kprobes here")


class KprobeRow(unittest.TestCase):
    """The row where the kernel has kprobe events, as in an L1 running a
    distribution kernel."""

    def setUp(self):
        self.host, self.dir = guest_host(self, kprobes=True)

    def test_nmi_caused_cancels_per_vcpu(self):
        counts, verdict, text = probecheck.row(self.dir)
        self.assertEqual(verdict, "pass", text)
        self.assertIn("PASS NMIs: guest sent 10, host counted 10 (kprobe on "
                      "kvm_inject_nmi) over the window", text)
        # vCPU 0 has the storm's one cancel with no injection before it.
        self.assertIn("PASS cancelled VM-entries per vCPU thread, and those "
                      "after an NMI injected into that vCPU with no VM-entry "
                      "between: CPU 0 2 of 3, CPU 1 2 of 2", text)
        saved = json.loads((self.dir / "host-probe" / "host-probe.json")
                           .read_text())
        self.assertEqual(saved["mode"], "kprobe")
        nmi = saved["nmi_cancels"]
        self.assertEqual((nmi["cancels"], nmi["after_nmi"],
                          nmi["nmi_injections"], nmi["complete"]),
                         (5, 4, 10, True))
        self.assertEqual([(r["vcpu"], r["after_nmi"], r["nmi_injections"],
                           r["entries"]) for r in nmi["vcpus"]],
                         [(0, 2, 5, 5), (1, 2, 5, 5)])
        self.assertEqual((self.host.tracefs / "kprobe_events").read_text(),
                         "", "the probes removed")

    def test_a_full_disk_is_a_failed_case_not_a_traceback(self):
        with mock.patch("json.dump", full_disk_for("windows")):
            counts, verdict, text = probecheck.row(self.dir)
        self.assertEqual(verdict, "fail", text)
        self.assertIn("FAIL cannot write host-probe.json: No space left on "
                      "device", text)
        self.assertEqual(sorted(p.name for p in
                                (self.dir / "host-probe").glob("*.json*")),
                         ["results.json"], "no partial host-probe.json")

    def test_alone_as_a_module(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = probecheck.main([str(self.dir / "logs")])
        self.assertEqual(rc, 0, out.getvalue())
        self.assertIn("CPU 0 2 of 3, CPU 1 2 of 2", out.getvalue())
        saved = json.loads((self.dir / "logs" / "host-probe" /
                            "host-probe.json").read_text())
        self.assertEqual(saved["nmi_cancels"]["after_nmi"], 4)
        with mock.patch.object(hostprobe, "geteuid", lambda: 1000), \
                contextlib.redirect_stdout(io.StringIO()) as skipped:
            self.assertEqual(probecheck.main([str(self.dir / "logs")]), 4)
        self.assertIn("SKIP needs root", skipped.getvalue())

    def test_tracepoint_mode_asked_for_counts_none(self):
        counts, verdict, text = probecheck.row(self.dir, kprobes="off")
        self.assertEqual(verdict, "pass", text)
        self.assertNotIn("after an NMI injected", text)


class RowSkips(unittest.TestCase):
    def test_each_missing_piece_is_a_skip(self):
        with tempfile.TemporaryDirectory() as tmp, \
                tempfile.TemporaryDirectory() as guest_build:
            Path(guest_build, "hvprobe.elf32").write_bytes(b"")
            for patch, why in (
                    ((kvm, "works", lambda *a: (False, "no device")),
                     "needs KVM: no device"),
                    ((hostprobe, "geteuid", lambda: 1000), "needs root"),
                    ((probecheck.shutil, "which", lambda *a: None),
                     "needs perf")):
                with mock.patch.object(kvm, "works", lambda *a: (True, "")), \
                        mock.patch.object(probecheck.guest, "BUILD", Path(guest_build)), \
                        mock.patch.object(hostprobe, "geteuid", lambda: 0), \
                        mock.patch.object(*patch):
                    counts, verdict, text = probecheck.row(Path(tmp))
                self.assertEqual((counts.skipped, counts.failed, verdict),
                                 (1, 0, "skip"), why)
                self.assertIn(why, text)
            self.assertEqual(os.listdir(tmp), [], "nothing ran")

    def test_judged_cases_fail_on_a_mismatch(self):
        doc = {"verdict": "pass", "tests": [{
            "name": "nmi_storm", "status": "pass", "reason": None,
            "data": [{"test": "nmi_storm", "sent": 20, "seconds": 1}]}]}
        w = probecount.Window(begin=1.0, end=2.0)
        w.counts = {1: {"nmi_ipi": 10, "accept_nmi": 11, "entry": 5},
                    2: {"nmi_ipi": 0, "accept_nmi": 8, "entry": 3}}
        r = probecount.Result(
            mode="tracepoint", notes=[], recorded=["kvm:kvm_entry"],
            vcpus={1: 0, 2: 1}, vcpu_method="thread names (CPU n/KVM)",
            windows=[w], fired={"kvm:kvm_entry": 8}, discovery_tids=[1],
            lost=2, events=0, perf_ok=True, throttle_messages=[],
            sample_rate_after=None, leftovers=["mounts: a -> b"])
        w.name = "nmi_storm"
        cases = dict((line.split(":")[0].split(" (")[0], status)
                     for status, line in probecheck.judge(
                         guest.Outcome(doc, [], True), r))
        self.assertEqual(cases["VM-entries per vCPU thread over the window"],
                         "pass")
        self.assertEqual(cases["host events per vCPU thread over the "
                               "window"], "fail", "CPU 1 sent none")
        self.assertEqual(cases["NMI IPIs"], "fail", "10 of 20")
        self.assertEqual(cases["NMIs"], "pass", "19 of 20: an edge's")
        self.assertEqual(cases["perf ended cleanly and lost nothing"],
                         "fail")
        self.assertEqual(cases["no tracing state left behind; mounts"],
                         "fail")


if __name__ == "__main__":
    unittest.main()
