# SPDX-License-Identifier: MIT
"""make check's python row: the tools' and bench's own Python tests, run
in a child process, one case per test method."""

import contextlib
import dataclasses
import io
import json
import os
import subprocess
import sys
import unittest
from collections.abc import Iterator
from pathlib import Path

from ... import ROOT
from ..analysis import results
from ..base import jsonfile
from ..base.status import Status
from ..launch import serial


def python_suite() -> unittest.TestSuite:
    """The Python tests: what `python3 -m unittest` at the checkout's root
    finds (the tests of the tools and bench packages), found the same
    way."""
    return unittest.defaultTestLoader.discover(str(ROOT),
                                               top_level_dir=str(ROOT))


@contextlib.contextmanager
def fds_into(path) -> Iterator[None]:
    """Standard output and error, file descriptors included, into path
    for the time of the block: what a child process prints (a test that
    runs make) goes to the log, not to the terminal."""
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    saved = [os.dup(1), os.dup(2)]
    try:
        with open(path, "wb") as out:
            os.dup2(out.fileno(), 1)
            os.dup2(out.fileno(), 2)
            try:
                yield
            finally:
                for stream in (sys.stdout, sys.stderr):
                    stream.flush()
                os.dup2(saved[0], 1)
                os.dup2(saved[1], 2)
    finally:
        for fd in saved:
            os.close(fd)


# A suite that has not ended in this long hangs (it takes 1-2 minutes).
ROW_TIMEOUT_S = 1200
COUNTS = "python-counts.json"


def row(log_dir: Path, tests=()) -> tuple[results.Counts, str, str]:
    """The Python tests (or only the named ones), one case per test
    method, in a child (python -m tools.lib.checks.python): make check
    runs this row beside the guest runs, whose lines must reach the
    terminal meanwhile, and the interrupt (serial.stop_all()) kills it
    with them. What the tests and their children print besides goes to
    python-output.log."""
    cmd = [sys.executable, "-m", "tools.lib.checks.python", str(log_dir),
           *tests]
    try:
        with open(log_dir / "python-output.log", "wb") as out:
            rc, _ = serial.run_child(cmd, ROW_TIMEOUT_S, cwd=ROOT,
                                     stdin=subprocess.DEVNULL, stdout=out,
                                     stderr=subprocess.STDOUT)
    except serial.Interrupted:
        return results.Counts(), "interrupted", ""
    try:
        said = json.loads((log_dir / COUNTS).read_text())
        counts = results.Counts(**said)
        text = (log_dir / "python.log").read_text()
    except (OSError, ValueError, TypeError):
        ended = f"still running after {ROW_TIMEOUT_S} s" if rc is None \
            else f"exit status {rc}"
        tail = (log_dir / "python-output.log").read_bytes()[-2000:]
        return results.Counts(failed=1), Status.FAIL, \
            f"the Python tests gave no counts ({ended}):\n" \
            f"{tail.decode(errors='replace')}"
    return counts, Status.FAIL if counts.failed else Status.PASS, text


def main(argv) -> int:
    """The child: the suite (or argv[1:], test names) with its report in
    LOG_DIR/python.log and its counts in LOG_DIR/python-counts.json."""
    log_dir, names = Path(argv[0]), argv[1:]
    suite = unittest.defaultTestLoader.loadTestsFromNames(names) \
        if names else python_suite()
    stream = io.StringIO()
    result = unittest.TextTestRunner(stream=stream, verbosity=2).run(suite)
    (log_dir / "python.log").write_text(stream.getvalue())
    jsonfile.write(log_dir / COUNTS, dataclasses.asdict(
        results.count_unittest(result)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
