# SPDX-License-Identifier: MIT
"""tools/linux-referee: boot Debian's Linux and hvprobe on the same
machine and hold hvprobe's lpj policy to what Linux itself did: how many
APs calibrated, where the boot CPU's lpj came from, which CPUs share an
lpj, why the TSC was marked unstable, and how many TSC-sync checks ran.
Each is one row of the verdict; a row whose input a side did not print
is "not compared", with the reason, and never counts as agreement.

Linux 6.1 is judged against hvprobe's lpj_policy=linux-6.1 with serial
bring-up, Linux 6.12 against lpj_policy=linux-6.12 with bringup=linux-6.5
bring-up (6.5's shape, which 6.12 keeps). Linux boots with a busybox
initramfs that prints each CPU's bogomips (a copied lpj equals its source
to the last digit), its calibration and TSC lines, and, with
dyndbg="file tsc_sync.c +p", each TSC-sync check (tools/lib/referee.py).
Linux's kernel is fetched as --host-kernel fetches it: never installed.

--matrix runs every scenario of the comparison instead of one machine
(tools/lib/refmatrix.py): TCG on one node and on four, and inside each
--host-kernel as L1 (one L1 boot for all of its scenarios, as tools/run
--host-kernel boots one) plain KVM, -kvmclock, Hyper-V emulation with and
without hv-frequencies, Hyper-V alone (kvm=off) with and without
them, and hv-frequencies without kvmclock, each with 2 vCPUs on one node
and on two; --only narrows them by name. It prints one table of what
Linux and hvprobe did in each.

Exit status: 0 hvprobe and Linux agree on every kernel, 1 they disagree
or a boot failed, 2 bad usage, 3 it could not run.
"""

import datetime
import subprocess
import sys

from tools import ROOT, TOOLS
from tools.lib import cli, hostinfo, referee, refmatrix
from tools.lib.base import jsonfile, signals
from tools.lib.base.exits import EXIT_INTERRUPTED
from tools.lib.analysis import figures, results
from tools.lib.hostkernels import hostkernel, nested
from tools.lib.launch import guest, qemu, serial
from tools.lib.launch import kvm as kvm_lib
from tools.lib.base.status import Status

# hvprobe's policy and bring-up that claim to be each Linux's.
POLICIES = {"6.1": ("linux-6.1", "serial"),
            "6.12": ("linux-6.12", "linux-6.5")}
TIMEOUT_S = 300
# One nested scenario: four L2 boots (two Linux, two hvprobe) under an L1
# that may itself run under TCG.
NESTED_TIMEOUT_S = 1200


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
    matrix = p.add_argument_group("every scenario")
    matrix.add_argument("--matrix", "--all", action="store_true",
                        help="run the comparison's scenarios (TCG, and "
                             "nested under each --host-kernel) and print "
                             "their table; --smp, --numa, --cpu and "
                             "--accel are then the scenarios'")
    matrix.add_argument("--only", action="append", metavar="PATTERN",
                        help="with --matrix: only scenarios whose name "
                             "matches (shell pattern, repeatable; "
                             "--list-scenarios lists them)")
    matrix.add_argument("--host-kernel", default="6.1,6.12",
                        metavar="LIST",
                        help="with --matrix: the L1 host kernels, by "
                             "series (default: %(default)s)")
    matrix.add_argument("--list-scenarios", action="store_true",
                        help="list the --matrix scenarios and exit")
    cli.results_option(p, ROOT, "where the referee's folder goes")
    cli.no_build(p)
    args = p.parse_args(argv)
    hosts = [h for h in args.host_kernel.split(",") if h]
    if not hosts or any(h not in hostkernel.SERIES for h in hosts):
        p.error(f"--host-kernel takes {', '.join(hostkernel.SERIES)}")
    args.scenarios = refmatrix.pick(refmatrix.scenarios(hosts), args.only)
    if (args.matrix or args.list_scenarios) and not args.scenarios:
        p.error(f"--only {' '.join(args.only)} matches no scenario")
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
    """What hvprobe under policy on machine says of each comparison
    (referee.hvprobe_facts()), and its run's verdict."""
    words = ["test=smp,lpj", f"lpj_policy={policy}", f"bringup={bringup}"]
    run_dir.mkdir(parents=True, exist_ok=True)
    outcome = guest.run(machine, words, run_dir, TIMEOUT_S, kvm_ok=kvm_ok)
    facts = referee.hvprobe_facts(
        figures.data(outcome.doc, "smp") or {},
        figures.records(outcome.doc, "smp", "ap"),
        figures.data(outcome.doc, "lpj"))
    return {**facts, "verdict": outcome.doc["verdict"]}


def judged(series, release, policy, bringup, linux, ours) -> dict:
    """One series' row of referee.json, and its lines of the printed
    verdict: one per comparison, then AGREE or DISAGREE."""
    rows = referee.compare(linux, ours)
    ok = ours["verdict"] == Status.PASS and referee.agrees(rows)
    width = max(len(r["what"]) for r in rows)
    said = [f"Linux {release} beside hvprobe lpj_policy={policy} "
            f"bringup={bringup} ({ours['verdict']}):"]
    if linux.resets:
        logs = [referee.RESET_LOG.format(n) for n in
                range(1, linux.resets + 1)]
        said.append(f"  (Linux reset {linux.resets} time"
                    f"{'s' if linux.resets != 1 else ''} before this boot; "
                    f"console{'s' if len(logs) > 1 else ''}: "
                    f"{', '.join(logs)})")
    for r in rows:
        said.append(f"  {r['verdict']:<12}  {r['what']:<{width}}  Linux "
                    f"{r['linux']}; hvprobe {r['hvprobe']}"
                    + (f" ({r['why']})" if r.get("why") else ""))
    agree, disagree, unjudged = referee.tally(rows)
    said.append(f"{'AGREE' if ok else 'DISAGREE'}  {series}: {agree} "
                f"agree, {disagree} disagree, {unjudged} not compared")
    return {"comparisons": rows, "agree": bool(ok), "said": said}


def run_matrix(args):
    """Every scenario of args.scenarios: TCG's here, one after another,
    then each host kernel's inside one boot of it as L1; the table, and
    the exit status."""
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    name = "referee-matrix-" + stamp if args.name == "referee" else args.name
    folder = results.new_dir(args.results, name)
    done: dict = {}
    interrupted = None
    # A stopped matrix still prints and saves what it measured (the
    # children are killed by subprocess.run and nested.run on the way out).
    with signals.interruptible():
        try:
            run_scenarios(args.scenarios, folder, done)
        except KeyboardInterrupt as err:
            interrupted = str(err) or "SIGINT"
    got = [(s, refmatrix.read(folder / s.name), done.get(s))
           for s in args.scenarios]
    print("\n" + "\n".join(refmatrix.table(got)))
    agree, total = refmatrix.agreed(got)
    doc = {"schema": results.SCHEMA, "kind": "referee-matrix",
           "scenarios": [{"name": s.name, "host": s.host, "cpu": s.cpu,
                          "vcpus": s.vcpus, "nodes": s.nodes,
                          "exit_status": rc, "referee": d}
                         for s, d, rc in got],
           "agree": agree, "total": total,
           "interrupted": interrupted is not None}
    jsonfile.write(folder / "matrix.json", doc)
    print(f"{agree} of {total} scenarios agree; results: "
          f"{guest.shown(folder)}")
    if interrupted:
        print(f"interrupted ({interrupted}): scenarios without a result "
              "were not finished")
        return EXIT_INTERRUPTED
    return 0 if agree == total else 1


def run_scenarios(scenarios, folder, done) -> None:
    """TCG's scenarios here, one after another, then each host kernel's
    inside one boot of it as L1; each one's exit status lands in done as
    it ends."""
    for s in (s for s in scenarios if s.host == refmatrix.TCG):
        print(f"{s.name}: TCG, {s.vcpus} vCPUs on {s.nodes} node(s)",
              flush=True)
        cmd = [sys.executable, str(TOOLS / "linux-referee"),
               *s.argv(folder)]
        try:
            done[s] = subprocess.run(cmd, cwd=ROOT, stdin=subprocess.DEVNULL,
                                     timeout=TIMEOUT_S * 8).returncode
        except subprocess.TimeoutExpired:
            done[s] = None
    hosts = dict.fromkeys(s.host for s in scenarios
                          if s.host != refmatrix.TCG)
    for host in hosts:
        mine = [s for s in scenarios if s.host == host]
        done.update(run_nested(host, mine, folder))


def run_nested(host, mine, folder):
    """{scenario: exit status or None} of host's scenarios, run inside
    one boot of it as L1; each scenario's folder lands in folder. An L1
    that ends before its scenarios do (under a TCG L0 it dies every few
    L2 boots) is booted again for those left (nested.run_until_done())."""
    try:
        kernel = hostkernel.resolve(host)
    except hostkernel.HostKernelError as err:
        print(f"host kernel {host}: {err}; its scenarios are not run")
        return dict.fromkeys(mine)
    l0 = nested.choose_l0(*kvm_lib.flavour_works(ROOT, hostinfo.qemu_version()))
    own = f"l1-{host}"
    print(f"L1 {kernel.describe()} under {l0.accel} ({l0.why}): "
          f"{len(mine)} scenario(s); its console: "
          f"{guest.shown(folder / own / serial.LOG)}", flush=True)
    commands = [[sys.executable, str(TOOLS / "linux-referee"),
                 *s.argv(folder)] for s in mine]
    try:
        outcome = nested.run_until_done(
            kernel, commands, [s.name for s in mine],
            [NESTED_TIMEOUT_S] * len(mine), folder, l0, own_dir=own,
            log=lambda line: print(f"L1 {host}: {line}", flush=True))
    except nested.NestedError as err:
        print(f"L1 {host}: {err}")
        return dict.fromkeys(mine)
    return dict(zip(mine, outcome.statuses))


def main(argv):
    args = parse_args(argv)
    if args.list_scenarios:
        for s in args.scenarios:
            print(f"{s.name}: {s.vcpus} vCPUs on {s.nodes} node(s), "
                  f"{'TCG' if s.host == refmatrix.TCG else 'L1 ' + s.host}"
                  f", -cpu {s.cpu or 'default'}")
        return 0
    if not args.no_build:
        failed = cli.build(ROOT)
        if failed:
            raise guest.CannotRun(failed)
    if args.matrix:
        return run_matrix(args)
    folder = results.new_dir(args.results, args.name)
    kvm_ok = guest.kvm_ok_for(args.accel)
    accel, model = qemu.resolve_accel(args.accel, kvm_ok)
    machine = qemu.Machine(boot="kernel", smp=args.smp, numa=args.numa,
                           mem_mib=args.mem_mib, accel=accel,
                           cpu=args.cpu or model)
    print(f"machine: {accel}, -cpu {machine.cpu}, {args.smp} vCPUs on "
          f"{args.numa or 1} node(s), one package each", flush=True)
    rows, agree, not_run = [], True, []
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
               "hvprobe": ours}
        if linux is None:
            # Linux never reached its end marker: nothing to compare, so
            # neither agreement nor disagreement; say what it last said.
            tail = referee.last_lines(folder / f"linux-{series}")
            stuck = referee.stall(folder / f"linux-{series}")
            why = referee.ending(folder / f"linux-{series}") or \
                f"in {TIMEOUT_S} s"
            row["not_run"] = f"Linux {kernel.release} never finished " \
                f"({why}); its console's last lines: " + \
                (" | ".join(tail) if tail else "(none)") + \
                (f"; when its time ran out: {' | '.join(stuck)}"
                 if stuck else "")
            not_run.append(series)
            rows.append(row)
            print(f"NOT RUN  {series}: {row['not_run']}", flush=True)
            continue
        verdict = judged(series, kernel.release, policy, bringup, linux,
                         ours)
        row["comparisons"], row["agree"] = verdict["comparisons"], \
            verdict["agree"]
        agree &= row["agree"]
        rows.append(row)
        print("\n".join(verdict["said"]), flush=True)
    doc = {"schema": results.SCHEMA, "kind": "referee",
           "machine": {"accel": accel, "cpu": machine.cpu, "vcpus": args.smp,
                       "nodes": args.numa}, "rows": rows, "agree": agree,
           "not_run": not_run}
    jsonfile.write(folder / "referee.json", doc)
    print(f"results: {guest.shown(folder)}")
    if not agree:
        return 1
    # A referee that could not boot is no verdict: exit 3, as for a
    # kernel that could not be had.
    return 3 if not_run else 0


EXITS = {guest.CannotRun: 3}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
