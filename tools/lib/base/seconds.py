# SPDX-License-Identifier: MIT
"""Durations, as every command line and file gives them: a timeout, a
recording window, in seconds (LAVA's in minutes). One type, so that
none of them can be infinite or NaN (a run that never ends, a deadline
that compares false with every clock reading) or so large that adding
it to time.monotonic() loses the clock's own seconds."""

import argparse
import math
from typing import Any

# Longer than any run, window or probe is meant to take (11.6 days), and
# small enough that monotonic() + it keeps millisecond resolution.
MAX_S = 1e6
WHAT = f"a number of seconds, 0 < S < {MAX_S:.0f}"


def finite(value: Any) -> float:
    """value, a number from a file (TOML, JSON), as seconds; ValueError
    saying what it must be. Text, or a true, is no number here."""
    number = math.nan
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            number = float(value)
        except OverflowError:
            pass
    if not (math.isfinite(number) and 0 < number < MAX_S):
        raise ValueError(f"must be {WHAT}, not {value!r}")
    return number


def option(text: str) -> float:
    """The argparse type of a duration (argparse names the option)."""
    try:
        return finite(float(text))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be {WHAT}, not {text!r}") from None


def minutes_option(text: str) -> int:
    """The argparse type of a duration in whole minutes (LAVA's unit),
    held to the same bound once made seconds."""
    limit = int(MAX_S // 60)
    try:
        minutes = int(text)
    except ValueError:
        minutes = 0
    if not 0 < minutes < limit:
        raise argparse.ArgumentTypeError(
            f"must be a whole number of minutes, 0 < M < {limit}, not "
            f"{text!r}")
    return minutes
