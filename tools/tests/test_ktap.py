# SPDX-License-Identifier: MIT
"""The KTAP parser on the logs a guest really produces: clean ones, noisy
ones, cut-off ones, and garbage."""

import json
import random
import tempfile
import unittest
from pathlib import Path

from tools.lib.analysis import ktap, results

GOOD = """\
SeaBIOS (version 1.16.3-debian-1.16.3-2)
Booting from DVD/CD...
\x1b[0m\x1b[30m\x1b[40m\x1b[2J\x1b[01;01H  Booting `hvprobe'
KTAP version 1
# hvprobe 0.1: boot multiboot1, loader "qemu"
1..3
    KTAP version 1
    # Subtest: boot
    1..4
    ok 1 cmdline parsed
    ok 2 memory map
    # DATA {"test":"boot","protocol":"multiboot1","loader":"qemu","cmdline":"test=boot","mem_ram_kib":261500,"rsdp":"0xf5260","rsdp_source":"scan"}
    not ok 3 rsdp checksum
    ok 4 something # SKIP reason text
ok 1 boot
    KTAP version 1
    # Subtest: exceptions
    1..1
    not ok 1 whatever # ERROR reason text
not ok 2 exceptions # ERROR reason text
ok 3 cpuinfo # SKIP reason
# Totals: pass:1 fail:0 skip:1 error:1
"""


def parse(text):
    return ktap.parse(text.splitlines())


class GoodLog(unittest.TestCase):
    def setUp(self):
        self.report = parse(GOOD)

    def test_top_level(self):
        tests = self.report.tests
        self.assertEqual([(t.number, t.name, t.status, t.reason)
                          for t in tests],
                         [(1, "boot", "pass", ""),
                          (2, "exceptions", "error", "reason text"),
                          (3, "cpuinfo", "skip", "reason")])
        self.assertEqual(self.report.plan, 3)

    def test_cases(self):
        boot = self.report.tests[0]
        self.assertEqual([(c.number, c.name, c.status, c.reason)
                          for c in boot.cases],
                         [(1, "cmdline parsed", "pass", ""),
                          (2, "memory map", "pass", ""),
                          (3, "rsdp checksum", "fail", ""),
                          (4, "something", "skip", "reason text")])
        # The kernel said ok, but a case failed: worst wins.
        self.assertEqual(boot.effective_status(), "fail")

    def test_data_goes_to_its_test(self):
        boot, exceptions, cpuinfo = self.report.tests
        self.assertEqual(len(boot.data), 1)
        self.assertEqual(boot.data[0]["mem_ram_kib"], 261500)
        self.assertEqual(exceptions.data, [])
        self.assertEqual(cpuinfo.data, [])
        self.assertEqual(self.report.data, boot.data)

    def test_totals_and_no_crash(self):
        self.assertEqual(self.report.totals,
                         {"pass": 1, "fail": 0, "skip": 1, "error": 1})
        self.assertFalse(self.report.crashed)
        self.assertEqual(self.report.problems, [])

    def test_crlf_gives_the_same_tree(self):
        crlf = parse(GOOD.replace("\n", "\r\n"))
        self.assertEqual([t.to_json() for t in crlf.tests],
                         [t.to_json() for t in self.report.tests])
        self.assertEqual(crlf.totals, self.report.totals)

    def test_bytes_and_incremental_feed(self):
        parser = ktap.Parser()
        for i, line in enumerate(GOOD.encode().splitlines(keepends=True)):
            parser.feed(line, time=float(i))
        report = parser.finish()
        self.assertEqual(report.first_ktap_time, 3.0)
        self.assertEqual(report.totals_time, 21.0)
        self.assertEqual(report.tests[0].time, 14.0)
        self.assertEqual(report.totals, self.report.totals)

    def test_to_json_is_json(self):
        doc = [t.to_json() for t in self.report.tests]
        self.assertEqual(json.loads(json.dumps(doc)), doc)
        self.assertNotIn("data", doc[0]["cases"][0])


class Rollup(unittest.TestCase):
    """A test's result from its cases, as ktap.rst has it."""

    def test_a_skipped_case_lowers_nothing(self):
        self.assertEqual(ktap.rollup("pass", ["pass", "skip"]), "pass")

    def test_skip_only_when_every_case_skipped(self):
        self.assertEqual(ktap.rollup("pass", ["skip", "skip"]), "skip")
        self.assertEqual(ktap.rollup("skip", []), "skip")

    def test_a_bad_case_is_the_tests(self):
        self.assertEqual(ktap.rollup("pass", ["pass", "fail", "skip"]), "fail")
        self.assertEqual(ktap.rollup("pass", ["error", "pass"]), "error")
        self.assertEqual(ktap.rollup("error", ["pass"]), "error")
        self.assertEqual(ktap.rollup("skip", ["skip", "fail"]), "fail")

    def test_effective_status_of_a_parsed_test(self):
        report = parse("KTAP version 1\n1..1\n    KTAP version 1\n"
                       "    # Subtest: timers\n    ok 1 pit\n"
                       "    ok 2 apic # SKIP rate not stated\nok 1 timers\n"
                       "# Totals: pass:1 fail:0 skip:0 error:0\n")
        self.assertEqual(report.tests[0].effective_status(), "pass")


class Shapes(unittest.TestCase):
    def test_deep_nesting_and_odd_indents(self):
        report = parse("""KTAP version 1
1..1
  KTAP version 1
  # Subtest: smp
  1..2
     KTAP version 1
     # Subtest: cpu1
     1..1
     ok 1 arrived
  ok 1 cpu1
  not ok 2 cpu2 # AP never arrived
    # DATA {"test":"smp","cpus":2}
ok 1 smp
# Totals: pass:1 fail:0 skip:0 error:0
""")
        smp = report.tests[0]
        self.assertEqual([c.name for c in smp.cases], ["cpu1", "cpu2"])
        self.assertEqual(smp.cases[0].cases[0].name, "arrived")
        self.assertEqual(smp.cases[1].reason, "AP never arrived")
        self.assertEqual(smp.effective_status(), "fail")
        self.assertEqual(smp.data, [{"test": "smp", "cpus": 2}])
        self.assertEqual(report.problems, [])

    def test_top_level_data_goes_to_next_result(self):
        report = parse("""KTAP version 1
1..2
# DATA {"test":"cpuinfo","vendor":"x"}
ok 1 cpuinfo
ok 2 other
# DATA {"test":"cpuinfo","late":true}
# Totals: pass:2 fail:0 skip:0 error:0
""")
        self.assertEqual(len(report.tests[0].data), 2)
        self.assertEqual(report.tests[1].data, [])

    def test_directives(self):
        report = parse("""KTAP version 1
1..5
ok 1 - dash # SKIP: no PMU (CPUID.0AH:EAX[7:0]=0)
not ok 2 err #ERROR broken
not ok 3 # SKIP skipped without name
ok 4 cpu #3 counted
not ok 5 plain # some diagnostic
# Totals: pass:1 fail:1 skip:2 error:1
""")
        got = [(t.name, t.status, t.reason) for t in report.tests]
        self.assertEqual(got, [
            ("dash", "skip", "no PMU (CPUID.0AH:EAX[7:0]=0)"),
            ("err", "error", "broken"),
            ("", "skip", "skipped without name"),
            ("cpu #3 counted", "pass", ""),
            ("plain", "fail", "some diagnostic")])
        self.assertEqual(report.problems, [])

    def test_timeout_is_an_error_with_its_reason(self):
        report = parse("KTAP version 1\n1..1\n    KTAP version 1\n"
                       "    # Subtest: hang\n    ok 1 started\n"
                       "    not ok 2 the test ran to its end # TIMEOUT watchdog: 2 s\n"
                       "not ok 1 hang # TIMEOUT watchdog: 2 s\n"
                       "# Cases: pass:1 fail:0 skip:0 error:1\n"
                       "# Totals: pass:0 fail:0 skip:0 error:1\n")
        hang = report.tests[0]
        self.assertEqual((hang.status, hang.reason), ("error", "watchdog: 2 s"))
        self.assertEqual(hang.cases[1].status, "error")
        self.assertEqual(report.problems, [])

    def test_kernel_handled_crash(self):
        report = parse("""KTAP version 1
1..3
ok 1 boot
    KTAP version 1
    # Subtest: exceptions
    1..3
    ok 1 ud2
# CRASH #PF at rip=0xffffffff80001234 cr2=0x0
# CRASH rax=0000000000000000 rbx=0000000000000001
not ok 2 exceptions # ERROR crashed: #PF at 0xffffffff80001234
ok 3 cpuinfo # SKIP not run: crashed
# Totals: pass:1 fail:0 skip:1 error:1
""")
        self.assertFalse(report.crashed)
        exc = report.tests[1]
        self.assertEqual((exc.status, exc.reason),
                         ("error", "crashed: #PF at 0xffffffff80001234"))
        self.assertEqual(len(exc.cases), 1)
        self.assertTrue(any("planned 3" in p for p in report.problems))

    def test_bad_cmdline(self):
        report = parse("""KTAP version 1
1..1
not ok 1 cmdline # ERROR unknown key 'foo' (accepted: test, lpj, ...)
# Totals: pass:0 fail:0 skip:0 error:1
""")
        self.assertEqual(report.tests[0].line,
                         "not ok 1 cmdline # ERROR unknown key 'foo' "
                         "(accepted: test, lpj, ...)")
        self.assertEqual(report.problems, [])


class Damage(unittest.TestCase):
    def test_truncated_mid_subtest(self):
        report = parse(GOOD.split("    not ok 1 whatever")[0])
        self.assertTrue(report.crashed)
        self.assertIsNone(report.totals)
        self.assertIn("without a totals line", report.crash_reason)
        # The test the guest died in shows up, as an unfinished error.
        last = report.tests[-1]
        self.assertEqual((last.name, last.status), ("exceptions", "error"))

    def test_truncated_keeps_cases_and_data(self):
        report = parse("""KTAP version 1
1..2
    KTAP version 1
    # Subtest: smp
    1..4
    ok 1 cpu1 up
    # DATA {"test":"smp","cpus_up":1}
""")
        smp = report.tests[0]
        self.assertEqual((smp.name, smp.status), ("smp", "error"))
        self.assertEqual([c.name for c in smp.cases], ["cpu1 up"])
        self.assertEqual(smp.data, [{"test": "smp", "cpus_up": 1}])

    def test_nothing_at_all(self):
        report = parse("SeaBIOS\nNo bootable device.\n")
        self.assertEqual(report.crash_reason, "no KTAP output")
        self.assertEqual(report.tests, [])
        self.assertEqual(ktap.parse([]).crash_reason, "no KTAP output")

    def test_noise_between_ktap_lines(self):
        noisy = []
        for line in GOOD.splitlines():
            noisy.append(line)
            if line.startswith("    ok 2"):
                noisy += ["BdsDxe: loading Boot0001", "\x1b[2J",
                          "       ok?? firmware says hi"]
        report = parse("\r\n".join(noisy) + "\r\n")
        self.assertEqual([t.to_json() for t in report.tests],
                         [t.to_json() for t in parse(GOOD).tests])
        self.assertFalse(report.crashed)
        self.assertEqual(len(report.problems), 2)

    def test_bad_json_in_data(self):
        report = parse(GOOD.replace('"rsdp_source":"scan"}',
                                    '"rsdp_source":"sc'))
        self.assertEqual(report.tests[0].data, [])
        self.assertEqual(len(report.problems), 1)
        self.assertIn("not valid JSON", report.problems[0])
        self.assertFalse(report.crashed)

    def test_data_that_is_not_an_object(self):
        report = parse('KTAP version 1\n1..1\n# DATA [1]\n# DATA NaN\n'
                       '# DATA {"x":1}\nok 1 a\n'
                       '# Totals: pass:1 fail:0 skip:0 error:0\n')
        self.assertEqual(report.tests[0].data, [{"x": 1}])
        self.assertEqual(len(report.problems), 3)

    def test_reboot(self):
        report = parse("""KTAP version 1
1..2
    KTAP version 1
    # Subtest: smp
    1..2
    ok 1 cpu1
SeaBIOS (version 1.16.3)
KTAP version 1
1..2
ok 1 smp
ok 2 other
# Totals: pass:2 fail:0 skip:0 error:0
""")
        self.assertTrue(report.crashed)
        self.assertEqual(report.reboot_line, 8)
        self.assertIsNone(report.totals)
        self.assertEqual([(t.name, t.status) for t in report.tests],
                         [("smp", "error")])
        self.assertTrue(any("second KTAP" in p for p in report.problems))

    def test_reboot_behind_noise(self):
        report = parse("KTAP version 1\n1..1\n"
                       "\x01junk KTAP version 1\n1..1\nok 1 a\n"
                       "# Totals: pass:1 fail:0 skip:0 error:0\n")
        self.assertEqual(report.reboot_line, 3)

    def test_totals_disagreeing_with_results(self):
        report = parse("KTAP version 1\n1..2\nok 1 a\n"
                       "# Totals: pass:2 fail:0 skip:0 error:0\n")
        self.assertFalse(report.crashed)
        self.assertEqual(len(report.problems), 2)   # plan and counts

    def test_cases_line_must_match_the_cases(self):
        head = ("KTAP version 1\n1..1\n    KTAP version 1\n    # Subtest: t\n"
                "    ok 1 a\n    ok 2 b # SKIP none\nok 1 t\n")
        tail = "# Totals: pass:1 fail:0 skip:0 error:0\n"
        good = parse(head + "# Cases: pass:1 fail:0 skip:1 error:0\n" + tail)
        self.assertEqual(good.problems, [])
        self.assertEqual(good.cases, {"pass": 1, "fail": 0, "skip": 1, "error": 0})
        bad = parse(head + "# Cases: pass:2 fail:0 skip:1 error:0\n" + tail)
        self.assertEqual(len(bad.problems), 1)
        self.assertIn("cases line", bad.problems[0])

    def test_lines_after_totals_are_ignored(self):
        report = parse(GOOD + "not ok 9 late\nKTAP version 1\n")
        self.assertFalse(report.crashed)
        self.assertEqual(len(report.tests), 3)

    def test_problem_list_is_capped(self):
        report = parse("KTAP version 1\n" + "garbage\n" * 500)
        self.assertEqual(len(report.problems), ktap.MAX_PROBLEMS + 1)


# Pieces of real KTAP, so that random logs reach deep into the parser
# rather than being thrown out as noise on the first character.
_PIECES = ["KTAP version 1", "TAP version 14", "1..3", "1..", "ok 1 a",
           "not ok 2 b", "ok 3 # SKIP", "not ok 1 # ERROR x", "# Subtest: s",
           "# DATA {\"test\":\"t\"}", "# DATA {", "# DATA [[[[", "# Totals:",
           "# Totals: pass:1 fail:0 skip:0 error:0", "# CRASH", "ok",
           "ok 99999999999 x", "1..99999999999", "\x1b[2J", "\r", "\t", " ",
           "    ", "#", "not ok", "\x00", "\xff", "é", "\ud800"]


class LyingStructure(unittest.TestCase):
    """KTAP that lies about itself is an error verdict, not a pass with
    warnings (kunit.py 6.1 and 6.12 exit 1 on these)."""

    def doc(self, text):
        from tools.lib.analysis import resultset
        with tempfile.TemporaryDirectory() as d:
            log = Path(d) / "serial.log"
            log.write_text(text)
            docs, _ = resultset.load([log])
        return docs[0]

    def test_plan_of_1000_results_1_1_7(self):
        text = ("KTAP version 1\n1..1000\nok 1 a\nok 1 b\nok 7 c\n"
                "# Totals: pass:3 fail:0 skip:0 error:0\n")
        report = parse(text)
        self.assertFalse(report.crashed)
        self.assertEqual(len(report.errors), 3, report.errors)
        doc = self.doc(text)
        self.assertEqual(doc["verdict"], "error")
        self.assertEqual(results.count_run(doc).failed, 1)

    def test_no_test_at_all(self):
        text = ("KTAP version 1\n1..0\n"
                "# Totals: pass:0 fail:0 skip:0 error:0\n")
        self.assertIn("no test at all", parse(text).errors[0])
        self.assertEqual(self.doc(text)["verdict"], "error")

    def test_a_good_log_has_no_error(self):
        text = ("KTAP version 1\n1..1\nok 1 a\n"
                "# Totals: pass:1 fail:0 skip:0 error:0\n")
        self.assertEqual(parse(text).errors, [])
        self.assertEqual(self.doc(text)["verdict"], "pass")


class Fuzz(unittest.TestCase):
    def check(self, lines):
        parser = ktap.Parser()
        for line in lines:
            parser.feed(line, 0.0)
        report = parser.finish()
        json.dumps([t.to_json() for t in report.tests])
        json.dumps(report.problems)
        self.assertIsInstance(report.crashed, bool)
        return report

    def test_random_bytes(self):
        rng = random.Random(1)
        for _ in range(300):
            blob = bytes(rng.randrange(256)
                         for _ in range(rng.randrange(2000)))
            self.check(blob.splitlines())
            self.check([b"KTAP version 1"] + blob.split(b"\n"))

    def test_random_ktap_pieces(self):
        rng = random.Random(2)
        for _ in range(2000):
            lines = []
            for _ in range(rng.randrange(40)):
                indent = " " * rng.choice([0, 0, 2, 4, 4, 8, 13])
                piece = "".join(rng.choice(_PIECES)
                                for _ in range(rng.randrange(1, 3)))
                lines.append(indent + piece)
            self.check(["KTAP version 1"] + lines)

    def test_huge_inputs(self):
        self.check(["KTAP version 1", "# DATA " + "[" * 100000,
                    "# DATA " + "1" * 10000, "ok " + "1" * 10000 + " x",
                    "# Totals: pass:" + "9" * 10000])


if __name__ == "__main__":
    unittest.main()
