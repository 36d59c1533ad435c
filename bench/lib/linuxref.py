# SPDX-License-Identifier: MIT
"""Debian's own Linux kernel as the reference for hvprobe's SMP bring-up:
find or install it, boot it in QEMU with host timestamps on every serial
line, and read its bring-up markers and loops-per-jiffy from the log.

No root filesystem and no initrd are given: Linux brings up its APs in
smp_init(), well before it looks for a root, so the run is over (and QEMU
is killed) as soon as "smp: Brought up" arrives. Left alone it would
panic for want of a root and, with panic=-1 and -no-reboot, QEMU would exit.
"""

import os
import re
import selectors
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

PACKAGE = "linux-image-cloud-amd64"
APT_INSTALL = ["apt-get", "install", "-y", "--no-install-recommends", PACKAGE]
VMLINUZ_GLOB = "vmlinuz-*-cloud-amd64"

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


class LinuxError(Exception):
    """The reference kernel is missing and cannot be installed here."""


def _version_key(path):
    # Natural order, so that 6.1.10 sorts after 6.1.9.
    return [int(n) for n in re.findall(r"\d+", path.name)]


def find_vmlinuz(boot="/boot"):
    """The newest Debian cloud kernel image in boot, or None."""
    found = sorted(Path(boot).glob(VMLINUZ_GLOB), key=_version_key)
    return found[-1] if found else None


def install_line():
    return " ".join(APT_INSTALL)


def can_install():
    """Whether this process may install the package itself: root on Debian
    with apt-get at hand."""
    return (os.geteuid() == 0 and Path("/etc/debian_version").exists()
            and shutil.which("apt-get") is not None)


def ensure_vmlinuz(boot="/boot", log=print):
    """The reference kernel's image, installed first when it is missing
    and this process may do so; LinuxError (with the apt-get line to run)
    when it may not or the installation fails."""
    vmlinuz = find_vmlinuz(boot)
    if vmlinuz is None:
        if not can_install():
            raise LinuxError(f"Debian's {PACKAGE} is not installed; as root "
                             f"run: {install_line()}")
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        log(f"installing {PACKAGE}: {install_line()}")
        done = subprocess.run(APT_INSTALL, env=env, stdin=subprocess.DEVNULL)
        if done.returncode:
            # A fresh container's package lists may be empty or stale.
            log("apt-get install failed; running apt-get update and again")
            subprocess.run(["apt-get", "update"], env=env,
                           stdin=subprocess.DEVNULL)
            done = subprocess.run(APT_INSTALL, env=env,
                                  stdin=subprocess.DEVNULL)
        vmlinuz = find_vmlinuz(boot)
        if done.returncode or vmlinuz is None:
            raise LinuxError(f"could not install {PACKAGE} (apt-get exited "
                             f"{done.returncode}); run: {install_line()}")
    if not os.access(vmlinuz, os.R_OK):
        raise LinuxError(f"{vmlinuz} is not readable by this user")
    return vmlinuz


def cmdline(lpj=None):
    """The reference kernel's command line: serial console, and panic=-1
    so that the panic for want of a root ends QEMU at once (-no-reboot)
    should the run get that far."""
    words = ["console=ttyS0", "panic=-1"]
    if lpj is not None:
        words.append(f"lpj={lpj}")
    return " ".join(words)


@dataclass
class Boot:
    """What one Linux boot said, with host seconds since QEMU started."""
    lines: list = field(default_factory=list)   # (seconds, text)
    timed_out: bool = False
    exit_status: int | None = None
    wall_s: float = 0.0


def _clean(raw):
    return raw.decode("utf-8", "replace").rstrip("\r\n").replace("\r", "")


def boot(argv, timeout, until=END, fatal=FATAL):
    """Run QEMU (argv), stamp each serial line as it arrives, and stop at
    the first line matching until (QEMU is killed then: nothing after it
    is measured), at a fatal line, at QEMU's exit or after timeout s."""
    result = Boot()
    start = time.monotonic()
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ, "out")
    sel.register(proc.stderr, selectors.EVENT_READ, "err")
    pending, stderr, done = b"", b"", False
    try:
        while not done and sel.get_map():
            left = start + timeout - time.monotonic()
            if left <= 0:
                result.timed_out = True
                break
            for key, _ in sel.select(left):
                chunk = os.read(key.fileobj.fileno(), 65536)
                if not chunk:
                    sel.unregister(key.fileobj)
                    continue
                if key.data == "err":
                    stderr = (stderr + chunk)[-4096:]
                    continue
                # One stamp per read, as tools/run does: lines that arrive
                # together left the guest within one pipe buffer.
                stamp = time.monotonic() - start
                *lines, pending = (pending + chunk).split(b"\n")
                for raw in lines:
                    if done:
                        break  # nothing after the end marker counts
                    text = _clean(raw)
                    result.lines.append((stamp, text))
                    if until.search(text) or fatal.search(text):
                        done = True
        if pending and not done:
            result.lines.append((time.monotonic() - start, _clean(pending)))
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        sel.close()
        proc.stdout.close()
        proc.stderr.close()
    result.wall_s = time.monotonic() - start
    result.exit_status = proc.returncode
    result.stderr = stderr.decode("utf-8", "replace")
    return result


@dataclass
class Bringup:
    """Linux's SMP bring-up as its serial log shows it."""
    start_s: float | None = None
    end_s: float | None = None
    start_marker: str | None = None
    cpus: int | None = None
    nodes: int | None = None
    lpj: int | None = None
    fatal: str | None = None

    @property
    def ms(self):
        if self.start_s is None or self.end_s is None:
            return None
        return (self.end_s - self.start_s) * 1000.0


def parse(lines):
    """Bringup from (seconds, text) lines."""
    b = Bringup()
    fallback = None
    for stamp, text in lines:
        if b.lpj is None and (m := LPJ.search(text)):
            b.lpj = int(m.group(1))
        if fallback is None and START_ONE_CPU.search(text):
            fallback = stamp
        if b.start_s is None and START.search(text):
            b.start_s, b.start_marker = stamp, "x86: Booting SMP configuration"
        if b.end_s is None and (m := END.search(text)):
            b.end_s = stamp
            b.nodes, b.cpus = int(m.group(1)), int(m.group(2))
        if b.fatal is None and FATAL.search(text):
            b.fatal = text.strip()
    if b.start_s is None and b.end_s is not None and b.cpus == 1 \
            and fallback is not None:
        b.start_s, b.start_marker = fallback, "smp: Bringing up secondary CPUs"
    return b
