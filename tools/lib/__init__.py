# SPDX-License-Identifier: MIT
"""Host-side library of hvprobe's tools: KTAP parsing, QEMU command lines,
boot media and the verdict rules shared by tools/run and tools/check."""
