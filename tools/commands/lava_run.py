# SPDX-License-Identifier: MIT
"""Boot hvprobe under LAVA's dispatcher, locally and without a server, and
check that LAVA's test cases say what the KTAP says.

Writes a qemu device (TCG and KVM variants) and one job per boot path
(QEMU -kernel with build/hvprobe.elf32, GRUB from build/hvprobe.iso under
SeaBIOS), runs each job with lava-run, then compares LAVA's per-case
results with the KTAP of the same boot: the serial output LAVA itself
captured from that QEMU process, parsed with hvprobe's KTAP parser. A
second boot under tools/run would be another boot, with its own timings
and possibly its own verdicts (the timer tests measure), and would test
reproducibility rather than LAVA.

Files go to results/lava-<date-time>/. The last line says PASS or FAIL;
exit status 0 when every job's cases equal its KTAP lines, 1 when not, 2
for bad usage, 3 when the jobs cannot be run at all.
"""

import datetime
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from tools import ROOT, TOOLS
from tools.lib import cli
from tools.lib.analysis import ktap, lavalog, results
from tools.lib.base import seconds
from tools.lib.base.exits import (EXIT_CANNOT_RUN, EXIT_FAILED, EXIT_OK,
                                  CannotRun)
from tools.lib.launch import guest, qemu

LAVA = TOOLS / "lava"

BUILD = ROOT / "build"

# Boot path -> (image label in the job, image, QEMU arguments for it).
# LAVA puts the staged file's path where {label} stands.
BOOTS = {
    "kernel": ("kernel", BUILD / "hvprobe.elf32", "-kernel {kernel}"),
    "bios": ("iso", BUILD / "hvprobe.iso", "-cdrom {iso} -boot d"),
}

# LAVA's own schema checker, which lava-dispatcher's lava-common ships: a
# LAVA server refuses a device that fails it, and lava-run alone checks
# no device.
LAVA_SCHEMA = Path("/usr/share/lava-common/lava-schema.py")

# lava-run itself gets this long beyond the job's own timeout.
GRACE_S = 60
TAIL_LINES = 15


def parse_args(argv):
    p = cli.parser(
        "tools/lava/run", __doc__,
        epilog="Words after -- are the kernel command line of the -kernel "
               "job; the ISO boots with the command line of its grub.cfg.")
    p.add_argument("--boot", action="append", choices=sorted(BOOTS),
                   help="boot path to run, repeatable (default: both)")
    p.add_argument("--accel", choices=qemu.ACCELS, default="auto",
                   help="device variant: kvm where /dev/kvm works and the "
                        "CPU shows VMX or SVM, else tcg (default: auto)")
    p.add_argument("--smp", type=int, default=1, metavar="N",
                   help="vCPUs (default: 1)")
    p.add_argument("--mem", default="256M", metavar="SIZE",
                   help="guest memory (default: 256M)")
    p.add_argument("--timeout", type=seconds.minutes_option, default=5,
                   metavar="MIN",
                   help="minutes for each of deploy, boot and test "
                        "(default: 5)")
    cli.results_option(p, ROOT, "parent of the lava-* folder")
    p.add_argument("--generate", metavar="DIR",
                   help="only write the device and job files to DIR (for "
                        "a LAVA lab), run nothing")
    p.add_argument("cmdline", nargs="*", metavar="key=value",
                   help="kernel command line of the -kernel job")
    args = p.parse_args(argv)
    args.boot = args.boot or list(BOOTS)
    if args.smp < 1:
        p.error("--smp needs at least one CPU")
    try:
        args.mem_mib = qemu.parse_size(args.mem)
    except qemu.ConfigError as err:
        p.error(str(err))
    # LAVA joins QEMU's arguments into one string and pexpect splits it
    # again: a quote or backslash in the command line would not survive.
    for word in args.cmdline:
        if any(c in word for c in "\"'\\") or not word.isprintable():
            p.error(f"command line word {word!r}: quotes, backslashes and "
                    "control characters cannot pass through LAVA")
    return args


def fill(template, values):
    """The template file with every @NAME@ replaced."""
    text = (LAVA / template).read_text()
    for name, value in values.items():
        text = text.replace(f"@{name}@", str(value))
    missing = re.findall(r"@[A-Z_]+@", text)
    if missing:
        raise AssertionError(f"{template}: unfilled {sorted(set(missing))}")
    return text


def device_yaml(accel, args):
    cpu = qemu.KVM_CPU if accel == "kvm" else qemu.TCG_CPU
    return fill("device.yaml.in", {"ACCEL": accel, "CPU": cpu,
                                   "MEM": f"{args.mem_mib}M",
                                   "SMP": args.smp})


def job_yaml(boot, args):
    label, image, image_arg = BOOTS[boot]
    if boot == "kernel" and args.cmdline:
        image_arg += f' -append "{" ".join(args.cmdline)}"'
    q = lavalog.yaml_single_quoted
    fixup = "".join(f"        {q(k)}: {q(v)}\n"
                    for k, v in lavalog.FIXUPDICT.items())
    return fill("job.yaml.in", {
        "NAME": boot, "LABEL": label, "IMAGE_ARG": q(image_arg),
        "URL": q(f"file://{image}"),
        # Deploy, boot and test each get the action timeout.
        "MINUTES": args.timeout, "JOB_MINUTES": 3 * args.timeout + 1,
        "START": lavalog.MONITOR_START, "END": lavalog.MONITOR_END,
        "PATTERN": q(lavalog.MONITOR_PATTERN),
        "FIXUPDICT": fixup.rstrip("\n"),
    })


def write_files(folder, accel, args):
    """device-tcg.yaml, device-kvm.yaml and job-<boot>.yaml in folder;
    returns the device file of the variant to run."""
    for variant in ("tcg", "kvm"):
        (folder / f"device-{variant}.yaml").write_text(
            device_yaml(variant, args))
    for boot in args.boot:
        (folder / f"job-{boot}.yaml").write_text(job_yaml(boot, args))
    return folder / f"device-{accel}.yaml"


def pick_accel(requested, boots):
    """One accelerator for every job: KVM under auto only where it takes
    each of the boot paths asked for."""
    kvm_ok = all(guest.kvm_ok_for(requested, boot) for boot in boots)
    try:
        return qemu.resolve_accel(requested, kvm_ok)[0]
    except qemu.ConfigError as err:
        raise CannotRun(str(err)) from None


def schema_problems(folder):
    """What LAVA's schema checker says about the files in folder, as
    lines; none when it passes them or is not installed."""
    if not LAVA_SCHEMA.exists():
        return []
    out = []
    for kind, pattern in (("device", "device-*.yaml"), ("job", "job-*.yaml")):
        files = sorted(str(p) for p in folder.glob(pattern))
        # Run as its own program: its #! names the Python that has
        # voluptuous and yaml, which the python3 running this may lack.
        done = subprocess.run([str(LAVA_SCHEMA), kind, *files],
                              capture_output=True, text=True,
                              stdin=subprocess.DEVNULL)
        if done.returncode:
            out += (done.stdout + done.stderr).strip().splitlines()
    return out


def run_job(boot, folder, device, job_id, args):
    """One lava-run; returns (lines of summary, passed, case count)."""
    job_dir = folder / boot
    job_dir.mkdir()
    log_path = job_dir / "lava.log"
    argv = [shutil.which("lava-run") or "lava-run", "--job-id", str(job_id),
            "--output-dir", str(job_dir / "output"), "--device",
            str(device), str(folder / f"job-{boot}.yaml")]
    start = time.monotonic()
    status = lava_run(argv, log_path, 3 * args.timeout * 60 + GRACE_S)
    wall = time.monotonic() - start

    lines = log_path.read_bytes().decode("utf-8", "replace").splitlines()
    lava = lavalog.read_log(lines, f"hvprobe-{boot}")
    (job_dir / "serial.log").write_text(
        "".join(f"{line}\n" for line in lava.serial))
    report = ktap.parse(lava.serial)
    expected = lavalog.ktap_cases(report)
    counts = lavalog.tally(lava.cases)
    why = job_problems(status, lava, report, expected)

    guest = " ".join(f"{k}:{v}" for k, v in (report.totals or {}).items())
    head = (f"{boot}: {len(lava.cases)} LAVA cases, {len(expected)} KTAP "
            f"lines (pass {counts['pass']}, fail {counts['fail']}, "
            f"skip {counts['skip']}); guest totals {guest or 'none'}; "
            f"lava-run {wall:.1f} s")
    out = [head]
    if why:
        out += [f"  {line}" for line in why]
        if status:
            out += [f"  | {line[:160]}" for line in lines[-TAIL_LINES:]]
        out.append(f"  FAIL  {shown(job_dir)}")
    return out, not why, len(lava.cases)


def lava_run(argv, log_path, timeout):
    """lava-run's exit status, None when it ran past timeout; its output
    in log_path."""
    with open(log_path, "wb") as log:
        try:
            # lava-run logs its records on stderr and prints nothing on
            # stdout; both go to one file so that nothing is lost.
            return subprocess.run(argv, cwd=ROOT, stdin=subprocess.DEVNULL,
                                  stdout=log, stderr=subprocess.STDOUT,
                                  timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            return None
        except OSError as err:
            raise CannotRun(f"cannot start lava-run: {err}") from None


def job_problems(status, lava, report, expected):
    """Why a LAVA job failed, a line each: lava-run's end, LAVA's
    verdicts, the KTAP it captured and its cases against KTAP's."""
    why = []
    if status is None:
        why.append("lava-run did not finish in time")
    elif status:
        why.append(f"lava-run exited with status {status}")
    if lava.job_result != "pass":
        why.append(f"LAVA's job verdict is {lava.job_result}: "
                   f"{lava.job_error or 'no reason given'}")
    if lava.monitor_status != "passed":
        why.append(f"the monitor ended {lava.monitor_status or 'never'} "
                   "(no totals line seen)")
    if report.crashed:
        why.append(f"the serial output LAVA captured is no complete KTAP "
                   f"run: {report.crash_reason}")
    if not lava.cases:
        why.append("LAVA recorded no test case")
    return why + lava.problems + lavalog.compare(lava.cases, expected)


def shown(path):
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def main(argv):
    try:
        return check_lava(argv)
    except CannotRun as err:
        print(f"tools/lava/run: {err}", file=sys.stderr)
        print("check-lava: FAIL: could not run", file=sys.stderr)
        return EXIT_CANNOT_RUN


def check_lava(argv):
    args = parse_args(argv)
    if args.generate:
        folder = Path(args.generate)
        folder.mkdir(parents=True, exist_ok=True)
        write_files(folder, "tcg", args)
        print(f"wrote device-tcg.yaml, device-kvm.yaml and "
              f"{', '.join(f'job-{b}.yaml' for b in args.boot)} to "
              f"{shown(folder)}")
        return EXIT_OK

    for boot in args.boot:
        image = BOOTS[boot][1]
        if not image.exists():
            raise CannotRun(f"{shown(image)} is missing: run make first")
    if not shutil.which("lava-run"):
        raise CannotRun("lava-run is missing: install Debian's "
                        "lava-dispatcher (make check-lava does)")
    accel = pick_accel(args.accel, args.boot)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    try:
        folder = results.new_dir(args.results, f"lava-{stamp}")
        device = write_files(folder, accel, args)
    except OSError as err:
        raise CannotRun(f"cannot write the job files: {err}") from None

    invalid = schema_problems(folder)
    if invalid:
        print("\n".join(["LAVA's schema check refuses the files:"] +
                        [f"  {line}" for line in invalid]))
        print(f"check-lava: FAIL: invalid device or job files  "
              f"{shown(folder)}")
        return EXIT_FAILED

    start = time.monotonic()
    passed, cases = [], 0
    for n, boot in enumerate(args.boot):
        # LAVA stages images under /var/lib/lava/dispatcher/tmp/<job id>/
        # and removes that folder afterwards: ids unique to this process
        # keep two runs on one machine out of each other's way.
        lines, ok, count = run_job(boot, folder, device,
                                   os.getpid() * 10 + n, args)
        print("\n".join(lines), flush=True)
        passed.append(ok)
        cases += count
    wall = time.monotonic() - start
    jobs = len(args.boot)
    if all(passed):
        print(f"check-lava: PASS: {jobs} LAVA jobs ({accel}), {cases} test "
              f"cases equal their KTAP lines, in {wall:.1f} s  "
              f"{shown(folder)}")
        return EXIT_OK
    print(f"check-lava: FAIL: {passed.count(False)} of {jobs} LAVA jobs "
          f"({accel}) disagree with their KTAP or did not run, in "
          f"{wall:.1f} s  {shown(folder)}")
    return EXIT_FAILED
