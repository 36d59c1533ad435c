# SPDX-License-Identifier: MIT
"""SMP bring-up benchmark: hvprobe against Debian's Linux in the same QEMU.

Sweeps vCPUs x NUMA nodes x lpj mode (hvprobe calibrates on every AP,
reuses one calibration per node, takes lpj= preset, or follows Linux
6.1's or 6.5's rule) x bring-up order (serial, parallel) for each CPU
model: the bench-smp matrix (tools/matrices/bench-smp.toml), narrowed to
the options given. It boots Debian's own Linux kernel
(linux-image-cloud-amd64 6.1, no root filesystem; unpacked into
build/linux-ref/, never installed) in the same QEMU
machine with and without lpj= beside the serial preset and 6.1-rule rows,
and the same package's 6.12 (unpacked from the apt sources' backports
suite, not installed) beside the parallel 6.5-rule rows. A kernel that
prints nothing on the serial port for 20 s does not boot here (Debian's
under this machine's KVM); it is reported and not booted again.

hvprobe's figures are its smp DATA line's (total_us: from the first INIT
to the last AP online, by the guest's TSC; calibrations). Linux
is timed from host timestamps taken as each serial line arrives, because
its own clock undercounts up to 5x under TCG: from 'x86: Booting SMP
configuration' to 'smp: Brought up'. NUMA is -smp N,sockets=M with one
node per socket, because Linux shares a calibrated lpj within a package,
not a node. -cpu Skylake-Client has a constant TSC (Linux reuses lpj
within a socket); -cpu qemu64 has none (every Linux AP calibrates).

Prints a table (min and median of --runs: the host may be shared and
noisy) and writes every raw timing to results/bench-smp-<date-time>.json
(results/bench-smp.json links to the last), so that a new sweep never
overwrites an earlier one.

After the table, each machine and lpj mode's serial and concurrent
(bringup=parallel) rows are judged: concurrent must not be slower than
serial beyond the noise of their repeats (bench/lib/concurrency.py).

Exit status: 0 every run gave a time and concurrent bring-up was never
slower than serial beyond noise, 1 some run gave no time, some row was
slower or the reference kernel is missing, 2 bad usage, 3 the benchmark could not run (build,
QEMU), 130 interrupted (the JSON then holds what was measured).
"""

import argparse
import datetime
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.lib import concurrency, linuxref, options, sidebyside
from bench.lib.sidebyside import Machine
from tools import ROOT, TOOLS
from tools.lib import cli
from tools.lib.base import jsonfile, seconds
from tools.lib.analysis import figures, results
from tools.lib.base.exits import (EXIT_CANNOT_RUN, EXIT_FAILED, EXIT_OK,
                                  CannotRun)
from tools.lib.launch import batch, qemu, serial
from tools.lib.launch import scenario as scen
from tools.lib.launch.guest import shown
from tools.lib.launch.progress import Progress

SCHEMA = 2
# $QEMU, else qemu-system-x86_64 (tools/lib/launch/qemu.py).
QEMU = qemu.qemu_binary()
MATRIX = TOOLS / "matrices" / "bench-smp.toml"
QUICK_VCPUS = (1, 4, 16)


class Fatal(Exception):
    """A precondition failed in a way the user must fix (exit 1)."""


# What tools/entry.py turns into an exit status, with the message.
EXITS = {Fatal: EXIT_FAILED, CannotRun: EXIT_CANNOT_RUN}


def sweep_table():
    """The bench-smp matrix's [[cross]] table: its base and its axes."""
    return scen.read_file(MATRIX)["cross"][0]


def sweep_timeout():
    """The sweep table's timeout, 300 s when it states none."""
    try:
        return seconds.finite(sweep_table().get("timeout", 300))
    except ValueError as err:
        raise Fatal(f"{MATRIX}: timeout {err}") from None


def int_list(text):
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a comma list of numbers") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give numbers >= 1")
    return list(dict.fromkeys(values))


def choice_list(choices):
    def parse(text):
        values = [v.strip() for v in text.split(",") if v.strip()]
        bad = [v for v in values if v not in choices]
        if not values or bad:
            raise argparse.ArgumentTypeError(
                f"{text!r}: pick from {', '.join(choices)}")
        return list(dict.fromkeys(values))
    return parse


def sweep_options(p, cpus, vcpus, nodes, lpj_modes, bringups):
    """The sweep's options, their defaults the sweep table's axes."""
    p.add_argument("--quick", action="store_true",
                   help="a small subset: vCPUs 1,4,16, nodes 1,4, one run "
                        "(a few minutes); options given explicitly still win")
    p.add_argument("--runs", type=int, metavar="N",
                   help="boots per configuration and kernel (default: 3, "
                        "1 with --quick)")
    p.add_argument("--vcpus", type=int_list, metavar="LIST",
                   help="comma list of vCPU counts (default: "
                        f"{','.join(map(str, vcpus))}; --quick: "
                        f"{','.join(map(str, QUICK_VCPUS))})")
    p.add_argument("--nodes", type=int_list, metavar="LIST",
                   default=list(nodes),
                   help="comma list of NUMA node counts, one socket per "
                        "node; vCPU counts that do not split evenly are "
                        f"skipped (default: {','.join(map(str, nodes))})")
    p.add_argument("--cpu", action="append", metavar="MODEL",
                   help="QEMU CPU model, repeatable (default: "
                        f"{' and '.join(cpus)}); the table has a "
                        "section per model")
    p.add_argument("--lpj-modes", type=choice_list(lpj_modes),
                   default=lpj_modes, metavar="LIST",
                   help="hvprobe lpj modes: none (every AP calibrates), "
                        "node (one calibration per node), preset (lpj=), "
                        "linux61 and linux65 (lpj_policy=linux-6.1, "
                        "linux-6.5) (default: all five)")
    p.add_argument("--bringup", type=choice_list(bringups),
                   default=bringups, metavar="LIST",
                   help="AP start-up orders (default: "
                        f"{','.join(bringups)})")
    p.add_argument("--lpj", type=int, metavar="N",
                   help="the preset lpj for hvprobe's preset rows and "
                        "Linux's lpj= (default, per CPU model: the BSP's "
                        "lpj, tsc_khz*1000/250, from a 2-vCPU hvprobe run "
                        "of test=smp,lpj, else from Linux's 'Calibrating "
                        "delay loop' line)")
    kernels = p.add_mutually_exclusive_group()
    kernels.add_argument("--no-linux", action="store_true",
                         help="boot hvprobe only")
    kernels.add_argument("--no-hvprobe", action="store_true",
                         help="boot Linux only (its figures sit in the rows "
                              "they would be compared with)")
    options.machine(p, mem="256M",
                    timeout=sweep_timeout(),
                    keep="every run folder (hvprobe and Linux) in DIR "
                         "instead of a temporary folder")
    p.add_argument("--output", metavar="PATH",
                   help="JSON with every raw timing, rewritten as the sweep "
                        "goes (default: results/bench-smp-DATE-TIME.json, "
                        "linked from results/bench-smp.json)")


def parse_args(argv):
    axes = sweep_table()["axes"]
    cpus, vcpus, nodes = axes["cpu"], axes["vcpus"], axes["numa"]
    lpj_modes, bringups = list(axes["lpj"]), list(axes["bringup"])
    p = cli.parser("bench/smp", __doc__)
    sweep_options(p, cpus, vcpus, nodes, lpj_modes, bringups)
    cli.no_build(p)
    args = p.parse_args(argv)

    if args.output is None:
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        args.output = str(ROOT / "results" / f"bench-smp-{stamp}.json")
        args.link = ROOT / "results" / "bench-smp.json"
    else:
        args.link = None
    if args.runs is None:
        args.runs = 1 if args.quick else 3
    if args.runs < 1:
        p.error("--runs must be at least 1")
    if args.vcpus is None:
        args.vcpus = list(QUICK_VCPUS if args.quick else vcpus)
    if max(args.vcpus) > 255:
        p.error("--vcpus above 255 need x2APIC IDs, which this benchmark's "
                "machine does not set up")
    args.cpu = list(dict.fromkeys(args.cpu or cpus))
    for model in args.cpu:
        if not re.fullmatch(r"[A-Za-z0-9][\w.+=,-]*", model):
            p.error(f"--cpu {model!r} is not a QEMU CPU model")
    if args.lpj is not None and args.lpj < 1:
        p.error("--lpj must be positive")
    if args.accel == "kvm" and not qemu.kvm_device_ok():
        p.error("--accel kvm, but /dev/kvm cannot be opened read-write")
    try:
        args.mem_mib = qemu.parse_size(args.mem)
        uneven = [k for k in args.nodes if args.mem_mib % k]
        if uneven:
            raise qemu.ConfigError(f"--mem {args.mem_mib}M does not split "
                                   f"into {uneven[0]} nodes of whole MiB")
        args.specs, args.skipped = sweep(args)
    except (qemu.ConfigError, scen.ScenarioError) as err:
        p.error(str(err))
    return args


def sweep(args, **axes):
    """(specs, skipped) of the bench-smp matrix's sweep narrowed to the
    options, or to the axes given (cpu=[...], vcpus=[...], ...), one boot
    each; skipped says which vCPU counts do not split into which nodes."""
    table = sweep_table()
    full = table["axes"]
    wanted = {"cpu": args.cpu, "vcpus": args.vcpus, "numa": args.nodes,
              "lpj": {m: full["lpj"][m] for m in args.lpj_modes},
              "bringup": {b: full["bringup"][b] for b in args.bringup}}
    table["axes"] = {axis: axes.get(axis, wanted[axis]) for axis in wanted}
    table.update(mem=f"{args.mem_mib}M", timeout=args.timeout)
    specs, _ = scen.cross(table, shown(MATRIX), shown(MATRIX))
    # Linux 6.5's bring-up shape is Linux 6.5's experiment: under its lpj
    # policy only.
    specs = [s for s in specs if s.axes["bringup"] != "linux65"
             or s.axes["lpj"] == "linux65"]
    for spec in specs:
        spec.accel = args.accel
    there = {(s.cpu, s.vcpus, s.numa) for s in specs}
    skipped = [f"{n} vCPUs x {k} nodes: the vCPUs do not split into {k} "
               "sockets" for cpu in table["axes"]["cpu"]
               for n in table["axes"]["vcpus"]
               for k in table["axes"]["numa"] if (cpu, n, k) not in there]
    return specs, list(dict.fromkeys(skipped))


def preset(spec, lpj):
    """spec with lpj= set to the value learned for its CPU model, in the
    preset rows."""
    if spec.axes.get("lpj") == "preset" and lpj is not None:
        spec.cmdline = scen.merge_cmdline(spec.cmdline, [f"lpj={lpj}"])
    return spec


def qemu_version():
    try:
        out = subprocess.run([QEMU, "--version"], capture_output=True,
                             text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.splitlines()[0] if out else None


def package_version(vmlinuz):
    """The Debian package version of the reference kernel, if dpkg knows."""
    release = vmlinuz.name.removeprefix("vmlinuz-")
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f", "${Version}",
                              f"linux-image-{release}"],
                             capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None


# --- hvprobe ---------------------------------------------------------------

def smp_data(doc):
    """(summary, APs) of the smp test's DATA in a results document."""
    return figures.data(doc, "smp") or {}, figures.records(doc, "smp", "ap")


def hvprobe_record(spec, doc, stderr=()):
    """The JSON record of one hvprobe boot of spec, from its results
    document (None when the run could not start): its figures from the
    smp DATA line, with "ms" None and an "error" when it gave no bring-up
    time. stderr: what QEMU said there, as lines."""
    rec = {"ms": None, "error": None, "cmdline": " ".join(spec.cmdline)}
    if doc is None:
        return rec
    smp, aps = smp_data(doc)
    rec.update({
        "cpus": smp.get("cpus"),
        "aps": len(aps),
        "verdict": doc.get("verdict"), "exit_status": doc.get("exit_status"),
        "wall_s": (doc.get("timing") or {}).get("wall_s"),
        "calibrations": smp.get("calibrations"),
        "cal_ticks": (smp.get("cal_ticks") or {}).get("median"),
        "cal_ms": None if not isinstance((smp.get("cal_us") or {}).get(
            "median"), int) else round(smp["cal_us"]["median"] / 1000.0, 3),
        "linux_direct_ticks": smp.get("linux_direct_ticks"),
        "hz": smp.get("hz"),
        "calibrate_concurrency": smp.get("calibrate_concurrency"),
        "calibrations_serialized": smp.get("calibrations_serialized"),
        "waited": (smp.get("wait_us") or {}).get("n"),
        "lpj_source": smp.get("lpj_source"),
        "guest_total_us": smp.get("total_us"),
        "per_ap_us": smp.get("per_ap_us"),
        "data": [obj for _, obj in figures.data_objects(doc)],
        "qemu": doc.get("qemu"),
    })
    why = results.first_problem(doc) or f"verdict {doc.get('verdict')}"
    total = smp.get("total_us")
    if not isinstance(total, (int, float)) or isinstance(total, bool):
        rec["error"] = f"no smp DATA line with total_us; {why}"
    elif smp.get("cpus") != spec.vcpus:
        rec["error"] = f"brought up {smp.get('cpus')} of {spec.vcpus} " \
            f"CPUs; {why}"
    else:
        rec["ms"] = round(total / 1000.0, 3)
    if rec["error"]:
        # QEMU's own complaint (a bad -cpu, say) is the likeliest why.
        said = [line for line in stderr if ": warning: " not in line]
        if said:
            rec["error"] += f" ({said[-1]})"
    elif doc.get("verdict") != "pass":
        # The DATA is there, so the time stands; say why the run is not a
        # pass all the same.
        rec["warning"] = why
    return rec


# --- Linux -------------------------------------------------------------------

def run_linux(args, machine, vmlinuz, lpj, workdir, name, unbootable=None):
    """One Linux boot, in a run folder of its own; a record for the JSON.
    unbootable: {vmlinuz: why} of kernels found not to boot here; one
    that stays silent is added, and one listed is not booted again."""
    argv = linuxref.qemu_argv(machine, args.mem_mib, args.accel, vmlinuz,
                              lpj)
    rec = {"ms": None, "error": None, "cmdline": linuxref.cmdline(lpj),
           "qemu": argv, "kernel": Path(vmlinuz).name}
    if unbootable is not None and str(vmlinuz) in unbootable:
        rec["error"] = f"not run: {unbootable[str(vmlinuz)]}"
        return rec
    try:
        run_dir = results.new_dir(workdir, name)
        boot = linuxref.boot(argv, run_dir, args.timeout)
    except serial.CannotStart as err:
        raise CannotRun(str(err)) from None
    except OSError as err:
        raise CannotRun(f"cannot make a run folder in {workdir}: "
                        f"{err}") from None
    if args.keep:
        rec["run"] = str(run_dir)
    b = linuxref.parse(boot.lines())
    rec.update({"start_s": b["start_s"], "end_s": b["end_s"],
                "start_marker": b["start_marker"], "cpus": b["cpus"],
                "nodes": b["nodes"], "lpj": b["lpj"],
                "wall_s": round(boot.wall, 3),
                "exit_status": boot.exit_status})
    if b["ms"] is None:
        if boot.silent:
            why = (f"no serial output in {linuxref.SILENCE_S} s: "
                   f"{Path(vmlinuz).name} does not boot on this host's "
                   f"{args.accel.upper()}")
            if unbootable is not None:
                unbootable[str(vmlinuz)] = why
            rec["error"] = why
            return rec
        if boot.timed_out:
            why = f"timed out after {args.timeout:g} s"
        elif b["fatal"]:
            why = f"'{b['fatal']}'"
        else:
            why = f"QEMU exited with status {boot.exit_status}"
            err = boot.stderr_lines()
            if err:
                why += f" ({err[-1]})"
        missing = "'x86: Booting SMP configuration'" \
            if b["start_s"] is None and b["end_s"] is not None \
            else "'smp: Brought up'"
        rec["error"] = f"no {missing} line: {why}"
    elif b["cpus"] != machine.vcpus:
        rec["error"] = f"brought up {b['cpus']} of {machine.vcpus} CPUs"
    else:
        rec["ms"] = round(b["ms"], 3)
    return rec


# --- the sweep -------------------------------------------------------------

def describe(machine, kernel, label, r, runs):
    return (f"{machine.cpu} {machine.vcpus:>2} vCPUs {machine.nodes} node"
            f"{'s' if machine.nodes > 1 else ' '} {kernel:7} {label:<17}"
            f" run {r + 1}/{runs}")


def outcome(rec):
    if rec["ms"] is None:
        return f"FAILED: {rec['error']}"
    text = f"{rec['ms']:.1f} ms"
    if rec.get("calibrations") is not None:
        text += f", {rec['calibrations']} calibrations"
    if rec.get("warning"):
        text += f" (not a pass: {rec['warning']})"
    return text


def write_json(path, doc, link=None):
    """doc into path, whole (jsonfile.write()); link, if
    given, then points at it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    jsonfile.write(path, doc)
    if link is not None:
        tmp = link.with_name(f".{link.name}.{os.getpid()}")
        try:
            os.symlink(path.name if path.parent == link.parent else
                       str(path), tmp)
            os.replace(tmp, link)
        except OSError:
            pass


class Bench:
    """The sweep and what it has measured so far, so that an interrupted
    sweep can still print and save its rows."""

    def __init__(self, args, workdir):
        self.args, self.workdir = args, workdir
        self.rows, self.meta, self.lpjs = [], None, {}
        self.failed = 0
        self.vmlinuz = None
        self.backport = None        # the 6.12 image, where one is offered
        self.backport_why = None
        self.unbootable = {}        # vmlinuz -> why it does not boot here
        self.progress = None
        self.kvm = batch.kvm_state()

    def prepare(self):
        args = self.args
        if shutil.which(QEMU) is None:
            raise CannotRun(f"{QEMU} is not installed (make deps installs "
                            "it)")
        if not args.no_linux:
            try:
                self.vmlinuz = linuxref.ensure_vmlinuz(log=print)
            except linuxref.LinuxError as err:
                raise Fatal(str(err)) from None
        if not args.no_hvprobe and not args.no_build:
            failed = cli.build(ROOT)
            if failed:
                raise CannotRun(failed)
        self.plan_rows()
        self.meta = self.describe()
        for why in args.skipped:
            print(f"skipped: {why}")
        hv = 0 if args.no_hvprobe else len(self.rows)
        self.total = args.runs * (hv + len(self.linux_rows))
        print(f"{self.total} boots: {len(self.machines)} machines x "
              f"{args.runs} run{'s' if args.runs > 1 else ''} x "
              f"({hv} hvprobe + {len(self.linux_rows)} Linux configurations)"
              f"; raw timings to {shown(args.output)}", flush=True)

    def plan_rows(self):
        """The rows, the machines, and the Linux runs they carry (none
        for a variant whose image could not be had)."""
        args = self.args
        self.rows = sidebyside.rows_for(args.specs)
        self.machines = list(dict.fromkeys(r.machine for r in self.rows))
        wants_backport = any(r.linux in linuxref.BACKPORT_VARIANTS
                             for r in self.rows)
        if not args.no_linux and wants_backport:
            try:
                self.backport = linuxref.ensure_backport(log=print)
            except linuxref.LinuxError as err:
                self.backport_why = str(err)
                print(f"no Linux {linuxref.BACKPORT_SERIES} rows: {err}")
        for row in self.rows:
            if args.no_linux or (row.linux in linuxref.BACKPORT_VARIANTS
                                 and self.backport is None):
                row.linux = None
        # (machine, variant) -> the row that Linux run sits on.
        self.linux_rows = {(r.machine, r.linux): r for r in self.rows
                           if r.linux is not None}
        if not self.rows or (args.no_hvprobe and not self.linux_rows):
            raise Fatal("nothing to run with these options"
                        + "".join(f"; skipped {why}" for why in args.skipped))

    def describe(self):
        """The output's meta block: the method, the host, the options,
        the Linux images."""
        args = self.args
        lx = None
        if self.vmlinuz is not None:
            lx = {"vmlinuz": str(self.vmlinuz), "package": linuxref.PACKAGE,
                  "version": package_version(self.vmlinuz),
                  "backport": None if self.backport is None
                  else str(self.backport),
                  "backport_why_not": self.backport_why}
        return {
            "schema": SCHEMA, "benchmark": "smp-bringup",
            "started": datetime.datetime.now().isoformat(timespec="seconds"),
            "method": "hvprobe: total_us of its smp DATA line (from the "
                      "first INIT to the last AP online, by the guest's "
                      "TSC); "
                      "Linux: host-side timestamps of serial lines as they "
                      "arrive, 'x86: Booting SMP configuration' (with one "
                      "CPU: 'smp: Bringing up secondary CPUs') to 'smp: "
                      "Brought up'",
            "matrix": shown(MATRIX),
            "host": {"machine": platform.node(), "cpus": os.cpu_count(),
                     "qemu": qemu_version()},
            "accel": args.accel, "qemu_machine": "q35, -smp N,sockets=M, "
                                                 "one NUMA node per socket",
            "mem_mib": args.mem_mib, "runs": args.runs,
            "timeout_s": args.timeout, "cpus": args.cpu,
            "vcpus": args.vcpus, "nodes": args.nodes,
            "lpj_modes": args.lpj_modes, "bringups": args.bringup,
            "skipped": args.skipped, "linux": lx,
        }

    def boot_hvprobe(self, spec):
        """(record for the JSON, results document or {}) of one boot,
        the way tools/run --matrix boots each of its runs."""
        record, done = batch.run_one(spec, self.workdir, self.kvm)
        if done is None:
            rec = hvprobe_record(spec, None)
            rec["error"] = f"not run: {record['reason']}"
            return rec, {}
        run_dir = self.workdir / record["run"]
        rec = hvprobe_record(spec, done.doc,
                             serial.Console(run_dir).stderr_lines())
        if self.args.keep:
            rec["run"] = str(run_dir)
        return rec, done.doc

    def learn_lpj(self, model):
        """(lpj, source) for CPU model `model`: --lpj, or the BSP's value
        from a 2-vCPU hvprobe run of the smp and lpj tests, or Linux's
        own BSP line. Both kernels take lpj_fine = tsc_khz * 1000 / HZ
        from a TSC, so either number suits both. The hvprobe run also
        proves that hvprobe brings up an AP on this model at all, before
        hours go into the sweep."""
        args = self.args
        lpj, source = args.lpj, "--lpj" if args.lpj else None
        if not args.no_hvprobe:
            spec = sweep(args, cpu=[model], vcpus=[2], numa=[1],
                         lpj={"none": {}}, bringup={"serial": {}})[0][0]
            spec.name = f"preflight-{spec.name}"
            spec.cmdline = scen.merge_cmdline(spec.cmdline, [
                "test=smp,lpj", "lpj_reuse=none", "bringup=serial"])
            rec, doc = self.boot_hvprobe(spec)
            if rec["ms"] is None:
                raise Fatal(f"hvprobe on -cpu {model} with 2 vCPUs and "
                            f"'{' '.join(spec.cmdline)}' gave no bring-up "
                            f"time: {rec['error']} (--cpu picks other "
                            "models, --no-hvprobe measures Linux alone)")
            found, where = bsp_lpj(doc)
            self.progress.note(f"{model}: hvprobe brings up an AP; "
                               f"{where or 'no lpj'}={found}")
            if lpj is None and found:
                lpj, source = found, f"hvprobe {where}, 2 vCPUs"
        if lpj is None and self.vmlinuz is not None and \
                "preset" in args.lpj_modes:
            one = Machine(model, 1, 1)
            rec = run_linux(args, one, self.vmlinuz, None, self.workdir,
                            f"preflight-linux-{scen.label(model)}")
            said = f"Linux's BSP says lpj={rec['lpj']}" if rec["lpj"] else \
                f"Linux printed no lpj: {rec['error'] or 'no such line'}"
            self.progress.note(f"{model}: {said}")
            if rec["lpj"]:
                lpj, source = rec["lpj"], ("Linux's BSP 'Calibrating delay "
                                           "loop' line, 1 vCPU")
        return lpj, source

    def run(self):
        args = self.args
        self.prepare()
        with Progress(self.total) as self.progress:
            for model in args.cpu:
                lpj, source = self.learn_lpj(model)
                if lpj is None and "preset" in args.lpj_modes:
                    raise Fatal(f"found no lpj to preset on -cpu {model}; "
                                "give --lpj N (tsc_khz * 1000 / 250)")
                if lpj is not None:
                    self.lpjs[model] = (lpj, source)
                    self.progress.note(f"{model}: preset lpj={lpj} "
                                       f"({source})")
            for row in self.rows:
                preset(row.spec, self.lpjs.get(row.machine.cpu,
                                               (None, None))[0])
            repeats = scen.repeated([r.spec for r in self.rows], args.runs)
            self.repeats = {(s.name, s.repeat): s for s in repeats}
            for machine in self.machines:
                self.run_machine(machine)
                # Saved after every machine: a long sweep that is stopped
                # still leaves what it measured.
                write_json(args.output, self.document(complete=False),
                           args.link)

    def run_machine(self, machine):
        args = self.args
        mine = [] if args.no_hvprobe else \
            [r for r in self.rows if r.machine == machine]
        linux = [(v, r) for (m, v), r in self.linux_rows.items()
                 if m == machine]
        lpj = self.lpjs.get(machine.cpu, (None, None))[0]
        for r in range(args.runs):
            # The kernels take turns run by run, so that both see the same
            # spells of host noise.
            for row in mine:
                self.progress.started()
                rec, _ = self.boot_hvprobe(
                    self.repeats[(row.spec.name, r + 1)])
                label = sidebyside.LPJ_LABELS.get(row.lpj_mode, row.lpj_mode)
                mode = sidebyside.BRINGUP_LABELS.get(row.bringup, row.bringup)
                self.record(row.hvprobe_runs, rec, r, describe(
                    machine, "hvprobe", f"{label}/{mode}", r,
                    args.runs))
            for variant, row in linux:
                self.progress.started()
                name = self.repeats[(row.spec.name, r + 1)].run_name
                vmlinuz = self.backport if variant in \
                    linuxref.BACKPORT_VARIANTS else self.vmlinuz
                rec = run_linux(args, machine, vmlinuz,
                                lpj if variant == "lpj" else None,
                                self.workdir, f"linux-{name}",
                                self.unbootable)
                self.record(row.linux_runs, rec, r, describe(
                    machine, "Linux", linuxref.VARIANTS[variant], r,
                    args.runs))

    def record(self, runs, rec, r, what):
        rec["attempt"] = r + 1
        runs.append(rec)
        self.failed += rec["ms"] is None
        self.progress.finished(f"{what}: {outcome(rec)}",
                               failed=rec["ms"] is None)

    def document(self, complete):
        rows = []
        for row in self.rows:
            lpj = self.lpjs.get(row.machine.cpu, (None, None))[0]
            hv_cmd = " ".join(row.spec.cmdline)
            if row.lpj_mode == "preset" and lpj is None:
                hv_cmd = None       # stopped before the preset was known
            lx_cmd = None
            if row.linux is not None:
                lx_cmd = linuxref.cmdline(lpj if row.linux == "lpj" else None)
            rows.append(sidebyside.row_json(row, hv_cmd, lx_cmd))
        return dict(self.meta, complete=complete,
                    finished=datetime.datetime.now().isoformat(
                        timespec="seconds"),
                    lpj={m: {"value": v, "source": s}
                         for m, (v, s) in self.lpjs.items()},
                    rows=rows,
                    concurrency=[j.to_json() for j in
                                 concurrency.judge(self.rows)])

    def linux_ticks(self):
        """(HZ, ticks) of Linux's direct calibration, as the runs' smp DATA
        states it, or None."""
        for row in self.rows:
            for run in row.hvprobe_runs:
                if run.get("linux_direct_ticks") and run.get("hz"):
                    return run["hz"], run["linux_direct_ticks"]
        return None

    def heading(self, complete):
        """The lines above the table: the machine, the kernels (none
        under --no-linux), the preset lpj of each CPU model."""
        args, meta = self.args, self.meta
        head = [f"SMP bring-up: {meta['host']['qemu'] or QEMU}, "
                f"{args.accel.upper()}, q35, -m {args.mem_mib}M, one socket "
                "per NUMA node"]
        lx = meta["linux"]
        if lx:
            head.append(f"Linux: {Path(lx['vmlinuz']).name}"
                        + (f" ({lx['version']})" if lx["version"] else ""))
            if lx.get("backport"):
                head.append(f"Linux {linuxref.BACKPORT_SERIES}: "
                            f"{Path(lx['backport']).name}")
        for model, (value, source) in self.lpjs.items():
            head.append(f"preset lpj on {model}: {value} ({source})")
        for why in self.unbootable.values():
            head.append(f"Linux not booted again: {why}")
        if not complete:
            head.append("INCOMPLETE: the sweep was stopped; rows without "
                        "runs show -")
        return head

    def finish(self, complete):
        args = self.args
        write_json(args.output, self.document(complete), args.link)
        head = self.heading(complete)
        print("\n" + "\n".join(head + sidebyside.table(
            self.rows, args.runs, hvprobe=not args.no_hvprobe,
            linux=not args.no_linux, linux_ticks=self.linux_ticks())
            + concurrency.report(self.judgements(),
                                 sidebyside.LPJ_LABELS)))
        print(f"raw timings: {shown(args.output)}", flush=True)

    def judgements(self):
        return [] if self.args.no_hvprobe else concurrency.judge(self.rows)


def bsp_lpj(doc):
    """(lpj, where) for the preset rows from an hvprobe run's results
    document, or (None, None). First choice is the lpj test's "lpj": the
    BSP's value, which under a TSC is lpj_fine = tsc_khz * 1000 / hz, the
    very number Linux prints and would preset; failing that, the first AP
    the smp test lists with a calibrated lpj."""
    def lpj_value(value):
        if isinstance(value, int) and not isinstance(value, bool) \
                and value > 0:
            return value
        return None
    lpj = lpj_value((figures.data(doc, "lpj") or {}).get("lpj"))
    if lpj:
        return lpj, "lpj test: BSP lpj"
    for ap in smp_data(doc)[1]:
        if isinstance(ap, dict) and (v := lpj_value(ap.get("lpj"))):
            return v, f"smp test: APIC ID {ap.get('apic_id')} lpj"
    return None, None


def main(argv):
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-smp-") as tmp:
        workdir = Path(args.keep) if args.keep else Path(tmp)
        try:
            workdir.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise CannotRun(f"cannot make {workdir}: {err}") from None
        bench = Bench(args, workdir)
        try:
            bench.run()
        except KeyboardInterrupt:
            if bench.meta is not None:
                bench.finish(complete=False)
            raise
    bench.finish(complete=True)
    if bench.failed:
        print(f"bench/smp: {bench.failed} boot"
              f"{'s' if bench.failed != 1 else ''} gave no bring-up time",
              file=sys.stderr)
        return EXIT_FAILED
    slower = concurrency.failures(bench.judgements())
    if slower:
        print(f"bench/smp: concurrent bring-up slower than serial beyond "
              f"noise in {len(slower)} row{'s' if len(slower) != 1 else ''}",
              file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK
