# SPDX-License-Identifier: MIT
"""The guest runs its tests in the Makefile's TESTS order. The runner
walks the hvprobe_tests table as the linker laid it out (kernel/test/
test.h), and the Makefile links the tests last, in TESTS order: so the
descriptors' addresses in build/hvprobe.elf must follow TESTS as the
build exports it (buildinfo.tests()), which README's Tests table and
every tool read as the run order."""

import re
import subprocess
import unittest

from tools import ROOT
from tools.lib import buildinfo, cli

ELF = ROOT / "build" / "hvprobe.elf"


def table_order(nm_output) -> list[str]:
    """Test names in the order of their descriptors' addresses, from
    `nm` output (DEFINE_TEST's test_desc_NAME symbols)."""
    found = []
    for line in nm_output.splitlines():
        m = re.fullmatch(r"([0-9a-f]+) [rRdD] test_desc_(\w+)", line.strip())
        if m:
            found.append((int(m.group(1), 16), m.group(2)))
    return [name for _, name in sorted(found)]


class RunOrder(unittest.TestCase):
    def test_table_follows_tests(self):
        why = cli.build(ROOT)
        if why:
            self.fail(why)
        nm = subprocess.run(["nm", str(ELF)], capture_output=True, text=True,
                            check=True, stdin=subprocess.DEVNULL)
        self.assertEqual(table_order(nm.stdout), list(buildinfo.tests()))

    def test_order_is_by_address(self):
        out = ("0000000000101020 r test_desc_smp\n"
               "0000000000101000 r test_desc_boot\n"
               "0000000000101040 T test_smp\n")
        self.assertEqual(table_order(out), ["boot", "smp"])


if __name__ == "__main__":
    unittest.main()
