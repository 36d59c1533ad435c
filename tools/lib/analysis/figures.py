# SPDX-License-Identifier: MIT
"""Figures: the numbers a run's DATA lines carry, by stable dotted names.

Every numeric value of every `# DATA` object becomes one figure named
test.key[.subkey...] ("smp.total_us", "smp.per_ap_us.median",
"pmi_stress.gap_cycles.p99"), so that tools/report, tools/compare and
tools/plot need no list of keys: a test that adds a key adds a figure.
Lists (the per-AP timeline) are left to the code that knows their shape.
The unit comes from the key's suffix, the convention the kernel's DATA
lines follow (total_us, tsc_hz, mem_extent_kib). A DATA object that says
"record": KIND is one item of such a list (the smp test prints one per
AP, "record": "ap"): records() reads them, and they are no figures.
"""

import re
from typing import Any
from collections.abc import Iterator

# Suffix of the last key (or of its parent, for {"median": ..} tables)
# -> unit shown beside the number.
UNITS = (
    ("_per_s_per_cpu", "/s/CPU"), ("_per_s", "/s"), ("_us", "µs"),
    ("_ms", "ms"), ("_ns", "ns"), ("_s", "s"), ("_khz", "kHz"),
    ("_hz", "Hz"), ("_kib", "KiB"), ("_mib", "MiB"), ("_cycles", "cycles"),
    ("_pct", "%"), ("_percent", "%"),
)
_SAFE = re.compile(r"[^\w-]")


def unit_of(name) -> str:
    """The unit of a figure name, "" when its keys do not say."""
    parts = name.split(".")
    for part in reversed(parts[1:]):
        for suffix, unit in UNITS:
            if part.endswith(suffix):
                return unit
    return ""


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def flatten(obj, prefix) -> dict[str, float]:
    """{dotted name: number} for the numbers in a DATA object."""
    out = {}
    for key, value in obj.items():
        name = f"{prefix}.{_SAFE.sub('_', str(key))}"
        if _number(value):
            out[name] = value
        elif isinstance(value, dict):
            out.update(flatten(value, name))
    return out


def data_objects(doc) -> Iterator[tuple[str, dict[str, Any]]]:
    """(test name, DATA object) pairs of a results document, in order.
    A test's DATA object is filed under the test the object names."""
    for test in doc.get("tests") or []:
        for obj in test.get("data") or []:
            if isinstance(obj, dict):
                yield str(obj.get("test") or test.get("name")), obj


def summaries(doc) -> dict[str, dict[str, Any]]:
    """{prefix: DATA object} of a run's summaries (no "record"): a test's
    first is named by the test, its second test#2, and so on. The names
    of figures, and the paths expect_data checks, start with these."""
    out: dict[str, dict[str, Any]] = {}
    seen: dict[str, int] = {}
    for test, obj in data_objects(doc):
        if "record" in obj:
            continue
        seen[test] = seen.get(test, 0) + 1
        prefix = _SAFE.sub("_", test)
        if seen[test] > 1:
            prefix += f"#{seen[test]}"
        out[prefix] = {k: v for k, v in obj.items() if k != "test"}
    return out


def of_run(doc) -> dict[str, float]:
    """All figures of one run, under summaries()' prefixes; the host's
    own timing is "run.*"."""
    out: dict[str, float] = {}
    for prefix, obj in summaries(doc).items():
        out.update(flatten(obj, prefix))
    timing = doc.get("timing") or {}
    for key in ("first_ktap_s", "totals_s"):
        if _number(timing.get(key)):
            out[f"run.{key}"] = timing[key]
    return out


def data(doc, test) -> dict[str, Any] | None:
    """The first DATA object of the named test (its summary: no record),
    or None."""
    return next((obj for name, obj in data_objects(doc)
                 if name == test and "record" not in obj), None)


def records(doc, test, kind) -> list[dict[str, Any]]:
    """The named test's items of one kind ("ap"), in order: its DATA
    objects that say "record": kind, or where a kernel lists them in the
    summary instead, that list (under kind + "s": "aps")."""
    listed = (data(doc, test) or {}).get(kind + "s")
    if isinstance(listed, list):
        return [item for item in listed if isinstance(item, dict)]
    return [obj for name, obj in data_objects(doc)
            if name == test and obj.get("record") == kind]
