# SPDX-License-Identifier: MIT
"""Input that crashed or flooded the host tools: deep nesting, endless
output, an endless line, absurd sizes and timeouts."""

import contextlib
import io
import json
import sys
import tempfile
import time
import unittest
from pathlib import Path
from unittest import mock

from tools.commands import report as report_cmd
from tools.commands import run, soak
from tools.lib.analysis import ktap, results
from tools.lib.launch import guest, scenario, serial


def nested(levels, indent=" "):
    """A log of `levels` subtests, each inside the last."""
    lines = ["KTAP version 1", "1..1"]
    lines += [indent * i + "KTAP version 1" for i in range(1, levels + 1)]
    lines += [indent * i + "ok 1 x" for i in range(levels, 0, -1)]
    return lines + ["ok 1 top", "# Totals: pass:1 fail:0 skip:0 error:0"]


class Nesting(unittest.TestCase):
    def test_1500_levels(self):
        report = ktap.parse(nested(1500))
        self.assertIn("levels of subtests", report.errors[0])
        tests = [t.to_json() for t in report.tests]
        json.dumps(tests)
        self.assertEqual(results.ktap_verdict(tests), "pass")
        depth = 0
        case = tests[0]
        while case["cases"]:
            case, depth = case["cases"][0], depth + 1
        self.assertLessEqual(depth, ktap.MAX_DEPTH)

    def test_report_refuses_a_deep_results_json(self):
        case = '{"name": "x", "status": "pass", "reason": "", "cases": ['
        def doc(levels):
            return ('{"verdict": "pass", "crash": null, "host_checks": [], '
                    '"problems": [], "tests": [' + case * levels
                    + "]}" * levels + "]}")
        err = io.StringIO()
        with tempfile.TemporaryDirectory() as d:
            paths = {}
            for name, text in (("deep", doc(400)), ("deeper", doc(1500)),
                               ("bad", '{"tests": [{"cases": 5}]}')):
                paths[name] = Path(d) / f"{name}.json"
                paths[name].write_text(text)
            self.assertLess(len(doc(1500)), 100000)
            with contextlib.redirect_stderr(err), \
                    contextlib.redirect_stdout(io.StringIO()):
                for path in paths.values():
                    self.assertEqual(report_cmd.main([str(path)]), 1)
        self.assertIn("nested deeper than", err.getvalue())
        self.assertIn("a test without a name", err.getvalue())
        self.assertIn("deeper.json", err.getvalue())


class Caps(unittest.TestCase):
    def test_results_and_data_per_log(self):
        lines = ["KTAP version 1", "1..1", "    KTAP version 1"]
        lines += [f"    ok {i} c" for i in range(1, 300)]
        lines += ['# DATA {"test": "x"}'] * 300
        lines += ["ok 1 x", "# Totals: pass:1 fail:0 skip:0 error:0"]
        with mock.patch.object(ktap, "MAX_RESULTS", 100), \
                mock.patch.object(ktap, "MAX_DATA", 50):
            report = ktap.parse(lines)
        self.assertEqual(len(report.data), 50)
        # The 100 cases read, under the test left unfinished by the cap.
        self.assertEqual(sum(1 for _ in report.walk()), 101)
        self.assertTrue(any("more than 100 result lines" in e
                            for e in report.errors))


class Bytes(unittest.TestCase):
    """The caps count bytes, not lines: 128 DATA lines of 64 KiB made a
    91 MB results.json and took 357 MB to parse."""

    def test_data_is_capped_by_its_bytes(self):
        payload = '{"test": "x", "v": [' + ",".join(["1"] * 32000) + "]}"
        lines = ["KTAP version 1", "1..1", *[f"# DATA {payload}"] * 128,
                 "ok 1 x", "# Totals: pass:1 fail:0 skip:0 error:0"]
        report = ktap.parse(lines)
        kept = len(report.data) * len(payload)
        self.assertLessEqual(kept, ktap.MAX_DATA_BYTES)
        self.assertGreater(len(report.data), 0)
        self.assertEqual(report.tests[0].data, report.data)
        self.assertTrue(any(f"more than {ktap.MAX_DATA_BYTES} bytes of "
                            "DATA" in e for e in report.errors))
        doc = json.dumps([t.to_json() for t in report.tests], indent=1)
        self.assertLess(len(doc), 8 * ktap.MAX_DATA_BYTES)

    def test_small_data_is_whole(self):
        report = ktap.parse(["KTAP version 1", "1..1",
                             '# DATA {"test": "x", "n": 1}', "ok 1 x",
                             "# Totals: pass:1 fail:0 skip:0 error:0"])
        self.assertEqual(report.data, [{"test": "x", "n": 1}])
        self.assertEqual(report.errors, [])

    def test_a_long_name_and_reason_are_cut_with_a_mark(self):
        name, why = "n" * 200000, "r" * 200000
        report = ktap.parse(["KTAP version 1", "1..1",
                             f"not ok 1 {name} # SKIP {why}",
                             "# Totals: pass:0 fail:0 skip:1 error:0"])
        test = report.tests[0]
        for text, full in ((test.name, name), (test.reason, why)):
            self.assertLess(len(text), ktap.MAX_TEXT + 40)
            self.assertTrue(text.startswith(full[:ktap.MAX_TEXT]))
            self.assertTrue(text.endswith(
                f"[... {len(full) - ktap.MAX_TEXT} more characters]"), text[-60:])


class Flood(unittest.TestCase):
    def boot(self, script, **caps):
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.multiple(serial, **caps):
            run_dir = Path(d)
            g = guest.Run(run_dir, quiet=True)
            start = time.monotonic()
            g.boot([sys.executable, "-c", script], 30)
            took = time.monotonic() - start
            reason = g.crash_reason(30)
            times = (run_dir / serial.TIMES).read_text().splitlines()
            return g, reason, took, times

    def test_endless_output_is_stopped(self):
        g, reason, took, _ = self.boot(
            "import sys\nwhile True: sys.stdout.write('x' * 99 + '\\n')",
            MAX_OUTPUT=1 << 20)
        self.assertTrue(g.flooded)
        self.assertLess(took, 10)
        self.assertIn("printed more than", reason)

    def test_a_flooded_log_ends_with_a_mark(self):
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.object(serial, "MAX_OUTPUT", 1 << 20):
            g = guest.Run(Path(d), quiet=True)
            g.boot([sys.executable, "-c", "import sys\nwhile True: "
                    "sys.stdout.write('x' * 99 + '\\n')"], 30)
            log = (Path(d) / serial.LOG).read_bytes()
            times = (Path(d) / serial.TIMES).read_text().splitlines()
        mark = f"[hvprobe: cut here, past {1 << 20} bytes of output]"
        self.assertTrue(log.endswith(f"\n{mark}\n".encode()), log[-80:])
        self.assertEqual(len(log), (1 << 20) + len(mark) + 2)
        self.assertTrue(times[-1].endswith(" " + mark), times[-1])

    def test_a_line_without_end_is_cut(self):
        g, reason, took, times = self.boot(
            "import sys\nsys.stdout.write('KTAP version 1\\n')\n"
            "for _ in range(200): sys.stdout.write('y' * 65536)\n",
            MAX_LINE=1 << 16)
        self.assertFalse(g.flooded)
        self.assertLess(took, 10)
        self.assertTrue(all(len(t) < (1 << 16) + 20 for t in times))
        self.assertEqual(len(times), 201)


class Bounds(unittest.TestCase):
    def usage_error(self, parse, argv):
        with contextlib.redirect_stderr(io.StringIO()) as err, \
                self.assertRaises(SystemExit) as caught:
            parse(argv)
        self.assertEqual(caught.exception.code, 2)
        return err.getvalue()

    def test_timeouts_that_are_no_number(self):
        for value in ("nan", "inf", "-1", "0"):
            self.assertIn("--timeout", self.usage_error(
                run.parse_args, ["--timeout", value]))
            self.assertIn("--timeout", self.usage_error(
                soak.parse_args, ["--timeout", value]))

    def test_soak_runs(self):
        self.assertIn("at most", self.usage_error(
            soak.parse_args, ["--runs", str(10 ** 8)]))

    def test_smp_and_numa(self):
        from tools.lib.launch import qemu
        for machine in (qemu.Machine(smp=10 ** 8),
                        qemu.Machine(smp=8, numa=10 ** 8)):
            with self.assertRaises(qemu.ConfigError):
                qemu.qemu_argv(machine, False, kernel="k")

    def test_a_matrix_cross_is_counted_before_it_is_made(self):
        table = {"axes": {f"a{i}": {f"e{j}": {} for j in range(100)}
                          for i in range(4)}}
        start = time.monotonic()
        with self.assertRaises(scenario.ScenarioError) as caught:
            scenario.cross(table, "m")
        self.assertLess(time.monotonic() - start, 5)
        self.assertIn("100000000 runs", str(caught.exception))
        with self.assertRaises(scenario.ScenarioError):
            scenario.from_table({"vcpus": 10 ** 8}, "s")


if __name__ == "__main__":
    unittest.main()
