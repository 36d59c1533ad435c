# SPDX-License-Identifier: MIT
"""Count the VM-entries a KVM host cancels while an hvprobe guest runs.

Run as root on the KVM host, while the guest runs its pmi_stress test.
It puts a kprobe (`perf probe`) on vmx_cancel_injection (Intel) or
svm_cancel_injection (AMD), counts it every second with `perf stat -I`,
removes the probe again (also on Ctrl-C), and prints cancelled
VM-entries per second per vCPU, beside the guest's pmi_stress DATA when
--guest names its serial log or results.json.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from tools.lib import cli, ktap

MEANING = """\
what the number means:
  KVM enters a guest in vcpu_enter_guest(): it services pending requests
  (KVM_REQ_NMI, KVM_REQ_PMI, ...), loads guest state, disables interrupts,
  and then checks once more for new requests. If one arrived, it undoes the
  event injection it prepared ({vmx,svm}_cancel_injection) and goes round
  the loop again: a cancelled VM-entry, pure overhead.

  A guest PMI with the LVTPC in NMI mode is a KVM_REQ_PMI whose handling
  raises a KVM_REQ_NMI. Hosts that service the NMI request before the PMI
  request find the new NMI request only at that last check, so nearly every
  PMI costs one cancelled VM-entry. Linux 6.7 reordered the two (commit
  fad505b2cb83, "KVM: x86: Service NMI requests after PMI requests in
  VM-Enter path"). The report that led to it counted ~15,000 cancellations
  per 10 s before and 19-40 after: about 800-1500 avoided per second per
  vCPU under a 48-event profiling load.

which hosts should show it:
  host kernels before 6.7 without a backport of fad505b2cb83: roughly one
  cancellation per guest PMI, so the per-vCPU rate tracks the guest's
  pmis_per_s_per_cpu. 6.7 and later: a few per second per vCPU at most.

how to measure:
  boot the guest with test=pmi_stress pmu.seconds=60 (the default 2 s is
  too short to line up with a host window) on -accel kvm -cpu host,pmu=on,
  then, while it runs:
    sudo tools/host-cancel-probe -d 30 -p $(pgrep -f qemu-system) \\
        --guest results/<run>/results.json
  With -p, vCPU threads are found by their names ("CPU n/KVM") and counted
  one by one; without it the count is system-wide and divided by --vcpus.

exit status: 0 counted, 1 perf failed while counting, 2 bad usage,
3 cannot count here (not root, no perf, no such symbol, probe in place),
130 interrupted (the probe is still removed)."""

EXIT_OK, EXIT_PERF, EXIT_USAGE, EXIT_CANNOT = 0, 1, 2, 3
# Our own event name, so that a probe someone placed on the same function
# is left alone and a stale one of ours is recognised.
EVENT_NAME = "hvprobe_cancel"
EVENT = f"probe:{EVENT_NAME}"
SEP = ";"       # perf stat -x: thread names hold spaces and slashes
SYMBOLS = {"intel": "vmx_cancel_injection", "amd": "svm_cancel_injection"}
VENDORS = {"GenuineIntel": "intel", "AuthenticAMD": "amd",
           "HygonGenuine": "amd"}
VCPU_COMM = re.compile(r"CPU (\d+)/KVM$")

# Tests point these elsewhere.
PROC = Path("/proc")
geteuid = os.geteuid


class CannotRun(Exception):
    """Counting cannot happen on this host; the message says why."""


def vendor(cpuinfo):
    """intel or amd, from /proc/cpuinfo's vendor_id."""
    m = re.search(r"^vendor_id\s*:\s*(\S+)", cpuinfo, re.MULTILINE)
    if not m or m.group(1) not in VENDORS:
        raise CannotRun("not an Intel or AMD host (vendor_id "
                        f"{m.group(1) if m else 'missing'})")
    return VENDORS[m.group(1)]


def symbol_module(kallsyms, symbol):
    """The module that holds symbol ("" for the kernel proper), or None
    when /proc/kallsyms does not list it."""
    for line in kallsyms.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[2] == symbol:
            return parts[3].strip("[]") if len(parts) > 3 else ""
    return None


def vcpu_threads(pid):
    """{tid: vCPU index} of QEMU's vCPU threads, named "CPU n/KVM"."""
    found = {}
    for comm in (PROC / str(pid) / "task").glob("*/comm"):
        try:
            m = VCPU_COMM.match(comm.read_text().strip())
        except OSError:
            continue            # the thread left
        if m:
            found[int(comm.parent.name)] = int(m.group(1))
    return found


def stat_argv(perf, seconds, out, tids=None, pid=None):
    """perf stat: one line per second (per thread when tids are given) into
    out; the sleep sets the length, as -I cannot be combined with
    --timeout."""
    argv = [perf, "stat", "-x", SEP, "-I", "1000", "-e", EVENT, "-o", out]
    if tids:
        argv += ["--per-thread", "-t", ",".join(str(t) for t in tids)]
    elif pid:
        argv += ["-p", str(pid)]
    else:
        argv += ["-a"]
    return argv + ["--", "sleep", str(seconds)]


def parse_stat(text):
    """[(time, thread or None, count)] from perf stat -x ';' -I output.

    Each interval line is: time; [comm-tid;] count; unit; event; run time;
    percentage; ... (perf-stat(1), CSV FORMAT). The count is found as the
    field two before the event name, so the optional identifier can be
    there or not. Comment lines, a closing summary (no time stamp) and
    "<not counted>" intervals are skipped."""
    samples = []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = [f.strip() for f in line.split(SEP)]
        if EVENT not in fields:
            continue
        at = fields.index(EVENT)
        if at < 3:
            continue            # no time stamp: the closing summary
        try:
            stamp = float(fields[0])
            count = int(float(fields[at - 2]))
        except (ValueError, IndexError):
            continue
        thread = fields[1] if at - 2 > 1 else None
        samples.append((stamp, thread, count))
    return samples


def thread_id(label):
    """The tid in perf's comm-tid label ("CPU 0/KVM-4242" -> 4242)."""
    tail = label.rsplit("-", 1)[-1]
    return int(tail) if tail.isdigit() else None


def rates(samples):
    """{thread: (total, seconds, mean per s, peak per s)} over the
    intervals perf printed; interval i runs from the stamp before it (0
    for the first) to its own, and the window ends at the last stamp."""
    stamps = sorted({s for s, _, _ in samples})
    length = dict(zip(stamps, (b - a for a, b in
                               zip([0.0] + stamps[:-1], stamps))))
    seconds = stamps[-1] if stamps else 0.0
    totals, peaks = {}, {}
    for stamp, thread, n in samples:
        totals[thread] = totals.get(thread, 0) + n
        rate = n / length[stamp] if length[stamp] > 0 else 0.0
        peaks[thread] = max(peaks.get(thread, 0.0), rate)
    return {t: (n, seconds, n / seconds if seconds else 0.0, peaks[t])
            for t, n in totals.items()}


def guest_data(path):
    """The pmi_stress DATA object of a serial log or results.json."""
    text = Path(path).read_text(errors="replace")
    try:
        doc = json.loads(text)
    except ValueError:
        objects = ktap.parse(text.splitlines()).data
    else:
        objects = [d for t in doc.get("tests", []) for d in t.get("data", [])]
    return next((d for d in objects if isinstance(d, dict)
                 and d.get("test") == "pmi_stress"), None)


def report(rows, vcpus, guest):
    """The lines to print. rows are (label, rates() tuple) in display
    order: one per vCPU thread, or a single total that is shared out over
    vcpus (from --vcpus, the vCPU threads or the guest's DATA)."""
    if not rows:
        return ["perf printed no intervals"]
    lines = [f"{'':12} {'cancels':>10} {'per s':>10} {'peak/s':>10}"]
    for label, (total, _, mean, peak) in rows:
        lines.append(f"{label:12} {total:10d} {mean:10.1f} {peak:10.1f}")
    total = sum(r[0] for _, r in rows)
    seconds = max(r[1] for _, r in rows)
    lines.append(f"window {seconds:.1f} s, {total} cancelled VM-entries")
    per_vcpu = None
    if len(rows) > 1:
        per_vcpu = sum(r[2] for _, r in rows) / len(rows)
        how = f"mean of {len(rows)} vCPU threads"
    elif vcpus and seconds:
        per_vcpu = total / seconds / vcpus
        how = f"total / {vcpus} vCPUs"
    else:
        how = "vCPU count unknown: pass --vcpus, -p or --guest"
    shown = "?" if per_vcpu is None else f"{per_vcpu:.1f}"
    lines.append(f"cancelled VM-entries per second per vCPU: {shown} "
                 f"({how})")
    if guest:
        pmis = guest.get("pmis_per_s_per_cpu")
        lines.append(f"guest pmi_stress: {guest.get('cpus')} CPUs, "
                     f"{guest.get('pmis')} PMIs, {pmis} PMIs/s per CPU")
        if per_vcpu is not None and isinstance(pmis, (int, float)) and pmis:
            lines.append(f"cancelled VM-entries per guest PMI: "
                         f"{per_vcpu / pmis:.3f} (about 1 before Linux 6.7, "
                         "near 0 after; meaningful only if the guest's "
                         "stress filled the host's window)")
    return lines


def rows_for(per_thread, threads):
    """rates() output as report() rows: vCPU threads by index, labelled
    "CPU n"; anything else (the total, other threads) after them."""
    def key(item):
        tid = thread_id(item[0]) if item[0] else None
        return (0, threads[tid]) if tid in threads else (1, str(item[0]))
    rows = []
    for label, stats in sorted(per_thread.items(), key=key):
        tid = thread_id(label) if label else None
        rows.append((f"CPU {threads[tid]}" if tid in threads
                     else label or "total", stats))
    return rows


def perf_probe(perf, *args):
    return subprocess.run([perf, "probe", *args], capture_output=True,
                          text=True, stdin=subprocess.DEVNULL)


def check_free(perf):
    """Refuse to take over a probe of ours, left by another run or by one
    that was killed before it could clean up."""
    listed = perf_probe(perf, "-l")
    if re.search(rf"^\s*{re.escape(EVENT)}\s", listed.stdout + "\n",
                 re.MULTILINE):
        raise CannotRun(f"{EVENT} already exists (another run, or one that "
                        f"was killed); remove it with: perf probe -d {EVENT}")


def add_probe(perf, symbol, module):
    """Without debuginfo perf resolves module symbols from kallsyms; with
    a vmlinux it may insist on -m, so that is the retry."""
    spec = f"{EVENT_NAME}={symbol}"
    done = perf_probe(perf, "-q", "-a", spec)
    if done.returncode and module:
        done = perf_probe(perf, "-q", "-m", module, "-a", spec)
    if done.returncode:
        raise CannotRun(f"perf probe -a {spec} failed:\n"
                        f"{done.stderr.strip()}")


def remove_probe(perf):
    done = perf_probe(perf, "-q", "-d", EVENT)
    if done.returncode:
        print(f"host-cancel-probe: could not remove {EVENT}; run: "
              f"perf probe -d {EVENT}\n{done.stderr.strip()}",
              file=sys.stderr)


def count(argv):
    """Run perf stat to its end; on Ctrl-C perf (same process group) got
    the SIGINT too and prints its last interval, so wait for it briefly.
    Returns (perf's exit status, or None if it never started, interrupted)."""
    proc = None
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL)
        return proc.wait(), False
    except KeyboardInterrupt:
        # Ctrl-C can land while Popen is still returning (a loaded host):
        # perf, in the same process group, has it too and stops by itself.
        if proc is None:
            return None, True
        try:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        return proc.returncode, True


def interrupt(signum, frame):
    raise KeyboardInterrupt


def parse_args(argv):
    p = cli.parser("tools/host-cancel-probe", __doc__,
                   epilog=__doc__.split("\n\n", 1)[1] + "\n" + MEANING)
    p.add_argument("-d", "--duration", type=int, default=10, metavar="S",
                   help="seconds to count (default: 10)")
    p.add_argument("-p", "--pid", type=int, metavar="PID",
                   help="QEMU's process: count only its threads, per vCPU "
                        "thread where their names say which")
    p.add_argument("--vcpus", type=int, metavar="N",
                   help="vCPUs to share a total count over (default: the "
                        "vCPU threads found, or the guest DATA's cpus)")
    p.add_argument("--guest", metavar="FILE",
                   help="the guest's serial log or results.json: show its "
                        "pmi_stress DATA beside the host's count")
    p.add_argument("--perf", default="perf", metavar="PATH",
                   help="perf binary (default: perf on PATH)")
    args = p.parse_args(argv)
    if args.duration < 1:
        p.error("--duration must be at least 1 s")
    if args.vcpus is not None and args.vcpus < 1:
        p.error("--vcpus must be at least 1")
    if args.pid is not None and not (PROC / str(args.pid)).is_dir():
        p.error(f"no process {args.pid}")
    return args


def main(argv):
    args = parse_args(argv)
    try:
        # A kill must clean up as Ctrl-C does.
        signal.signal(signal.SIGTERM, interrupt)
    except ValueError:
        pass                    # not the main thread (a test harness)
    guest = None
    if args.guest:
        try:
            guest = guest_data(args.guest)
        except OSError as err:
            print(f"host-cancel-probe: {err}", file=sys.stderr)
            return EXIT_USAGE
        if guest is None:
            print(f"host-cancel-probe: {args.guest} has no pmi_stress DATA "
                  "line; counting anyway", file=sys.stderr)
    if geteuid() != 0:
        raise CannotRun("must run as root: perf probe writes kprobe events "
                        "and perf stat reads them system-wide")
    perf = shutil.which(args.perf)
    if perf is None:
        raise CannotRun(f"{args.perf} not found: install perf (Debian: "
                        "apt-get install linux-perf)")
    symbol = SYMBOLS[vendor((PROC / "cpuinfo").read_text())]
    module = symbol_module((PROC / "kallsyms").read_text(), symbol)
    if module is None:
        raise CannotRun(f"{symbol} is not in /proc/kallsyms: is "
                        f"kvm_{'intel' if symbol[0] == 'v' else 'amd'} "
                        "loaded?")

    threads = vcpu_threads(args.pid) if args.pid else {}
    vcpus = args.vcpus or len(threads) or (guest or {}).get("cpus")
    where = (f"{len(threads)} vCPU threads of process {args.pid}" if threads
             else f"process {args.pid}" if args.pid else "the whole host")
    check_free(perf)
    with tempfile.TemporaryDirectory(prefix="host-cancel-probe.") as tmp:
        out = os.path.join(tmp, "stat.csv")
        try:
            add_probe(perf, symbol, module)
            print(f"counting {EVENT} ({symbol}) for {args.duration} s on "
                  f"{where}", flush=True)
            rc, interrupted = count(stat_argv(perf, args.duration, out,
                                              sorted(threads), args.pid))
        finally:
            # Also after a failed add: perf may have made part of it.
            remove_probe(perf)
        text = Path(out).read_text() if os.path.exists(out) else ""
    rows = rows_for(rates(parse_stat(text)), threads)
    print("\n".join(report(rows, vcpus, guest)))
    if interrupted:
        return 130
    if rc:
        print(f"host-cancel-probe: perf stat exited {rc}", file=sys.stderr)
        return EXIT_PERF
    return EXIT_OK


# How tools/entry.py names this command in messages, and what it turns
# into an exit status.
PROG = "host-cancel-probe"
EXITS = {CannotRun: EXIT_CANNOT}
