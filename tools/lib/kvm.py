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
(kvm_intel, kvm_amd, kvm_pvm), enable_pmu, the host kernel. Some flavours
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
import tempfile
from pathlib import Path

from . import qemu

DEVICE = "/dev/kvm"
SYS_MODULE = Path("/sys/module")
MODULES = ("kvm_intel", "kvm_amd", "kvm_pvm")
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


def ioctl_check(device=DEVICE):
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


def _read(path):
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def flavour(sys_module=SYS_MODULE):
    """Which KVM this is: {"module", "enable_pmu", "kernel"}; module and
    enable_pmu are None where /sys does not say."""
    # lsmod needs /proc/modules, which some hosts lack; a module, built in
    # or not, that has parameters is in /sys/module either way.
    found = [m for m in MODULES if (Path(sys_module) / m).is_dir()] or \
        sorted(p.name for p in Path(sys_module).glob("kvm_*") if p.is_dir())
    module = found[0] if found else None
    pmu = _read(Path(sys_module) / "kvm" / "parameters" / "enable_pmu")
    return {"module": module,
            "enable_pmu": None if pmu is None else pmu in ("Y", "1"),
            "kernel": platform.release()}


def limits(module):
    """The tests module's KVM cannot run: {test: reason}."""
    return dict(LIMITS.get(module or "", {}))


# CPU features a flavour cannot offer, by the prefix of QEMU's -cpu flag.
CPU_LIMITS = {
    "kvm_pvm": {
        "hv-": "kvm_pvm offers no Hyper-V enlightenments (QEMU: \"kernel "
               "doesn't allow setting HyperV VP_INDEX\")",
    },
}


def boot_limit(module, boot, cpu=None):
    """Why module's KVM cannot boot this way, with this -cpu model (None:
    the default), or None when it can."""
    why = BOOT_LIMITS.get(module or "", {}).get(boot)
    flags = [f.lstrip("+") for f in (cpu or "").split(",")[1:]]
    for prefix, reason in CPU_LIMITS.get(module or "", {}).items():
        if not why and any(f.startswith(prefix) for f in flags):
            why = reason
    return why


def host_notes(module, enable_pmu):
    """What the host says beside a guest's SKIP: {test: note}."""
    notes = {}
    if enable_pmu is False:
        notes["pmi_stress"] = "KVM on this host has enable_pmu=N"
    return notes


def _cache_path(root):
    # An L1 host kernel sees this checkout read-only: it keeps its cache
    # on its own tmpfs (tools/lib/nested.py sets the variable).
    return Path(os.environ.get("HVPROBE_KVM_CACHE") or
                Path(root) / "build" / "kvm-probe.json")


def _cache_key(qemu_version, device=DEVICE):
    try:
        st = os.stat(device)
        dev = f"{st.st_rdev}:{int(st.st_mtime)}"
    except OSError:
        dev = None
    f = flavour()
    return {"version": CACHE_VERSION, "kernel": f["kernel"], "module": f["module"],
            "qemu": qemu_version, "device": dev}


def probe_boot(root, binary="qemu-system-x86_64"):
    """(ok, reason) from a short boot of build/hvprobe.elf32 under KVM;
    FileNotFoundError when there is no image to boot yet."""
    kernel = Path(root) / "build" / "hvprobe.elf32"
    if not kernel.exists():
        raise FileNotFoundError(f"no {kernel.relative_to(root)} to boot "
                                "(run make first)")
    argv, _ = qemu.qemu_argv(qemu.Machine(accel="kvm", mem_mib=128), True,
                             kernel=str(kernel), cmdline="test=cpuinfo",
                             binary=binary)
    try:
        done = subprocess.run(argv, capture_output=True, timeout=PROBE_TIMEOUT_S,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return False, f"a boot under KVM did not finish in {PROBE_TIMEOUT_S} s"
    except OSError as err:
        return False, f"QEMU cannot start: {err}"
    out = done.stdout.decode(errors="replace")
    if "# Totals:" in out and done.returncode == qemu.EXIT_PASSED:
        return True, "a boot under KVM reached its totals"
    tail = (done.stderr.decode(errors="replace").strip().splitlines() or [""])[-1]
    return False, f"a boot under KVM failed (QEMU exit {done.returncode}: {tail[:160]})"


def works(root, qemu_version):
    """(ok, reason): KVM passes the ioctls and a boot, cached on disk."""
    ok, why = ioctl_check()
    if not ok:
        return False, why
    key = _cache_key(qemu_version)
    cache = _cache_path(root)
    try:
        saved = json.loads(cache.read_text())
        if saved.get("key") == key:
            return saved["ok"], saved["reason"]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    try:
        ok, why = probe_boot(root)
    except FileNotFoundError as err:
        return False, str(err)      # not cached: the next build fixes it
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=cache.parent, delete=False) as f:
            json.dump({"key": key, "ok": ok, "reason": why}, f)
        os.replace(f.name, cache)
    except OSError:
        pass
    return ok, why


@functools.lru_cache(maxsize=None)
def _works_once(root, qemu_version):
    return works(root, qemu_version)


def flavour_works(root):
    """(vendor module, whether KVM works here), for choosing how to run
    an L1 host kernel."""
    from . import hostinfo      # hostinfo imports this module
    return flavour()["module"], _works_once(str(root),
                                            hostinfo.qemu_version())[0]


def usable(root, qemu_version):
    """Whether --accel auto picks KVM: works(), for this checkout."""
    return _works_once(str(root), qemu_version)[0]


def state(root, qemu_version):
    """What results.json says of this host's KVM: its flavour, whether
    it works, and why (or why not)."""
    ok, why = _works_once(str(root), qemu_version)
    return {**flavour(), "works": ok, "reason": why}


def _selected(words):
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


def leave_out(words, module):
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
