# SPDX-License-Identifier: MIT
"""A probed guest run end to end, without KVM: a fake QEMU (a real
process whose threads are named "CPU n/KVM", paused until QMP says
cont) and the fake perf, so that the pause, the attach, the resume, the
counting and the clean-up all happen as on a host."""

import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import unittest
from pathlib import Path
from unittest import mock

from tools.lib.launch import qemu
from tools.lib.probe import hostprobe, probedrun
from tools.tests.fakehost import alive, guest_host


class QMP(unittest.TestCase):
    def serve(self, replies):
        tmp = tempfile.TemporaryDirectory(prefix="qmp.")
        self.addCleanup(tmp.cleanup)
        path = Path(tmp.name) / "s"
        srv = socket.socket(socket.AF_UNIX)
        srv.bind(str(path))
        srv.listen(1)
        self.got = []

        def run():
            conn, _ = srv.accept()
            with conn, conn.makefile("rw") as f:
                f.write('{"QMP": {}}\n')
                f.flush()
                for reply in replies:
                    line = f.readline()
                    if not line:
                        break
                    self.got.append(json.loads(line)["execute"])
                    f.write(reply)
                    f.flush()
            srv.close()
        threading.Thread(target=run, daemon=True).start()
        return path

    def test_cont(self):
        path = self.serve(['{"return": {}}\n',
                           '{"event": "RESUME"}\n{"return": {}}\n'])
        self.assertEqual(probedrun.qmp(path, "cont"), [{}])
        self.assertEqual(self.got, ["qmp_capabilities", "cont"])

    def test_errors(self):
        path = self.serve(['{"return": {}}\n',
                           '{"error": {"desc": "no"}}\n'])
        with self.assertRaisesRegex(probedrun.QMPError, "QMP: no"):
            probedrun.qmp(path, "cont")
        with self.assertRaisesRegex(probedrun.QMPError, "cannot reach"):
            probedrun.qmp("/nonexistent/qmp", "cont", wait_s=0.1)

    def test_paused_machine(self):
        m = qemu.Machine(extra=["-device", "x"])
        p = probedrun.paused(m, "/t/q.sock")
        self.assertEqual(p.extra, ["-device", "x", "-S", "-qmp",
                                   "unix:/t/q.sock,server=on,wait=off"])
        self.assertEqual(m.extra, ["-device", "x"], "the original is kept")

    def test_guest_data(self):
        doc = {"tests": [{"name": "pmi_stress", "status": "pass", "data": [
            {"test": "pmi_stress", "pmis": 5},
            {"test": "pmi_stress", "record": "counter"}]}]}
        self.assertEqual(probedrun.guest_data(doc, "pmi_stress"),
                         {"test": "pmi_stress", "pmis": 5})
        self.assertIsNone(probedrun.guest_data(doc, "nmi_storm"))
        self.assertEqual(probedrun.guest_test(doc, "pmi_stress")["status"],
                         "pass")


class ProbedRun(unittest.TestCase):
    def setUp(self):
        self.host, self.dir = guest_host(self)

    def test_run_attach_resume_count(self):
        run_dir = self.dir / "run"
        run_dir.mkdir()
        m = qemu.Machine(smp=2, accel="kvm", cpu=qemu.KVM_CPU)
        with hostprobe.Probe(run_dir, kprobes="off") as probe:
            outcome, r = probedrun.probed_run(m, ["test=nmi_storm"], run_dir,
                                              30, probe)
        self.assertEqual(outcome.doc["verdict"], "pass", outcome.lines)
        self.assertIn("-S", outcome.doc["qemu"])
        self.assertIn("hvprobe,debug-threads=on", outcome.doc["qemu"])
        self.assertEqual(sorted(r.vcpus.values()), [0, 1])
        w = r.window("nmi_storm")
        self.assertTrue(w.complete)
        self.assertEqual(w.total("nmi_ipi"), 10)
        self.assertEqual(r.leftovers, [])
        record = next(c for c in self.host.calls() if c.startswith("record"))
        self.assertIn("-t " + ",".join(str(t) for t in sorted(r.vcpus)),
                      record)

    def test_probe_that_cannot_attach_ends_qemu(self):
        run_dir = self.dir / "run"
        run_dir.mkdir()
        m = qemu.Machine(smp=2, accel="kvm", cpu=qemu.KVM_CPU)
        with mock.patch.object(hostprobe, "PERF_WAIT_S", 1), \
                mock.patch.dict(os.environ, {"FAKE_NO_ACK": "1"}):
            with hostprobe.Probe(run_dir, kprobes="off") as probe:
                with self.assertRaisesRegex(hostprobe.CannotProbe,
                                            "did not acknowledge"):
                    probedrun.probed_run(m, ["test=nmi_storm"], run_dir, 30,
                                         probe)
        doc = json.loads((run_dir / "results.json").read_text())
        self.assertEqual(doc["exit_status"], 0, "QEMU quit through QMP")


if __name__ == "__main__":
    unittest.main()


class EndQemu(unittest.TestCase):
    """end_qemu() returns once QEMU has ended: one that is on its way out
    (its command line already gone, so no longer recognisably ours) is
    waited for, not left behind by a tool that exits next."""

    def test_an_exiting_qemu_is_waited_for(self):
        qemu = subprocess.Popen([sys.executable, "-c",
                                 "import time; time.sleep(1)"])
        self.addCleanup(qemu.kill)
        guest = threading.Thread(target=qemu.wait, daemon=True)
        guest.start()
        with mock.patch.object(probedrun, "KILL_WAIT_S", 0.1), \
                mock.patch.object(probedrun, "ours", return_value=False):
            probedrun.end_qemu("/nonexistent/qmp.sock", qemu.pid, guest)
        self.assertEqual(alive([qemu.pid]), [])
