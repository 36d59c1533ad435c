# SPDX-License-Identifier: MIT
"""tools/host-cancel-probe without a KVM host: its reading of perf stat's
CSV, its per-vCPU arithmetic and the join with the guest's DATA, and,
with a fake perf first on PATH and a fake /proc, the commands it runs and
the probe it always removes, Ctrl-C included."""

import contextlib
import io
import json
import os
import stat
import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path
from unittest import mock

from tools import ROOT
from tools.commands import host_cancel_probe as probe

EV = "probe:hvprobe_cancel"
# perf stat -x ';' -I 1000 --per-thread -t ... as perf-stat(1)'s CSV
# FORMAT lays it out: time; comm-tid; count; unit; event; run time; %.
# The second interval is cut short, as by Ctrl-C or the sleep ending.
PER_THREAD = f"""\
# started on Sat Nov 30 05:00:00 2026

     1.000500000;CPU 0/KVM-4242;1200;;{EV};1000400000;100.00;;
     1.000500000;CPU 1/KVM-4243;900;;{EV};1000400000;100.00;;
     2.000500000;CPU 0/KVM-4242;1400;;{EV};1000000000;100.00;;
     2.000500000;CPU 1/KVM-4243;<not counted>;;{EV};0;0.00;;
     2.500500000;CPU 0/KVM-4242;300;;{EV};500000000;100.00;;
     2.500500000;CPU 1/KVM-4243;450;;{EV};500000000;100.00;;
"""
# -a: no identifier field; a pre-5.10 perf adds a summary without a time.
TOTAL = f"""\
1.001000000;3000;;{EV};8008000000;100.00;;
2.002000000;5000;;{EV};8008000000;100.00;;
8000;;{EV};16016000000;100.00;;
"""
DATA = {"test": "pmi_stress", "vendor": "intel", "pmu_version": 5,
        "lvtpc": "nmi", "period": 10000, "seconds": 60, "cpus": 2,
        "pmis": 144000, "pmis_per_s_per_cpu": 1200}

# Logs its arguments one call a line, answers `probe -l` from $FAKE_LIST,
# fails a plain `probe -a` when $FAKE_NEED_M is set (as perf with a
# vmlinux but no module path does), and makes `stat` write $FAKE_STAT to
# its -o file, sending SIGINT to its parent first when $FAKE_SIGINT is set.
FAKE_PERF = r"""#!/bin/sh
echo "$*" >> "$FAKE_LOG"
case "$1" in
probe)
	case "$*" in
	*" -l"*) [ -n "$FAKE_LIST" ] && cat "$FAKE_LIST"; exit 0 ;;
	*" -m "*) exit 0 ;;
	*" -a "*) [ -n "$FAKE_NEED_M" ] && { echo "no symbol" >&2; exit 1; }
		exit 0 ;;
	esac
	exit 0 ;;
stat)
	out=
	while [ $# -gt 0 ]; do
		[ "$1" = -o ] && out=$2
		shift
	done
	cp "$FAKE_STAT" "$out"
	if [ -n "$FAKE_SIGINT" ]; then
		kill -INT $PPID
		sleep 1
		exit 130
	fi
	exit 0 ;;
esac
exit 1
"""


class Parsing(unittest.TestCase):
    def test_per_thread_csv(self):
        samples = probe.parse_stat(PER_THREAD)
        self.assertEqual(len(samples), 5, "the <not counted> line is left")
        self.assertEqual(samples[0], (1.0005, "CPU 0/KVM-4242", 1200))
        self.assertEqual(probe.thread_id("CPU 0/KVM-4242"), 4242)
        self.assertIsNone(probe.thread_id("qemu-system-x86"))

    def test_total_csv_and_summary(self):
        samples = probe.parse_stat(TOTAL)
        self.assertEqual(samples, [(1.001, None, 3000), (2.002, None, 5000)])

    def test_other_events_and_junk_are_ignored(self):
        self.assertEqual(probe.parse_stat(
            "1.0;5;;cycles;1;100.00;;\nnonsense\n\n;;;" + EV + ";\n"), [])

    def test_rates_per_interval(self):
        r = probe.rates(probe.parse_stat(PER_THREAD))
        total, seconds, mean, peak = r["CPU 0/KVM-4242"]
        self.assertEqual(total, 2900)
        self.assertAlmostEqual(seconds, 2.5005)
        self.assertAlmostEqual(mean, 2900 / 2.5005)
        # 1400 in 1.0 s, 300 in 0.5 s: the first is the peak.
        self.assertAlmostEqual(peak, 1400.0)
        total, _, _, peak = r["CPU 1/KVM-4243"]
        self.assertEqual(total, 1350)
        self.assertAlmostEqual(peak, 900.0, delta=1.0)  # 450 in 0.5 s
        self.assertEqual(probe.rates([]), {})

    def test_vendor_and_symbol(self):
        self.assertEqual(probe.vendor("vendor_id\t: GenuineIntel\n"), "intel")
        self.assertEqual(probe.vendor("vendor_id\t: AuthenticAMD\n"), "amd")
        with self.assertRaises(probe.CannotRun):
            probe.vendor("vendor_id\t: CentaurHauls\n")
        kallsyms = ("ffffffffc0a01230 t vmx_cancel_injection\t[kvm_intel]\n"
                    "ffffffff81000000 T _stext\n")
        self.assertEqual(probe.symbol_module(kallsyms,
                                             "vmx_cancel_injection"),
                         "kvm_intel")
        self.assertEqual(probe.symbol_module(kallsyms, "_stext"), "")
        self.assertIsNone(probe.symbol_module(kallsyms,
                                              "svm_cancel_injection"))

    def test_stat_argv(self):
        base = ["perf", "stat", "-x", ";", "-I", "1000", "-e", EV, "-o", "f"]
        self.assertEqual(probe.stat_argv("perf", 5, "f", [7, 8], 6),
                         base + ["--per-thread", "-t", "7,8",
                                 "--", "sleep", "5"])
        self.assertEqual(probe.stat_argv("perf", 5, "f", [], 6),
                         base + ["-p", "6", "--", "sleep", "5"])
        self.assertEqual(probe.stat_argv("perf", 5, "f"),
                         base + ["-a", "--", "sleep", "5"])


class Guest(unittest.TestCase):
    def write(self, text):
        f = tempfile.NamedTemporaryFile("w", delete=False)
        self.addCleanup(os.unlink, f.name)
        with f:
            f.write(text)
        return f.name

    def test_serial_log(self):
        log = ("KTAP version 1\n1..1\n    KTAP version 1\n"
               "    # Subtest: pmi_stress\n    ok 1 counted\n"
               f"    # DATA {json.dumps(DATA)}\n    1..1\nok 1 pmi_stress\n"
               "# Totals: pass:1 fail:0 skip:0 error:0\n")
        self.assertEqual(probe.guest_data(self.write(log)), DATA)

    def test_results_json(self):
        doc = {"tests": [{"name": "boot", "data": [{"test": "boot"}]},
                         {"name": "pmi_stress", "data": [DATA]}]}
        self.assertEqual(probe.guest_data(self.write(json.dumps(doc))), DATA)

    def test_no_stress(self):
        self.assertIsNone(probe.guest_data(self.write("KTAP version 1\n")))


class Report(unittest.TestCase):
    def test_per_vcpu_rows_and_join(self):
        threads = {4242: 0, 4243: 1}
        rows = probe.rows_for(probe.rates(probe.parse_stat(PER_THREAD)),
                              threads)
        self.assertEqual([r[0] for r in rows], ["CPU 0", "CPU 1"])
        text = "\n".join(probe.report(rows, 2, DATA))
        mean = (2900 + 1350) / 2.5005 / 2
        self.assertIn(f"per second per vCPU: {mean:.1f} (mean of 2 vCPU "
                      "threads)", text)
        self.assertIn("2 CPUs, 144000 PMIs, 1200 PMIs/s per CPU", text)
        self.assertIn(f"per guest PMI: {mean / 1200:.3f}", text)

    def test_total_shared_over_vcpus(self):
        rows = probe.rows_for(probe.rates(probe.parse_stat(TOTAL)), {})
        self.assertEqual(rows[0][0], "total")
        text = "\n".join(probe.report(rows, 4, None))
        self.assertIn(f"{8000 / 2.002 / 4:.1f} (total / 4 vCPUs)", text)
        text = "\n".join(probe.report(rows, None, None))
        self.assertIn("per vCPU: ? (vCPU count unknown", text)

    def test_vcpu_order_is_numeric(self):
        per = {f"CPU {i}/KVM-{100 + i}": (1, 1.0, 1.0, 1.0)
               for i in (10, 2, 1)}
        rows = probe.rows_for(per, {110: 10, 102: 2, 101: 1})
        self.assertEqual([r[0] for r in rows], ["CPU 1", "CPU 2", "CPU 10"])

    def test_nothing_counted(self):
        self.assertEqual(probe.report([], 2, None),
                         ["perf printed no intervals"])


class FakeHost(unittest.TestCase):
    """main() against a fake /proc and a fake perf on PATH."""

    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.dir = Path(tmp.name)
        proc = self.dir / "proc"
        (proc / "77" / "task").mkdir(parents=True)
        (proc / "cpuinfo").write_text("processor\t: 0\n"
                                      "vendor_id\t: GenuineIntel\n")
        (proc / "kallsyms").write_text(
            "ffffffffc0a01230 t vmx_cancel_injection\t[kvm_intel]\n")
        for tid, comm in ((77, "qemu-system-x86"), (4242, "CPU 0/KVM"),
                          (4243, "CPU 1/KVM"), (80, "IO mon_iothread")):
            (proc / "77" / "task" / str(tid)).mkdir()
            (proc / "77" / "task" / str(tid) / "comm").write_text(comm + "\n")
        bindir = self.dir / "bin"
        bindir.mkdir()
        perf = bindir / "perf"
        perf.write_text(FAKE_PERF)
        perf.chmod(perf.stat().st_mode | stat.S_IXUSR)
        (self.dir / "stat.csv").write_text(PER_THREAD)
        (self.dir / "guest.json").write_text(json.dumps(
            {"tests": [{"name": "pmi_stress", "data": [DATA]}]}))
        self.log = self.dir / "perf.log"
        self.env = {"PATH": f"{bindir}:{os.environ.get('PATH', '')}",
                    "FAKE_LOG": str(self.log),
                    "FAKE_STAT": str(self.dir / "stat.csv")}
        self.proc = proc

    def main(self, *argv, euid=0, **env):
        out = io.StringIO()
        with mock.patch.dict(os.environ, {**self.env, **env}), \
                mock.patch.object(probe, "PROC", self.proc), \
                mock.patch.object(probe, "geteuid", lambda: euid), \
                contextlib.redirect_stdout(out), \
                contextlib.redirect_stderr(io.StringIO()):
            rc = probe.main(list(argv))
        return rc, out.getvalue()

    def calls(self):
        return self.log.read_text().splitlines() if self.log.exists() else []

    def test_vcpu_threads(self):
        with mock.patch.object(probe, "PROC", self.proc):
            self.assertEqual(probe.vcpu_threads(77), {4242: 0, 4243: 1})

    def test_per_vcpu_run(self):
        rc, out = self.main("-d", "3", "-p", "77", "--guest",
                            str(self.dir / "guest.json"))
        self.assertEqual(rc, 0, out)
        calls = self.calls()
        self.assertEqual(calls[0], "probe -l")
        self.assertEqual(calls[1], "probe -q -a hvprobe_cancel="
                                   "vmx_cancel_injection")
        self.assertTrue(calls[2].startswith(f"stat -x ; -I 1000 -e {EV} -o "))
        self.assertTrue(calls[2].endswith(
            "--per-thread -t 4242,4243 -- sleep 3"), calls[2])
        self.assertEqual(calls[3], f"probe -q -d {EV}")
        self.assertEqual(len(calls), 4)
        self.assertIn("on 2 vCPU threads of process 77", out)
        self.assertRegex(out, r"CPU 0 +2900 ")
        self.assertRegex(out, r"CPU 1 +1350 ")
        self.assertIn("per guest PMI: ", out)

    def test_module_retry(self):
        rc, _ = self.main("-d", "1", FAKE_NEED_M="1")
        self.assertEqual(rc, 0)
        calls = self.calls()
        self.assertIn("probe -q -m kvm_intel -a hvprobe_cancel="
                      "vmx_cancel_injection", calls)
        self.assertTrue(calls[-2].endswith("-a -- sleep 1"), calls)
        self.assertEqual(calls[-1], f"probe -q -d {EV}")

    def test_probe_already_there(self):
        listed = self.dir / "list"
        listed.write_text(f"  {EV}      (on vmx_cancel_injection in "
                          "kvm_intel)\n")
        with self.assertRaisesRegex(probe.CannotRun, "already exists.*-d"):
            self.main("-d", "1", FAKE_LIST=str(listed))
        self.assertEqual(self.calls(), ["probe -l"], "nothing added or "
                         "removed: the probe is not ours to delete")

    def test_refusals(self):
        with self.assertRaisesRegex(probe.CannotRun, "root"):
            self.main("-d", "1", euid=1000)
        with self.assertRaisesRegex(probe.CannotRun, "not found"):
            self.main("-d", "1", "--perf", "no-such-perf")
        (self.proc / "kallsyms").write_text("ffffffff81000000 T _stext\n")
        with self.assertRaisesRegex(probe.CannotRun,
                                    "vmx_cancel_injection.*kvm_intel"):
            self.main("-d", "1")
        self.assertEqual(self.calls(), [], "perf never ran")

    def test_ctrl_c_removes_the_probe(self):
        # A process of its own: the fake perf sends SIGINT to its parent.
        code = textwrap.dedent(f"""
            import sys
            from pathlib import Path
            from tools.commands import host_cancel_probe as p
            p.PROC = Path({str(self.proc)!r})
            p.geteuid = lambda: 0
            try:
                sys.exit(p.main(["-d", "5", "-p", "77"]))
            except KeyboardInterrupt:
                sys.exit(99)
            """)
        done = subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, capture_output=True,
            text=True, timeout=60,
            env={**os.environ, **self.env, "FAKE_SIGINT": "1"})
        self.assertEqual(done.returncode, 130, done.stdout + done.stderr)
        self.assertEqual(self.calls()[-1], f"probe -q -d {EV}")
        self.assertRegex(done.stdout, r"CPU 0 +2900 ", "partial counts shown")


if __name__ == "__main__":
    unittest.main()
