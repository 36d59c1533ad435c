# SPDX-License-Identifier: MIT
"""A guest cannot write to the terminal: every guest-derived string is
shown through text.escaped (Unicode categories Cc and Cf, C1 controls
and bidi overrides included, written as \\xNN or \\uNNNN), by tools/run's
summary and streamed log, and by tools/report in text, Markdown and
CSV; Markdown's | is escaped."""

import contextlib
import io
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from tools.commands import run as run_cmd
from tools.lib.base import text
from tools.lib.analysis import report
from tools.lib.launch import guest
from tools.tests.test_report import ap, run

OSC52 = "\x1b]52;c;SGVsbG8=\x07"
HOSTILE = OSC52 + "\x9b2J\u202eevil\u2066\x00\u200b"
# What no terminal may receive from a guest.
RAW = ("\x1b", "\x07", "\x9b", "\u202e", "\u2066", "\x00", "\u200b")


def assert_harmless(case, out):
    for ch in RAW:
        case.assertNotIn(ch, out, f"{ascii(ch)} reached the terminal")


class Escaped(unittest.TestCase):
    def test_controls_and_formats(self):
        self.assertEqual(text.escaped(OSC52), "\\x1b]52;c;SGVsbG8=\\x07")
        self.assertEqual(text.escaped("\x9b\u202e\u2066\U000e0001"),
                         "\\x9b\\u202e\\u2066\\U000e0001")
        self.assertEqual(text.escaped("a\nb\rc\x7f"), "a\\x0ab\\x0dc\\x7f")

    def test_plain_text_and_tabs_stay(self):
        for s in ("smp: init_udelay=10 us", "µs, ± 3 — ok", "a\tb", ""):
            self.assertEqual(text.escaped(s), s)

    def test_surrogates_from_bad_bytes_are_shown(self):
        s = b"a\xffb".decode("utf-8", "surrogateescape")
        self.assertEqual(text.escaped(s), "a\\udcffb")


class Report(unittest.TestCase):
    def docs(self):
        return [run("a" + OSC52, 2000, aps=[ap(1, 0, [1, 2, 3, 4, 5],
                                                 source=HOSTILE)],
                    verdict="pass\x1b[2J")]

    def test_every_format(self):
        for fmt in ("text", "markdown", "csv"):
            out = report.render(self.docs(), fmt=fmt)
            assert_harmless(self, out)
            self.assertIn("\\x1b]52", out, fmt)
        out = report.render(self.docs(), fmt="text", per_run=True)
        assert_harmless(self, out)

    def test_markdown_pipes(self):
        docs = [run("a|b", 2000, aps=[ap(1, 0, [1, 2, 3, 4, 5],
                                         source="x|y")])]
        out = report.render(docs, fmt="markdown")
        self.assertIn("a\\|b", out)
        self.assertIn("x\\|y", out)

    def test_long_form(self):
        for fmt in ("text", "markdown", "csv"):
            assert_harmless(self, report.long_form(self.docs(), fmt))


class Run(unittest.TestCase):
    def test_summary_and_notes(self):
        doc = {"tests": [{"name": "smp", "data": [
            {"test": "smp", "init_udelay_us": 10, "init_udelay": OSC52,
             "init_udelay_why": HOSTILE}]},
            {"name": "lpj", "data": [{"test": "lpj",
                                      "tsc_constant_why": OSC52}]}]}
        outcome = guest.Outcome(doc, ["FAIL  boot: " + HOSTILE], True)
        out = io.StringIO()
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.object(run_cmd.guest, "run",
                                  return_value=outcome), \
                mock.patch.object(run_cmd.guest, "kvm_ok_for",
                                  return_value=False), \
                mock.patch.object(run_cmd.qemu, "kvm_device_ok",
                                  return_value=False), \
                contextlib.redirect_stdout(out):
            status = run_cmd.main(["--no-build", "--accel", "tcg",
                                   "--results", d, "--", "test=boot"])
        self.assertEqual(status, 0)
        assert_harmless(self, out.getvalue())
        self.assertIn("\\x1b]52", out.getvalue())

    def test_streamed_log(self):
        out = io.StringIO()
        with tempfile.TemporaryDirectory() as d, \
                contextlib.redirect_stdout(out):
            g = guest.Run(Path(d), quiet=False)
            line = "# " + HOSTILE
            g.line(line.encode(), line, 0.0)
        assert_harmless(self, out.getvalue())
        self.assertIn("\\x9b", out.getvalue())


if __name__ == "__main__":
    unittest.main()
