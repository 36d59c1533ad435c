# SPDX-License-Identifier: MIT
"""A guest's serial port, as QEMU prints it on its stdout: each line
stamped with the host's seconds since QEMU started, as it arrives, and
kept in the run folder twice: serial.log holds the raw bytes, serial.times
one line per serial line, the stamp, a space and the line cleaned of line
endings and escapes (read_times reads it back). QEMU's stderr goes to
qemu.stderr. A file that cannot be written (a full disk) ends the run
with CannotWrite, naming it.

The stamps are the host's because a guest's own clock is unreliable under
TCG. tools/run boots hvprobe through Console (guest.Run), bench/ boots
Linux through it, so both kernels are timed the same way.

Every child a host command starts to do its work (QEMU, a tools/run of a
matrix or a soak) starts through spawn(): in a process group of its own,
so that a timeout or an interrupt kills the group (tools/run and its
QEMU), and with PR_SET_PDEATHSIG, so that it dies with its parent even
when that is killed outright. stop_all() is the interrupt: it kills every
group still running and refuses new ones; a run cut short that way raises
Interrupted, not a crash.
"""

import ctypes
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..analysis import ktap
from ..base.exits import CannotWrite
from ..base.text import escaped

LOG, TIMES, STDERR = "serial.log", "serial.times", "qemu.stderr"
# A QEMU whose stdout has closed is on its way out; this long is waited.
EXIT_WAIT_S = 5
# A guest's output is bounded: a run stops once it has printed MAX_OUTPUT
# bytes (flooded), and a line is cut every MAX_LINE bytes (the longest
# DATA line, 1024 vCPUs' bring-up, is a few tens of KiB). hvprobe's
# whole suite prints well under 1 MiB.
MAX_OUTPUT = 64 << 20
MAX_LINE = 256 << 10
# How often a running console is asked whether to stop (Console.stopped()).
POLL_S = 30


def flood_mark() -> str:
    """The line that ends a flooded serial.log and serial.times, so
    that a reader sees where the host stopped keeping what came."""
    return f"[hvprobe: cut here, past {MAX_OUTPUT} bytes of output]"


class CannotStart(Exception):
    """QEMU could not be started (no such program, say)."""


class Interrupted(Exception):
    """stop_all() ended the run (Ctrl-C, SIGTERM, SIGHUP): no verdict."""


# prctl(2): the signal a child gets when the thread that made it exits.
PR_SET_PDEATHSIG = 1
_LIBC: ctypes.CDLL | None
try:
    _LIBC = ctypes.CDLL(None, use_errno=True)
except OSError:
    _LIBC = None
_live = set()
_live_lock = threading.Lock()
STOP = threading.Event()


def _die_with(parent) -> Callable[[], None]:
    """The child's first act: die by SIGKILL when its parent does, and at
    once if the parent is already gone. Only async-signal-safe calls."""
    def preexec() -> None:
        if _LIBC is not None:
            _LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(137)
    return preexec


def spawn(argv, **kwargs) -> subprocess.Popen[Any]:
    """subprocess.Popen(argv, **kwargs), its own process group, dying
    with this process; Interrupted once stop_all() was called."""
    with _live_lock:
        if STOP.is_set():
            raise Interrupted("interrupted before it started")
        proc = subprocess.Popen(argv, start_new_session=True,
                                preexec_fn=_die_with(os.getpid()), **kwargs)
        _live.add(proc)
    return proc


def kill(proc) -> None:
    """Kill proc's process group (proc and all it started), reap proc and
    forget it."""
    with _live_lock:
        if proc.returncode is None and proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass
        _live.discard(proc)
    proc.wait()


def run_child(argv, timeout, **kwargs) -> tuple[int | None, Any]:
    """spawn(argv, **kwargs), waited for up to timeout seconds and then
    killed with its group: (its exit status, None when it ran past the
    timeout; what communicate() returned). Interrupted when stop_all()
    came before it started or while it ran."""
    proc = spawn(argv, **kwargs)
    try:
        said, _ = proc.communicate(timeout=timeout)
        rc = proc.returncode
    except subprocess.TimeoutExpired:
        rc, said = None, None
    finally:
        kill(proc)
    if STOP.is_set():
        raise Interrupted("interrupted")
    return rc, said


def stop_all() -> None:
    """The interrupt: no new child starts, every running one is killed
    with its group."""
    STOP.set()
    with _live_lock:
        procs = list(_live)
    for proc in procs:
        kill(proc)


class _RunFile:
    """A file of the run folder whose every failure (a full disk, often
    seen only when a buffer is flushed) is CannotWrite naming it.
    serial.log is unbuffered, so that a user following it sees each
    chunk as it came; serial.times is flushed after each chunk."""

    def __init__(self, path, mode, buffering=-1) -> None:
        self.path = path
        self.file = self._do(open, path, mode, buffering)

    def _do(self, act, *args) -> Any:
        try:
            return act(*args)
        except OSError as err:
            raise CannotWrite.of(self.path, err) from None

    def write(self, data) -> None:
        self._do(self.file.write, data)

    def flush(self) -> None:
        self._do(self.file.flush)

    def __enter__(self) -> "_RunFile":
        return self

    def __exit__(self, kind, *_) -> None:
        if kind is None:
            self._do(self.file.close)
            return
        try:    # what is already on its way out says more
            self.file.close()
        except OSError:
            pass


def read_times(text) -> list[tuple[float, str]]:
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


def after(console) -> str:
    """" after N s" of a console's QEMU, where it ran to an end."""
    return f" after {console.wall:.0f} s" if console.wall is not None else ""


def ended(console, timeout) -> str:
    """Why a console's QEMU stopped: its time ran out, it flooded, or
    QEMU exited, which before the guest said it was done is a guest that
    reset or powered off (QEMU runs with -no-reboot)."""
    if console.timed_out:
        return f"still running after {timeout} s"
    if console.flooded:
        return "stopped: it printed more than a boot's output may"
    took = after(console)
    if killed := console.killed():
        return f"QEMU exited{took}: {killed}"
    if console.exit_status == 0:
        return f"QEMU exited with status 0{took}, with no end marker: " \
            "the guest reset or powered off (-no-reboot)"
    return f"QEMU exited with status {console.exit_status}{took}"


class Console:
    """One QEMU process whose stdout is a guest's serial port. A subclass
    sees each line (line()), may end the run early (line() returns True,
    or deadline() comes sooner than the timeout) and says what the end of
    the time means (expired())."""

    def __init__(self, run_dir) -> None:
        self.run_dir = Path(run_dir)
        self.exit_status: int | None = None
        self.timed_out = False
        self.cut_short = False     # QEMU was still running when reading ended
        self.flooded = False       # it was stopped past MAX_OUTPUT bytes
        self.wall: float | None = None
        self.pid: int | None = None  # QEMU's, while it runs

    def line(self, raw, text, stamp) -> bool:
        """One serial line (bytes, and cleaned), already in serial.times;
        True ends the run here, and lines after it are not read."""
        return False

    def deadline(self, start, timeout) -> float:
        """When the run ends at the latest, in time.monotonic() seconds."""
        return start + timeout

    def expired(self) -> None:
        """The deadline came before QEMU exited."""
        self.timed_out = True

    def stopped(self) -> bool:
        """Asked every POLL_S seconds while QEMU runs, lines or not: True
        ends the run now (the subclass keeps why)."""
        return False

    def boot(self, argv, timeout, cwd=None) -> None:
        """Run QEMU (argv) until it exits, the deadline passes or line()
        ends the run; QEMU is killed if it still runs. CannotStart when
        it cannot be started."""
        log = _RunFile(self.run_dir / LOG, "wb", buffering=0)
        times = _RunFile(self.run_dir / TIMES, "w")
        stderr = _RunFile(self.run_dir / STDERR, "wb")
        with log, times, stderr:
            try:
                proc = spawn(argv, cwd=cwd, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=stderr.file)
            except OSError as err:
                raise CannotStart(f"cannot start {argv[0]}: {err}") from None
            self.pid = proc.pid
            try:
                self._stream(proc, log, times, timeout)
            finally:
                kill(proc)
                if proc.stdout:
                    proc.stdout.close()
        if STOP.is_set():
            raise Interrupted("interrupted")

    def stderr_lines(self) -> list[str]:
        """What QEMU said on stderr, as lines."""
        path = self.run_dir / STDERR
        text = path.read_text(errors="replace") if path.exists() else ""
        return text.strip().splitlines()

    def killed(self) -> str | None:
        """QEMU's own line saying a signal ended it, or None: it exits
        with status 0 on SIGTERM, as when the guest powers off."""
        said = [line for line in self.stderr_lines()
                if "terminating on signal" in line]
        return escaped(said[-1]) if said else None

    def _stream(self, proc, log, times, timeout) -> None:
        start = time.monotonic()
        fd = proc.stdout.fileno()
        sel = selectors.DefaultSelector()
        sel.register(fd, selectors.EVENT_READ)
        pending, ended, total = b"", False, 0
        next_poll = start + POLL_S
        while not ended:
            now = time.monotonic()
            deadline = self.deadline(start, timeout)
            if now >= deadline:
                self.expired()
                self.cut_short = True
                break
            if now >= next_poll:
                next_poll = now + POLL_S
                if self.stopped():
                    self.cut_short = True
                    break
            if not sel.select(min(deadline, next_poll) - now):
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            chunk = chunk[:MAX_OUTPUT - total]
            total += len(chunk)
            log.write(chunk)
            # One stamp per read: lines that arrive together were printed
            # within one pipe buffer of each other.
            stamp = time.monotonic() - start
            *lines, pending = (pending + chunk).split(b"\n")
            # Long lines are cut (pending stays short, so that joining
            # stays linear); the raw log keeps every byte.
            lines = [line[i:i + MAX_LINE] for line in lines
                     for i in range(0, max(len(line), 1), MAX_LINE)]
            while len(pending) > MAX_LINE:
                lines.append(pending[:MAX_LINE])
                pending = pending[MAX_LINE:]
            if total >= MAX_OUTPUT:
                self.flooded = ended = self.cut_short = True
            for raw in lines:
                if self._line(raw, stamp, times):
                    ended = self.cut_short = True
                    pending = b""
                    break
            times.flush()
        sel.close()
        if pending:
            self._line(pending, time.monotonic() - start, times)
        if self.flooded:
            log.write(f"\n{flood_mark()}\n".encode())
            times.write(f"{time.monotonic() - start:.6f} {flood_mark()}\n")
        if proc.poll() is None and not self.cut_short:
            try:
                proc.wait(timeout=EXIT_WAIT_S)  # stdout closed: leaving
            except subprocess.TimeoutExpired:
                pass
        self.wall = time.monotonic() - start
        if proc.poll() is not None:
            self.exit_status = proc.returncode

    def _line(self, raw, stamp, times) -> bool:
        text = ktap.clean(raw)
        times.write(f"{stamp:.6f} {text}\n")
        return self.line(raw, text, stamp)
