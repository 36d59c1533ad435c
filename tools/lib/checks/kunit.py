# SPDX-License-Identifier: MIT
"""make check's kunit row, after the guest runs: Linux's own KTAP reader
over every serial log they left."""

import concurrent.futures
import functools
import json
from pathlib import Path

from ... import ROOT
from ..analysis import kunit, results
from ..base.status import Status
from ..launch import serial

KUNIT_CACHE = ROOT / "build" / "kunit"
PARSERS = 2


def prefetch() -> None:
    """Each version's kunit.py into the cache now, beside the guest runs,
    so that the row after them only parses; a version that cannot be had
    is the row's to report."""
    for package in kunit.PACKAGES:
        if serial.STOP.is_set() or kunit.cached(KUNIT_CACHE, package):
            continue
        print(f"running: apt-get download {package} for its kunit.py "
              "(once; kept in build/kunit/)", flush=True)
        try:
            kunit.fetch(KUNIT_CACHE, package)
        except kunit.Unavailable:
            pass


def row(log_dir: Path) -> tuple[results.Counts, str, str]:
    """Linux's kunit.py parse (6.1 and 6.12, tools/lib/analysis/kunit.py)
    over the serial log of every guest run in log_dir: a case per log and version,
    passed when kunit.py reads it in time, without complaint, with the
    exit status hvprobe's verdict implies and ktap.py's leaf counts. A
    version that cannot be had here is one skipped case, with the reason."""
    counts, text, lines = results.Counts(), "", []
    logs = sorted(p for p in log_dir.glob("**/serial.log")
                  if (p.parent / "results.json").exists())
    for package in kunit.PACKAGES:
        if not kunit.cached(KUNIT_CACHE, package):
            print(f"running: apt-get download {package} for its kunit.py "
                  "(once; kept in build/kunit/)", flush=True)
        try:
            kunit_py = kunit.fetch(KUNIT_CACHE, package)
        except kunit.Unavailable as err:
            counts.add(Status.SKIP)
            lines.append(f"{package}: SKIP {err}")
            continue
        # Each parse is a child python of its own: two at a time.
        with concurrent.futures.ThreadPoolExecutor(PARSERS) as pool:
            verdicts = list(pool.map(functools.partial(kunit.parse,
                                                       kunit_py), logs))
        for log, verdict in zip(logs, verdicts):
            doc = json.loads((log.parent / "results.json").read_text())
            problems = kunit.judge(verdict, kunit.report_of(log),
                                   doc["verdict"] == Status.PASS)
            counts.add(Status.FAIL if problems else Status.PASS)
            lines.append(f"{package} {log.parent.relative_to(log_dir)}: "
                         f"{verdict.summary or 'no summary'}, exit "
                         f"{verdict.exit_status}, {verdict.seconds:.2f} s")
            text += "".join(f"{package} {log.parent.relative_to(log_dir)}: {p}\n"
                            for p in problems)
    (log_dir / "kunit.log").write_text("".join(f"{x}\n" for x in lines))
    return counts, Status.FAIL if counts.failed else Status.PASS, text
