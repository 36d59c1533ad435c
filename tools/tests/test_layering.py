# SPDX-License-Identifier: MIT
"""The house plan's checker: the tree follows it, and one forbidden
include or one cycle turns it red with the offending line named."""

import tempfile
import unittest
from pathlib import Path

from tools import ROOT
from tools.lib import layering


def tree(files):
    """A temporary tree holding files ({path: text})."""
    tmp = tempfile.TemporaryDirectory()
    for path, text in files.items():
        p = Path(tmp.name) / path
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return tmp


class Plan(unittest.TestCase):
    def test_the_tree_follows_the_plan(self):
        bad, loops = layering.check(ROOT)
        self.assertEqual(bad, [])
        self.assertEqual(loops, [])

    def test_a_forbidden_include_is_named(self):
        with tree({"kernel/time/delay.c": '#include "kernel/lib/string.h"\n'
                                           '#include "apic/smp.h"\n',
                   "apic/smp.h": ""}) as root:
            bad, _ = layering.check(root)
        self.assertEqual(len(bad), 1)
        self.assertIn('kernel/time/delay.c:2: includes "apic/smp.h"', bad[0])
        self.assertIn("kernel/time may include", bad[0])

    def test_a_subfolder_may_not_reach_up(self):
        with tree({"kernel/x86/trap.c": '#include "kernel/test/test.h"\n',
                   "kernel/lib/printf.c": '#include "kernel/x86/x86.h"\n'}) as root:
            bad, _ = layering.check(root)
        self.assertEqual(len(bad), 2)

    def test_the_composer_and_the_tests_may_include_anything(self):
        with tree({"kernel/main.c": '#include "pmu/pmu.h"\n#include "apic/apic.h"\n',
                   "tests/smp.c": '#include "apic/smp/smp.h"\n',
                   "tests/unit/test_x.c": '#include "pmu/pmu.h"\n'}) as root:
            self.assertEqual(layering.check(root), ([], []))

    def test_smp_bring_up_stands_above_the_apic(self):
        with tree({"apic/smp/smp.c": '#include "apic/apic.h"\n',
                   "apic/timer.c": '#include "apic/smp/smp.h"\n',
                   "apic/apic.h": "", "apic/smp/smp.h": ""}) as root:
            bad, loops = layering.check(root)
        self.assertEqual(len(bad), 1)
        self.assertIn('apic/timer.c:1: includes "apic/smp/smp.h"', bad[0])
        self.assertEqual(loops, ["apic -> apic/smp -> apic"])

    def test_a_cycle_is_reported(self):
        with tree({"hv/kvm.c": '#include "apic/apic.h"\n',
                   "apic/apic.c": '#include "hv/kvm.h"\n'}) as root:
            bad, loops = layering.check(root)
        self.assertEqual(loops, ["apic -> hv -> apic"])
        self.assertTrue(bad)


if __name__ == "__main__":
    unittest.main()
