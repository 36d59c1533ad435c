# SPDX-License-Identifier: MIT
"""make check's python row: the tools' and bench's own Python tests, run
in this process, one case per test method."""

import contextlib
import io
import os
import sys
import unittest
from collections.abc import Iterator
from pathlib import Path

from ... import ROOT
from ..analysis import results
from ..base.status import Status


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


def row(log_dir: Path) -> tuple[results.Counts, str, str]:
    """The Python tests, run here: one case per test method. What they
    and their children print besides goes to python-output.log."""
    stream = io.StringIO()
    suite = python_suite()
    with fds_into(log_dir / "python-output.log"):
        result = unittest.TextTestRunner(stream=stream,
                                         verbosity=2).run(suite)
    (log_dir / "python.log").write_text(stream.getvalue())
    counts = results.count_unittest(result)
    return counts, Status.FAIL if counts.failed else Status.PASS, \
        stream.getvalue()
