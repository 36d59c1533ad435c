# SPDX-License-Identifier: MIT
"""What a KVM host did for an hvprobe guest, counted on the host, per
vCPU thread, over exactly the window the guest marked.

The guest marks the start and the end of what it measures by writing
0xb0 and 0xb1 to I/O port 0x80 (kernel/test/marker.h); KVM traces each
write (kvm:kvm_pio) with the host's time and the vCPU thread that made
it. One `perf record` of the guest's vCPU threads holds the marks and
every event counted, each with a time stamp and a thread, so the counts
cover that window and nothing else; `perf script` turns it into text
that tally() reads.

What is counted depends on the host:

  kprobe mode (the kernel has kprobe events): the vendor's
    cancel_injection (vmx_, svm_, pvm_... from /proc/kallsyms), i.e. the
    VM-entries KVM prepared and then cancelled; kvm_pmu_deliver_pmi
    (PMIs the host delivered) and kvm_inject_nmi (NMIs queued), each
    recording its vCPU (the first argument), written as events of our
    own group to tracefs's kprobe_events and removed again by name.
    `perf probe -a` cannot place them where KVM is a module, as on every
    distribution kernel ("svm_cancel_injection is out of .text");
  tracepoint mode (always): kvm:kvm_entry and kvm:kvm_exit (VM-entries
    and exits, on hosts whose vendor code traces them), kvm:kvm_apic_ipi
    (IPIs a vCPU sent, NMI ones apart) and kvm:kvm_apic_accept_irq (what
    the local APICs accepted: PMIs through LVTPC, NMI IPIs).

Which kvm: tracepoints fire at all is found out by counting all of them
(perf stat) on a few vCPU threads for the whole run. The only writes to
tracefs are our own kprobe events, appended one at a time and removed
by name ("-:GROUP/NAME"), never anything else; tracefs is mounted only
where it was not, and then unmounted; and the tracing state before and
after is compared, so that a probe that leaves something behind says so.
"""

import errno
import os
import platform
import re
import select
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from ..launch import kvm
from .probecount import (KPROBES, KEYS, KPROBE_KEYS, MARK_EVENT, MARK_FILTER,
                         NMI_SYMBOL, PMI_SYMBOL, PROBE_GROUP, SEP, Result,
                         Tally, fired_from, name_windows, parse_lost,
                         parse_stat, tally)

# Tests point these elsewhere.
PROC = Path("/proc")
SYSMODULE = Path("/sys/module")
TRACEFS = Path("/sys/kernel/tracing")
DEBUGFS = Path("/sys/kernel/debug")
KMSG = "/dev/kmsg"
MOUNT = ("mount", "-t", "tracefs", "nodev")
UMOUNT = ("umount",)
geteuid = os.geteuid

VCPU_COMM = re.compile(r"CPU (\d+)/KVM$")
PERF_WAIT_S = 20            # perf's start, ack and end, each at most
DISCOVERY_THREADS = 2       # vCPU threads perf stat counts kvm:* on
STOP_GRACE_S = 1.0          # for perf to end by itself once QEMU has
REMOVE_TRIES = 10           # a kprobe event perf still holds is busy
# The kprobes' one fetch argument: the struct kvm_vcpu * each function
# takes first (x86-64 passes it in RDI), so that an NMI injected into a
# vCPU from another vCPU's thread (an NMI IPI) is counted for the vCPU
# it was injected into.
KPROBE_ARGS = "vcpu=%di:x64"

VENDORS = kvm.CANCEL_SYMBOLS
CANCEL = re.compile(r"^(\w+)_cancel_injection$")

# The tracepoints recorded where they exist; everything else of kvm: is
# only counted (discovery), as some fire millions of times a second.
TRACEPOINTS = ("kvm_entry", "kvm_exit", "kvm_apic_ipi",
               "kvm_apic_accept_irq")
# perf: interrupt took too long (X > Y), lowering
# kernel.perf_event_max_sample_rate to Z (kernel/events/core.c), and the
# NMI handler's own warning (arch/x86/kernel/nmi.c).
THROTTLE = re.compile(r"perf: interrupt took too long|"
                      r"perf_event_max_sample_rate|"
                      r"NMI handler \(perf\S*\) took too long")


class CannotProbe(Exception):
    """The host cannot be probed; the message says why."""


# --- host facts ----------------------------------------------------------

def read(path, default=None) -> str | None:
    try:
        return Path(path).read_text(errors="replace").strip()
    except OSError:
        return default


def vendor_choice() -> tuple[str | None, str]:
    """(KVM vendor module, how it was chosen): by the CPU's vendor and
    what /proc/kallsyms lists (kvm.vendor_module())."""
    return kvm.vendor_module(read(PROC / "cpuinfo", "") or "",
                             kallsyms_text, SYSMODULE)


def vendor_module() -> str | None:
    """The KVM vendor module (kvm_intel, kvm_amd, kvm_pvm)."""
    return vendor_choice()[0]


def kallsyms_text() -> str:
    return read(PROC / "kallsyms", "") or ""


def sample_rate() -> int | None:
    value = read(PROC / "sys/kernel/perf_event_max_sample_rate")
    return int(value) if value and value.isdigit() else None


def kmsg(since=None) -> tuple[int | None, list[str] | str]:
    """(last sequence number, [kernel log lines after since]) from
    /dev/kmsg, or (None, reason) when it cannot be read."""
    try:
        fd = os.open(KMSG, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as err:
        return None, f"cannot read {KMSG}: {err.strerror}"
    last: int = since or 0
    lines: list[str] = []
    try:
        while True:
            try:
                record = os.read(fd, 8192)
            except BlockingIOError:
                break
            except OSError as err:
                if err.errno == errno.EPIPE:
                    continue    # overwritten while we read: the next one
                break
            if not record:
                break
            seq, text = kmsg_record(record)
            if seq is None or text is None:
                continue
            last = max(last, seq)
            if since is None or seq > since:
                lines.append(text)
    finally:
        os.close(fd)
    return last, lines


def kmsg_record(record) -> tuple[int | None, str | None]:
    """(sequence number, message) of one /dev/kmsg record ("prio,seq,
    usec,flags;message\n" and continuation lines), or (None, None)."""
    head, _, text = record.decode(errors="replace").partition(";")
    parts = head.split(",")
    if len(parts) < 2 or not parts[1].isdigit():
        return None, None
    return int(parts[1]), text.split("\n", 1)[0]


def throttling(lines) -> list[str]:
    return [line for line in lines if THROTTLE.search(line)]


def host_facts() -> dict[str, Any]:
    """What a reader needs to judge the counts: kernel release, vendor
    module, kvm.enable_pmu, the perf sample-rate cap, throttling seen
    so far (since boot)."""
    module = vendor_module()
    mediated = mediated_setting(module)
    _, log = kmsg()
    return {
        "kernel": platform.release(),
        "vendor_module": module,
        "vendor_module_by": vendor_choice()[1],
        "enable_pmu": read(SYSMODULE / "kvm/parameters/enable_pmu"),
        "mediated_pmu_param": mediated_param(module),
        "enable_mediated_pmu": mediated,
        "pmu_model": pmu_model(mediated),
        "fixes": fixes(),
        "perf_event_max_sample_rate": sample_rate(),
        "throttle_messages_since_boot":
            len(throttling(log)) if isinstance(log, list) else None,
    }


def mediated_param(module) -> str:
    """The mediated vPMU's switch: a parameter of the vendor module
    (module_param(enable_mediated_pmu) in vmx.c and svm.c, the
    kvm-x86-pmu-6.20 pull; read-only, off by default), not of kvm.ko."""
    return f"{module or 'kvm_intel'}.enable_mediated_pmu"


def mediated_setting(module) -> str | None:
    if not module:
        return None
    return read(SYSMODULE / module / "parameters/enable_mediated_pmu")


def pmu_model(mediated) -> str:
    """Which vPMU KVM gives its guests, by the vendor module's
    enable_mediated_pmu (mediated_setting()): "mediated" where it is Y
    (the guest owns the counters between entry and exit), else
    "emulated" (perf events standing for the guest's counters)."""
    return "mediated" if mediated in ("Y", "1") else "emulated"


def fixes() -> dict[str, str]:
    """The PMI fixes the host's symbols tell: {commit: "no" or
    "unseen"}. kvm_pmi_trigger_fn() is the irq_work 73554b29bd70
    removed; its absence proves nothing (a kernel without kallsyms)."""
    found = kallsyms_find(kallsyms_text(), ("kvm_pmi_trigger_fn",))
    return {"73554b29bd70": "no" if found else "unseen"}


# v6 of the series, "Disable interception of select PMU MSRs": the
# counters and (where the guest's PMU matches the host's) the global
# MSRs pass through; event selects and FIXED_CTR_CTRL still exit.
MEDIATED_MEANS = ("counter reads and writes do not exit (event selects "
                  "still do), a guest PMI reaches the host on its own "
                  "vector; the verdict still judges the PMI's NMI request "
                  "at VM-entry")


def facts_lines(facts) -> list[str]:
    """The host facts as lines to print."""
    pmu = facts.get("enable_pmu")
    lines = [
        f"host: Linux {facts.get('kernel')}, vendor module "
        f"{facts.get('vendor_module') or 'none found'}"
        + (f" ({facts['vendor_module_by']})"
           if facts.get("vendor_module_by") else "") + ", kvm.enable_pmu="
        f"{pmu if pmu is not None else '? (no /sys/module/kvm)'}, "
        f"kernel.perf_event_max_sample_rate="
        f"{facts.get('perf_event_max_sample_rate')}"]
    model = facts.get("pmu_model")
    if model:
        param = facts.get("mediated_pmu_param", "enable_mediated_pmu")
        lines.append(f"host: PMU model {model} (" + (
            f"{param}=Y: {MEDIATED_MEANS})" if model == "mediated" else
            f"{param}={facts['enable_mediated_pmu']})"
            if facts.get("enable_mediated_pmu") else f"no {param})"))
    if (facts.get("fixes") or {}).get("73554b29bd70") == "no":
        lines.append("host: 73554b29bd70 no (kvm_pmi_trigger_fn in "
                     "kallsyms: the irq_work that delivers a PMI twice)")
    boot = facts.get("throttle_messages_since_boot")
    seen = facts.get("throttle_messages")
    if seen is not None:
        lines.append(f"host: perf throttling messages while probing: "
                     f"{len(seen)} (since boot: "
                     f"{'?' if boot is None else boot})" +
                     "".join(f"\n  {s}" for s in seen[:5]))
    elif boot is not None:
        lines.append(f"host: perf throttling messages since boot: {boot}")
    return lines


# --- symbols --------------------------------------------------------------

def kallsyms_find(text, names) -> dict[str, str]:
    """{name: module ("" for the kernel proper)} for the names that
    /proc/kallsyms lists as text symbols."""
    want, found = set(names), {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[2] in want and parts[1] in "tT" \
                and parts[2] not in found:
            found[parts[2]] = parts[3].strip("[]") if len(parts) > 3 else ""
    return found


def cancel_symbol(kallsyms, module) -> tuple[str | None, str | None]:
    """(symbol, its module) where this host cancels a VM-entry: the
    vendor module's, else the one *_cancel_injection kallsyms lists."""
    names = VENDORS.get(module, ())
    found = kallsyms_find(kallsyms, names)
    for name in names:
        if name in found:
            return name, found[name]
    others = set()
    for line in kallsyms.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] in "tT" and CANCEL.match(parts[2]):
            others.add(parts[2])
    others -= {n for v in VENDORS.values() for n in v[1:]}
    if len(others) == 1:
        name = others.pop()
        return name, kallsyms_find(kallsyms, [name])[name]
    return None, None


# --- vCPU threads ---------------------------------------------------------

def vcpus_by_name(pid) -> dict[int, int]:
    """{tid: vCPU index} of QEMU's vCPU threads, named "CPU n/KVM" (QEMU
    names them only with -name ...,debug-threads=on)."""
    found = {}
    for comm in (PROC / str(pid) / "task").glob("*/comm"):
        try:
            m = VCPU_COMM.match(comm.read_text().strip())
        except OSError:
            continue            # the thread left
        if m:
            found[int(comm.parent.name)] = int(m.group(1))
    return found


def vcpus_by_debugfs(pid) -> dict[int, int]:
    """{tid: vCPU index} from KVM's debugfs (kvm/<pid>-<fd>/vcpuN/pid:
    the thread that last ran vCPU N; 0 before it first ran)."""
    found = {}
    for vm in (DEBUGFS / "kvm").glob(f"{pid}-*"):
        for vcpu in vm.glob("vcpu*"):
            index, tid = vcpu.name[4:], read(vcpu / "pid", "") or ""
            if index.isdigit() and tid.isdigit() and int(tid):
                found[int(tid)] = int(index)
    return found


# How long QEMU may take to create its vCPU threads: well under a second
# on a host of its own, over ten inside an L1 host kernel nested in TCG.
VCPU_WAIT_S = 60.0


def find_vcpus(pid, want=None, wait_s=VCPU_WAIT_S,
               poll_s=0.05) -> tuple[dict[int, int], str]:
    """({tid: vCPU index}, how they were found). Waits up to wait_s for
    want threads (QEMU makes them as it starts); names first, debugfs
    where debugfs is mounted, else every thread of the process (indices
    unknown, -1)."""
    deadline = time.monotonic() + wait_s
    while True:
        named = vcpus_by_name(pid)
        if named and (want is None or len(named) >= want):
            break
        if time.monotonic() >= deadline or \
                not (PROC / str(pid)).is_dir():
            break
        time.sleep(poll_s)
    debugfs = vcpus_by_debugfs(pid)
    if named:
        how = "thread names (CPU n/KVM)"
        if debugfs:
            agree = debugfs == named
            how += ", debugfs " + ("agrees" if agree else
                                   f"differs: {sorted(debugfs.items())}")
        return named, how
    if debugfs:
        return debugfs, "debugfs kvm/<pid>-<fd>/vcpu*/pid"
    tids = sorted(int(p.name) for p in (PROC / str(pid) / "task").glob("*")
                  if p.name.isdigit())
    return {t: -1 for t in tids}, \
        "all threads of the process (no CPU n/KVM names: QEMU without " \
        "-name ...,debug-threads=on; no KVM debugfs)"


# --- tracing state --------------------------------------------------------

STATE_FILES = ("kprobe_events", "uprobe_events", "dynamic_events",
               "set_event", "current_tracer", "tracing_on",
               "events/kvm/enable")


def mounts() -> list[str]:
    """tracefs and debugfs mounts: ["tracefs /sys/kernel/tracing", ...]."""
    text = read(PROC / "mounts", "") or ""
    return sorted(f"{p[2]} {p[1]}" for p in
                  (line.split() for line in text.splitlines())
                  if len(p) >= 3 and p[2] in ("tracefs", "debugfs"))


def tracefs_mounted() -> bool:
    return any(m.split(" ", 1)[1] == str(TRACEFS) for m in mounts() if
               m.startswith("tracefs ")) and (TRACEFS / "events").is_dir()


def tracing_state() -> dict[str, Any]:
    """What a probe might leave behind: the mounts, and where tracefs is
    mounted its dynamic events, enabled events, tracer and instances."""
    state: dict[str, Any] = {"mounts": mounts()}
    if (TRACEFS / "events").is_dir():
        for name in STATE_FILES:
            path = TRACEFS / name
            if path.exists():
                try:
                    state[name] = path.read_text(errors="replace").strip()
                except OSError as err:
                    state[name] = f"unreadable: {err.strerror}"
        inst = TRACEFS / "instances"
        if inst.is_dir():
            state["instances"] = sorted(p.name for p in inst.iterdir())
    return state


def state_diff(before, after) -> list[str]:
    """What changed between two tracing_state()s, as lines."""
    out = []
    for key in sorted(set(before) | set(after)):
        a, b = before.get(key), after.get(key)
        if a != b:
            out.append(f"{key}: {short(a)} -> {short(b)}")
    return out


def short(value, limit=120) -> str:
    text = "absent" if value is None else repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


# --- kprobe events --------------------------------------------------------

def write_tracefs(name, text) -> None:
    """Append text to a tracefs file in one write. Never opened for
    truncation: that clears kprobe_events of every probe on the host."""
    fd = os.open(TRACEFS / name, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def kprobe_listed(kprobe_events, name, group=PROBE_GROUP) -> bool:
    """Whether kprobe_events' text lists GROUP/NAME (as "p:GROUP/NAME
    SYMBOL ..." or "r...:GROUP/NAME ...")."""
    return any(line.split(" ", 1)[0].split(":", 1)[-1] == f"{group}/{name}"
               for line in kprobe_events.splitlines())


# --- perf -----------------------------------------------------------------

def run_quiet(argv, timeout=60) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of a short command; 127 if it
    cannot start, 124 if it outlived timeout."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True,
                              errors="replace", timeout=timeout,
                              stdin=subprocess.DEVNULL)
    except OSError as err:
        return 127, "", str(err)
    except subprocess.TimeoutExpired:
        return 124, "", f"{argv[0]} still ran after {timeout} s"
    return done.returncode, done.stdout, done.stderr


class PerfSession:
    """One perf record or perf stat, started with its events disabled
    and enabled through its control FIFO: once perf acknowledges the
    enable, it counts. Then stop()ped with SIGINT, as perf must be for
    a usable perf.data."""

    def __init__(self, argv, tmp, name) -> None:
        self.argv = list(argv)
        self.proc: subprocess.Popen[bytes] | None = None
        self.ctl, self.ack = Path(tmp) / f"{name}.ctl", \
            Path(tmp) / f"{name}.ack"
        self.stderr = Path(tmp) / f"{name}.stderr"
        self.rc: int | None = None
        self.how: str | None = None
        self._ack_fd: int | None = None
        self._ctl_fd: int | None = None

    def command(self) -> list[str]:
        return self.argv[:2] + ["-D", "-1", "--control",
                                f"fifo:{self.ctl},{self.ack}"] + self.argv[2:]

    def start(self) -> None:
        os.mkfifo(self.ctl)
        os.mkfifo(self.ack)
        # perf opens the ack FIFO write-only, which waits for a reader.
        self._ack_fd = os.open(self.ack, os.O_RDONLY | os.O_NONBLOCK)
        with open(self.stderr, "wb") as err:
            self.proc = subprocess.Popen(
                self.command(), stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=err)
        deadline = time.monotonic() + PERF_WAIT_S
        while self._ctl_fd is None:
            try:
                self._ctl_fd = os.open(self.ctl, os.O_WRONLY | os.O_NONBLOCK)
            except OSError as e:
                if e.errno != errno.ENXIO:
                    raise
                self._alive_or_raise(deadline, "open its control FIFO")
                time.sleep(0.02)
        os.write(self._ctl_fd, b"enable\n")
        got = b""
        while b"ack" not in got:
            self._alive_or_raise(deadline, "acknowledge the enable")
            ready, _, _ = select.select([self._ack_fd], [], [], 0.05)
            if ready:
                chunk = os.read(self._ack_fd, 64)
                got += chunk
                if not chunk:
                    time.sleep(0.02)

    def _alive_or_raise(self, deadline, what) -> None:
        assert self.proc is not None    # start() made it
        if self.proc.poll() is not None:
            raise CannotProbe(f"{' '.join(self.argv[:2])} exited "
                              f"{self.proc.returncode} before it could "
                              f"{what}: {self.error_text()}")
        if time.monotonic() > deadline:
            self.stop(grace_s=0)
            raise CannotProbe(f"{' '.join(self.argv[:2])} did not "
                              f"{what} within {PERF_WAIT_S} s")

    def error_text(self) -> str:
        text = read(self.stderr, "") or "(nothing on stderr)"
        return " ".join(text.split())[:400]

    def interrupt(self) -> None:
        """SIGINT, if perf still runs: it writes out what it has and
        ends."""
        if self.proc is not None and self.proc.poll() is None:
            self.how = "stopped with SIGINT"
            self.proc.send_signal(signal.SIGINT)

    def stop(self, grace_s=0.0) -> int | None:
        """End perf: it may have ended by itself (its threads left) within
        grace_s, else SIGINT, else (stuck) SIGKILL, said in self.how."""
        if self.proc is None:
            return None
        try:
            if self.proc.poll() is None and grace_s:
                try:
                    self.proc.wait(timeout=grace_s)
                except subprocess.TimeoutExpired:
                    pass
            if self.how is None and self.proc.poll() is not None:
                self.how = "ended by itself"
            self.interrupt()
            try:
                self.proc.wait(timeout=PERF_WAIT_S)
            except subprocess.TimeoutExpired:
                self.how = "killed: it did not stop on SIGINT"
                self.proc.kill()
                self.proc.wait()
            self.rc = self.proc.returncode
        finally:
            for fd in (self._ctl_fd, self._ack_fd):
                if fd is not None:
                    os.close(fd)
            self._ctl_fd = self._ack_fd = None
            for path in (self.ctl, self.ack):
                with _ignored():
                    path.unlink()
        return self.rc

    @property
    def ok(self) -> bool:
        # perf exits 0, or with SIGINT's status when it was interrupted.
        return self.rc in (0, 130, -signal.SIGINT) and \
            self.how != "killed: it did not stop on SIGINT"


class _ignored:
    def __enter__(self) -> "_ignored":
        return self

    def __exit__(self, kind, value, tb) -> bool:
        return kind is not None and issubclass(kind, OSError)


# perf record's ring buffer per CPU: a host that is itself a guest (an
# L1 nested under TCG) drains it late, and 1 MiB lost thousands of
# records of a one-second NMI storm there.
RECORD_MMAP = "16M"


def record_argv(perf, out, tids, events, mmap=RECORD_MMAP) -> list[str]:
    """perf record of every event (period 1) on the threads tids; events
    are (name, filter or None)."""
    argv = [perf, "record", "-q", "-c", "1", "-m", mmap, "-o", str(out),
            "-t", ",".join(str(t) for t in sorted(tids))]
    for name, filt in events:
        argv += ["-e", name]
        if filt:
            argv += ["--filter", filt]
    return argv


def stat_argv(perf, out, tids, events=("kvm:*",)) -> list[str]:
    argv = [perf, "stat", "-x", SEP, "--per-thread", "-o", str(out),
            "-t", ",".join(str(t) for t in sorted(tids))]
    for name in events:
        argv += ["-e", name]
    return argv


def script_argv(perf, data) -> list[str]:
    return [perf, "script", "-i", str(data), "--ns",
            "-F", "pid,tid,time,event,trace"]


# --- a probing session ----------------------------------------------------

class Probe:
    """The host side of one probed run:

        with Probe(folder) as probe:     # checks, state, tracefs, kprobes
            probe.attach(qemu_pid)       # perf counting the vCPU threads
            ...the guest runs...
            result = probe.finish()      # perf stopped, counts read
        # kprobes removed, tracefs unmounted if we mounted it, and
        # result.leftovers lists whatever tracing state changed.

    kprobes: "auto" uses them where the kernel has kprobe events, "off"
    never (tracepoint mode everywhere)."""

    def __init__(self, folder, perf="perf", kprobes="auto", mmap=RECORD_MMAP,
                 keep_data=False, discover=True) -> None:
        self.folder = Path(folder)
        self.discover = discover
        self.perf_name, self.kprobes, self.mmap = perf, kprobes, mmap
        self.keep_data = keep_data
        self.perf: str | None = None
        self.mounted = False
        self.tracefs: str | None = None
        self.active: list[str] = []            # kprobe events we added
        self.notes: list[str] = []
        self.before: dict[str, Any] | None = None
        self.tmp: str | None = None
        self.sessions: list[PerfSession] = []
        self.record: PerfSession | None = None
        self.stat: PerfSession | None = None
        self.mode = "tracepoint"
        self.cancel: str | None = None
        self.kvm_events: list[str] = []
        self.vcpus: dict[int, int] = {}
        self.vcpu_method = ""
        self.discovery: list[int] = []
        self.leftovers: list[str] = []
        self.kmsg_seq: int | None = None
        self.result: Result | None = None

    def __enter__(self) -> "Probe":
        try:
            self.open()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, kind, value, tb) -> None:
        self.close()

    # The host, before anything runs.
    def open(self) -> None:
        if geteuid() != 0:
            raise CannotProbe("needs root: perf reads kvm: tracepoints "
                              "of other processes and tracefs")
        self.perf = shutil.which(self.perf_name)
        if self.perf is None:
            raise CannotProbe(f"{self.perf_name} not found: install perf "
                              "(Debian: apt-get install linux-perf)")
        self.before = tracing_state()
        self.kmsg_seq, _ = kmsg()
        if not tracefs_mounted():
            filesystems = read(PROC / "filesystems", "") or ""
            if "tracefs" not in filesystems.split():
                raise CannotProbe("the kernel has no tracefs")
            rc, _, err = run_quiet([*MOUNT, str(TRACEFS)], timeout=30)
            if rc:
                raise CannotProbe(f"tracefs is not mounted and mounting it "
                                  f"on {TRACEFS} failed: {err.strip()}")
            self.mounted = True
        self.tracefs = (f"mounted on {TRACEFS} for the probe, unmounted "
                        "after" if self.mounted else
                        f"already mounted on {TRACEFS}: left as found")
        self.kvm_events = sorted(p.name for p in
                                 (TRACEFS / "events" / "kvm").glob("*")
                                 if (p / "format").exists())
        if "kvm_pio" not in self.kvm_events:
            raise CannotProbe(f"no kvm:kvm_pio tracepoint in {TRACEFS}/"
                              "events/kvm (is kvm loaded?): the guest's "
                              "window marks cannot be seen")
        self.tmp = tempfile.mkdtemp(prefix="hvprobe-probe.")
        if self.kprobes != "off":
            self._place_kprobes()
        else:
            self.notes.append("cancelled VM-entries: not counted "
                              "(tracepoint mode asked for; they need "
                              "kprobes)")

    def _place_kprobes(self) -> None:
        if not (TRACEFS / "kprobe_events").exists():
            self.notes.append(
                "cancelled VM-entries: not counted: they need kprobes, "
                f"and this kernel has no kprobe events (no {TRACEFS}/"
                "kprobe_events: CONFIG_KPROBE_EVENTS is off)")
            return
        kallsyms = kallsyms_text()
        symbol, module = cancel_symbol(kallsyms, vendor_module())
        if symbol is None:
            self.notes.append("cancelled VM-entries: not counted: no "
                              "*_cancel_injection in /proc/kallsyms for "
                              f"vendor module {vendor_module()}")
            return
        listed = read(TRACEFS / "kprobe_events", "") or ""
        for name in KPROBES.values():
            if kprobe_listed(listed, name):
                raise CannotProbe(
                    f"{PROBE_GROUP}:{name} already exists (another run, or "
                    "one that was killed); remove it with: echo "
                    f"'-:{PROBE_GROUP}/{name}' >> {TRACEFS}/kprobe_events")
        others = kallsyms_find(kallsyms, [PMI_SYMBOL, NMI_SYMBOL])
        for key, sym, mod, needed in (
                ("cancel", symbol, module, True),
                ("pmi", PMI_SYMBOL, others.get(PMI_SYMBOL), False),
                ("nmi", NMI_SYMBOL, others.get(NMI_SYMBOL), False)):
            if mod is None:
                self.notes.append(f"{sym} is not in /proc/kallsyms: "
                                  f"{KEYS[KPROBE_KEYS[key]]} not counted")
                continue
            why = self._add_kprobe(KPROBES[key], sym, mod)
            if why and needed:
                self.notes.append(f"cancelled VM-entries: not counted: {why}")
                return
            if why:
                self.notes.append(why)
        self.mode, self.cancel = "kprobe", symbol

    @staticmethod
    def _event(key) -> str:
        return f"{PROBE_GROUP}:{KPROBES[key]}"

    def _add_kprobe(self, name, symbol, module) -> str | None:
        """None once placed, else why not (the kernel's words: the
        write's error and what it added to tracefs's error_log)."""
        line = f"p:{PROBE_GROUP}/{name} {symbol} {KPROBE_ARGS}"
        log = read(TRACEFS / "error_log", "") or ""
        try:
            write_tracefs("kprobe_events", line + "\n")
        except OSError as err:
            new = (read(TRACEFS / "error_log", "") or "")
            new = new[len(log):] if new.startswith(log) else new
            why = f"writing '{line}' to {TRACEFS}/kprobe_events failed: " \
                f"{err.strerror or err}"
            if new.strip():
                why += f" (error_log: {' '.join(new.split())[:300]})"
            return why
        # Only what the kernel took is ours to remove.
        self.active.append(f"{PROBE_GROUP}:{name}")
        return None

    def _remove_kprobes(self) -> None:
        """Remove the kprobe events we added, by name, and nothing else;
        perf may hold one a moment after it ends (EBUSY)."""
        for event in reversed(self.active):
            group, name = event.split(":")
            err = None
            for _ in range(REMOVE_TRIES):
                try:
                    write_tracefs("kprobe_events", f"-:{group}/{name}\n")
                    err = None
                    break
                except OSError as e:
                    err = e
                    if e.errno != errno.EBUSY:
                        break
                    time.sleep(0.2)
            if err is not None:
                self.notes.append(
                    f"could not remove {event}: {err.strerror or err}; run: "
                    f"echo '-:{group}/{name}' >> {TRACEFS}/kprobe_events")
        self.active = []

    def recorded_events(self) -> list[tuple[str, str | None]]:
        events: list[tuple[str, str | None]] = [(MARK_EVENT, MARK_FILTER)]
        events += [(f"kvm:{e}", None) for e in TRACEPOINTS
                   if e in self.kvm_events]
        if self.mode == "kprobe":
            events += [(self._event(k), None) for k in KPROBES
                       if self._event(k) in self.active]
        return events

    def attach(self, pid, want_vcpus=None, wait_s=VCPU_WAIT_S) -> None:
        """Find QEMU's vCPU threads and start counting them: perf stat of
        every kvm: tracepoint on a few (what fires), perf record of the
        marks and what is counted on all."""
        self.vcpus, self.vcpu_method = find_vcpus(pid, want_vcpus, wait_s)
        if not self.vcpus:
            raise CannotProbe(f"process {pid} has no threads to probe")
        tids = sorted(self.vcpus)
        self.discovery = [t for t in sorted(tids, key=lambda t: self.vcpus[t])
                          if self.vcpus[t] >= 0][:DISCOVERY_THREADS] or \
            tids[:DISCOVERY_THREADS]
        assert self.tmp is not None     # open() made it
        if self.discover:
            self.stat = PerfSession(
                stat_argv(self.perf, Path(self.tmp) / "kvm-events.csv",
                          self.discovery), self.tmp, "stat")
        self.record = PerfSession(
            record_argv(self.perf, self.data_path(), tids,
                        self.recorded_events(), self.mmap),
            self.tmp, "record")
        for session in (self.stat, self.record):
            if session is not None:
                self.sessions.append(session)
                session.start()

    def data_path(self) -> Path:
        return self.folder / "perf.data"

    def finish(self, serial_text="") -> Result:
        """Stop perf and read what it counted: a Result."""
        # perf stat never ends by itself; perf record may, once QEMU has.
        if self.stat is not None:
            self.stat.interrupt()
        deadline = time.monotonic() + STOP_GRACE_S
        for session in self.sessions:
            session.stop(grace_s=max(0.0, deadline - time.monotonic()))
        perf_ok = all(s.ok for s in self.sessions)
        for s in self.sessions:
            if not s.ok:
                self.notes.append(f"{' '.join(s.argv[:2])} exited "
                                  f"{s.rc} ({s.how}): {s.error_text()}")
        assert self.tmp is not None     # open() made it
        fired = parse_stat(read(Path(self.tmp) / "kvm-events.csv", "") or "")
        tl, lost = self._script()
        fired = fired_from(tl, [e for e, _ in self.recorded_events()],
                           fired)
        name_windows(tl.windows, serial_text)
        seq, lines = kmsg(self.kmsg_seq) if self.kmsg_seq is not None \
            else (None, [])
        self.result = Result(
            mode=self.mode, notes=self.notes,
            recorded=[e for e, _ in self.recorded_events()],
            vcpus=self.vcpus, vcpu_method=self.vcpu_method,
            windows=tl.windows, fired=fired,
            discovery_tids=self.discovery, lost=lost, events=tl.events,
            perf_ok=perf_ok,
            throttle_messages=throttling(lines) if isinstance(lines, list)
            else [], sample_rate_after=sample_rate(),
            cancel_symbol=self.cancel, tracefs=self.tracefs)
        return self.result

    def _script(self) -> tuple[Tally, int]:
        data = self.data_path()
        if not data.exists():
            return Tally([], {}, 0, None, None), 0
        proc = subprocess.Popen(script_argv(self.perf, data),
                                stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True,
                                errors="replace")
        try:
            tl = tally(proc.stdout)
        finally:
            if proc.stdout:
                proc.stdout.close()
            try:
                proc.wait(timeout=PERF_WAIT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc.returncode:
            self.notes.append(f"perf script exited {proc.returncode}")
        _, stats, _ = run_quiet([self.perf, "report", "-i", str(data),
                                 "--stats"], timeout=120)
        return tl, parse_lost(stats)

    def close(self) -> None:
        """Undo what open() did, and compare the tracing state."""
        for session in self.sessions:
            with _ignored():
                session.stop(grace_s=0)
        self._remove_kprobes()
        if self.mounted:
            for _ in range(10):
                rc, _, err = run_quiet([*UMOUNT, str(TRACEFS)], timeout=30)
                if rc == 0:
                    break
                time.sleep(0.5)         # perf may still hold it a moment
            else:
                self.notes.append(f"could not unmount {TRACEFS}: "
                                  f"{err.strip()}")
            self.mounted = False
        if self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None
        if not self.keep_data:
            with _ignored():
                self.data_path().unlink()
            with _ignored():
                Path(str(self.data_path()) + ".old").unlink()
        if self.before is not None:
            left = state_diff(self.before, tracing_state())
            if self.result is not None:
                self.result.leftovers = left
            self.leftovers = left


