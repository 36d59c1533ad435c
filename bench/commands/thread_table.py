# SPDX-License-Identifier: MIT
"""The lpj thread's table in one command: its five rows (16 vCPUs with
every AP calibrating and with lpj preset; 32 vCPUs on one node, on four
nodes and preset: tools/scenarios/lpj-thread.toml), each booted as
hvprobe under every lpj policy (linux-6.1 serially, linux-6.5 in Linux
6.5's bring-up shape, the thread's hv-preset in both, hvprobe's own
serially and in hvprobe's own concurrent mode) and as Debian's Linux 6.1
and 6.12 (linux-image-cloud-amd64, unpacked into build/linux-ref/, never
installed) in the same QEMU machine.

hvprobe's figures are its smp DATA line's (total_us, and the APs whose
lpj_source is calibrate). Linux is timed from host stamps of its serial
lines ('x86: Booting SMP configuration' to 'smp: Brought up') and boots
into a busybox initramfs that prints each CPU's bogomips (a copied lpj
equals its source exactly), from which the count of APs that calibrated
comes (tools/lib/referee.py). Each line states the HZ its kernel ran at.

Each line also gives the APs that ran the TSC-sync check and
hvprobe's time in it, apart from the bring-up time, and an hvprobe line
at an HZ no Linux line of its row ran at says it is hvprobe's alone.

--hyperv boots every row under KVM's Hyper-V emulation without KVM's
leaves (threadtable.HYPERV_CPU), where Linux and hvprobe both take
Hyper-V as the platform, as on the thread's guests; --linux-hz boots
hvprobe at the HZ Debian's Linux is built with (250) instead of the
row's, so that every hvprobe line stands beside Linux's. Both want a
real KVM: --host-kernel SERIES runs the whole table inside one boot of
Debian's SERIES as L1 (as tools/run --host-kernel boots one), under
L1's KVM, and prints it here.

Prints the table and writes every run to
results/thread-table-DATE-TIME.json.

Exit status: 0 every boot gave a time, 1 some did not, 2 bad usage,
3 it could not run (build, QEMU, no Linux image).
"""

import dataclasses
import json
import datetime
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

from bench.lib import linuxref, threadtable
from bench.lib.sidebyside import Machine
from tools import ROOT
from tools.lib import cli, hostinfo, referee
from tools.lib.base import jsonfile, seconds
from tools.lib.analysis import results
from tools.lib.hostkernels import hostkernel, nested
from tools.lib.launch import batch, qemu
from tools.lib.launch import kvm as kvm_lib
from tools.lib.launch import scenario as scen
from tools.lib.launch import serial
from tools.lib.base.exits import (EXIT_CANNOT_RUN, EXIT_FAILED, EXIT_OK,
                                  CannotRun)
from tools.lib.launch.guest import shown

# The Linux run ends when the initramfs has said everything.
END = re.compile(re.escape(referee.END))


EXITS = {CannotRun: EXIT_CANNOT_RUN}


def parse_args(argv):
    p = cli.parser("bench/thread-table", __doc__)
    p.add_argument("--quick", action="store_true",
                   help="4 and 8 vCPUs instead of 16 and 32, one run: a "
                        "test of the command, not the thread's figures")
    p.add_argument("--vcpus", type=int, metavar="N",
                   help="every row on N vCPUs, one package per node and at "
                        "most N nodes (an L2 under a TCG-nested L1 is "
                        "reliable only with as many as L1 has: 2)")
    p.add_argument("--runs", type=int, metavar="N",
                   help="boots per line (default: 3, 1 with --quick)")
    p.add_argument("--rows", metavar="LIST",
                   help="comma list of rows (default: all: "
                        f"{','.join(threadtable.ROWS)})")
    p.add_argument("--accel", choices=("tcg", "kvm"), default="tcg",
                   help="accelerator (default: tcg)")
    p.add_argument("--no-linux", action="store_true",
                   help="boot hvprobe only")
    p.add_argument("--timeout", type=seconds.option, default=300,
                   metavar="S",
                   help="seconds one boot may take (default: %(default)g)")
    p.add_argument("--output", metavar="PATH",
                   help="the JSON (default: "
                        "results/thread-table-DATE-TIME.json)")
    p.add_argument("--keep", metavar="DIR",
                   help="keep the run folders in DIR")
    p.add_argument("--hyperv", action="store_true",
                   help="every row under KVM's Hyper-V emulation, kvm=off "
                        f"(-cpu {threadtable.HYPERV_CPU}); needs --accel "
                        "kvm or --host-kernel")
    p.add_argument("--linux-hz", action="store_true",
                   help="hvprobe at the HZ Debian's Linux is built with, "
                        "not the row's")
    p.add_argument("--host-kernel", metavar="SERIES",
                   choices=hostkernel.SERIES,
                   help="run the table inside one boot of Debian's SERIES "
                        f"({', '.join(hostkernel.SERIES)}) as L1, under "
                        "its KVM")
    cli.no_build(p)
    args = p.parse_args(argv)
    if args.host_kernel:
        args.accel = "kvm"
    if args.hyperv and args.accel != "kvm":
        p.error("--hyperv takes --accel kvm (or --host-kernel): Hyper-V's "
                "emulation is KVM's")
    if args.linux_hz and args.no_linux:
        p.error("--linux-hz takes Linux's HZ from its images: not with "
                "--no-linux")
    if args.runs is None:
        args.runs = 1 if args.quick else 3
    if args.runs < 1:
        p.error("--runs must be positive")
    if args.vcpus is not None and args.vcpus < 1:
        p.error("--vcpus must be positive")
    args.rows = list(threadtable.ROWS) if args.rows is None else \
        [r for r in args.rows.split(",") if r]
    unknown = [r for r in args.rows if r not in threadtable.ROWS]
    if unknown or not args.rows:
        p.error(f"--rows takes {', '.join(threadtable.ROWS)}")
    if args.output is None:
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        args.output = str(ROOT / "results" / f"thread-table-{stamp}.json")
    return args


def rows_and_specs(names, accel, quick=False, cpu=None, vcpus=None):
    """[(threadtable.Row, its scenario RunSpec)] for the named rows; cpu,
    when given, is every row's CPU model instead of the scenario's, and
    vcpus every row's vCPUs (nodes cut to as many)."""
    specs = {s.variant: s for s in scen.load_scenario(threadtable.SCENARIO)}
    out = []
    for name in names:
        spec = specs[name]
        if cpu:
            spec = dataclasses.replace(spec, cpu=cpu)
        if vcpus:
            spec = dataclasses.replace(spec, vcpus=vcpus,
                                       numa=min(spec.numa, vcpus))
        row = threadtable.Row(name, spec.cpu_for(accel), spec.vcpus,
                              max(spec.numa, 1),
                              f"lpj={hostinfo.HOST_LPJ}" in spec.cmdline,
                              threadtable.ROWS[name])
        out.append((row, spec))
    if quick and not vcpus:
        threadtable.quick_rows([r for r, _ in out])
    return out


def hvprobe_spec(spec, row, policy, bringup, accel, timeout, repeat,
                 hz=None):
    """The scenario's spec for one hvprobe line of row; hz, when given,
    replaces the row's."""
    return dataclasses.replace(
        spec, name=f"{spec.name}-{policy}-{bringup}", vcpus=row.vcpus,
        accel=accel, timeout=timeout, repeat=repeat,
        qemu_args=list(spec.qemu_args), axes={},
        cmdline=scen.merge_cmdline(spec.cmdline, [
            *([f"hz={hz}"] if hz else []), f"lpj_policy={policy}",
            f"bringup={bringup}"]))


def linux_hz(hzs):
    """The one HZ of Debian's images ({series: CONFIG_HZ}), for
    --linux-hz; CannotRun when they differ or none says."""
    found = {h for h in hzs.values() if h}
    if len(found) != 1:
        raise CannotRun("--linux-hz: Linux's images give HZ "
                        f"{sorted(found) or 'nowhere'}, not one")
    return found.pop()


def inner_argv(args, output, row) -> list[str]:
    """bench/thread-table's command line inside L1 for one row: this
    one's, without --host-kernel, under L1's KVM, its JSON to output and
    its run folders beside it (L1's own temporary folder dies with L1,
    and a boot that went wrong there is read from its serial.log here)."""
    argv = [sys.executable, str(ROOT / "bench" / "thread-table"),
            "--no-build", "--accel", "kvm", "--rows", row,
            "--runs", str(args.runs), "--timeout", f"{args.timeout:g}",
            "--output", str(output), "--keep", str(output.parent / "runs")]
    for flag in ("quick", "hyperv", "linux_hz", "no_linux"):
        if getattr(args, flag):
            argv.append("--" + flag.replace("_", "-"))
    if args.vcpus:
        argv += ["--vcpus", str(args.vcpus)]
    return argv


def run_nested(args):
    """The table inside --host-kernel as L1, one inner run per row:
    Linux's images fetched here (L1 has the checkout, not apt), the table
    printed from what L1 wrote. An L1 that ends before its rows do (under
    a TCG L0 it dies every few L2 boots) is booted again for the rest
    (nested.run_until_done()); the exit status is the worst row's,
    EXIT_FAILED for a row that never finished."""
    try:
        kernel = hostkernel.resolve(args.host_kernel)
    except hostkernel.HostKernelError as err:
        raise CannotRun(f"host kernel {args.host_kernel}: {err}") from None
    linux_kernels(args)
    out = Path(args.output)
    share = out.parent / (out.stem + "-l1")
    share.mkdir(parents=True, exist_ok=True)
    l0 = nested.choose_l0(*kvm_lib.flavour_works(ROOT,
                                                 hostinfo.qemu_version()))
    print(f"inside L1 {kernel.describe()} under {l0.accel} ({l0.why})",
          flush=True)
    per_row = args.runs * (len(threadtable.CONFIGS) + 2) * args.timeout
    commands = [inner_argv(args, share / f"{row}.json", row)
                for row in args.rows]
    try:
        outcome = nested.run_until_done(
            kernel, commands, args.rows, [per_row] * len(args.rows), share,
            l0, log=lambda line: print(f"bench/thread-table: {line}",
                                       file=sys.stderr, flush=True))
    except nested.NestedError as err:
        raise CannotRun(f"L1 {args.host_kernel}: {err}") from None
    left = [row for row, rc in zip(args.rows, outcome.statuses)
            if rc is None]
    docs = []
    for row in args.rows:
        try:
            docs.append(json.loads((share / f"{row}.json").read_text()))
        except (OSError, ValueError):
            pass
    if not docs:
        print("bench/thread-table: L1 wrote no row", file=sys.stderr)
        return EXIT_FAILED
    rows = [r for doc in docs for r in threadtable.rows_from_json(doc["rows"])]
    releases = {s: v["release"] for doc in docs
                for s, v in doc.get("linux", {}).items()}
    print("\n" + "\n".join(threadtable.table(
        rows, docs[0].get("runs", args.runs), releases, "kvm", args.quick,
        args.vcpus)))
    jsonfile.write(out, {**docs[0], "rows": [threadtable.row_json(r)
                                             for r in rows],
                         "host_kernel": kernel.describe(),
                         "unfinished_rows": left})
    print(f"raw timings: {shown(out)}", flush=True)
    return EXIT_FAILED if left else max(outcome.statuses)


def linux_lpj(hz):
    """The lpj= Linux gets in a preset row: this host's TSC per jiffy at
    Linux's own HZ, as lpj=host gives hvprobe at its."""
    words = hostinfo.resolve_host_lpj([f"lpj={hostinfo.HOST_LPJ}",
                                       f"hz={hz}"])
    return int(words[0].partition("=")[2])


def boot_linux(vmlinuz, row, mem_mib, accel, lpj, run_dir, timeout):
    """One Linux boot with the referee's initramfs; its figures. A boot
    that reset before the initramfs spoke is booted again, as the referee
    does (referee.BOOTS), and figures say how many did (resets)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    for resets in range(referee.BOOTS):
        if resets:
            (run_dir / serial.LOG).rename(
                run_dir / referee.RESET_LOG.format(resets))
        boot, figs = boot_linux_once(vmlinuz, row, mem_mib, accel, lpj,
                                     run_dir, timeout)
        if not (figs["error"] and referee.reset(boot)):
            break
    figs.update(cmdline=linuxref.cmdline(lpj, (referee.CMDLINE,)),
                kernel=vmlinuz.name, resets=resets)
    # A boot this run did not stop itself (a fatal line stops it too, and
    # says why) says how it ended: a guest that reset looks, in its
    # console, like one that hangs.
    if figs["error"] and (boot.timed_out or not boot.cut_short):
        figs["error"] += f" ({serial.ended(boot, f'{timeout:g}')}" + \
            (f"; each of its {resets + 1} boots reset" if resets else "") + ")"
    return figs


def boot_linux_once(vmlinuz, row, mem_mib, accel, lpj, run_dir, timeout):
    """(the Boot, its figures) of one Linux boot in run_dir."""
    initrd = referee.initramfs(run_dir / "initramfs.gz")
    # dyndbg: each TSC-sync check that passed says so (referee.CMDLINE).
    argv = linuxref.qemu_argv(Machine(row.cpu, row.vcpus, row.nodes),
                              mem_mib, accel, vmlinuz, lpj, initrd,
                              extra=(referee.CMDLINE,))
    try:
        boot = linuxref.Boot(run_dir, until=END)
        boot.boot(argv, timeout)
    finally:
        initrd.unlink(missing_ok=True)
    return boot, threadtable.linux_figures(
        boot.lines(), (run_dir / serial.LOG).read_text(errors="replace"),
        row.vcpus)


def linux_kernels(args):
    """({series: vmlinuz}, {series: release}) of the Linux rows, none
    with --no-linux; CannotRun when a series cannot be had."""
    kernels, releases = {}, {}
    if not args.no_linux:
        for series in threadtable.LINUX:
            try:
                kernels[series] = linuxref.ensure_series(series, log=print)
            except linuxref.LinuxError as err:
                raise CannotRun(f"Linux {series}: {err}") from None
            releases[series] = kernels[series].name.removeprefix("vmlinuz-")
    return kernels, releases


def write_timings(args, rows, kernels, releases):
    """Every raw timing, as JSON, to --output."""
    doc = {"schema": 1, "benchmark": "lpj-thread-table",
           "accel": args.accel, "quick": args.quick, "vcpus": args.vcpus,
           "runs": args.runs,
           "finished": datetime.datetime.now().isoformat(timespec="seconds"),
           "linux": {s: {"vmlinuz": str(v), "release": releases[s]}
                     for s, v in kernels.items()},
           "host_cpus": os.cpu_count(),
           "rows": [threadtable.row_json(row) for row in rows]}
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    jsonfile.write(Path(args.output), doc)
    print(f"raw timings: {shown(args.output)}", flush=True)


def main(argv):
    args = parse_args(argv)
    if shutil.which(qemu.qemu_binary()) is None:
        raise CannotRun(f"{qemu.qemu_binary()} is not installed")
    if not args.no_build:
        failed = cli.build(ROOT)
        if failed:
            raise CannotRun(failed)
    if args.host_kernel:
        return run_nested(args)
    kernels, releases = linux_kernels(args)
    pairs = rows_and_specs(args.rows, args.accel, args.quick,
                           threadtable.HYPERV_CPU if args.hyperv else None,
                           args.vcpus)
    for row, _ in pairs:
        for series, vmlinuz in kernels.items():
            row.linux_hz[series] = threadtable.config_hz(vmlinuz)
            row.linux.setdefault(series, [])
    hz = linux_hz(pairs[0][0].linux_hz) if args.linux_hz and pairs else None
    kvm = batch.kvm_state()
    failed = 0
    total = args.runs * len(pairs) * (len(threadtable.CONFIGS) + len(kernels))
    done = 0
    with tempfile.TemporaryDirectory(prefix="thread-table-") as tmp:
        workdir = Path(args.keep or tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        for r in range(1, args.runs + 1):
            for row, spec in pairs:
                for policy, bringup in threadtable.CONFIGS:
                    one = hvprobe_spec(spec, row, policy, bringup,
                                       args.accel, args.timeout, r, hz)
                    record, outcome = batch.run_one(one, workdir, kvm)
                    figs = threadtable.hvprobe_figures(
                        outcome.doc if outcome else None)
                    if outcome is None:
                        figs["error"] = f"not run: {record['reason']}"
                    figs["cmdline"] = " ".join(one.cmdline)
                    row.hvprobe.setdefault((policy, bringup), []).append(figs)
                    done += 1
                    failed += figs["ms"] is None
                    say(done, total, f"{row.name} hvprobe {policy} {bringup}",
                        figs)
                for series, vmlinuz in kernels.items():
                    hz = row.linux_hz[series] or hostinfo.KERNEL_HZ
                    lpj = linux_lpj(hz) if row.preset else None
                    figs = boot_linux(vmlinuz, row, spec.mem_mib, args.accel,
                                      lpj, results.new_dir(
                                          workdir, f"linux-{series}-"
                                          f"{row.name}-r{r}"), args.timeout)
                    row.linux[series].append(figs)
                    done += 1
                    failed += figs["error"] is not None
                    say(done, total, f"{row.name} Linux {series}", figs)
    rows = [row for row, _ in pairs]
    print("\n" + "\n".join(threadtable.table(rows, args.runs, releases,
                                             args.accel, args.quick,
                                             args.vcpus)))
    write_timings(args, rows, kernels, releases)
    if failed:
        print(f"bench/thread-table: {failed} boot{'s' if failed != 1 else ''}"
              " gave no bring-up time or no calibration count",
              file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


def say(done, total, what, figs):
    if figs["ms"] is None:
        said = f"FAILED: {figs['error']}"
    elif figs["error"]:
        # The bring-up was timed, but what it did is not known.
        said = f"{figs['ms']:.1f} ms, APs calibrated unknown: {figs['error']}"
    else:
        said = f"{figs['ms']:.1f} ms, {figs['ap_calibrations']} APs calibrated"
    print(f"[{done}/{total}] {what}: {said}", flush=True)
