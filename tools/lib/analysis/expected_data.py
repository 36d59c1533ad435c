# SPDX-License-Identifier: MIT
"""expect_data: values a run's DATA records must hold, each named by its
figure path, as tools/report names it (figures.summaries()).

A path is TEST.KEY[.KEY...]: "smp.cpus", "smp.per_ap_us.median". It
reads the test's first summary DATA record; TEST#N reads its Nth
("pmi_stress#2.gap_cycles.p99"), and the per-item records ("record":
"ap") are no summaries and have no path. A value is a number, a string
or true/false, and must equal what the record holds: 4 equals 4.0, true
equals only true. The checks are structural where a regex over the JSON
text broke on a reordered key (KUT's unittests.cfg states what it
expects as keys, it never greps the output).

One host check per record, in the order the paths first name it: the
paths of one DATA line check together, as one expect_lines regex did.
A path the record lacks is an error (a typo in the expectation, ours);
a record the run never printed, or another value, is a failure.
"""

import json
import math
import re
from typing import Any

from ..base.status import Status
from . import figures

_PATH = re.compile(r"(?P<test>[\w-]+)(?:#(?P<nth>[2-9]|[1-9]\d+))?"
                   r"(?P<keys>(?:\.[\w-]+)+)")
FORM = ("TEST.KEY[.KEY...], or TEST#N.KEY for the test's Nth DATA "
        "record (N >= 2)")
_WORSE = {Status.PASS: 0, Status.FAIL: 1, Status.ERROR: 2}


def parse_path(path) -> tuple[str, int, list[str]]:
    """(test, nth record, keys) of a path; ValueError when it is none."""
    match = _PATH.fullmatch(path) if isinstance(path, str) else None
    if not match:
        raise ValueError(f"bad path {path!r}: a path is {FORM}")
    return (match["test"], int(match["nth"] or 1),
            match["keys"][1:].split("."))


def is_value(value) -> bool:
    """Whether value can be expected: a number, a string or a truth."""
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, (int, str, bool))


def flattened(table, prefix="") -> dict[str, Any]:
    """{path: value} of an expect_data table, whose paths may be quoted
    keys ("smp.cpus" = 4) or nested tables (smp = {cpus = 4}), as TOML
    reads an unquoted dotted key; ValueError naming a bad path or
    value."""
    out: dict[str, Any] = {}
    for key, value in table.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            out.update(flattened(value, path + "."))
            continue
        if not is_value(value):
            raise ValueError(f"{path}: a value must be a number, a string "
                             f"or true/false, not {value!r}")
        parse_path(path)
        out[path] = value
    return out


def assignment(path, value) -> str:
    """PATH=VALUE as tools/run --expect-data reads it back."""
    return f"{path}={json.dumps(value)}"


def parse_assignment(text) -> tuple[str, Any]:
    """(path, value) of PATH=VALUE: VALUE is read as JSON (4, true,
    "4"), else taken as the string it is (kvm)."""
    path, equals, shown = text.partition("=")
    if not equals:
        raise ValueError(f"{text!r} is not PATH=VALUE")
    parse_path(path)
    try:
        value = json.loads(shown)
    except ValueError:
        value = shown
    if not is_value(value):
        raise ValueError(f"{path}: a value must be a number, a string or "
                         f"true/false, not {shown!r}")
    return path, value


def _shown(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value)


def _same(expected, seen) -> bool:
    if isinstance(expected, bool) or isinstance(seen, bool):
        return type(expected) is type(seen) and expected == seen
    if isinstance(expected, str) or isinstance(seen, str):
        return expected == seen
    return isinstance(seen, (int, float)) and expected == seen


def _keys(table) -> str:
    return ", ".join(sorted(str(k) for k in table))


def _look_up(record, keys, prefix) -> tuple[bool, Any]:
    """(found, value or why not) of keys in a summary record."""
    value, walked = record, prefix
    for key in keys:
        if not isinstance(value, dict):
            return False, f"{walked} is a value, not a table"
        if key not in value:
            return False, (f"{walked}'s DATA record has no key {key!r} "
                           f"(keys: {_keys(value)})" if walked == prefix
                           else f"{walked} has no key {key!r} (keys: "
                           f"{_keys(value)})")
        value, walked = value[key], f"{walked}.{key}"
    if isinstance(value, (dict, list)):
        kind = "a table" if isinstance(value, dict) else "a list"
        return False, f"{kind}, not a value" + (
            f" (keys: {_keys(value)})" if isinstance(value, dict) else "")
    return True, value


def _check_one(path, expected, records) -> tuple[Status, str]:
    test, nth, keys = parse_path(path)
    prefix = test if nth == 1 else f"{test}#{nth}"
    if prefix not in records:
        printed = sum(1 for p in records if p.split("#")[0] == test)
        if printed:
            return Status.FAIL, (f"{path}: missing: test {test} printed "
                                 f"{printed} DATA record"
                                 f"{'s' * (printed != 1)}, not {nth}")
        tests = ", ".join(dict.fromkeys(p.split("#")[0] for p in records))
        return Status.FAIL, (f"{path}: missing: no DATA record from test "
                             f"{test} (DATA from: {tests or 'none'})")
    found, value = _look_up(records[prefix], keys, prefix)
    if not found:
        return Status.ERROR, f"{path}: unknown path: {value}"
    if not _same(expected, value):
        return Status.FAIL, (f"{path}: expected {_shown(expected)}, saw "
                             f"{_shown(value)}")
    return Status.PASS, f"{path} = {_shown(value)}"


def checks(doc, expected) -> list[dict[str, Any]]:
    """The host checks of a results document's DATA against expected
    ({path: value}), one per record the paths name."""
    records = figures.summaries(doc)
    groups: dict[str, list[tuple[Status, str]]] = {}
    for path, value in expected.items():
        test, nth, _ = parse_path(path)
        groups.setdefault(f"{test}#{nth}", []).append(
            _check_one(path, value, records))
    out = []
    for results in groups.values():
        status = max((s for s, _ in results), key=_WORSE.__getitem__)
        out.append({"name": "expect_data", "status": status,
                    "detail": "; ".join(d for _, d in results)})
    return out
