# SPDX-License-Identifier: MIT
"""Tables in four forms: aligned text for a terminal, CSV and JSON for
programs, Markdown for a README or a pull request.

A table is a list of Column and a list of rows (dicts keyed by column
key). Cells hold raw values (numbers stay numbers for CSV and JSON); the
text forms format them with the column's function. Names and verdicts
come from results a guest wrote: every text cell and header of the
text, CSV and Markdown forms is shown through text.escaped (JSON
escapes control characters itself), and Markdown's | is escaped.
"""

import csv
import io
import json
from dataclasses import dataclass
from typing import Callable

from ..base import text

FORMATS = ("text", "csv", "json", "markdown")


def plain(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 100 else f"{value:.0f}"
    return str(value)


@dataclass
class Column:
    key: str
    header: str
    unit: str = ""
    fmt: Callable = plain
    numeric: bool = False

    @property
    def title(self) -> str:
        return f"{self.header} ({self.unit})" if self.unit else self.header


def _csv_cell(value):
    """A CSV cell: numbers as they are, anything else escaped."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    return text.escaped(value)


def render(columns, rows, fmt="text") -> str:
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow([text.escaped(c.title) for c in columns])
        for row in rows:
            writer.writerow(["" if row.get(c.key) is None else
                             _csv_cell(row.get(c.key)) for c in columns])
        return out.getvalue()
    if fmt == "json":
        return json.dumps({"columns": [{"key": c.key, "header": c.header,
                                        "unit": c.unit} for c in columns],
                           "rows": [{c.key: row.get(c.key) for c in columns}
                                    for row in rows]}, indent=1) + "\n"
    cells = [[text.escaped(c.title) for c in columns]] + \
        [[text.escaped(c.fmt(row.get(c.key))) for c in columns]
         for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(columns))]

    def line(values, sep="  ") -> str:
        return sep.join(v.rjust(w) if c.numeric else v.ljust(w)
                        for v, w, c in zip(values, widths, columns)).rstrip()
    if fmt == "markdown":
        head = "| " + " | ".join(v.ljust(w).replace("|", "\\|") for v, w in
                                 zip(cells[0], widths)) + " |"
        rule = "|" + "|".join(("-" * (w + 1) + ":") if c.numeric
                              else "-" * (w + 2)
                              for w, c in zip(widths, columns)) + "|"
        body = ["| " + " | ".join(
            (v.rjust(w) if c.numeric else v.ljust(w)).replace("|", "\\|")
            for v, w, c in zip(r, widths, columns)) + " |"
            for r in cells[1:]]
        return "\n".join([head, rule, *body]) + "\n"
    return "\n".join([line(cells[0]),
                      line(["-" * w for w in widths])]
                     + [line(r) for r in cells[1:]]) + "\n"
