# SPDX-License-Identifier: MIT
"""The names the build defines, from the build: every command-line key of
the kernel's option table (kind, range or words, default), the guest
tests in run order and the unit tests. `make info` writes them to
build/info.json from `hvprobe-unit --list`, which links the kernel's own
tables (as XTF's mkinfo.py writes info.json for its runner); tools and
their tests read them here and keep no copy."""

import functools
import json
import subprocess
from typing import Any

from tools import ROOT
from tools.lib import cli

INFO = ROOT / "build" / "info.json"


class Unavailable(Exception):
    """build/info.json could not be made or read; the message says why."""


@functools.cache
def load() -> dict[str, Any]:
    """The export as a dict, made or brought up to date by make first."""
    try:
        done = subprocess.run(["make", "-s", "-C", str(ROOT), "info"],
                              stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, **cli.as_owner(ROOT))
    except OSError as err:
        raise Unavailable(f"cannot run make: {err}") from err
    if done.returncode:
        raise Unavailable(f"make info exited {done.returncode}: "
                          f"{done.stderr.strip()[-500:]}")
    try:
        return json.loads(INFO.read_text())
    except (OSError, ValueError) as err:
        raise Unavailable(f"{INFO}: {err}") from err


def options() -> dict[str, dict[str, Any]]:
    """Every option by key, as the kernel's table states it."""
    return {o["key"]: o for o in load()["options"]}


def words(key) -> tuple[str, ...]:
    """The words an enum option accepts, in the kernel's enum order."""
    return tuple(options()[key]["values"])


def tests() -> tuple[str, ...]:
    """The guest tests, in run order."""
    return tuple(load()["tests"])
