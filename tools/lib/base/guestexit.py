# SPDX-License-Identifier: MIT
"""The guest's exit codes: what QEMU's exit status says of a run. The
launcher puts the device on the command line, the analysis reads the
status back; both take it from here."""

# isa-debug-exit turns the guest's write of v to port 0xf4 into QEMU's exit
# status (v << 1) | 1: 1 means the kernel passed, 3 that something failed.
DEBUG_EXIT = "isa-debug-exit,iobase=0xf4,iosize=0x04"
EXIT_PASSED, EXIT_FAILED = 1, 3
