# SPDX-License-Identifier: MIT
"""The exit statuses every host command shares, and the exceptions that
mean "this could not take place here" (CannotRun) and "nor can what
follows" (CannotWrite, a full disk).

tools/entry.py turns a command's CannotRun into EXIT_CANNOT_RUN with its
message (through the command's EXITS), Ctrl-C into EXIT_INTERRUPTED and
any other exception into EXIT_INTERNAL_ERROR. A command with a status of
its own (tools/pmi-verdict's "no verdict") adds it above these.
"""

EXIT_OK = 0             # passed, counted, or judged as asked
EXIT_FAILED = 1         # a run failed, or a check did
EXIT_USAGE = 2          # bad usage (argparse's own status)
EXIT_CANNOT_RUN = 3     # nothing to judge: no build, no QEMU, no KVM...
EXIT_INTERNAL_ERROR = 70    # sysexits.h's EX_SOFTWARE: a bug in the tools
EXIT_INTERRUPTED = 130  # Ctrl-C, SIGTERM or SIGHUP (128 + SIGINT)


class CannotRun(Exception):
    """The run could not take place; not a verdict on the kernel."""


class CannotWrite(CannotRun):
    """A file of the run could not be written (a full disk, a folder
    gone read-only): this run stops, and so does any queue it is part
    of, since the next run would fail the same way."""

    @classmethod
    def of(cls, path, err: OSError) -> "CannotWrite":
        """"cannot write PATH: No space left on device" for err."""
        return cls(f"cannot write {path}: {err.strerror or err}")
