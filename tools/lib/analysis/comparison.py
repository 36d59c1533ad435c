# SPDX-License-Identifier: MIT
"""Two sets of results side by side: for every scenario both sets ran,
every figure both have, the medians, the ranges and the verdict of
stats.compare ("no change" when the ranges of the repeats overlap).

Figures that hold the same single value in every run of both sets (the
vCPU count, HZ, a CPU's family) are configuration, not measurements: they
are counted but not listed unless asked for.
"""

import collections
import fnmatch
from dataclasses import dataclass
from typing import Any

from ..base.status import Status
from . import figures, resultset, stats


@dataclass
class Row:
    scenario: str
    figure: str
    unit: str
    base: stats.Summary | None
    new: stats.Summary | None
    verdict: stats.Verdict
    constant: bool


def passing(docs) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """(the runs that passed, {verdict: count} of the others): a crashed
    or failed run's figures are not measurements of the same thing."""
    good = [d for d in docs if d.get("verdict") == Status.PASS]
    others = collections.Counter(str(d.get("verdict")) for d in docs
                                 if d.get("verdict") != Status.PASS)
    return good, dict(others)


def _values(docs) -> dict[str, list[Any]]:
    out = collections.defaultdict(list)
    for doc in docs:
        for name, value in figures.of_run(doc).items():
            out[name].append(value)
    return out


def compare(base_docs, new_docs,
            patterns=("*",)) -> tuple[list[Row], list[str], list[str]]:
    """(rows, only_base, only_new): rows for the scenarios both sets ran,
    and the names of the scenarios only one of them has."""
    base, new = resultset.grouped(base_docs), resultset.grouped(new_docs)
    rows = []
    for name in base:
        if name not in new:
            continue
        bvals, nvals = _values(base[name]), _values(new[name])
        for fig in list(bvals) + [f for f in nvals if f not in bvals]:
            if not any(fnmatch.fnmatchcase(fig, p) for p in patterns):
                continue
            b, n, verdict = stats.compare(bvals.get(fig, ()),
                                          nvals.get(fig, ()))
            constant = (b is not None and n is not None and
                        b.low == b.high == n.low == n.high)
            rows.append(Row(name, fig, figures.unit_of(fig), b, n, verdict,
                            constant))
    only_base = [n for n in base if n not in new]
    only_new = [n for n in new if n not in base]
    return rows, only_base, only_new


def tally(rows) -> dict[str, int]:
    counts: collections.Counter[str] = collections.Counter()
    for row in rows:
        if row.constant:
            counts["constant"] += 1
        elif row.verdict.verdict in (stats.UP, stats.DOWN):
            counts["changed"] += 1
        else:
            counts[row.verdict.verdict] += 1
    return counts
