# SPDX-License-Identifier: MIT
"""Linux's own KTAP parser, `kunit.py parse`, as a referee of hvprobe's
serial logs: a reader hvprobe did not write must see the verdict and the
counts that tools/lib/analysis/ktap.py sees.

kunit.py comes out of Debian's linux-source-6.1 and linux-source-6.12
packages at test time: `apt-get download` of the package (the file apt's
index names, its SHA256 checked, in a private folder), then only
tools/testing/kunit/*.py out of the source tarball inside it, kept under
build/kunit/PACKAGE/. It is never part of this tree.
"""

import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from ..base import aptdeb, owner
from ..base.status import Status
from . import ktap

PACKAGES = ("linux-source-6.1", "linux-source-6.12")
TIMEOUT_S = 5
FETCH_TIMEOUT_S = 600
INNER = "./usr/src/linux-source-*.tar.xz"
WANTED = "*/tools/testing/kunit/*.py"
_SUMMARY = re.compile(r"Testing complete\. Ran (\d+) tests?:?(.*)$")
_COUNT = re.compile(r"(passed|failed|crashed|skipped|errors): (\d+)")
# kunit_printer colours its output only on a terminal; strip it anyway.
_COLOUR = re.compile(r"\x1b\[[0-9;]*m")


class Unavailable(Exception):
    """kunit.py could not be had here; the reason is the message."""


def cached(cache, package) -> Path | None:
    """kunit.py of package under cache, or None."""
    found = sorted(Path(cache, package).glob("*/tools/testing/kunit/kunit.py"))
    return found[0] if found else None


def _pipeline(deb, into) -> None:
    """dpkg-deb's filesystem tar, the source tarball out of it, and the
    kunit tool's files out of that, into the folder into."""
    outer = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", str(deb)],
                             stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    inner = subprocess.Popen(["tar", "-xO", "--wildcards", INNER],
                             stdin=outer.stdout, stdout=subprocess.PIPE)
    if outer.stdout:
        outer.stdout.close()
    files = subprocess.run(["tar", "-xJ", "-C", str(into), "--wildcards", WANTED],
                           stdin=inner.stdout, capture_output=True,
                           timeout=FETCH_TIMEOUT_S)
    if inner.stdout:
        inner.stdout.close()
    statuses = (outer.wait(), inner.wait(), files.returncode)
    if any(statuses):
        raise Unavailable(f"cannot unpack {deb.name}: exit statuses {statuses} "
                          f"({files.stderr.decode(errors='replace').strip()[:200]})")


def fetch(cache, package) -> Path:
    """kunit.py of package, from the cache or fetched into it now: the
    .deb apt names, checked against its SHA256
    (tools/lib/base/aptdeb.py), in a private folder."""
    found = cached(cache, package)
    if found:
        return found
    if not aptdeb.available():
        raise Unavailable("no apt-get or dpkg-deb on this machine")
    work = aptdeb.private_dir(cache)
    try:
        try:
            deb = aptdeb.download(package, work)
        except aptdeb.AptError as err:
            raise Unavailable(str(err)) from None
        unpacked = work / "unpacked"
        unpacked.mkdir()
        _pipeline(deb, unpacked)
        version = deb.name.split("_")[1]
        target = Path(cache) / package
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir()
        for tree in unpacked.iterdir():
            os.replace(tree, target / f"{tree.name}-{version}")
        owner.hand_over(target, recursive=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    found = cached(cache, package)
    if not found:
        raise Unavailable(f"{package} has no tools/testing/kunit/kunit.py")
    return found


@dataclass
class Verdict:
    """What kunit.py parse said of one log."""
    exit_status: int | None         # None: it ran past the time limit
    counts: dict                    # passed, failed, crashed, skipped, errors
    complaints: list                # its [ERROR] and [WARNING] lines
    summary: str | None             # its "Ran N tests: ..." line
    seconds: float


def parse(kunit_py, log, timeout=TIMEOUT_S) -> Verdict:
    """Run kunit.py parse over log (it wants an absolute path)."""
    argv = [sys.executable, str(kunit_py), "parse", str(Path(log).resolve())]
    start = time.monotonic()
    try:
        done = subprocess.run(argv, capture_output=True, text=True,
                              errors="replace", timeout=timeout,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return Verdict(None, {}, [], None, time.monotonic() - start)
    counts, summary, complaints = {}, None, []
    for line in _COLOUR.sub("", done.stdout + done.stderr).splitlines():
        if "[ERROR]" in line or "[WARNING]" in line:
            complaints.append(line.strip())
        match = _SUMMARY.search(line)
        if match:
            summary = match.group(0)[len("Testing complete. "):]
            counts = {k: int(v) for k, v in _COUNT.findall(match.group(2))}
            counts["total"] = int(match.group(1))
    return Verdict(done.returncode, counts, complaints, summary, time.monotonic() - start)


def leaf_counts(report) -> dict[str, int]:
    """What kunit.py should count in a ktap.Report: its leaves (a test
    with no cases is one), an error or timeout being a failure to it."""
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    name = {Status.PASS: "passed", Status.SKIP: "skipped",
            Status.FAIL: "failed", Status.ERROR: "failed"}
    for test in report.tests:
        for leaf in test.walk():
            if not leaf.cases:
                counts[name[leaf.status]] += 1
    return counts


def judge(verdict, report, hvprobe_passed) -> list[str]:
    """Problems (strings) with kunit.py's reading of one log, given its
    ktap.Report and whether hvprobe's own verdict was a pass."""
    if verdict.exit_status is None:
        return [f"kunit.py parse ran past {TIMEOUT_S} s"]
    problems = [f"kunit.py: {c}" for c in verdict.complaints[:3]]
    if (verdict.exit_status == 0) != hvprobe_passed:
        problems.append(f"kunit.py exit status {verdict.exit_status}, but "
                        f"hvprobe's verdict is {'pass' if hvprobe_passed else 'not a pass'}")
    want = leaf_counts(report)
    got = {"passed": verdict.counts.get("passed", 0),
           "failed": verdict.counts.get("failed", 0) + verdict.counts.get("crashed", 0),
           "skipped": verdict.counts.get("skipped", 0)}
    if verdict.summary is None:
        problems.append("kunit.py printed no summary line")
    elif got != want:
        problems.append(f"kunit.py counted {got}, "
                        f"tools/lib/analysis/ktap.py {want}")
    return problems


def report_of(log) -> ktap.Report:
    """tools/lib/analysis/ktap.py's reading of a serial log."""
    with open(log, "rb") as f:
        return ktap.parse(f.read().splitlines())
