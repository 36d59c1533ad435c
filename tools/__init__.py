# SPDX-License-Identifier: MIT
"""hvprobe's host package: everything on the host side that is not the
kernel. tools.lib is the library (KTAP parser, QEMU command lines, guest
runs and batches, results, statistics, tables); tools.commands holds one
module per command (tools/run is tools.commands.run, started through
tools/entry.py); tools.tests are their unit tests. bench/ is a package of
its own that uses this one.

Everything imports it from the checkout's root: `from tools.lib.analysis
import ktap`. The commands get there through tools/entry.py, the tests through
`python3 -m unittest` at the root (tools/check does the same).
"""

from pathlib import Path

TOOLS = Path(__file__).resolve().parent
ROOT = TOOLS.parent
