# SPDX-License-Identifier: MIT
"""What ran the guest: the host's kernel and CPU, QEMU's version, and
which hvprobe (git describe). Figures from two hosts, or two host kernels,
are only comparable when the results say which was which.

Each answer is looked up once per process: a matrix of runs shares them.
"""

import functools
import json
import os
import platform
import re
import subprocess
from pathlib import Path
from typing import Any

from .. import ROOT


def _cpu_model(cpuinfo="/proc/cpuinfo") -> str | None:
    try:
        with open(cpuinfo, encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


# The QEMU that runs guests: $QEMU (tools/run --qemu sets it, so that the
# commands it starts use the same), else the one on the PATH.
DEFAULT_BINARY = "qemu-system-x86_64"


def qemu_binary() -> str:
    return os.environ.get("QEMU") or DEFAULT_BINARY


def qemu_version(binary=None) -> str | None:
    """QEMU's version string ("10.0.2"), or None when it cannot say; of
    the QEMU that runs guests (qemu_binary()) unless told which."""
    return _qemu_version(binary or qemu_binary())


@functools.lru_cache(maxsize=None)
def _qemu_version(binary) -> str | None:
    try:
        out = subprocess.run([binary, "--version"], capture_output=True,
                             text=True, errors="replace", timeout=30,
                             stdin=subprocess.DEVNULL).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r"version (\d+\.\d+(?:\.\d+)?)", out)
    return match.group(1) if match else None


def qemu_release(binary=None) -> tuple[int, int]:
    """QEMU's (major, minor), or (0, 0) when it cannot say."""
    m = re.match(r"(\d+)\.(\d+)", qemu_version(binary) or "")
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


@functools.lru_cache(maxsize=None)
def hvprobe_version(root=ROOT) -> str | None:
    """git describe of the tree the image was built from; "-dirty" says
    the tree had changes, so the figures may not match any commit."""
    try:
        done = subprocess.run(["git", "describe", "--always", "--dirty",
                               "--tags"], cwd=root, capture_output=True,
                              text=True, timeout=30,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


@functools.lru_cache(maxsize=None)
def _static() -> dict[str, Any]:
    uname = platform.uname()
    return {"hostname": uname.node, "os": uname.system,
            "kernel": uname.release, "arch": uname.machine,
            "cpu_model": _cpu_model(), "cpus": os.cpu_count()}


# The kernel's own hz= default (kernel/time/options.c): lpj is per jiffy.
KERNEL_HZ = 250
# An lpj= preset is TSC cycles per jiffy, and a guest's TSC under TCG (and
# under KVM without TSC scaling) runs at the host's rate: "lpj=host" in a
# run's command line becomes the lpj this host's TSC gives, so that no run
# list carries one machine's rate. The kernel judges a preset by the delay
# it implies on the TSC it measures, so an estimate is enough.
HOST_LPJ = "host"
# tsc_init() logs its first estimate, then the clocksource watchdog's
# refined rate; the refined one is the better.
_TSC_DETECTED = re.compile(r"tsc: Detected (\d+\.\d+) MHz")
_TSC_REFINED = re.compile(r"tsc: Refined TSC clocksource calibration: "
                          r"(\d+\.\d+) MHz")


class HostUnknown(Exception):
    """A fact about this host that the run needs cannot be found."""


def _dmesg() -> str:
    try:
        return subprocess.run(["dmesg"], capture_output=True, text=True,
                              errors="replace", timeout=10,
                              stdin=subprocess.DEVNULL).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""


def tsc_mhz_from(dmesg, cpuinfo) -> tuple[float | None, str | None]:
    """(MHz, where it came from) from the kernel log's tsc: lines (the
    refined rate over the first estimate), else cpuinfo's "cpu MHz" (the
    TSC's rate on a VM, a core's current clock on bare metal: an
    estimate); (None, None) when neither says."""
    stated = _TSC_REFINED.findall(dmesg) or _TSC_DETECTED.findall(dmesg)
    if stated:
        return float(stated[-1]), "the kernel log"
    m = re.search(r"^cpu MHz\s*:\s*(\d+(?:\.\d+)?)", cpuinfo, re.MULTILINE)
    if m:
        return float(m.group(1)), "/proc/cpuinfo"
    return None, None


@functools.lru_cache(maxsize=None)
def tsc_mhz() -> tuple[float | None, str | None]:
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        cpuinfo = ""
    return tsc_mhz_from(_dmesg(), cpuinfo)


def resolve_host_lpj(words, mhz=None) -> list[str]:
    """words with lpj=host replaced by this host's lpj at the words' hz=
    (the kernel's default without one), as Linux computes it from
    tsc_khz; HostUnknown when the host's TSC rate cannot be found."""
    if f"lpj={HOST_LPJ}" not in words:
        return list(words)
    if mhz is None:
        mhz, _ = tsc_mhz()
    if mhz is None:
        raise HostUnknown("lpj=host: this host's TSC rate is in neither the "
                          "kernel log nor /proc/cpuinfo; give lpj= a number")
    hz = KERNEL_HZ
    for word in words:
        key, _, value = word.partition("=")
        if key == "hz" and value.isdigit() and int(value):
            hz = int(value)
    lpj = round(mhz * 1000) * 1000 // hz
    return [f"lpj={lpj}" if w == f"lpj={HOST_LPJ}" else w for w in words]


def resolve_host_cpu(cpu, mhz=None) -> str:
    """A -cpu model with tsc-frequency=host replaced by this host's TSC
    rate in Hz: KVM's timing leaf (CPUID 0x40000010) is offered only with
    a stated rate, and a host without TSC scaling (an L1 nested under
    TCG) accepts only its own (within kvm.tsc_tolerance_ppm)."""
    if not cpu or "tsc-frequency=host" not in cpu.split(","):
        return cpu
    if mhz is None:
        mhz, _ = tsc_mhz()
    if mhz is None:
        raise HostUnknown("tsc-frequency=host: this host's TSC rate is in "
                          "neither the kernel log nor /proc/cpuinfo")
    return ",".join(f"tsc-frequency={round(mhz * 1000) * 1000}"
                    if f == "tsc-frequency=host" else f
                    for f in cpu.split(","))


# What nested.py puts in HVPROBE_NESTED, key by key: the value's type.
NESTED_KEYS = {"host_kernel": str, "package": str, "version": str,
               "l0": dict, "l1_vcpus": int, "l1_mem_mib": int}
NESTED_L0_KEYS = ("accel", "cpu", "why")


def nested() -> dict[str, Any] | None:
    """How this host was nested, when it is an L1 that
    tools/lib/hostkernels/nested.py booted (it says so in HVPROBE_NESTED);
    None on a machine of its own. Only the keys nested.py writes, each of
    its type, reach results.json: the variable is an environment's, not
    a record to copy."""
    try:
        given = json.loads(os.environ["HVPROBE_NESTED"])
    except (KeyError, ValueError):
        return None
    if not isinstance(given, dict):
        return None
    out = {k: v for k, v in given.items() if k in NESTED_KEYS
           and type(v) is NESTED_KEYS[k]}
    l0 = out.get("l0")
    if isinstance(l0, dict):
        out["l0"] = {k: v for k, v in l0.items()
                     if k in NESTED_L0_KEYS and isinstance(v, str)}
    return out


def host(accel, kvm_usable, kvm_state) -> dict[str, Any]:
    """The host block of results.json for a run under accel; kvm is the
    host's KVM (kvm_state: tools/lib/launch/kvm.py's state(), which the
    launcher gives, since this floor is below it) whether this run used it
    or not; nested, how this host was itself a guest (None: it was not)."""
    return {**_static(), "accel": accel, "kvm_usable": kvm_usable,
            "kvm": kvm_state,
            "qemu_version": qemu_version(), "nested": nested()}
