# SPDX-License-Identifier: MIT
"""bench/: figures against Debian's Linux. What is its own lives here (the
Linux reference kernel, the side-by-side table) and in bench.commands (a
module per command, started through tools/entry.py); booting hvprobe,
progress, statistics, KTAP and DATA come from the host package, tools.lib.
"""
