# SPDX-License-Identifier: MIT
"""Debian's version order, as deb-version(7) states it, for picking the
newest of several kernels: 6.1.0-10 is newer than 6.1.0-9 (a string sort
says otherwise), and 6.1.123-1~bpo12+1 older than 6.1.123-1 (a sort of
the numbers in it says otherwise).

A version is [epoch:]upstream[-revision]. Epochs compare as numbers;
upstream, then revision, compare in turns of a run of non-digits (each
character by its weight: ~ before the end of the run, the end before a
letter, a letter before anything else) and a run of digits (as a
number, an absent run being 0)."""

import functools
import re

_RUNS = re.compile(r"(\D*)(\d*)")


def _weight(char: str) -> int:
    if char == "~":
        return -1
    if char.isascii() and char.isalpha():
        return ord(char)
    return ord(char) + 256


def _compare_text(a: str, b: str) -> int:
    for x, y in zip(a + "\0", b + "\0"):
        wx = 0 if x == "\0" else _weight(x)
        wy = 0 if y == "\0" else _weight(y)
        if wx != wy:
            return -1 if wx < wy else 1
        if x == "\0" or y == "\0":
            break
    return 0


def _runs(part: str) -> list[tuple[str, int]]:
    return [(text, int(digits or 0)) for text, digits in _RUNS.findall(part)
            if text or digits]


def _compare_part(a: str, b: str) -> int:
    ra, rb = _runs(a), _runs(b)
    for i in range(max(len(ra), len(rb))):
        ta, na = ra[i] if i < len(ra) else ("", 0)
        tb, nb = rb[i] if i < len(rb) else ("", 0)
        by_text = _compare_text(ta, tb)
        if by_text:
            return by_text
        if na != nb:
            return -1 if na < nb else 1
    return 0


def _split(version: str) -> tuple[int, str, str]:
    epoch, colon, rest = version.partition(":")
    if not colon:
        epoch, rest = "0", version
    upstream, dash, revision = rest.rpartition("-")
    if not dash:
        upstream, revision = rest, ""
    return int(epoch) if epoch.isdigit() else 0, upstream, revision


def compare(a: str, b: str) -> int:
    """-1, 0 or 1 as Debian orders versions a and b."""
    ea, ua, ra = _split(a)
    eb, ub, rb = _split(b)
    if ea != eb:
        return -1 if ea < eb else 1
    return _compare_part(ua, ub) or _compare_part(ra, rb)


key = functools.cmp_to_key(compare)


def newest(versions):
    """The newest of versions (strings) by Debian's order, or None."""
    return max(versions, key=key, default=None)
