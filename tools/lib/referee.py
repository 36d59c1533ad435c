# SPDX-License-Identifier: MIT
"""Debian's Linux as a referee of hvprobe's lpj rules: the same machine
boots Linux with a busybox initramfs that prints what each CPU's lpj
became (/proc/cpuinfo's bogomips: a copied lpj equals its source
exactly) and what the kernel said about calibration and the TSC, then
powers off. Its count of CPUs that calibrated, and where the boot CPU's
lpj came from, are what hvprobe's policy of the same name must give.

How Linux decides, per CPU (init/calibrate.c calibrate_delay()): lpj=
on the command line (preset_lpj) for every CPU; else on the boot CPU
lpj_fine, the TSC's rate per jiffy; else calibrate_delay_is_known()
(arch/x86/kernel/tsc.c), which copies the lpj of another online CPU of
the same package when the TSC is constant and not marked unstable;
else the delay loop is measured. Only the first call prints.

Beside those two counts it judges three things more, each against
hvprobe's DATA (compare()): which CPUs share an lpj (Linux's classes of
equal bogomips, hvprobe's lpj_from), why the TSC was marked unstable
(mark_tsc_unstable()'s reason), and how many TSC-sync checks ran (the
pr_debug line check_tsc_sync_source() prints per passed check, shown
with dyndbg="file tsc_sync.c +p", and the pr_warn of a failed one). A
comparison whose input a side did not print is not compared, with the
reason: never a pass.
"""

import dataclasses
import gzip
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .base.text import escaped
from .hostkernels import nested
from .launch import qemu, qmp, serial

BEGIN, END = "hvprobe-referee: begin", "hvprobe-referee: end"
# The init's prefix for dynamic debug's control lines of tsc_sync.c: they
# say whether dyndbg took, so that no check line means none ran.
DYNDBG = "dyndbg: "
# check_tsc_sync_source()'s pr_debug is printed only when dynamic debug
# turns it on (Documentation/admin-guide/dynamic-debug-howto.rst: a
# built-in file's query as a boot parameter).
CMDLINE = 'dyndbg="file tsc_sync.c +p"'
TIMEOUT_S = 300
INIT = f"""#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
echo "{BEGIN}"
grep -E '^(processor|physical id|bogomips)' /proc/cpuinfo
dmesg | grep -E 'Calibrating delay|BogoMIPS|tsc:|TSC|smpboot|smp: Brought up'
grep tsc_sync.c /proc/dynamic_debug/control 2>/dev/null | sed 's/^/{DYNDBG}/'
echo "{END}"
poweroff -f
"""
# The boot CPU's calibrate_delay() line says where its lpj came from.
_BSP_SOURCE = (
    (re.compile(r"Calibrating delay loop \(skipped\) preset value"), "preset"),
    (re.compile(r"Calibrating delay loop \(skipped\), value calculated "
                r"using timer frequency"), "lpj_fine"),
    (re.compile(r"Calibrating delay (loop|using timer)"), "calibrate"),
)


def initramfs(out) -> Path:
    """The referee's initramfs: busybox and the init above."""
    if not nested.BUSYBOX.exists():
        raise nested.NestedError(f"{nested.BUSYBOX} is missing (Debian's "
                                 "busybox-static)")
    files = {"bin": (nested.DIR, b""), "proc": (nested.DIR, b""),
             "dev": (nested.DIR, b""),
             "bin/busybox": (nested.EXE, nested.BUSYBOX.read_bytes()),
             "init": (nested.EXE, INIT.encode())}
    Path(out).write_bytes(gzip.compress(nested.cpio(files), compresslevel=1))
    return Path(out)


@dataclass
class Verdict:
    """What Linux did with lpj on one boot."""
    cpus: list = field(default_factory=list)    # (package, bogomips) per CPU
    ids: list = field(default_factory=list)     # each one's processor number
    bsp_source: str | None = None
    calibrations: int | None = None   # APs that measured, not copied
    tsc_unstable: str | None = None   # Linux's reason, if it said one
    # (APs checked, runs) of the TSC-sync check; None without dyndbg.
    sync: tuple[int, int] | None = None
    lines: list = field(default_factory=list)
    resets: int = 0                   # boots before this one that reset

    def to_json(self) -> dict[str, Any]:
        return {"cpus": len(self.cpus), "bsp_lpj_source": self.bsp_source,
                "calibrations": self.calibrations,
                "tsc_unstable": self.tsc_unstable,
                "bogomips": [b for _, b in self.cpus],
                "classes": linux_classes(self),
                "sync_checks": list(self.sync) if self.sync else None,
                "resets": self.resets}


# check_tsc_sync_source(): "TSC synchronization [CPU#%d -> CPU#%d]"
# ends ": passed" (pr_debug) or ":" (pr_warn, the check failed); each
# retry after a TSC_ADJUST step prints "TSC ADJUST compensate: CPU%u"
# first (tsc_sync.c v6.1 and v6.12).
_SYNC = re.compile(r"TSC synchronization \[CPU#\d+ -> CPU#(\d+)\]:")
_RETRY = re.compile(r"TSC ADJUST compensate: CPU(\d+) ")
# ddebug_proc_show()'s line for that pr_debug: "=p" (or more flags with
# p) when it prints.
_CONTROL = re.compile(r"tsc_sync\.c:\d+ \S+ =(\S+) \"TSC synchronization")


def parse(text) -> Verdict | None:
    """A Verdict from the referee's output between its markers; None
    when the end marker never came."""
    if END not in text:
        return None
    body = text.split(BEGIN, 1)[-1].split(END, 1)[0]
    v = Verdict(lines=[x.strip() for x in body.splitlines() if x.strip()])
    cpus: list[list[Any]] = []
    ids: list[int] = []
    checked: set[str] = set()
    runs, dyndbg = 0, False
    for line in v.lines:
        if line.startswith(DYNDBG):
            m = _CONTROL.search(line)
            dyndbg |= bool(m and "p" in m.group(1))
            continue
        key, _, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if key == "processor":
            cpus.append(["0", None])
            ids.append(int(value) if value.isdigit() else len(ids))
        elif key == "physical id" and cpus:
            cpus[-1][0] = value
        elif key == "bogomips" and cpus:
            cpus[-1][1] = value
        for pattern, source in _BSP_SOURCE:
            if v.bsp_source is None and pattern.search(line):
                v.bsp_source = source
        m = re.search(r"Marking TSC unstable due to (.*)", line)
        if m and v.tsc_unstable is None:
            v.tsc_unstable = m.group(1).strip()
        if m := _SYNC.search(line):
            checked.add(m.group(1))
            runs += 1
        elif _RETRY.search(line):
            runs += 1
    v.cpus, v.ids = [tuple(c) for c in cpus], ids
    v.calibrations = calibrated_aps(v.cpus)
    v.sync = (len(checked), runs) if dyndbg else None
    return v


def calibrated_aps(cpus) -> int:
    """APs whose lpj equals no earlier CPU's: calibrate_delay_is_known()
    gave them no copy (of a CPU of the same package, or since Linux 6.5
    of the boot CPU across packages), so they measured. A measured value
    equal to another to the last digit of bogomips is not seen in
    practice; a preset makes every value equal, and none counts."""
    return sum(1 for i, (_, bogomips) in enumerate(cpus[1:], 1)
               if all(b != bogomips for _, b in cpus[:i]))


def linux_classes(v) -> list[list[int]] | None:
    """Linux's CPUs grouped by equal bogomips (a copy, or one preset),
    by processor number; None when /proc/cpuinfo gave no bogomips."""
    if not v.cpus or any(b is None for _, b in v.cpus):
        return None
    ids = v.ids if len(v.ids) == len(v.cpus) else list(range(len(v.cpus)))
    groups: dict[str, list[int]] = {}
    for cpu, (_, bogomips) in zip(ids, v.cpus):
        groups.setdefault(bogomips, []).append(cpu)
    return sorted(groups.values())


# hvprobe's boot CPU lpj sources, in Linux's words (calibrate_delay()):
# every preset source gives all CPUs one value.
SOURCES = {"lpj_fine": "lpj_fine", "calibrate": "calibrate",
           "cmdline": "preset", "kvmclock": "preset", "hyperv": "preset",
           "kvm": "preset", "cpuid": "lpj_fine"}
# hvprobe's lpj DATA keys whose text begins with Linux's reason when its
# platform's code or tsc_init() marked the TSC unstable, in the order
# Linux runs them (init_hypervisor_platform() before tsc_init()).
_UNSTABLE_KEYS = (("hyperv_tsc", "running on Hyper-V"),
                  ("linux_tsc_khz", "could not calculate TSC khz"))
UNSTATED = "unstable, no reason stated"
UNPRINTED = "no lpj DATA"


def hvprobe_classes(bsp_source, aps) -> list[list[int]] | None:
    """hvprobe's CPUs grouped by where their lpj came from: an AP with
    lpj_from joins its source's group, the preset CPUs form one, any
    other is its own; None when an online AP did not say its source."""
    online = [a for a in aps if a.get("online", True)]
    if any(not isinstance(a.get("lpj_source"), str) or
           not isinstance(a.get("cpu"), int) for a in online):
        return None
    parent = {0: 0, **{a["cpu"]: a["cpu"] for a in online}}

    def root(cpu):
        while parent[cpu] != cpu:
            cpu = parent[cpu]
        return cpu
    preset = [0] if SOURCES.get(bsp_source) == "preset" else []
    for a in online:
        if a.get("lpj_from") in parent:
            parent[root(a["cpu"])] = root(a["lpj_from"])
        elif SOURCES.get(a["lpj_source"]) == "preset":
            preset.append(a["cpu"])
    for cpu in preset[1:]:
        parent[root(cpu)] = root(preset[0])
    groups: dict[int, list[int]] = {}
    for cpu in sorted(parent):
        groups.setdefault(root(cpu), []).append(cpu)
    return sorted(groups.values())


def hvprobe_unstable(smp, lpj) -> str | None:
    """Why hvprobe's TSC is unstable, in mark_tsc_unstable()'s words;
    None when it stayed synchronized, UNSTATED when its DATA says no
    reason Linux has."""
    if lpj.get("tsc_synchronized") is not False:
        return None
    for key, reason in _UNSTABLE_KEYS:
        if str(lpj.get(key, "")).startswith(reason):
            return reason
    if smp.get("tsc_warps"):
        return "check_tsc_sync_source failed"
    return UNSTATED


def hvprobe_facts(smp, aps, lpj) -> dict[str, Any]:
    """What hvprobe's smp summary, AP records and lpj DATA say of each
    comparison, in Linux's words. APs only count as calibrations: both
    kernels' boot CPUs take lpj_fine from a TSC rate that each measured
    against a timer (smp's "calibrations" counts that too)."""
    online = [a for a in aps if a.get("online", True)]
    measured = sum(1 for a in online if a.get("lpj_source") == "calibrate")
    sync = None
    if isinstance(smp.get("tsc_sync_checks"), int):
        sync = [sum(1 for a in online if a.get("tsc_sync_ms")),
                smp["tsc_sync_checks"]]
    return {"calibrations": measured if aps else None,
            "bsp_lpj_source": SOURCES.get(smp.get("lpj_source")),
            "classes": hvprobe_classes(smp.get("lpj_source"), aps)
            if aps else None,
            "tsc_unstable": hvprobe_unstable(smp, lpj) if lpj else UNPRINTED,
            "sync_checks": sync}


AGREE, DISAGREE, NOT_COMPARED = "agree", "disagree", "not compared"
# The comparisons, in the order they print.
COMPARISONS = ("APs that calibrated", "boot CPU's lpj",
               "CPUs that share an lpj", "why the TSC is unstable",
               "TSC-sync checks")
# Linux's reasons hvprobe has nothing to say about: a clocksource
# watchdog it does not run, and unsynchronized_tsc() at tsc_init(),
# which hvprobe folds into its check's rule without printing it.
_UNMODELLED = {
    "clocksource watchdog": "hvprobe runs no clocksource watchdog",
    "TSCs unsynchronized": "hvprobe does not print unsynchronized_tsc()'s "
                           "verdict at tsc_init()",
}


def _shown_classes(classes) -> str:
    return " ".join("{" + ",".join(map(str, c)) + "}" for c in classes)


def _shown_sync(sync) -> str:
    return f"{sync[0]} APs, {sync[1]} runs"


def _row(what, linux, ours, why=None) -> dict[str, Any]:
    if why:
        verdict = NOT_COMPARED
    else:
        verdict = AGREE if linux == ours else DISAGREE
    return {"what": what, "linux": linux, "hvprobe": ours,
            "verdict": verdict, **({"why": why} if why else {})}


def compare(linux, ours) -> list[dict[str, Any]]:
    """Each of COMPARISONS between Linux's Verdict and hvprobe's facts
    (hvprobe_facts()): what, each side's value as text, and the verdict;
    a not-compared row says why."""
    rows = [_row(COMPARISONS[0], str(linux.calibrations),
                 str(ours["calibrations"])),
            _row(COMPARISONS[1], str(linux.bsp_source),
                 str(ours["bsp_lpj_source"]))]
    lc, hc = linux_classes(linux), ours["classes"]
    rows.append(_row(
        COMPARISONS[2], _shown_classes(lc) if lc else "-",
        _shown_classes(hc) if hc else "-",
        None if lc and hc else "Linux printed no bogomips" if not lc
        else "hvprobe's AP records do not say each lpj's source"))
    lu, hu = linux.tsc_unstable, ours["tsc_unstable"]
    why = _UNMODELLED.get(lu) if hu is None else None
    if hu == UNSTATED:
        why = "hvprobe's DATA says the TSC is unstable but not why"
    elif hu == UNPRINTED:
        why = "hvprobe printed no lpj DATA"
    rows.append(_row(COMPARISONS[3], lu or "stable", hu or "stable", why))
    ls, hs = linux.sync, ours["sync_checks"]
    rows.append(_row(
        COMPARISONS[4], _shown_sync(ls) if ls else "-",
        _shown_sync(hs) if hs else "-",
        None if ls and hs else "Linux's dyndbg for tsc_sync.c did not take "
        "(no =p control line), so a check that passed is silent"
        if not ls else "hvprobe's smp DATA has no tsc_sync_checks"))
    return rows


def tally(rows) -> tuple[int, int, int]:
    """(agree, disagree, not compared) of compare()'s rows."""
    agree, disagree, not_compared = (
        sum(1 for r in rows if r["verdict"] == v)
        for v in (AGREE, DISAGREE, NOT_COMPARED))
    return agree, disagree, not_compared


def agrees(rows) -> bool:
    """No row disagrees (a row not compared is no agreement, but no
    disagreement either: it is shown with its reason)."""
    return all(r["verdict"] != DISAGREE for r in rows)


def last_lines(run_dir, n=6) -> list[str]:
    """The last n non-empty lines of a referee boot's console, made safe
    to print: what says why a boot never finished."""
    try:
        text = (Path(run_dir) / serial.LOG).read_text(errors="replace")
    except OSError:
        return []
    lines = [escaped(x.strip()) for x in text.splitlines() if x.strip()]
    return lines[-n:]


STALL = "stall.txt"
# Debian's Linux as an L2 under a TCG-nested L1 resets now and then
# mid-boot (QEMU exits 0 under -no-reboot; under both L1 kernels, with
# and without Hyper-V emulation, anywhere from the ACPI scan to the
# initramfs), which hvprobe's lpj rules cannot explain and the referee
# does not judge: such a boot is booted again, up to BOOTS in all, and
# each reset's console is kept in RESET_LOG.
BOOTS = 4
RESET_LOG = "serial.log.reset-{}"
# Why a boot ended, in words, for one that never reached its end marker.
ENDED = "ended.txt"


class Boot(serial.Console):
    """One referee boot; ends at the end marker. One that never gets
    there leaves, in STALL, what each vCPU was doing when its time ran
    out, read through QMP before QEMU is killed."""

    def __init__(self, run_dir, sock=None) -> None:
        super().__init__(run_dir)
        self.sock = sock

    def line(self, raw, text, stamp) -> bool:
        return END in text

    def expired(self) -> None:
        super().expired()
        if self.sock is not None and self.pid is not None:
            lines = qmp.vcpus(self.sock, self.pid)
            (self.run_dir / STALL).write_text("\n".join(lines) + "\n")


def ending(run_dir) -> str:
    """What ended() wrote for a boot in run_dir, or "" (none written)."""
    try:
        text = (Path(run_dir) / ENDED).read_text(errors="replace")
    except OSError:
        return ""
    return escaped(text.strip())


def stall(run_dir) -> list[str]:
    """What a boot that never finished left in STALL, made safe to
    print."""
    try:
        text = (Path(run_dir) / STALL).read_text(errors="replace")
    except OSError:
        return []
    return [escaped(x.strip()) for x in text.splitlines() if x.strip()]


def reset(boot) -> bool:
    """Whether a boot that never reached its end marker ended because the
    guest reset: QEMU exited by itself, with status 0 (-no-reboot), and
    no signal ended it."""
    return not boot.cut_short and boot.exit_status == 0 and not boot.killed()


def run(vmlinuz, machine, run_dir, kvm_ok=False, cmdline="",
        timeout=TIMEOUT_S) -> Verdict | None:
    """Boot Linux (vmlinuz) on machine (a qemu.Machine, as hvprobe gets
    it) in run_dir; its Verdict, or None when it never finished. A boot
    that reset is booted again, up to BOOTS in all; each one's console
    is kept (RESET_LOG) and the Verdict counts them (resets)."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    resets = 0
    while True:
        boot = _boot(vmlinuz, machine, run_dir, kvm_ok, cmdline, timeout)
        verdict = parse((run_dir / serial.LOG).read_text(errors="replace"))
        if verdict is not None:
            verdict.resets = resets
            return verdict
        if not reset(boot) or resets + 1 >= BOOTS:
            break
        resets += 1
        (run_dir / serial.LOG).rename(run_dir / RESET_LOG.format(resets))
    why = serial.ended(boot, timeout)
    if resets:
        why += f"; each of its {resets + 1} boots reset"
    (run_dir / ENDED).write_text(why + "\n")
    return None


def _boot(vmlinuz, machine, run_dir, kvm_ok, cmdline, timeout) -> Boot:
    """One boot of Linux with the referee's initramfs, in run_dir."""
    initrd = initramfs(run_dir / "initramfs.gz")
    # earlyprintk and every log level: a boot that stalls leaves its
    # console from the first line, never an empty serial.log.
    words = f"console=ttyS0 earlyprintk=serial,ttyS0,115200 panic=-1 " \
        f"loglevel=7 {CMDLINE} {cmdline}".strip()
    # A socket path must fit sockaddr_un's 108 bytes: not under run_dir.
    sock_dir = Path(tempfile.mkdtemp(prefix="hvprobe-referee."))
    sock = sock_dir / "qmp.sock"
    m = dataclasses.replace(machine, extra=[
        *machine.extra, "-initrd", str(initrd),
        "-qmp", f"unix:{sock},server=on,wait=off"])
    argv, _ = qemu.qemu_argv(m, kvm_ok, kernel=str(vmlinuz), cmdline=words)
    boot = Boot(run_dir, sock)
    try:
        boot.boot(argv, timeout)
    finally:
        initrd.unlink(missing_ok=True)
        shutil.rmtree(sock_dir, ignore_errors=True)
    return boot
