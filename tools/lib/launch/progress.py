# SPDX-License-Identifier: MIT
"""Progress of many runs: one live line on a terminal, plain lines in a
log or a pipe (CI logs must not fill with carriage returns).

On a terminal each finished run is printed above the live line, which is
then redrawn; a ticker thread keeps the elapsed time moving while runs
are long. Everything prints under one lock: runs finish from several
threads. A reader that goes away (tools/run --matrix | head) stops the
printing, not the runs.
"""

import os
import sys
import threading
import time


class Progress:
    def __init__(self, total, stream=None, live=None,
                 clock=time.monotonic) -> None:
        self.total = total
        self.stream = stream or sys.stdout
        self.live = self.stream.isatty() if live is None else live
        self.clock = clock
        self.start = clock()
        self.done = self.running = self.failed = self.skipped = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        self._drawn = False

    def __enter__(self) -> "Progress":
        if self.live:
            self._ticker = threading.Thread(target=self._tick, daemon=True)
            self._ticker.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._ticker:
            self._ticker.join()
        with self._lock:
            try:
                self._erase()
                self.stream.flush()
            except BrokenPipeError:
                self._gone()

    def counts(self) -> str:
        elapsed = self.clock() - self.start
        text = (f"[{self.done}/{self.total}] running {self.running}, "
                f"failed {self.failed}")
        if self.skipped:
            text += f", skipped {self.skipped}"
        return text + f", {elapsed:.1f} s"

    def _gone(self) -> None:
        """The reader went away: write on into /dev/null."""
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, self.stream.fileno())
        except (OSError, ValueError, AttributeError):
            self.stream = open(os.devnull, "w")
        finally:
            os.close(null)
        self.live = False

    def started(self) -> None:
        with self._lock:
            self.running += 1
            self._draw()

    def finished(self, line, failed=False, skipped=False) -> None:
        """A run ended: line says which and how."""
        with self._lock:
            self.running -= 1
            self.done += 1
            self.failed += failed
            self.skipped += skipped
            try:
                if self.live:
                    self._erase()
                    self.stream.write(line + "\n")
                    self._draw()
                else:
                    self.stream.write(f"{self.counts()}  {line}\n")
                self.stream.flush()
            except BrokenPipeError:
                self._gone()

    def note(self, line) -> None:
        """A line of its own (a failing run's details), above the live
        line on a terminal."""
        with self._lock:
            try:
                self._erase()
                self.stream.write(line + "\n")
                self._draw()
                self.stream.flush()
            except BrokenPipeError:
                self._gone()

    def _erase(self) -> None:
        if self.live and self._drawn:
            self.stream.write("\r\x1b[K")
            self._drawn = False

    def _draw(self) -> None:
        if self.live:
            try:
                self.stream.write("\r\x1b[K" + self.counts())
                self._drawn = True
                self.stream.flush()
            except BrokenPipeError:
                self._gone()

    def _tick(self) -> None:
        while not self._stop.wait(0.5):
            with self._lock:
                self._draw()
