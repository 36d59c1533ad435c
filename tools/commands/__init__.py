# SPDX-License-Identifier: MIT
"""One module per host command; tools/entry.py runs them (tools/run is
run.py here, tools/lava/run lava_run.py)."""
