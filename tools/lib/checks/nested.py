# SPDX-License-Identifier: MIT
"""make check's nested legs: the runs of the catalogue that name a host
kernel, one after another inside one boot of it as L1, with the host
probe and (under REFEREE_L1) the referee beside them."""

import dataclasses
import json
import os
import sys

from ... import TOOLS
from .. import referee as referee_boot
from ..analysis import results
from ..base.status import Status
from ..hostkernels import hostkernel, nested
from ..launch import kvm
from .guests import Context, judged
from .referee import (REFEREE, REFEREE_L1, REFEREE_L2, REFEREE_NESTED_CPU,
                      referee_command, referee_counts)


# One nested run's share of its L1's time: a nested boot takes 10-30 s
# under a TCG L0, the first one also KVM's probe boot.
NESTED_TIMEOUT_S = 180
# The referee boots Linux, then hvprobe, each with its own timeout
# (300 s each: tools/lib/referee.py, tools/commands/linux_referee.py);
# beyond them, the tool's start inside L1.
REFEREE_LEG_S = 2 * referee_boot.TIMEOUT_S + NESTED_TIMEOUT_S
# Under a TCG L0 an L2 now and then takes L1 down with it (an L1 reset,
# lockup or panic: docs/lpj.md). L1 is booted again for the runs left,
# as long as the boot before finished one, up to this many boots.
L1_BOOTS = 3


def leg_timeout(runs, referee) -> int:
    """An L1 leg's time: each of its runs and the host probe, and the
    referee's boots where the leg runs it."""
    return NESTED_TIMEOUT_S * (runs + 1) + (REFEREE_LEG_S if referee else 0)


def leg_commands(runs, share, referee) -> list[list[str]]:
    """What L1 runs, one after another, its results in share: each run as
    tools/run, the host-probe row, and the referee where asked."""
    commands = [[sys.executable, str(TOOLS / "run"), "--no-build", "--quiet",
                 "--results", str(share), "--name", run.name, *run.run_argv()]
                for run in runs]
    # The host probe in kprobe mode on a real KVM: nmi_storm's NMI IPIs
    # against kvm_inject_nmi, and the VM-entries they cancelled.
    commands.append([sys.executable, "-m", "tools.lib.probe.probecheck",
                     str(share)])
    if referee:
        # Linux itself beside hvprobe under this host's Hyper-V
        # emulation, Hyper-V alone on two packages: the TSC rate from
        # the frequency MSR, the TSC "running on Hyper-V" unstable.
        # (tools/linux-referee --matrix runs the other scenarios.)
        commands.append(referee_command(share, "--accel", "kvm", "--cpu",
                                        REFEREE_NESTED_CPU, "--smp", "2",
                                        "--numa", "2", "--series",
                                        REFEREE_L2))
    return commands


def leg(label, runs, log_dir,
        ctx: Context) -> list[tuple[str, results.Counts, str, str]]:
    """Every run of the catalogue that names host kernel label, one after
    another inside one boot of it as L1 (tools/lib/hostkernels/nested.py), in
    log_dir/on-LABEL/: [(row name, Counts, verdict, text)]. A kernel that
    cannot be had here skips its runs with the reason, except under
    CI=true, where .ci/run provides both series."""
    referee = label == REFEREE_L1
    names = [f"{run.name}@{label}" for run in runs] + \
        [f"host-probe@{label}"] + \
        ([f"{REFEREE}@{label}"] if referee else [])
    try:
        kernel = hostkernel.resolve(label, log=lambda line: print(
            line, flush=True))
    except hostkernel.HostKernelError as err:
        return unavailable_rows(names, f"host kernel {label}: {err}", ctx)
    if referee:
        fetch_referee_linux()
    share = log_dir / f"on-{label}"
    commands = leg_commands(runs, share, referee)
    l0 = nested.choose_l0(kvm.flavour()["module"], ctx.kvm[0])
    folders = [run.name for run in runs] + ["host-probe"] + \
        ([REFEREE] if referee else [])
    try:
        outcome = run_legs(label, kernel, commands, folders, share, l0,
                           leg_timeout(len(runs), referee))
    except (nested.NestedError, OSError) as err:
        return same_rows(names, results.Counts(failed=1), "no L1",
                         f"{err}\n")
    ctx.nested[label] = (outcome, [run.name for run in runs])
    return leg_rows(label, names, runs, share, outcome, kernel, ctx)


def run_legs(label, kernel, commands, folders, share, l0,
             timeout) -> nested.Outcome:
    """commands inside L1, booted again (in share/l1-N) for the ones an
    L1 that ended left, as long as it finished one, up to L1_BOOTS; each
    unfinished command's folder (folders, one per command) is kept as
    FOLDER.l1-ended-N. The last boot's Outcome, with every command's
    status and the boots' time added up."""
    left = list(range(len(commands)))
    statuses: list[int | None] = [None] * len(commands)
    wall = 0.0
    for boot in range(1, L1_BOOTS + 1):
        own = nested.L1_DIR if boot == 1 else f"{nested.L1_DIR}-{boot}"
        outcome = nested.run(kernel, [commands[i] for i in left], share,
                             timeout, l0, stream=None, own_dir=own)
        wall += outcome.wall_s
        for i, status in zip(left, outcome.statuses):
            statuses[i] = status
        unfinished = [i for i in left if statuses[i] is None]
        if not unfinished or len(unfinished) == len(left) or \
                boot == L1_BOOTS:
            break
        print(f"host kernel {label}: L1 ended before {len(unfinished)} of "
              f"its runs did ({outcome.why_ended()}); booting it again for "
              "them", flush=True)
        for i in unfinished:
            folder = share / folders[i]
            if folder.exists():
                folder.rename(share / f"{folders[i]}.l1-ended-{boot}")
        left = unfinished
    return dataclasses.replace(outcome, statuses=statuses, wall_s=wall)


def same_rows(names, counts, verdict,
              text) -> list[tuple[str, results.Counts, str, str]]:
    """One row per name, each with its own copy of counts."""
    return [(n, results.Counts(**vars(counts)), verdict, text)
            for n in names]


def unavailable_rows(names, why,
                     ctx) -> list[tuple[str, results.Counts, str, str]]:
    """The rows of a leg whose host kernel cannot be had: skipped with
    why, or lost under CI=true."""
    for n in names:
        ctx.seen[n] = why
    if os.environ.get("CI") == "true":
        return same_rows(names, results.Counts(failed=1), "lost",
                         f"CI=true and {why}\n")
    return same_rows(names, results.Counts(skipped=1), Status.SKIP,
                     why + "\n")


def fetch_referee_linux() -> None:
    """L1 sees the checkout but not apt's lists: the referee's Linux is
    fetched here, into the cache L1 boots it from."""
    try:
        hostkernel.fetch_debian(REFEREE_L2, log=lambda line: print(
            line, flush=True))
    except hostkernel.HostKernelError as err:
        print(f"host kernel {REFEREE_L2} for the referee: {err}",
              flush=True)


def leg_rows(label, names, runs, share, outcome, kernel,
             ctx) -> list[tuple[str, results.Counts, str, str]]:
    """The rows of a leg that booted: each run judged from the results
    it left in share, then host-probe, then the referee if it ran."""
    rows = []
    for name, run, rc in zip(names, runs, outcome.statuses[:len(runs)]):
        path = share / run.name / "results.json"
        try:
            doc = json.loads(path.read_text())
        except (OSError, ValueError):
            doc = None
        text = f"inside L1 ({kernel.describe()}): exit status {rc}; " \
            f"console {outcome.console}\n"
        rows.append((name, *judged(name, rc, text, doc, ctx.seen)))
    rows.append((f"host-probe@{label}",
                 *probe_row(share, outcome.statuses[len(runs)])))
    if label == REFEREE_L1:
        rows.append((names[-1], *referee_counts(share / REFEREE,
                                                outcome.statuses[-1])))
    return rows


def probe_row(share, rc) -> tuple[results.Counts, str, str]:
    """The host-probe row that ran inside L1 (python3 -m
    tools.lib.probe.probecheck), from the counts and text it left in share."""
    try:
        said = json.loads((share / "host-probe-row.json").read_text())
        counts = results.Counts(said["passed"], said["failed"],
                                said["skipped"])
        verdict = said["verdict"]
    except (OSError, ValueError, KeyError, TypeError):
        counts, verdict = results.Counts(failed=1), "no result"
    try:
        text = (share / "host-probe" / "probe.txt").read_text()
    except OSError:
        text = f"inside L1 the row exited {rc} and left no probe.txt\n"
    return counts, verdict, text


def nmi_cancels(share) -> tuple[int, int, int] | None:
    """(cancels, after an NMI injection, NMI injections) the host probe
    counted inside L1, or None."""
    try:
        doc = json.loads((share / "host-probe" / "host-probe.json")
                         .read_text())
        c = doc["nmi_cancels"]
        return c["cancels"], c["after_nmi"], c["nmi_injections"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
