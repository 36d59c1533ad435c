# SPDX-License-Identifier: MIT
"""Debian's own Linux kernel as the reference for hvprobe's SMP bring-up:
unpack it into the build folder (never installed: /boot stays as it is),
boot it in QEMU with host timestamps on every serial
line (the host package's serial console, as tools/run boots hvprobe), and
read its bring-up markers and loops-per-jiffy from the log. Its own clock
is no use here: under TCG Linux's dmesg times undercount up to 5x.

No root filesystem and no initrd are given: Linux brings up its APs in
smp_init(), well before it looks for a root, so the run is over (and QEMU
is killed) as soon as "smp: Brought up" arrives. Left alone it would
panic for want of a root and, with panic=-1 and -no-reboot, QEMU would exit.
"""

import re
import shutil
import subprocess
from pathlib import Path

from tools import ROOT
from tools.lib.base import aptdeb, debversion, owner
from tools.lib.launch import guest, qemu, serial

PACKAGE = "linux-image-cloud-amd64"
# The first reference is Debian 12's own kernel, 6.1; the second the same
# package's 6.12 series, which the machine's apt sources offer in a
# backports suite. Both are downloaded (tools/lib/base/aptdeb.py:
# the file apt's index names, its SHA256 checked) and unpacked into the build
# folder with dpkg-deb -x, never installed: /boot stays as it is.
SERIES = "6.1"
BACKPORT_SERIES = "6.12"
BACKPORT_DIR = ROOT / "build" / \
    "linux-ref"
# A kernel that prints nothing on its serial port this long after QEMU
# started will not boot here (under this machine's KVM, Debian's kernels
# print nothing at all: it needs a PVM guest kernel); it is reported and
# not booted again, instead of being waited on for the whole timeout.
SILENCE_S = 20

# announce_cpu() prints this just before it sends the first AP its INIT,
# the same moment hvprobe's "# smp: booting N APs" marks.
START = re.compile(r"x86: Booting SMP configuration")
# smp_init() prints this once every AP is online.
END = re.compile(r"smp: Brought up (\d+) nodes?, (\d+) CPUs?")
# With one CPU there is no AP to announce, so the start falls back to the
# line smp_init() prints before it starts any; the two then arrive
# together and the bring-up time is about zero, as it should be.
START_ONE_CPU = re.compile(r"smp: Bringing up secondary CPUs")
# The BSP's calibrate_delay() line; with a TSC it is "skipped, value
# calculated using timer frequency" and lpj = tsc_khz * 1000 / HZ.
LPJ = re.compile(r"Calibrating delay.*BogoMIPS \(lpj=(\d{1,20})\)")
# Lines that end a run early with no hope of the end marker.
FATAL = re.compile(r"Kernel panic|BUG: |Oops: ")


# Linux sets X86_FEATURE_CONSTANT_TSC on Intel family 6 from model 0x0e
# (Core) on, on Intel family 15 from model 3 on (early_init_intel(),
# intel.c v6.1 to v6.12), and on any CPU that reports an invariant TSC
# (CPUID 0x80000007 EDX[8], QEMU's "invtsc"). QEMU's named Intel models
# from Conroe on are all family 6 with a later model; its AMD models have
# no invtsc.
_CONSTANT_TSC_PREFIXES = (
    "Conroe", "Penryn", "Nehalem", "Westmere", "SandyBridge", "IvyBridge",
    "Haswell", "Broadwell", "Skylake", "Cascadelake", "Cooperlake",
    "Icelake", "SapphireRapids", "GraniteRapids", "SierraForest",
    "ClearwaterForest", "Snowridge", "Denverton", "KnightsMill")

# QEMU's generic models: (vendor, family, model) as their definitions
# give them. Under KVM QEMU gives these the host's vendor unless vendor=
# names one, so qemu64 on an Intel host is GenuineIntel family 15, which
# Linux calls constant; pinned() names the model's own vendor, so that
# TCG and KVM boot the same CPU.
_GENERIC = {"qemu64": ("AuthenticAMD", 15, 0x6b),
            "kvm64": ("GenuineIntel", 15, 6),
            "qemu32": ("GenuineIntel", 6, 6),
            "kvm32": ("GenuineIntel", 15, 6)}


def pinned(model):
    """model with its vendor named where QEMU would otherwise take the
    host's (a generic model without vendor=); other models, and none, as
    they are."""
    if not model:
        return model
    name, *opts = model.split(",")
    if name not in _GENERIC or any(o.startswith("vendor=") for o in opts):
        return model
    return ",".join([name, f"vendor={_GENERIC[name][0]}", *opts])


def constant_tsc(model):
    """Whether Linux sees a constant TSC on QEMU CPU model `model`
    (a name, optionally followed by ,+feature or ,feature=on options),
    its vendor pinned()."""
    name, *opts = pinned(model).split(",")
    if "+invtsc" in opts or "invtsc=on" in opts:
        return True
    if name in _GENERIC:
        vendor = next(o[len("vendor="):] for o in opts
                      if o.startswith("vendor="))
        family, cpu_model = _GENERIC[name][1:]
        return vendor == "GenuineIntel" and (
            (family == 15 and cpu_model >= 3) or
            (family == 6 and cpu_model >= 0x0e))
    return name.startswith(_CONSTANT_TSC_PREFIXES)


# The Linux runs per machine: 6.1 without lpj= and with it, and 6.12
# (parallel bring-up, calibration skipped when the TSC is synchronized).
VARIANTS = {"calibrate": "6.1", "lpj": "6.1 lpj=", "6.12": "6.12"}
# The variants the backports kernel boots.
BACKPORT_VARIANTS = ("6.12",)


def variant_for(lpj_mode, bringup, model):
    """Which Linux run is the same experiment as an hvprobe row (its lpj
    mode: none, node, preset, linux61 or linux65 (lpj_policy=linux-6.1,
    linux-6.5), and bring-up
    order): "lpj" (6.1 with lpj=), "calibrate" (6.1 without), "6.12", or
    None.

    Linux 6.1 starts its APs one at a time and copies lpj from a CPU of
    the same package when the TSC is constant: hvprobe's serial rows
    under lpj_policy=linux-6.1 (and, with lpj=, its serial preset rows).
    Linux 6.12 starts them in parallel and copies the boot CPU's lpj when
    the TSC is constant and synchronized: the linux-6.5 rows in Linux
    6.5's bring-up shape (bringup=linux-6.5), never hvprobe's own
    concurrent mode.
    The model decides what either Linux does (constant_tsc())."""
    if bringup == "serial" and lpj_mode == "preset":
        return "lpj"
    if bringup == "serial" and lpj_mode == "linux61":
        return "calibrate"
    if bringup == "linux65" and lpj_mode == "linux65":
        return "6.12"
    return None


class LinuxError(Exception):
    """The reference kernel is missing and cannot be unpacked here."""


def _run(argv):
    try:
        done = subprocess.run(argv, capture_output=True, text=True,
                              timeout=600, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise LinuxError(f"{' '.join(argv)}: {err}") from None
    return done


def backport_versions(madison, series=BACKPORT_SERIES):
    """The versions of PACKAGE in series that `apt-cache madison PACKAGE`
    lists, newest first by Debian's order (madison lists by source)."""
    out = []
    for line in madison.splitlines():
        fields = [f.strip() for f in line.split("|")]
        if len(fields) >= 2 and fields[0] == PACKAGE and \
                fields[1].startswith(series + "."):
            out.append(fields[1])
    return sorted(out, key=debversion.key, reverse=True)


def image_package(show):
    """The versioned image package (and its version) that the
    meta-package's `apt-cache show` record depends on, or (None, None)."""
    m = re.search(r"^Depends:.*?\b(linux-image-[\w.+~-]+-cloud-amd64)"
                  r"\s*\(= ([^)]+)\)", show, re.MULTILINE)
    return (m.group(1), m.group(2)) if m else (None, None)


def find_series(series, directory=BACKPORT_DIR):
    """The newest unpacked image of series in directory, or None."""
    found = {p.name: p for p in Path(directory).glob(
        f"boot/vmlinuz-{series}.*-cloud-amd64")}
    newest = debversion.newest(found)
    return None if newest is None else found[newest]


def ensure_series(series, directory=BACKPORT_DIR, log=print):
    """The image of series, unpacked from the package the machine's apt
    sources offer (apt-get download, SHA256 checked, dpkg-deb -x into
    directory; nothing installed); LinuxError saying why when no source
    offers it."""
    found = find_series(series, directory)
    if found:
        return found
    if not aptdeb.available():
        raise LinuxError("no apt-get or dpkg-deb on this machine to unpack "
                         f"Debian's {PACKAGE} {series}")
    madison = _run(["apt-cache", "madison", PACKAGE]).stdout
    versions = backport_versions(madison, series)
    if not versions:
        raise LinuxError(f"no apt source offers {PACKAGE} {series}"
                         " (apt-get update may help; 6.12 comes from a "
                         "backports suite)")
    show = _run(["apt-cache", "show", f"{PACKAGE}={versions[0]}"]).stdout
    package, version = image_package(show)
    if package is None:
        raise LinuxError(f"{PACKAGE} {versions[0]} names no image package")
    directory = Path(directory)
    log(f"downloading {package} {version} into {directory} (unpacked, "
        "not installed)")
    work = aptdeb.private_dir(directory)
    try:
        deb = aptdeb.download(f"{package}={version}", work)
        done = _run(["dpkg-deb", "-x", str(deb), str(directory)])
    except aptdeb.AptError as err:
        raise LinuxError(str(err)) from None
    finally:
        shutil.rmtree(work, ignore_errors=True)
    owner.hand_over(directory, recursive=True)
    found = find_series(series, directory)
    if done.returncode or found is None:
        raise LinuxError(f"dpkg-deb -x {deb.name} gave no vmlinuz: "
                         f"{done.stderr.strip()[-200:]}")
    return found


def ensure_vmlinuz(directory=BACKPORT_DIR, log=print):
    """The 6.1 reference image (ensure_series())."""
    return ensure_series(SERIES, directory, log)


def ensure_backport(directory=BACKPORT_DIR, log=print):
    """The 6.12 reference image (ensure_series())."""
    return ensure_series(BACKPORT_SERIES, directory, log)


def cmdline(lpj=None, extra=()):
    """The reference kernel's command line: serial console, and panic=-1
    so that the panic for want of a root ends QEMU at once (-no-reboot)
    should the run get that far; then lpj= and the extra words."""
    words = ["console=ttyS0", "panic=-1"]
    if lpj is not None:
        words.append(f"lpj={lpj}")
    return " ".join([*words, *extra])


class Boot(serial.Console):
    """One Linux boot in its run folder: serial.log, serial.times (host
    seconds since QEMU started, per line) and qemu.stderr, as tools/run
    writes them for hvprobe. The run stops at the first line matching
    `until` (QEMU is killed then: nothing after it is measured), at a
    fatal line, at QEMU's exit, after the timeout, or after `silence`
    seconds with no serial output at all (silent is then True)."""

    def __init__(self, run_dir, until=END, fatal=FATAL, silence=SILENCE_S):
        super().__init__(run_dir)
        self.until, self.fatal, self.silence = until, fatal, silence
        self.said_something = False
        self.silent = False

    def line(self, raw, text, stamp):
        self.said_something = True
        return bool(self.until.search(text) or self.fatal.search(text))

    def deadline(self, start, timeout):
        if self.said_something or self.silence is None:
            return start + timeout
        return start + min(timeout, self.silence)

    def expired(self):
        super().expired()
        self.silent = not self.said_something

    def lines(self):
        """(seconds, text) of every line read, from serial.times."""
        return serial.read_times((self.run_dir / serial.TIMES).read_text())


def boot(argv, run_dir, timeout, silence=SILENCE_S):
    """Boot QEMU (argv) with the Linux reference kernel in run_dir; the
    finished Boot. serial.CannotStart when QEMU does not start."""
    run = Boot(run_dir, silence=silence)
    run.boot(argv, timeout)
    return run


def qemu_argv(machine, mem_mib, accel, vmlinuz, lpj=None, initrd=None,
              extra=()):
    """QEMU's command line for Linux on machine (cpu, vcpus, nodes): the
    very machine tools/run gives hvprobe, from the same module; initrd,
    when given, is its initramfs; extra, more kernel words."""
    m = qemu.Machine(boot="kernel", smp=machine.vcpus, numa=machine.nodes,
                     mem_mib=mem_mib, accel=accel,
                     cpu=pinned(machine.cpu),
                     extra=[] if initrd is None else ["-initrd", str(initrd)])
    kvm_ok = guest.kvm_ok_for(accel)
    return qemu.qemu_argv(m, kvm_ok, kernel=str(vmlinuz),
                          cmdline=cmdline(lpj, extra))[0]


def parse(lines):
    """Linux's SMP bring-up from (seconds, text) lines, as a dict: start_s
    and end_s (None when the marker never came), which start marker,
    cpus and nodes brought up, the BSP's lpj, the first fatal line, and
    ms between the markers (None without both)."""
    b = dict.fromkeys(("start_s", "end_s", "start_marker", "cpus", "nodes",
                       "lpj", "fatal", "ms"))
    fallback = None
    for stamp, text in lines:
        if b["lpj"] is None and (m := LPJ.search(text)):
            b["lpj"] = int(m.group(1))
        if fallback is None and START_ONE_CPU.search(text):
            fallback = stamp
        if b["start_s"] is None and START.search(text):
            b["start_s"] = stamp
            b["start_marker"] = "x86: Booting SMP configuration"
        if b["end_s"] is None and (m := END.search(text)):
            b["end_s"] = stamp
            b["nodes"], b["cpus"] = int(m.group(1)), int(m.group(2))
        if b["fatal"] is None and FATAL.search(text):
            b["fatal"] = text.strip()
    if b["start_s"] is None and b["end_s"] is not None and b["cpus"] == 1 \
            and fallback is not None:
        b["start_s"] = fallback
        b["start_marker"] = "smp: Bringing up secondary CPUs"
    if b["start_s"] is not None and b["end_s"] is not None:
        b["ms"] = (b["end_s"] - b["start_s"]) * 1000.0
    return b
