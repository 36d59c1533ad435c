# SPDX-License-Identifier: MIT
"""README.md's command-line table and tests table against the build's
own export (tools/lib/buildinfo.py): every option key has its row, with
an enum's words exactly as the kernel accepts them, and every guest test
has its row, in run order; no row names what the build lacks."""

import re
import unittest

from tools import ROOT
from tools.lib import buildinfo


def table(section):
    """The rows of the first table under the README heading section, as
    {first cell's `name`: the row's other cells}, in order."""
    text = (ROOT / "README.md").read_text()
    start = re.search(rf"^## {re.escape(section)}$", text, re.M)
    if not start:
        raise AssertionError(f"README.md has no '## {section}'")
    rows = {}
    for line in text[start.end():].splitlines():
        if line.startswith("#"):
            break
        m = re.match(r"\| `([^`]+)` \|(.*)", line)
        if m:
            rows[m.group(1)] = m.group(2)
        elif rows and not line.startswith("|"):
            break
    return rows


class Readme(unittest.TestCase):
    def test_every_key_has_its_row(self):
        rows = table("Kernel command line")
        options = buildinfo.options()
        self.assertEqual(sorted(rows), sorted(options))
        for key, o in options.items():
            if o["kind"] == "enum":
                values = rows[key].split("|")[0]
                self.assertEqual(re.findall(r"`([^`]+)`", values),
                                 o["values"], key)

    def test_every_test_has_its_row_in_run_order(self):
        self.assertEqual(list(table("Tests")), list(buildinfo.tests()))


if __name__ == "__main__":
    unittest.main()
