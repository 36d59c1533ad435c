# SPDX-License-Identifier: MIT
"""Whether KVM works on this host, found by trying it, and which KVM it is.

The CPU's vmx/svm flags are not the test: this project's own machines run
a real KVM (the kvm_pvm module) on CPUs that show neither, and a sandbox
may pass through a /dev/kvm that opens but cannot run a guest. So KVM
works when /dev/kvm opens read-write, answers KVM_GET_API_VERSION with 12
and creates a VM (KVM_CREATE_VM), and a short boot of hvprobe under it
reaches its KTAP totals. The boot costs seconds, so its outcome is cached
per host kernel, KVM module, QEMU version and /dev/kvm.

A flavour is what results.json records about the KVM: its vendor module
(kvm_intel, kvm_amd, kvm_pvm), enable_pmu, the host kernel. The vendor
module is the one whose code this CPU runs: the CPU's vendor
(/proc/cpuinfo vendor_id) names it, and /proc/kallsyms must list its
cancel_injection; /sys/module is no guide, as a kernel with both
kvm_intel and kvm_amd built in lists both there. Some flavours
cannot run some tests, or boot some firmware; LIMITS and BOOT_LIMITS list
them with the reason, so that a run under that flavour leaves the tests
out by name (the kernel's skip=) and says why, and --accel auto boots
that firmware under TCG, instead of hanging in them.
"""

import fcntl
import functools
import json
import os
import platform
import subprocess
import threading
from pathlib import Path
from typing import Any

from ..base import jsonfile, owner
from ..base.guestexit import EXIT_PASSED
from . import qemu, serial

DEVICE = "/dev/kvm"
SYS_MODULE = Path("/sys/module")
PROC = Path("/proc")
MODULES = ("kvm_intel", "kvm_amd", "kvm_pvm")
# The vendor module each CPU vendor's hardware virtualization needs
# (VMX: Intel and Zhaoxin/Centaur; SVM: AMD and Hygon), with the CPU
# flag that shows it.
CPU_VENDORS = {"GenuineIntel": ("kvm_intel", "vmx"),
               "CentaurHauls": ("kvm_intel", "vmx"),
               "  Shanghai  ": ("kvm_intel", "vmx"),
               "AuthenticAMD": ("kvm_amd", "svm"),
               "HygonGenuine": ("kvm_amd", "svm")}
# Where each vendor module cancels a prepared VM-entry: the function
# kvm_x86_ops.cancel_injection calls. Linux 6.16 puts a TDX wrapper (vt_)
# in front of vmx_; either counts once per cancel.
CANCEL_SYMBOLS = {"kvm_intel": ("vmx_cancel_injection",
                                "vt_cancel_injection"),
                  "kvm_amd": ("svm_cancel_injection",),
                  "kvm_pvm": ("pvm_cancel_injection",)}
# linux/kvm.h: _IO(KVMIO, 0x00) and _IO(KVMIO, 0x01), KVMIO being 0xAE.
KVM_GET_API_VERSION = 0xAE00
KVM_CREATE_VM = 0xAE01
KVM_API_VERSION = 12
PROBE_TIMEOUT_S = 60
CACHE_VERSION = 1

# Tests a KVM flavour cannot run, and why: never run there, never a pass.
LIMITS = {
    "kvm_pvm": {
        "exceptions": "INT3 in a guest hangs the vCPU under kvm_pvm (its #BP case)",
    },
}
# Boot paths a flavour cannot take in reasonable time. kvm_pvm runs the
# guest's real mode by emulating it (tens of millions of kvm_emulate_insn
# a minute), which -kernel's short option ROM survives and firmware does
# not: measured here with QEMU 10.0.2, host 6.18.
BOOT_LIMITS = {
    "kvm_pvm": {
        "bios": "SeaBIOS and GRUB run in real mode, which kvm_pvm emulates "
                "one instruction at a time: 77 s to the first KTAP line",
        "uefi": "OVMF stops at an INT3, which hangs the vCPU under kvm_pvm",
    },
}


def ioctl_check(device=DEVICE) -> tuple[bool, str]:
    """(ok, reason): /dev/kvm opens, speaks API 12 and creates a VM."""
    try:
        fd = os.open(device, os.O_RDWR | os.O_CLOEXEC)
    except OSError as err:
        return False, f"{device} cannot be opened read-write ({err.strerror})"
    try:
        version = fcntl.ioctl(fd, KVM_GET_API_VERSION, 0)
        if version != KVM_API_VERSION:
            return False, f"KVM_GET_API_VERSION says {version}, not {KVM_API_VERSION}"
        try:
            vm = fcntl.ioctl(fd, KVM_CREATE_VM, 0)
        except OSError as err:
            return False, f"KVM_CREATE_VM fails ({err.strerror})"
        os.close(vm)
        return True, "KVM_GET_API_VERSION and KVM_CREATE_VM answer"
    except OSError as err:
        return False, f"KVM_GET_API_VERSION fails ({err.strerror})"
    finally:
        os.close(fd)


def _read(path) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def cpu_vendor(cpuinfo) -> tuple[str | None, set[str]]:
    """(vendor_id, flags) of the first processor in /proc/cpuinfo's text;
    vendor_id keeps its spaces (Zhaoxin's is "  Shanghai  ")."""
    vendor: str | None = None
    flags: set[str] = set()
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key == "vendor_id" and vendor is None:
            vendor = value[1:] if value.startswith(" ") else value
        elif key == "flags" and not flags:
            flags = set(value.split())
        if vendor is not None and flags:
            break
    return vendor, flags


def kallsyms_modules(kallsyms) -> set[str]:
    """The vendor modules whose cancel_injection /proc/kallsyms lists as
    a text symbol, built in or loaded."""
    names = {n: m for m, ns in CANCEL_SYMBOLS.items() for n in ns}
    found = set()
    for line in kallsyms.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] in "tT" and parts[2] in names:
            found.add(names[parts[2]])
    return found


def vendor_module(cpuinfo, kallsyms,
                  sys_module=SYS_MODULE) -> tuple[str | None, str]:
    """The KVM vendor module this CPU runs, from its vendor and what
    kallsyms lists: (module or None, how it was chosen). kallsyms is
    its text, or a function that reads it: reading /proc/kallsyms takes
    a second on some hosts, so it is read only where /sys/module leaves
    a doubt.

    Only one vendor module can own KVM at a time, and with kvm_intel and
    kvm_amd both built in, both are in /sys/module and both their
    symbols in kallsyms: the CPU's vendor decides. kvm_pvm needs no
    hardware virtualization; it is the one where the CPU shows neither
    vmx nor svm, or where it is the only one kallsyms lists."""
    vendor, flags = cpu_vendor(cpuinfo)
    own, flag = CPU_VENDORS.get(vendor or "", (None, None))
    name = (vendor or "unknown").strip()
    present = {p.name for p in Path(sys_module).glob("kvm_*") if p.is_dir()}
    # No doubt: the CPU's own module is there, and no other that could
    # own KVM on this CPU (kvm_pvm needs no vmx/svm, so it could).
    if own in present and flag in flags and "kvm_pvm" not in present:
        return own, f"CPU vendor {name} with {flag}, /sys/module/{own}"
    if "kvm_pvm" in present and flag not in flags:
        return "kvm_pvm", f"/sys/module/kvm_pvm, and the CPU ({name}) " \
            "shows no vmx or svm"
    listed = kallsyms_modules(kallsyms() if callable(kallsyms) else kallsyms)
    if own in listed and flag in flags:
        return own, f"CPU vendor {name} with {flag}, " \
            f"{CANCEL_SYMBOLS[own][0]} in kallsyms"
    if "kvm_pvm" in listed:
        return "kvm_pvm", "pvm_cancel_injection in kallsyms" + \
            (f" (the CPU shows no {flag})" if own in listed else "")
    if own in listed:
        return own, f"CPU vendor {name}, {CANCEL_SYMBOLS[own][0]} in " \
            "kallsyms"
    if len(listed) == 1:
        module = next(iter(listed))
        return module, "the only cancel_injection in kallsyms " \
            f"(CPU vendor {name})"
    if listed:
        return None, f"kallsyms lists {', '.join(sorted(listed))} and " \
            f"the CPU's vendor ({name}) picks none"
    # No kallsyms to read (or a kernel without KVM's symbols there): the
    # CPU's own module where /sys/module has it.
    if own in present:
        return own, f"CPU vendor {name}; /sys/module/{own} " \
            "(no cancel_injection in kallsyms)"
    if len(present) == 1:
        module = next(iter(present))
        return module, f"/sys/module/{module}, the only one " \
            "(no cancel_injection in kallsyms)"
    return None, "no KVM vendor module: no cancel_injection in kallsyms" + \
        (f", and /sys/module has {', '.join(sorted(present))}"
         if present else "")


def flavour(sys_module=SYS_MODULE, proc=PROC) -> dict[str, Any]:
    """Which KVM this is: {"module", "enable_pmu", "kernel"}; module and
    enable_pmu are None where the host does not say."""
    module, _ = vendor_module(_read(Path(proc) / "cpuinfo") or "",
                              lambda: _read(Path(proc) / "kallsyms") or "",
                              sys_module)
    pmu = _read(Path(sys_module) / "kvm" / "parameters" / "enable_pmu")
    return {"module": module,
            "enable_pmu": None if pmu is None else pmu in ("Y", "1"),
            "kernel": platform.release()}


def limits(module) -> dict[str, str]:
    """The tests module's KVM cannot run: {test: reason}."""
    return dict(LIMITS.get(module or "", {}))


# CPU features a flavour cannot offer, by the prefix of QEMU's -cpu flag.
CPU_LIMITS = {
    "kvm_pvm": {
        "hv-": "kvm_pvm offers no Hyper-V enlightenments (QEMU: \"kernel "
               "doesn't allow setting HyperV VP_INDEX\")",
    },
}


def boot_limit(module, boot, cpu=None) -> str | None:
    """Why module's KVM cannot boot this way, with this -cpu model (None:
    the default), or None when it can."""
    why = BOOT_LIMITS.get(module or "", {}).get(boot)
    flags = [f.lstrip("+") for f in (cpu or "").split(",")[1:]]
    for prefix, reason in CPU_LIMITS.get(module or "", {}).items():
        if not why and any(f.startswith(prefix) for f in flags):
            why = reason
    return why


def host_notes(module, enable_pmu) -> dict[str, str]:
    """What the host says beside a guest's SKIP: {test: note}."""
    notes = {}
    if enable_pmu is False:
        notes["pmi_stress"] = "KVM on this host has enable_pmu=N"
    return notes


def _cache_path(root) -> Path:
    # An L1 host kernel sees this checkout read-only: it keeps its cache
    # on its own tmpfs (tools/lib/hostkernels/nested.py sets the variable).
    return Path(os.environ.get("HVPROBE_KVM_CACHE") or
                Path(root) / "build" / "kvm-probe.json")


def _cache_key(qemu_version, device=DEVICE) -> dict[str, Any]:
    try:
        st = os.stat(device)
        dev = f"{st.st_rdev}:{int(st.st_mtime)}"
    except OSError:
        dev = None
    f = flavour()
    return {"version": CACHE_VERSION, "kernel": f["kernel"], "module": f["module"],
            "qemu": qemu_version, "device": dev}


def probe_boot(root, binary="qemu-system-x86_64") -> tuple[bool, str]:
    """(ok, reason) from a short boot of build/hvprobe.elf32 under KVM;
    FileNotFoundError when there is no image to boot yet."""
    kernel = Path(root) / "build" / "hvprobe.elf32"
    if not kernel.exists():
        raise FileNotFoundError(f"no {kernel.relative_to(root)} to boot "
                                "(run make first)")
    argv, _ = qemu.qemu_argv(qemu.Machine(accel="kvm", mem_mib=128), True,
                             kernel=str(kernel), cmdline="test=cpuinfo",
                             binary=binary)
    # A child of this process like every guest (serial.spawn): a killed
    # tools/run takes its probe with it.
    try:
        proc = serial.spawn(argv, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as err:
        return False, f"QEMU cannot start: {err}"
    try:
        stdout, stderr = proc.communicate(timeout=PROBE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return False, f"a boot under KVM did not finish in {PROBE_TIMEOUT_S} s"
    finally:
        serial.kill(proc)
    out = stdout.decode(errors="replace")
    if "# Totals:" in out and proc.returncode == EXIT_PASSED:
        return True, "a boot under KVM reached its totals"
    tail = (stderr.decode(errors="replace").strip().splitlines() or [""])[-1]
    return False, f"a boot under KVM failed (QEMU exit {proc.returncode}: {tail[:160]})"


def cached(root, qemu_version) -> tuple[bool, str] | None:
    """works()'s answer where this host was probed before and nothing it
    depends on has changed since, else None; never probes."""
    if not ioctl_check()[0]:
        return None
    try:
        saved = json.loads(_cache_path(root).read_text())
        if saved.get("key") == _cache_key(qemu_version):
            return saved["ok"], saved["reason"]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    return None


def works(root, qemu_version) -> tuple[bool, str]:
    """(ok, reason): KVM passes the ioctls and a boot, cached on disk."""
    ok, why = ioctl_check()
    if not ok:
        return False, why
    known = cached(root, qemu_version)
    if known is not None:
        return known
    try:
        ok, why = probe_boot(root)
    except FileNotFoundError as err:
        return False, str(err)      # not cached: the next build fixes it
    cache = _cache_path(root)
    try:
        owner.make_dirs(cache.parent)
        # Whole or not at all, no temporary file left, the mode open()
        # gives, and the checkout owner's (a root run must not leave a
        # file the user's next run cannot read or replace).
        jsonfile.write(cache, {"key": _cache_key(qemu_version), "ok": ok,
                               "reason": why})
        owner.hand_over(cache)
    except OSError:
        pass
    return ok, why


_probe_lock = threading.Lock()


@functools.lru_cache(maxsize=None)
def _works_locked(root, qemu_version) -> tuple[bool, str]:
    return works(root, qemu_version)


def verdict(root, qemu_version) -> tuple[bool, str]:
    """works(), once per process: a matrix's threads ask at once, and get
    one probe boot, not one each."""
    with _probe_lock:
        return _works_locked(root, qemu_version)


def flavour_works(root, qemu_version) -> tuple[str | None, bool]:
    """(vendor module, whether KVM works here), for choosing how to run
    an L1 host kernel."""
    return flavour()["module"], verdict(str(root), qemu_version)[0]


def usable(root, qemu_version) -> bool:
    """Whether --accel auto picks KVM: works(), for this checkout."""
    return verdict(str(root), qemu_version)[0]


def state(root, qemu_version, probe=True) -> dict[str, Any]:
    """What results.json says of this host's KVM: its flavour, whether
    it works, and why (or why not). probe=False, for a run that was told
    its accelerator: only what is known without a probe boot."""
    ok: bool | None
    if probe:
        ok, why = verdict(str(root), qemu_version)
    else:
        ok, why = cached(str(root), qemu_version) or \
            (None, "not probed: the run was told its accelerator")
    return {**flavour(), "works": ok, "reason": why}


class Availability:
    """KVM as a batch of runs needs to know it, each fact found when
    first asked for: a batch that was told to use TCG asks for none, and
    boots no probe. works: works()'s (ok, reason) where the caller has
    it already."""

    def __init__(self, root, qemu_version, works=None):
        self._root, self._qemu_version = str(root), qemu_version
        self._works = works
        self._lock = threading.Lock()
        self._device_ok: bool | None = None
        self._module: str | None | bool = False

    def verdict(self) -> tuple[bool, str]:
        """(works, why), probing once."""
        with self._lock:
            if self._works is None:
                self._works = verdict(self._root, self._qemu_version)
            return self._works

    @property
    def module(self) -> str | None:
        with self._lock:
            if self._module is False:
                self._module = flavour()["module"]
            return self._module         # type: ignore[return-value]

    def ok_for(self, accel, boot="kernel", cpu=None) -> bool:
        """Whether a run asking for accel gets KVM: never under tcg; an
        explicit kvm needs only the device; auto wants the probe to have
        passed and this boot path and -cpu model to be within the
        flavour's limits (boot_limit())."""
        if accel == "tcg":
            return False
        if accel == "kvm":
            with self._lock:
                if self._device_ok is None:
                    self._device_ok = qemu.kvm_device_ok()
                return self._device_ok
        return self.verdict()[0] and not boot_limit(self.module, boot, cpu)


def _selected(words) -> tuple[list[str], list[str]]:
    """The tests test= names (["all"] when it is not given) and the words
    of skip= (none when not given); the last of each word wins, as in
    the kernel's parser."""
    test, skip = ["all"], []
    for word in words:
        key, _, value = word.partition("=")
        if key == "test":
            test = [t for t in value.split(",") if t]
        elif key == "skip":
            skip = [t for t in value.split(",") if t]
    return test, skip


def leave_out(words, module) -> tuple[list[str], list[dict[str, str]]]:
    """(words, not_runnable) for a run under module's KVM: skip= gains each
    test of LIMITS that test= selects, so the guest reports it SKIP by name
    instead of hanging in it; not_runnable lists [{"test", "reason"}]."""
    limited = limits(module)
    test, skip = _selected(words)
    wanted = [t for t in limited
              if ("all" in test or t in test) and t not in skip]
    if not wanted:
        return list(words), []
    kept = [w for w in words if w.partition("=")[0] != "skip"]
    kept.append("skip=" + ",".join(skip + wanted))
    return kept, [{"test": t, "reason": limited[t]} for t in wanted]
