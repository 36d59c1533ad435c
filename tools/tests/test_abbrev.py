# SPDX-License-Identifier: MIT
"""No command takes an abbreviated option: tools/run drops --host-kernel,
--results and --name from the command line it runs inside L1 by their
full names, so `--host-kern IMG` nested L1 inside L1 and `--resul DIR`
survived into L1. Every parser refuses a prefix, and tools/run inside
L1 refuses --host-kernel."""

import contextlib
import io
import os
import re
import unittest
from unittest import mock

from tools import ROOT
from tools.commands import run
from tools.lib import cli


def refused(argv):
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            run.parse_args(argv)
        except SystemExit as exit:
            return exit.code, err.getvalue()
    return None, err.getvalue()


class Abbreviations(unittest.TestCase):
    def test_the_shared_parser(self):
        self.assertFalse(cli.parser("x", "doc").allow_abbrev)

    def test_run_refuses_prefixes(self):
        for argv in (["--host-kern", "6.1"], ["--resul", "/tmp/x"],
                     ["--nam", "x"], ["--host-mod", "d"]):
            status, err = refused(argv)
            self.assertEqual(status, 2, argv)
            self.assertIn("unrecognized", err)

    def test_every_parser_in_the_tree(self):
        # A parser made without cli.parser says allow_abbrev=False too.
        call = re.compile(r"ArgumentParser\(")
        for folder in ("tools", "bench"):
            for path in (ROOT / folder).rglob("*.py"):
                if "tests" in path.parts:
                    continue
                src = path.read_text()
                for m in call.finditer(src):
                    args = src[m.end():src.find("\n\n", m.end())]
                    self.assertIn("allow_abbrev=False", args,
                                  f"{path.relative_to(ROOT)}")


class InsideL1(unittest.TestCase):
    def test_no_host_kernel_inside_l1(self):
        with mock.patch.dict(os.environ, {"HVPROBE_NESTED": "{}"}):
            status, err = refused(["--host-kernel", "6.1"])
        self.assertEqual(status, 2)
        self.assertIn("inside L1", err)


if __name__ == "__main__":
    unittest.main()
