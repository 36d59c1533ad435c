# SPDX-License-Identifier: MIT
"""tools/linux-referee: boot Debian's Linux and hvprobe on the same
machine and hold hvprobe's lpj policy to what Linux itself did: how many
APs calibrated, and where the boot CPU's lpj came from.

Linux 6.1 is judged against hvprobe's lpj_policy=linux-6.1 with serial
bring-up, Linux 6.12 against lpj_policy=linux-6.5 with bringup=linux-6.5
bring-up. Linux boots with a busybox initramfs that prints each CPU's
bogomips (a copied lpj equals its source to the last digit) and its
calibration and TSC lines (tools/lib/referee.py). Linux's kernel is
fetched as --host-kernel fetches it: never installed.

Exit status: 0 hvprobe and Linux agree on every kernel, 1 they disagree
or a boot failed, 2 bad usage, 3 it could not run.
"""

import json
import sys

from tools import ROOT
from tools.lib import cli, referee
from tools.lib.analysis import figures, results
from tools.lib.hostkernels import hostkernel
from tools.lib.launch import guest, qemu
from tools.lib.status import Status

# hvprobe's policy and bring-up that claim to be each Linux's.
POLICIES = {"6.1": ("linux-6.1", "serial"), "6.12": ("linux-6.5", "linux-6.5")}
# hvprobe's boot CPU lpj sources, in Linux's words (calibrate_delay()).
SOURCES = {"lpj_fine": "lpj_fine", "calibrate": "calibrate",
           "cmdline": "preset", "kvmclock": "preset", "hyperv": "preset",
           "kvm": "preset", "cpuid": "lpj_fine"}
TIMEOUT_S = 300


def parse_args(argv):
    p = cli.parser("tools/linux-referee", __doc__)
    p.add_argument("--series", default=",".join(POLICIES),
                   help="Linux series to boot, comma-separated "
                        "(default: %(default)s)")
    p.add_argument("--smp", type=int, default=4, metavar="N")
    p.add_argument("--numa", type=int, default=2, metavar="N",
                   help="nodes, one package each (default: 2)")
    p.add_argument("--mem", default="512M", metavar="SIZE")
    p.add_argument("--accel", choices=qemu.ACCELS, default="auto")
    p.add_argument("--cpu", metavar="MODEL",
                   help="CPU model (default: the accelerator's, as tools/run)")
    p.add_argument("--name", default="referee", metavar="NAME")
    cli.results_option(p, ROOT, "where the referee's folder goes")
    cli.no_build(p)
    args = p.parse_args(argv)
    args.series = [s for s in args.series.split(",") if s]
    unknown = [s for s in args.series if s not in POLICIES]
    if unknown or not args.series:
        p.error(f"--series takes {', '.join(POLICIES)}")
    if not 1 <= args.smp <= 64 or not 0 <= args.numa <= args.smp:
        p.error("--smp takes 1..64 and --numa 0..smp")
    try:
        args.mem_mib = qemu.parse_size(args.mem)
        qemu.numa_args(args.mem_mib, args.smp, args.numa or 1)
    except qemu.ConfigError as err:
        p.error(str(err))
    return args


def hvprobe_side(machine, policy, bringup, run_dir, kvm_ok):
    """(calibrations, BSP source in Linux's words, verdict) of hvprobe
    under policy on machine."""
    words = ["test=smp,lpj", f"lpj_policy={policy}", f"bringup={bringup}"]
    run_dir.mkdir(parents=True, exist_ok=True)
    outcome = guest.run(machine, words, run_dir, TIMEOUT_S, kvm_ok=kvm_ok)
    smp = figures.data(outcome.doc, "smp") or {}
    aps = figures.records(outcome.doc, "smp", "ap")
    # APs only: both kernels' boot CPUs take lpj_fine from the TSC rate,
    # which each measured against a timer (smp's "calibrations" counts
    # that too).
    measured = sum(1 for ap in aps if ap.get("lpj_source") == "calibrate") \
        if aps else None
    return (measured, SOURCES.get(smp.get("lpj_source")),
            outcome.doc["verdict"])


def main(argv):
    args = parse_args(argv)
    if not args.no_build:
        failed = cli.build(ROOT)
        if failed:
            raise guest.CannotRun(failed)
    folder = results.new_dir(args.results, args.name)
    kvm_ok = guest.kvm_ok_for(args.accel)
    accel, model = qemu.resolve_accel(args.accel, kvm_ok)
    machine = qemu.Machine(boot="kernel", smp=args.smp, numa=args.numa,
                           mem_mib=args.mem_mib, accel=accel,
                           cpu=args.cpu or model)
    print(f"machine: {accel}, -cpu {machine.cpu}, {args.smp} vCPUs on "
          f"{args.numa or 1} node(s), one package each", flush=True)
    rows, agree = [], True
    for series in args.series:
        policy, bringup = POLICIES[series]
        try:
            kernel = hostkernel.fetch_debian(series)
        except hostkernel.HostKernelError as err:
            raise guest.CannotRun(f"Linux {series}: {err}") from None
        linux = referee.run(kernel.vmlinuz, machine, folder / f"linux-{series}",
                            kvm_ok, timeout=TIMEOUT_S)
        ours = hvprobe_side(machine, policy, bringup,
                            folder / f"hvprobe-{policy}", kvm_ok)
        row = {"series": series, "release": kernel.release,
               "policy": policy, "bringup": bringup,
               "linux": linux.to_json() if linux else None,
               "hvprobe": {"calibrations": ours[0], "bsp_lpj_source": ours[1],
                           "verdict": ours[2]}}
        row["agree"] = bool(linux and ours[2] == Status.PASS and
                            linux.calibrations == ours[0] and
                            linux.bsp_source == ours[1])
        agree &= row["agree"]
        rows.append(row)
        said = f"{linux.calibrations} calibrated, boot CPU {linux.bsp_source}" \
            + (f", TSC unstable: {linux.tsc_unstable}" if linux.tsc_unstable
               else "") if linux else "never finished"
        print(f"Linux {kernel.release}: {said}\n"
              f"hvprobe lpj_policy={policy} bringup={bringup}: {ours[0]} "
              f"calibrated, boot CPU {ours[1]} ({ours[2]})\n"
              f"{'AGREE' if row['agree'] else 'DISAGREE'}  {series}",
              flush=True)
    doc = {"schema": results.SCHEMA, "kind": "referee",
           "machine": {"accel": accel, "cpu": machine.cpu, "vcpus": args.smp,
                       "nodes": args.numa}, "rows": rows, "agree": agree}
    (folder / "referee.json").write_text(json.dumps(doc, indent=1) + "\n")
    print(f"results: {guest.shown(folder)}")
    return 0 if agree else 1


EXITS = {guest.CannotRun: 3}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
