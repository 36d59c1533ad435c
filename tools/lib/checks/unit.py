# SPDX-License-Identifier: MIT
"""make check's unit row: the C host unit tests (build/unit/hvprobe-unit),
their KTAP counted with the guest's rules."""

import subprocess
from pathlib import Path

from ... import ROOT
from ..analysis import ktap, results
from ..base.status import Status

UNIT = ROOT / "build" / "unit" / "hvprobe-unit"
UNIT_TIMEOUT_S = 300


def row(log_dir: Path) -> tuple[results.Counts, str, str]:
    """The C host unit tests: their KTAP, counted with the guest's rules.
    Returns (counts, verdict, text to show on failure)."""
    if not UNIT.exists():
        return results.Counts(failed=1), "missing", \
            f"{UNIT.relative_to(ROOT)} was not built\n"
    try:
        done = subprocess.run([str(UNIT)], cwd=ROOT, capture_output=True,
                              stdin=subprocess.DEVNULL,
                              timeout=UNIT_TIMEOUT_S)
        out, err, rc = done.stdout, done.stderr, done.returncode
    except subprocess.TimeoutExpired as timeout:
        out, err, rc = timeout.stdout or b"", timeout.stderr or b"", None
    except OSError as error:
        return results.Counts(failed=1), Status.ERROR, \
            f"cannot run it: {error}\n"
    (log_dir / "unit.log").write_bytes(out + err)
    report = ktap.parse(out.splitlines())
    counts = results.count_unit(report, -1 if rc is None else rc)
    status = f"timed out after {UNIT_TIMEOUT_S} s" if rc is None \
        else f"exit status {rc}"
    text = f"{status}\n{(out + err).decode(errors='replace')}"
    return counts, Status.FAIL if counts.failed else Status.PASS, text
