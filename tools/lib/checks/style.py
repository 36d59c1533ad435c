# SPDX-License-Identifier: MIT
"""The style the tree states, checked: the house plan
(tools/lib/layering.py), clang-format over the C sources (the tree's
.clang-format), pyflakes over tools/ and bench/, mypy over the annotated
functions of tools/lib (mypy.ini). The layering row is two cases (one
way, no cycle); each other check is one case per file, failed by any
finding in it; a tool that is not installed is one skipped case that
names the package make check installs."""

import shutil
import subprocess
from pathlib import Path

from ... import ROOT
from .. import layering
from ..analysis import results
from ..base.status import Status

# The folders of C sources, as the Makefile's C_TREES lists them.
C_TREES = ("apic", "boot", "hv", "kernel", "pmu", "tests")
# Debian bookworm's clang-format, by its versioned name: another version
# lays out the same source differently, and the tree was formatted by 14.
CLANG_FORMAT = "clang-format-14"
MYPY = "mypy"
TYPED_TREES = ("tools/lib",)


def c_sources(root: Path) -> list[str]:
    """The .c and .h files under C_TREES, relative to root, sorted."""
    return sorted(str(p.relative_to(root)) for tree in C_TREES
                  for p in (root / tree).rglob("*.[ch]"))


def python_sources(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for tree in TYPED_TREES
                  for p in (root / tree).rglob("*.py"))


def judged(files: list[str], text: str,
           broke: bool) -> tuple[results.Counts, Status]:
    """One case per file, failed when a line of text starts with its
    name and a colon; one more failed case when the tool broke (a
    nonzero exit) without naming any file."""
    flagged = {line.split(":", 1)[0] for line in text.splitlines()}
    counts = results.Counts()
    for name in files:
        counts.add(Status.FAIL if name in flagged else Status.PASS)
    if broke and not flagged & set(files):
        counts.add(Status.FAIL)
    return counts, Status.FAIL if counts.failed else Status.PASS


def missing(tool: str, package: str, log: Path,
            why: str = "") -> tuple[results.Counts, Status, str]:
    text = (f"{tool} is not installed{why}; make check installs it "
            f"(Debian's {package})\n")
    log.write_text(text)
    return results.Counts(skipped=1), Status.SKIP, text


def run(argv: list[str], root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=root, text=True, capture_output=True,
                          stdin=subprocess.DEVNULL)


def format_row(log_dir: Path,
               root: Path) -> tuple[results.Counts, Status, str]:
    """clang-format --dry-run --Werror over every C source: a file fails
    when `make format` would change it."""
    log = log_dir / "format.log"
    if not shutil.which(CLANG_FORMAT):
        return missing(CLANG_FORMAT, "clang-format-14", log)
    files = c_sources(root)
    done = run([CLANG_FORMAT, "--dry-run", "--Werror", "--style=file",
                *files], root)
    text = done.stdout + done.stderr
    log.write_text(text or "no finding\n")
    # Only the first line of each finding names a file; the source line
    # and the caret under it follow.
    named = "".join(line + "\n" for line in text.splitlines()
                    if ": error: " in line or ": warning: " in line)
    counts, verdict = judged(files, named, done.returncode != 0)
    return counts, verdict, named or text


def types_row(log_dir: Path,
              root: Path) -> tuple[results.Counts, Status, str]:
    """mypy, as mypy.ini sets it up, over tools/lib: a file fails on any
    error mypy reports in it (a return that contradicts its annotation,
    say)."""
    log = log_dir / "types.log"
    if not shutil.which(MYPY):
        return missing(MYPY, "mypy", log)
    files = python_sources(root)
    done = run([MYPY, "--config-file", str(root / "mypy.ini"),
                *TYPED_TREES], root)
    text = done.stdout + done.stderr
    log.write_text(text)
    errors = "".join(line + "\n" for line in text.splitlines()
                     if ": error: " in line)
    counts, verdict = judged(files, errors, done.returncode != 0)
    return counts, verdict, errors or text


def layering_row(log_dir: Path,
                 root: Path = ROOT) -> tuple[results.Counts, Status, str]:
    """The house plan (tools/lib/layering.py): one case for includes and
    imports that point one way, one for no cycle among folders,
    packages and apic/smp's files."""
    bad, loops = layering.check(root)
    text = "".join(f"{line}\n" for line in bad)
    text += "".join(f"cycle: {loop}\n" for loop in loops)
    (log_dir / "layering.log").write_text(text or "the plan holds\n")
    counts = results.Counts()
    counts.add(Status.FAIL if bad else Status.PASS)
    counts.add(Status.FAIL if loops else Status.PASS)
    return counts, Status.FAIL if counts.failed else Status.PASS, text


# The Python trees the lint row reads, and Debian's pyflakes (package
# python3-pyflakes, which make check installs through tools/deps).
LINT_TREES = ("tools", "bench")
PYFLAKES = "pyflakes3"


def lint_row(log_dir: Path,
             root: Path = ROOT) -> tuple[results.Counts, Status, str]:
    """Debian's pyflakes over tools/ and bench/: one case per Python
    file, failed by any finding (an unused import or variable, an
    undefined name, an f-string without a placeholder)."""
    files = sorted(str(p.relative_to(root)) for tree in LINT_TREES
                   for p in (root / tree).rglob("*.py"))
    try:
        done = subprocess.run([PYFLAKES, *files], cwd=root, text=True,
                              capture_output=True, stdin=subprocess.DEVNULL)
    except OSError as err:
        text = (f"cannot run {PYFLAKES} ({err}); make check installs it "
                "(python3-pyflakes)\n")
        (log_dir / "lint.log").write_text(text)
        return results.Counts(failed=1), Status.FAIL, text
    text = done.stdout + done.stderr
    (log_dir / "lint.log").write_text(text or "no finding\n")
    counts, verdict = judged(files, text, done.returncode != 0)
    return counts, verdict, text
