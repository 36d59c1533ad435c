# SPDX-License-Identifier: MIT
"""Strings a guest wrote, made safe to show: a terminal (or a Markdown
or CSV reader) acts on control and format characters, so a DATA value
holding ESC ] 52 could write the user's clipboard, retitle the window or
clear the screen, and a bidi override (U+202E, U+2066) could make a
line read otherwise than it is. escaped() writes each such character as
a Python escape (\\xNN, \\uNNNN, \\UNNNNNNNN), visible and inert.

What is escaped: Unicode categories Cc (C0 and C1 controls, DEL) and Cf
(format characters: bidi controls, zero-width characters, tags), the
lone surrogates (Cs) that undecodable bytes become, and the line and
paragraph separators (Zl, Zp) that some readers break lines at. Tab is
kept: it only moves to the next tab stop, and Linux's own logs use it.

Every command shows guest-derived text through this one function, at
output: tools/run's summary and streamed serial log, the batch progress
lines, and every cell of tools/report's and tools/compare's tables. What
the run folders keep (serial.log, results.json) stays as the guest wrote
it.
"""

import unicodedata

_UNSAFE = frozenset(("Cc", "Cf", "Cs", "Zl", "Zp"))


def _escape(ch) -> str:
    n = ord(ch)
    if n < 0x100:
        return f"\\x{n:02x}"
    return f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}"


def escaped(s) -> str:
    """s (any value, as str() writes it) with every character a terminal
    could act on written as an escape; tab and printable text as they
    are."""
    s = str(s)
    if s.isprintable():     # False for every category above, and tab
        return s
    return "".join(_escape(ch) if ch != "\t" and
                   unicodedata.category(ch) in _UNSAFE else ch for ch in s)


def escaped_lines(lines) -> list[str]:
    """Each of lines, escaped: a guest's newline cannot start a line."""
    return [escaped(line) for line in lines]
