# SPDX-License-Identifier: MIT
"""Count what a KVM host does for a running hvprobe guest, per vCPU
thread, over the window the guest marks: cancelled VM-entries where the
kernel has kprobes, VM-entries and exits where the vendor traces them,
PMIs and NMIs delivered, NMI IPIs sent.

Run as root on the KVM host while the guest runs pmi_stress or
nmi_storm. It attaches to QEMU's vCPU threads ("CPU n/KVM": tools/run
starts QEMU with -name ...,debug-threads=on), records for --duration
seconds or, given the guest's serial log as it is written, until the
guest's next window has ended, then removes what it placed (kprobes,
a tracefs mount; also on Ctrl-C) and prints each window the guest
marked (port 0x80: 0xb0 begins, 0xb1 ends) beside the guest's DATA.
tools/pmi-verdict does all of it, booting the guests itself.
"""

import json
import os
import sys
import tempfile
import time
from pathlib import Path

from tools.lib import cli
from tools.lib.base import jsonfile, seconds, signals
from tools.lib.analysis import ktap
from tools.lib.base.exits import EXIT_CANNOT_RUN, EXIT_FAILED, EXIT_OK
from tools.lib.probe import hostprobe, probecount

EPILOG = """\
what is counted, by mode (printed first):
  kprobe      the vendor's *_cancel_injection (vmx_, svm_, pvm_, found
              in /proc/kallsyms): VM-entries KVM prepared and cancelled
              because a request, a signal or need-resched came at the
              last check; kvm_pmu_deliver_pmi (PMIs); kvm_inject_nmi
  tracepoint  kvm:kvm_entry and kvm:kvm_exit (on vendors that trace
              them), kvm:kvm_apic_ipi (NMI IPIs a vCPU sent),
              kvm:kvm_apic_accept_irq (NMIs a local APIC accepted). No
              cancel count: that needs kprobes, and says so.

A guest PMI with LVTPC in NMI mode is a KVM_REQ_PMI whose handling
raises a KVM_REQ_NMI. Hosts that service NMI requests before PMI
requests on VM-entry (before Linux 6.7, fad505b2cb83) notice the new NMI
request only at the last check and cancel the entry: about one cancel
per PMI. Compare with pmu.lvtpc=fixed on the same host, both with
pmu.nmi_ipi=0 (NMI IPIs from other vCPUs cancel entries on fixed hosts
too): tools/pmi-verdict does.

example:
  tools/run --accel kvm --cpu host,-arch-capabilities,pmu=on --smp 4 \\
      --name pmi -- test=pmi_stress pmu.seconds=20 &
  sudo tools/host-cancel-probe -d 40 --guest results/pmi/serial.log

exit status: 0 counted, 1 perf failed, 2 bad usage, 3 cannot probe here
(not root, no perf or tracefs, no QEMU, a stale probe of ours), 130
interrupted by Ctrl-C, SIGTERM or SIGHUP (what it placed is still
removed)."""

POLL_S = 0.2
DRAIN_S = 0.5           # after the end mark's line, for perf to catch up


def qemu_processes():
    """{pid: number of vCPU threads} of QEMU processes with named vCPU
    threads."""
    found = {}
    for comm in hostprobe.PROC.glob("[0-9]*/comm"):
        try:
            if not comm.read_text().startswith("qemu-system"):
                continue
        except OSError:
            continue
        pid = int(comm.parent.name)
        n = len(hostprobe.vcpus_by_name(pid))
        if n:
            found[pid] = n
    return found


def guest_doc(path):
    """(serial log text or None, [DATA objects]) of a serial log or a
    results.json."""
    text = Path(path).read_text(errors="replace")
    try:
        doc = json.loads(text)
    except ValueError:
        return text, ktap.parse(text.splitlines()).data
    if not isinstance(doc, dict):
        return None, []
    return None, [d for t in doc.get("tests", []) for d in t.get("data", [])
                  if isinstance(d, dict)]


def main_data(objects, test):
    return next((d for d in objects if d.get("test") == test
                 and "record" not in d), None)


def ends(text):
    """How many windows the serial log says have ended."""
    return sum(1 for m in probecount.MARK_LINE.finditer(text or "")
               if m.group(3) == "ends")


def guest_lines(result, window, objects):
    """The guest's DATA beside the host's counts of the same window."""
    lines = []
    rows = probecount.per_vcpu(result, window)
    secs = window.seconds
    pmi = main_data(objects, "pmi_stress")
    if window.name in (None, "pmi_stress") and pmi and "pmis" in pmi:
        rate = pmi.get("pmis_per_s_per_cpu")
        lines.append(f"guest pmi_stress: LVTPC={pmi.get('lvtpc')}, "
                     f"{pmi.get('cpus')} vCPUs, {pmi.get('pmis')} PMIs, "
                     f"{rate} PMIs/s per vCPU, nmi_ipi="
                     f"{pmi.get('nmi_ipi_rate')}")
        if probecount.counted(result, "cancel") and rate and secs:
            cancels = sum(c["cancel"] for _, _, c in rows) / secs / \
                max(1, len(rows))
            lines.append(f"cancelled VM-entries per guest PMI: "
                         f"{cancels / rate:.3f} (about 1 with LVTPC=nmi "
                         "where NMI requests are serviced before PMI "
                         "requests, near 0 after Linux 6.7 and with "
                         "LVTPC=fixed)")
    causes = probecount.causes(result, window)
    if causes and all(r["after_nmi"] is not None for r in causes):
        lines.append("cancelled VM-entries after an NMI injected into that "
                     "vCPU with no VM-entry between (after a PMI delivered "
                     "to it, too), per vCPU: " + ", ".join(
                         f"CPU {r['vcpu']} {r['after_nmi']} "
                         f"({dash(r['after_pmi_nmi'])}) of {r['cancels']}"
                         for r in causes))
    storm = main_data(objects, "nmi_storm")
    if window.name in (None, "nmi_storm") and storm:
        host = window.total("nmi_ipi", set(result.vcpus))
        lines.append(f"guest nmi_storm: sent {storm.get('sent')} NMI IPIs; "
                     f"host counted {host} (kvm:kvm_apic_ipi) over the "
                     "window")
    return lines


def dash(value):
    return "-" if value is None else str(value)


def parse_args(argv):
    p = cli.parser("tools/host-cancel-probe", __doc__, epilog=EPILOG)
    p.add_argument("-p", "--pid", type=int, metavar="PID",
                   help="QEMU's process (default: the one QEMU with named "
                        "vCPU threads)")
    p.add_argument("-d", "--duration", type=seconds.option, default=10,
                   metavar="S",
                   help="seconds to record at most (default: 10)")
    p.add_argument("--guest", metavar="FILE",
                   help="the guest's serial log (followed: recording stops "
                        "once a window ends) or results.json: its DATA is "
                        "shown beside the host's counts")
    p.add_argument("--kprobes", choices=("auto", "off"), default="auto",
                   help="auto: cancels via kprobes where the kernel has "
                        "kprobe events; off: tracepoints only")
    p.add_argument("--perf", default="perf", metavar="PATH",
                   help="perf binary (default: perf on PATH)")
    p.add_argument("--out", metavar="DIR",
                   help="keep perf.data and host-probe.json in DIR "
                        "(default: nothing is kept)")
    args = p.parse_args(argv)
    if args.pid is not None and not (hostprobe.PROC / str(args.pid)).is_dir():
        p.error(f"no process {args.pid}")
    if args.guest and not os.path.isfile(args.guest):
        p.error(f"no file {args.guest}")
    return args


def record(probe, args, pid):
    """Wait while perf records: the duration, the guest's window's end
    (its serial log's mark line), or QEMU's exit, whichever first.
    True when interrupted."""
    start_ends = None
    if args.guest:
        start_ends = ends(hostprobe.read(args.guest, ""))
    deadline = time.monotonic() + args.duration
    try:
        while time.monotonic() < deadline:
            if not (hostprobe.PROC / str(pid)).is_dir():
                break
            if start_ends is not None and \
                    ends(hostprobe.read(args.guest, "")) > start_ends:
                time.sleep(DRAIN_S)
                break
            time.sleep(POLL_S)
    except KeyboardInterrupt:
        return True
    return False


def main(argv):
    args = parse_args(argv)
    # SIGTERM and SIGHUP as Ctrl-C: the probes come off, what was
    # counted is still shown, exit 130.
    with signals.interruptible():
        return probe_main(args)


def probe_main(args):
    pid = target_pid(args)
    out = Path(args.out) if args.out else None
    if out:
        out.mkdir(parents=True, exist_ok=True)
    interrupted = False
    facts = hostprobe.host_facts()
    with tempfile.TemporaryDirectory(prefix="host-cancel-probe.") as tmp:
        folder = out or Path(tmp)
        with hostprobe.Probe(folder, perf=args.perf, kprobes=args.kprobes,
                             keep_data=bool(out), discover=True) as probe:
            print(f"probing process {pid}: {probe.mode} mode"
                  + (f" (cancels: kprobe on {probe.cancel})"
                     if probe.cancel else ""), flush=True)
            try:
                probe.attach(pid)
                interrupted = record(probe, args, pid)
            except KeyboardInterrupt:
                interrupted = True
            result = probe.finish()
        objects = name_windows(result, args.guest) if args.guest else []
    facts["throttle_messages"] = result.throttle_messages
    show(facts, result, objects)
    if out and not write_doc(out, {"host": facts, "pid": pid,
                                   "probe": result.to_json()}):
        return EXIT_FAILED
    if interrupted:
        return 130
    if not result.perf_ok:
        print("host-cancel-probe: perf failed while counting",
              file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


def target_pid(args):
    """-p's process, else the one QEMU with named vCPU threads."""
    if args.pid is not None:
        return args.pid
    found = qemu_processes()
    if len(found) != 1:
        what = ", ".join(f"{p} ({n} vCPUs)" for p, n in
                         sorted(found.items())) or "none"
        raise hostprobe.CannotProbe(
            f"pass -p: QEMU processes with named vCPU threads: {what}")
    return next(iter(found))


def name_windows(result, guest):
    """Name result's windows after the guest's marks; the guest's
    objects (guest_doc())."""
    serial, objects = guest_doc(guest)
    names = probecount.window_names(serial or "")
    # The windows the recording saw whole are the last ones named.
    marked = [w for w in result.windows if w.begin is not None]
    for w, name in zip(marked, names[len(names) - len(marked):]
                       if len(names) >= len(marked) else names):
        w.name = name
    return objects


def show(facts, result, objects) -> None:
    """Print the host's facts, the recording's notes and each window's
    counts."""
    print("\n".join(hostprobe.facts_lines(facts)))
    print(f"vCPU threads: {len(result.vcpus)}, by {result.vcpu_method}")
    for note in result.notes:
        print(f"note: {note}")
    print(f"tracefs: {result.tracefs}")
    print("\n".join(probecount.silent_lines(result)))
    if not result.windows:
        print("perf recorded nothing from the vCPU threads")
    for w in result.windows:
        print("\n".join(probecount.window_lines(result, w)))
        print("\n".join(guest_lines(result, w, objects)))
    if result.lost:
        print(f"perf lost {result.lost} records: the counts are lower "
              "bounds")
    for left in result.leftovers:
        print(f"host-cancel-probe: tracing state left behind: {left}",
              file=sys.stderr)


def write_doc(out, doc) -> bool:
    """Write out/host-probe.json; False, said, when it cannot be."""
    try:
        jsonfile.write(out / "host-probe.json", doc)
    except OSError as err:
        print(f"host-cancel-probe: cannot write {out}/host-probe.json: "
              f"{err.strerror or err}", file=sys.stderr)
        return False
    return True


# How tools/entry.py names this command in messages, and what it turns
# into an exit status.
PROG = "host-cancel-probe"
EXITS = {hostprobe.CannotProbe: EXIT_CANNOT_RUN}
