# SPDX-License-Identifier: MIT
"""One guest run with the host probe attached from its first instruction.

QEMU starts paused (-S) with a QMP socket of its own; the probe finds
its vCPU threads (by their "CPU n/KVM" names) and starts perf on them;
only once perf has acknowledged that it counts is the guest resumed
(QMP "cont"). So no mark and no event can come before the probe
watches, however loaded the host. guest.run() does the rest as for any
run (serial log, results.json) in a thread beside this one.
"""

import dataclasses
import os
import shutil
import signal
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from ..launch import guest
from ..launch.qmp import QMPError, qmp
from . import hostprobe

QMP_WAIT_S = 20
KILL_WAIT_S = 5             # for QEMU to go after quit, then SIGTERM
# For a QEMU that is already on its way out (its threads ending, its
# memory being freed) to be gone.
EXIT_WAIT_S = 30


def find_qemu(marker, alive, wait_s=QMP_WAIT_S) -> int | None:
    """The pid of the process whose command line holds marker (our QMP
    socket's path, which no other QEMU has), while alive() holds."""
    needle = marker.encode()
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline and alive():
        for cmdline in hostprobe.PROC.glob("[0-9]*/cmdline"):
            try:
                if needle in cmdline.read_bytes():
                    return int(cmdline.parent.name)
            except OSError:
                continue
        time.sleep(0.05)
    return None


def paused(machine, sock) -> Any:
    """machine, started paused with a QMP socket at sock."""
    return dataclasses.replace(
        machine, extra=list(machine.extra) +
        ["-S", "-qmp", f"unix:{sock},server=on,wait=off"])


def probed_run(machine, words, run_dir, timeout, probe, scenario=None,
               expect_status=None) -> tuple[Any, Any]:
    """Boot machine with the kernel command line words in run_dir while
    probe (an open hostprobe.Probe, writing into run_dir) counts it:
    (guest.Outcome, hostprobe.Result). guest.CannotRun and
    hostprobe.CannotProbe pass through; QEMU never outlives this call."""
    tmp = Path(tempfile.mkdtemp(prefix="hvprobe-qmp."))
    sock = tmp / "qmp.sock"
    # "outcome": guest.run's Outcome, or "error": what it raised.
    box: dict[str, Any] = {}

    def boot() -> None:
        try:
            box["outcome"] = guest.run(paused(machine, sock), words, run_dir,
                                       timeout, scenario=scenario,
                                       expect_status=expect_status)
        except BaseException as err:    # re-raised in the caller
            box["error"] = err

    thread = threading.Thread(target=boot, name="guest", daemon=True)
    pid = None
    try:
        thread.start()
        pid = find_qemu(str(sock), thread.is_alive)
        if pid is None:
            thread.join(timeout + 30)
            if "error" in box:
                raise box["error"]
            raise guest.CannotRun("QEMU did not start (no process with "
                                  f"{sock} on its command line)")
        try:
            probe.attach(pid, want_vcpus=machine.smp)
            qmp(sock, "cont")
        except BaseException:
            end_qemu(sock, pid, thread)
            raise
        try:
            thread.join(timeout + 30)
        except BaseException:
            # Interrupted (Ctrl-C, SIGTERM, SIGHUP): QEMU must not
            # outlive us, nor run on unprobed.
            end_qemu(sock, pid, thread)
            raise
        if thread.is_alive():
            raise guest.CannotRun(f"the guest run still ran {timeout + 30} "
                                  "s after its timeout")
        if "error" in box:
            raise box["error"]
        log = run_dir / "serial.log"
        text = log.read_text(errors="replace") if log.exists() else ""
        return box["outcome"], probe.finish(text)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def ours(pid, sock) -> bool:
    """Whether process pid is still our QEMU (its command line names our
    QMP socket), not a process that took the number since."""
    try:
        return str(sock).encode() in \
            (hostprobe.PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return False


def end_qemu(sock, pid, thread) -> None:
    """End QEMU: QMP quit, then SIGTERM, then SIGKILL, each given
    KILL_WAIT_S; then let the guest thread (its serial log, results.json)
    finish."""
    with _quiet():
        qmp(sock, "quit", wait_s=KILL_WAIT_S)
    thread.join(KILL_WAIT_S)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if not thread.is_alive() or not ours(pid, sock):
            break
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            break
        thread.join(KILL_WAIT_S)
    # An exiting process has an empty command line (proc(5)), so ours()
    # says no while it still runs; it is our child, unreaped, so its pid
    # is still its own: wait for it to end, or the tool that exits next
    # leaves it behind.
    deadline = time.monotonic() + EXIT_WAIT_S
    while running(pid) and time.monotonic() < deadline:
        time.sleep(0.05)


def running(pid) -> bool:
    """Whether pid runs (a zombie has ended: it only waits to be reaped)."""
    try:
        stat = (hostprobe.PROC / str(pid) / "stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


class _quiet:
    def __enter__(self) -> "_quiet":
        return self

    def __exit__(self, kind, value, tb) -> bool:
        return kind is not None and issubclass(kind, (QMPError, OSError))


def guest_data(doc, test) -> dict[str, Any] | None:
    """The main DATA object of test in a results.json document (not its
    per-counter records), or None."""
    for t in doc.get("tests", []):
        for d in t.get("data", []):
            if isinstance(d, dict) and d.get("test") == test \
                    and "record" not in d:
                return d
    return None


def guest_test(doc, test) -> dict[str, Any] | None:
    """The results.json entry of test, or None."""
    return next((t for t in doc.get("tests", []) if t["name"] == test), None)
