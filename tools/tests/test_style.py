# SPDX-License-Identifier: MIT
"""make check's format and types rows (tools/lib/checks/style.py): each fails
the file that breaks the tree's stated style, and only that file."""

import shutil
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from tools import ROOT
from tools.lib.checks import style

FORMATTED = """\
// SPDX-License-Identifier: MIT
static int twice(int x)
{
\treturn 2 * x;
}
"""

# The same function as someone might type it: the brace on the
# signature's line, spaces for the tab, no space around the operator.
MISFORMATTED = """\
// SPDX-License-Identifier: MIT
static int twice(int x) {
    return 2*x;
}
"""


class Tree:
    """A throwaway tree with the real tree's configuration files."""

    def __init__(self, files, configs):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        for name in configs:
            shutil.copy(ROOT / name, self.root / name)
        for name, text in files.items():
            (self.root / name).parent.mkdir(parents=True, exist_ok=True)
            (self.root / name).write_text(text)
        (self.root / "log").mkdir()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.tmp.cleanup()


@unittest.skipUnless(shutil.which(style.CLANG_FORMAT),
                     "Debian's clang-format-14 is not installed")
class FormatRow(unittest.TestCase):
    def row(self, files):
        with Tree(files, [".clang-format"]) as tree:
            return style.format_row(tree.root / "log", tree.root)

    def test_misformatted_file_fails_alone(self):
        counts, verdict, text = self.row({"kernel/good.c": FORMATTED,
                                          "tests/bad.c": MISFORMATTED,
                                          "pmu/pmu.h": "#define PMU 1\n"})
        self.assertEqual(verdict, "fail")
        self.assertEqual((counts.passed, counts.failed), (2, 1))
        self.assertIn("tests/bad.c:2:", text)
        self.assertNotIn("kernel/good.c", text)

    def test_formatted_files_pass(self):
        counts, verdict, _ = self.row({"kernel/good.c": FORMATTED,
                                       "apic/apic.h": "#define APIC 1\n"})
        self.assertEqual((verdict, counts.passed, counts.failed),
                         ("pass", 2, 0))

    def test_only_c_sources_under_the_trees(self):
        counts, verdict, _ = self.row({"kernel/good.c": FORMATTED,
                                       "kernel/entry.S": MISFORMATTED,
                                       "bench/stray.c": MISFORMATTED})
        self.assertEqual((verdict, counts.passed, counts.failed),
                         ("pass", 1, 0))


    def test_this_tree_is_formatted(self):
        with tempfile.TemporaryDirectory() as tmp:
            counts, verdict, text = style.format_row(Path(tmp), ROOT)
        self.assertEqual(verdict, "pass", text)
        self.assertEqual(counts.passed, len(style.c_sources(ROOT)))


class MissingTools(unittest.TestCase):
    def test_missing_clang_format_is_one_named_skip(self):
        with Tree({"kernel/bad.c": MISFORMATTED}, []) as tree, \
                mock.patch.object(style, "CLANG_FORMAT", "no-such-tool-14"):
            counts, verdict, text = style.format_row(tree.root / "log",
                                                     tree.root)
            logged = (tree.root / "log" / "format.log").read_text()
        self.assertEqual((verdict, counts.skipped, counts.failed),
                         ("skip", 1, 0))
        self.assertIn("no-such-tool-14 is not installed", text)
        self.assertIn("clang-format-14", text)
        self.assertEqual(logged, text)

    def test_missing_mypy_is_one_named_skip(self):
        with Tree({"tools/lib/a.py": "x = 1\n"}, []) as tree, \
                mock.patch.object(style, "MYPY", "no-such-mypy"):
            counts, verdict, text = style.types_row(tree.root / "log",
                                                    tree.root)
        self.assertEqual((verdict, counts.skipped), ("skip", 1))
        self.assertIn("(Debian's mypy)", text)


GOOD = """\
def count(words: list[str]) -> int:
    return len(words)
"""

# The annotation says int, the function returns a str.
WRONG = """\
def count(words: list[str]) -> int:
    return ",".join(words)
"""


@unittest.skipUnless(shutil.which(style.MYPY),
                     "Debian's mypy is not installed")
class TypesRow(unittest.TestCase):
    def row(self, files):
        with Tree(files, ["mypy.ini"]) as tree:
            return style.types_row(tree.root / "log", tree.root)

    def test_wrong_annotation_fails_its_file_alone(self):
        counts, verdict, text = self.row({"tools/lib/good.py": GOOD,
                                          "tools/lib/bad.py": WRONG,
                                          "tools/lib/plain.py": "x = 1\n"})
        self.assertEqual(verdict, "fail")
        self.assertEqual((counts.passed, counts.failed), (2, 1))
        self.assertEqual(text, "tools/lib/bad.py:2: error: Incompatible "
                         "return value type (got \"str\", expected "
                         "\"int\")  [return-value]\n")


    def test_this_tree_is_typed(self):
        with tempfile.TemporaryDirectory() as tmp:
            counts, verdict, text = style.types_row(Path(tmp), ROOT)
        self.assertEqual(verdict, "pass", text)


class Makefile(unittest.TestCase):
    def test_make_format_reads_the_same_trees(self):
        line = next(line for line in
                    (ROOT / "Makefile").read_text().splitlines()
                    if line.startswith("C_TREES :="))
        self.assertEqual(tuple(line.split(":=")[1].split()), style.C_TREES)


if __name__ == "__main__":
    unittest.main()
