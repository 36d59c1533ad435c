# SPDX-License-Identifier: MIT
"""make check's rows, a module per kind, as kunit.py's run_checks.py
keeps a dict of commands: the C host unit tests (unit), the Python tests
(python), the house plan, the formatter, the linter and the type checker
(style), the fuzz targets (fuzz), the guest runs of the catalogue
(guests), the runs inside an L1 host kernel (nested), Debian's Linux as
the referee (referee) and kunit.py over what the runs wrote (kunit).
tools/commands/check.py is their table; a new row is a module here and
one line there.

A row before or after the guest runs is a function of the log folder
that returns (Counts, verdict, text shown when something failed); a
guest run's is a function of the run, the log folder and the runs'
guests.Context."""
