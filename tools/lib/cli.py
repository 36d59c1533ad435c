# SPDX-License-Identifier: MIT
"""What the host commands' command lines share: a parser whose help is
the command module's docstring (its first paragraph above the options,
the rest below them, laid out as written), and the options several
commands take."""

import argparse
import os
import subprocess
import sys
from typing import Any

from .analysis import results

_REST = object()


def parser(prog, doc, epilog=_REST) -> argparse.ArgumentParser:
    """An ArgumentParser for prog, described by doc; epilog (default:
    doc's paragraphs after the first; None for none) below the options.
    Options are taken by their full names only: a command that passes
    its command line on less some options (tools/run inside L1) finds
    them by name, and a prefix would slip past it."""
    first, _, rest = doc.partition("\n\n")
    return argparse.ArgumentParser(
        prog=prog, description=first, allow_abbrev=False,
        epilog=rest if epilog is _REST else epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter)


def no_build(p, why="") -> None:
    """--no-build: the command runs make first unless told not to."""
    p.add_argument("--no-build", action="store_true",
                   help=f"do not run make first{why}")


def as_owner(root) -> dict[str, Any]:
    """subprocess keyword arguments that run a command as the owner of
    root when this process is root and root is not root's: a build as
    root (sudo tools/run, pmi-verdict) then leaves no root-owned files in
    a user's tree."""
    if os.geteuid() != 0:
        return {}
    st = os.stat(root)
    if st.st_uid == 0:
        return {}
    return {"user": st.st_uid, "group": st.st_gid, "extra_groups": []}


def build(root) -> str | None:
    """`make -s` in root, the default goal, as root's owner: None when it
    built, else why not, in a line."""
    try:
        done = subprocess.run(["make", "-s", "-C", str(root)],
                              stdin=subprocess.DEVNULL, **as_owner(root))
    except OSError as err:
        return f"cannot run make: {err}"
    return f"build failed (make -s exited {done.returncode})" \
        if done.returncode else None


def results_option(p, root, what) -> None:
    """--results DIR: where the command puts its folders."""
    p.add_argument("--results", metavar="DIR",
                   default=results.results_dir(root),
                   help=f"{what} (default: $HVPROBE_RESULTS or results/)")


def reader_gone() -> None:
    """The reader of standard output went away (tools/run | head): what
    is left to print goes nowhere, quietly, and the command carries on to
    its results and its exit status."""
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, sys.stdout.fileno())
    os.close(null)


def qemu_option(p) -> None:
    """--qemu PATH: the QEMU binary, for this command and the ones it
    starts (it sets $QEMU)."""
    p.add_argument("--qemu", metavar="PATH",
                   help="QEMU binary (default: $QEMU, else "
                        "qemu-system-x86_64 on the PATH)")


# The accelerator every command takes when no --accel says one.
ACCEL_ENV = "HVPROBE_ACCEL"


def accel(p, given, accels, default=None) -> str | None:
    """The accelerator: given (--accel), else $HVPROBE_ACCEL (empty is
    unset), else default; p.error() when the environment's is not one of
    accels, as argparse checks an option against its choices but never a
    default."""
    if given is not None:
        return given
    env = os.environ.get(ACCEL_ENV) or None
    if env is not None and env not in accels:
        p.error(f"{ACCEL_ENV}={env!r} is not one of {', '.join(accels)}")
    return env or default


def use_qemu(args) -> None:
    if getattr(args, "qemu", None):
        os.environ["QEMU"] = args.qemu


def without_options(argv, options, flags=()) -> list[str]:
    """argv less each option in options and its value (--opt V or
    --opt=V) and each flag in flags, up to the -- that starts the
    kernel's words."""
    out: list[str] = []
    skip = False
    for i, word in enumerate(argv):
        if skip:
            skip = False
        elif word == "--":
            return out + argv[i:]
        elif word in options:
            skip = True
        elif word.split("=", 1)[0] not in options and word not in flags:
            out.append(word)
    return out
