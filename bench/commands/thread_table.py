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

Prints the table and writes every run to
results/thread-table-DATE-TIME.json.

Exit status: 0 every boot gave a time, 1 some did not, 2 bad usage,
3 it could not run (build, QEMU, no Linux image).
"""

import dataclasses
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
from tools.lib.launch import batch, qemu
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
    cli.no_build(p)
    args = p.parse_args(argv)
    if args.runs is None:
        args.runs = 1 if args.quick else 3
    if args.runs < 1:
        p.error("--runs must be positive")
    args.rows = list(threadtable.ROWS) if args.rows is None else \
        [r for r in args.rows.split(",") if r]
    unknown = [r for r in args.rows if r not in threadtable.ROWS]
    if unknown or not args.rows:
        p.error(f"--rows takes {', '.join(threadtable.ROWS)}")
    if args.output is None:
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        args.output = str(ROOT / "results" / f"thread-table-{stamp}.json")
    return args


def rows_and_specs(names, accel, quick=False):
    """[(threadtable.Row, its scenario RunSpec)] for the named rows."""
    specs = {s.variant: s for s in scen.load_scenario(threadtable.SCENARIO)}
    out = []
    for name in names:
        spec = specs[name]
        row = threadtable.Row(name, spec.cpu_for(accel), spec.vcpus,
                              max(spec.numa, 1),
                              f"lpj={hostinfo.HOST_LPJ}" in spec.cmdline,
                              threadtable.ROWS[name])
        out.append((row, spec))
    if quick:
        threadtable.quick_rows([r for r, _ in out])
    return out


def hvprobe_spec(spec, row, policy, bringup, accel, timeout, repeat):
    """The scenario's spec for one hvprobe line of row."""
    return dataclasses.replace(
        spec, name=f"{spec.name}-{policy}-{bringup}", vcpus=row.vcpus,
        accel=accel, timeout=timeout, repeat=repeat,
        qemu_args=list(spec.qemu_args), axes={},
        cmdline=scen.merge_cmdline(spec.cmdline, [f"lpj_policy={policy}",
                                                  f"bringup={bringup}"]))


def linux_lpj(hz):
    """The lpj= Linux gets in a preset row: this host's TSC per jiffy at
    Linux's own HZ, as lpj=host gives hvprobe at its."""
    words = hostinfo.resolve_host_lpj([f"lpj={hostinfo.HOST_LPJ}",
                                       f"hz={hz}"])
    return int(words[0].partition("=")[2])


def boot_linux(vmlinuz, row, mem_mib, accel, lpj, run_dir, timeout):
    """One Linux boot with the referee's initramfs; its figures."""
    run_dir.mkdir(parents=True, exist_ok=True)
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
    figs = threadtable.linux_figures(
        boot.lines(), (run_dir / serial.LOG).read_text(errors="replace"),
        row.vcpus)
    figs.update(cmdline=linuxref.cmdline(lpj, (referee.CMDLINE,)),
                kernel=vmlinuz.name)
    if figs["error"] and boot.timed_out:
        figs["error"] += f" (timed out after {timeout:g} s)"
    return figs


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
           "accel": args.accel, "quick": args.quick, "runs": args.runs,
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
    kernels, releases = linux_kernels(args)
    pairs = rows_and_specs(args.rows, args.accel, args.quick)
    for row, _ in pairs:
        for series, vmlinuz in kernels.items():
            row.linux_hz[series] = threadtable.config_hz(vmlinuz)
            row.linux.setdefault(series, [])
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
                                       args.accel, args.timeout, r)
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
                    failed += figs["ms"] is None
                    say(done, total, f"{row.name} Linux {series}", figs)
    rows = [row for row, _ in pairs]
    print("\n" + "\n".join(threadtable.table(rows, args.runs, releases,
                                             args.accel, args.quick)))
    write_timings(args, rows, kernels, releases)
    if failed:
        print(f"bench/thread-table: {failed} boot{'s' if failed != 1 else ''}"
              " gave no bring-up time", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


def say(done, total, what, figs):
    said = f"FAILED: {figs['error']}" if figs["ms"] is None else \
        f"{figs['ms']:.1f} ms, {figs['ap_calibrations']} APs calibrated"
    print(f"[{done}/{total}] {what}: {said}", flush=True)
