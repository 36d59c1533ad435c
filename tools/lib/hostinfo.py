# SPDX-License-Identifier: MIT
"""What ran the guest: the host's kernel and CPU, QEMU's version, and
which hvprobe (git describe). Figures from two hosts, or two host kernels,
are only comparable when the results say which was which.

Each answer is looked up once per process: a matrix of runs shares them.
"""

import functools
import os
import platform
import re
import subprocess
from pathlib import Path

from . import kvm, qemu

ROOT = Path(__file__).resolve().parent.parent.parent


def _cpu_model(cpuinfo="/proc/cpuinfo"):
    try:
        with open(cpuinfo, encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def qemu_version(binary=None):
    """QEMU's version string ("10.0.2"), or None when it cannot say; of
    the QEMU that runs guests (qemu.qemu_binary()) unless told which."""
    return _qemu_version(binary or qemu.qemu_binary())


@functools.lru_cache(maxsize=None)
def _qemu_version(binary):
    try:
        out = subprocess.run([binary, "--version"], capture_output=True,
                             text=True, errors="replace", timeout=30,
                             stdin=subprocess.DEVNULL).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r"version (\d+\.\d+(?:\.\d+)?)", out)
    return match.group(1) if match else None


def qemu_release(binary=None):
    """QEMU's (major, minor), or (0, 0) when it cannot say."""
    m = re.match(r"(\d+)\.(\d+)", qemu_version(binary) or "")
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


@functools.lru_cache(maxsize=None)
def hvprobe_version(root=ROOT):
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
def _static():
    uname = platform.uname()
    return {"hostname": uname.node, "os": uname.system,
            "kernel": uname.release, "arch": uname.machine,
            "cpu_model": _cpu_model(), "cpus": os.cpu_count()}


def host(accel, kvm_usable):
    """The host block of results.json for a run under accel; kvm is the
    host's KVM (tools/lib/kvm.py's state()) whether this run used it or
    not."""
    return {**_static(), "accel": accel, "kvm_usable": kvm_usable,
            "kvm": kvm.state(ROOT, qemu_version()),
            "qemu_version": qemu_version()}
