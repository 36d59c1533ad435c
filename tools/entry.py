#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The one entry point of hvprobe's host commands.

Every command (tools/run, tools/check, bench/smp, ...) is a symbolic link
to this file, and its code is a module: the link D/NAME runs
D.commands.NAME, with "/" and "-" in NAME written "_" (tools/lava/run is
tools.commands.lava_run, tools/host-cancel-probe is
tools.commands.host_cancel_probe). So that those modules, and the tests,
import the host package one way (`from tools.lib.analysis import ktap`), this is
the only place that touches sys.path: the checkout's root replaces the
folder Python put first (this file's own, tools/).

A command module has main(argv), which returns the exit status. What it
raises is turned into one here: an exception class the module lists in
EXITS ({CannotRun: 3}) prints "PROG: message" and exits with its status;
Ctrl-C, SIGTERM and SIGHUP (tools/lib/base/signals.py, around every
main) print "PROG: interrupted" and exit 130; a reader that went away
(tools/report | head) ends it quietly with 0; anything else is a bug in the tools: its
traceback, "PROG: internal error" and exit 70 (EX_SOFTWARE), never 1,
which means a run failed. PROG is the module's PROG, else the command's
path (tools/run).
"""

import importlib
import os
import sys
import traceback
from pathlib import Path

if __name__ == "__main__":
    # Before anything of the package is imported: the checkout's root
    # replaces the folder Python put first (this file's own, tools/).
    _HERE = Path(__file__).resolve().parent
    sys.path[:] = [str(_HERE.parent)] + [p for p in sys.path
                                         if p != str(_HERE)]

from tools import ROOT  # noqa: E402 - after the path is set
from tools.lib.base import signals  # noqa: E402
from tools.lib.base.exits import (EXIT_INTERNAL_ERROR,  # noqa: E402
                                  EXIT_INTERRUPTED, EXIT_USAGE)
# The folders whose links name commands: D/NAME runs D.commands.NAME.
PACKAGES = ("tools", "bench")


class NoCommand(Exception):
    """This file was run under a name that is no command."""


def _in_root(path):
    """path relative to the checkout, through any linked folders, or
    None when it lies outside."""
    real = Path(os.path.realpath(os.path.dirname(path))) / \
        os.path.basename(path)
    try:
        return real.relative_to(ROOT)
    except ValueError:
        return None


def command_for(argv0):
    """(command, module name) for the path this file was run as: that
    path itself, or the first link on the way from it to this file that
    lies in the checkout (a link in ~/bin to tools/run is tools/run)."""
    path = os.path.abspath(argv0)
    for _ in range(40):
        rel = _in_root(path)
        if rel is not None and len(rel.parts) >= 2 and \
                rel.parts[0] in PACKAGES and rel != Path(__file__).resolve() \
                .relative_to(ROOT):
            name = "_".join(rel.parts[1:]).replace("-", "_")
            return rel.as_posix(), f"{rel.parts[0]}.commands.{name}"
        if not os.path.islink(path):
            break
        path = os.path.join(os.path.dirname(path), os.readlink(path))
    raise NoCommand(f"{argv0}: not a command; run one of the links to "
                    f"this file ({', '.join(commands())})")


def commands():
    """Every command: the links in the checkout that lead to this file."""
    me = Path(__file__).resolve()
    found = []
    for top in PACKAGES:
        for path in sorted((ROOT / top).rglob("*")):
            if path.is_symlink() and path.resolve() == me:
                found.append(path.relative_to(ROOT).as_posix())
    return found


def call(module, command, argv):
    """The exit status of module.main(argv), with what it raises turned
    into a message and a status."""
    prog = getattr(module, "PROG", command)
    exits = getattr(module, "EXITS", {})
    try:
        # SIGTERM and SIGHUP end every command as Ctrl-C does: the runs
        # stop, what ran is kept, exit status 130.
        with signals.interruptible():
            return module.main(argv)
    except tuple(exits) as err:
        print(f"{prog}: {err}", file=sys.stderr)
        return next(status for kind, status in exits.items()
                    if isinstance(err, kind))
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # Nobody reads what is left; say nothing more on the way out.
        sys.stdout = open(os.devnull, "w")
        return 0
    except Exception:  # noqa: BLE001 - every other exception is our bug
        # A bug, not a verdict: its own status, so that "a run failed"
        # (1) never hides one.
        traceback.print_exc()
        print(f"{prog}: internal error (a bug in hvprobe's tools; the "
              "traceback above says where)", file=sys.stderr)
        return EXIT_INTERNAL_ERROR


def run(argv):
    try:
        command, name = command_for(argv[0])
    except NoCommand as err:
        print(err, file=sys.stderr)
        return EXIT_USAGE
    return call(importlib.import_module(name), command, argv[1:])


if __name__ == "__main__":
    sys.exit(run(sys.argv))
