# SPDX-License-Identifier: MIT
"""The host package's library (tools.lib): KTAP parsing, QEMU command
lines, boot media, the serial console, guest runs and batches, scenarios
and matrices, results and the verdict rules, statistics, tables and the
command-line pieces the commands share. tools/run, tools/check and bench/
are built from it."""
