# SPDX-License-Identifier: MIT
"""QEMU command lines for hvprobe: machine, accelerator, memory and NUMA
layout, and the three boot paths (QEMU's multiboot1 loader, GRUB from a CD
under SeaBIOS, GRUB from a CD under OVMF).

Everything here is pure so that the tests can pin the exact argv: whether
KVM is there to use (tools/lib/launch/kvm.py finds out) is the caller's to pass
in.
"""

import os
import re
from dataclasses import dataclass, field

from ..base.guestexit import DEBUG_EXIT
from ..hostinfo import qemu_binary

BOOTS = ("kernel", "bios", "uefi")
# Seconds a guest of each boot path gets before its run counts as a
# crash, unless told otherwise: OVMF alone takes ~5 s under TCG.
BOOT_TIMEOUT_S = {"kernel": 60, "bios": 60, "uefi": 120}
ACCELS = ("auto", "kvm", "tcg")

OVMF_CODE = os.environ.get("HVPROBE_OVMF_CODE",
                           "/usr/share/OVMF/OVMF_CODE_4M.fd")
OVMF_VARS = os.environ.get("HVPROBE_OVMF_VARS",
                           "/usr/share/OVMF/OVMF_VARS_4M.fd")

# The guest's name, and its threads named after what they run.
THREAD_NAMES = "hvprobe,debug-threads=on"


# QEMU's limits: q35's most vCPUs (with x2APIC) and NUMA nodes
# (MAX_NODES in QEMU's include/sysemu/numa.h). Checked before anything is
# built from them, so that --smp 100000000 is a usage error, not an
# exhausted memory.
MAX_CPUS = 4096
MAX_NODES = 128


class ConfigError(Exception):
    """A request that cannot be turned into a machine; a user error."""


@dataclass
class Machine:
    boot: str = "kernel"
    smp: int = 1
    numa: int = 0               # nodes; 0 leaves NUMA out of the command line
    mem_mib: int = 256
    accel: str = "auto"
    cpu: str | None = None      # overrides the model the accelerator implies
    machine: str = "q35"
    extra: list = field(default_factory=list)


def parse_size(text) -> int:
    """A memory size as --mem takes it (256M, 1G, 512 = MiB), in MiB."""
    match = re.fullmatch(r"(\d{1,9})\s*([MGT]?)(?:i?B)?", text.strip(),
                         re.IGNORECASE)
    if not match or int(match.group(1)) == 0:
        raise ConfigError(f"bad memory size {text!r} (examples: 256M, 2G)")
    shift = {"": 0, "M": 0, "G": 10, "T": 20}[match.group(2).upper()]
    return int(match.group(1)) << shift


def kvm_device_ok(path="/dev/kvm") -> bool:
    """Whether this process may open KVM's device read-write."""
    try:
        os.close(os.open(path, os.O_RDWR | os.O_CLOEXEC))
    except OSError:
        return False
    return True


# The host's CPU, less IA32_ARCH_CAPABILITIES: hvprobe never reads it, and
# QEMU aborts on nested KVM hosts that advertise the MSR but refuse the
# value QEMU writes ("failed to set MSR 0x10a"), as this project's own
# machines do.
KVM_CPU = "host,-arch-capabilities"


# Everything TCG can emulate, presented as an Intel Skylake (family 6,
# model 0x5e). TCG never offers the invariant-TSC bit, so an AMD-branded
# CPU would never count as having a constant TSC; under Linux's rule (and
# hvprobe's, which follows it) this one does, as the hosts users run on
# do, and lpj reuse between siblings can be exercised.
TCG_CPU = "max,vendor=GenuineIntel,family=6,model=94"


# QEMU's named Intel models from Core on: family 6, model 0x0e or later,
# which Linux's early_init_intel() gives X86_FEATURE_CONSTANT_TSC.
_INTEL_CONSTANT_TSC = (
    "Conroe", "Penryn", "Nehalem", "Westmere", "SandyBridge", "IvyBridge",
    "Haswell", "Broadwell", "Skylake", "Cascadelake", "Cooperlake",
    "Icelake", "SapphireRapids", "GraniteRapids", "SierraForest",
    "ClearwaterForest", "Snowridge", "Denverton", "KnightsMill")


def tcg_tsc_note(model) -> str | None:
    """None when a guest on TCG CPU model `model` has a constant TSC by
    Linux's rule (the invariant-TSC bit, or an Intel family 6 model from
    0x0e on), else why not: then every AP calibrates unless lpj is
    preset. TCG's own "max" is an AMD family 6 CPU without invariant TSC,
    hence the Intel family 6 model TCG_CPU gives it."""
    name, *opts = model.split(",")
    keys = dict(o.split("=", 1) for o in opts if "=" in o)
    if "+invtsc" in opts or keys.get("invtsc") == "on":
        return None
    if name.startswith(_INTEL_CONSTANT_TSC) and "vendor" not in keys:
        return None
    try:
        family = int(keys.get("family", "-1"), 0)
        number = int(keys.get("model", "-1"), 0)
    except ValueError:
        family = number = -1
    if keys.get("vendor") == "GenuineIntel" and (
            (family == 6 and number >= 0x0e) or (family == 0xf and number >= 3)):
        return None
    return (f"-cpu {model} has no constant TSC by Linux's rule under TCG (no "
            "invariant-TSC bit, not an Intel family 6 model from 0x0e): "
            "every AP will calibrate unless lpj= is given; the default "
            f"model ({TCG_CPU}) has one")


def resolve_accel(requested, kvm_ok) -> tuple[str, str]:
    """(accelerator, default CPU model) for --accel and the host's KVM."""
    if requested not in ACCELS:
        raise ConfigError(f"unknown accelerator {requested!r}")
    if requested == "kvm" and not kvm_ok:
        raise ConfigError("--accel kvm, but /dev/kvm cannot be opened "
                          "read-write here")
    if requested == "kvm" or (requested == "auto" and kvm_ok):
        return "kvm", KVM_CPU
    return "tcg", TCG_CPU


def numa_args(mem_mib, smp, nodes) -> list[str]:
    """Split memory and CPUs evenly over nodes, CPUs in contiguous ranges,
    so that node i holds CPUs [i*k, (i+1)*k)."""
    if nodes < 1:
        raise ConfigError("--numa needs at least one node")
    if smp % nodes:
        raise ConfigError(f"--smp {smp} CPUs do not split evenly into "
                          f"{nodes} NUMA nodes")
    if mem_mib % nodes:
        raise ConfigError(f"--mem {mem_mib}M does not split into {nodes} "
                          f"NUMA nodes of whole MiB")
    cpus, mem = smp // nodes, mem_mib // nodes
    args = []
    for node in range(nodes):
        first, last = node * cpus, (node + 1) * cpus - 1
        span = str(first) if first == last else f"{first}-{last}"
        args += ["-object", f"memory-backend-ram,id=m{node},size={mem}M",
                 "-numa", f"node,nodeid={node},cpus={span},memdev=m{node}"]
    return args


def smp_arg(smp, nodes) -> str:
    """-smp's value. With NUMA, each node is one socket (package): Linux
    shares a calibrated lpj only within a package, so a node that is not
    a package of its own would hide the per-node cost being measured.
    QEMU's default puts every CPU in one socket; the cores per socket
    follow from smp / nodes, and numa_args() keeps sockets and nodes
    aligned by giving each node a contiguous CPU range."""
    return f"{smp},sockets={nodes}" if nodes else str(smp)


def qemu_argv(m, kvm_ok, kernel=None, cmdline="", iso=None, vars_file=None,
              binary=None) -> tuple[list[str], str]:
    """(argv, accelerator) for machine m. kernel is the multiboot1 image
    for --boot kernel; iso and vars_file are the CD and the writable copy
    of OVMF's variable store for the firmware paths."""
    if m.boot not in BOOTS:
        raise ConfigError(f"unknown boot path {m.boot!r}")
    if not 1 <= m.smp <= MAX_CPUS:
        raise ConfigError(f"--smp must be 1..{MAX_CPUS} (QEMU's most)")
    if not 0 <= m.numa <= MAX_NODES:
        raise ConfigError(f"--numa must be 0..{MAX_NODES} (QEMU's most)")
    accel, model = resolve_accel(m.accel, kvm_ok)
    argv = [binary or qemu_binary(), "-machine", m.machine,
            "-accel", accel,
            "-cpu", m.cpu or model, "-m", f"{m.mem_mib}M",
            "-smp", smp_arg(m.smp, m.numa)]
    if m.numa:
        argv += numa_args(m.mem_mib, m.smp, m.numa)
    # -nodefaults drops the NIC (and its option ROM's boot delay), VGA and
    # the default CD drive; -serial then adds COM1 back at 0x3f8.
    # debug-threads names each vCPU thread "CPU n/KVM" (or /TCG), so that
    # a host probe can tell which thread runs which vCPU.
    argv += ["-nodefaults", "-display", "none", "-monitor", "none",
             "-serial", "stdio", "-no-reboot", "-name", THREAD_NAMES,
             "-device", DEBUG_EXIT]
    if m.boot == "kernel":
        argv += ["-kernel", kernel, "-append", cmdline]
    else:
        if m.boot == "uefi":
            argv += ["-drive", "if=pflash,format=raw,readonly=on,"
                     f"file={_opt(OVMF_CODE)}",
                     "-drive", f"if=pflash,format=raw,file={_opt(vars_file)}"]
        argv += ["-cdrom", iso, "-boot", "d"]
    return argv + list(m.extra), accel


def _opt(value) -> str:
    # QEMU's option syntax escapes a comma inside a value by doubling it.
    return value.replace(",", ",,")
