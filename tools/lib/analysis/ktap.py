# SPDX-License-Identifier: MIT
"""KTAP version 1 parser for hvprobe's serial log.

The log is read as it arrives, one line at a time, and becomes a tree: the
top-level tests, their cases to any depth, the `# DATA {json}` measurements
of each top-level test, the totals line, and a list of problems (lines that
could not be understood). Serial logs are hostile input (firmware chatter,
escape sequences, half-printed lines, a guest that reboots or dies), so the
parser never raises on them: it records a problem and carries on.

A log without the totals line is a crash, whatever else it holds. A log
whose structure lies (a plan the results do not fill, results numbered
out of order, totals that disagree, no test at all) is an error: those
problems are also in Report.errors, and a run with any is not a pass,
as Linux's kunit.py would not call it one.
"""

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..base.status import Status

# Ranked for the worst of several: a skip above a pass, an error above a
# skip, a fail above all. A test's own result follows ktap.rst instead
# (rollup()): a skipped case lowers nothing.
STATUSES = (Status.PASS, Status.SKIP, Status.ERROR, Status.FAIL)
_RANK = {status: rank for rank, status in enumerate(STATUSES)}
BAD = (Status.ERROR, Status.FAIL)
# A directive's status; TIMEOUT (the watchdog) is an error with its reason.
_DIRECTIVE_STATUS = {"skip": Status.SKIP, "error": Status.ERROR,
                     "timeout": Status.ERROR}

# Serial logs are capped so that a guest printing garbage in a loop cannot
# grow results.json without bound: problems, subtest nesting (every walk
# of the tree, and JSON itself, recurses once per level), result lines,
# DATA lines and DATA's bytes per log, and the characters of a result's
# name and reason. hvprobe nests two levels deep, prints about a case per
# vCPU per test and well under 1 MiB in all; 1024 vCPUs stay far below
# these. DATA is counted in bytes because a line of numbers costs ten
# times its size as objects and, indented, in results.json (128 lines
# of 64 KiB took 357 MB and made a 91 MB file).
MAX_PROBLEMS = 50
MAX_DEPTH = 16
MAX_RESULTS = 50000
MAX_DATA = 10000
MAX_DATA_BYTES = 2 << 20
MAX_TEXT = 1024

# Numbers are bounded so that a line of digits cannot reach int()'s limit.
_VERSION = re.compile(r"K?TAP version (\d{1,9})$")
_VERSION_AT_END = re.compile(r"K?TAP version \d{1,9}$")
_PLAN = re.compile(r"1\.\.(\d{1,9})(?:\s+#.*)?$")
_RESULT = re.compile(r"(not ok|ok)\s+(\d{1,9})(?!\d)\s*(.*)$")
_DIRECTIVE = re.compile(r"(?:^|\s)#\s*(SKIP|ERROR|TIMEOUT)\b:?\s*(.*)$", re.IGNORECASE)
_DATA = re.compile(r"#\s*DATA\s+(.*)$")
_TOTALS = re.compile(r"#\s*Totals:(.*)$")
_CASES = re.compile(r"#\s*Cases:(.*)$")
_COUNT = re.compile(r"(\w+):(\d{1,18})\b")
_SUBTEST = re.compile(r"#\s*Subtest:\s*(.*)$")
# CSI and two-byte escapes (GRUB and OVMF paint the serial console), then
# any other control character, the line ending included.
_ESCAPE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|[@-_])"
                     r"|[\x00-\x08\x0a-\x1f\x7f]")


def worst(*statuses) -> Status:
    """The worst of the given statuses, "pass" for none."""
    return max(statuses, key=_RANK.__getitem__, default=Status.PASS)


def rollup(own, cases) -> Status:
    """A test's result from its own line and its cases' results, as
    ktap.rst has it: a fail or error anywhere is the test's; else a pass
    when its line or any case passed; a skip only when every case
    skipped, or the test skipped with none ("skipped tests do not affect
    the result of the parent test")."""
    bad = [s for s in (own, *cases) if s in BAD]
    if bad:
        return worst(*bad)
    if cases:
        return Status.PASS if Status.PASS in cases else Status.SKIP
    return own


@dataclass
class Test:
    """One result line, with the results of its subtest as cases."""
    number: int
    name: str
    status: str
    reason: str = ""
    line: str = ""
    cases: list = field(default_factory=list)
    data: list = field(default_factory=list)
    time: float | None = None

    def effective_status(self) -> Status:
        """This test's result with its cases' folded in (rollup()): a test
        that says ok over a failing case has still failed, and one with a
        skipped case among passing ones has passed."""
        return rollup(self.status, [c.effective_status() for c in self.cases])

    def walk(self) -> Iterator["Test"]:
        yield self
        for case in self.cases:
            yield from case.walk()

    def to_json(self, top=True) -> dict[str, Any]:
        doc = {"name": self.name, "number": self.number,
               "status": self.status, "reason": self.reason,
               "cases": [c.to_json(top=False) for c in self.cases]}
        if top:
            doc["data"] = self.data
            doc["time_s"] = None if self.time is None else round(self.time, 6)
        return doc


@dataclass
class Report:
    tests: list = field(default_factory=list)
    plan: int | None = None
    totals: dict | None = None
    cases: dict | None = None   # the "# Cases:" line: leaf results by kind
    data: list = field(default_factory=list)
    problems: list = field(default_factory=list)
    errors: list = field(default_factory=list)   # structural problems
    crash_reason: str | None = None
    reboot_line: int | None = None
    first_ktap_time: float | None = None
    totals_time: float | None = None

    @property
    def crashed(self) -> bool:
        return self.crash_reason is not None

    def walk(self) -> Iterator[Test]:
        for test in self.tests:
            yield from test.walk()


@dataclass
class _Level:
    """One open KTAP document: the top level or a subtest being printed."""
    indent: int
    name: str = ""
    plan: int | None = None
    results: list = field(default_factory=list)
    # Results of a finished subtest, waiting for this level's result line.
    pending: list = field(default_factory=list)
    pending_name: str = ""


def clean(line) -> str:
    """A serial line without its line ending, escapes or control bytes."""
    if isinstance(line, bytes):
        line = line.decode("utf-8", "replace")
    return _ESCAPE.sub("", line.expandtabs(8)).rstrip()


def _counts(counts) -> str:
    """Counts by status as the totals line writes them: pass:1 fail:0."""
    return " ".join(f"{s}:{counts.get(s, '?')}" for s in STATUSES)


def _cut(text) -> str:
    """text, its end past MAX_TEXT characters replaced by a mark."""
    if len(text) <= MAX_TEXT:
        return text
    return f"{text[:MAX_TEXT]} [... {len(text) - MAX_TEXT} more characters]"


def parse_totals(text) -> dict[str, int]:
    return {key: int(value) for key, value in _COUNT.findall(text)}


class Parser:
    """Feed lines (str or bytes, with or without line endings) in order,
    then call finish() for the report. `report` may be read at any time."""

    def __init__(self) -> None:
        self.report = Report()
        self._levels: list[_Level] = []
        # DATA lines of the top-level test being printed
        self._data: list[dict[str, Any]] = []
        self._lineno = 0
        self._done = False
        self._results = 0
        self._capped: set[str] = set()    # the caps already said to be reached
        self._data_bytes = 0

    @property
    def started(self) -> bool:
        return bool(self._levels)

    @property
    def done(self) -> bool:
        return self._done

    def feed(self, line, time=None) -> None:
        self._lineno += 1
        if self._done:
            return
        line = clean(line)
        body = line.lstrip(" ")
        if not body:
            return
        if not self._levels:
            # Before the kernel speaks, everything is firmware or GRUB, and
            # the first line may still carry a prompt or half an escape.
            if _VERSION_AT_END.search(line):
                self._levels.append(_Level(indent=0))
                self.report.first_ktap_time = time
            return
        self._line(len(line) - len(body), body, time)

    def finish(self) -> Report:
        """Close what the log left open; returns the report."""
        if not self._done:
            self._done = True
            if not self._levels:
                self.report.crash_reason = "no KTAP output"
            else:
                self.report.crash_reason = (
                    f"log ends without a totals line (after line "
                    f"{self._lineno})")
                self._close_all(finished=False)
        return self.report

    def _problem(self, text, structural=False) -> None:
        """Note a problem; a structural one (the KTAP lies about itself)
        makes the run an error as well."""
        lists = [self.report.problems]
        if structural:
            lists.append(self.report.errors)
        for problems in lists:
            if len(problems) < MAX_PROBLEMS:
                problems.append(f"line {self._lineno}: {text}")
            elif len(problems) == MAX_PROBLEMS:
                problems.append("further problems not recorded")

    def _depth(self, indent) -> int:
        """Index of the deepest open level this indentation belongs to."""
        depth = 0
        for i, level in enumerate(self._levels):
            if level.indent <= indent:
                depth = i
        return depth

    def _line(self, indent, body, time) -> None:
        if body.startswith("#"):
            self._diagnostic(indent, body, time)
            return
        version = _VERSION.match(body)
        plan = _PLAN.match(body)
        result = _RESULT.match(body)
        if not (version or plan or result):
            if _VERSION_AT_END.search(body):
                self._reboot()      # a fresh boot behind some firmware noise
            else:
                self._problem(f"not KTAP: {body[:120]!r}")
            return

        depth = self._enter(indent)
        if depth is None:
            return
        level = self._levels[depth]
        if version:
            if depth == 0:
                self._reboot()
            elif level.plan is not None or level.results:
                # A new subtest where the last one got no result line.
                self._problem("subtest ended without a result line", structural=True)
                self._close_to(depth - 1)
                self._levels.append(_Level(indent=indent))
        elif plan:
            if level.plan is not None:
                self._problem("second plan line in one test", structural=True)
            level.plan = int(plan.group(1))
            if depth == 0:
                self.report.plan = level.plan
        else:
            self._result(level, depth == 0, result, body, time)

    def _cap(self, what, limit) -> None:
        """Say once that a cap was reached; an error, since the log is
        no longer read whole."""
        if what not in self._capped:
            self._capped.add(what)
            self._problem(f"more than {limit} {what}: the rest is not "
                          "read", structural=True)

    def _enter(self, indent) -> int | None:
        """Open a subtest for a structural line indented past the deepest
        open level, or close the levels a shallower line ends; None for a
        line nested deeper than MAX_DEPTH, which is left out."""
        if indent > self._levels[-1].indent:
            if len(self._levels) > MAX_DEPTH:
                self._cap("levels of subtests", MAX_DEPTH)
                return None
            self._levels.append(_Level(indent=indent))
            return len(self._levels) - 1
        depth = self._depth(indent)
        self._close_to(depth)
        return depth

    def _result(self, level, top, match, body, time) -> None:
        self._results += 1
        if self._results > MAX_RESULTS:
            self._cap("result lines", MAX_RESULTS)
            return
        number = int(match.group(2))
        name, status, reason = match.group(3), Status.PASS, ""
        if match.group(1) == "not ok":
            status = Status.FAIL
        directive = _DIRECTIVE.search(name)
        if directive:
            status = _DIRECTIVE_STATUS[directive.group(1).lower()]
            name, reason = name[:directive.start()], directive.group(2)
        elif " # " in f" {name} ":
            name, _, reason = f" {name} ".partition(" # ")
        name = name.strip()
        if name.startswith("- "):
            name = name[2:].lstrip()
        test = Test(number=number, name=_cut(name), status=status,
                    reason=_cut(reason.strip()), line=_cut(body),
                    cases=level.pending, time=time)
        level.pending, level.pending_name = [], ""
        level.results.append(test)
        if number != len(level.results):
            self._problem(f"result {number} where {len(level.results)} "
                          "was expected", structural=True)
        if top:
            test.data, self._data = self._data, []
            self.report.tests.append(test)

    def _diagnostic(self, indent, body, time) -> None:
        data = _DATA.match(body)
        if data:
            self._data_line(data.group(1))
            return
        cases = _CASES.match(body)
        if cases and self._depth(indent) == 0:
            self.report.cases = parse_totals(cases.group(1))
            return
        totals = _TOTALS.match(body)
        if totals and self._depth(indent) == 0:
            self._close_all(finished=True)
            self.report.totals = parse_totals(totals.group(1))
            self.report.totals_time = time
            self._done = True
            self._check_totals()
            return
        subtest = _SUBTEST.match(body)
        if subtest:
            depth = self._enter(indent)
            if depth is None:
                return
            if depth == 0:
                self._problem("subtest header at the top level", structural=True)
            else:
                self._levels[depth].name = subtest.group(1).strip()

    def _data_line(self, text) -> None:
        if len(self.report.data) >= MAX_DATA:
            self._cap("DATA lines", MAX_DATA)
            return
        self._data_bytes += len(text)
        if self._data_bytes > MAX_DATA_BYTES:
            self._cap("bytes of DATA", MAX_DATA_BYTES)
            return
        try:
            obj = json.loads(text, parse_constant=_reject_constant,
                             parse_float=_finite_float)
        except (ValueError, RecursionError) as err:
            self._problem(f"DATA is not valid JSON ({err}): {text[:120]!r}")
            return
        if not isinstance(obj, dict):
            self._problem(f"DATA is not a JSON object: {text[:120]!r}")
            return
        if "test" not in obj:
            self._problem(f"DATA has no \"test\" key: {text[:120]!r}")
        self.report.data.append(obj)
        self._data.append(obj)

    def _close_to(self, depth) -> None:
        """Close the levels deeper than depth; a closed subtest's results
        become the cases of its parent's next result line."""
        while len(self._levels) > depth + 1:
            child = self._levels.pop()
            parent = self._levels[-1]
            if child.plan is not None and child.plan != len(child.results):
                self._problem(f"subtest {child.name or '?'} planned "
                              f"{child.plan} results, printed "
                              f"{len(child.results)}", structural=True)
            if parent.pending:
                self._problem("subtest ended without a result line", structural=True)
            parent.pending.extend(child.results)
            parent.pending_name = parent.pending_name or child.name

    def _close_all(self, finished) -> None:
        """End every open subtest. One that never got its result line
        becomes an error test, so that what the guest printed before it
        stopped still reaches the report. After a totals line (finished)
        stray DATA only goes to the top-level test it names."""
        if not self._levels:
            return
        unfinished = len(self._levels) > 1 or self._levels[0].pending
        self._close_to(0)
        root = self._levels[0]
        if unfinished or (self._data and not finished):
            if finished:
                self._problem("subtest ended without a result line", structural=True)
            name = root.pending_name
            if not name and self._data:
                name = str(self._data[0].get("test") or "")
            test = Test(number=len(root.results) + 1,
                        name=str(name or "(unnamed)"), status=Status.ERROR,
                        reason="unfinished: no result line",
                        cases=root.pending, data=self._data)
            root.results.append(test)
            self.report.tests.append(test)
        else:
            by_name = {t.name: t for t in self.report.tests}
            for obj in self._data:
                if obj.get("test") in by_name:
                    by_name[obj["test"]].data.append(obj)
        root.pending, self._data = [], []
        if root.plan is None:
            self._problem("no plan line at the top level", structural=True)

    def _check_totals(self) -> None:
        totals, report = self.report.totals, self.report
        assert totals is not None   # set just before, from the totals line
        if not report.tests:
            self._problem("no test at all", structural=True)
        if report.plan is not None and report.plan != len(report.tests):
            self._problem(f"plan is 1..{report.plan} but "
                          f"{len(report.tests)} tests reported",
                          structural=True)
        if not set(Status) <= totals.keys():
            self._problem(f"totals line lacks counts: {totals}",
                          structural=True)
            return
        counted = {status: 0 for status in STATUSES}
        for test in report.tests:
            counted[test.status] += 1
        if any(totals[s] != counted[s] for s in STATUSES):
            self._problem(f"totals {_counts(totals)} disagree with the "
                          f"top-level results {_counts(counted)}",
                          structural=True)
        if report.cases is not None:
            leaves = {status: 0 for status in STATUSES}
            for test in report.tests:
                for case in test.cases:
                    for leaf in case.walk():
                        if not leaf.cases:
                            leaves[leaf.status] += 1
            if any(report.cases.get(s) != leaves[s] for s in STATUSES):
                self._problem(f"cases line {_counts(report.cases)} "
                              f"disagrees with the cases printed "
                              f"{_counts(leaves)}", structural=True)

    def _reboot(self) -> None:
        self._problem("second KTAP version line at the top level")
        self._close_all(finished=False)
        self.report.reboot_line = self._lineno
        self.report.crash_reason = (f"the guest started over at line "
                                    f"{self._lineno} (reboot?)")
        self._done = True


def _reject_constant(name) -> None:
    # NaN and Infinity are not JSON, and results.json must stay JSON.
    raise ValueError(f"{name} is not JSON")


def _finite_float(text) -> float:
    # 1e999 reads as infinity, which is no more JSON than Infinity is.
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"{text[:40]} is beyond a double's range")
    return value


def parse(lines) -> Report:
    """Parse a whole log (an iterable of lines) into a Report."""
    parser = Parser()
    for line in lines:
        parser.feed(line)
    return parser.finish()
