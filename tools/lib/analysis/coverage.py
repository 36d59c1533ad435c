# SPDX-License-Identifier: MIT
"""What a set of guest runs did not exercise, and why: make check's last
lines, so that a green run on a machine without a vPMU or Hyper-V is not
read as full coverage.

A leaf case is exercised when it passed (or failed: it ran) in at least
one run; one that only ever skipped is not, with the reasons the guest
gave and the host's note beside them. Tests a KVM flavour cannot run
(the runs' not_runnable) and whole runs that could not take place are
listed too.
"""

import collections
from typing import Any
from collections.abc import Iterator

from ..base.status import Status

REASONS_SHOWN = 2
# The reason of a test the kernel's skip= left out: on request, or a
# flavour's limit, which not_runnable states.
SKIP_WORD = "skip= on the command line"


def _leaves(test, path=()) -> Iterator[tuple[tuple[str, ...], dict[str, Any]]]:
    path = (*path, test["name"])
    if not test["cases"]:
        yield path, test
    for case in test["cases"]:
        yield from _leaves(case, path)


def _key(path, leaf) -> tuple[str, ...]:
    """What a skipped leaf stands for: its whole test where the test
    skipped as a whole (the kernel names that one case after the reason,
    which differs from host to host), else its path."""
    if len(path) == 2 and path[1] == leaf["reason"]:
        return path[:1]
    return path


def _covers(ran_path, key) -> bool:
    """Whether a leaf that ran exercises key. A skipped case carries the
    bare name of what it would check ("kvm"), one that ran says more
    ("kvm: kvmclock is enabled (tsc_khz ...)")."""
    if len(key) == 1:
        return ran_path[0] == key[0]
    head, name = ran_path[:-1], ran_path[-1]
    return head == key[:-1] and (name == key[-1] or
                                 name.startswith(key[-1] + ":"))


def lines(docs, skipped_runs=()) -> list[str]:
    """The "not exercised" lines for docs (results.json documents) and
    skipped_runs ([(run name, reason)])."""
    ran = set()
    # key -> [(reason, note)]
    skipped: dict[tuple[str, ...], list[tuple[str, str | None]]] = \
        collections.defaultdict(list)
    flavour_limited = collections.defaultdict(set)
    for doc in docs:
        notes = doc.get("host_notes") or {}
        for test in doc["tests"]:
            for path, leaf in _leaves(test):
                if leaf["status"] != Status.SKIP:
                    ran.add(path)
                    continue
                why = (leaf["reason"] or "no reason given",
                       notes.get(path[0]))
                key = _key(path, leaf)
                if why not in skipped[key]:
                    skipped[key].append(why)
        module = ((doc.get("host") or {}).get("kvm") or {}).get("module")
        for item in doc.get("not_runnable") or []:
            flavour_limited[(item["test"], module)].add(item["reason"])

    out = []
    for key, whys in skipped.items():
        if whys[0][0] == SKIP_WORD or any(_covers(p, key) for p in ran):
            continue
        label = " / ".join(key)
        text = "; ".join(reason + (f" (host: {note})" if note else "")
                         for reason, note in whys[:REASONS_SHOWN])
        out.append(f"not exercised: {label}: {text}")
    for (test, module), reasons in sorted(flavour_limited.items(),
                                          key=lambda kv: str(kv[0])):
        out.append(f"not run under KVM ({module}): {test}: "
                   + "; ".join(sorted(reasons)))
    for name, reason in skipped_runs:
        out.append(f"not run: {name}: {reason}")
    return out
