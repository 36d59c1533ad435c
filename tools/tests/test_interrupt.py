# SPDX-License-Identifier: MIT
"""Interrupts and leftovers, over a stand-in QEMU that says it booted and
then hangs: Ctrl-C, SIGTERM and SIGHUP end a matrix and a soak with
status 130, the runs recorded as interrupted and the partial index
written; QEMU dies with its parent, even one killed outright. After
each, no stand-in QEMU is left running.

Each test runs once per kind of host (tools/tests/fakehost.py's
HOST_KINDS: KVM that works, none, one that fails its probe), and every
run is told to use TCG: none of them may boot a KVM probe, whatever the
host. The tests wait for what they need (a QEMU started, one gone) with
a bound only a hang reaches, never for a window a loaded machine can
miss."""

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path
from unittest import mock

from tools import ROOT, TOOLS, entry
from tools.commands import check, soak
from tools.lib.analysis import results
from tools.lib.launch import batch, serial
from tools.lib.launch import scenario as scen
from tools.tests.fakehost import tool_argv, under_each_host

# Says its version when asked; else notes its pid in $FAKE_QEMU_PIDS,
# prints the start of hvprobe's KTAP, and hangs.
FAKE_QEMU = r"""#!/usr/bin/env python3
import os, sys, time
if "--version" in sys.argv:
    print("QEMU emulator version 10.0.0")
    sys.exit(0)
with open(os.path.join(os.environ["FAKE_QEMU_PIDS"], str(os.getpid())),
          "w") as f:
    f.write(" ".join(sys.argv[1:]))
print("KTAP version 1", flush=True)
print("1..1", flush=True)
if os.environ.get("FAKE_QEMU_FAIL"):
    # A failing guest with much to say.
    for i in range(5000):
        print(f"# line {i} of a long diagnostic")
    print("not ok 1 boot")
    print("# Totals: pass:0 fail:1 skip:0 error:0", flush=True)
    sys.exit(3)
time.sleep(600)
"""
ELF32 = ROOT / "build" / "hvprobe.elf32"
# What only a hang reaches: a loaded 2-core machine starts a stand-in QEMU
# in well under a second, and ends a tool in a few.
HANG_S = 300


def alive(pid):
    """Whether pid runs (a zombie does not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class FakeQemu:
    """The stand-in QEMU first on PATH, under the host kind self.host
    (set by under_each_host)."""

    host = None
    # tools/run and tools/soak told TCG boot no probe; tools/check says
    # once what this machine's KVM is, with the probe's answer.
    probes_allowed = 0

    def setUp(self):
        self.dir = Path(self.enterContext(tempfile.TemporaryDirectory()))
        bin_dir = self.dir / "bin"
        bin_dir.mkdir()
        fake = bin_dir / "qemu-system-x86_64"
        fake.write_text(FAKE_QEMU)
        fake.chmod(0o755)
        self.pids = self.dir / "pids"
        self.pids.mkdir()
        self.env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}",
                        FAKE_QEMU_PIDS=str(self.pids), HVPROBE_ACCEL="tcg")
        self.addCleanup(self.kill_leftovers)
        self.addCleanup(self.no_probe)

    def no_probe(self):
        """Every run here was told to use TCG: nothing probed KVM."""
        self.assertLessEqual(self.host.probes(self.dir), self.probes_allowed,
                             "KVM probe boots")
        for p in self.pids.iterdir():
            self.assertNotIn("-accel kvm", p.read_text(), p.name)

    def started(self, n, within=HANG_S, given_up=None):
        """Wait for n stand-in QEMUs; False if given_up (an Event) is set
        first."""
        end = time.monotonic() + within
        while time.monotonic() < end:
            if len(list(self.pids.iterdir())) >= n:
                return True
            if given_up is not None and given_up.is_set():
                return False
            time.sleep(0.05)
        self.fail(f"{n} stand-in QEMUs did not start in {within} s")

    def leftovers(self, within=HANG_S):
        """The stand-in QEMUs still running once they all ended, or after
        within seconds."""
        end = time.monotonic() + within
        while True:
            left = [int(p.name) for p in self.pids.iterdir()
                    if alive(int(p.name))]
            if not left or time.monotonic() > end:
                return left
            time.sleep(0.05)

    def kill_leftovers(self):
        for p in self.pids.iterdir():
            try:
                os.kill(int(p.name), signal.SIGKILL)
            except OSError:
                pass

    def command(self, tool, *argv):
        return subprocess.Popen(tool_argv(self.host, self.dir, tool, *argv),
                                cwd=ROOT, env=self.env,
                                stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)


@under_each_host
@unittest.skipUnless(ELF32.exists(), "needs the build (make)")
class Matrix(FakeQemu):
    def matrix(self, signum):
        scenario = self.dir / "hang.toml"
        scenario.write_text('description = "hangs"\ncmdline = "test=boot"\n'
                            'timeout = 300\n')
        proc = self.command(TOOLS / "run", "--no-build", "--results",
                            self.dir / "results", "--name", "b",
                            "--scenario", scenario, "--repeat", "5", "-j",
                            "2")
        self.started(2)
        proc.send_signal(signum)
        out, _ = proc.communicate(timeout=HANG_S)
        self.assertEqual(proc.returncode, 130, out)
        self.assertEqual(self.leftovers(), [], out)
        self.assertEqual(len(list(self.pids.iterdir())), 2,
                         "no run starts after the interrupt")
        index = json.loads((self.dir / "results" / "b" / "index.json")
                           .read_text())
        self.assertTrue(index["interrupted"])
        self.assertEqual([r["verdict"] for r in index["runs"]],
                         ["interrupted"] * 5)
        # No interrupted run reads as a crash.
        self.assertFalse(list((self.dir / "results" / "b")
                              .glob("*/results.json")))
        return index

    def test_ctrl_c(self):
        self.matrix(signal.SIGINT)

    def test_sigterm(self):
        self.matrix(signal.SIGTERM)

    def test_sighup(self):
        self.matrix(signal.SIGHUP)


@under_each_host
@unittest.skipUnless(ELF32.exists(), "needs the build (make)")
class Soak(FakeQemu):
    def test_sigterm_keeps_soak_json(self):
        kernel = [i for i in range(200)
                  if soak.plan(5, i).boot == "kernel"][:4]
        argv = [TOOLS / "soak", "--no-build", "--seed", "5", "--accel",
                "tcg", "-j", "2", "--results", self.dir / "results"]
        for i in kernel:
            argv += ["--index", str(i)]
        proc = self.command(*argv)
        self.started(2)
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=HANG_S)
        self.assertEqual(proc.returncode, 130, out)
        self.assertEqual(self.leftovers(), [], out)
        doc = json.loads(next((self.dir / "results").glob(
            "soak-*/soak.json")).read_text())
        self.assertEqual(len(doc["runs"]), 4)
        self.assertTrue(all(r["interrupted"] and not r["failures"]
                            for r in doc["runs"]), doc)
        self.assertFalse(doc["complete"])


@under_each_host
@unittest.skipUnless(ELF32.exists(), "needs the build (make)")
class Groups(FakeQemu):
    def test_a_killed_tools_run_takes_qemu_with_it(self):
        proc = self.command(TOOLS / "run", "--no-build", "--quiet",
                            "--results", self.dir / "results", "--accel",
                            "tcg", "--timeout", "300")
        self.started(1)
        proc.kill()
        proc.communicate(timeout=HANG_S)
        self.assertEqual(self.leftovers(), [])


@under_each_host
@unittest.skipUnless(ELF32.exists(), "needs the build (make)")
class ReaderGone(FakeQemu):
    def test_run_into_head_still_judges_the_run(self):
        self.env["FAKE_QEMU_FAIL"] = "1"
        proc = self.command(TOOLS / "run", "--no-build", "--results",
                            self.dir / "results", "--name", "r", "--accel",
                            "tcg", "--timeout", "60")
        proc.stdout.readline()
        proc.stdout.close()         # head -1 has what it wanted
        proc.wait(timeout=HANG_S)
        self.assertEqual(proc.returncode, 1)
        doc = json.loads((self.dir / "results" / "r" / "results.json")
                         .read_text())
        self.assertEqual(doc["verdict"], "fail")


@under_each_host
@unittest.skipUnless(ELF32.exists(), "needs the build (make)")
class MatrixReaderGone(FakeQemu):
    def test_matrix_into_head_runs_every_run(self):
        self.env["FAKE_QEMU_FAIL"] = "1"
        scenario = self.dir / "fails.toml"
        scenario.write_text('description = "fails"\ncmdline = "test=boot"\n')
        proc = self.command(TOOLS / "run", "--no-build", "--results",
                            self.dir / "results", "--name", "b",
                            "--scenario", scenario, "--repeat", "4", "-j",
                            "2")
        proc.stdout.readline()
        proc.stdout.close()
        proc.wait(timeout=HANG_S)
        self.assertEqual(proc.returncode, 1)
        index = json.loads((self.dir / "results" / "b" / "index.json")
                           .read_text())
        self.assertTrue(index["complete"])
        self.assertEqual([r["verdict"] for r in index["runs"]],
                         ["fail"] * 4)


@under_each_host
@unittest.skipUnless(ELF32.exists(), "needs the build (make)")
class Check(FakeQemu):
    """tools/check over the stand-in QEMU, its rows cut down to one."""

    probes_allowed = 1

    def check(self, runs, *argv, kill_after=None):
        runs_file = self.dir / "runs.toml"
        runs_file.write_text("".join(
            f'[[scenario]]\nname = "{n}"\naccel = "tcg"\ntimeout = 300\n'
            for n in runs))
        row = ("layering", lambda log_dir: (results.Counts(passed=1),
                                            "pass", ""))
        saved = {s: signal.getsignal(s) for s in (signal.SIGTERM,
                                                  signal.SIGHUP)}
        self.addCleanup(lambda: [signal.signal(s, h)
                                 for s, h in saved.items()])
        self.addCleanup(serial.STOP.clear)
        if kill_after:
            # Once the test is over, a SIGTERM would reach whatever this
            # process runs next (make check's python row is tools/check).
            over = threading.Event()
            self.addCleanup(over.set)

            def killer():
                if self.started(kill_after, given_up=over):
                    os.kill(os.getpid(), signal.SIGTERM)
            threading.Thread(target=killer, daemon=True).start()
        with mock.patch.dict(os.environ, self.env), \
                self.host.patched(self.dir), \
                mock.patch.object(check, "ROWS", (row,)), \
                mock.patch.object(check, "AFTER_RUNS", ()), \
                contextlib.redirect_stdout(io.StringIO()) as out, \
                contextlib.redirect_stderr(io.StringIO()):
            rc = entry.call(check, "tools/check", [
                "--no-build", "--runs", str(runs_file),
                "--results", str(self.dir / "results"), *map(str, argv)])
        return rc, out.getvalue()

    def test_only_json_junit(self):
        self.env["FAKE_QEMU_FAIL"] = "1"
        rc, out = self.check(["a", "b"], "--only", "a", "--only", "lay*",
                             "--json", self.dir / "s.json", "--junit",
                             self.dir / "j.xml")
        self.assertEqual(rc, 1, out)
        summary = json.loads((self.dir / "s.json").read_text())
        self.assertEqual([r["name"] for r in summary["rows"]],
                         ["layering", "a"])
        self.assertEqual(summary["rows"][1]["verdict"], "fail")
        self.assertGreater(summary["failed"], 0)
        suite = ET.parse(self.dir / "j.xml").getroot()[0]
        self.assertEqual((suite.get("tests"), suite.get("failures")),
                         ("2", "1"))
        self.assertIsNotNone(suite[1].find("failure"))
        self.assertEqual(len(list(self.pids.iterdir())), 1, "b never ran")

    def test_sigterm(self):
        rc, out = self.check(["a", "b", "c", "d"], "-j", "2",
                             kill_after=2)
        self.assertEqual(rc, 130, out)
        self.assertEqual(self.leftovers(), [])
        self.assertEqual(len(list(self.pids.iterdir())), 2)
        self.assertNotIn("no result", out)


class Resume(unittest.TestCase):
    """--resume: a run with a results.json is kept, one without is run
    again under its own name."""

    def test_kept_and_cleared(self):
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            (d / "s.toml").write_text('description = "d"\n'
                                      'cmdline = "test=boot"\n')
            specs = scen.repeated(scen.load_scenario(d / "s.toml"), 2)
            done, partial = d / specs[0].run_name, d / specs[1].run_name
            done.mkdir()
            (done / "results.json").write_text(json.dumps(
                {"verdict": "fail", "crash": "x"}))
            partial.mkdir()
            (partial / "serial.log").write_text("KTAP version 1\n")
            record, outcome = batch.run_one(specs[0], d, {}, resume=True)
            self.assertEqual((record["verdict"], record["reason"],
                              record["resumed"], outcome),
                             ("fail", "x", True, None))
            self.assertIsNone(batch.earlier(specs[1], d,
                                            {specs[1].run_name}))
            self.assertFalse(partial.exists())


class Spawn(unittest.TestCase):
    def tearDown(self):
        serial.STOP.clear()

    def test_stop_all_kills_and_refuses(self):
        proc = serial.spawn([sys.executable, "-c",
                             "import time; time.sleep(60)"])
        serial.stop_all()
        self.assertIsNotNone(proc.returncode)
        with self.assertRaises(serial.Interrupted):
            serial.spawn(["true"])


if __name__ == "__main__":
    unittest.main()
