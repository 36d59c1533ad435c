# SPDX-License-Identifier: MIT
"""The C tree's one spelling for a reason handed back to the caller:
`char *why, size_t whylen` for a message written into the caller's
buffer, `const char **why` for a constant one. A new `err, errlen` (or
any other name for the same thing) fails here."""

import re
import unittest

from tools import ROOT

FOLDERS = ("apic", "boot", "hv", "kernel", "pmu", "tests")
# A reason handed back: a char buffer and its size, or a pointer to a
# constant string, under any of the names the tree once used for it.
_REASON = r"(?:err|error|errbuf|msg|message|reason|why)"
_PAIR = re.compile(rf"\bchar \*({_REASON}), size_t (\w+)\)")
_CONST = re.compile(rf"\bconst char \*\*({_REASON})\)")


def c_files():
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.[ch]")):
            yield path


class WhySpelling(unittest.TestCase):
    def test_message_buffers_are_why_and_whylen(self):
        odd = [f"{p.relative_to(ROOT)}: char *{a}, size_t {b}"
               for p in c_files()
               for a, b in _PAIR.findall(p.read_text(errors="replace"))
               if (a, b) != ("why", "whylen")]
        self.assertEqual(odd, [])

    def test_constant_reasons_are_why(self):
        odd = [f"{p.relative_to(ROOT)}: const char **{name}"
               for p in c_files()
               for name in _CONST.findall(p.read_text(errors="replace"))
               if name != "why"]
        self.assertEqual(odd, [])


if __name__ == "__main__":
    unittest.main()
