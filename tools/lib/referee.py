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
TIMEOUT_S = 300
INIT = f"""#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
echo "{BEGIN}"
grep -E '^(processor|physical id|bogomips)' /proc/cpuinfo
dmesg | grep -E 'Calibrating delay|BogoMIPS|tsc:|TSC|smpboot|smp: Brought up'
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
    bsp_source: str | None = None
    calibrations: int | None = None   # APs that measured, not copied
    tsc_unstable: str | None = None   # Linux's reason, if it said one
    lines: list = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"cpus": len(self.cpus), "bsp_lpj_source": self.bsp_source,
                "calibrations": self.calibrations,
                "tsc_unstable": self.tsc_unstable,
                "bogomips": [b for _, b in self.cpus]}


def parse(text) -> Verdict | None:
    """A Verdict from the referee's output between its markers; None
    when the end marker never came."""
    if END not in text:
        return None
    body = text.split(BEGIN, 1)[-1].split(END, 1)[0]
    v = Verdict(lines=[x.strip() for x in body.splitlines() if x.strip()])
    cpus = []
    for line in v.lines:
        key, _, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if key == "processor":
            cpus.append(["0", None])
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
    v.cpus = [tuple(c) for c in cpus]
    v.calibrations = calibrated_aps(v.cpus)
    return v


def calibrated_aps(cpus) -> int:
    """APs whose lpj equals no earlier CPU's: calibrate_delay_is_known()
    gave them no copy (of a CPU of the same package, or since Linux 6.5
    of the boot CPU across packages), so they measured. A measured value
    equal to another to the last digit of bogomips is not seen in
    practice; a preset makes every value equal, and none counts."""
    return sum(1 for i, (_, bogomips) in enumerate(cpus[1:], 1)
               if all(b != bogomips for _, b in cpus[:i]))


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


def stall(run_dir) -> list[str]:
    """What a boot that never finished left in STALL, made safe to
    print."""
    try:
        text = (Path(run_dir) / STALL).read_text(errors="replace")
    except OSError:
        return []
    return [escaped(x.strip()) for x in text.splitlines() if x.strip()]


def run(vmlinuz, machine, run_dir, kvm_ok=False, cmdline="",
        timeout=TIMEOUT_S) -> Verdict | None:
    """Boot Linux (vmlinuz) on machine (a qemu.Machine, as hvprobe gets
    it) in run_dir; its Verdict, or None when it never finished."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    initrd = initramfs(run_dir / "initramfs.gz")
    # earlyprintk and every log level: a boot that stalls leaves its
    # console from the first line, never an empty serial.log.
    words = f"console=ttyS0 earlyprintk=serial,ttyS0,115200 panic=-1 " \
        f"loglevel=7 {cmdline}".strip()
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
    return parse((run_dir / serial.LOG).read_text(errors="replace"))
