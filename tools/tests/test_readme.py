# SPDX-License-Identifier: MIT
"""README.md's command-line table and tests table against the build's
own export (tools/lib/buildinfo.py): every option key has its row, with
an enum's words exactly as the kernel accepts them, and every guest test
has its row, in run order; no row names what the build lacks. Each cell
of those tables is one sentence (the design notes live in docs/, linked
from the row), no README line is over 300 characters, and every link
from the README into docs/ finds its file and heading."""

import re
import unittest

from tools import ROOT
from tools.lib import buildinfo

# A line a reader can take in at once; a row past it holds notes that
# belong in docs/.
LINE_LIMIT = 300
# Where a sentence ends inside a cell: a full stop, semicolon, question or
# exclamation mark followed by a space (0.1 %, 6.1-6.4 and 0..10000 are
# not ends).
SENTENCE_END = re.compile(r"[.;!?] ")
DOC_LINK = re.compile(r"\]\((docs/[\w.-]+\.md)(?:#([\w-]+))?\)")


def cells(row):
    """The cells of a row as table() gives it: its other cells."""
    return [c.strip() for c in row.strip().strip("|").split(" | ")]


def anchor(heading):
    """GitHub's anchor for a Markdown heading's text."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def one_sentence(cell):
    """Whether a cell's text is at most one sentence."""
    return not SENTENCE_END.search(cell)


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

    def test_every_cell_is_one_sentence(self):
        for section in ("Kernel command line", "Tests"):
            rows = table(section)
            self.assertTrue(rows, section)
            long = [(name, cell) for name, row in rows.items()
                    for cell in cells(row) if not one_sentence(cell)]
            self.assertEqual(long, [], section)

    def test_no_line_is_over_the_limit(self):
        text = (ROOT / "README.md").read_text()
        long = [(n, len(line)) for n, line in
                enumerate(text.splitlines(), 1) if len(line) > LINE_LIMIT]
        self.assertEqual(long, [], f"README.md lines over {LINE_LIMIT}")

    def test_links_into_docs_find_their_heading(self):
        text = (ROOT / "README.md").read_text()
        broken = []
        for path, fragment in DOC_LINK.findall(text):
            doc = ROOT / path
            if not doc.is_file():
                broken.append(path)
            elif fragment and fragment not in {
                    anchor(h) for h in re.findall(r"^#+ (.*)$",
                                                  doc.read_text(), re.M)}:
                broken.append(f"{path}#{fragment}")
        self.assertEqual(broken, [])


class Rules(unittest.TestCase):
    """The rules above, on cells and lines that break them."""

    def test_a_cell_of_two_sentences_fails(self):
        self.assertFalse(one_sentence("a preset. The host tools map it"))
        self.assertFalse(one_sentence("a preset; the host tools map it"))

    def test_numbers_and_a_final_stop_are_one_sentence(self):
        self.assertTrue(one_sentence("within 0.1 % for Linux 6.1-6.4, "
                                     "0..10000 ticks."))

    def test_anchor_is_githubs(self):
        self.assertEqual(anchor("What nmi_storm and pmi_stress check"),
                         "what-nmi_storm-and-pmi_stress-check")
        self.assertEqual(anchor("The review's findings (b3a3cda)"),
                         "the-reviews-findings-b3a3cda")


if __name__ == "__main__":
    unittest.main()
