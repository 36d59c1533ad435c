# SPDX-License-Identifier: MIT
"""What a run means: host checks, verdict, case counts and the summary.

All of it works on the results.json document (a dict), so that tools/run,
which writes it, and tools/check, which reads it back, agree by
construction.
"""

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..base import owner
from ..base.guestexit import EXIT_FAILED, EXIT_PASSED
from ..base.status import Status
from . import ktap

SCHEMA = 2
BAD = ktap.BAD

# The kernel counts the RAM the boot loader's memory map calls usable, and
# the firmware keeps some of -m for itself. Measured with QEMU 10, q35 and
# -m 256M: SeaBIOS (and QEMU's multiboot loader on top of it) keeps 513 to
# 517 KiB, OVMF about 6.4 MiB (reserved, ACPI and NVS ranges), so UEFI
# runs fail this rule as it stands.
MEM_TOLERANCE_KIB = 1024


def results_dir(root) -> Path:
    """Where run folders go unless a command line says otherwise."""
    return Path(os.environ.get("HVPROBE_RESULTS", Path(root) / "results"))


LATEST = "latest"


def point_latest(folder) -> None:
    """Make folder's parent's `latest` a link to folder, replacing the
    last one in one step; quietly nothing where links cannot be made."""
    folder = Path(folder)
    link = folder.parent / LATEST
    tmp = folder.parent / f".{LATEST}.{os.getpid()}"
    try:
        if tmp.is_symlink():
            tmp.unlink()
        os.symlink(folder.name, tmp)
        os.replace(tmp, link)
        owner.hand_over(link)
    except OSError:
        try:
            tmp.unlink()
        except OSError:
            pass


def new_dir(parent, base) -> Path:
    """parent/base, or base-2, base-3... if taken; created, so ours (and,
    in a user's checkout, the user's: owner.hand_over)."""
    parent = Path(parent)
    owner.make_dirs(parent)
    for n in range(1, 1000):
        path = parent / (base if n == 1 else f"{base}-{n}")
        try:
            path.mkdir()
            owner.hand_over(path)
            return path
        except FileExistsError:
            continue
    raise FileExistsError(f"no free folder name for {base} in {parent}")


def effective(test) -> Status:
    """A test's status with its cases' folded in, as ktap.rst has it
    (ktap.rollup())."""
    return ktap.rollup(test["status"], [effective(c) for c in test["cases"]])


def leaves(test) -> Iterator[dict[str, Any]]:
    if not test["cases"]:
        yield test
    for case in test["cases"]:
        yield from leaves(case)


def check_memory(reported_kib, expected_kib) -> tuple[Status, str]:
    """(status, detail) for the RAM the kernel found against --mem."""
    diff = abs(reported_kib - expected_kib)
    detail = (f"kernel sees {reported_kib} KiB, --mem is {expected_kib} KiB"
              f" (off by {diff} KiB, {MEM_TOLERANCE_KIB} allowed)")
    return (Status.PASS if diff <= MEM_TOLERANCE_KIB else Status.FAIL), detail


def check_cmdline(reported, expected, boot) -> tuple[Status, str]:
    if reported == expected:
        return Status.PASS, f"{expected!r}"
    detail = f"kernel saw {reported!r}, host passed {expected!r}"
    if boot != "kernel" and re.search(r"['\"\\ ]", expected):
        detail += " (GRUB escapes quotes and backslashes, and quotes words " \
                  "with spaces)"
    return Status.FAIL, detail


def host_checks(tests, cmdline, mem_kib, boot) -> list[dict[str, Any]]:
    """Checks only the host can make, from the boot test's DATA line; none
    when the boot test did not run or was skipped."""
    boot_test = next((t for t in tests if t["name"] == "boot"), None)
    if boot_test is None or boot_test["status"] == Status.SKIP:
        return []
    data = next((d for t in tests for d in t["data"]
                 if d.get("test") == "boot"), None)
    checks = []
    for name, key in (("cmdline", "cmdline"), ("memory", "mem_extent_kib")):
        value = None if data is None else data.get(key)
        if data is None:
            status, detail = Status.FAIL, "the boot test printed no DATA line"
        elif name == "cmdline" and isinstance(value, str):
            status, detail = check_cmdline(value, cmdline, boot)
        elif name == "memory" and type(value) is int:
            status, detail = check_memory(value, mem_kib)
        else:
            status, detail = Status.FAIL, f"boot DATA has no usable {key!r}"
        checks.append({"name": name, "status": status, "detail": detail})
    return checks


def smp_checks(tests, cmdline, smp, numa) -> list[dict[str, Any]]:
    """The smp test's DATA against the machine QEMU was given: every vCPU
    online (unless cpus= capped them) and one node per --numa node."""
    data = next((d for t in tests for d in t["data"]
                 if d.get("test") == "smp"), None)
    if data is None:
        return []
    checks = []
    if not re.search(r"(^| )cpus=", cmdline):
        cpus = data.get("cpus")
        checks.append({"name": "smp_cpus",
                       "status": Status.PASS if cpus == smp else Status.FAIL,
                       "detail": f"kernel brought up {cpus} CPUs, -smp is {smp}"})
    nodes, want = data.get("nodes"), max(numa, 1)
    checks.append({"name": "smp_nodes",
                   "status": Status.PASS if nodes == want else Status.FAIL,
                   "detail": f"kernel sees {nodes} nodes, --numa gave {want}"})
    return checks


def exit_check(exit_status, ktap_verdict,
               expected_status=None) -> list[dict[str, Any]]:
    """The kernel's own verdict, carried by isa-debug-exit, must agree
    with what it printed. Other statuses (ACPI power-off) carry none,
    unless the run names the status it expects (exit=acpi gives 0)."""
    if expected_status is not None:
        status = Status.PASS if exit_status == expected_status else Status.FAIL
        return [{"name": "exit_status", "status": status,
                 "detail": f"QEMU exit status {exit_status}, expected "
                           f"{expected_status}"}]
    if exit_status not in (EXIT_PASSED, EXIT_FAILED):
        return []
    said = Status.PASS if exit_status == EXIT_PASSED else Status.FAIL
    status = Status.PASS if said == ktap_verdict else Status.FAIL
    return [{"name": "exit_status", "status": status,
             "detail": f"QEMU exit status {exit_status} ({said}), "
                       f"KTAP says {ktap_verdict}"}]


def line_checks(log_text, patterns) -> list[dict[str, Any]]:
    """Lines a run must print (a diagnostic, a note about bad firmware
    input) that no KTAP result carries: one check per pattern."""
    checks = []
    for pattern in patterns:
        found = next((line.strip() for line in log_text.splitlines()
                      if re.search(pattern, line)), None)
        checks.append({"name": "expect_line",
                       "status": Status.PASS if found else Status.FAIL,
                       "detail": f"{found!r} matches {pattern!r}" if found
                       else f"no line matches {pattern!r}"})
    return checks


def ktap_verdict(tests) -> Status:
    bad = any(effective(t) in BAD for t in tests)
    return Status.FAIL if bad else Status.PASS


def ktap_checks(report) -> list[dict[str, Any]]:
    """The host's check of the log's KTAP structure (ktap.Report.errors):
    an error when it lies about itself. A crash says enough on its own."""
    if report.crashed:
        return []
    errors = report.errors
    return [{"name": "ktap", "status": Status.ERROR if errors else Status.PASS,
             "detail": "; ".join(errors[:5]) + (
                 f" (and {len(errors) - 5} more)" if len(errors) > 5 else "")
             if errors else "the plan, the numbering and the totals agree"}]


def verdict(doc) -> str:
    if doc["crash"]:
        return "crash"
    if any(c["status"] == Status.ERROR for c in doc["host_checks"]):
        return Status.ERROR
    if ktap_verdict(doc["tests"]) == Status.FAIL:
        return Status.FAIL
    if any(c["status"] == Status.FAIL for c in doc["host_checks"]):
        return Status.FAIL
    return Status.PASS


def expect_fail_match(report, pattern) -> str | None:
    """The first not-ok result line matching pattern, or None. A test the
    kernel ended (a crash, the watchdog) counts only with the case line
    that says so: its result line alone could come from anywhere."""
    for test in report.walk():
        if test.line.startswith("not ok") and re.search(pattern, test.line) \
                and (not ended_by_kernel(test) or any(
                    c.line.startswith("not ok") and c.reason == test.reason
                    for c in test.cases)):
            return test.line
    return None


def ended_by_kernel(test) -> bool:
    """Whether the kernel ended this test from outside it: a crash or the
    watchdog, said by a case of its own as well as by its result line."""
    return test.reason.startswith("crashed:") or "# TIMEOUT" in test.line


@dataclass
class Counts:
    passed: int = 0
    failed: int = 0
    skipped: int = 0

    def add(self, status) -> None:
        if status == Status.PASS:
            self.passed += 1
        elif status == Status.SKIP:
            self.skipped += 1
        else:
            self.failed += 1

    def __iadd__(self, other) -> "Counts":
        self.passed += other.passed
        self.failed += other.failed
        self.skipped += other.skipped
        return self

    def __str__(self) -> str:
        return (f"{self.passed} passed, {self.failed} failed, "
                f"{self.skipped} skipped")


def count_test(test, counts) -> None:
    """Count the leaf cases under test. A test that failed although none
    of its cases did (it crashed after the last one) counts once more."""
    if not test["cases"]:
        counts.add(test["status"])
        return
    for case in test["cases"]:
        count_test(case, counts)
    if test["status"] in BAD and \
            not any(effective(c) in BAD for c in test["cases"]):
        counts.failed += 1


def count_unit(report, returncode) -> "Counts":
    """Cases of the host unit test binary. Its KTAP must be complete (a
    totals line, or as many results as its plan), and a failing exit
    status must show up as a failed case."""
    counts = Counts()
    for test in report.tests:
        count_test(test.to_json(), counts)
    complete = report.totals is not None or (
        report.reboot_line is None and report.plan == len(report.tests))
    if not complete or (returncode != 0 and counts.failed == 0):
        counts.failed += 1
    return counts


def count_unittest(result) -> "Counts":
    """Cases of a Python unittest result: one per test method."""
    failed = (len(result.failures) + len(result.errors)
              + len(result.unexpectedSuccesses))
    skipped = len(result.skipped)
    return Counts(passed=result.testsRun - failed - skipped, failed=failed,
                  skipped=skipped)


def count_run(doc) -> "Counts":
    """Cases of one guest run: its leaf results, one failure for a crash,
    one case per host check; a negative run is one case."""
    counts = Counts()
    if doc.get("expect_fail") is not None:
        counts.add(Status.PASS if doc.get("expected") else Status.FAIL)
        return counts
    for test in doc["tests"]:
        count_test(test, counts)
    if doc["crash"]:
        counts.failed += 1
    for check in doc["host_checks"]:
        counts.add(check["status"])
    return counts


_LABEL = {status: status.upper() for status in Status}


def summary(doc, log_tail=()) -> list[str]:
    """The lines tools/run prints after a run."""
    out = []
    notes = doc.get("host_notes") or {}
    for test in doc["tests"]:
        status = effective(test)
        n = sum(1 for _ in leaves(test))
        skipped = sum(1 for leaf in leaves(test)
                      if leaf["status"] == Status.SKIP)
        line = f"{_LABEL[status]:5} {test['name']}"
        if test["reason"]:
            line += f": {test['reason']}"
        if status == Status.SKIP and test["name"] in notes:
            line += f" (host: {notes[test['name']]})"
        if test["cases"]:
            line += f"  ({n} case{'s' * (n != 1)}"
            # A skipped case lowers nothing, but is no pass either: say so.
            if skipped and status != Status.SKIP:
                line += f", {skipped} skipped"
            line += ")"
        out.append(line.rstrip())
        for case in _bad_leaves(test):
            out.append(f"        {_LABEL[case['status']]} {case['path']}"
                       + (f": {case['reason']}" if case["reason"] else ""))
    for item in doc.get("not_runnable") or []:
        out.append(f"NOT RUN {item['test']}: {item['reason']}")
    for check in doc["host_checks"]:
        out.append(f"{_LABEL[check['status']]:5} host {check['name']}: "
                   f"{check['detail']}")
    totals = doc["totals"]
    if totals is not None:
        out.append("Totals: " + " ".join(f"{k}:{v}" for k, v in
                                         totals.items()))
    for problem in doc["problems"]:
        out.append(f"warning: {problem}")
    if doc["crash"]:
        out.append(f"CRASH: {doc['crash']}")
        if log_tail:
            out.append(f"last {len(log_tail)} lines of the serial log:")
            out += [f"  | {line}" for line in log_tail]
    return out


def first_problem(doc) -> str | None:
    """The first thing wrong with a run, in one line: the crash, else the
    first failing case ("smp / 2 every CPU online: reason") or test, else
    the first failing host check; None when nothing is."""
    if doc.get("crash"):
        return f"crash: {doc['crash']}"
    for test in doc.get("tests") or []:
        for case in _bad_leaves(test):
            return (f"{test['name']} / {case['path']}: "
                    f"{case['reason'] or case['status']}")
        if test["status"] in BAD:
            return f"{test['name']}: {test['reason'] or test['status']}"
    for check in doc.get("host_checks") or []:
        if check["status"] in BAD:
            return f"host {check['name']}: {check['detail']}"
    return None


def _bad_leaves(test, prefix="") -> Iterator[dict[str, Any]]:
    for case in test["cases"]:
        path = f"{prefix}{case['number']} {case['name']}"
        if case["cases"]:
            yield from _bad_leaves(case, path + " / ")
        elif case["status"] in BAD:
            yield {"path": path, "status": case["status"],
                   "reason": case["reason"]}
