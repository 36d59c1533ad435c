# SPDX-License-Identifier: MIT
"""Boot the hvprobe suite many times on randomised machines and command
lines, and report the runs that failed, grouped by the case that failed.

Each run is drawn from (seed, index) alone: accelerator, vCPU count, NUMA
layout, boot path and kernel command line. Where KVM works (and --accel
is auto) about one boot in KVM_SHARE runs under it, with the host's CPU
with or without the invariant TSC, so the mix exercises both. The seed is printed first, and every failed
run is printed as the exact tools/run command that repeats it, and as the
tools/soak --seed S --index I that draws it again. Run folders go to
results/soak-<date-time>/<index>/, with soak.json beside them.

Exit status: 0 every run passed, 1 some run failed, 2 bad usage, 130
interrupted (Ctrl-C, SIGTERM or SIGHUP; soak.json keeps the boots so far).
"""

import collections
import concurrent.futures
import contextlib
import datetime
import functools
import random
import re
import shlex
import sys
import time
from dataclasses import dataclass, field

from tools import ROOT
from tools.lib import buildinfo, cli, hostinfo
from tools.lib.base import jsonfile, seconds
from tools.lib.analysis import results
from tools.lib.launch import batch, guest, qemu, serial
from tools.lib.launch import kvm as kvm_lib
from tools.lib.launch.scenario import RunSpec
from tools.lib.base.exits import EXIT_CANNOT_RUN, CannotWrite
from tools.lib.base.status import Status

MAX_CPUS = 64
MAX_BOOTS = 100000
MAX_JOBS = 256
# The KVM part of the mix, and its largest machine: vCPUs beyond the
# host's cores only wait their turn there (KVM warns past them), so big
# machines stay with TCG, where they cost no more than their work.
KVM_SHARE = 4
KVM_MAX_CPUS = 16
KVM_CPUS = (qemu.KVM_CPU, qemu.KVM_CPU + ",+invtsc")
# The boot paths and how often each is drawn: OVMF takes ~5 s of the
# ~6 s a UEFI boot lasts, so UEFI is drawn less often than the others.
BOOT_WEIGHTS = {"kernel": 5, "bios": 3, "uefi": 1}
NUMA_NODES = (0, 1, 2, 4)       # 0: no -numa at all, the plain machine
# Command-line keys the soak varies, in draw order, each left out (the
# kernel default) half the time. An enum key draws from the kernel's own
# words (tools/lib/buildinfo.py, in the kernel's enum order) less those
# EXCLUDED; a number key from NUMBERS. lpj_source "cmdline" comes with an
# lpj= preset (without one it is an error by design), and x2apic only
# where the QEMU can emulate it.
KEYS = ("bringup", "calibrate", "lpj_source", "lpj_reuse", "timer", "apic",
        "hz", "init_udelay", "lpj_policy", "parallel_calibrate")
EXCLUDED = {
    # linux-6.5 bring-up and the hv-preset policy came after the soak's
    # mix was set; make check's catalogue runs them, the soak does not
    # (yet): adding a word here changes every seed's draws.
    "bringup": {"linux-6.5"},
    "lpj_policy": {"hv-preset"},
    # The APIC timer needs a rate a hypervisor or CPUID.15H states and
    # hv the Hyper-V reference counter: the soak's TCG machines have
    # neither, so either would only fail by design.
    "timer": {"apic", "hv"},
    # With bringup=parallel, calibrations in turn or as the probe allows;
    # all at once, the old way, is left out: 64 APs calibrating at once
    # on 2 host cores outlast the bring-up bound.
    "parallel_calibrate": {"concurrent"},
}
NUMBERS = {
    "hz": ("100", "250", "1000"),
    "init_udelay": ("0", "10000", "auto"),
}


@functools.cache
def choices():
    """{key: values} in draw order: what plan() draws from."""
    return {key: NUMBERS[key] if key in NUMBERS else
            tuple(w for w in buildinfo.words(key)
                  if w not in EXCLUDED.get(key, ()))
            for key in KEYS}


# An lpj= preset is TSC cycles per jiffy; TCG's guest TSC is the host's.
# Without --tsc-mhz a preset is lpj=host, which tools/run turns into this
# host's value: a draw is the same on every machine.
# tools/run's own timeouts, plus time per vCPU: an AP that calibrates takes
# 80 ms at HZ=250 on an idle host and over a second on a loaded one, one
# AP after another with bringup=serial (soak: 53 vCPUs ran past 60 s).
PER_VCPU_TIMEOUT_S = 3


@dataclass
class Plan:
    """One boot: drawn here, booted as the RunSpec spec() makes."""
    index: int
    boot: str
    smp: int
    numa: int
    mem: str
    cmdline: list = field(default_factory=list)
    accel: str = "tcg"
    cpu: str | None = None      # None: the accelerator's default model

    def spec(self, timeout=None):
        """The run as tools/run and make check boot theirs; its folder
        is the index (0042)."""
        return RunSpec(name=f"{self.index:04d}", scenario="soak",
                       boot=self.boot, vcpus=self.smp, numa=self.numa,
                       mem_mib=qemu.parse_size(self.mem), cpu=self.cpu,
                       accel=self.accel, cmdline=list(self.cmdline),
                       timeout=timeout)

    def run_args(self):
        """tools/run's options for this boot, with its default timeout."""
        return self.spec().run_argv()

    def timeout(self):
        return qemu.BOOT_TIMEOUT_S[self.boot] + PER_VCPU_TIMEOUT_S * self.smp

    def describe(self):
        nodes = f"/{self.numa}n" if self.numa else ""
        return (f"{self.accel:3} {self.boot:6} {self.smp:2}{nodes:3} "
                f"{' '.join(self.cmdline)}")


def draw_smp(rng):
    """Small machines more often than big ones: most bugs show with a
    few vCPUs, and a 64-vCPU TCG boot costs ten small ones."""
    band = rng.choices(((1, 8), (9, 32), (33, MAX_CPUS)), (5, 3, 2))[0]
    return rng.randint(*band)


def plan(seed, index, x2apic=True, tsc_mhz=None, kvm=False,
         kvm_boots=qemu.BOOTS):
    """The run drawn for (seed, index); kvm: whether KVM may be drawn
    (True, or "all" for every run), kvm_boots the boot paths it takes
    (the others boot -kernel under it). Every draw happens whatever the
    outcome, so that one knob (x2apic, kvm) never shifts the others'
    draws."""
    rng = random.Random(f"hvprobe-soak:{seed}:{index}")
    under_kvm = rng.randrange(KVM_SHARE) == 0
    accel = "kvm" if kvm == "all" or (kvm and under_kvm) else "tcg"
    boot = rng.choices(list(BOOT_WEIGHTS), list(BOOT_WEIGHTS.values()))[0]
    smp = draw_smp(rng)
    kvm_smp = rng.randint(1, KVM_MAX_CPUS)
    if accel == "kvm":
        smp = kvm_smp
        boot = boot if boot in kvm_boots else "kernel"
    numa = rng.choice([n for n in NUMA_NODES if n == 0 or smp % n == 0])
    # The 64-vCPU runs of make check take 512M; per-CPU space grows.
    mem = "512M" if smp > 16 else "256M"
    words = []
    for key, values in choices().items():
        present = rng.random() < 0.5
        value = rng.choice(values)
        if not present:
            continue
        if key == "apic" and value == "x2apic" and not x2apic:
            value = "xapic"
        words.append(f"{key}={value}")
    hz = next((int(w[3:]) for w in words if w.startswith("hz=")), 250)
    if "lpj_source=cmdline" in words:
        words.append(f"lpj={tsc_mhz * 1000000 // hz}" if tsc_mhz
                     else "lpj=host")
    cpu = rng.choice(KVM_CPUS)
    return Plan(index, boot, smp, numa, mem, words, accel,
                cpu if accel == "kvm" else None)


def qemu_has_x2apic():
    """TCG emulates x2APIC from QEMU 8 on (7.2 lacks it)."""
    return hostinfo.qemu_release() >= (8, 0)


def reproduce(p, timeout=None):
    """The tools/run command line that boots p again, with the timeout
    the soak gave it (--timeout, else the plan's own)."""
    return shlex.join(["tools/run",
                       *p.spec(timeout or p.timeout()).run_argv()])


def _norm(text):
    # Measured values differ from run to run; the case is the same.
    return re.sub(r"\d+(\.\d+)?", "N", text).strip()


def _bad_paths(test, prefix):
    path = f"{prefix}{test['name']}"
    bad = [c for c in test["cases"] if results.effective(c) in results.BAD]
    for case in bad:
        yield from _bad_paths(case, path + " / ")
    if not bad and test["status"] in results.BAD:
        yield path


def failures(doc, rc, why=None):
    """Why one run failed, as group keys (the failing case with numbers
    made N); empty for a pass. doc is results.json, or None when nothing
    booted (why says so); rc tools/run's exit status for the run, 0 when
    it passed."""
    if doc is None:
        return [f"not run: {why}"]
    keys = []
    if doc.get("crash"):
        keys.append("crash: " + _norm(doc["crash"]))
    for test in doc["tests"]:
        keys += [_norm(p) for p in _bad_paths(test, "")]
    keys += [f"host {c['name']}" for c in doc["host_checks"]
             if c["status"] == Status.FAIL]
    if not keys and doc.get("verdict") != Status.PASS:
        keys.append(f"verdict {doc.get('verdict')}")
    if not keys and rc != 0:
        keys.append(f"judged failed (tools/run would exit {rc})")
    return keys


def boot_one(p, out_dir, timeout, kvm):
    """Run one plan through batch.run_one, as tools/run runs a matrix;
    (failure keys, seconds, run folder); keys is None for a run an
    interrupt cut short. kvm: batch.kvm_state()."""
    spec = p.spec(timeout or p.timeout())
    start = time.monotonic()
    record, outcome = batch.run_one(spec, out_dir, kvm)
    run_dir = out_dir / record["run"]
    if record["verdict"] == batch.INTERRUPTED:
        return None, time.monotonic() - start, run_dir
    if outcome is None:
        return failures(None, None, record["reason"]), \
            time.monotonic() - start, run_dir
    return failures(outcome.doc, 0 if outcome.ok else 1), \
        time.monotonic() - start, run_dir


def write_soak(path, args, outcomes, complete):
    """soak.json: every run done so far (an interrupted one says so);
    CannotWrite when it cannot be written."""
    try:
        jsonfile.write(path, {
            "seed": args.seed, "accel": args.accel, "complete": complete,
            "runs": [{"index": p.index, "accel": p.accel,
                      "reproduce": reproduce(p, args.timeout),
                      "interrupted": keys is None,
                      "failures": keys or [], "dir": str(d)}
                     for p, keys, d in sorted(outcomes,
                                              key=lambda o: o[0].index)]})
    except OSError as err:
        raise CannotWrite.of(path, err) from None


def parse_args(argv):
    p = cli.parser("tools/soak", __doc__)
    p.add_argument("-n", "--runs", type=int, default=200, metavar="N",
                   help="boots (default: 200)")
    p.add_argument("--seed", type=int, metavar="S",
                   help="seed (default: a random one, printed)")
    p.add_argument("--index", type=int, action="append", metavar="I",
                   help="only the run(s) with this index, repeatable")
    p.add_argument("--repeat", type=int, default=1, metavar="K",
                   help="boot each drawn run K times (default: 1)")
    p.add_argument("-j", "--jobs", type=int, default=2, metavar="N",
                   help="boots at a time (default: 2)")
    p.add_argument("--accel", choices=qemu.ACCELS,
                   help="auto draws KVM for some boots where it works; "
                        "kvm or tcg for all (default: $HVPROBE_ACCEL or "
                        "auto)")
    p.add_argument("--timeout", type=seconds.option, metavar="S",
                   help="per-boot timeout (default: tools/run's for the "
                        "boot path, plus 3 s per vCPU)")
    p.add_argument("--tsc-mhz", type=int, metavar="MHZ",
                   help="host TSC rate for lpj= presets (default: this "
                   "host's, as tools/run finds it for lpj=host)")
    p.add_argument("--list", action="store_true",
                   help="print the drawn runs and boot nothing")
    cli.no_build(p)
    cli.qemu_option(p)
    cli.results_option(p, ROOT, "parent of the soak-* folder")
    args = p.parse_args(argv)
    args.accel = cli.accel(p, args.accel, qemu.ACCELS, "auto")
    cli.use_qemu(args)
    if args.runs < 1 or args.jobs < 1 or args.repeat < 1:
        p.error("--runs, --jobs and --repeat need at least 1")
    # Every drawn run is planned before the first boot: bound them first.
    if args.runs * args.repeat > MAX_BOOTS or args.jobs > MAX_JOBS:
        p.error(f"at most {MAX_BOOTS} boots (--runs x --repeat) and "
                f"{MAX_JOBS} jobs")
    if args.index and any(i >= MAX_BOOTS for i in args.index):
        p.error(f"--index must be below {MAX_BOOTS}")
    if args.index and any(i < 0 for i in args.index):
        p.error("--index must not be negative")
    if args.tsc_mhz is not None and args.tsc_mhz < 1:
        p.error("--tsc-mhz must be positive")
    if args.seed is None:
        args.seed = random.SystemRandom().randrange(1 << 32)
    return args


def summarise(outcomes, seed, timeout=None):
    """The summary lines: counts, then each failing case with the runs
    that hit it, most frequent first."""
    boots = len(outcomes)
    failed = [(p, keys) for p, keys, _ in outcomes if keys]
    lines = [f"soak seed {seed}: {boots} boots, {boots - len(failed)} "
             f"passed, {len(failed)} failed"]
    groups = collections.defaultdict(list)
    for p, keys in failed:
        for key in dict.fromkeys(keys):
            groups[key].append(p)
    for key, plans in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        lines.append(f"  {len(plans)}x {key}")
        for p in sorted(plans, key=lambda q: q.index)[:5]:
            lines.append(f"     #{p.index}: {reproduce(p, timeout)}")
            lines.append(f"          or tools/soak --seed {seed} "
                         f"--index {p.index}")
        if len(plans) > 5:
            lines.append(f"     ... and {len(plans) - 5} more in soak.json")
    return lines


def main(argv):
    args = parse_args(argv)
    kvm, kvm_boots = _kvm_for(args)
    x2apic = qemu_has_x2apic()
    indices = args.index or range(args.runs)
    try:
        choices()
    except buildinfo.Unavailable as err:
        print(f"tools/soak: the kernel's option words: {err}", file=sys.stderr)
        return 1
    plans = [plan(args.seed, i, x2apic, args.tsc_mhz, kvm, kvm_boots)
             for i in indices for _ in range(args.repeat)]
    under_kvm = sum(p.accel == "kvm" for p in plans)
    print(f"soak seed {args.seed}: {len(plans)} boots ({under_kvm} under "
          f"KVM), -j {args.jobs}"
          f"{'' if x2apic else ', no x2APIC in this QEMU'}", flush=True)
    if args.list:
        for p in plans:
            print(f"#{p.index:<4} {reproduce(p, args.timeout)}")
        return 0
    failed = None if args.no_build else cli.build(ROOT)
    if failed:
        print(f"tools/soak: {failed}", file=sys.stderr)
        return 1
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    out_dir = results.new_dir(args.results, f"soak-{stamp}")
    print(f"runs: {out_dir}", flush=True)
    outcomes = boot_all(plans, args, out_dir)
    outcomes.sort(key=lambda o: o[0].index)
    write_soak(out_dir / "soak.json", args, outcomes, complete=True)
    print("\n".join(summarise(outcomes, args.seed, args.timeout)))
    return 1 if any(keys for _, keys, _ in outcomes) else 0


def _kvm_for(args):
    """(kvm, the boot protocols this host's KVM can run) for plan()."""
    # Each plan names its accelerator, so that a printed command means
    # the same machine on a host where auto would pick otherwise.
    if args.accel == "auto":
        kvm = guest.kvm_ok_for("auto")
    else:
        kvm = "all" if args.accel == "kvm" else False
    module = kvm_lib.flavour()["module"]
    return kvm, [b for b in qemu.BOOTS if not kvm_lib.boot_limit(module, b)]


def boot_all(plans, args, out_dir):
    """(plan, failure keys, run directory) of every plan, in the order
    they finished, soak.json rewritten after each one."""
    outcomes = []
    kvm_state = batch.kvm_state()
    soak_json = out_dir / "soak.json"
    pool = concurrent.futures.ThreadPoolExecutor(args.jobs)
    try:
        # With --repeat, one index boots several times: name them apart.
        futures = {}
        for n, p in enumerate(plans):
            sub = out_dir if args.repeat == 1 else out_dir / f"r{n % args.repeat}"
            futures[pool.submit(boot_one, p, sub, args.timeout,
                                kvm_state)] = p
        for done, future in enumerate(
                concurrent.futures.as_completed(futures), 1):
            p = futures[future]
            keys, seconds, run_dir = future.result()
            outcomes.append((p, keys, run_dir))
            write_soak(soak_json, args, outcomes, complete=False)
            _print_boot(done, len(plans), p, keys, seconds, args.timeout)
    except (KeyboardInterrupt, CannotWrite):
        # Nothing more starts, the running boots are killed with their
        # QEMUs; what ran is kept, the rest said to be interrupted. A
        # full disk stops it as well: every boot after would fail so.
        serial.stop_all()
        pool.shutdown(wait=True, cancel_futures=True)
        _add_unfinished(outcomes, futures)
        with contextlib.suppress(CannotWrite):
            write_soak(soak_json, args, outcomes, complete=False)
            print(f"tools/soak: stopped; {soak_json}", file=sys.stderr)
        raise
    finally:
        pool.shutdown(wait=True)
    return outcomes


def _print_boot(done, total, p, keys, seconds, timeout):
    """One boot's progress line, and for a failure its keys and how to
    boot it again."""
    width = len(str(total))
    verdict = "FAIL" if keys else "pass"
    print(f"[{done:{width}}/{total}] {verdict} #{p.index:<4} "
          f"{seconds:5.1f}s  {p.describe()}", flush=True)
    if keys:
        print(f"        {'; '.join(keys)}\n        "
              f"{reproduce(p, timeout)}", flush=True)


def _add_unfinished(outcomes, futures):
    """outcomes with every plan it lacks: a boot that finished before
    the stop with its result, the others with none (interrupted)."""
    seen = {id(p) for p, _, _ in outcomes}
    for future, p in futures.items():
        if id(p) in seen:
            continue
        keys, _, run_dir = future.result() if future.done() and \
            not future.cancelled() else (None, 0, None)
        outcomes.append((p, keys, run_dir))


# What tools/entry.py turns into an exit status, with the message.
EXITS = {CannotWrite: EXIT_CANNOT_RUN}
