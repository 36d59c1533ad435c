# SPDX-License-Identifier: MIT
"""make check's fuzz row: each parser fuzz target over fixed inputs."""

import subprocess
import sys
from pathlib import Path

from ... import ROOT
from ..analysis import ktap, results
from ..base.status import Status

FUZZ = ROOT / "tests" / "fuzz" / "run"


def row(log_dir: Path) -> tuple[results.Counts, str, str]:
    """Each fuzz target over the same fixed inputs on every machine
    (tests/fuzz/run --check); it prints KTAP with one result per target,
    counted like the unit tests'."""
    cmd = [sys.executable, str(FUZZ), "--check"]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True,
                          stdin=subprocess.DEVNULL)
    out = done.stdout + done.stderr
    (log_dir / "fuzz.log").write_bytes(out)
    counts = results.count_unit(ktap.parse(out.splitlines()),
                                done.returncode)
    return counts, Status.FAIL if counts.failed else Status.PASS, \
        out.decode(errors="replace")
