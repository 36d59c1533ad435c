# SPDX-License-Identifier: MIT
"""What a local lava-run said about an hvprobe boot, and whether it agrees
with the KTAP of that same boot.

lava-run logs one record per line: a YAML flow mapping whose scalars are
all double-quoted, so that most lines happen to be JSON, but not all (a
tag such as `! "397364"` or a YAML escape such as `\\x0f` breaks
json.loads). Three kinds of record matter here:

- "results" records: one per LAVA test case. Those of the monitor's
  definition are hvprobe's KTAP lines as LAVA's pattern saw them; the
  ones of definition "lava" are LAVA's own steps, the "job" case last.
- "target" records: the serial output, one line each, as pexpect read it
  from the same QEMU process. LAVA's logger drops carriage returns and
  escape characters and puts a backslash before every double quote.
  It logs only whole lines; the monitor stops as soon as "# Totals:" has
  arrived, so the rest of that line is often read during LAVA's clean-up
  and the whole line logged as a "feedback" record instead: those count
  as serial output too.

The two views come from one stream of bytes and two parsers (LAVA's regex
and tools/lib/analysis/ktap.py), which is what makes the comparison
worth doing.
"""

import difflib
import json
from dataclasses import dataclass, field
from typing import Any

from ..base.status import Status

# One LAVA test case per KTAP result line, at any depth. Written for
# pexpect, which LAVA hands the pattern to (compiled with re.DOTALL and
# searched over a buffer of whatever arrived so far):
# - the line must be complete (up to its newline) before it matches, or a
#   name half-printed when a read returned would be cut short;
# - hvprobe ends lines with \r\n and the pty adds another \r: \r*\n;
# - anchored at a line start (with leading indentation, as subtest lines
#   have) so that "ok 5 " inside a comment is not a result;
# - LAVA's result must come out of one named group, and its fixupdict maps
#   exact text, so the group captures "ok" or "not ok" on a plain line but
#   "# SKIP" or "# ERROR" where the line carries that directive: the
#   lookahead at the line start lets the group land on either spot;
# - the test number stays out of the case id: it shifts when tests are
#   added, and LAVA compares cases across jobs by id;
# - the case id stops at the first " # ", as KTAP's directive or comment
#   starts there (and tools/lib/analysis/ktap.py cuts the name there too).
MONITOR_PATTERN = (
    r"(?m)^[ ]*"
    r"(?=[^\r\n]*?(?P<result># SKIP|# ERROR"
    r"|not ok(?![^\r\n]*# (?:SKIP|ERROR))"
    r"|ok(?![^\r\n]*# (?:SKIP|ERROR))))"
    r"(?:not )?ok \d+ (?P<test_case_id>[^\r\n]*?)(?: # [^\r\n]*)?\r*\n")

# LAVA knows pass, fail, skip and unknown. A KTAP error (hvprobe could not
# do its job) is a failure to anyone reading a LAVA dashboard.
FIXUPDICT = {"ok": "pass", "not ok": "fail", "# SKIP": "skip",
             "# ERROR": "fail"}
KTAP_TO_LAVA = {Status.PASS: "pass", Status.FAIL: "fail", Status.SKIP: "skip",
                Status.ERROR: "fail"}

MONITOR_START = "KTAP version 1"
MONITOR_END = "# Totals:"

# Differences listed before the rest are only counted.
MAX_DIFFERENCES = 10

# YAML double-quoted escapes that JSON spells differently or lacks, and
# the lengths of the hexadecimal ones.
_ESCAPES = {"0": "\0", "a": "\a", "b": "\b", "t": "\t", "\t": "\t",
            "n": "\n", "v": "\v", "f": "\f", "r": "\r", "e": "\x1b",
            " ": " ", '"': '"', "/": "/", "\\": "\\", "N": "\x85",
            "_": "\xa0", "L": "\u2028", "P": "\u2029"}
_HEX_DIGITS = {"x": 2, "u": 4, "U": 8}


class BadRecord(ValueError):
    """A log line that is not a record lava-run writes."""


def _quoted(line, i) -> tuple[str, int]:
    """The YAML double-quoted scalar starting after the quote at i - 1:
    (its text, the index after its closing quote)."""
    out: list[str] = []
    while i < len(line):
        c = line[i]
        if c == '"':
            return "".join(out), i + 1
        if c != "\\":
            out.append(c)
            i += 1
            continue
        esc = line[i + 1:i + 2]
        if esc in _HEX_DIGITS:
            digits = line[i + 2:i + 2 + _HEX_DIGITS[esc]]
            if len(digits) != _HEX_DIGITS[esc]:
                raise BadRecord("short hexadecimal escape")
            try:
                out.append(chr(int(digits, 16)))
            except ValueError:
                raise BadRecord(f"bad escape \\{esc}{digits}") from None
            i += 2 + len(digits)
        elif esc in _ESCAPES:
            out.append(_ESCAPES[esc])
            i += 2
        else:
            raise BadRecord(f"unknown escape \\{esc}")
    raise BadRecord("unterminated string")


def load_record(line) -> dict[str, Any]:
    """One lava-run log line as a dict. Every scalar comes back a string;
    tags (`!`, `!!int`) are dropped, as only their strings matter here."""
    out, i = [], 0
    while i < len(line):
        c = line[i]
        if c == '"':
            text, i = _quoted(line, i + 1)
            out.append(json.dumps(text))
        elif c == "!":
            while i < len(line) and line[i] not in " ,}]":
                i += 1
        else:
            out.append(c)
            i += 1
    try:
        record = json.loads("".join(out))
    except ValueError as err:
        raise BadRecord(str(err)) from None
    if not isinstance(record, dict) or "lvl" not in record:
        raise BadRecord("not a log record")
    return record


def unescape_target(text) -> str:
    """A serial line as the guest printed it, less the carriage returns
    and escape characters LAVA's logger dropped: every double quote got
    exactly one backslash in front of it, so taking one away is exact."""
    return text.replace('\\"', '"')


@dataclass
class LavaLog:
    cases: list = field(default_factory=list)   # (name, result) in order
    serial: list = field(default_factory=list)  # the guest's lines
    job_result: str | None = None
    job_error: str | None = None
    monitor_status: str | None = None
    problems: list = field(default_factory=list)


def definition_name(monitor_name) -> str:
    """The definition LAVA files a monitor's cases under."""
    return monitor_name.replace(" ", "-").lower()


def read_log(lines, monitor_name) -> LavaLog:
    """Collect from lava-run's log lines the cases of one monitor, the
    serial output and the job's verdict. Lines that are not records (a
    Python warning, a traceback) are skipped; a record that cannot be read
    is a problem only if it might be one of the monitor's cases."""
    definition = definition_name(monitor_name)
    log = LavaLog()
    for number, line in enumerate(lines, 1):
        if isinstance(line, bytes):
            line = line.decode("utf-8", "replace")
        line = line.rstrip("\r\n")
        if not line.startswith("{"):
            continue
        try:
            record = load_record(line)
        except BadRecord as err:
            if '"results"' in line and definition in line:
                log.problems.append(f"line {number}: unreadable result "
                                    f"record ({err}): {line[:120]!r}")
            continue
        msg = record.get("msg")
        if record["lvl"] in ("target", "feedback") and isinstance(msg, str):
            log.serial.append(unescape_target(msg))
        elif record["lvl"] == "results" and isinstance(msg, dict):
            _result(log, msg, definition, number)
    return log


def _result(log, msg, definition, number) -> None:
    if msg.get("definition") == definition:
        extra = msg.get("extra")
        # extra.test_case_id is the matched text; "case" is that text
        # lower-cased with every run of non-word characters made "_".
        name = extra.get("test_case_id") if isinstance(extra, dict) \
            else None
        if not isinstance(name, str):
            log.problems.append(f"line {number}: result without "
                                f"extra.test_case_id: {msg}")
            name = str(msg.get("case"))
        log.cases.append((name, str(msg.get("result"))))
    elif msg.get("definition") == "lava":
        if msg.get("case") == "job":
            log.job_result = msg.get("result")
            log.job_error = msg.get("error_msg")
        elif msg.get("case") == "lava-test-monitor":
            extra = msg.get("extra")
            if isinstance(extra, dict):
                log.monitor_status = extra.get("status")


def ktap_cases(report) -> list[tuple[str, str]]:
    """Every result line of a parsed KTAP report as (name, LAVA result),
    in the order the guest printed them: a test's cases come before the
    test's own line."""
    cases = []

    def walk(test) -> None:
        for case in test.cases:
            walk(case)
        cases.append((test.name, KTAP_TO_LAVA[test.status]))

    for test in report.tests:
        walk(test)
    return cases


def _shown(case) -> str:
    return f"{case[0]!r} ({case[1]})"


def compare(lava, ktap) -> list[str]:
    """Where LAVA's cases differ from the KTAP lines, as sentences; an
    empty list when they are equal, in order."""
    diffs = []
    matcher = difflib.SequenceMatcher(None, lava, ktap, autojunk=False)
    for op, l1, l2, k1, k2 in matcher.get_opcodes():
        if op == "equal":
            continue
        if op == "replace" and l2 - l1 == k2 - k1:
            for i in range(l2 - l1):
                diffs.append(f"case {l1 + i + 1}: LAVA says "
                             f"{_shown(lava[l1 + i])}, KTAP says "
                             f"{_shown(ktap[k1 + i])}")
            continue
        for i in range(l1, l2):
            diffs.append(f"case {i + 1}: LAVA has {_shown(lava[i])}, "
                         "which KTAP lacks")
        for i in range(k1, k2):
            diffs.append(f"KTAP line for {_shown(ktap[i])} has no LAVA "
                         f"case (near LAVA case {l1 + 1})")
    if len(diffs) > MAX_DIFFERENCES:
        rest = len(diffs) - MAX_DIFFERENCES
        diffs = diffs[:MAX_DIFFERENCES] + [f"... and {rest} more"]
    return diffs


def tally(cases) -> dict[str, int]:
    """Counts of each LAVA result, for the summary line."""
    counts = {"pass": 0, "fail": 0, "skip": 0, "unknown": 0}
    for _, result in cases:
        counts[result] = counts.get(result, 0) + 1
    return counts


def yaml_single_quoted(text) -> str:
    """text as a YAML single-quoted scalar, in which only the quote is
    special (the monitor pattern's backslashes pass through as they are)."""
    return "'" + text.replace("'", "''") + "'"
