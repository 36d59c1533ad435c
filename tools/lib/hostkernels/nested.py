# SPDX-License-Identifier: MIT
"""A host kernel as L1: boot it under QEMU with the folders of this
machine its job needs shared read-only, load KVM, and run commands of
this checkout inside it (tools/run, above all), whose guests are then L2
under a real upstream KVM. One L1 boot serves a list of commands.

L1 gets a busybox initramfs built here (hostkernel.py finds the
modules) and 9p shares: read-only, /usr, the top-level bin and lib
folders that are folders rather than merged-/usr links, this Python's
prefix, this checkout and the repository a worktree's .git names
(exports()); read-write, the results folder, mounted over the same path
inside, so what L2 runs write lands where the host reads it. The root
L1's job sees is a tmpfs holding those shares, the merged-/usr links and
a copy of a few /etc files (skeleton(): the loader's cache, passwd and
group, no shadow), with tmpfs over /tmp, /run and /dev/shm (QEMU's 9p
server cannot open sockets or FIFOs: QMP sockets live there), proc,
sysfs, devtmpfs and tracefs. The commands run chrooted into it, in this
checkout, with this Python.

The trust boundary is QEMU: L1 is a kernel under test, and a guest
(L2) may compromise it. What L1's root can then do on this machine is
read the read-only folders above and write files into the results
folder; the results share uses security_model=mapped-xattr, so the
owners, modes, setuid bits and device nodes L1 asks for are attributes
of plain files QEMU's user owns (docs/robustness.md).

L0 is TCG (`-cpu max`, an AMD CPU with SVM and nested paging) unless
this machine has a KVM that can run a stock kernel as L1, which then runs
it with `-cpu host,pmu=on`: a vPMU for L1 to hand on. kvm_pvm cannot (it
needs a PVM guest kernel).
"""

import gzip
import io
import json
import os
import re
import shlex
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

from ... import ROOT
from ..launch import serial
from ..launch.guest import shown
from ..base import owner
from ..base.text import escaped
from . import hostkernel

BUSYBOX = Path("/bin/busybox")
# The machine whose folders L1 sees (the tests give a folder of files).
HOST = Path("/")
# Top-level folders that are links into /usr on a merged-/usr system
# (the link is made in L1's root) and shared where they are folders.
TOP_LEVEL = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
# What of /etc L1's job reads: the loader's cache and configuration,
# user and group names, name service and time zone; folders one level
# deep (Debian's alternatives are links into /usr).
ETC_FILES = ("ld.so.cache", "ld.so.conf", "passwd", "group",
             "nsswitch.conf", "hosts", "host.conf", "os-release",
             "debian_version", "localtime")
ETC_FOLDERS = ("ld.so.conf.d", "alternatives")
L1_VCPUS = 2
L1_MEM_MIB = 2048
# Under TCG, Debian's kernels reach the init script in about 8 s; a
# nested hvprobe boot takes 10-30 s. The caller's timeout covers its own
# commands; this much is added for L1 itself.
L1_BOOT_S = 120
# L1's own folder in the share: its console, the job, what it said.
L1_DIR = "l1"
STATUS, INFO, JOB = "status", "l1.json", "job.sh"
# QEMU's own log of L1 (-d cpu_reset): the CPU state at each reset, and
# under TCG the line x86's exception code writes before it resets a CPU
# that faulted while delivering a double fault (a triple fault, SDM
# vol. 3A 6.15, interrupt 8); a guest that resets by itself leaves none.
QEMU_LOG = "qemu.log"
TRIPLE_FAULT = "Triple fault"
# Lines of L1's console that say it is in trouble, shown whatever else.
PREFIX = "hvprobe-l1:"
# An L1 needs vendor modules that only load under the matching vendor.
VENDOR_MODULES = {"kvm_amd": "AuthenticAMD HygonGenuine",
                  "kvm_intel": "GenuineIntel"}


class NestedError(Exception):
    """L1 could not be booted or did not finish; the message says why."""


@dataclass
class L0:
    accel: str          # "tcg" or "kvm"
    cpu: str
    why: str

    def to_json(self) -> dict[str, str]:
        return {"accel": self.accel, "cpu": self.cpu, "why": self.why}


def choose_l0(kvm_module, kvm_works) -> L0:
    """How to run L1 on this machine: under KVM with a vPMU where KVM
    works and can run a stock kernel, else under TCG."""
    if kvm_works and kvm_module in ("kvm_intel", "kvm_amd"):
        return L0("kvm", "host,pmu=on",
                  f"{kvm_module} works here and nests a stock kernel")
    if kvm_works:
        return L0("tcg", "max", f"{kvm_module} cannot boot a stock kernel "
                  "(it needs PVM guest kernels)")
    return L0("tcg", "max", "no KVM here: TCG's max is an AMD CPU with "
              "SVM and nested paging")


def _cpio_entry(name, mode, data=b"", ino=1) -> bytes:
    """One newc cpio record (the kernel's initramfs format,
    Documentation/driver-api/early-userspace/buffer-format.rst)."""
    name_bytes = name.encode() + b"\0"
    fields = (ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0,
              len(name_bytes), 0)
    head = b"070701" + b"".join(b"%08X" % f for f in fields)
    pad = lambda n: b"\0" * (-n % 4)    # noqa: E731
    return (head + name_bytes + pad(len(head) + len(name_bytes)) + data
            + pad(len(data)))


def cpio(files) -> bytes:
    """A newc archive of {path: (mode, bytes)}; folders from their mode."""
    out = io.BytesIO()
    for ino, (name, (mode, data)) in enumerate(sorted(files.items()), 1):
        out.write(_cpio_entry(name, mode, data, ino))
    out.write(_cpio_entry("TRAILER!!!", 0, b"", 0))
    return out.getvalue()


DIR, FILE, EXE, LINK = 0o040755, 0o100644, 0o100755, 0o120777
STICKY_DIR = 0o041777


def _worktree_repository(checkout) -> Path | None:
    """The repository a worktree's .git file names (its common folder),
    or None where .git is a folder of its own or unreadable: git
    describe inside L1 needs it."""
    try:
        text = (Path(checkout) / ".git").read_text()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    gitdir = Path(checkout) / text[len("gitdir:"):].strip()
    try:
        common = gitdir / (gitdir / "commondir").read_text().strip()
    except OSError:
        common = gitdir
    return Path(os.path.normpath(common))


def exports(checkout=ROOT, host=None,
            prefixes=(sys.base_prefix, sys.prefix)) -> list[Path]:
    """The folders of host (default HOST) L1's job needs, read-only, in
    path order, none inside another: /usr, the top-level folders that
    are not links, the Python prefixes, the checkout and a worktree's
    repository. Not /, /root, /home, /etc or /dev."""
    host = HOST if host is None else Path(host)
    want = [host / "usr"]
    want += [host / name for name in TOP_LEVEL
             if (host / name).is_dir() and not (host / name).is_symlink()]
    want += [Path(os.path.abspath(p)) for p in prefixes]
    want.append(Path(os.path.abspath(checkout)))
    repo = _worktree_repository(checkout)
    if repo is not None:
        want.append(repo)
    out: list[Path] = []
    for path in sorted(set(want), key=lambda p: p.parts):
        if not any(path.is_relative_to(kept) for kept in out):
            out.append(path)
    return out


def skeleton(host=None) -> dict[str, tuple[int, bytes]]:
    """L1's root before the shares cover it, as initramfs files under
    skel/: the merged-/usr links, /var/tmp and the few /etc files
    (ETC_FILES, ETC_FOLDERS) copied, links as links."""
    host = HOST if host is None else Path(host)
    files = {"skel": (DIR, b""), "skel/etc": (DIR, b""),
             "skel/var": (DIR, b""), "skel/var/tmp": (STICKY_DIR, b"")}

    def copy(path, name) -> None:
        if path.is_symlink():
            files[name] = (LINK, os.readlink(path).encode())
        elif path.is_file():
            try:
                files[name] = (FILE, path.read_bytes())
            except OSError:
                pass
    for name in TOP_LEVEL:
        if (host / name).is_symlink():
            copy(host / name, f"skel/{name}")
    for name in ETC_FILES:
        copy(host / "etc" / name, f"skel/etc/{name}")
    for folder in ETC_FOLDERS:
        path = host / "etc" / folder
        if path.is_dir() and not path.is_symlink():
            files[f"skel/etc/{folder}"] = (DIR, b"")
            for entry in sorted(path.iterdir()):
                copy(entry, f"skel/etc/{folder}/{entry.name}")
    return files


INIT = r"""#!/bin/busybox sh
# hvprobe's L1 init: modules, shares, then the job, chrooted into a root
# made of the folders this machine shares read-only; its status and L1's
# facts go to the share. Words are split below, never globbed.
set -f
/bin/busybox --install -s /bin
export PATH=/bin
say() { echo "hvprobe-l1: $*"; }
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
vendor=$(grep -m1 vendor_id /proc/cpuinfo | sed 's/.*: //')
while read -r kind file; do
	case "$kind" in
	any) ;;
	*) case " $(cat /vendors/$kind) " in *" $vendor "*) ;; *) continue ;; esac ;;
	esac
	insmod "/modules/$file" 2>/tmp/insmod || say "insmod $file: $(cat /tmp/insmod)"
done < /modules/order
own=l1
set -- $(cat /proc/cmdline)
for word; do
	case "$word" in
	hvprobe.share=*) share=${word#*=} ;;
	hvprobe.ro=*) ro=${word#*=} ;;
	hvprobe.own=*) own=${word#*=} ;;
	esac
done
o=trans=virtio,version=9p2000.L,msize=262144
mkdir -p /host /share
mount -t 9p -o $o share /share || say "cannot mount the share"
mount -t tmpfs -o mode=0755 root /host
cp -a /skel/. /host/
for fs in proc:proc sysfs:sys devtmpfs:dev tmpfs:tmp tmpfs:run; do
	mkdir -p "/host/${fs#*:}"
	mount -t "${fs%%:*}" "${fs%%:*}" "/host/${fs#*:}"
done
mkdir -p /host/dev/shm /host/dev/pts
mount -t tmpfs shm /host/dev/shm
mount -t devpts devpts /host/dev/pts
mount -t tracefs nodev /host/sys/kernel/tracing 2>/dev/null
# Each read-only share at its own path (a checkout under /tmp or /run,
# a CI clone, over the tmpfs there), in the order of the command line.
i=0
for path in $(echo "$ro" | tr , ' '); do
	mkdir -p "/host$path"
	mount -t 9p -o $o,ro,cache=loose "ro$i" "/host$path" || say "cannot mount $path"
	i=$((i + 1))
done
mkdir -p "/host$share" 2>/dev/null
mount --bind /share "/host$share" || say "cannot mount the share at $share"
module=none
for m in kvm_amd kvm_intel; do [ -d /sys/module/$m ] && module=$m; done
pmu=$(cat /sys/module/kvm/parameters/enable_pmu 2>/dev/null)
read -r up _ < /proc/uptime
printf '{"release":"%s","vendor":"%s","module":"%s","enable_pmu":"%s","kvm":%s,"boot_s":%s}\n' \
	"$(uname -r)" "$vendor" "$module" "$pmu" \
	"$([ -c /dev/kvm ] && echo true || echo false)" "$up" > "/share/$own/l1.json"
say "Linux $(uname -r) up in ${up} s; KVM: $module, enable_pmu=$pmu"
chroot /host /bin/sh "$share/$own/job.sh"
echo $? > "/share/$own/status"
sync
poweroff -f
"""


def initramfs(kernel, out) -> Path:
    """Write L1's initramfs for kernel (a hostkernel.HostKernel) to out."""
    if not BUSYBOX.exists():
        raise NestedError(f"{BUSYBOX} is missing (Debian's busybox-static; "
                          "tools/deps installs it)")
    files = {d: (DIR, b"") for d in ("bin", "dev", "proc", "sys", "tmp",
                                     "modules", "vendors")}
    files["bin/busybox"] = (EXE, BUSYBOX.read_bytes())
    files["init"] = (EXE, INIT.encode())
    files.update(skeleton())
    order = []
    for path in kernel.load:
        name = hostkernel.module_name(path)
        files[f"modules/{name}.ko"] = (FILE, hostkernel.module_bytes(path))
        order.append(f"{name if name in VENDOR_MODULES else 'any'} {name}.ko")
    for name, vendors in VENDOR_MODULES.items():
        files[f"vendors/{name}"] = (FILE, vendors.encode())
    files["modules/order"] = (FILE, "".join(f"{o}\n" for o in order).encode())
    with open(out, "wb") as f:
        f.write(gzip.compress(cpio(files), compresslevel=1))
    return out


def job_script(commands, share, env) -> str:
    """The script L1 runs in the shared root: each command in this
    checkout, its exit status recorded in the share as it ends."""
    lines = ["set -u", f"cd {shlex.quote(str(ROOT))}",
             *(f"export {k}={shlex.quote(v)}" for k, v in env.items()),
             f": > {shlex.quote(str(share / STATUS))}.each"]
    for i, argv in enumerate(commands):
        lines.append(f"echo 'hvprobe-l1: running {i}:' "
                     f"{shlex.quote(shlex.join(argv))}")
        # Through a pipe: L1's console is a terminal, and progress lines
        # meant for one would be streamed back as they are redrawn.
        lines.append(f"{{ {shlex.join(argv)} </dev/null; echo {i} $? >> "
                     f"{shlex.quote(str(share / STATUS))}.each; }} 2>&1 | cat")
    return "\n".join(lines) + "\n"


def qemu_argv(kernel, initrd, share, l0, binary="qemu-system-x86_64",
              ro=None, own_dir=L1_DIR) -> list[str]:
    """QEMU's command line for L1: ro (default exports()) shared
    read-only as ro0, ro1, ... and named in that order on L1's command
    line, share read-write as mapped-xattr (L1's owners and modes are
    attributes, never a real setuid file or device node here), and
    share/own_dir named as L1's own folder."""
    ro = exports() if ro is None else ro
    for path in (share, *ro):
        if "," in str(path):
            raise NestedError(f"{path}: QEMU's -virtfs and L1's command "
                              "line separate paths with commas; this one "
                              "holds a comma")
    cmdline = ("console=ttyS0 panic=-1 quiet loglevel=4 "
               f"hvprobe.share={share} hvprobe.ro={','.join(map(str, ro))} "
               f"hvprobe.own={own_dir}")
    shares = []
    for i, path in enumerate(ro):
        shares += ["-virtfs", f"local,path={path},mount_tag=ro{i},"
                   "security_model=none,multidevs=remap,readonly=on"]
    shares += ["-virtfs", f"local,path={share},mount_tag=share,"
               "security_model=mapped-xattr"]
    return [binary, "-machine", "q35", "-accel", l0.accel, "-cpu", l0.cpu,
            "-smp", str(L1_VCPUS), "-m", f"{L1_MEM_MIB}M",
            "-nodefaults", "-display", "none", "-monitor", "none",
            "-serial", "stdio", "-no-reboot",
            "-kernel", str(kernel.vmlinuz), "-initrd", str(initrd),
            "-append", cmdline, *shares,
            "-d", "cpu_reset", "-D", str(Path(share) / own_dir / QEMU_LOG)]


def readable(folder) -> None:
    """Give what L1 wrote into folder plain modes: files 0644, folders
    0755. Under mapped-xattr QEMU creates them 0600 and 0700 (the modes
    L1 asked for are attributes), which a user's tools/report could not
    read; no mode L1 asked for, setuid above all, is ever applied."""
    for path in [Path(folder), *Path(folder).rglob("*")]:
        try:
            st = path.lstat()
            if path.is_symlink():
                continue
            if path.is_dir():
                os.chmod(path, 0o755)
            elif path.is_file() and st.st_nlink == 1:
                os.chmod(path, 0o644)
        except OSError:
            pass


# L1's own kernel (its lines open with printk's stamp; its job's never
# do) saying it is broken. Under a TCG L0 an L2 sometimes corrupts L1's
# memory, and L1 then panics (and, with panic=-1 under -no-reboot, ends)
# or locks up (khugepaged stuck for minutes), after which its job is
# not worth the rest of the timeout.
L1_BROKEN = re.compile(r"^\[\s*\d+\.\d+\] (watchdog: BUG: soft lockup.*|"
                       r"Kernel panic - not syncing.*)")


# L1 can also hang with every vCPU halted, its job waiting on an L2 that
# will never answer: its QEMU then uses no CPU, where running an L2 under
# TCG keeps a core busy. Idle this long, twice the longest wait of a
# command inside (the referee's 300 s for one Linux boot), L1 is hung.
L1_IDLE_S = 600
L1_IDLE_CPU_SHARE = 0.05


def process_cpu_s(pid) -> float:
    """CPU seconds pid has used (user and system, from /proc/PID/stat);
    0.0 once it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    # Fields 14 and 15, counted after the command name's closing ")".
    fields = text[text.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Console(serial.Console):
    """L1's serial console, each line shown with the kernel's label; it
    ends at L1's own kernel saying it is broken (L1_BROKEN), which
    broken then holds, or at L1's QEMU idle for L1_IDLE_S (hung says
    so)."""

    def __init__(self, run_dir, label, stream, cpu_s=process_cpu_s) -> None:
        super().__init__(run_dir)
        self.label, self.stream = label, stream
        self.broken: str | None = None
        self.hung: str | None = None
        self.cpu_s = cpu_s
        self.cpu_seen: list[tuple[float, float]] = []  # (when, CPU seconds)

    def stopped(self) -> bool:
        now, cpu = time.monotonic(), self.cpu_s(self.pid)
        self.cpu_seen.append((now, cpu))
        old = [s for s in self.cpu_seen if now - s[0] >= L1_IDLE_S]
        if not old:
            return False
        self.cpu_seen = self.cpu_seen[len(old) - 1:]
        since, used = now - old[-1][0], cpu - old[-1][1]
        if used >= since * L1_IDLE_CPU_SHARE:
            return False
        self.hung = (f"hung: its QEMU used {used:.1f} s of CPU in the last "
                     f"{since:.0f} s")
        return True

    def line(self, raw, text, stamp) -> bool:
        if text and self.stream is not None:
            print(f"[L1 {self.label}] {escaped(text)}", file=self.stream,
                  flush=True)
        if m := L1_BROKEN.match(text):
            self.broken = escaped(m.group(1))
            return True
        return False


@dataclass
class Outcome:
    statuses: list          # each command's exit status; None: never ended
    info: dict              # what L1 said of itself (l1.json)
    l0: L0
    kernel: hostkernel.HostKernel
    wall_s: float
    console: Path           # L1's serial log
    broken: str | None = None   # what L1's kernel said when it broke
    ended: str = ""             # how L1 stopped: hung, or serial.ended()
    timed_out: bool = False     # it ran out of the time it was given
    boots: int = 1              # L1 boots that ran the commands

    def why_ended(self) -> str:
        """Why L1 stopped, for a run it did not finish: what its kernel
        said, or else how its QEMU stopped."""
        return f"its kernel: {self.broken}" if self.broken else self.ended


def run(kernel, commands, share, timeout, l0, stream=sys.stdout,
        env=None, own_dir=L1_DIR) -> Outcome:
    """Boot kernel as L1 under l0 and run commands (argv lists, run in
    this checkout) in it, one after another; share is the read-write
    folder they write into (it must be inside this machine's root), and
    share/own_dir L1's own (its console, the job, the statuses).
    Returns an Outcome; NestedError when L1 never got to them."""
    share = Path(share).resolve()
    ro = exports()
    if any(c.isspace() for c in str(share) + "".join(map(str, ro))):
        raise NestedError(f"{share}: L1 takes the share's and the "
                          "shared folders' paths on its kernel command "
                          "line, which splits at spaces")
    own = share / own_dir
    own.mkdir(parents=True, exist_ok=True)
    for stale in (STATUS, STATUS + ".each", INFO, QEMU_LOG):
        (own / stale).unlink(missing_ok=True)
    nested = {"host_kernel": kernel.label, "package": kernel.package,
              "version": kernel.version, "l0": l0.to_json(),
              "l1_vcpus": L1_VCPUS, "l1_mem_mib": L1_MEM_MIB}
    environment = {"HVPROBE_NESTED": json.dumps(nested),
                   "PYTHONDONTWRITEBYTECODE": "1", "HOME": "/tmp",
                   "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                   "HVPROBE_KVM_CACHE": "/tmp/kvm-probe.json", **(env or {})}
    (own / JOB).write_text(job_script(commands, own, environment))
    initrd = initramfs(kernel, own / "initramfs.gz")
    console = Console(own, kernel.label, stream)
    argv = qemu_argv(kernel, initrd, share, l0, ro=ro, own_dir=own_dir)
    start = time.monotonic()
    limit = timeout + L1_BOOT_S
    try:
        console.boot(argv, limit, cwd=ROOT)
    except serial.CannotStart as err:
        raise NestedError(str(err)) from None
    finally:
        initrd.unlink(missing_ok=True)
        readable(share)
        owner.hand_over(share, recursive=True)
    wall = time.monotonic() - start
    try:
        info = json.loads((own / INFO).read_text())
    except (OSError, ValueError):
        tail = "; ".join(console.stderr_lines()[-3:])
        raise NestedError(f"L1 ({kernel.describe()}) never reached its init"
                          f" script ({'timed out' if console.timed_out else f'QEMU exit {console.exit_status}'}"
                          f"{': ' + tail if tail else ''}); its console: "
                          f"{own / serial.LOG}") from None
    try:
        each = (own / (STATUS + ".each")).read_text(errors="replace")
    except OSError:
        each = ""
    return Outcome(statuses(each, len(commands)), info, l0, kernel, wall,
                   own / serial.LOG, console.broken,
                   console.hung or triple_fault(console, own) or
                   serial.ended(console, f"{limit:g}"), console.timed_out)


def triple_fault(console, own) -> str | None:
    """How L1 ended where its QEMU logged a triple fault in it before it
    exited, else None. Only TCG logs one: KVM reports a shutdown, which
    QEMU turns into a reset without a word."""
    if console.timed_out or console.exit_status is None:
        return None
    log = own / QEMU_LOG
    try:
        with open(log, "rb") as f:
            if not any(line.rstrip() == TRIPLE_FAULT.encode() for line in f):
                return None
    except OSError:
        return None
    return f"QEMU exited{serial.after(console)}: L1 triple-faulted (its " \
        f"QEMU's log: {shown(log)})"


def run_until_done(kernel, commands, names, timeouts, share, l0, *,
                   max_boots=None, stream=sys.stdout, own_dir=L1_DIR,
                   log=print) -> Outcome:
    """run() for commands, each with a name (its folder in share) and
    its share of the time (timeouts, in s), and L1 booted again, in
    share/OWN_DIR-N, for the ones an L1 that ended left. A boot that ran
    out of its time is the last (another would too), as is the second
    in a row that finished none, and boot max_boots where one is given.
    Each unfinished command's folder is kept as NAME.l1-ended-N. Returns
    the last boot's Outcome with every command's status, the boots'
    time added up and their count; NestedError where the first boot
    never got to the commands. log gets a line per end of L1."""
    left = list(range(len(commands)))
    done: list[int | None] = [None] * len(commands)
    wall, boot, barren, outcome = 0.0, 1, 0, None
    while True:
        own = own_dir if boot == 1 else f"{own_dir}-{boot}"
        try:
            this = run(kernel, [commands[i] for i in left], share,
                       sum(timeouts[i] for i in left), l0, stream=stream,
                       own_dir=own)
        except NestedError as err:
            if outcome is None:
                raise
            log(f"L1 did not come up again: {err}")
            boot -= 1
            break
        outcome, wall = this, wall + this.wall_s
        for i, status in zip(left, this.statuses):
            done[i] = status
        unfinished = [i for i in left if done[i] is None]
        barren = barren + 1 if len(unfinished) == len(left) else 0
        if not unfinished:
            break
        said = (f"L1 ended before {len(unfinished)} of its "
                f"{len(commands)} commands did "
                f"({', '.join(names[i] for i in unfinished)}; "
                f"{this.why_ended()}; its console: {shown(this.console)})")
        if last := last_boot(this, barren, boot, max_boots):
            log(f"{said}; not booting it again: {last}")
            break
        log(f"{said}; booting it again for them")
        for i in unfinished:
            folder = Path(share) / names[i]
            if folder.exists():
                folder.rename(folder.with_name(
                    f"{names[i]}.l1-ended-{boot}"))
        left, boot = unfinished, boot + 1
    return replace(outcome, statuses=done, wall_s=wall, boots=boot)


def last_boot(outcome, barren, boot, max_boots) -> str | None:
    """Why an L1 that ended with commands left is not booted again, or
    None: under a TCG L0 an L2 now and then takes L1 down with it, so
    one boot that finished none proves nothing, two in a row do."""
    if outcome.timed_out:
        return "it ran out of its time"
    if barren >= 2:
        return "two boots in a row finished none"
    if boot == max_boots:
        return f"that was boot {boot} of {max_boots}"
    return None


def statuses(text, n) -> list[int | None]:
    """Each of n commands' exit status from L1's status.each lines
    ("INDEX STATUS"), None for one that never ended. L1 wrote them: a
    line that is not two numbers, an index out of 0..n-1 or a status out
    of 0..255 is ignored, as is a second line for one index."""
    out: list[int | None] = [None] * n
    for line in text.splitlines():
        words = line.split()
        if len(words) != 2 or not all(w.isdigit() for w in words):
            continue
        index, status = int(words[0]), int(words[1])
        if index < n and status <= 255 and out[index] is None:
            out[index] = status
    return out
