# SPDX-License-Identifier: MIT
"""bench/smp's plan, log parsing, table and Linux reference handling,
against synthetic serial logs (no QEMU needed).

Run: python3 -m unittest discover -s bench/lib
"""

import contextlib
import importlib.machinery
import importlib.util
import io
import os
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path
from unittest import mock

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import linuxref  # noqa: E402
import smpbench as sb  # noqa: E402


def load_script():
    """bench/smp as a module (it has no .py suffix)."""
    path = str(HERE.parent / "smp")
    loader = importlib.machinery.SourceFileLoader("bench_smp", path)
    spec = importlib.util.spec_from_loader("bench_smp", loader)
    module = importlib.util.module_from_spec(spec)
    # No bench/__pycache__/smpcpython-*.pyc beside the script.
    saved, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        loader.exec_module(module)
    finally:
        sys.dont_write_bytecode = saved
    return module


# What tools/run writes to serial.times for an smp run: host seconds, a
# space, the line; the subtest's lines are indented by four spaces.
HVPROBE_TIMES = textwrap.dedent("""\
    0.170249 KTAP version 1
    0.170435 1..1
    0.170660 # hvprobe 0.1: multiboot1, loader "qemu"
    0.250000 # smp: booting 15 APs (bringup=serial, init_udelay=10000)
    0.300000 # something else
    1.750500 # smp: brought up 16 CPUs
    1.750600     KTAP version 1
    1.750700     # Subtest: smp
    1.751000     # DATA {"test":"smp","cpus":16,"nodes":4,"bringup":"serial","init_udelay_us":10000,"lpj_source":"lpj_fine","lpj_reuse":"node","calibrations":4,"total_us":1234567,"aps":[{"apic_id":1,"lpj":9888161}]}
    1.751050     # DATA {"test":"lpj","hz":250,"lpj":9802016}
    1.751100     # DATA {not json
    1.752000     ok 1 all CPUs online
    1.752100     1..1
    1.752200 ok 1 smp
    1.752300 # Totals: pass:1 fail:0 skip:0 error:0
    garbage without a stamp
    """)

LINUX_LINES = [
    (1.80, "[    0.000000] Linux version 6.1.0-57-cloud-amd64"),
    (1.95, "[    0.004011] Calibrating delay loop (skipped), value "
           "calculated using timer frequency.. 4890.80 BogoMIPS "
           "(lpj=9781616)"),
    (2.48, "[    0.529847] smp: Bringing up secondary CPUs ..."),
    (2.49, "[    0.541113] x86: Booting SMP configuration:"),
    (2.69, "[    0.541385] .... node  #0, CPUs:        #1  #2"),
    (3.36, "[    0.000000] calibrate_delay_direct() failed to get a good "
           "estimate for loops_per_jiffy."),
    (5.18, "[    2.044605] smp: Brought up 4 nodes, 16 CPUs"),
]


class Plan(unittest.TestCase):
    def test_constant_tsc(self):
        self.assertTrue(sb.constant_tsc("Skylake-Client"))
        self.assertTrue(sb.constant_tsc("Skylake-Client-v4,-hle"))
        self.assertTrue(sb.constant_tsc("Cascadelake-Server"))
        self.assertFalse(sb.constant_tsc("qemu64"))
        self.assertFalse(sb.constant_tsc("EPYC"))
        self.assertTrue(sb.constant_tsc("qemu64,+invtsc"))
        self.assertTrue(sb.constant_tsc("EPYC,invtsc=on"))

    def test_hvprobe_cmdlines(self):
        self.assertEqual(sb.hvprobe_cmdline("none", "serial"),
                         ["test=smp", "lpj_reuse=none", "bringup=serial",
                          "init_udelay=0"])
        self.assertEqual(sb.hvprobe_cmdline("node", "parallel"),
                         ["test=smp", "lpj_reuse=node", "bringup=parallel",
                          "init_udelay=0"])
        self.assertEqual(sb.hvprobe_cmdline("preset", "serial", 9781616),
                         ["test=smp", "lpj=9781616", "bringup=serial",
                          "init_udelay=0"])
        with self.assertRaises(ValueError):
            sb.hvprobe_cmdline("preset", "serial")

    def test_linux_counterparts(self):
        v = sb.linux_variant
        # Constant TSC: Linux reuses lpj within a package = per node.
        self.assertEqual(v("node", "serial", "Skylake-Client"), "calibrate")
        self.assertIsNone(v("none", "serial", "Skylake-Client"))
        # No constant TSC: every Linux AP calibrates.
        self.assertEqual(v("none", "serial", "qemu64"), "calibrate")
        self.assertIsNone(v("node", "serial", "qemu64"))
        for model in ("Skylake-Client", "qemu64"):
            self.assertEqual(v("preset", "serial", model), "lpj")
            for mode in sb.LPJ_MODES:
                self.assertIsNone(v(mode, "parallel", model))

    def test_machines_and_rows(self):
        machines, skipped = sb.split_machines(sb.CPUS, sb.VCPUS, sb.NODES)
        self.assertEqual(len(machines), 2 * 9)
        self.assertNotIn(sb.Machine("qemu64", 1, 4), machines)
        self.assertEqual(len(skipped), 1)
        self.assertIn("1 vCPUs x 4 nodes", skipped[0])
        rows = sb.plan(machines, sb.LPJ_MODES, sb.BRINGUPS)
        self.assertEqual(len(rows), 18 * 6)
        # Each Linux run sits on exactly one row: two per machine.
        linux = [(r.machine, r.linux) for r in rows if r.linux]
        self.assertEqual(len(linux), 2 * len(machines))
        self.assertEqual(len(set(linux)), len(linux))


class HvprobeLog(unittest.TestCase):
    def test_markers_and_data(self):
        lines = sb.read_times(HVPROBE_TIMES)
        self.assertEqual(lines[7], (1.7507, "    # Subtest: smp"))
        run = sb.parse_hvprobe(lines)
        self.assertEqual((run.aps, run.cpus), (15, 16))
        self.assertAlmostEqual(run.ms, 1500.5)
        self.assertEqual(run.smp_data()["calibrations"], 4)
        self.assertEqual(len(run.data), 2)  # the broken one is dropped
        self.assertEqual(sb.bsp_lpj(run.data)[0], 9802016)

    def test_indented_markers(self):
        run = sb.parse_hvprobe([(1.0, "    # smp: booting 1 AP"),
                                (1.5, "    # smp: brought up 2 CPUs")])
        self.assertAlmostEqual(run.ms, 500.0)

    def test_missing_end(self):
        run = sb.parse_hvprobe(sb.read_times(
            "0.1 not ok 1 cmdline # ERROR test: unknown test 'smp'\n"
            "0.2     # smp: booting 3 APs\n"))
        self.assertIsNone(run.ms)
        self.assertEqual(run.smp_data(), {})

    def test_bsp_lpj(self):
        lpj = {"test": "lpj", "hz": 250, "lpj": 9802016}
        smp = {"test": "smp", "aps": [{"apic_id": 1, "lpj": 0},
                                      {"apic_id": 2, "lpj": 9888161}]}
        self.assertEqual(sb.bsp_lpj([smp, lpj]),
                         (9802016, "lpj test: BSP lpj"))
        self.assertEqual(sb.bsp_lpj([smp]),
                         (9888161, "smp test: APIC ID 2 lpj"))
        self.assertEqual(sb.bsp_lpj([{"test": "smp", "aps": []}]),
                         (None, None))
        self.assertEqual(sb.bsp_lpj([{"test": "lpj", "lpj": True}]),
                         (None, None))
        self.assertEqual(sb.bsp_lpj([{"test": "boot", "lpj": 5}, "x"]),
                         (None, None))


def row_with(vcpus, hv, lx, mode="preset", linux="lpj"):
    row = sb.Row(sb.Machine("qemu64", vcpus, 1), mode, "serial", linux)
    row.hvprobe_runs = [{"ms": v, "calibrations": 0} if v is not None
                        else {"ms": None, "error": "boom"} for v in hv]
    row.linux_runs = [{"ms": v} for v in lx]
    return row


class Table(unittest.TestCase):
    def test_stats_and_ratio(self):
        row = row_with(16, [30.0, 10.0, 20.0], [240.0, 200.0, 400.0])
        self.assertEqual(sb.stats(row.hvprobe_runs), (10.0, 20.0, 3, 3))
        self.assertAlmostEqual(sb.ratio(row), 20.0 / 240.0)
        self.assertEqual(sb.stats([{"ms": None}]), (None, None, 0, 1))
        self.assertIsNone(sb.ratio(row_with(16, [None], [1.0])))
        self.assertIsNone(sb.ratio(row_with(1, [1.0], [2.0])))

    def test_calibrations(self):
        self.assertEqual(sb.calibrations([{"calibrations": 3}] * 2), "3")
        self.assertEqual(sb.calibrations([{"calibrations": 3},
                                          {"calibrations": 4}]), "?")
        self.assertEqual(sb.calibrations([{"ms": None}]), "")

    def test_rows_line_up(self):
        rows = [row_with(16, [12.5, None, 13.0], [240.0, 250.0, 260.0]),
                row_with(16, [None], [], mode="none", linux=None),
                row_with(32, [], [1950.0])]
        lines = sb.table(rows, 3)
        body = [l for l in lines if "|" in l]
        self.assertEqual(len({l.index("|") for l in body}), 1)
        self.assertEqual(len({l.rindex("|") for l in body}), 1)
        first = body[2]
        self.assertIn("12.5", first)
        self.assertIn("12.8*", first)        # median of the two good runs
        self.assertIn("lpj=", first)
        self.assertTrue(first.rstrip().endswith("0.05"))
        self.assertIn("FAIL", body[3])
        self.assertTrue(any(l.startswith("*:") for l in lines))
        self.assertIn("-cpu qemu64 (no constant TSC", lines[1])

    def test_linux_only_table_hides_rows_without_linux(self):
        rows = [row_with(16, [], [240.0]),
                row_with(16, [], [], mode="none", linux=None)]
        body = [l for l in sb.table(rows, 1, hvprobe=False) if "|" in l]
        self.assertEqual(len(body), 3)

    def test_row_json(self):
        row = row_with(16, [10.0, 20.0, 30.0], [200.0])
        doc = sb.row_json(row, "test=smp lpj=1 bringup=serial",
                          "console=ttyS0 panic=-1 lpj=1")
        self.assertEqual(doc["hvprobe"]["median_ms"], 20.0)
        self.assertEqual(doc["linux"]["variant"], "lpj")
        self.assertEqual(doc["ratio_median"], 0.1)
        self.assertEqual(len(doc["hvprobe"]["runs"]), 3)
        self.assertFalse(doc["constant_tsc"])


class LinuxLog(unittest.TestCase):
    def test_bringup(self):
        b = linuxref.parse(LINUX_LINES)
        self.assertAlmostEqual(b.ms, 2690.0)
        self.assertEqual((b.nodes, b.cpus, b.lpj), (4, 16, 9781616))
        self.assertIsNone(b.fatal)

    def test_one_cpu_falls_back(self):
        b = linuxref.parse([
            (2.5188, "[    0.9489] smp: Bringing up secondary CPUs ..."),
            (2.5205, "[    0.9492] smp: Brought up 1 node, 1 CPU")])
        self.assertEqual(b.start_marker, "smp: Bringing up secondary CPUs")
        self.assertAlmostEqual(b.ms, 1.7)

    def test_no_end(self):
        b = linuxref.parse(LINUX_LINES[:4] + [
            (3.0, "[    1.0] Kernel panic - not syncing: VFS")])
        self.assertIsNone(b.ms)
        self.assertTrue(b.fatal.startswith("[    1.0] Kernel panic"))

    def test_cmdline(self):
        self.assertEqual(linuxref.cmdline(), "console=ttyS0 panic=-1")
        self.assertEqual(linuxref.cmdline(5), "console=ttyS0 panic=-1 lpj=5")

    def test_newest_vmlinuz(self):
        with tempfile.TemporaryDirectory() as tmp:
            self.assertIsNone(linuxref.find_vmlinuz(tmp))
            for name in ("vmlinuz-6.1.0-9-cloud-amd64",
                         "vmlinuz-6.1.0-10-cloud-amd64",
                         "vmlinuz-6.12.9-amd64"):
                (Path(tmp) / name).write_bytes(b"")
            self.assertEqual(linuxref.find_vmlinuz(tmp).name,
                             "vmlinuz-6.1.0-10-cloud-amd64")

    def test_missing_kernel_says_how_to_install(self):
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.object(linuxref, "can_install", lambda: False):
            with self.assertRaises(linuxref.LinuxError) as cm:
                linuxref.ensure_vmlinuz(tmp)
        self.assertIn("apt-get install -y --no-install-recommends "
                      "linux-image-cloud-amd64", str(cm.exception))


FAKE_QEMU = """\
import sys, time
print("early line", flush=True)
time.sleep(0.2)
print("x86: Booting SMP configuration:", flush=True)
time.sleep(0.3)
print("smp: Brought up 1 node, 2 CPUs", flush=True)
print("after the end", flush=True)
time.sleep(float(sys.argv[1]))
"""


class LinuxBoot(unittest.TestCase):
    """linuxref.boot against a stand-in for QEMU that prints on a clock."""

    def fake(self, *args):
        return [sys.executable, "-c", FAKE_QEMU, *args]

    def test_stops_at_the_end_marker_and_kills(self):
        boot = linuxref.boot(self.fake("30"), timeout=20)
        self.assertFalse(boot.timed_out)
        self.assertLess(boot.wall_s, 10)        # killed, not waited for
        self.assertNotEqual(boot.exit_status, 0)
        texts = [t for _, t in boot.lines]
        self.assertEqual(texts[-1], "smp: Brought up 1 node, 2 CPUs")
        b = linuxref.parse(boot.lines)
        self.assertGreater(b.ms, 250)
        self.assertLess(b.ms, 2000)

    def test_timeout(self):
        script = "import time; print('hello', flush=True); time.sleep(30)"
        boot = linuxref.boot([sys.executable, "-c", script], timeout=0.5)
        self.assertTrue(boot.timed_out)
        self.assertEqual(boot.lines[0][1], "hello")

    def test_stderr_is_kept(self):
        script = "import sys; sys.stderr.write('qemu: bad -cpu\\n')"
        boot = linuxref.boot([sys.executable, "-c", script], timeout=10)
        self.assertIn("bad -cpu", boot.stderr)
        self.assertEqual(boot.exit_status, 0)


class CommandLine(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.smp = load_script()

    def parse(self, *argv):
        return self.smp.parse_args(list(argv))

    def error(self, *argv):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), \
                self.assertRaises(SystemExit) as cm:
            self.parse(*argv)
        self.assertEqual(cm.exception.code, 2)
        self.assertNotIn("Traceback", err.getvalue())
        return err.getvalue()

    def test_defaults(self):
        a = self.parse()
        self.assertEqual((a.runs, a.vcpus, a.nodes), (3, [1, 4, 16, 32, 64],
                                                      [1, 4]))
        self.assertEqual(a.cpu, ["Skylake-Client", "qemu64"])
        self.assertEqual(a.accel, "tcg")

    def test_quick_and_overrides(self):
        a = self.parse("--quick")
        self.assertEqual((a.runs, a.vcpus), (1, [1, 4, 16]))
        a = self.parse("--quick", "--runs", "2", "--vcpus", "8,8,2",
                       "--cpu", "qemu64", "--lpj-modes", "preset")
        self.assertEqual((a.runs, a.vcpus, a.cpu, a.lpj_modes),
                         (2, [8, 2], ["qemu64"], ["preset"]))

    def test_fresh_run_names(self):
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            self.assertEqual(self.smp.fresh_name(tmp, "qemu64,+x 4c"),
                             "qemu64_+x_4c")
            (tmp / "a").mkdir()
            (tmp / "a-2.log").write_text("")
            self.assertEqual(self.smp.fresh_name(tmp, "a"), "a-3")

    def test_user_errors(self):
        self.assertIn("--runs", self.error("--runs", "0"))
        self.assertIn("numbers", self.error("--vcpus", "4,x"))
        self.assertIn(">= 1", self.error("--nodes", "0"))
        self.assertIn("pick from", self.error("--lpj-modes", "sometimes"))
        self.assertIn("whole MiB", self.error("--mem", "250M"))
        self.assertIn("memory size", self.error("--mem", "lots"))
        self.assertIn("not allowed", self.error("--no-linux", "--no-hvprobe"))
        self.assertIn("CPU model", self.error("--cpu", "a b"))
        self.assertIn("x2APIC", self.error("--vcpus", "300"))


if __name__ == "__main__":
    unittest.main()
