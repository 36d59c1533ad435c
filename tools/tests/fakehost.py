# SPDX-License-Identifier: MIT
"""A KVM host made of files, for the host probe's tests: /proc, /sys/module
and tracefs trees under a temporary folder, and a fake perf (and QEMU)
first on PATH. Not a test module itself (the tests import it).

tracefs's kprobe_events answers writes as the kernel does
(FakeHost.write_tracefs, in hostprobe.write_tracefs's place): "p:G/N SYM
..." adds an event where kallsyms lists SYM as text and G/N is new, else
fails with the kernel's errno and a line in error_log; "-:G/N" removes
one that exists. FAKE_PROBE_FAIL: every add fails (EINVAL);
FAKE_KEEP_PROBES: every removal fails (EBUSY).

The fake perf speaks the parts of perf's interface the probe uses:

  record / stat with -D -1 --control fifo:CTL,ACK   reads "enable" from
      CTL, writes "ack" to ACK (FAKE_NO_ACK: never does), then runs until
      SIGINT and writes its -o file: stat $FAKE_STAT; record the text of
      $FAKE_SCRIPT with TID0, TID1, ... replaced by its -t threads.
      FAKE_SIGINT_PARENT: after the ack, sends SIGINT to its parent.
  script -i FILE     prints FILE (what record wrote)
  report --stats     "LOST events: $FAKE_LOST"

Every call is logged, one line each, to $FAKE_LOG, and its pid to
$FAKE_PIDS where that is set.

The fake QEMU writes its pid to $FAKE_PIDS too, and with
FAKE_QEMU_HOLD runs on after its output, as a guest that never ends.
"""

import dataclasses
import errno
import os
import shutil
import stat
import sys
import tempfile
import unittest
from contextlib import ExitStack
from pathlib import Path
from unittest import mock

from tools.lib import hostinfo
from tools.lib.launch import guest, kvm, qemu
from tools.lib.probe import hostprobe

FAKE_PERF = r"""#!/bin/sh
echo "$*" >> "$FAKE_LOG"
[ -n "$FAKE_PIDS" ] && echo "$$" >> "$FAKE_PIDS"
cmd=$1
shift
case "$cmd" in
record|stat)
	ctl= ack= out= tids=
	while [ $# -gt 0 ]; do
		case "$1" in
		--control) c=${2#fifo:}; ctl=${c%,*}; ack=${c#*,}; shift ;;
		-o) out=$2; shift ;;
		-t) tids=$2; shift ;;
		esac
		shift
	done
	finish() {
		if [ "$cmd" = stat ]; then
			cat "$FAKE_STAT" > "$out"
		else
			sedargs= i=0
			for t in $(echo "$tids" | tr , ' '); do
				sedargs="$sedargs -e s/TID$i\\b/$t/g"
				i=$((i + 1))
			done
			sed $sedargs "$FAKE_SCRIPT" > "$out"
		fi
		exit 0
	}
	trap finish INT TERM
	exec 3<>"$ctl"
	exec 4>"$ack"
	read what <&3
	[ -n "$FAKE_NO_ACK" ] && { sleep 60; exit 1; }
	echo ack >&4
	[ -n "$FAKE_SIGINT_PARENT" ] && [ "$cmd" = record ] && kill -INT $PPID
	while :; do sleep 0.05; done ;;
script)
	while [ $# -gt 0 ]; do [ "$1" = -i ] && in=$2; shift; done
	cat "$in"
	exit 0 ;;
report)
	echo "           LOST events: ${FAKE_LOST:-0}"
	exit 0 ;;
esac
exit 1
"""

# QEMU as far as a probed run sees it: vCPU threads named "CPU n/KVM",
# paused (-S) until QMP says cont, then $FAKE_QEMU_OUT on the serial
# port (stdout), and the exit status isa-debug-exit gives a pass.
FAKE_QEMU = r"""#!/usr/bin/env python3
import ctypes, json, os, socket, sys, threading, time
args = sys.argv[1:]
if os.environ.get("FAKE_PIDS"):
    with open(os.environ["FAKE_PIDS"], "a") as f:
        f.write(f"{os.getpid()}\n")
smp = int(args[args.index("-smp") + 1].split(",")[0])
libc = ctypes.CDLL(None)
go = threading.Event()

def vcpu(i):
    libc.prctl(15, f"CPU {i}/KVM".encode(), 0, 0, 0)
    go.wait()

threads = [threading.Thread(target=vcpu, args=(i,)) for i in range(smp)]
for t in threads:
    t.start()
if "-S" in args:
    path = args[args.index("-qmp") + 1].split(",")[0][len("unix:"):]
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(path)
    srv.listen(1)
    conn, _ = srv.accept()
    f = conn.makefile("rw")
    f.write('{"QMP": {"version": {}}}\n')
    f.flush()
    for line in f:
        what = json.loads(line)["execute"]
        if what == "cont":
            f.write('{"event": "RESUME"}\n')
        f.write('{"return": {}}\n')
        f.flush()
        if what == "quit":
            go.set()
            sys.exit(0)
        if what == "cont":
            break
with open(os.environ["FAKE_QEMU_OUT"]) as out:
    sys.stdout.write(out.read())
sys.stdout.flush()
while os.environ.get("FAKE_QEMU_HOLD"):
    time.sleep(0.05)
go.set()
for t in threads:
    t.join()
sys.exit(1)
"""

VCPU_TIDS = (4242, 4243)
QEMU_PID = 77


def executable(path, text):
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


class FakeHost:
    """The trees, under folder; patched() puts them in hostprobe's place.
    kprobes: the fake tracefs has kprobe_events; mounted: tracefs is
    already mounted (else the fake mount command mounts it)."""

    def __init__(self, folder, kprobes=True, mounted=True,
                 vendor="kvm_intel", cpu="GenuineIntel", cpu_flags="vmx",
                 kallsyms="ffffffffc0a01230 t vmx_cancel_injection\t"
                          "[kvm_intel]\n"
                          "ffffffffc0800000 T kvm_pmu_deliver_pmi\t[kvm]\n"
                          "ffffffffc0800100 T kvm_inject_nmi\t[kvm]\n"):
        self._paths(folder)
        for d in (self.proc, self.sysmodule, self.tracefs, self.bin,
                  self.debugfs):
            d.mkdir(parents=True)
        (self.proc / "sys" / "kernel").mkdir(parents=True)
        (self.proc / "sys/kernel/perf_event_max_sample_rate").write_text(
            "100000\n")
        (self.proc / "filesystems").write_text("nodev\ttracefs\n")
        (self.proc / "kallsyms").write_text(kallsyms)
        (self.proc / "cpuinfo").write_text(cpuinfo(cpu, cpu_flags))
        for module in ("kvm", vendor):
            (self.sysmodule / module / "parameters").mkdir(parents=True)
        (self.sysmodule / "kvm/parameters/enable_pmu").write_text("Y\n")
        self.add_process(QEMU_PID, "qemu-system-x86",
                         {QEMU_PID: "qemu-system-x86",
                          VCPU_TIDS[0]: "CPU 0/KVM",
                          VCPU_TIDS[1]: "CPU 1/KVM", 80: "IO mon_iothread"})
        # What a mounted tracefs holds; the fake mount copies it.
        for event in ("kvm_pio", "kvm_entry", "kvm_exit", "kvm_apic_ipi",
                      "kvm_apic_accept_irq", "kvm_msr"):
            (self.template / "events" / "kvm" / event).mkdir(parents=True)
            (self.template / "events" / "kvm" / event / "format") \
                .write_text("name: " + event + "\n")
        (self.template / "events/kvm/enable").write_text("0\n")
        for name, text in (("set_event", ""), ("current_tracer", "nop"),
                           ("tracing_on", "1")):
            (self.template / name).write_text(text + "\n")
        if kprobes:
            (self.template / "kprobe_events").write_text("")
            (self.template / "error_log").write_text("")
        (self.template / "instances").mkdir()
        self.mounts = [] if not mounted else [self.mount_line()]
        if mounted:
            shutil.copytree(self.template, self.tracefs, dirs_exist_ok=True)
        self.write_mounts()
        executable(self.bin / "perf", FAKE_PERF)
        executable(self.bin / "mount", "#!/bin/sh\n"
                   f"cp -r {self.template}/. \"$4\"\n"
                   f"echo '{self.mount_line()}' >> {self.proc}/mounts\n")
        executable(self.bin / "umount", "#!/bin/sh\n"
                   "rm -rf \"$1\"/*\n"
                   f"grep -v ' {self.tracefs} ' {self.proc}/mounts "
                   f"> {self.proc}/mounts.new\n"
                   f"mv {self.proc}/mounts.new {self.proc}/mounts\n")
        self.script.write_text("")
        self.stat.write_text("")

    def _paths(self, folder):
        self.dir = Path(folder)
        self.proc = self.dir / "proc"
        self.sysmodule = self.dir / "sys" / "module"
        self.tracefs = self.dir / "tracing"
        self.template = self.dir / "tracefs-template"
        self.debugfs = self.dir / "debug"
        self.bin = self.dir / "bin"
        self.log = self.dir / "perf.log"
        self.script = self.dir / "script.txt"
        self.stat = self.dir / "stat.csv"
        self.env = {"PATH": f"{self.bin}:{os.environ.get('PATH', '')}",
                    "FAKE_LOG": str(self.log),
                    "FAKE_TRACEFS": str(self.tracefs),
                    "FAKE_SCRIPT": str(self.script),
                    "FAKE_STAT": str(self.stat)}

    @classmethod
    def existing(cls, folder):
        """The host FakeHost(folder) made earlier, for a child process."""
        host = cls.__new__(cls)
        host._paths(folder)
        return host

    def mount_line(self):
        return f"nodev {self.tracefs} tracefs rw,relatime 0 0"

    def write_mounts(self):
        (self.proc / "mounts").write_text(
            "sysfs /sys sysfs rw 0 0\n" +
            "".join(f"{m}\n" for m in self.mounts))

    def add_process(self, pid, comm, threads):
        base = self.proc / str(pid)
        (base / "task").mkdir(parents=True)
        (base / "comm").write_text(comm + "\n")
        (base / "cmdline").write_bytes(comm.encode() + b"\0")
        for tid, name in threads.items():
            (base / "task" / str(tid)).mkdir()
            (base / "task" / str(tid) / "comm").write_text(name + "\n")

    def write_tracefs(self, name, text):
        """What the kernel does with a write to tracefs file name."""
        path = self.tracefs / name
        if name != "kprobe_events" or not path.exists():
            raise OSError(errno.ENOENT, os.strerror(errno.ENOENT))
        events = path.read_text().splitlines()
        symbols = {p[2] for p in (line.split() for line in
                                  (self.proc / "kallsyms").read_text()
                                  .splitlines())
                   if len(p) >= 3 and p[1] in "tT"}
        for line in text.splitlines():
            what, _, rest = line.partition(" ")
            kind, _, name_ = what.partition(":")
            mine = [e for e in events
                    if e.split(" ", 1)[0].split(":", 1)[-1] == name_]
            if kind == "-":
                if os.environ.get("FAKE_KEEP_PROBES"):
                    raise OSError(errno.EBUSY, os.strerror(errno.EBUSY))
                if not mine:
                    raise OSError(errno.ENOENT, os.strerror(errno.ENOENT))
                events = [e for e in events if e not in mine]
                continue
            symbol = rest.split(" ", 1)[0]
            fail = errno.EINVAL if os.environ.get("FAKE_PROBE_FAIL") else \
                errno.EEXIST if mine else \
                errno.ENOENT if symbol not in symbols else None
            if fail:
                with open(self.tracefs / "error_log", "a") as log:
                    log.write(f"[  12.345678] trace_kprobe: error: Failed to "
                              f"register probe event\n  Command: {line}\n"
                              f"             ^\n")
                raise OSError(fail, os.strerror(fail))
            events.append(f"p:{name_} {rest}")
        path.write_text("".join(f"{e}\n" for e in events))

    def calls(self):
        return self.log.read_text().splitlines() if self.log.exists() \
            else []

    def patched(self, euid=0, **env):
        """The context in which hostprobe sees this host."""
        stack = ExitStack()
        stack.enter_context(mock.patch.dict(os.environ,
                                            {**self.env, **env}))
        for name, value in (("PROC", self.proc),
                            ("SYSMODULE", self.sysmodule),
                            ("TRACEFS", self.tracefs),
                            ("DEBUGFS", self.debugfs),
                            ("KMSG", str(self.dir / "no-kmsg")),
                            ("MOUNT", (str(self.bin / "mount"), "-t",
                                       "tracefs", "nodev")),
                            ("UMOUNT", (str(self.bin / "umount"),)),
                            ("STOP_GRACE_S", 0.0),
                            ("geteuid", lambda: euid),
                            ("write_tracefs", self.write_tracefs)):
            stack.enter_context(mock.patch.object(hostprobe, name, value))
        return stack


def cpuinfo(vendor, flags, cpus=2):
    """/proc/cpuinfo of cpus processors of this vendor with these flags."""
    return "".join(f"processor\t: {n}\nvendor_id\t: {vendor}\n"
                   f"cpu family\t: 25\nflags\t\t: fpu tsc {flags} "
                   "lm\n\n" for n in range(cpus))


def script_line(tid, stamp, event, trace, pid=QEMU_PID):
    """One line as `perf script -F pid,tid,time,event,trace --ns` prints
    it."""
    return f"{pid:>8}/{tid:<6} {stamp:.9f}: {event:>28}: {trace}"


def pio(value, port=0x80):
    return f"pio_write at 0x{port:x} size 1 count 1 val 0x{value:x} "


NMI_IPI = "dst 1 vec 0 (NMI|physical|assert|edge|dst)"
FIXED_IPI = "dst 1 vec 33 (Fixed|physical|assert|edge|dst)"


def accept(apicid, vec, mode):
    return f"apicid {apicid:x} vec {vec} ({mode}|edge)"


# Each vCPU's struct kvm_vcpu *, as the kprobes' vcpu= argument shows it.
VCPU_PTRS = ("0xffff888104a48000", "0xffff888104a50000")


def storm_script(injections=False):
    """perf script of a window with a cancel, a PMI and NMI IPIs; TID0 and
    TID1 are the fake perf's -t threads. injections: each NMI IPI also
    runs kvm_inject_nmi on its sender's thread for the vCPU it targets,
    and that vCPU cancels its next VM-entry after the first two it gets
    (so 2 of each vCPU's cancels follow an injection), then enters."""
    rows = [("TID0", 1.0, "kvm:kvm_pio", pio(0xb0))]
    got = [0, 0]
    for i in range(10):
        tid, dest = ("TID0", 1) if i % 2 else ("TID1", 0)
        at = 1.1 + i / 100
        rows.append((tid, at, "kvm:kvm_apic_ipi", NMI_IPI))
        rows.append((tid, at, "kvm:kvm_apic_accept_irq",
                     accept(dest, 0, "NMI")))
        if injections:
            kp = f"(ffffffffc0800100) vcpu={VCPU_PTRS[dest]}"
            rows.append((tid, at + 0.001, "hvprobe:inject_nmi", kp))
            got[dest] += 1
            if got[dest] <= 2:
                rows.append((f"TID{dest}", at + 0.002, "hvprobe:cancel",
                             f"(ffffffffc0a01230) vcpu={VCPU_PTRS[dest]}"))
            rows.append((f"TID{dest}", at + 0.003, "kvm:kvm_entry",
                         f"vcpu {dest}, rip 0x1000"))
    rows += [("TID0", 1.5, "hvprobe:cancel", "(ffffffffc0a01230)"),
             ("TID0", 1.6, "hvprobe:pmi", "(ffffffffc0800000)"),
             ("TID0", 2.0, "kvm:kvm_pio", pio(0xb1))]
    return "".join(script_line(tid, s, e, t) + "\n"
                   for tid, s, e, t in rows)


# The serial port of a guest that ran nmi_storm and sent the 10 NMI IPIs
# storm_script() has the host count.
STORM_KTAP = """\
KTAP version 1
1..1
# hvprobe 0.1: multiboot1, loader "fake"
    KTAP version 1
    # Subtest: nmi_storm
    # host mark 0xb0 (nmi_storm begins)
    # host mark 0xb1 (nmi_storm ends)
    ok 1 every CPU finished its storm within 11 s
    # DATA {"test":"nmi_storm","cpus":2,"seconds":1,"rate_per_cpu":20000,\
"sent":10,"sent_per_s_per_cpu":5,"received":10}
    1..1
ok 1 nmi_storm
# Totals: pass:1 fail:0 skip:0 error:0
"""


def guest_host(test, kprobes=False):
    """For test (a TestCase): a FakeHost (in tracepoint mode unless
    kprobes) whose QEMU is the fake one, a real process (so /proc stays
    the real one), booting a guest that runs nmi_storm; patched in until
    the test ends. Returns (host, its folder)."""
    tmp = tempfile.TemporaryDirectory()
    test.addCleanup(tmp.cleanup)
    folder = Path(tmp.name)
    host = make_guest_host(folder, kprobes)
    stack = guest_patches(host)
    test.addCleanup(stack.close)
    return host, folder


def make_guest_host(folder, kprobes=False):
    """The files of guest_host()'s host, in folder."""
    folder = Path(folder)
    host = FakeHost(folder, kprobes=kprobes)
    host.script.write_text(storm_script(injections=kprobes))
    executable(host.bin / "qemu-system-x86_64", FAKE_QEMU)
    (folder / "serial.txt").write_text(STORM_KTAP)
    (folder / "build").mkdir()
    (folder / "build" / "hvprobe.elf32").write_text("")
    return host


def guest_patches(host, **env):
    """An ExitStack with guest_host()'s host patched in (also in a child
    process: FakeHost.existing(folder)); env: more FAKE_ settings."""
    folder = host.dir
    stack = host.patched(FAKE_QEMU_OUT=str(folder / "serial.txt"), **env)
    # The host block of results.json, without trying the real KVM (nor
    # caching what the fake QEMU would say of it).
    kvm_state = {"module": "kvm_intel", "enable_pmu": True, "kernel": "6.6",
                 "works": True, "reason": "fake"}
    for where, name, value in (
            (hostprobe, "PROC", Path("/proc")),
            # This host's symbols and vendor, not the real machine's.
            (hostprobe, "kallsyms_text",
             lambda: (host.proc / "kallsyms").read_text()),
            (hostprobe, "vendor_module", lambda: "kvm_intel"),
            (hostprobe, "mounts", lambda: [f"tracefs {host.tracefs}"]),
            (guest, "BUILD", folder / "build"),
            (qemu, "kvm_device_ok", lambda *a: True),
            (kvm, "ioctl_check", lambda *a: (True, "fake")),
            (kvm, "works", lambda *a: (True, "fake")),
            (guest, "host_block", lambda accel, ok, probe=True: {
                "accel": accel, "kvm_usable": ok, "kvm": kvm_state,
                "qemu_version": "10.0.2"})):
        stack.enter_context(mock.patch.object(where, name, value))
    return stack


def alive(pids):
    """Which of pids still run (zombies, which have ended, excepted)."""
    left = []
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1]
        except OSError:
            continue
        if state.split()[0] != "Z":
            left.append(pid)
    return left


# The kinds of machine the host tools meet, as inputs: a test that starts
# a tool says which one it pretends to be, and never sees the real one's
# /dev/kvm, TSC rate or QEMU. The rates and versions are the machine
# kinds this project runs on (README, "Where it runs"), so that a rate
# that held on one of them only is caught on another.
@dataclasses.dataclass(frozen=True)
class HostKind:
    name: str
    kvm: str            # "works", "absent" or "probe-fails"
    tsc_mhz: float
    qemu: str
    backports: bool     # bookworm-backports is in the apt sources

    def reason(self):
        return {"works": "a boot under KVM reached its totals (fake host)",
                "absent": "/dev/kvm cannot be opened read-write (No such "
                          "file or directory; fake host)",
                "probe-fails": "a boot under KVM failed (QEMU exit 1: "
                               "fake host)"}[self.kvm]

    def patched(self, folder):
        """The context in which the tools see this host; a probe boot
        appends a line to folder/probes, and the probe cache lives in
        folder."""
        folder = Path(folder)
        probes = folder / "probes"

        def ioctl_check(device=kvm.DEVICE):
            if self.kvm == "absent":
                return False, self.reason()
            return True, "KVM_GET_API_VERSION and KVM_CREATE_VM answer"

        def probe_boot(root, binary="qemu-system-x86_64"):
            with open(probes, "a") as f:
                f.write(f"{root}\n")
            return self.kvm == "works", self.reason()

        stack = ExitStack()
        stack.enter_context(mock.patch.dict(os.environ, {
            "HVPROBE_KVM_CACHE": str(folder / "kvm-probe.json")}))
        module = None if self.kvm == "absent" else "kvm_pvm"
        for where, name, value in (
                (kvm, "ioctl_check", ioctl_check),
                (kvm, "probe_boot", probe_boot),
                (kvm, "flavour", lambda *a: {"module": module,
                                             "enable_pmu": False,
                                             "kernel": "6.18.44"}),
                (qemu, "kvm_device_ok", lambda *a: self.kvm != "absent"),
                (hostinfo, "tsc_mhz",
                 lambda: (self.tsc_mhz, "the kernel log")),
                (hostinfo, "_qemu_version", lambda binary: self.qemu)):
            stack.enter_context(mock.patch.object(where, name, value))
        # What this process learnt of another host's KVM is not this one's.
        kvm._works_locked.cache_clear()
        stack.callback(kvm._works_locked.cache_clear)
        return stack

    def probes(self, folder):
        """How many probe boots a tool started under this host."""
        path = Path(folder) / "probes"
        return len(path.read_text().splitlines()) if path.exists() else 0


HOST_KINDS = (
    HostKind("kvm-works", "works", 2445.406, "10.0.2", True),
    HostKind("no-kvm", "absent", 2095.99, "7.2.0", False),
    HostKind("kvm-probe-fails", "probe-fails", 2245.78, "10.0.2", True),
)
KIND = {k.name: k for k in HOST_KINDS}


def under_each_host(cls):
    """Class decorator for a mixin of tests: a TestCase of them per host
    kind, named CLS_KIND (Matrix_no_kvm), with cls.host set, in cls's
    module. The mixin itself is no TestCase, so it is not run bare."""
    module = sys.modules[cls.__module__]
    for kind in HOST_KINDS:
        name = f"{cls.__name__}_{kind.name.replace('-', '_')}"
        setattr(module, name, type(name, (cls, unittest.TestCase),
                                   {"host": kind,
                                    "__module__": cls.__module__,
                                    "__qualname__": name}))
    return cls


def tool_argv(kind, folder, tool, *argv):
    """The command line that runs tool (a path under the checkout, such
    as tools/run) as the host kind pretends, in folder."""
    return [sys.executable, "-m", "tools.tests.fakehost", kind.name,
            str(folder), str(tool), *map(str, argv)]


def _run_as(argv):
    """python3 -m tools.tests.fakehost KIND FOLDER TOOL ARGS...: TOOL run
    through tools/entry.py as the host KIND, its probes noted in FOLDER."""
    from tools import entry
    kind, folder, *tool = argv
    with KIND[kind].patched(folder):
        return entry.run(tool)


if __name__ == "__main__":
    sys.exit(_run_as(sys.argv[1:]))
