# SPDX-License-Identifier: MIT
"""Median and spread of repeated runs, and whether two sets differ.

A figure from one boot is one draw from a noisy process (a shared host, TCG
timing, a hypervisor's scheduler). Repeats give its spread; two sets of
repeats whose ranges overlap are "no change", because nothing in them
tells a real difference from noise. The full range (min to max) is the
interval: with the three to five repeats people run, any narrower
estimate would claim a precision the data does not have.

The price of that rule: two sets of n repeats drawn from one distribution
miss each other (all of one below all of the other) with probability
2 n! n! / (2n)!, since every interleaving of the 2n values is equally
likely: 33 % for n = 2, 10 % for n = 3, 0.8 % for n = 5. Use five repeats
when a false "changed" costs something.
"""

import statistics
from dataclasses import dataclass

NO_CHANGE, UP, DOWN, MISSING = "no change", "up", "down", "missing"


@dataclass
class Summary:
    n: int
    median: float
    low: float
    high: float

    @property
    def spread(self) -> float:
        return self.high - self.low


def summarize(values) -> Summary | None:
    """Summary of the numbers in values (None and non-numbers left out),
    or None when there is none."""
    nums = [v for v in values
            if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if not nums:
        return None
    return Summary(n=len(nums), median=statistics.median(nums),
                   low=min(nums), high=max(nums))


def overlap(a, b) -> bool:
    return a.low <= b.high and b.low <= a.high


def change_pct(base, new) -> float | None:
    """The new median against the base median, in percent; None when the
    base is 0 (no ratio means anything there)."""
    if base.median == 0:
        return 0.0 if new.median == 0 else None
    return (new.median - base.median) / abs(base.median) * 100


@dataclass
class Verdict:
    verdict: str            # NO_CHANGE, UP, DOWN or MISSING
    change_pct: float | None
    noise_known: bool       # both sides had repeats to estimate noise


def compare(base_values,
            new_values) -> tuple[Summary | None, Summary | None, Verdict]:
    base, new = summarize(base_values), summarize(new_values)
    if base is None or new is None:
        return base, new, Verdict(MISSING, None, False)
    noise_known = base.n > 1 and new.n > 1
    if overlap(base, new):
        verdict = NO_CHANGE
    else:
        verdict = UP if new.median > base.median else DOWN
    return base, new, Verdict(verdict, change_pct(base, new), noise_known)
