# SPDX-License-Identifier: MIT
"""QMP and what a stalled guest's vCPUs were doing: the registers QEMU
prints, each vCPU's host thread, and a QEMU that cannot stop a vCPU
(one stuck in KVM_RUN), over a fake QMP server and a fake /proc."""

import json
import socket
import tempfile
import threading
import unittest
from pathlib import Path

from tools.lib import referee
from tools.lib.launch import qmp

# As QEMU 10's "info registers -a" prints them (target/i386
# x86_cpu_dump_state()), cut to the lines read.
REGISTERS = """
CPU#0
RAX=0000000000000000 RBX=0000000000000000 RCX=0000000000000001
RIP=ffffffff9c67e744 RFL=00000246 [---Z-P-] CPL=0 II=0 A20=1 SMM=0 HLT=1
ES =0000 0000000000000000 ffffffff 00c00000

CPU#1
RAX=0000000000000000 RBX=0000000000000000 RCX=0000000000000001
RIP=ffffffff9c601f2e RFL=00000002 [-------] CPL=0 II=0 A20=1 SMM=0 HLT=0
"""


class Server:
    """A QMP server on a unix socket that answers each connection's
    commands from replies[command] (a JSON line, or None: never answer),
    and notes what it was asked."""

    def __init__(self, test, replies):
        tmp = tempfile.TemporaryDirectory(prefix="qmp.")
        test.addCleanup(tmp.cleanup)
        self.path = Path(tmp.name) / "s"
        self.asked = []
        srv = socket.socket(socket.AF_UNIX)
        srv.bind(str(self.path))
        srv.listen(4)
        test.addCleanup(srv.close)
        stop = threading.Event()
        test.addCleanup(stop.set)

        def conn(c):
            with c, c.makefile("rw") as f:
                f.write('{"QMP": {}}\n')
                f.flush()
                for line in f:
                    request = json.loads(line)
                    self.asked.append(request)
                    answer = replies.get(request["execute"], '{"return": {}}')
                    if answer is None:
                        stop.wait(30)
                        return
                    f.write(answer + "\n")
                    f.flush()

        def serve():
            while True:
                try:
                    c, _ = srv.accept()
                except OSError:
                    return
                threading.Thread(target=conn, args=(c,), daemon=True).start()
        threading.Thread(target=serve, daemon=True).start()


def fake_proc(folder, pid, threads):
    """A /proc with pid's tasks: {tid: (state, wchan)}."""
    for tid, (state, wchan) in threads.items():
        task = Path(folder) / str(pid) / "task" / str(tid)
        task.mkdir(parents=True)
        (task / "stat").write_text(f"{tid} (CPU 0/KVM) {state} 1 2 3\n")
        (task / "wchan").write_text(wchan)
    return Path(folder)


CPUS = json.dumps({"return": [{"cpu-index": 0, "thread-id": 11},
                              {"cpu-index": 1, "thread-id": 12}]})


class Registers(unittest.TestCase):
    def test_rip_and_halt_per_vcpu(self):
        self.assertEqual(qmp.registers(REGISTERS),
                         {0: ("ffffffff9c67e744", True),
                          1: ("ffffffff9c601f2e", False)})

    def test_outside_long_mode(self):
        # As QEMU printed a vCPU at reset, lines ending in \r\n.
        self.assertEqual(qmp.registers(
            "\r\nCPU#0\r\nEAX=00000000 EBX=00000000\r\nEIP=0000fff0 "
            "EFL=00000002 [-------] CPL=0 II=0 A20=1 SMM=0 HLT=0\r\n"),
            {0: ("0000fff0", False)})

    def test_nothing_readable(self):
        self.assertEqual(qmp.registers("unknown command\n"), {})


class Vcpus(unittest.TestCase):
    def setUp(self):
        self.proc = fake_proc(self.enterContext(tempfile.TemporaryDirectory()),
                              77, {11: ("S", "kvm_vcpu_block"),
                                   12: ("R", "0")})

    def test_each_vcpu_from_qemu_and_the_host(self):
        server = Server(self, {
            "query-cpus-fast": CPUS,
            "human-monitor-command": json.dumps({"return": REGISTERS})})
        self.assertEqual(qmp.vcpus(server.path, 77, self.proc), [
            "vCPU 0: thread 11 S in kvm_vcpu_block; RIP ffffffff9c67e744, "
            "halted",
            "vCPU 1: thread 12 R; RIP ffffffff9c601f2e, running"])
        hmp = [r for r in server.asked
               if r["execute"] == "human-monitor-command"]
        self.assertEqual(hmp[0]["arguments"],
                         {"command-line": "info registers -a"})

    def test_a_vcpu_qemu_cannot_stop(self):
        server = Server(self, {"query-cpus-fast": CPUS,
                               "human-monitor-command": None})
        lines = qmp.vcpus(server.path, 77, self.proc)
        self.assertEqual(len(lines), 2)
        self.assertTrue(lines[1].startswith("vCPU 1: thread 12 R; registers "
                                            "not read in 5 s, a vCPU that "
                                            "never leaves KVM_RUN"), lines)

    def test_no_qemu(self):
        self.assertEqual(len(qmp.vcpus(Path("/nonexistent/s"), 77, self.proc)),
                         1)


class StalledBoot(unittest.TestCase):
    def test_the_referee_boot_leaves_what_its_vcpus_did(self):
        run_dir = Path(self.enterContext(tempfile.TemporaryDirectory()))
        server = Server(self, {
            "query-cpus-fast": CPUS,
            "human-monitor-command": json.dumps({"return": REGISTERS})})
        boot = referee.Boot(run_dir, server.path)
        boot.pid = 77
        real = qmp.PROC
        qmp.PROC = fake_proc(run_dir / "proc", 77, {11: ("S", "x"),
                                                    12: ("R", "0")})
        self.addCleanup(setattr, qmp, "PROC", real)
        boot.expired()
        self.assertTrue(boot.timed_out)
        self.assertEqual(referee.stall(run_dir), [
            "vCPU 0: thread 11 S in x; RIP ffffffff9c67e744, halted",
            "vCPU 1: thread 12 R; RIP ffffffff9c601f2e, running"])


if __name__ == "__main__":
    unittest.main()
