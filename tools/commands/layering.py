# SPDX-License-Identifier: MIT
"""Check that includes and imports follow the house plan
(tools/lib/layering.py): print every include or import the plan forbids
and every cycle among folders, packages and apic/smp's files, or with
--graph what each folder includes, each package imports and each of
apic/smp's files calls.

Exit status: 0 the plan holds, 1 it does not, 2 bad usage.
"""

from tools.lib import cli, layering
from tools import ROOT

PROG = "tools/layering"


def main(argv):
    p = cli.parser(PROG, __doc__)
    p.add_argument("--graph", action="store_true",
                   help="print what each folder includes, each package "
                   "imports and each of apic/smp's files calls, then check")
    args = p.parse_args(argv)
    if args.graph:
        for src, dsts in layering.graph(ROOT).items():
            print(f"{src} -> {', '.join(dsts)}")
    bad, loops = layering.check(ROOT)
    for line in bad:
        print(line)
    for loop in loops:
        print(f"cycle: {loop}")
    if bad or loops:
        return 1
    print("includes and imports follow the plan; no cycle among folders, "
          "packages or apic/smp's files")
    return 0
