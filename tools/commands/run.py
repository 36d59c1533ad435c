# SPDX-License-Identifier: MIT
"""Build hvprobe, boot it in QEMU, and judge the run: once, or for every
run of a scenario or a matrix, several at a time.

A single run streams the serial log to the terminal as it arrives and
parses it as KTAP; the run ends with the kernel's totals line, QEMU's exit,
or the timeout. Everything lands in a run folder: serial.log (raw bytes),
serial.times (host seconds since QEMU started, per line), qemu.stderr and
results.json (the schema is docs/results.md).

--scenario NAME and --matrix FILE run many: each run gets a folder in one
batch folder (results/<name>-<date-time>/), listed in its index.json; a
progress line counts done, running and failed runs, and the bring-up
table (tools/report) ends the output.

Exit status: 0 every run passed (or failed as --expect-fail wanted), 1 one
failed or crashed, 2 bad usage (a bad scenario file too), 3 it could not
run (build, media, QEMU), 130 interrupted (Ctrl-C, SIGTERM or SIGHUP; a
batch's index.json keeps the runs so far, and --resume goes on with it).
"""

import datetime
import os
import re
import sys
from pathlib import Path

from tools import ROOT, TOOLS
from tools.lib import cli, hostinfo
from tools.lib.base import seconds, text
from tools.lib.analysis import expected_data, figures, report, results
from tools.lib.base.exits import (EXIT_CANNOT_RUN, EXIT_FAILED, EXIT_OK,
                                  CannotRun)
from tools.lib.hostkernels import hostkernel, nested
from tools.lib.launch import batch, guest, media, qemu
from tools.lib.launch import kvm as kvm_lib
from tools.lib.launch import scenario as scen
from tools.lib.launch.guest import shown
from tools.lib.base.status import Status

MATRICES = TOOLS / "matrices"
# Guests at a time by default, as tools/check and tools/soak: a guest is
# an I/O thread and a thread per vCPU, so one per core would oversubscribe.
DEFAULT_JOBS = 2
# Options that describe one machine; a scenario names its own.
# --accel is not one: it overrides the scenarios' accelerator.
MACHINE_OPTIONS = ("boot", "smp", "numa", "mem", "cpu", "machine",
                   "qemu_arg", "expect_fail", "expect_status", "expect_line",
                   "expect_data", "iso_entry")


def one_run_options(one):
    """The options of one run: its machine, its expectations, its name."""
    one.add_argument("--boot", choices=qemu.BOOTS,
                     help="QEMU's multiboot1 loader, or GRUB from a CD under "
                          "SeaBIOS or OVMF (default: kernel)")
    one.add_argument("--smp", type=int, metavar="N",
                     help="vCPUs (default: 1)")
    one.add_argument("--numa", type=int, metavar="N",
                     help="split memory and vCPUs evenly into N NUMA nodes")
    one.add_argument("--mem", metavar="SIZE",
                     help="guest RAM, e.g. 256M or 2G (default: 256M)")
    one.add_argument("--accel", choices=qemu.ACCELS,
                     help="auto is KVM when /dev/kvm is usable, else TCG "
                          "(default: $HVPROBE_ACCEL or auto)")
    one.add_argument("--cpu", metavar="MODEL",
                     help="CPU model (default: host under KVM, max under "
                          "TCG)")
    one.add_argument("--machine", metavar="TYPE",
                     help="QEMU machine and its options (default: q35)")
    one.add_argument("--qemu-arg", action="append", metavar="ARG",
                     help="extra QEMU argument, repeatable")
    one.add_argument("--timeout", type=seconds.option, metavar="S",
                     help="seconds before a run counts as a crash "
                          "(default: 60, 120 for uefi, or the scenario's)")
    one.add_argument("--name", metavar="NAME",
                     help="run (or batch) folder name (default: "
                          "date-time-boot, or matrix-date-time); a numeric "
                          "suffix keeps runs apart")
    one.add_argument("--expect-fail", metavar="REGEX",
                     help="negative test: succeed only if the run ends with "
                          "its totals line and a not-ok line matches REGEX")
    one.add_argument("--expect-line", metavar="REGEX", action="append",
                     default=[],
                     help="the serial log must have a line matching REGEX "
                          "(repeatable): a diagnostic no KTAP result carries")
    one.add_argument("--expect-data", metavar="PATH=VALUE",
                     action="append", default=[],
                     help="a DATA value the run must print, by its figure "
                          "path (smp.cpus=4, lpj.lpj_source=kvm; TEST#N "
                          "for a test's Nth record); VALUE is read as JSON "
                          "(4, true, \"4\"), else as a string; repeatable")
    one.add_argument("--expect-status", metavar="N", type=int,
                     help="QEMU's exit status must be N (0 for an ACPI "
                          "power-off, exit=acpi)")
    one.add_argument("--iso-entry", metavar="NAME",
                     help="with --boot bios or uefi: boot the build ISO's "
                          "entry NAME (a shipped scenario, NAME.VARIANT), "
                          "picked by a small disk holding "
                          "hvprobe-scenario.cfg as on Hyper-V; the command "
                          "line is the entry's")
    one.add_argument("--quiet", action="store_true",
                     help="do not stream the serial log")


def many_runs_options(many):
    """The options of scenarios and matrices."""
    many.add_argument("--scenario", action="append", metavar="NAME",
                      help="run a scenario: a name from tools/scenarios/ "
                           "(NAME.VARIANT for one variant) or a .toml/.json "
                           "path; repeatable")
    many.add_argument("--matrix", metavar="FILE",
                      help="run every scenario of a matrix: a path, or a "
                           "name from tools/matrices/")
    many.add_argument("-j", "--jobs", type=int, metavar="N",
                      default=min(os.cpu_count() or 1, DEFAULT_JOBS),
                      help="QEMU processes at a time (default: "
                           f"{DEFAULT_JOBS}, or 1 on one core: a guest "
                           "is a QEMU of a thread per vCPU, and more "
                           "at a time would share the cores and skew "
                           "timing)")
    many.add_argument("--repeat", type=int, metavar="N",
                      help="boot each scenario N times (default: the "
                           "matrix's repeat, else 1); tools/compare needs "
                           "repeats to tell noise from change")
    many.add_argument("--format", choices=report.FORMATS, default="text",
                      help="the closing table's format (default: text)")
    many.add_argument("--resume", metavar="DIR",
                      help="go on with the batch folder DIR of an earlier, "
                           "cut short, pass: runs with a results.json there "
                           "are kept, the others run")


def host_kernel_options(host):
    """The options of an L1 host kernel."""
    host.add_argument("--host-kernel", metavar="SERIES|IMAGE",
                      help="boot this kernel as L1 and run everything "
                           "under its KVM, nested: a Debian series (" +
                           ", ".join(hostkernel.SERIES) + "), fetched "
                           "with apt-get download into build/, never "
                           "installed; or a bzImage of your own")
    host.add_argument("--host-modules", metavar="DIR",
                      help="with an image of your own: its modules "
                           "(lib/modules/RELEASE, or a folder holding "
                           "lib/modules/), unless KVM is built in")


def parse_args(argv):
    p = cli.parser(
        "tools/run", __doc__,
        epilog="Words after -- form the kernel command line, joined with "
               "single spaces.\nA QEMU argument that starts with a dash is "
               "written --qemu-arg=-ARG.\n$QEMU names the QEMU binary "
               "(as --qemu does).\nHVPROBE_OVMF_CODE and "
               "HVPROBE_OVMF_VARS name other OVMF images.\n\n"
               "With --scenario or --matrix the machine is the scenario's: "
               "only --accel\nand --timeout override it, and words after -- "
               "are merged into each\nrun's command line (key=value replaces "
               "the scenario's value).\nShipped scenarios: "
               + ", ".join(shipped(scen.SCENARIOS)) + "\nShipped matrices: "
               + ", ".join(shipped(MATRICES)) + "\n\n"
               + __doc__.split("\n\n")[-1].strip())
    one_run_options(p.add_argument_group("one run"))
    many_runs_options(p.add_argument_group("many runs"))
    host_kernel_options(p.add_argument_group("host kernel"))
    cli.results_option(p, ROOT, "where run folders go")
    cli.no_build(p)
    cli.qemu_option(p)
    p.add_argument("cmdline", nargs="*", metavar="WORD",
                   help="kernel command line")
    args = p.parse_args(argv)
    args.parser = p
    if args.name is not None and not re.fullmatch(r"[\w.+-]+", args.name):
        p.error("--name may hold letters, digits and . _ + - only")
    if args.host_kernel and os.environ.get("HVPROBE_NESTED"):
        # The job L1 runs sets it (nested.run): one L1 per command.
        p.error("--host-kernel cannot be given inside L1 "
                "($HVPROBE_NESTED is set)")
    if args.host_modules and not args.host_kernel:
        p.error("--host-modules goes with --host-kernel")
    if args.host_kernel and (args.accel == "tcg" or
                             os.environ.get("HVPROBE_ACCEL") == "tcg"):
        p.error("--host-kernel runs guests under L1's KVM; --accel tcg "
                "would leave it unused")
    if args.scenario or args.matrix:
        return many_args(args)
    return one_args(args)


def one_args(args):
    """The checks and defaults of one run's options."""
    p = args.parser
    if args.repeat is not None or args.format != "text" or args.resume:
        p.error("--repeat, --format and --resume go with --scenario or "
                "--matrix")
    args.accel = cli.accel(p, args.accel, qemu.ACCELS, "auto")
    args.boot = args.boot or "kernel"
    if args.iso_entry is not None:
        if args.boot == "kernel":
            p.error("--iso-entry needs --boot bios or uefi")
        if args.cmdline:
            p.error("--iso-entry boots the entry's own command line; give "
                    "no words after --")
    args.smp = 1 if args.smp is None else args.smp
    args.numa = args.numa or 0
    args.machine = args.machine or "q35"
    args.qemu_arg = args.qemu_arg or []
    try:
        args.mem_mib = qemu.parse_size(args.mem or "256M")
    except qemu.ConfigError as err:
        p.error(str(err))
    if args.timeout is None:
        args.timeout = qemu.BOOT_TIMEOUT_S[args.boot]
    for pattern in args.expect_line:
        try:
            re.compile(pattern)
        except re.error as err:
            p.error(f"bad --expect-line regex: {err}")
    try:
        args.expect_data = dict(expected_data.parse_assignment(a)
                                for a in args.expect_data)
    except ValueError as err:
        p.error(f"bad --expect-data: {err}")
    if args.expect_fail is not None:
        try:
            re.compile(args.expect_fail)
        except re.error as err:
            p.error(f"bad --expect-fail regex: {err}")
    return args


def many_args(args):
    p = args.parser
    if args.scenario and args.matrix:
        p.error("give --scenario or --matrix, not both")
    given = [f"--{o.replace('_', '-')}" for o in MACHINE_OPTIONS
             if getattr(args, o) not in (None, [])]
    if args.quiet:
        given.append("--quiet")
    if given:
        p.error(f"{', '.join(given)} cannot be combined with --scenario or "
                "--matrix (the scenario names its machine)")
    if args.jobs < 1:
        p.error("-j needs at least 1")
    # As for one run: the environment's accelerator overrides the
    # scenarios' as --accel would.
    args.accel = cli.accel(p, args.accel, qemu.ACCELS)
    if args.repeat is not None and not 1 <= args.repeat <= 100:
        p.error("--repeat must be 1..100")
    try:
        if args.matrix:
            path = Path(args.matrix)
            if not path.exists() and not path.suffix:
                found = [MATRICES / f"{args.matrix}{x}"
                         for x in (".toml", ".json")]
                path = next((f for f in found if f.exists()), path)
            specs, left_out, name, repeat = scen.load_matrix(path)
            # make check's own (tools/matrices/check.toml): what only
            # tools/check can run is left out, and said.
            left_out += [f"{s.name}: runs under tools/check only "
                         f"({'host_kernels' if s.host_kernels else 'tool'})"
                         for s in specs if s.host_kernels or s.tool != "run"]
            specs = [s for s in specs if not s.host_kernels
                     and s.tool == "run"]
            args.about = {"name": name, "matrix": shown(path)}
        else:
            specs, left_out, repeat = [], [], 1
            for ref in args.scenario:
                specs += scen.load_scenario(ref)
            name = specs[0].scenario if len(args.scenario) == 1 \
                else "scenarios"
            args.about = {"name": name, "scenarios": args.scenario}
        for spec in specs:
            if args.cmdline:
                spec.cmdline = scen.merge_cmdline(spec.cmdline, args.cmdline)
            if args.accel:
                spec.accel = args.accel
            if args.timeout:
                spec.timeout = args.timeout
        args.specs = scen.repeated(specs, args.repeat or repeat)
    except scen.ScenarioError as err:
        p.error(str(err))
    args.left_out = left_out
    args.batch_name = name
    return args


def shipped(directory):
    """The names of the scenario or matrix files in directory."""
    return sorted(f.stem for f in Path(directory).glob("*.toml")) + \
        sorted(f.stem for f in Path(directory).glob("*.json"))


def build():
    if not (ROOT / "Makefile").exists():
        raise CannotRun(f"no Makefile in {ROOT}")
    failed = cli.build(ROOT)
    if failed:
        raise CannotRun(failed)


def built_and_made(args, name, what):
    """The build (unless --no-build), then the run or batch folder: --name,
    else name with {stamp} the date and time."""
    if not args.no_build:
        build()
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    try:
        made = results.new_dir(args.results,
                               args.name or name.replace("{stamp}", stamp))
    except OSError as err:
        raise CannotRun(f"cannot make the {what} folder: {err}") from None
    if args.results == args.parser.get_default("results"):
        # results/latest: the last run or batch (not the runs of a check
        # or a soak, which name their own folders).
        results.point_latest(made)
    return made


def run_nested(args, argv):
    """This very command inside an L1 host kernel
    (tools/lib/hostkernels/nested.py): the build and the folder here, everything else there, the guests
    under L1's KVM. The folder holds l1/ (L1's console and what it said
    of itself) beside what the command wrote."""
    try:
        kernel = hostkernel.resolve(args.host_kernel, args.host_modules)
    except hostkernel.HostKernelError as err:
        raise CannotRun(f"--host-kernel: {err}") from None
    many = getattr(args, "specs", None) is not None
    name = (args.batch_name + "-{stamp}" if many else "{stamp}-" + args.boot) + \
        f"-on-{kernel.label}"
    folder = built_and_made(args, name, "run")
    inner = cli.without_options(argv, ("--host-kernel", "--host-modules",
                                   "--results", "--name"), ("--no-build",))
    inner = [sys.executable, str(TOOLS / "run"), "--no-build", "--results",
             str(folder), *([] if many else ["--name", "guest"]), *inner]
    timeout = sum(s.timeout_s for s in args.specs) if many else args.timeout
    l0 = nested.choose_l0(*kvm_lib.flavour_works(
        ROOT, hostinfo.qemu_version()))
    print(f"host kernel: {kernel.describe()} as L1 under {l0.accel} "
          f"({l0.why}), results in {shown(folder)}", flush=True)
    try:
        outcome = nested.run(kernel, [inner], folder,
                             timeout + kvm_lib.PROBE_TIMEOUT_S, l0)
    except nested.NestedError as err:
        raise CannotRun(str(err)) from None
    status = outcome.statuses[0]
    print(f"host kernel: {outcome.info.get('release')} "
          f"({outcome.info.get('module')}, enable_pmu="
          f"{outcome.info.get('enable_pmu')}) up in "
          f"{outcome.info.get('boot_s')} s; {outcome.wall_s:.1f} s in all; "
          f"L1's console: {shown(outcome.console)}")
    if status is None:
        print("host kernel: the command never finished inside L1")
        return EXIT_FAILED
    return status


def main(argv):
    args = parse_args(argv)
    cli.use_qemu(args)
    if args.host_kernel:
        return run_nested(args, argv)
    if getattr(args, "specs", None) is not None:
        return run_many(args)
    machine = qemu.Machine(boot=args.boot, smp=args.smp, numa=args.numa,
                           mem_mib=args.mem_mib, accel=args.accel,
                           cpu=args.cpu, machine=args.machine,
                           extra=args.qemu_arg)
    try:
        # Refuse an impossible machine before building anything; whether
        # auto means KVM is known only once there is a kernel to try.
        qemu.qemu_argv(machine, qemu.kvm_device_ok(), kernel="", iso="",
                       vars_file="")
    except qemu.ConfigError as err:
        args.parser.error(str(err))

    run_dir = built_and_made(args, "{stamp}-" + args.boot, "run")
    kvm_ok = guest.kvm_ok_for(machine.accel, machine.boot, machine.cpu)
    accel, _ = qemu.resolve_accel(machine.accel, kvm_ok)
    note = qemu.tcg_tsc_note(machine.cpu) if machine.cpu and \
        accel == "tcg" and machine.smp > 1 else None
    if note:
        print(f"note: {note}", flush=True)
    outcome = guest.run(machine, args.cmdline, run_dir, args.timeout,
                        quiet=args.quiet, expect_status=args.expect_status,
                        expect_fail=args.expect_fail, kvm_ok=kvm_ok,
                        expect_lines=args.expect_line,
                        expect_data=args.expect_data,
                        iso_entry=args.iso_entry)
    try:
        # Guest-derived words throughout: shown inert (tools/lib/base/text.py).
        print("\n".join(text.escaped_lines(outcome.lines +
                                            bringup_notes(outcome.doc))),
              flush=True)
    except BrokenPipeError:
        cli.reader_gone()
    return EXIT_OK if outcome.ok else EXIT_FAILED


def bringup_notes(doc):
    """What the kernel chose for bring-up where it chose by the CPU, in
    its own words from the DATA: the INIT wait, and whether APs may skip
    calibration (a constant TSC)."""
    out = []
    smp = figures.data(doc, "smp") or {}
    lpj = figures.data(doc, "lpj") or {}
    if "init_udelay_us" in smp and smp.get("init_udelay_why"):
        out.append(f"smp: init_udelay={smp['init_udelay_us']} us "
                   f"({smp.get('init_udelay', '?')}: "
                   f"{smp['init_udelay_why']})")
    if lpj.get("tsc_constant_why"):
        out.append(f"lpj: {lpj['tsc_constant_why']}")
    return out


def run_many(args):
    """Every run of the scenarios or the matrix, args.jobs at a time, then
    the table tools/report prints for the batch folder."""
    for why in args.left_out:
        say(f"left out {why}")
    if args.resume:
        batch_dir = Path(args.resume)
        if not (batch_dir / batch.INDEX).is_file():
            args.parser.error(f"--resume {args.resume}: no {batch.INDEX} "
                              "there")
        refusal = batch.resume_refusal(batch_dir, args.specs, args.about)
        if refusal:
            args.parser.error(f"--resume {args.resume}: {refusal}; nothing "
                              "there was touched")
        if not args.no_build:
            build()
    else:
        batch_dir = built_and_made(args, args.batch_name + "-{stamp}",
                                   "batch")
    jobs = min(args.jobs, len(args.specs))
    n = len(args.specs)
    if jobs > 1 and any(s.repeats > 1 for s in args.specs):
        say(f"note: repeats measure timing, and {jobs} guests at a time "
            "share the host's cores; -j 1 gives figures tools/compare "
            "can trust")
    say(f"{n} run{'s' * (n != 1)}, {jobs} at a time, in "
        f"{shown(batch_dir)}")
    index = batch.run_all(args.specs, batch_dir, jobs, args.about,
                          resume=bool(args.resume))
    docs = report.load_docs([batch_dir])[0]
    tally = batch.tally(index)
    if docs:
        say("\n" + report.render(docs, fmt=args.format).rstrip("\n"))
    say(f"\n{n} run{'s' * (n != 1)} in {index['elapsed_s']:.1f} s: "
        + ", ".join(f"{n} {v}" for v, n in sorted(tally.items())))
    say(f"results: {shown(batch_dir)}")
    if tally.get("not run") and len(tally) == 1:
        return EXIT_CANNOT_RUN
    bad = sum(n for v, n in tally.items()
              if v not in (Status.PASS, Status.SKIP))
    return EXIT_FAILED if bad else EXIT_OK


def say(line):
    """Print line; a reader that went away (| head) ends the printing,
    not the batch."""
    try:
        print(line, flush=True)
    except BrokenPipeError:
        cli.reader_gone()


# What tools/entry.py turns into an exit status, with the message.
EXITS = {CannotRun: EXIT_CANNOT_RUN, media.MediaError: EXIT_CANNOT_RUN}
