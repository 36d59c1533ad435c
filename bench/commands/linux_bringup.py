# SPDX-License-Identifier: MIT
"""Where Debian's Linux spends its SMP bring-up, on the machine of the
README's 6.5-rule row (16 vCPUs on 4 nodes, one socket each, -cpu
Skylake-Client, TCG) or one given: boots Linux (6.12 by default, the
series beside the 6.5 rule; build/linux-ref/, never installed) with its
cpuhp trace events on from the command line and an initramfs that
prints /proc/cpuinfo's topology and flags, dmesg and the trace, then
attributes the time (bench/lib/bringuptrace.py): the control CPU's
callbacks, each AP's bringup_cpu() wait split into its starting states
and what follows (TSC sync, calibration), the warp check's share, and
the window by Linux's clock beside the host's stamps.

Exit status: 0 it attributed, 1 Linux gave no trace, 2 bad usage, 3 it
could not run.
"""

import gzip
import re
import sys
import tempfile
from pathlib import Path

from bench.lib import bringuptrace, linuxref, options
from bench.lib.sidebyside import Machine
from tools.lib import cli
from tools.lib.base import jsonfile
from tools.lib.base.exits import EXIT_CANNOT_RUN, CannotRun
from tools.lib.hostkernels import nested
from tools.lib.launch import qemu, serial

EXITS = {CannotRun: EXIT_CANNOT_RUN}


def parse_args(argv):
    p = cli.parser("bench/linux-bringup", __doc__)
    p.add_argument("--series", default=linuxref.BACKPORT_SERIES,
                   choices=(linuxref.SERIES, linuxref.BACKPORT_SERIES))
    p.add_argument("--smp", type=int, default=16, metavar="N")
    p.add_argument("--numa", type=int, default=4, metavar="N")
    p.add_argument("--cpu", default="Skylake-Client", metavar="MODEL")
    options.machine(p, mem="512M", timeout=300,
                    keep="the run folder (serial.log, serial.times) in DIR")
    p.add_argument("--append", default="", metavar="WORDS",
                   help="more words for Linux's command line (e.g. "
                        "dyndbg=\"file tsc_sync.c +p\", which makes the "
                        "TSC sync check say each time it ran)")
    p.add_argument("--json", metavar="PATH",
                   help="also write the attribution as JSON")
    args = p.parse_args(argv)
    try:
        args.mem_mib = qemu.parse_size(args.mem)
        qemu.numa_args(args.mem_mib, args.smp, args.numa)
    except qemu.ConfigError as err:
        p.error(str(err))
    return args


def initramfs(out):
    files = {"bin": (nested.DIR, b""), "proc": (nested.DIR, b""),
             "sys": (nested.DIR, b""), "dev": (nested.DIR, b""),
             "bin/busybox": (nested.EXE, nested.BUSYBOX.read_bytes()),
             "init": (nested.EXE, bringuptrace.INIT.encode())}
    Path(out).write_bytes(gzip.compress(nested.cpio(files), compresslevel=1))
    return Path(out)


def main(argv):
    args = parse_args(argv)
    try:
        vmlinuz = linuxref.ensure_series(args.series, log=print)
    except linuxref.LinuxError as err:
        raise CannotRun(str(err)) from None
    with tempfile.TemporaryDirectory(prefix="linux-bringup-") as tmp:
        run_dir = Path(args.keep or tmp)
        run_dir.mkdir(parents=True, exist_ok=True)
        initrd = initramfs(run_dir / "initramfs.gz")
        argv_q = linuxref.qemu_argv(Machine(args.cpu, args.smp, args.numa),
                                    args.mem_mib, args.accel, vmlinuz,
                                    initrd=initrd)
        words = " ".join([linuxref.cmdline(), *bringuptrace.CMDLINE,
                          args.append]).strip()
        argv_q[argv_q.index("-append") + 1] = words
        boot = linuxref.Boot(run_dir, until=re.compile(
            re.escape(bringuptrace.END)))
        try:
            boot.boot(argv_q, args.timeout)
        except serial.CannotStart as err:
            raise CannotRun(str(err)) from None
        text = (run_dir / serial.LOG).read_text(errors="replace")
        host = linuxref.parse(boot.lines())["ms"]
    trace = bringuptrace.parse(text)
    print(f"Linux {vmlinuz.name.removeprefix('vmlinuz-')}: {args.smp} vCPUs"
          f" on {args.numa} node(s), -cpu {args.cpu}, {args.accel.upper()}")
    if trace is None or not trace.spans:
        print("no trace came back (the initramfs never finished, or the "
              "kernel has no cpuhp events)")
        return 1
    a = bringuptrace.attribute(trace)
    print("\n".join(bringuptrace.report(a, host)))
    if args.json:
        jsonfile.write(args.json,
            {"series": args.series, "kernel": vmlinuz.name,
             "smp": args.smp, "numa": args.numa, "cpu": args.cpu,
             "accel": args.accel, "host_window_ms": host,
             "window_ms": a.window_ms, "control_ms": a.control_ms,
             "per_ap": a.per_ap, "first_aps": a.first_aps,
             "warp_expected_ms": a.warp_expected_ms,
             "tsc_adjust": a.tsc_adjust, "tsc_reliable": a.reliable})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
