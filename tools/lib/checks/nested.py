# SPDX-License-Identifier: MIT
"""make check's nested legs: the runs of the catalogue that name a host
kernel, one after another inside one boot of it as L1, with the host
probe and (under REFEREE_L1) the referee beside them."""

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
# lockup or panic: docs/lpj.md). L1 is booted again for the runs left
# (nested.run_until_done()), up to this many boots.
L1_BOOTS = 4


def leg_timeouts(runs, referee) -> list[int]:
    """Each command's share of its L1's time: each run and the host
    probe, and the referee's boots where the leg runs it."""
    return [NESTED_TIMEOUT_S] * (runs + 1) + ([REFEREE_LEG_S] if referee
                                              else [])


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
        outcome = nested.run_until_done(
            kernel, commands, folders, leg_timeouts(len(runs), referee),
            share, l0, max_boots=L1_BOOTS, stream=None,
            log=lambda line: print(f"host kernel {label}: {line}",
                                   flush=True))
    except (nested.NestedError, OSError) as err:
        return same_rows(names, results.Counts(failed=1), "no L1",
                         f"{err}\n")
    ctx.nested[label] = (outcome, [run.name for run in runs])
    return leg_rows(label, names, runs, share, outcome, kernel, ctx)


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
        text = f"inside L1 ({kernel.describe()}): " \
            f"{exited(rc, outcome)}; console {outcome.console}\n"
        rows.append((name, *judged(name, rc, text, doc, ctx.seen)))
    rows.append((f"host-probe@{label}",
                 *probe_row(share, exited(outcome.statuses[len(runs)],
                                          outcome))))
    if label == REFEREE_L1:
        rc = outcome.statuses[-1]
        rows.append((names[-1], *referee_counts(share / REFEREE, rc,
                                                exited(rc, outcome))))
    return rows


def exited(rc, outcome) -> str:
    """How a command inside L1 ended: its exit status, or, for one L1
    never let finish, how the last of the boots that ran it ended."""
    if rc is not None:
        return f"exited {rc}"
    boots = f"{outcome.boots} L1 boots" if outcome.boots > 1 else "L1"
    return f"did not finish: {boots} ended first, the last " \
        f"({outcome.why_ended()})"


def probe_row(share, exit_text) -> tuple[results.Counts, str, str]:
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
        text = f"inside L1 the row {exit_text} and left no probe.txt\n"
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
