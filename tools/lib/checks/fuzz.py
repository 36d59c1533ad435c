# SPDX-License-Identifier: MIT
"""make check's fuzz row: each parser fuzz target over fixed inputs."""

import subprocess
import sys
from pathlib import Path

from ... import ROOT
from ..analysis import ktap, results
from ..base.status import Status
from ..launch import serial

FUZZ = ROOT / "tests" / "fuzz" / "run"
# The targets take under a minute together; this long is a hang.
ROW_TIMEOUT_S = 900


def row(log_dir: Path) -> tuple[results.Counts, str, str]:
    """Each fuzz target over the same fixed inputs on every machine
    (tests/fuzz/run --check); it prints KTAP with one result per target,
    counted like the unit tests'."""
    cmd = [sys.executable, str(FUZZ), "--check"]
    try:
        rc, out = serial.run_child(cmd, ROW_TIMEOUT_S, cwd=ROOT,
                                   stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT)
    except serial.Interrupted:
        return results.Counts(), "interrupted", ""
    if rc is None:
        out, rc = f"still running after {ROW_TIMEOUT_S} s\n".encode(), 1
    (log_dir / "fuzz.log").write_bytes(out)
    counts = results.count_unit(ktap.parse(out.splitlines()), rc)
    return counts, Status.FAIL if counts.failed else Status.PASS, \
        out.decode(errors="replace")
