# SPDX-License-Identifier: MIT
"""The house plan's checker: the tree follows it, and one forbidden
include or import, or one cycle, turns it red with the offending line
named."""

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


# Three bring-up files: the modes (smp.c, parallel.c) above the floor
# they share (ap.c), which calls neither.
SMP = {"apic/smp/ap.c": "void smp_wake(int cpu)\n{\n}\n"
                        "static void kick(int cpu)\n{\n\tsmp_wake(cpu);\n}\n"
                        "void smp_kick_all(void)\n{\n\tkick(1);\n}\n",
       "apic/smp/parallel.c": "void smp_parallel_boot(void)\n{\n"
                              "\tsmp_kick_all();\n}\n",
       "apic/smp/smp.c": "/* smp_wake() alone calls nothing */\n"
                         "static void kick(int cpu)\n{\n}\n"
                         "void smp_boot(void)\n{\n\tsmp_parallel_boot();\n"
                         "\tsmp_wait(smp_wake, \"smp_kick_all\");\n}\n"}


class OneWayCalls(unittest.TestCase):
    def test_modes_above_their_floor_pass(self):
        with tree(SMP) as root:
            self.assertEqual(layering.check(root), ([], []))
            edges = layering.graph(root)
        self.assertEqual(edges["apic/smp/smp.c"],
                         ["apic/smp/ap.c", "apic/smp/parallel.c"])
        self.assertEqual(edges["apic/smp/parallel.c"], ["apic/smp/ap.c"])
        self.assertNotIn("apic/smp/ap.c", edges)

    def test_a_call_back_up_is_a_circle_named_by_its_calls(self):
        # The floor asks a mode for something: parallel.c -> ap.c -> parallel.c.
        with tree({**SMP, "apic/smp/ap.c": SMP["apic/smp/ap.c"] +
                   "void smp_wait(void)\n{\n\tsmp_parallel_boot();\n}\n"}) as root:
            bad, loops = layering.check(root)
        self.assertEqual(bad, [])
        self.assertEqual(loops, [
            "apic/smp/ap.c -> apic/smp/parallel.c -> apic/smp/ap.c "
            "(apic/smp/ap.c:14 calls smp_parallel_boot; "
            "apic/smp/parallel.c:3 calls smp_kick_all)"])

    def test_a_function_passed_by_name_counts_as_a_call(self):
        with tree({**SMP, "apic/smp/ap.c": SMP["apic/smp/ap.c"] +
                   "void smp_wait(void)\n{\n\trun(smp_boot);\n}\n"}) as root:
            _, loops = layering.check(root)
        # smp.c calls ap.c itself, and round parallel.c.
        self.assertEqual([loop.split(" (")[0] for loop in loops], [
            "apic/smp/ap.c -> apic/smp/smp.c -> apic/smp/ap.c",
            "apic/smp/ap.c -> apic/smp/smp.c -> apic/smp/parallel.c -> "
            "apic/smp/ap.c"])
        self.assertIn("apic/smp/ap.c:14 calls smp_boot", loops[0])

    def test_the_bring_up_files_call_one_way(self):
        found = layering.calls(ROOT)
        self.assertTrue(found)
        self.assertEqual(layering.call_cycles(found), [])


# The smallest package on three floors: base, launch above it, the
# host's description (hostinfo) between them.
PACKAGE = {"tools/__init__.py": "ROOT = None\n",
           "tools/lib/__init__.py": "",
           "tools/lib/base/__init__.py": "",
           "tools/lib/base/exits.py": "EXIT_OK = 0\n",
           "tools/lib/hostinfo.py": "from .. import ROOT\n",
           "tools/lib/launch/__init__.py": "",
           "tools/lib/launch/kvm.py": "from .. import hostinfo\n"
                                      "from ..base import exits\n"}


class Floors(unittest.TestCase):
    def test_the_package_has_no_upward_import_and_no_cycle(self):
        found = layering.imports(ROOT)
        self.assertTrue(found)
        self.assertEqual(layering.forbidden_imports(found), [])
        self.assertEqual(layering._loops(layering.import_edges(found)), [])

    def test_imports_that_run_down_pass(self):
        with tree(PACKAGE) as root:
            self.assertEqual(layering.check(root), ([], []))

    def test_an_import_up_a_floor_is_named(self):
        with tree({**PACKAGE, "tools/lib/base/exits.py":
                   "import os\nfrom ..launch import kvm\n"}) as root:
            bad, _ = layering.check(root)
        self.assertEqual(len(bad), 1)
        self.assertIn("tools/lib/base/exits.py:2: imports "
                      "tools.lib.launch.kvm", bad[0])
        self.assertIn("floor base", bad[0])

    def test_a_cycle_behind_a_function_level_import_is_found(self):
        # hostinfo and cli share a floor, so either may import the
        # other; both at once is a cycle, though one hides in a function.
        with tree({**PACKAGE, "tools/lib/cli.py": "from . import hostinfo\n",
                   "tools/lib/hostinfo.py": "def f():\n"
                                            "    from . import cli\n"}) as root:
            bad, loops = layering.check(root)
        self.assertEqual(bad, [])
        self.assertEqual(loops, ["tools.lib.cli -> tools.lib.hostinfo -> "
                                 "tools.lib.cli"])

    def test_a_module_on_no_floor_is_named(self):
        with tree({**PACKAGE, "tools/lib/extra.py": "from . import hostinfo\n"}) as root:
            bad, _ = layering.check(root)
        self.assertEqual(len(bad), 1)
        self.assertIn("tools.lib.extra is on no floor", bad[0])

    def test_the_readme_states_the_floors(self):
        text = (ROOT / "README.md").read_text()
        layout = text[text.index("## Layout"):text.index("Adding things")]
        for name, units in layering.FLOORS[1:]:
            for unit in units:
                leaf = unit.rsplit(".", 1)[-1]
                self.assertIn(leaf, layout, f"{unit} (floor {name})")


if __name__ == "__main__":
    unittest.main()
