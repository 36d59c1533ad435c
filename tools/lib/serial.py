# SPDX-License-Identifier: MIT
"""A guest's serial port, as QEMU prints it on its stdout: each line
stamped with the host's seconds since QEMU started, as it arrives, and
kept in the run folder twice: serial.log holds the raw bytes, serial.times
one line per serial line, the stamp, a space and the line cleaned of line
endings and escapes (read_times reads it back). QEMU's stderr goes to
qemu.stderr.

The stamps are the host's because a guest's own clock is unreliable under
TCG. tools/run boots hvprobe through Console (guest.Run), bench/ boots
Linux through it, so both kernels are timed the same way.
"""

import os
import selectors
import subprocess
import time
from pathlib import Path

from . import ktap

LOG, TIMES, STDERR = "serial.log", "serial.times", "qemu.stderr"
# A QEMU whose stdout has closed is on its way out; this long is waited.
EXIT_WAIT_S = 5


class CannotStart(Exception):
    """QEMU could not be started (no such program, say)."""


def read_times(text):
    """(seconds, line) pairs from a serial.times file's text; a line that
    carries no stamp is passed over."""
    out = []
    for line in text.splitlines():
        stamp, _, rest = line.partition(" ")
        try:
            out.append((float(stamp), rest))
        except ValueError:
            continue
    return out


class Console:
    """One QEMU process whose stdout is a guest's serial port. A subclass
    sees each line (line()), may end the run early (line() returns True,
    or deadline() comes sooner than the timeout) and says what the end of
    the time means (expired())."""

    def __init__(self, run_dir):
        self.run_dir = Path(run_dir)
        self.exit_status = None
        self.timed_out = False
        self.cut_short = False     # QEMU was still running when reading ended
        self.wall = None

    def line(self, raw, text, stamp):
        """One serial line (bytes, and cleaned), already in serial.times;
        True ends the run here, and lines after it are not read."""
        return False

    def deadline(self, start, timeout):
        """When the run ends at the latest, in time.monotonic() seconds."""
        return start + timeout

    def expired(self):
        """The deadline came before QEMU exited."""
        self.timed_out = True

    def boot(self, argv, timeout, cwd=None):
        """Run QEMU (argv) until it exits, the deadline passes or line()
        ends the run; QEMU is killed if it still runs. CannotStart when
        it cannot be started."""
        log = open(self.run_dir / LOG, "wb")
        times = open(self.run_dir / TIMES, "w")
        stderr = open(self.run_dir / STDERR, "wb")
        with log, times, stderr:
            try:
                proc = subprocess.Popen(argv, cwd=cwd,
                                        stdin=subprocess.DEVNULL,
                                        stdout=subprocess.PIPE, stderr=stderr)
            except OSError as err:
                raise CannotStart(f"cannot start {argv[0]}: {err}") from None
            try:
                self._stream(proc, log, times, timeout)
            finally:
                if proc.poll() is None:
                    proc.kill()
                proc.wait()
                proc.stdout.close()

    def stderr_lines(self):
        """What QEMU said on stderr, as lines."""
        path = self.run_dir / STDERR
        text = path.read_text(errors="replace") if path.exists() else ""
        return text.strip().splitlines()

    def _stream(self, proc, log, times, timeout):
        start = time.monotonic()
        fd = proc.stdout.fileno()
        sel = selectors.DefaultSelector()
        sel.register(fd, selectors.EVENT_READ)
        pending, ended = b"", False
        while not ended:
            now = time.monotonic()
            deadline = self.deadline(start, timeout)
            if now >= deadline:
                self.expired()
                self.cut_short = True
                break
            if not sel.select(deadline - now):
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            log.write(chunk)
            # One stamp per read: lines that arrive together were printed
            # within one pipe buffer of each other.
            stamp = time.monotonic() - start
            *lines, pending = (pending + chunk).split(b"\n")
            for raw in lines:
                if self._line(raw, stamp, times):
                    ended = self.cut_short = True
                    pending = b""
                    break
        sel.close()
        if pending:
            self._line(pending, time.monotonic() - start, times)
        if proc.poll() is None and not self.cut_short:
            try:
                proc.wait(timeout=EXIT_WAIT_S)  # stdout closed: leaving
            except subprocess.TimeoutExpired:
                pass
        self.wall = time.monotonic() - start
        if proc.poll() is not None:
            self.exit_status = proc.returncode

    def _line(self, raw, stamp, times):
        text = ktap.clean(raw)
        times.write(f"{stamp:.6f} {text}\n")
        return self.line(raw, text, stamp)
