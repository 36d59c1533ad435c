# SPDX-License-Identifier: MIT
"""The LAVA side of make check-lava, without LAVA: reading lava-run's log
(captured samples of real jobs), the comparison with KTAP, the monitor
pattern replayed the way LAVA's pexpect applies it, and the job files."""

import contextlib
import io
import re
import unittest

from tools import TOOLS
from tools.commands import lava_run
from tools.lib.analysis import ktap, lavalog

LAVA = TOOLS / "lava"

SAMPLES = LAVA / "samples"


def sample(name):
    return (SAMPLES / name).read_text().splitlines()


class LoadRecordTest(unittest.TestCase):
    def test_json_line(self):
        rec = lavalog.load_record(
            '{"dt": "2026-01-01T00:00:00", "lvl": "results", "msg": '
            '{"case": "x", "extra": {"test_case_id": "a \\"b\\""}}}')
        self.assertEqual(rec["msg"]["extra"]["test_case_id"], 'a "b"')

    def test_tag_is_dropped(self):
        # LAVA's own file-download result carries one.
        rec = lavalog.load_record(
            '{"lvl": "results", "msg": {"size": ! "397364", '
            '"n": !!int "3"}}')
        self.assertEqual(rec["msg"], {"size": "397364", "n": "3"})

    def test_yaml_escapes(self):
        rec = lavalog.load_record(
            '{"lvl": "target", "msg": "\\x0f\\e\\0\\a\\v\\N\\_\\L\\P'
            '\\u00e9\\U0001F600\\/\\\\ \\t"}')
        self.assertEqual(rec["msg"], "\x0f\x1b\0\a\v\x85\xa0\u2028\u2029"
                                     "\u00e9\U0001F600/\\ \t")

    def test_bad_lines(self):
        for line in ('{"lvl": "target", "msg": "open', '{"lvl": "x\\q"}',
                     '{"lvl": "x\\x4"}', '{"msg": "no level"}', '["lvl"]',
                     '{"lvl": "target", "msg": "\\xzz"}', "{"):
            with self.subTest(line=line):
                with self.assertRaises(lavalog.BadRecord):
                    lavalog.load_record(line)

    def test_unescape_target(self):
        self.assertEqual(lavalog.unescape_target('loader \\"qemu\\"'),
                         'loader "qemu"')
        # A backslash the guest printed before a quote stays.
        self.assertEqual(lavalog.unescape_target('a \\\\"b'), 'a \\"b')


class SampleTest(unittest.TestCase):
    """Logs of real lava-run jobs, kept as lava-run wrote them."""

    def check_agrees(self, name, monitor):
        log = lavalog.read_log(sample(name), monitor)
        report = ktap.parse(log.serial)
        self.assertFalse(report.crashed, report.crash_reason)
        self.assertEqual(report.problems, [])
        self.assertEqual(log.problems, [])
        self.assertEqual(log.job_result, "pass")
        self.assertEqual(log.monitor_status, "passed")
        expected = lavalog.ktap_cases(report)
        self.assertEqual(lavalog.compare(log.cases, expected), [])
        return log, report

    def test_boot_hv(self):
        log, report = self.check_agrees("boot-hv.log", "hvprobe-kernel")
        self.assertEqual(len(log.cases), 15)
        self.assertIn(('loader names itself ("qemu")', "pass"), log.cases)
        self.assertIn(("hyperv", "skip"), log.cases)
        self.assertEqual(log.cases[-1], ("hv", "skip"))
        self.assertEqual(lavalog.tally(log.cases),
                         {"pass": 11, "fail": 0, "skip": 4, "unknown": 0})
        self.assertEqual(report.totals,
                         {"pass": 1, "fail": 0, "skip": 1, "error": 0})

    def test_crash_totals_in_feedback(self):
        log, report = self.check_agrees("crash.log", "hvprobe-kernel")
        # The KTAP error is a LAVA failure.
        self.assertEqual(log.cases[-1], ("crash", "fail"))
        self.assertEqual(report.tests[-1].status, "error")
        self.assertEqual(report.totals["error"], 1)

    def test_other_monitor_name(self):
        log = lavalog.read_log(sample("boot-hv.log"), "hvprobe-bios")
        self.assertEqual(log.cases, [])
        self.assertTrue(log.serial)

    def test_target_only_misses_totals(self):
        # Why feedback records count: without them this log has no end.
        lines = [line for line in sample("crash.log")
                 if '"lvl": "feedback"' not in line]
        report = ktap.parse(lavalog.read_log(lines, "hvprobe-kernel").serial)
        self.assertTrue(report.crashed)


class ReadLogTest(unittest.TestCase):
    def test_unreadable_records(self):
        lines = [
            "Traceback (most recent call last):",
            '{"lvl": "results", "msg": {"definition": "hvprobe-kernel", '
            '"case": "x", "result": "pass", '
            '"extra": {"test_case_id": "\\q"}}}',
            '{"lvl": "results", "msg": {"definition": "lava", "case": "\\q"}}',
            b'{"lvl": "results", "msg": {"definition": "hvprobe-kernel", '
            b'"case": "y", "result": "fail"}}\r\n',
        ]
        log = lavalog.read_log(lines, "hvprobe-kernel")
        self.assertEqual(log.cases, [("y", "fail")])
        self.assertEqual(len(log.problems), 2)
        self.assertIn("unreadable result record", log.problems[0])
        self.assertIn("extra.test_case_id", log.problems[1])

    def test_definition_name(self):
        self.assertEqual(lavalog.definition_name("hvprobe Kernel"),
                         "hvprobe-kernel")


class CompareTest(unittest.TestCase):
    KTAP = [("a", "pass"), ("b", "skip"), ("t", "pass"), ("c", "fail")]

    def test_equal(self):
        self.assertEqual(lavalog.compare(list(self.KTAP), self.KTAP), [])

    def test_result_differs(self):
        lava = [("a", "pass"), ("b", "pass"), ("t", "pass"), ("c", "fail")]
        diffs = lavalog.compare(lava, self.KTAP)
        self.assertEqual(diffs, ["case 2: LAVA says 'b' (pass), KTAP says "
                                 "'b' (skip)"])

    def test_missing_case(self):
        diffs = lavalog.compare(self.KTAP[:1] + self.KTAP[2:], self.KTAP)
        self.assertEqual(len(diffs), 1)
        self.assertIn("'b' (skip) has no LAVA case", diffs[0])

    def test_extra_case(self):
        diffs = lavalog.compare(self.KTAP + [("d", "pass")], self.KTAP)
        self.assertEqual(diffs, ["case 5: LAVA has 'd' (pass), which KTAP "
                                 "lacks"])

    def test_order_matters(self):
        lava = [self.KTAP[1], self.KTAP[0]] + self.KTAP[2:]
        self.assertTrue(lavalog.compare(lava, self.KTAP))

    def test_nothing_recorded(self):
        self.assertEqual(len(lavalog.compare([], self.KTAP)), 4)

    def test_many_differences_are_capped(self):
        lava = [(f"x{i}", "pass") for i in range(30)]
        diffs = lavalog.compare(lava, [])
        self.assertEqual(len(diffs), lavalog.MAX_DIFFERENCES + 1)
        self.assertEqual(diffs[-1], f"... and {30 - lavalog.MAX_DIFFERENCES} "
                                    "more")

    def test_ktap_cases_in_print_order(self):
        report = ktap.parse(SERIAL.splitlines())
        self.assertEqual(lavalog.ktap_cases(report), EXPECTED)


# A guest's serial output with the line endings LAVA's pty delivers
# (hvprobe's \r\n plus the pty's \r), and lines meant to trip a pattern.
SERIAL = """\
SeaBIOS (version 1.16.3)
Booting `hvprobe'
KTAP version 1
1..3
# hvprobe 0.1: multiboot2, loader "GRUB 2.06"
    KTAP version 1
    # Subtest: boot
    # it took 5 ms to look ok 3 times
    ok 1 loader names itself ("GRUB 2.06")
    # DATA {"test":"boot","note":"ok 9 not a result"}
    not ok 2 memory map # a comment, not a directive
    ok 3 rsdp # SKIP no ACPI
    not ok 4 acpi # ERROR table truncated
    1..4
not ok 1 boot
    KTAP version 1
    # Subtest: nested
        KTAP version 1
        # Subtest: deeper
        ok 1 leaf
        1..1
    ok 1 deeper
    1..1
ok 2 nested
ok 3 cpuinfo # SKIP no leaves
# Totals: pass:1 fail:1 skip:1 error:0
ok 99 after the end
""".replace("\n", "\r\r\n")

EXPECTED = [
    ('loader names itself ("GRUB 2.06")', "pass"),
    ("memory map", "fail"),
    ("rsdp", "skip"),
    ("acpi", "fail"),
    ("boot", "fail"),
    ("leaf", "pass"),
    ("deeper", "pass"),
    ("nested", "pass"),
    ("cpuinfo", "skip"),
]


def monitor(chunks, pattern, fixupdict, start, end):
    """LAVA's monitor as pexpect runs it: wait for start, then over a
    growing buffer take the earliest of the end string and the pattern
    (the end first on a tie), record a case, drop what was matched, and
    read more when nothing matches yet."""
    flags = re.DOTALL
    start_re, end_re = re.compile(re.escape(start), flags), \
        re.compile(end, flags)
    case_re = re.compile(pattern, flags)
    cases, buffer, started = [], "", False
    for chunk in chunks:
        buffer += chunk
        while True:
            if not started:
                match = start_re.search(buffer)
                if not match:
                    break
                started, buffer = True, buffer[match.end():]
                continue
            found = [m for m in (end_re.search(buffer),
                                 case_re.search(buffer)) if m]
            if not found:
                break
            match = min(found, key=lambda m: m.start())
            if match.re is end_re:
                return cases
            groups = match.groupdict()
            result = fixupdict.get(groups["result"], groups["result"])
            cases.append((groups["test_case_id"].strip(), result))
            buffer = buffer[match.end():]
    return cases


def replay(text, size):
    chunks = [text[i:i + size] for i in range(0, len(text), size)]
    return monitor(chunks, lavalog.MONITOR_PATTERN, lavalog.FIXUPDICT,
                   lavalog.MONITOR_START, lavalog.MONITOR_END)


class MonitorPatternTest(unittest.TestCase):
    def test_whole_log(self):
        self.assertEqual(replay(SERIAL, len(SERIAL)), EXPECTED)

    def test_any_read_size(self):
        # A read may end anywhere, in a name or between \r and \n: a case
        # is only taken once its line is complete.
        for size in (1, 2, 3, 7, 64, 100):
            with self.subTest(size=size):
                self.assertEqual(replay(SERIAL, size), EXPECTED)

    def test_agrees_with_ktap_parser(self):
        report = ktap.parse(SERIAL.splitlines())
        self.assertEqual(replay(SERIAL, 5), lavalog.ktap_cases(report))

    def test_real_serial(self):
        # The serial output of a real job, put back into pty form.
        log = lavalog.read_log(sample("boot-hv.log"), "hvprobe-kernel")
        text = "".join(f"{line}\r\r\n" for line in log.serial)
        self.assertEqual(replay(text, 50), log.cases)

    def test_results_are_lava_results(self):
        self.assertLessEqual(set(lavalog.FIXUPDICT.values()),
                             {"pass", "fail", "skip", "unknown"})
        self.assertEqual(set(lavalog.KTAP_TO_LAVA), set(ktap.STATUSES))


class JobFileTest(unittest.TestCase):
    def args(self, *argv):
        return lava_run.parse_args(list(argv))

    def test_job_carries_the_pattern(self):
        text = lava_run.job_yaml("kernel", self.args("--", "test=boot"))
        quoted = re.search(r"^      pattern: '(.*)'$", text, re.M).group(1)
        self.assertEqual(quoted.replace("''", "'"), lavalog.MONITOR_PATTERN)
        self.assertIn("image_arg: '-kernel {kernel} -append \"test=boot\"'",
                      text)
        self.assertIn("url: 'file://", text)
        self.assertIn("'# SKIP': 'skip'", text)
        self.assertNotRegex(text, r"@[A-Z_]+@")

    def test_iso_job(self):
        text = lava_run.job_yaml("bios", self.args())
        self.assertIn("image_arg: '-cdrom {iso} -boot d'", text)
        self.assertIn("hvprobe.iso'", text)
        self.assertIn("name: hvprobe-bios", text)

    def test_devices(self):
        args = self.args("--smp", "4", "--mem", "1G")
        tcg = lava_run.device_yaml("tcg", args)
        kvm = lava_run.device_yaml("kvm", args)
        self.assertIn("- -accel tcg\n", tcg)
        self.assertIn("- -accel kvm\n", kvm)
        self.assertIn("- -m 1024M\n", tcg)
        self.assertIn("- -smp 4\n", kvm)
        for text in (tcg, kvm):
            self.assertNotIn("-enable-kvm\n", text)
            self.assertIn("failure_retry", text)
            self.assertNotRegex(text, r"@[A-Z_]+@")

    def test_quote_in_cmdline_is_refused(self):
        with self.assertRaises(SystemExit), \
                contextlib.redirect_stderr(io.StringIO()):
            self.args("--", 'test="boot"')


if __name__ == "__main__":
    unittest.main()
