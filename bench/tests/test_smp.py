# SPDX-License-Identifier: MIT
"""bench/smp's sweep (the bench-smp matrix narrowed to the options), its
hvprobe figures read from DATA, the table and the Linux reference, against
made-up serial logs (no QEMU needed)."""

import contextlib
import hashlib
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from bench.commands import smp
from bench.lib import linuxref
from bench.lib import sidebyside as sbs
from tools.lib.analysis import resultset
from tools.lib.launch import serial

SMP_DATA = {"test": "smp", "cpus": 16, "nodes": 4, "bringup": "serial",
            "init_udelay_us": 10000, "lpj_source": "lpj_fine",
            "lpj_reuse": "node", "calibrations": 4, "total_us": 1234567,
            "per_ap_us": {"min": 1, "median": 2, "max": 3},
            "aps": [{"apic_id": 1, "lpj": 9888161},
                    {"apic_id": 2, "lpj": 9888161}]}


def serial_log(smp=SMP_DATA, case="ok 1 all CPUs online",
               lpj='{"test":"lpj","hz":250,"lpj":9802016}', more=()):
    """An smp and lpj run as the kernel prints it. Its free-text markers
    would say 1500 ms by the host's clock had they been stamped, the DATA
    line says 1234.567 ms by the guest's: bench must take the DATA's."""
    def subtest(number, name, lines):
        body = ["KTAP version 1", f"# Subtest: {name}", *lines, "1..1"]
        return [f"    {line}" for line in body] + [f"ok {number} {name}"]
    return "\n".join([
        "KTAP version 1", "1..2", '# hvprobe 0.1: multiboot1, loader "qemu"',
        "# smp: booting 15 APs (bringup=serial, init_udelay=10000)",
        "# smp: brought up 16 CPUs",
        *subtest(1, "smp", [f"# DATA {json.dumps(smp)}",
                            *(f"# DATA {json.dumps(d)}" for d in more),
                            case]),
        *subtest(2, "lpj", [f"# DATA {lpj}", "# DATA {not json",
                            "ok 1 calibrations as predicted"]),
        "# Totals: pass:2 fail:0 skip:0 error:0"]) + "\n"


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


def parse(*argv):
    return smp.parse_args(list(argv))


def spec_of(vcpus=16, nodes=4, mode="node", bringup="serial"):
    """The spec of one row of the default sweep."""
    args = parse("--vcpus", str(vcpus), "--nodes", str(nodes), "--cpu",
                 "Skylake-Client", "--lpj-modes", mode, "--bringup", bringup)
    return args.specs[0]


def log_doc(text):
    """The results document the package makes of a serial log."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "run.serial.log"
        path.write_text(text)
        return resultset.doc_from_log(path, [])


class Plan(unittest.TestCase):
    def test_constant_tsc(self):
        c = linuxref.constant_tsc
        self.assertTrue(c("Skylake-Client"))
        self.assertTrue(c("Skylake-Client-v4,-hle"))
        self.assertTrue(c("Cascadelake-Server"))
        self.assertFalse(c("qemu64"))
        self.assertFalse(c("EPYC"))
        self.assertTrue(c("qemu64,+invtsc"))
        self.assertTrue(c("EPYC,invtsc=on"))

    def test_generic_models_pin_their_vendor(self):
        # Under KVM QEMU gives a generic model the host's vendor unless
        # vendor= names one: qemu64 on an Intel host is GenuineIntel
        # family 15, which Linux's early_init_intel() calls constant.
        c, pin = linuxref.constant_tsc, linuxref.pinned
        self.assertTrue(c("qemu64,vendor=GenuineIntel"))
        self.assertFalse(c("qemu64,vendor=AuthenticAMD"))
        self.assertTrue(c("kvm64"))
        self.assertFalse(c("qemu32"))
        self.assertEqual(pin("qemu64"), "qemu64,vendor=AuthenticAMD")
        self.assertEqual(pin("qemu64,-kvmclock"),
                         "qemu64,vendor=AuthenticAMD,-kvmclock")
        self.assertEqual(pin("kvm64"), "kvm64,vendor=GenuineIntel")
        self.assertEqual(pin("qemu64,vendor=GenuineIntel"),
                         "qemu64,vendor=GenuineIntel")
        self.assertEqual(pin("Skylake-Client"), "Skylake-Client")
        self.assertEqual(pin("host,-kvmclock"), "host,-kvmclock")

    def test_linux_boots_the_pinned_model(self):
        argv = linuxref.qemu_argv(sbs.Machine("qemu64,-kvmclock", 2, 1),
                                  256, "tcg", "/nonexistent/vmlinuz")
        self.assertEqual(argv[argv.index("-cpu") + 1],
                         "qemu64,vendor=AuthenticAMD,-kvmclock")

    def test_hvprobe_cmdlines(self):
        # The matrix's base words, then the lpj and bring-up entries.
        # Per-CPU forces calibration: KVM's kvmclock would preset lpj.
        self.assertEqual(spec_of(4, 1, "none").cmdline,
                         ["test=smp", "lpj_reuse=none",
                          "lpj_source=calibrate", "bringup=serial"])
        self.assertEqual(spec_of(4, 1, "node", "parallel").cmdline,
                         ["test=smp", "lpj_reuse=node", "bringup=parallel"])
        self.assertEqual(spec_of(4, 1, "linux65", "parallel").cmdline,
                         ["test=smp", "lpj_policy=linux-6.5",
                          "bringup=parallel"])
        spec = smp.preset(spec_of(4, 1, "preset"), 9781616)
        self.assertEqual(spec.cmdline, ["test=smp", "lpj=9781616",
                                        "bringup=serial"])
        # Only the preset rows take the learned value.
        self.assertEqual(smp.preset(spec_of(4, 1, "none"), 5).cmdline[1],
                         "lpj_reuse=none")
        spec = spec_of(16, 4)
        self.assertEqual((spec.cpu, spec.vcpus, spec.numa, spec.mem_mib,
                          spec.accel, spec.timeout), ("Skylake-Client", 16,
                                                      4, 256, "tcg", 300))
        self.assertEqual(spec.axes["lpj"], "node")

    def test_linux_counterparts(self):
        v = linuxref.variant_for
        for model in ("Skylake-Client", "qemu64"):
            # Linux 6.1 beside hvprobe under its rule, serially.
            self.assertEqual(v("linux61", "serial", model), "calibrate")
            self.assertEqual(v("preset", "serial", model), "lpj")
            # Linux 6.12 beside the 6.5 rule in Linux 6.5's shape, never
            # beside hvprobe's own concurrent mode.
            self.assertEqual(v("linux65", "linux65", model), "6.12")
            self.assertIsNone(v("linux65", "parallel", model))
            for mode in ("none", "node"):
                self.assertIsNone(v(mode, "serial", model))
            for mode in sbs.LPJ_LABELS:
                if mode != "linux65":
                    self.assertIsNone(v(mode, "parallel", model))
            self.assertIsNone(v("linux65", "serial", model))

    def test_machines_and_rows(self):
        args = parse()
        rows = sbs.rows_for(args.specs)
        machines = list(dict.fromkeys(r.machine for r in rows))
        self.assertEqual(len(machines), 2 * 9)
        self.assertNotIn(sbs.Machine("qemu64", 1, 4), machines)
        self.assertEqual(len(args.skipped), 1)
        self.assertIn("1 vCPUs x 4 nodes", args.skipped[0])
        self.assertEqual(len(rows), 18 * 11)
        # Machine by machine, as the table shows them.
        self.assertEqual(machines[:3], [sbs.Machine("Skylake-Client", 1, 1),
                                        sbs.Machine("Skylake-Client", 4, 1),
                                        sbs.Machine("Skylake-Client", 4, 4)])
        # Each Linux run sits on exactly one row: three per machine.
        linux = [(r.machine, r.linux) for r in rows if r.linux]
        self.assertEqual(len(linux), 3 * len(machines))
        self.assertEqual(len(set(linux)), len(linux))


class HvprobeData(unittest.TestCase):
    """hvprobe's figures come from its smp DATA line, not from the lines
    it prints around the bring-up."""

    def test_markers_and_data(self):
        rec = smp.hvprobe_record(spec_of(), log_doc(serial_log()))
        self.assertEqual(rec["ms"], 1234.567)
        self.assertIsNone(rec["error"])
        self.assertEqual((rec["cpus"], rec["aps"], rec["calibrations"]),
                         (16, 2, 4))
        self.assertEqual(rec["per_ap_us"], {"min": 1, "median": 2, "max": 3})
        self.assertEqual([d["test"] for d in rec["data"]], ["smp", "lpj"])
        self.assertNotIn("warning", rec)

    def test_markers_alone_give_no_time(self):
        smp_data = {k: v for k, v in SMP_DATA.items() if k != "total_us"}
        doc = log_doc(serial_log(smp=smp_data))
        rec = smp.hvprobe_record(spec_of(), doc)
        self.assertIsNone(rec["ms"])
        self.assertIn("no smp DATA line with total_us", rec["error"])

    def test_no_smp_data(self):
        doc = log_doc("KTAP version 1\n1..1\n"
                      "not ok 1 cmdline # ERROR test: unknown test 'smp'\n"
                      "# Totals: pass:0 fail:0 skip:0 error:1\n")
        rec = smp.hvprobe_record(spec_of(), doc, ["qemu: warning: x",
                                                  "qemu: no such CPU"])
        self.assertIsNone(rec["ms"])
        self.assertEqual(rec["error"], "no smp DATA line with total_us; "
                         "cmdline: test: unknown test 'smp' (qemu: no such "
                         "CPU)")

    def test_cpus_short_and_not_a_pass(self):
        rec = smp.hvprobe_record(spec_of(32, 4), log_doc(serial_log()))
        self.assertIsNone(rec["ms"])
        self.assertTrue(rec["error"].startswith("brought up 16 of 32 CPUs"))
        text = serial_log(case="not ok 1 all CPUs online")
        rec = smp.hvprobe_record(spec_of(), log_doc(text))
        self.assertEqual(rec["ms"], 1234.567)       # the time stands
        self.assertEqual(rec["warning"], "smp / 1 all CPUs online: fail")

    def test_bsp_lpj(self):
        doc = log_doc(serial_log())
        self.assertEqual(smp.bsp_lpj(doc), (9802016, "lpj test: BSP lpj"))
        no_lpj = log_doc(serial_log(lpj='{"test":"lpj","x":1}'))
        self.assertEqual(smp.bsp_lpj(no_lpj),
                         (9888161, "smp test: APIC ID 1 lpj"))
        self.assertEqual(smp.bsp_lpj({"tests": []}), (None, None))
        aps = [{"apic_id": 1, "lpj": 0}]
        boolean = log_doc(serial_log(smp={**SMP_DATA, "aps": aps},
                                     lpj='{"test":"lpj","lpj":true}'))
        self.assertEqual(smp.bsp_lpj(boolean), (None, None))

    def test_aps_on_lines_of_their_own(self):
        summary = {k: v for k, v in SMP_DATA.items() if k != "aps"}
        aps = [{"test": "smp", "record": "ap", "cpu": n, "apic_id": n,
                "lpj": 0 if n == 1 else 9888161} for n in (1, 2, 3)]
        doc = log_doc(serial_log(smp=summary, more=aps,
                                 lpj='{"test":"lpj"}'))
        rec = smp.hvprobe_record(spec_of(), doc)
        self.assertEqual((rec["ms"], rec["aps"], rec["calibrations"]),
                         (1234.567, 3, 4))
        self.assertEqual(smp.bsp_lpj(doc), (9888161,
                                            "smp test: APIC ID 2 lpj"))

    def test_no_doc(self):
        rec = smp.hvprobe_record(spec_of(), None)
        self.assertIsNone(rec["ms"])
        self.assertEqual(rec["cmdline"], " ".join(spec_of().cmdline))


def row_with(vcpus, hv, lx, mode="preset", linux="lpj"):
    row = sbs.Row(sbs.Machine("qemu64", vcpus, 1), mode, "serial", linux)
    row.hvprobe_runs = [{"ms": v, "calibrations": 0} if v is not None
                        else {"ms": None, "error": "boom"} for v in hv]
    row.linux_runs = [{"ms": v} for v in lx]
    return row


class Table(unittest.TestCase):
    def test_stats_and_ratio(self):
        row = row_with(16, [30.0, 10.0, 20.0], [240.0, 200.0, 400.0])
        s, total = sbs.summary(row.hvprobe_runs)
        self.assertEqual((s.low, s.median, s.n, total), (10.0, 20.0, 3, 3))
        self.assertAlmostEqual(sbs.ratio(row), 20.0 / 240.0)
        self.assertEqual(sbs.summary([{"ms": None}]), (None, 1))
        self.assertIsNone(sbs.ratio(row_with(16, [None], [1.0])))
        self.assertIsNone(sbs.ratio(row_with(1, [1.0], [2.0])))

    def test_calibrations(self):
        self.assertEqual(sbs.calibrations([{"calibrations": 3}] * 2), "3")
        self.assertEqual(sbs.calibrations([{"calibrations": 3},
                                           {"calibrations": 4}]), "?")
        self.assertEqual(sbs.calibrations([{"ms": None}]), "")

    def test_rows_line_up(self):
        rows = [row_with(16, [12.5, None, 13.0], [240.0, 250.0, 260.0]),
                row_with(16, [None], [], mode="none", linux=None),
                row_with(32, [], [1950.0])]
        lines = sbs.table(rows, 3)
        body = [line for line in lines if "|" in line]
        self.assertEqual(len({line.index("|") for line in body}), 1)
        self.assertEqual(len({line.rindex("|") for line in body}), 1)
        first = body[2]
        self.assertIn("12.5", first)
        self.assertIn("12.8*", first)        # median of the two good runs
        self.assertIn("lpj=", first)
        self.assertTrue(first.rstrip().endswith("0.05"))
        self.assertIn("FAIL", body[3])
        self.assertTrue(any(line.startswith("*:") for line in lines))
        self.assertIn("-cpu qemu64 (no constant TSC", lines[1])
        self.assertTrue(any("smp DATA line" in line for line in lines))

    def test_linux_only_table_hides_rows_without_linux(self):
        rows = [row_with(16, [], [240.0]),
                row_with(16, [], [], mode="none", linux=None)]
        body = [line for line in sbs.table(rows, 1, hvprobe=False)
                if "|" in line]
        self.assertEqual(len(body), 3)

    def test_row_json(self):
        row = row_with(16, [10.0, 20.0, 30.0], [200.0])
        doc = sbs.row_json(row, "test=smp lpj=1 bringup=serial",
                           "console=ttyS0 panic=-1 lpj=1")
        self.assertEqual(doc["hvprobe"]["median_ms"], 20.0)
        self.assertEqual(doc["hvprobe"]["min_ms"], 10.0)
        self.assertEqual((doc["hvprobe"]["ok"], doc["hvprobe"]["total"]),
                         (3, 3))
        self.assertEqual(doc["linux"]["variant"], "lpj")
        self.assertEqual(doc["ratio_median"], 0.1)
        self.assertEqual(len(doc["hvprobe"]["runs"]), 3)
        self.assertFalse(doc["constant_tsc"])
        self.assertIsNone(sbs.row_json(row_with(4, [None], []), "", "")
                          ["hvprobe"]["median_ms"])


class LinuxLog(unittest.TestCase):
    def test_bringup(self):
        b = linuxref.parse(LINUX_LINES)
        self.assertAlmostEqual(b["ms"], 2690.0)
        self.assertEqual((b["nodes"], b["cpus"], b["lpj"]), (4, 16, 9781616))
        self.assertIsNone(b["fatal"])

    def test_one_cpu_falls_back(self):
        b = linuxref.parse([
            (2.5188, "[    0.9489] smp: Bringing up secondary CPUs ..."),
            (2.5205, "[    0.9492] smp: Brought up 1 node, 1 CPU")])
        self.assertEqual(b["start_marker"], "smp: Bringing up secondary CPUs")
        self.assertAlmostEqual(b["ms"], 1.7)

    def test_no_end(self):
        b = linuxref.parse(LINUX_LINES[:4] + [
            (3.0, "[    1.0] Kernel panic - not syncing: VFS")])
        self.assertIsNone(b["ms"])
        self.assertTrue(b["fatal"].startswith("[    1.0] Kernel panic"))

    def test_backport_from_apt(self):
        madison = (
            " linux-image-cloud-amd64 | 6.12.95-1~bpo12+1 | http://h/debian "
            "bookworm-backports/main amd64 Packages\n"
            " linux-image-cloud-amd64 |  6.1.192-3 | http://h/debian-security"
            " bookworm-security/main amd64 Packages\n")
        self.assertEqual(linuxref.backport_versions(madison),
                         ["6.12.95-1~bpo12+1"])
        self.assertEqual(linuxref.backport_versions(madison.replace(
            "6.12.95", "6.13.1")), [])
        show = ("Package: linux-image-cloud-amd64\nDepends: "
                "linux-image-6.12.95+deb12-cloud-amd64 (= 6.12.95-1~bpo12+1)"
                "\n")
        self.assertEqual(linuxref.image_package(show),
                         ("linux-image-6.12.95+deb12-cloud-amd64",
                          "6.12.95-1~bpo12+1"))
        self.assertEqual(linuxref.image_package("Depends: foo\n"),
                         (None, None))

    def test_silent_kernel_is_detected(self):
        # A QEMU that prints nothing: the boot ends after `silence`, not
        # after its timeout, and says it was silent.
        with tempfile.TemporaryDirectory() as tmp:
            run = linuxref.boot([sys.executable, "-c",
                                 "import time; time.sleep(30)"],
                                Path(tmp), timeout=60, silence=0.5)
        self.assertTrue(run.silent)
        self.assertLess(run.wall, 10)
        with tempfile.TemporaryDirectory() as tmp:
            run = linuxref.boot([sys.executable, "-c",
                                 "print('Linux version', flush=True); "
                                 "import time; time.sleep(2)"],
                                Path(tmp), timeout=1.5, silence=0.5)
        self.assertFalse(run.silent)
        self.assertTrue(run.timed_out)

    def test_cmdline(self):
        self.assertEqual(linuxref.cmdline(), "console=ttyS0 panic=-1")
        self.assertEqual(linuxref.cmdline(5), "console=ttyS0 panic=-1 lpj=5")

    def test_reference_kernels_are_unpacked_never_installed(self):
        # Stand-ins for apt-cache and apt-get that log every call: the
        # image is the checked .deb, unpacked into the build folder.
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            pkg = tmp / "pkg"
            (pkg / "boot").mkdir(parents=True)
            (pkg / "DEBIAN").mkdir()
            image = "linux-image-6.1.0-30-cloud-amd64"
            (pkg / "boot" / "vmlinuz-6.1.0-30-cloud-amd64").write_text("k")
            (pkg / "DEBIAN" / "control").write_text(
                f"Package: {image}\nVersion: 6.1.124-1\nArchitecture: "
                "amd64\nMaintainer: x <x@example.org>\nDescription: x\n")
            deb = tmp / f"{image}_6.1.124-1_amd64.deb"
            subprocess.run(["dpkg-deb", "-b", "-Zgzip", str(pkg), str(deb)],
                           check=True, capture_output=True)
            digest = hashlib.sha256(deb.read_bytes()).hexdigest()
            bin_dir = tmp / "bin"
            bin_dir.mkdir()
            calls = tmp / "calls"
            (bin_dir / "apt-cache").write_text(
                f"#!/bin/sh\necho \"apt-cache $*\" >> {calls}\n"
                "case $1 in\n"
                "madison) echo ' linux-image-cloud-amd64 | 6.1.124-1 | "
                "http://h bookworm/main amd64 Packages';;\n"
                f"show) echo 'Depends: {image} (= 6.1.124-1)';;\nesac\n")
            (bin_dir / "apt-get").write_text(
                f"#!/bin/sh\necho \"apt-get $*\" >> {calls}\n"
                "case \"$*\" in\n"
                f"*--print-uris*) echo \"'http://h/{deb.name}' {deb.name} "
                f"{deb.stat().st_size} SHA256:{digest}\";;\n"
                f"download*) cp {deb} .;;\n*) exit 100;;\nesac\n")
            for tool in bin_dir.iterdir():
                tool.chmod(0o755)
            ref = tmp / "build" / "linux-ref"
            env = {"PATH": f"{bin_dir}:{os.environ['PATH']}"}
            with mock.patch.dict(os.environ, env):
                found = linuxref.ensure_vmlinuz(ref, log=lambda _: None)
                self.assertEqual(found, ref / "boot" /
                                 "vmlinuz-6.1.0-30-cloud-amd64")
                # Found again without apt.
                self.assertEqual(linuxref.ensure_vmlinuz(ref), found)
            said = calls.read_text()
            self.assertNotIn("install", said)
            self.assertIn(f"apt-get download -q {image}=6.1.124-1", said)
            self.assertEqual(sorted(p.name for p in ref.iterdir()),
                             ["boot"])

    def test_a_new_sweep_keeps_the_last_one(self):
        with tempfile.TemporaryDirectory() as tmp:
            link = Path(tmp) / "bench-smp.json"
            a, b = Path(tmp) / "bench-smp-1.json", Path(tmp) / "bench-smp-2.json"
            smp.write_json(a, {"sweep": 1}, link)
            smp.write_json(b, {"sweep": 2}, link)
            self.assertEqual(json.loads(a.read_text()), {"sweep": 1})
            self.assertEqual(json.loads(link.read_text()), {"sweep": 2})
            self.assertEqual(os.readlink(link), "bench-smp-2.json")
        args = smp.parse_args(["--quick"])
        self.assertRegex(args.output, r"results/bench-smp-\d{8}-\d{6}\.json$")

    def test_newest_vmlinuz(self):
        with tempfile.TemporaryDirectory() as tmp:
            self.assertIsNone(linuxref.find_series("6.1", tmp))
            (Path(tmp) / "boot").mkdir()
            for name in ("vmlinuz-6.1.0-9-cloud-amd64",
                         "vmlinuz-6.1.0-10-cloud-amd64",
                         "vmlinuz-6.12.9-cloud-amd64"):
                (Path(tmp) / "boot" / name).write_bytes(b"")
            self.assertEqual(linuxref.find_series("6.1", tmp).name,
                             "vmlinuz-6.1.0-10-cloud-amd64")

    def test_same_machine_as_hvprobe(self):
        spec = spec_of(16, 4)
        argv = linuxref.qemu_argv(sbs.Machine("Skylake-Client", 16, 4), 256,
                                  "tcg", "/boot/vmlinuz-x", 123)
        hv = spec.qemu_machine("tcg")
        self.assertEqual(argv[argv.index("-smp") + 1], "16,sockets=4")
        self.assertEqual(argv[argv.index("-cpu") + 1], hv.cpu)
        self.assertEqual(argv[-4:], ["-kernel", "/boot/vmlinuz-x", "-append",
                                     "console=ttyS0 panic=-1 lpj=123"])


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
    """linuxref.boot against a stand-in for QEMU that prints on a clock,
    in a run folder as tools/run writes one."""

    def setUp(self):
        self.dir = Path(self.enterContext(tempfile.TemporaryDirectory()))

    def fake(self, *args):
        return [sys.executable, "-c", FAKE_QEMU, *args]

    def test_stops_at_the_end_marker_and_kills(self):
        boot = linuxref.boot(self.fake("30"), self.dir, timeout=20)
        self.assertFalse(boot.timed_out)
        self.assertLess(boot.wall, 10)          # killed, not waited for
        self.assertNotEqual(boot.exit_status, 0)
        texts = [t for _, t in boot.lines()]
        self.assertEqual(texts[-1], "smp: Brought up 1 node, 2 CPUs")
        self.assertEqual(serial.read_times(
            (self.dir / "serial.times").read_text()), boot.lines())
        self.assertIn(b"early line", (self.dir / "serial.log").read_bytes())
        b = linuxref.parse(boot.lines())
        self.assertGreater(b["ms"], 250)
        self.assertLess(b["ms"], 2000)

    def test_timeout(self):
        script = "import time; print('hello', flush=True); time.sleep(30)"
        boot = linuxref.boot([sys.executable, "-c", script], self.dir,
                             timeout=0.5)
        self.assertTrue(boot.timed_out)
        self.assertEqual(boot.lines()[0][1], "hello")

    def test_stderr_is_kept(self):
        script = "import sys; sys.stderr.write('qemu: bad -cpu\\n')"
        boot = linuxref.boot([sys.executable, "-c", script], self.dir,
                             timeout=10)
        self.assertEqual(boot.stderr_lines(), ["qemu: bad -cpu"])
        self.assertEqual(boot.exit_status, 0)
        with self.assertRaises(serial.CannotStart):
            linuxref.boot(["/nonexistent/qemu"], self.dir, timeout=10)


class Heading(unittest.TestCase):
    def test_without_linux(self):
        # --no-linux: no kernel to name, one line per preset lpj.
        bench = smp.Bench(parse("--no-linux"), None)
        bench.meta = {"host": {"qemu": "10.0.2"}, "linux": None}
        bench.lpjs = {"Skylake-Client": (8383976, "hvprobe lpj test"),
                      "qemu64": (8383972, "hvprobe lpj test")}
        head = bench.heading(complete=True)
        self.assertEqual(head[1:], [
            "preset lpj on Skylake-Client: 8383976 (hvprobe lpj test)",
            "preset lpj on qemu64: 8383972 (hvprobe lpj test)"])

    def test_backport_named_once(self):
        bench = smp.Bench(parse(), None)
        bench.meta = {"host": {"qemu": "10.0.2"}, "linux": {
            "vmlinuz": "/x/vmlinuz-6.1.0-57-amd64", "version": "6.1.158-1",
            "backport": "/x/vmlinuz-6.12.95+deb12-amd64"}}
        bench.lpjs = {"Skylake-Client": (1, "a"), "qemu64": (2, "b")}
        head = bench.heading(complete=False)
        self.assertEqual(sum("vmlinuz-6.12" in line for line in head), 1)
        self.assertTrue(head[-1].startswith("INCOMPLETE"))


class CommandLine(unittest.TestCase):
    def error(self, *argv):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), \
                self.assertRaises(SystemExit) as cm:
            parse(*argv)
        self.assertEqual(cm.exception.code, 2)
        self.assertNotIn("Traceback", err.getvalue())
        return err.getvalue()

    def test_defaults(self):
        a = parse()
        self.assertEqual((a.runs, a.vcpus, a.nodes), (3, [1, 4, 16, 32, 64],
                                                      [1, 4]))
        self.assertEqual(a.cpu, ["Skylake-Client", "qemu64"])
        self.assertEqual(a.accel, "tcg")
        self.assertEqual((a.lpj_modes, a.bringup, a.timeout),
                         (["none", "node", "preset", "linux61", "linux65"],
                          ["serial", "parallel", "linux65"],
                          300))

    def test_quick_and_overrides(self):
        a = parse("--quick")
        self.assertEqual((a.runs, a.vcpus), (1, [1, 4, 16]))
        self.assertEqual(len(a.specs), 2 * 5 * 11)
        a = parse("--quick", "--runs", "2", "--vcpus", "8,8,2",
                  "--cpu", "qemu64", "--lpj-modes", "preset,none",
                  "--accel", "tcg", "--mem", "512M", "--timeout", "30")
        self.assertEqual((a.runs, a.vcpus, a.cpu, a.lpj_modes),
                         (2, [8, 2], ["qemu64"], ["preset", "none"]))
        self.assertEqual([(s.vcpus, s.numa, s.axes["lpj"]) for s in
                          a.specs[:3]], [(8, 1, "preset"), (8, 1, "preset"),
                                         (8, 1, "none")])
        self.assertEqual({(s.mem_mib, s.timeout) for s in a.specs},
                         {(512, 30)})

    def test_fresh_run_names(self):
        # Run folders are named after the matrix's scenarios, whatever
        # the CPU model holds.
        a = parse("--cpu", "qemu64,+invtsc", "--vcpus", "4", "--nodes", "1",
                  "--bringup", "serial", "--lpj-modes", "none")
        self.assertEqual([s.name for s in a.specs],
                         ["smp-cpuqemu64_+invtsc-vcpus4-numa1-none-serial"])
        self.assertEqual(a.specs[0].cpu, "qemu64,+invtsc")

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
        self.assertIn("at most 64", self.error("--cpu", "x" * 40))


if __name__ == "__main__":
    unittest.main()
