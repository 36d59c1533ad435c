# SPDX-License-Identifier: MIT
"""tools/host-cancel-probe against the fake host (tools/tests/fakehost.py):
it finds QEMU and its vCPU threads, records until the duration ends or
the guest's serial log says its window ended, prints each window per
vCPU beside the guest's DATA, and removes its probes, Ctrl-C included."""

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import unittest
from pathlib import Path

from tools import ROOT
from tools.commands import host_cancel_probe as hcp
from tools.lib.probe import hostprobe
from tools.tests.fakehost import (QEMU_PID, STORM_KTAP, VCPU_TIDS, FakeHost,
                                  alive, storm_script)

EV = "hvprobe:cancel"
PMI_DATA = {"test": "pmi_stress", "lvtpc": "nmi", "cpus": 2, "pmis": 3000,
            "pmis_per_s_per_cpu": 1, "nmi_ipi_rate": 0}


class Base(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.dir = Path(tmp.name)
        self.host = FakeHost(tmp.name)
        self.host.script.write_text(storm_script())

    def main(self, *argv, **env):
        out, err = io.StringIO(), io.StringIO()
        with self.host.patched(**env), contextlib.redirect_stdout(out), \
                contextlib.redirect_stderr(err):
            rc = hcp.main(list(argv))
        return rc, out.getvalue(), err.getvalue()


class Pieces(Base):
    def test_qemu_processes(self):
        with self.host.patched():
            self.assertEqual(hcp.qemu_processes(), {QEMU_PID: 2})

    def test_guest_documents(self):
        log = self.dir / "serial.log"
        log.write_text(STORM_KTAP)
        text, data = hcp.guest_doc(log)
        self.assertEqual(text, STORM_KTAP)
        self.assertEqual(hcp.main_data(data, "nmi_storm")["sent"], 10)
        self.assertEqual(hcp.ends(text), 1)
        doc = self.dir / "results.json"
        doc.write_text(json.dumps({"tests": [{"name": "pmi_stress", "data": [
            PMI_DATA, {"test": "pmi_stress", "record": "counter"}]}]}))
        text, data = hcp.guest_doc(doc)
        self.assertIsNone(text)
        self.assertEqual(hcp.main_data(data, "pmi_stress"), PMI_DATA)

    def test_usage(self):
        for argv in (["-d", "0"], ["-p", "999999"],
                     ["--guest", "/nonexistent"], ["--kprobes", "maybe"]):
            with self.subTest(argv=argv), self.host.patched(), \
                    contextlib.redirect_stderr(io.StringIO()), \
                    self.assertRaises(SystemExit) as cm:
                hcp.parse_args(argv)
            self.assertEqual(cm.exception.code, 2)


class Runs(Base):
    def test_counts_per_vcpu_and_removes_its_probes(self):
        log = self.dir / "serial.log"
        log.write_text(STORM_KTAP)
        out_dir = self.dir / "keep"
        rc, out, err = self.main("-p", str(QEMU_PID), "-d", "0.3",
                                 "--out", str(out_dir))
        self.assertEqual(rc, 0, out + err)
        self.assertIn(f"probing process {QEMU_PID}: kprobe mode (cancels: "
                      "kprobe on vmx_cancel_injection)", out)
        self.assertIn("vCPU threads: 2, by thread names (CPU n/KVM)", out)
        self.assertIn("window ?: 1.000 s between the guest's marks", out)
        self.assertRegex(out, rf"CPU 0 +{VCPU_TIDS[0]} .* 1\.0 ")
        record = next(c for c in self.host.calls() if c.startswith("record"))
        self.assertIn(f"-e {EV}", record, "the kprobe was placed")
        self.assertEqual((self.host.tracefs / "kprobe_events").read_text(),
                         "", "and removed")
        self.assertTrue((out_dir / "perf.data").exists())
        saved = json.loads((out_dir / "host-probe.json").read_text())
        self.assertEqual(saved["pid"], QEMU_PID)
        self.assertEqual(saved["probe"]["mode"], "kprobe")

    def test_guest_log_names_windows_and_ends_the_recording(self):
        log = self.dir / "serial.log"
        log.write_text(STORM_KTAP.split("    # host mark 0xb1")[0])

        def window_ends():
            time.sleep(0.5)
            log.write_text(STORM_KTAP)
        threading.Thread(target=window_ends).start()
        start = time.monotonic()
        rc, out, err = self.main("-d", "30", "--guest", str(log))
        self.assertLess(time.monotonic() - start, 15,
                        "stopped at the end mark, not after 30 s")
        self.assertEqual(rc, 0, out + err)
        self.assertIn("window nmi_storm: 1.000 s", out)
        self.assertIn("guest nmi_storm: sent 10 NMI IPIs; host counted 10",
                      out)

    def test_cancels_per_pmi_beside_the_guest(self):
        doc = self.dir / "results.json"
        doc.write_text(json.dumps({"tests": [{"name": "pmi_stress",
                                              "data": [PMI_DATA]}]}))
        rc, out, _ = self.main("-p", str(QEMU_PID), "-d", "0.2",
                               "--guest", str(doc))
        self.assertEqual(rc, 0, out)
        self.assertIn("guest pmi_stress: LVTPC=nmi, 2 vCPUs, 3000 PMIs", out)
        # 1 cancel in 1 s on one of 2 vCPUs, 1 PMI/s per vCPU.
        self.assertIn("cancelled VM-entries per guest PMI: 0.500", out)

    def test_cancels_after_nmi_injections(self):
        self.host.script.write_text(storm_script(injections=True))
        rc, out, _ = self.main("-p", str(QEMU_PID), "-d", "0.2")
        self.assertEqual(rc, 0, out)
        # vCPU 0 also has the storm's one cancel with no injection.
        self.assertIn("cancelled VM-entries after an NMI injected into that "
                      "vCPU with no VM-entry between (after a PMI delivered "
                      "to it, too), per vCPU: CPU 0 2 (0) of 3, CPU 1 2 (0) "
                      "of 2", out)

    def test_tracepoint_mode_says_what_it_cannot_count(self):
        rc, out, _ = self.main("-p", str(QEMU_PID), "-d", "0.2",
                               "--kprobes", "off")
        self.assertEqual(rc, 0, out)
        self.assertIn("tracepoint mode", out)
        self.assertIn("note: cancelled VM-entries: not counted", out)
        self.assertFalse([c for c in self.host.calls()
                          if c.startswith("probe")])

    def test_which_qemu(self):
        self.host.add_process(88, "qemu-system-x86",
                              {88: "qemu-system-x86", 90: "CPU 0/KVM"})
        with self.assertRaisesRegex(hostprobe.CannotProbe,
                                    "pass -p: .*77 \\(2 vCPUs\\), 88 "
                                    "\\(1 vCPUs\\)"):
            self.main("-d", "0.1")
        self.assertEqual(self.host.calls(), [])

    def test_ctrl_c_removes_the_probes(self):
        # A process of its own: the fake perf sends SIGINT to its parent.
        code = textwrap.dedent(f"""
            import sys
            from pathlib import Path
            from tools.tests.fakehost import FakeHost
            from tools.commands import host_cancel_probe as p
            host = FakeHost.existing({str(self.dir)!r})
            with host.patched():
                sys.exit(p.main(["-d", "20", "-p", "{QEMU_PID}"]))
            """)
        env = {**os.environ, **self.host.env, "FAKE_SIGINT_PARENT": "1"}
        done = subprocess.run([sys.executable, "-c", code], cwd=ROOT,
                              capture_output=True, text=True, timeout=60,
                              env=env)
        self.assertEqual(done.returncode, 130, done.stdout + done.stderr)
        record = next(c for c in self.host.calls() if c.startswith("record"))
        self.assertIn(f"-e {EV}", record, "the kprobe was placed")
        self.assertEqual((self.host.tracefs / "kprobe_events").read_text(),
                         "", "and removed")
        self.assertIn("between the guest's marks", done.stdout,
                      "what was counted is still shown")


    def test_sighup_and_sigterm_clean_up_as_ctrl_c(self):
        events = self.host.tracefs / "kprobe_events"
        code = textwrap.dedent(f"""
            import sys
            from tools.tests.fakehost import FakeHost
            from tools.commands import host_cancel_probe as p
            host = FakeHost.existing({str(self.dir)!r})
            with host.patched():
                sys.exit(p.main(["-d", "60", "-p", "{QEMU_PID}"]))
            """)
        for sig in (signal.SIGHUP, signal.SIGTERM):
            with self.subTest(sig=sig.name):
                pids, tmp = self.dir / f"pids-{sig}", self.dir / f"tmp-{sig}"
                tmp.mkdir()
                env = {**os.environ, **self.host.env, "TMPDIR": str(tmp),
                       "FAKE_PIDS": str(pids)}
                proc = subprocess.Popen([sys.executable, "-c", code],
                                        cwd=ROOT, env=env, text=True,
                                        stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE)
                deadline = time.monotonic() + 30
                while not (f"-e {EV}" in "".join(self.host.calls()) and
                           "hvprobe/cancel" in events.read_text()):
                    self.assertLess(time.monotonic(), deadline,
                                    "the probe never started")
                    time.sleep(0.05)
                time.sleep(0.3)         # perf enabled, counting
                proc.send_signal(sig)
                out, err = proc.communicate(timeout=60)
                self.assertEqual(proc.returncode, 130, out + err)
                self.assertEqual(events.read_text(), "",
                                 "no kprobe events left")
                self.assertEqual(alive(int(p) for p in
                                       pids.read_text().split()), [],
                                 "no perf left running")
                self.assertEqual(os.listdir(tmp), [], "no temporary folder "
                                 "left")
                self.assertIn("between the guest's marks", out,
                              "what was counted is still shown")
                # And the next run starts.
                rc, out, err = self.main("-p", str(QEMU_PID), "-d", "0.2")
                self.assertEqual(rc, 0, out + err)
                self.host.log.unlink()


if __name__ == "__main__":
    unittest.main()
