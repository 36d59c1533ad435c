# SPDX-License-Identifier: MIT
"""The host package's bottom floor: what every other floor shares and
nothing of theirs. The exit statuses (exits), status words (status), the
guest's exit codes through isa-debug-exit (guestexit), the names of the
files a batch leaves (files), Debian's host-kernel series (series), JSON
files written whole (jsonfile), durations in seconds (seconds), signals
as KeyboardInterrupt (signals), Debian's version order (debversion), a
root run's files given to the checkout's owner (owner) and the checked
apt download (aptdeb). It imports nothing of the package
but its root (tools: ROOT, TOOLS); tools/lib/layering.py holds it to
that."""
