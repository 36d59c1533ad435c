# SPDX-License-Identifier: MIT
"""Host checks, verdicts and the case counting that tools/check adds up."""

import json
import os
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from tools.lib.base import jsonfile
from tools.lib.analysis import ktap, results
from tools.lib.analysis.results import Counts


def case(number, name, status, reason="", cases=()):
    return {"name": name, "number": number, "status": status,
            "reason": reason, "cases": list(cases)}


def test(number, name, status, reason="", cases=(), data=()):
    return {**case(number, name, status, reason, cases), "data": list(data),
            "time_s": None}


BOOT_DATA = {"test": "boot", "cmdline": "test=boot hz=250",
             "mem_extent_kib": 261500}


def doc(tests, checks=(), crash=None, totals=True, **more):
    return {"tests": tests, "host_checks": list(checks), "crash": crash,
            "totals": {"pass": 1, "fail": 0, "skip": 0, "error": 0}
            if totals else None, "problems": [], **more}


def statuses(checks):
    return {c["name"]: c["status"] for c in checks}


class HostChecks(unittest.TestCase):
    def run_checks(self, tests, cmdline="test=boot hz=250", boot="kernel"):
        return results.host_checks(tests, cmdline, 262144, boot)

    def test_pass(self):
        checks = self.run_checks([test(1, "boot", "pass", data=[BOOT_DATA])])
        self.assertEqual(statuses(checks),
                         {"cmdline": "pass", "memory": "pass"})

    def test_cmdline_must_match_byte_for_byte(self):
        for seen in ("test=boot  hz=250", "test=boot hz=250 ",
                     "build/hvprobe.elf32 test=boot hz=250"):
            data = {**BOOT_DATA, "cmdline": seen}
            checks = self.run_checks([test(1, "boot", "pass", data=[data])])
            self.assertEqual(statuses(checks)["cmdline"], "fail", seen)
            self.assertIn(repr(seen), checks[0]["detail"])

    def test_grub_escaping_is_explained(self):
        data = {**BOOT_DATA, "cmdline": "a\\'b"}
        checks = self.run_checks([test(1, "boot", "pass", data=[data])],
                                 cmdline="a'b", boot="bios")
        self.assertIn("GRUB escapes", checks[0]["detail"])

    def test_memory_tolerance(self):
        for kib, status in ((262144, "pass"), (261120, "pass"),
                            (263168, "pass"), (261119, "fail"),
                            (263169, "fail"), (131072, "fail")):
            self.assertEqual(results.check_memory(kib, 262144)[0], status,
                             kib)
        status, detail = results.check_memory(200000, 262144)
        self.assertIn("200000", detail)
        self.assertIn("262144", detail)

    def test_missing_data_fails_both(self):
        checks = self.run_checks([test(1, "boot", "pass")])
        self.assertEqual(statuses(checks),
                         {"cmdline": "fail", "memory": "fail"})
        checks = self.run_checks([test(1, "boot", "error", "crashed")])
        self.assertEqual(statuses(checks),
                         {"cmdline": "fail", "memory": "fail"})

    def test_data_with_wrong_types(self):
        data = {"test": "boot", "cmdline": 5, "mem_extent_kib": "261500"}
        checks = self.run_checks([test(1, "boot", "pass", data=[data])])
        self.assertEqual(statuses(checks),
                         {"cmdline": "fail", "memory": "fail"})

    def test_not_evaluated_without_a_boot_test(self):
        self.assertEqual(self.run_checks([test(1, "cmdline", "error")]), [])
        self.assertEqual(self.run_checks([test(1, "boot", "skip")]), [])

    def test_exit_status(self):
        self.assertEqual(statuses(results.exit_check(1, "pass")),
                         {"exit_status": "pass"})
        self.assertEqual(statuses(results.exit_check(3, "fail")),
                         {"exit_status": "pass"})
        self.assertEqual(statuses(results.exit_check(3, "pass")),
                         {"exit_status": "fail"})
        self.assertEqual(statuses(results.exit_check(1, "fail")),
                         {"exit_status": "fail"})
        self.assertEqual(results.exit_check(0, "fail"), [])
        self.assertEqual(results.exit_check(None, "pass"), [])

    def test_expected_exit_status(self):
        # exit=acpi powers off: QEMU exits 0 and the run must say so.
        self.assertEqual(statuses(results.exit_check(0, "pass", 0)),
                         {"exit_status": "pass"})
        self.assertEqual(statuses(results.exit_check(1, "pass", 0)),
                         {"exit_status": "fail"})


class SmpChecks(unittest.TestCase):
    def smp_data(self, data):
        return [{"name": "smp", "status": "pass", "cases": [], "data": [data]}]

    def test_counts_match(self):
        t = self.smp_data({"test": "smp", "cpus": 16, "nodes": 4})
        self.assertEqual(statuses(results.smp_checks(t, "test=smp", 16, 4)),
                         {"smp_cpus": "pass", "smp_nodes": "pass"})

    def test_counts_differ(self):
        t = self.smp_data({"test": "smp", "cpus": 15, "nodes": 1})
        self.assertEqual(statuses(results.smp_checks(t, "", 16, 4)),
                         {"smp_cpus": "fail", "smp_nodes": "fail"})

    def test_cpus_cap_and_no_numa(self):
        # cpus= caps the APs on purpose; no --numa is one node.
        t = self.smp_data({"test": "smp", "cpus": 3, "nodes": 1})
        self.assertEqual(statuses(results.smp_checks(t, "cpus=2", 16, 0)),
                         {"smp_nodes": "pass"})

    def test_no_smp_data(self):
        self.assertEqual(results.smp_checks([], "", 4, 0), [])


class Verdict(unittest.TestCase):
    def test_verdicts(self):
        ok = [test(1, "boot", "pass"), test(2, "cpuinfo", "skip")]
        self.assertEqual(results.verdict(doc(ok)), "pass")
        self.assertEqual(results.verdict(doc(ok, crash="timed out")),
                         "crash")
        bad_case = [test(1, "boot", "pass",
                         cases=[case(1, "a", "pass"), case(2, "b", "fail")])]
        self.assertEqual(results.verdict(doc(bad_case)), "fail")
        self.assertEqual(results.verdict(doc([test(1, "x", "error")])),
                         "fail")
        failed_check = [{"name": "memory", "status": "fail", "detail": ""}]
        self.assertEqual(results.verdict(doc(ok, failed_check)), "fail")

    def test_expect_fail_match(self):
        report = ktap.parse([
            "KTAP version 1", "1..1",
            "not ok 1 cmdline # ERROR unknown key 'foo' (accepted: test)",
            "# Totals: pass:0 fail:0 skip:0 error:1"])
        self.assertTrue(results.expect_fail_match(
            report, "not ok 1 cmdline # ERROR .*'foo'"))
        self.assertTrue(results.expect_fail_match(report, "cmdline.*'foo'"))
        self.assertIsNone(results.expect_fail_match(report, "'bar'"))
        passing = ktap.parse(["KTAP version 1", "1..1", "ok 1 cmdline 'foo'",
                              "# Totals: pass:1 fail:0 skip:0 error:0"])
        self.assertIsNone(results.expect_fail_match(passing, "'foo'"))


class Counting(unittest.TestCase):
    def test_leaves(self):
        tests = [test(1, "boot", "pass", cases=[
                     case(1, "a", "pass"), case(2, "b", "fail"),
                     case(3, "c", "skip"),
                     case(4, "d", "pass", cases=[case(1, "d1", "pass"),
                                                 case(2, "d2", "error")])]),
                 test(2, "cpuinfo", "skip", "no cpuinfo"),
                 test(3, "timers", "pass")]
        self.assertEqual(results.count_run(doc(tests)), Counts(3, 2, 2))

    def test_crash_after_last_case_still_counts(self):
        tests = [test(1, "exceptions", "error", "crashed: #PF",
                      cases=[case(1, "ud2", "pass")])]
        self.assertEqual(results.count_run(doc(tests)), Counts(1, 1, 0))

    def test_failing_parent_of_failing_cases_counts_once(self):
        tests = [test(1, "smp", "fail", cases=[case(1, "a", "fail")])]
        self.assertEqual(results.count_run(doc(tests)), Counts(0, 1, 0))

    def test_crash_and_host_checks(self):
        tests = [test(1, "boot", "pass", cases=[case(1, "a", "pass")])]
        checks = [{"name": "cmdline", "status": "pass", "detail": ""},
                  {"name": "memory", "status": "fail", "detail": ""}]
        self.assertEqual(results.count_run(doc(tests, checks)),
                         Counts(2, 1, 0))
        self.assertEqual(results.count_run(doc(tests, crash="hang")),
                         Counts(1, 1, 0))
        self.assertEqual(results.count_run(doc([], crash="no KTAP output")),
                         Counts(0, 1, 0))

    def test_negative_run_is_one_case(self):
        tests = [test(1, "cmdline", "error", "unknown key 'foo'")]
        self.assertEqual(results.count_run(
            doc(tests, expect_fail="'foo'", expected=True)), Counts(1, 0, 0))
        self.assertEqual(results.count_run(
            doc(tests, expect_fail="'foo'", expected=False)), Counts(0, 1, 0))

    def test_unit_binary(self):
        good = ktap.parse(["KTAP version 1", "1..2", "ok 1 printf",
                           "    ok 1 x", "    ok 2 y", "ok 2 lpj",
                           "# Totals: pass:2 fail:0 skip:0 error:0"])
        self.assertEqual(results.count_unit(good, 0), Counts(3, 0, 0))
        # A failing exit status needs a failing case to explain it.
        self.assertEqual(results.count_unit(good, 1), Counts(3, 1, 0))
        failing = ktap.parse(["KTAP version 1", "1..1", "not ok 1 printf",
                              "# Totals: pass:0 fail:1 skip:0 error:0"])
        self.assertEqual(results.count_unit(failing, 1), Counts(0, 1, 0))
        # Without totals the plan must have been met.
        no_totals = ktap.parse(["KTAP version 1", "1..1", "ok 1 printf"])
        self.assertEqual(results.count_unit(no_totals, 0), Counts(1, 0, 0))
        cut = ktap.parse(["KTAP version 1", "1..2", "ok 1 printf"])
        self.assertEqual(results.count_unit(cut, 0), Counts(1, 1, 0))
        self.assertEqual(results.count_unit(ktap.parse([]), 0),
                         Counts(0, 1, 0))

    def test_unittest_result(self):
        class Sample(unittest.TestCase):
            def test_pass(self):
                pass

            def test_fail(self):
                self.fail("no")

            def test_error(self):
                raise RuntimeError

            @unittest.skip("why")
            def test_skip(self):
                pass

        suite = unittest.defaultTestLoader.loadTestsFromTestCase(Sample)
        result = unittest.TestResult()
        suite.run(result)
        self.assertEqual(results.count_unittest(result), Counts(1, 2, 1))

    def test_sum_and_line(self):
        total = Counts(1, 2, 3)
        total += Counts(10, 0, 1)
        self.assertEqual(str(total), "11 passed, 2 failed, 4 skipped")


class Summary(unittest.TestCase):
    def test_lines(self):
        tests = [test(1, "boot", "pass", cases=[case(1, "a", "pass")] * 4),
                 test(2, "exceptions", "error", "reason text",
                      cases=[case(1, "whatever", "error", "why")]),
                 test(3, "cpuinfo", "skip", "reason")]
        checks = [{"name": "memory", "status": "fail", "detail": "off"}]
        lines = results.summary(doc(tests, checks, crash="timed out"),
                                log_tail=["last line"])
        self.assertEqual(lines[0], "PASS  boot  (4 cases)")
        self.assertEqual(lines[1],
                         "ERROR exceptions: reason text  (1 case)")
        self.assertEqual(lines[2], "        ERROR 1 whatever: why")
        self.assertEqual(lines[3], "SKIP  cpuinfo: reason")
        self.assertIn("FAIL  host memory: off", lines)
        self.assertIn("CRASH: timed out", lines)
        self.assertEqual(lines[-1], "  | last line")

    def test_partly_skipped_test_says_so(self):
        tests = [test(1, "timers", "pass", cases=[case(1, "pit", "pass"),
                                                   case(2, "apic", "skip", "x")]),
                 test(2, "pmi_stress", "skip", "no PMU",
                      cases=[case(1, "no PMU", "skip", "no PMU")])]
        lines = results.summary(doc(tests, host_notes={
            "pmi_stress": "KVM on this host has enable_pmu=N"},
            not_runnable=[{"test": "exceptions", "reason": "INT3 hangs"}]))
        self.assertEqual(lines[0], "PASS  timers  (2 cases, 1 skipped)")
        self.assertEqual(lines[1], "SKIP  pmi_stress: no PMU (host: KVM on this "
                                   "host has enable_pmu=N)  (1 case)")
        self.assertEqual(lines[2], "NOT RUN exceptions: INT3 hangs")
        self.assertEqual(results.effective(tests[0]), "pass")

    def test_first_problem(self):
        nested = case(2, "sub", "fail", cases=[case(1, "a", "pass"),
                                               case(2, "b", "fail", "why")])
        tests = [test(1, "boot", "pass"), test(2, "smp", "fail",
                                               cases=[nested])]
        checks = [{"name": "memory", "status": "fail", "detail": "off"}]
        first = results.first_problem
        self.assertEqual(first(doc(tests, checks)), "smp / 2 sub / 2 b: why")
        self.assertEqual(first(doc(tests, crash="timed out")),
                         "crash: timed out")
        self.assertEqual(first(doc([test(1, "smp", "error", "set-up")])),
                         "smp: set-up")
        self.assertEqual(first(doc(tests[:1], checks)), "host memory: off")
        self.assertIsNone(first(doc(tests[:1])))


if __name__ == "__main__":
    unittest.main()


class LineChecks(unittest.TestCase):
    LOG = "KTAP version 1\n    # SRAT: entry at offset 48 (length 16) runs past the end\n"

    def test_a_matching_line_passes_and_is_quoted(self):
        [check] = results.line_checks(self.LOG, [r"SRAT: entry at offset \d+"])
        self.assertEqual(check["status"], "pass")
        self.assertIn("# SRAT: entry at offset 48", check["detail"])

    def test_no_matching_line_fails_naming_the_pattern(self):
        [check] = results.line_checks(self.LOG, ["MADT: "])
        self.assertEqual(check["status"], "fail")
        self.assertIn("'MADT: '", check["detail"])

    def test_one_check_per_pattern(self):
        checks = results.line_checks(self.LOG, ["KTAP", "SRAT", "nothing"])
        self.assertEqual([c["status"] for c in checks], ["pass", "pass", "fail"])


class AtomicJson(unittest.TestCase):
    """results.json, index.json and soak.json go through jsonfile.write():
    whole or not at all, and readable as a file open() made would be
    (mkstemp's 0600 is not what a results folder wants)."""

    def test_replaced_whole_with_the_usual_mode(self):
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "results.json"
            jsonfile.write(path, {"a": 1})
            self.assertEqual(json.loads(path.read_text()), {"a": 1})
            mask = os.umask(0o022)
            os.umask(mask)
            self.assertEqual(path.stat().st_mode & 0o777, 0o666 & ~mask)
            with mock.patch.object(os, "fsync",
                                   side_effect=OSError(28, "No space")):
                with self.assertRaises(OSError):
                    jsonfile.write(path, {"a": 2})
            self.assertEqual(json.loads(path.read_text()), {"a": 1})
            self.assertEqual(os.listdir(d), ["results.json"])
