# SPDX-License-Identifier: MIT
"""bench/thread-table: the lpj thread's rows from the scenario, hvprobe's
and Linux's figures read from made-up logs, and the table they make (no
QEMU needed)."""

import contextlib
import io
import json
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from bench.commands import thread_table as tt
from bench.lib import threadtable as tab
from tools.lib import referee
from tools.lib.hostkernels import nested
from tools.lib.analysis import resultset


def hvprobe_doc(total_us=952000, hz=1000, sources=("lpj_fine", "calibrate",
                                                    "copied", "calibrate")):
    """The results document of an smp run whose CPUs got lpj from
    sources (the boot CPU first); every AP ran the TSC-sync check, the
    first of its package 20 ms, its sibling 2 ms."""
    aps = [{"cpu": i, "lpj_source": s, "tsc_sync_ms": 20 if i % 2 else 2}
           for i, s in enumerate(sources)]
    smp = {"test": "smp", "cpus": len(sources), "bringup": "serial",
           "lpj_policy": "linux-6.1", "lpj_source": sources[0],
           "calibrations": 3, "hz": hz, "total_us": total_us,
           "tsc_sync_checks": len(sources) - 1, "tsc_warps": 0,
           "tsc_sync_us": 61234, "aps": aps}
    text = "\n".join(["KTAP version 1", "1..1", "    KTAP version 1",
                      "    # Subtest: smp", f"    # DATA {json.dumps(smp)}",
                      "    ok 1 all CPUs online", "    1..1", "ok 1 smp",
                      "# Totals: pass:1 fail:0 skip:0 error:0"]) + "\n"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "serial.log"
        path.write_text(text)
        return resultset.doc_from_log(path, [])


@contextlib.contextmanager
def nested_l1(run):
    """run_nested() with run standing for nested.run() and nothing of
    this machine read: its host kernel, Linux's images, L0, QEMU."""
    with contextlib.ExitStack() as stack:
        for target, name, value in (
                (tt.hostkernel, "resolve",
                 mock.Mock(describe=lambda: "Debian 6.12")),
                (tt, "linux_kernels", ({}, {})),
                (tt.nested, "choose_l0", mock.Mock(accel="tcg", why="test")),
                (tt.kvm_lib, "flavour_works", ("kvm_pvm", False)),
                (tt.hostinfo, "qemu_version", (10, 0, 2))):
            stack.enter_context(mock.patch.object(target, name,
                                                  return_value=value))
        stack.enter_context(mock.patch.object(tt.nested, "run", run))
        yield


# Linux 6.1 on four packages of two CPUs: the boot CPU from the TSC's
# rate, CPU 1 copies it, CPUs 2, 4 and 6 (each the first of its
# package) calibrate, 3, 5 and 7 copy theirs.
LINUX_LINES = [
    (7.50, "[    0.000000] Linux version 6.1.0-57-cloud-amd64"),
    (7.90, "[    0.004011] Calibrating delay loop (skipped), value "
           "calculated using timer frequency.. 4190.00 BogoMIPS "
           "(lpj=8380000)"),
    (8.10, "[    0.969070] smpboot: x86: Booting SMP configuration:"),
    (10.85, "[    1.182693] smp: Brought up 4 nodes, 8 CPUs"),
]
BOGOMIPS = ["4190.00", "4190.00", "4201.12", "4201.12", "4188.31", "4188.31",
            "4195.07", "4195.07"]
REFEREE_TEXT = "\n".join(
    [text for _, text in LINUX_LINES] + [referee.BEGIN] +
    [f"processor\t: {i}\nphysical id\t: {i // 2}\nbogomips\t: {b}"
     for i, b in enumerate(BOGOMIPS)] +
    [LINUX_LINES[1][1]] +
    # check_tsc_sync_source()'s pr_debug (tsc_sync.c v6.1) for each AP,
    # and dynamic debug's control line saying it is on.
    [f"[    1.0{i}0000] TSC synchronization [CPU#0 -> CPU#{i}]: passed"
     for i in range(1, 8)] +
    [f"{referee.DYNDBG}arch/x86/kernel/tsc_sync.c:398 [tsc_sync]"
     "check_tsc_sync_source =p \"TSC synchronization [CPU#%d -> CPU#%d]: "
     "passed\\n\"", referee.END]) + "\n"


class Figures(unittest.TestCase):
    def test_hvprobe(self):
        f = tab.hvprobe_figures(hvprobe_doc())
        self.assertEqual(f["ms"], 952.0)
        # The TSC-sync check apart: 3 APs ran it, 61.2 ms on the BSP.
        self.assertEqual((f["sync_checks"], f["sync_ms"]), (3, 61.234))
        # APs only: the boot CPU's lpj_fine is not a calibration.
        self.assertEqual(f["ap_calibrations"], 2)
        self.assertEqual((f["hz"], f["policy"], f["bringup"],
                          f["bsp_lpj_source"]),
                         (1000, "linux-6.1", "serial", "lpj_fine"))
        self.assertIsNone(f["error"])
        # A boot CPU that calibrated is still not an AP.
        f = tab.hvprobe_figures(hvprobe_doc(sources=("calibrate",
                                                     "calibrate", "copied")))
        self.assertEqual(f["ap_calibrations"], 1)
        f = tab.hvprobe_figures(None)
        self.assertIsNone(f["ms"])
        self.assertEqual(f["error"], "no smp DATA line with total_us")

    def test_linux(self):
        f = tab.linux_figures(LINUX_LINES, REFEREE_TEXT, 8)
        self.assertEqual(f["ms"], 2750.0)
        self.assertEqual(f["ap_calibrations"], 3)
        self.assertEqual(f["bsp_lpj_source"], "lpj_fine")
        self.assertEqual(f["sync_checks"], 7)
        self.assertIsNone(f["error"])
        # Without dyndbg's control line a silent check is no count.
        f = tab.linux_figures(LINUX_LINES, REFEREE_TEXT.replace(" =p ",
                                                                " =_ "), 8)
        self.assertIsNone(f["sync_checks"])
        # Short of CPUs: no time; no end marker: no count, and it says so.
        self.assertEqual(tab.linux_figures(LINUX_LINES, REFEREE_TEXT,
                                           16)["error"],
                         "brought up 8 of 16 CPUs")
        f = tab.linux_figures(LINUX_LINES, "no markers\n", 8)
        self.assertIsNone(f["ap_calibrations"])
        self.assertEqual(f["error"], "the referee initramfs never finished")
        f = tab.linux_figures(LINUX_LINES[:3], REFEREE_TEXT, 8)
        self.assertEqual(f["error"], "no 'smp: Brought up' line")

    def test_config_hz(self):
        with tempfile.TemporaryDirectory() as tmp:
            boot = Path(tmp)
            (boot / "config-6.1.0-57-cloud-amd64").write_text(
                "CONFIG_HZ_250=y\nCONFIG_HZ=250\n")
            self.assertEqual(tab.config_hz(boot / "vmlinuz-6.1.0-57-cloud"
                                                  "-amd64"), 250)
            self.assertIsNone(tab.config_hz(boot / "vmlinuz-6.12"))


class Rows(unittest.TestCase):
    def test_five_rows_from_the_scenario(self):
        pairs = tt.rows_and_specs(list(tab.ROWS), "tcg")
        got = [(r.name, r.cpu, r.vcpus, r.nodes, r.preset, r.thread_ms)
               for r, _ in pairs]
        self.assertEqual(got, [
            ("calibrating-16", "qemu64,vendor=AuthenticAMD", 16, 1, False,
             "~1300"),
            ("preset-16", "qemu64,vendor=AuthenticAMD", 16, 1, True, "~130"),
            ("one-node-32", "Skylake-Client", 32, 1, False, "26"),
            ("four-nodes-32", "Skylake-Client", 32, 4, False, "~210"),
            ("preset-32", "Skylake-Client", 32, 4, True, "32")])
        # HZ per row: 250 for the 16-vCPU report, 1000 for the 32.
        self.assertIn("hz=250", pairs[0][1].cmdline)
        self.assertIn("hz=1000", pairs[3][1].cmdline)
        # Under KVM too: QEMU would give qemu64 the host's vendor.
        kvm = tt.rows_and_specs(["calibrating-16"], "kvm")
        self.assertEqual(kvm[0][0].cpu,
                         "qemu64,vendor=AuthenticAMD,-kvmclock")
        quick = tt.rows_and_specs(["calibrating-16", "four-nodes-32"], "tcg",
                                  quick=True)
        self.assertEqual([(r.vcpus, r.nodes) for r, _ in quick],
                         [(4, 1), (8, 4)])

    def test_every_row_on_n_vcpus(self):
        # --vcpus 2 (a nested L2 no wider than L1): each row on 2 vCPUs,
        # a row of four nodes on two, in hvprobe's boots as in Linux's,
        # and the table says so.
        pairs = tt.rows_and_specs(["calibrating-16", "four-nodes-32"], "kvm",
                                  True, tab.HYPERV_CPU, vcpus=2)
        self.assertEqual([(r.vcpus, r.nodes, s.vcpus, s.numa)
                          for r, s in pairs], [(2, 1, 2, 1), (2, 2, 2, 2)])
        one = tt.hvprobe_spec(pairs[1][1], pairs[1][0], "linux-6.1", "serial",
                              "kvm", 60, 1)
        self.assertEqual((one.vcpus, one.numa, one.cpu),
                         (2, 2, tab.HYPERV_CPU))
        self.assertIn("(--vcpus 2: 2 vCPUs and at most 2 nodes where the "
                      "thread had 16 and 32 vCPUs)",
                      tab.table([r for r, _ in pairs], 1, {}, "kvm", True,
                                2)[0])
        args = tt.parse_args(["--quick", "--hyperv", "--host-kernel", "6.12",
                              "--vcpus", "2", "--no-build"])
        self.assertEqual(tt.inner_argv(args, Path("/r/t.json"),
                                       "preset-16")[-2:], ["--vcpus", "2"])
        with contextlib.redirect_stderr(io.StringIO()), \
                self.assertRaises(SystemExit):
            tt.parse_args(["--vcpus", "0"])

    def test_hvprobe_spec_names_policy_and_bringup(self):
        row, spec = tt.rows_and_specs(["four-nodes-32"], "tcg", True)[0]
        one = tt.hvprobe_spec(spec, row, "linux-6.5", "linux-6.5", "tcg",
                              120, 2)
        self.assertEqual(one.cmdline, ["test=smp,lpj", "hz=1000",
                                       "lpj_policy=linux-6.5",
                                       "bringup=linux-6.5"])
        self.assertEqual((one.vcpus, one.numa, one.accel, one.run_name),
                         (8, 4, "tcg",
                          "lpj-thread.four-nodes-32-linux-6.5-linux-6.5-r2"))
        self.assertEqual(spec.vcpus, 32)        # the scenario's own spec

    def test_linux_boots_with_dyndbg_for_tsc_sync(self):
        row, _ = tt.rows_and_specs(["four-nodes-32"], "tcg", True)[0]
        got = {}

        def argv(*args, **kwargs):
            got["extra"] = kwargs.get("extra")
            return ["qemu"]

        class Boot:
            timed_out = False

            def __init__(self, run_dir, until):
                self.run_dir = run_dir

            def boot(self, argv, timeout):
                (self.run_dir / "serial.log").write_text(REFEREE_TEXT)

            def lines(self):
                return LINUX_LINES

            def killed(self):
                return None

        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.object(tt.linuxref, "qemu_argv", argv), \
                mock.patch.object(tt.linuxref, "Boot", Boot), \
                mock.patch.object(tt.referee, "initramfs",
                                  lambda out: Path(out)):
            figs = tt.boot_linux(Path("/k/vmlinuz-6.1"), row, 512, "tcg",
                                 None, Path(tmp), 60)
        self.assertEqual(got["extra"], ('dyndbg="file tsc_sync.c +p"',))
        self.assertTrue(figs["cmdline"].endswith('dyndbg="file tsc_sync.c '
                                                 '+p"'))
        self.assertEqual(figs["sync_checks"], 7)

    def boot_linux(self, consoles, cut_short=False):
        """boot_linux() over boots whose consoles are consoles, one per
        boot, each QEMU exiting 0 by itself (a reset, without the end
        marker) unless cut_short; (figures, the run folder's files)."""
        row, _ = tt.rows_and_specs(["four-nodes-32"], "tcg", True)[0]
        left = list(consoles)

        class Boot:
            timed_out = flooded = False

            def __init__(self, run_dir, until):
                self.run_dir = run_dir
                self.cut_short, self.exit_status = cut_short, \
                    None if cut_short else 0
                self.wall = 19.6

            def boot(self, argv, timeout):
                (self.run_dir / "serial.log").write_text(left.pop(0))

            def lines(self):
                return LINUX_LINES

            def killed(self):
                return None

        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.object(tt.linuxref, "qemu_argv",
                                  lambda *a, **k: ["qemu"]), \
                mock.patch.object(tt.linuxref, "Boot", Boot), \
                mock.patch.object(tt.referee, "initramfs",
                                  lambda out: Path(out)):
            figs = tt.boot_linux(Path("/k/vmlinuz-6.1"), row, 512, "kvm",
                                 None, Path(tmp), 60)
            files = sorted(p.name for p in Path(tmp).iterdir())
        return figs, files

    def test_linux_that_reset_says_so(self):
        # Brought up, then reset before the initramfs ran, on every one
        # of referee.BOOTS boots: timed, no count, and the line says QEMU
        # exited (-no-reboot) rather than "None APs calibrated".
        brought_up = "\n".join(t for _, t in LINUX_LINES) + "\n"
        figs, files = self.boot_linux([brought_up] * 4)
        self.assertEqual(figs["ms"], 2750.0)
        self.assertIsNone(figs["ap_calibrations"])
        self.assertEqual(figs["resets"], 3)
        self.assertEqual(figs["error"], "the referee initramfs never "
                         "finished (QEMU exited with status 0 after 20 s, "
                         "with no end marker: the guest reset or powered "
                         "off (-no-reboot); each of its 4 boots reset)")
        self.assertEqual(files, ["serial.log", "serial.log.reset-1",
                                 "serial.log.reset-2", "serial.log.reset-3"])
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            tt.say(7, 40, "calibrating-16 Linux 6.1", figs)
        self.assertEqual(out.getvalue(),
                         "[7/40] calibrating-16 Linux 6.1: 2750.0 ms, APs "
                         f"calibrated unknown: {figs['error']}\n")

    def test_linux_that_reset_once_boots_again(self):
        figs, files = self.boot_linux(["Linux version 6.1\nNetLabel: I",
                                       REFEREE_TEXT], cut_short=False)
        self.assertEqual((figs["ap_calibrations"], figs["resets"],
                          figs["error"]), (3, 1, None))
        self.assertEqual(files, ["serial.log", "serial.log.reset-1"])

    def test_linux_stopped_at_a_fatal_line_is_not_booted_again(self):
        figs, files = self.boot_linux(["Kernel panic - not syncing"],
                                      cut_short=True)
        self.assertEqual(figs["error"], "the referee initramfs never finished")
        self.assertEqual((figs["resets"], files), (0, ["serial.log"]))

    def test_linux_lpj_at_linux_hz(self):
        # lpj=host at Linux's HZ, not the row's: 2095.2 MHz / 250.
        with mock.patch("tools.lib.hostinfo.tsc_mhz",
                        return_value=(2095.2, "test")):
            self.assertEqual(tt.linux_lpj(250), 8380800)
            self.assertEqual(tt.linux_lpj(1000), 2095200)


class Table(unittest.TestCase):
    def row(self):
        row = tab.Row("four-nodes-32", "Skylake-Client", 32, 4, False, "~210")
        row.hvprobe[("linux-6.1", "serial")] = [
            {"ms": 952.0, "ap_calibrations": 3, "hz": 1000,
             "sync_checks": 31, "sync_ms": 110.0},
            {"ms": 900.0, "ap_calibrations": 3, "hz": 1000,
             "sync_checks": 31, "sync_ms": 104.0}]
        row.hvprobe[("hvprobe", "parallel")] = [
            {"ms": None, "ap_calibrations": None, "hz": None}]
        row.hvprobe[("linux-6.5", "linux-6.5")] = [
            {"ms": 370.8, "ap_calibrations": 0, "hz": 1000},
            {"ms": 400.0, "ap_calibrations": 1, "hz": 1000},
            {"ms": None, "ap_calibrations": None, "hz": None}]
        row.linux = {"6.1": [{"ms": 2739.4, "ap_calibrations": 3,
                              "sync_checks": 31}],
                     "6.12": [{"ms": 2445.0, "ap_calibrations": 0}]}
        row.linux_hz = {"6.1": 250, "6.12": 250}
        return row

    def test_a_run_with_a_time_and_an_error_is_marked(self):
        # Linux 6.12 under L1 once brought its CPUs up and never
        # finished its initramfs: a time, no count, and the line must
        # not pass for a whole run.
        row = self.row()
        row.linux["6.12"] = [{"ms": 3587.8, "ap_calibrations": None,
                              "error": "the referee initramfs never "
                              "finished (still running after 300 s)"}]
        body = tab.table([row], 1, {}, "kvm")[4:4 + len(tab.CONFIGS) + 2]
        self.assertEqual(body[7].split()[-3:], ["-", "3587.8*", "3587.8"])

    def test_lines_say_who_and_hz(self):
        lines = tab.table([self.row()], 2, {"6.1": "6.1.0-57-cloud-amd64"},
                          "tcg")
        self.assertEqual(lines[0], "The lpj thread's table: TCG, q35, 2 runs"
                                   " per line")
        self.assertEqual(lines[3], "four-nodes-32: 32 vCPUs on 4 nodes (a "
                         "socket per node), -cpu Skylake-Client; the thread "
                         "reported ~210 ms (its Linux, its host)")
        self.assertEqual(lines[1].split(), ["row", "HZ", "who", "cal", "chk",
                                            "sync", "median", "min"])
        body = lines[4:4 + len(tab.CONFIGS) + 2]
        # At 1000 Hz, beside Linux at 250: hvprobe's alone, and it says
        # so; its TSC-sync checks and their time apart.
        self.assertEqual(body[0].split(), [
            "1000", "hvprobe", "lpj_policy=linux-6.1,", "serial", "[HZ",
            "1000:", "hvprobe's", "alone,", "Linux", "ran", "at", "250]",
            "3", "31", "107.0", "926.0", "900.0"])
        quick = tab.table([self.row()], 1, {}, "tcg", quick=True)
        self.assertIn("(--quick: 4 and 8 vCPUs where the thread had 16 and "
                      "32)", quick[0])
        # Runs that disagree on the count show ?, a failed run *.
        # (no run said its checks: an empty chk, no sync time)
        self.assertEqual(body[1].split()[-4:], ["?", "-", "385.4*", "370.8"])
        self.assertIn("bringup=linux-6.5 (Linux 6.5's shape)", body[1])
        self.assertEqual(body[2].split()[-2:], ["-", "-"])      # not run
        self.assertIn("bringup=parallel (hvprobe's own, not Linux)", body[5])
        self.assertEqual(body[5].split()[-2:], ["FAIL", "FAIL"])
        # Linux's lines: its own figures, its own HZ, its release.
        # Linux's TSC-sync checks from dyndbg, and no time for them.
        self.assertEqual(body[6].split(), [
            "250", "Linux", "6.1.0-57-cloud-amd64", "(serial)", "3", "31",
            "-", "2739.4", "2739.4"])
        self.assertEqual(body[7].split(), [
            "250", "Linux", "6.12", "(parallel,", "Linux's", "own)", "0",
            "-", "2445.0", "2445.0"])
        # No hvprobe line is labelled Linux but the shape it copies.
        for line in body[:6]:
            self.assertNotIn("Linux 6.1", line)
            self.assertIn(" hvprobe lpj_policy=", line)

    def test_json(self):
        doc = tab.row_json(self.row())
        self.assertEqual([(h["lpj_policy"], h["bringup"], len(h["runs"]))
                          for h in doc["hvprobe"]],
                         [("linux-6.1", "serial", 2),
                          ("linux-6.5", "linux-6.5", 3),
                          ("hv-preset", "serial", 0),
                          ("hv-preset", "linux-6.5", 0),
                          ("hvprobe", "serial", 0),
                          ("hvprobe", "parallel", 1)])
        self.assertEqual(doc["linux"][1], {"series": "6.12", "hz": 250,
                                           "runs": [{"ms": 2445.0,
                                                     "ap_calibrations": 0}]})


class HyperV(unittest.TestCase):
    def test_rows_under_kvms_hyperv_at_linux_hz(self):
        pairs = tt.rows_and_specs(["calibrating-16", "four-nodes-32"], "kvm",
                                  cpu=tab.HYPERV_CPU)
        self.assertEqual({r.cpu for r, _ in pairs}, {
            "host,-arch-capabilities,hv-relaxed,hv-vpindex,hv-time,"
            "hv-frequencies,kvm=off"})
        row, spec = pairs[1]
        one = tt.hvprobe_spec(spec, row, "linux-6.1", "serial", "kvm", 120,
                              1, hz=250)
        self.assertEqual(one.cmdline, ["test=smp,lpj", "hz=250",
                                       "lpj_policy=linux-6.1",
                                       "bringup=serial"])
        self.assertEqual(one.cpu, tab.HYPERV_CPU)
        self.assertEqual(tt.hvprobe_spec(spec, row, "linux-6.1", "serial",
                                         "kvm", 120, 1).cmdline[1], "hz=1000")

    def test_linux_hz_is_the_images(self):
        self.assertEqual(tt.linux_hz({"6.1": 250, "6.12": 250}), 250)
        with self.assertRaises(tt.CannotRun):
            tt.linux_hz({"6.1": 250, "6.12": 1000})
        with self.assertRaises(tt.CannotRun):
            tt.linux_hz({})

    def test_options(self):
        with contextlib.redirect_stderr(io.StringIO()):
            with self.assertRaises(SystemExit):
                tt.parse_args(["--hyperv"])             # needs KVM
            with self.assertRaises(SystemExit):
                tt.parse_args(["--linux-hz", "--no-linux"])
            with self.assertRaises(SystemExit):
                tt.parse_args(["--host-kernel", "5.10"])
        args = tt.parse_args(["--host-kernel", "6.12", "--hyperv",
                              "--linux-hz", "--rows", "four-nodes-32"])
        self.assertEqual(args.accel, "kvm")     # L1's KVM, real

    def test_host_kernel_runs_the_table_inside_one_l1(self):
        row = Table().row()
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "t.json"
            args = tt.parse_args(["--host-kernel", "6.12", "--hyperv",
                                  "--linux-hz", "--rows", "four-nodes-32",
                                  "--runs", "2", "--output", str(out)])
            got = {}

            def run(kernel, commands, share, timeout, l0, stream, own_dir):
                got["commands"], got["share"] = commands, share
                inner = Path(commands[0][commands[0].index("--output") + 1])
                inner.write_text(json.dumps({
                    "rows": [tab.row_json(row)], "runs": 2,
                    "linux": {"6.1": {"release": "6.1.0-57-cloud-amd64"}}}))
                return nested.Outcome([0], {}, l0, kernel, 1.0,
                                      Path("serial.log"))

            said = io.StringIO()
            with nested_l1(run), \
                    contextlib.redirect_stdout(said):
                rc = tt.run_nested(args)
            self.assertEqual(rc, 0)
            inner = got["commands"][0]
            self.assertEqual(inner[1:6], [str(tt.ROOT / "bench" /
                                              "thread-table"), "--no-build",
                                          "--accel", "kvm", "--rows"])
            for word in ("--hyperv", "--linux-hz"):
                self.assertIn(word, inner)
            self.assertEqual(inner[inner.index("--runs") + 1], "2")
            # L1's run folders outlive it, beside its JSON in the share.
            self.assertEqual(inner[inner.index("--keep") + 1],
                             str(got["share"] / "runs"))
            self.assertNotIn("--host-kernel", inner)
            self.assertTrue(out.exists())
            text = said.getvalue()
            self.assertIn("inside L1 Debian 6.12", text)
            self.assertIn("The lpj thread's table: KVM", text)
            self.assertIn("four-nodes-32: 32 vCPUs on 4 nodes", text)
        self.assertEqual(tab.rows_from_json([tab.row_json(row)])[0].hvprobe,
                         row.hvprobe)

    def test_an_l1_that_dies_is_booted_again_for_the_rows_left(self):
        # L1 dies during the second of three rows, then during the first
        # of the two left, then finishes: one inner run per row, three L1
        # boots, each with its own folder, and one table of all three.
        row = Table().row()
        boots = []

        def run(kernel, commands, share, timeout, l0, stream, own_dir):
            names = [c[c.index("--rows") + 1] for c in commands]
            boots.append((own_dir, names))
            finish = 1
            for c in commands[:finish]:
                Path(c[c.index("--output") + 1]).write_text(json.dumps({
                    "rows": [tab.row_json(row)], "runs": 1, "linux": {}}))
            broken = "watchdog: BUG: soft lockup" if len(boots) == 1 \
                else None
            return nested.Outcome([0] * finish +
                                  [None] * (len(commands) - finish), {}, l0,
                                  kernel, 40.0, Path("serial.log"), broken,
                                  "still running after 900 s")

        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "t.json"
            args = tt.parse_args(["--host-kernel", "6.12", "--rows",
                                  "calibrating-16,preset-16,one-node-32",
                                  "--output", str(out)])
            with nested_l1(run), \
                    contextlib.redirect_stdout(io.StringIO()) as said, \
                    contextlib.redirect_stderr(io.StringIO()) as err:
                rc = tt.run_nested(args)
            doc = json.loads(out.read_text())
        self.assertEqual(boots, [
            ("l1", ["calibrating-16", "preset-16", "one-node-32"]),
            ("l1-2", ["preset-16", "one-node-32"]),
            ("l1-3", ["one-node-32"])])
        self.assertEqual((rc, len(doc["rows"]), doc["unfinished_rows"]),
                         (0, 3, []))
        self.assertIn("L1 ended before 2 of its 3 commands did (preset-16, "
                      "one-node-32; its kernel: watchdog: BUG: soft lockup;",
                      err.getvalue())
        self.assertIn("L1 ended before 1 of its 3 commands did (one-node-32; "
                      "still running after 900 s;", err.getvalue())
        self.assertEqual(said.getvalue().count("four-nodes-32: "), 3)


class CommandLine(unittest.TestCase):
    def test_options(self):
        args = tt.parse_args(["--quick", "--output", "x.json"])
        self.assertEqual((args.runs, args.rows), (1, list(tab.ROWS)))
        args = tt.parse_args(["--rows", "preset-16,one-node-32"])
        self.assertEqual((args.runs, args.rows),
                         (3, ["preset-16", "one-node-32"]))
        self.assertTrue(args.output.endswith(".json"))
        with contextlib.redirect_stderr(io.StringIO()):
            with self.assertRaises(SystemExit):
                tt.parse_args(["--rows", "two-nodes"])
            with self.assertRaises(SystemExit):
                tt.parse_args(["--runs", "0"])


if __name__ == "__main__":
    unittest.main()
