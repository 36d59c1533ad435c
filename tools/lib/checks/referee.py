# SPDX-License-Identifier: MIT
"""make check's referee rows: Debian's Linux booted beside hvprobe's
policies of the same name (tools/linux-referee), judged by its
referee.json, one case per comparison; a run of the catalogue with
tool = "linux-referee", and the one nested scenario the L1 leg runs."""

import json
import os
import subprocess
import sys

from ... import ROOT, TOOLS
from .. import referee
from ..analysis import results
from ..base.status import Status
from ..launch import serial



# tools/linux-referee enforces each guest's own timeout; this only
# catches a referee that itself got stuck.
RUN_TIMEOUT_S = 900
TOOL = TOOLS / "linux-referee"
REFEREE = "linux-referee"
# The one nested referee scenario: Debian's 6.1 as L2 under L1 6.12 (a
# Linux of one series judged under another's KVM).
REFEREE_L1, REFEREE_L2 = "6.12", "6.1"
REFEREE_NESTED_CPU = "host,-arch-capabilities,hv-relaxed,hv-vpindex," \
    "hv-time,hv-frequencies,kvm=off"


def referee_command(results_dir, *args) -> list[str]:
    return [sys.executable, str(TOOL), "--no-build",
            "--results", str(results_dir), "--name", REFEREE, *args]


def referee_counts(folder, rc, exit_text=None
                   ) -> tuple[results.Counts, str, str]:
    """A row from tools/linux-referee's referee.json (rc its exit status,
    exit_text how it ended where it ran in L1): per Linux series,
    hvprobe's run passed, and each comparison (tools/lib/referee.py's
    COMPARISONS) a pass where the two agree, a fail where not, and a
    skip with its reason where a side did not print its input. Exit 3
    (no kernel to boot) is a skip, except under CI=true."""
    try:
        doc = json.loads((folder / "referee.json").read_text())
    except (OSError, ValueError):
        doc = None
    if doc is None:
        why = f"tools/linux-referee {exit_text or f'exited {rc}'} and " \
            "wrote no referee.json"
        if rc == 3 and os.environ.get("CI") != "true":
            return results.Counts(skipped=1), Status.SKIP, why + "\n"
        return results.Counts(failed=1), "no result", why + "\n"
    counts, text = results.Counts(), ""
    for row in doc["rows"]:
        if row.get("not_run"):
            # Linux could not boot here: a skip that says why, never a
            # disagreement.
            counts.add(Status.SKIP)
            text += f"SKIP Linux {row['series']}: {row['not_run']}\n"
            continue
        ok = row["hvprobe"]["verdict"] == Status.PASS
        counts.add(Status.PASS if ok else Status.FAIL)
        text += f"{'PASS' if ok else 'FAIL'} hvprobe {row['policy']} " \
            "passed\n"
        for c in row.get("comparisons") or []:
            status = {referee.AGREE: Status.PASS,
                      referee.DISAGREE: Status.FAIL}.get(c["verdict"],
                                                         Status.SKIP)
            counts.add(status)
            text += f"{status.upper()} {c['what']}: Linux {row['release']} " \
                f"{c['linux']}, hvprobe {row['policy']} {c['hvprobe']}" + \
                (f" (not compared: {c['why']})" if c.get("why") else "") + \
                "\n"
    verdict = Status.FAIL if counts.failed else \
        Status.SKIP if counts.skipped and not counts.passed else Status.PASS
    return counts, verdict, text


def referee_argv(run) -> list[str]:
    """tools/linux-referee's options for a run with tool =
    "linux-referee": its accel, vcpus, numa and cpu."""
    cpu = run.cpu_for(run.accel) if isinstance(run.cpu, dict) else run.cpu
    return ["--accel", run.accel, "--smp", str(run.vcpus), "--numa",
            str(run.numa), *(["--cpu", cpu] if cpu else [])]


def referee_run(run, log_dir, ctx) -> tuple[results.Counts, str, str]:
    """A run with tool = "linux-referee": Debian's Linux beside hvprobe's
    policies of the same name, in log_dir/NAME. Started as a guest run
    is (serial.spawn): the interrupt (serial.stop_all()) kills it and all
    it started at once, and it dies with tools/check."""
    cmd = [sys.executable, str(TOOL), "--no-build",
           "--results", str(log_dir), "--name", run.name, *referee_argv(run)]
    try:
        rc, said = serial.run_child(
            cmd, RUN_TIMEOUT_S, cwd=ROOT, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            errors="replace")
    except serial.Interrupted:
        return results.Counts(), "interrupted", ""
    if rc is None:
        said = f"still running after {RUN_TIMEOUT_S} s\n"
    counts, verdict, text = referee_counts(log_dir / run.name, rc)
    return counts, verdict, text + (said if counts.failed else "")
