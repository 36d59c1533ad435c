# SPDX-License-Identifier: MIT
"""SIGTERM and SIGHUP handled as Ctrl-C is, for commands that place
state on the host (kprobe events, a tracefs mount, perf, QEMU).

Inside interruptible(), the first of SIGINT, SIGTERM and SIGHUP raises
KeyboardInterrupt in the main thread, so the same `with` and `finally`
blocks undo what was placed whichever signal came (a systemd stop or a
closed terminal as much as Ctrl-C). Later ones are noted but raise
nothing, so that the undoing itself is not cut short. A Python handler,
unlike SIG_IGN, is not inherited by the programs the cleanup starts.
"""

import contextlib
import signal
import threading
from collections.abc import Iterator

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Caught:
    """Which signal interrupted the command, if any."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self.more = 0

    def handler(self, signum, frame) -> None:
        if self.signum is None:
            self.signum = signum
            raise KeyboardInterrupt(signal.Signals(signum).name)
        self.more += 1

    @property
    def name(self) -> str | None:
        return None if self.signum is None else \
            signal.Signals(self.signum).name


@contextlib.contextmanager
def interruptible() -> Iterator[Caught]:
    """Within it, SIGINT, SIGTERM and SIGHUP raise KeyboardInterrupt
    once; the handlers before it are restored after. Outside the main
    thread (a test harness) signals are left as they are."""
    caught = Caught()
    if threading.current_thread() is not threading.main_thread():
        yield caught
        return
    before = {s: signal.signal(s, caught.handler) for s in SIGNALS}
    try:
        yield caught
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)
