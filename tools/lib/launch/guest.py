# SPDX-License-Identifier: MIT
"""One guest run: boot media, one QEMU process, its serial log streamed
and parsed as KTAP, and the results.json document that judges it.

tools/run uses it for a single run and, from several threads at once, for
a matrix; each run owns its folder, so runs never share a file.
"""

import collections
import dataclasses
import datetime
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ... import ROOT
from .. import cli, hostinfo
from ..base.text import escaped
from ..analysis import expected_data, ktap, results
from ..base import jsonfile, owner
from ..base.exits import CannotRun, CannotWrite
from ..base.status import Status
from . import kvm, media, qemu, serial

BUILD = ROOT / "build"
# The kernel exits right after its totals line; one that halts instead
# (exit=halt) gets this long before QEMU is put down.
GRACE_S = 5
TAIL_LINES = 20
# The longest serial line shown on the terminal; serial.log keeps it whole.
SHOWN_LINE = 2000
# The kernel names itself and its version in a diagnostic after the plan.
_BANNER = re.compile(r"\s*# hvprobe \S+:")


def need(path, why="the build should have made it") -> Path:
    if not path.exists():
        raise CannotRun(f"{shown(path)} is missing ({why})")
    return path


def shown(path) -> str:
    """Paths inside the repository as relative ones, so that the recorded
    QEMU command line works from any checkout."""
    path = Path(path)
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path.resolve())


def iso_entry_words(entry, isodir=BUILD / "isodir") -> list[str]:
    """The kernel command line of the build ISO's entry `entry`, from the
    scenarios.json tools/mkiso wrote beside it; CannotRun when the ISO has
    no such entry."""
    path = need(Path(isodir) / "boot" / "hvprobe" / "scenarios.json")
    doc = json.loads(path.read_text())
    ids = [e["id"] for e in doc["entries"]]
    if entry not in ids:
        raise CannotRun(f"the ISO has no entry {entry!r} (entries: "
                        f"{', '.join(ids)})")
    return doc["entries"][ids.index(entry)]["cmdline"].split()


def boot_media(boot, words, run_dir, iso_entry=None) -> dict[str, str]:
    """Keyword arguments of qemu_argv for this run's boot path."""
    if boot == "kernel":
        return {"kernel": shown(need(BUILD / "hvprobe.elf32"))}
    if iso_entry is not None:
        iso = need(BUILD / "hvprobe.iso")
    elif words:
        iso = media.make_iso(need(BUILD / "isodir"), run_dir, words)
    else:
        iso = need(BUILD / "hvprobe.iso")
    kwargs = {"iso": shown(iso)}
    if boot == "uefi":
        firmware = "install OVMF or set HVPROBE_OVMF_CODE and _VARS"
        need(Path(qemu.OVMF_CODE), firmware)
        vars_file = media.copy_ovmf_vars(need(Path(qemu.OVMF_VARS), firmware),
                                         run_dir)
        kwargs["vars_file"] = shown(vars_file)
    return kwargs


class Run(serial.Console):
    """One QEMU process and what its serial port said."""

    def __init__(self, run_dir, quiet) -> None:
        super().__init__(run_dir)
        self.quiet = quiet
        self.parser = ktap.Parser()
        self.tail: collections.deque[str] = collections.deque(
            maxlen=TAIL_LINES)
        self.lingered = False
        # "hvprobe 0.1: multiboot1, ...", if said
        self.banner: str | None = None

    def boot(self, argv, timeout, cwd=ROOT) -> None:
        try:
            super().boot(argv, timeout, cwd=cwd)
        except serial.CannotStart as err:
            raise CannotRun(str(err)) from None

    def deadline(self, start, timeout) -> float:
        report = self.parser.report
        if report.totals is not None:
            return min(start + timeout, start + report.totals_time + GRACE_S)
        return start + timeout

    def expired(self) -> None:
        self.timed_out = self.parser.report.totals is None
        self.lingered = not self.timed_out

    def line(self, raw, text, stamp) -> bool:
        self.parser.feed(raw, stamp)
        if self.banner is None and _BANNER.match(text):
            self.banner = text.strip()[2:]
        if text:
            self.tail.append(text)
            if not self.quiet:
                shown_text = text if len(text) <= SHOWN_LINE else \
                    f"{text[:SHOWN_LINE]} [... {len(text) - SHOWN_LINE} more]"
                try:
                    print(escaped(shown_text), flush=True)
                except BrokenPipeError:
                    cli.reader_gone()
                    self.quiet = True
        return False

    def crash_reason(self, timeout) -> str | None:
        report = self.parser.finish()
        if self.flooded:
            return (f"stopped: the guest printed more than "
                    f"{serial.MAX_OUTPUT >> 20} MiB")
        if not report.crashed:
            return None
        if report.reboot_line is not None:
            return report.crash_reason
        said = "before any KTAP output" if not self.parser.started \
            else "before the totals line"
        if self.timed_out:
            return f"timed out after {timeout:g} s {said}"
        return f"QEMU exited with status {self.exit_status} {said}"


def rounded(seconds) -> float | None:
    return None if seconds is None else round(seconds, 6)


def host_block(accel, kvm_usable, probe=True) -> dict[str, Any]:
    """The host block of results.json (hostinfo.host()), with this host's
    KVM as kvm.state() finds it, probed only where the run's accelerator
    was left to auto (probe)."""
    return hostinfo.host(accel, kvm_usable,
                         kvm.state(ROOT, hostinfo.qemu_version(), probe))


def kvm_ok_for(accel, boot="kernel", cpu=None) -> bool:
    """Whether KVM counts as available for a run asking for accel
    (kvm.Availability.ok_for()): tcg probes nothing."""
    return kvm.Availability(ROOT, hostinfo.qemu_version()).ok_for(
        accel, boot, cpu)


@dataclass
class Outcome:
    doc: dict[str, Any]
    lines: list[str]    # the summary tools/run prints
    ok: bool            # passed, or failed as expect_fail wanted


def run(machine, words, run_dir, timeout, scenario=None, quiet=True,
        expect_status=None, expect_fail=None, kvm_ok=None, expect_lines=(),
        iso_entry=None, expect_data=None) -> Outcome:
    """Boot machine once with the kernel command line words, in run_dir;
    write run_dir/results.json and return the Outcome. iso_entry boots
    that entry of the build's ISO instead (words are then its own), picked
    by a disk as a Hyper-V user picks one. expect_data: {figure path:
    value} the run's DATA must hold (analysis.expected_data). Raises
    CannotRun (or media.MediaError, or qemu.ConfigError) when no guest
    could be started."""
    machine, words = resolved(machine, words, run_dir, iso_entry)
    if kvm_ok is None:
        kvm_ok = kvm_ok_for(machine.accel, machine.boot, machine.cpu)
    accel, _ = qemu.resolve_accel(machine.accel, kvm_ok)
    host = host_block(accel, kvm_ok, probe=machine.accel == "auto")
    words, not_runnable, notes = kvm_fitted(accel, host, machine, words)
    cmdline = " ".join(words)
    started = datetime.datetime.now(datetime.timezone.utc)
    argv, accel = qemu.qemu_argv(machine, kvm_ok, cmdline=cmdline,
                                 **boot_media(machine.boot, words, run_dir,
                                              iso_entry))
    guest = Run(run_dir, quiet)
    guest.boot(argv, timeout)
    crash = guest.crash_reason(timeout)
    doc = {
        "schema": results.SCHEMA, "source": "qemu", "run": run_dir.name,
        "started_at": started.isoformat(timespec="seconds"),
        "scenario": scenario if scenario is not None
        else adhoc_scenario(machine, cmdline, timeout),
        "boot": machine.boot, "iso_entry": iso_entry,
        "cmdline": cmdline, "qemu": argv, "accel": accel,
        "host": host, "not_runnable": not_runnable, "host_notes": notes,
        **guest_block(guest, timeout, crash),
        "expect_fail": expect_fail, "expected": None,
    }
    doc["host_checks"] = host_checks(doc, guest, machine, expect_lines,
                                     expect_status, expect_data)
    doc["verdict"] = results.verdict(doc)
    ok, verdict, lines = judged(doc, guest, crash, expect_fail)
    keep(run_dir, doc, ok)
    lines.append(f"{verdict}  {shown(run_dir)}")
    return Outcome(doc, lines, ok)


def resolved(machine, words, run_dir, iso_entry):
    """(machine, words) with the ISO entry's disk and words, and what
    lpj=host and --cpu host-model stand for on this host."""
    entry_words = iso_entry_words(iso_entry) if iso_entry is not None \
        else None
    if entry_words is not None:
        words = entry_words
    try:
        words = hostinfo.resolve_host_lpj(words)
        machine = dataclasses.replace(
            machine, cpu=hostinfo.resolve_host_cpu(machine.cpu))
    except hostinfo.HostUnknown as err:
        raise CannotRun(str(err)) from None
    if entry_words is not None:
        # The ISO's lpj=host is filled in at boot by the disk (tools/mkiso):
        # this host's, the lpj the run's words now hold.
        lpj = next((w.partition("=")[2] for w in words
                    if w.startswith("lpj=")), None) \
            if f"lpj={hostinfo.HOST_LPJ}" in entry_words else None
        choice = media.choice_disk(run_dir, iso_entry, lpj)
        machine = dataclasses.replace(machine, extra=[
            *machine.extra, "-drive",
            f"file={shown(choice)},format=raw,if=ide,index=0"])
    return machine, words


def kvm_fitted(accel, host, machine, words):
    """(words, not_runnable, notes): under KVM, the words less what this
    host's KVM cannot run, and its notes; CannotRun for a boot path it
    cannot boot at all."""
    if accel != "kvm":
        return words, [], {}
    flavour = host["kvm"]
    limit = kvm.boot_limit(flavour["module"], machine.boot, machine.cpu)
    if limit:
        raise CannotRun(f"--boot {machine.boot} --cpu {machine.cpu or qemu.KVM_CPU} "
                        f"under KVM ({flavour['module']}): {limit}; use "
                        "--accel tcg")
    words, not_runnable = kvm.leave_out(words, flavour["module"])
    return words, not_runnable, kvm.host_notes(flavour["module"],
                                               flavour["enable_pmu"])


def guest_block(guest, timeout, crash) -> dict[str, Any]:
    """What the guest's boot gives results.json: its version, exit
    status, timing, crash, totals, tests and problems."""
    report = guest.parser.report
    problems = list(report.problems)
    if guest.lingered:
        problems.append(f"QEMU still ran {GRACE_S} s after the totals "
                        "line and was killed")
    return {
        "hvprobe": {"version": hostinfo.hvprobe_version(),
                    "banner": guest.banner},
        "exit_status": guest.exit_status,
        "timing": {"first_ktap_s": rounded(report.first_ktap_time),
                   "totals_s": rounded(report.totals_time),
                   "wall_s": rounded(guest.wall),
                   "timeout_s": timeout},
        "verdict": None, "crash": crash, "totals": report.totals,
        "tests": [t.to_json() for t in report.tests],
        "host_checks": [], "problems": problems,
    }


def host_checks(doc, guest, machine, expect_lines, expect_status,
                expect_data=None):
    """The host's checks of a run: KTAP's shape, the figures the command
    line and machine fix, the lines, DATA values and exit status asked
    for."""
    report, cmdline = guest.parser.report, doc["cmdline"]
    checks = results.ktap_checks(report) + results.host_checks(
        doc["tests"], cmdline, machine.mem_mib * 1024, machine.boot)
    checks += results.smp_checks(
        doc["tests"], cmdline, machine.smp, machine.numa)
    if expect_lines:
        log = (guest.run_dir / "serial.log").read_text(errors="replace")
        checks += results.line_checks(log, expect_lines)
    if expect_data:
        checks += expected_data.checks(doc, expect_data)
    if report.totals is not None:
        checks += results.exit_check(
            guest.exit_status, results.ktap_verdict(doc["tests"]),
            expect_status)
    return checks


def judged(doc, guest, crash, expect_fail):
    """(ok, the verdict's word, the summary lines) of a run, an expected
    failure's match included (doc["expected"] is set)."""
    ok = doc["verdict"] == Status.PASS
    verdict = doc["verdict"].upper()
    lines = results.summary(doc, guest.tail if crash else ())
    if expect_fail is not None:
        matched = results.expect_fail_match(guest.parser.report, expect_fail)
        # What the run was also asked for (its exit status, its lines)
        # holds for an expected failure too.
        asked = [c for c in doc["host_checks"]
                 if c["name"] in ("exit_status", "expect_line",
                                  "expect_data")]
        ok = doc["expected"] = bool(matched and not crash and
                                    all(c["status"] == Status.PASS
                                        for c in asked))
        lines.append(f"expected failure: {matched}" if ok else
                     f"UNEXPECTED: wanted a complete run with a not-ok "
                     f"line matching {expect_fail!r}")
        verdict += " (as expected)" if ok else " (not as expected)"
    stderr = (guest.run_dir / "qemu.stderr").read_text(errors="replace").strip()
    lines += [f"qemu: {line}" for line in stderr.splitlines()[-TAIL_LINES:]]
    return ok, verdict, lines


def keep(run_dir, doc, ok) -> None:
    """Write results.json; a passing run's ISO goes."""
    try:
        jsonfile.write(run_dir / "results.json", doc)
    except OSError as err:
        raise CannotWrite.of(f"{shown(run_dir)}/results.json", err) from None
    owner.hand_over(run_dir, recursive=True)
    if ok:
        # A 5 MB ISO per passing run adds up over a matrix; one that
        # failed keeps its own, to boot again by hand.
        (run_dir / "hvprobe.iso").unlink(missing_ok=True)


def adhoc_scenario(machine, cmdline, timeout) -> dict[str, Any]:
    """The scenario block of a run made from command-line options: no
    name, the machine it asked for."""
    return {"name": None, "scenario": None, "variant": None,
            "description": "", "source": None, "matrix": None,
            "repeat": 1, "repeats": 1,
            "machine": {"boot": machine.boot, "vcpus": machine.smp,
                        "numa": machine.numa, "mem_mib": machine.mem_mib,
                        "cpu": machine.cpu, "accel": machine.accel,
                        "machine": machine.machine,
                        "qemu_args": list(machine.extra)},
            "cmdline": cmdline, "timeout_s": timeout}
