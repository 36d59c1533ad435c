# SPDX-License-Identifier: MIT
"""make check's host-probe row: the host probe on a real KVM guest
running nmi_storm, its counts judged against the guest's.

Under KVM the probe must see the guest's two window marks, find both
vCPU threads by name, count host events on each of them over the
window (VM-entries where kvm:kvm_entry fires; NMI IPIs always), count
the NMI IPIs the guest says it sent (to within one per vCPU at each of
the window's edges: probecount.edge_check), lose nothing, and leave no
tracing state behind. In kprobe mode it also counts, per vCPU thread,
the cancelled VM-entries and those that followed an NMI injection into
that vCPU with no VM-entry between (nmi_cancel_counts()): the sequence
a PMI's NMI follows before Linux 6.7, with NMI IPIs standing in for
PMIs where the host offers no vPMU. Where KVM, root, perf or tracefs
are missing the row is one SKIP that says which.
"""

import shutil
from typing import Any

from .. import hostinfo
from ..analysis import results
from ..base import jsonfile
from ..base.status import Status
from ..launch import guest, kvm, qemu
from . import hostprobe, probecount, probedrun

SMP = 2
TIMEOUT_S = 60
WORDS = ["test=nmi_storm"]
WINDOW = "nmi_storm"


def cannot(perf="perf") -> str | None:
    """Why the row cannot run here, or None."""
    if not (guest.BUILD / "hvprobe.elf32").exists():
        return "needs build/hvprobe.elf32 (make)"
    ok, why = kvm.works(str(guest.ROOT), hostinfo.qemu_version())
    if not ok:
        return f"needs KVM: {why}"
    if hostprobe.geteuid() != 0:
        return "needs root: perf reads kvm: tracepoints system-wide"
    if shutil.which(perf) is None:
        return f"needs perf: {perf} not found (Debian: linux-perf)"
    if not hostprobe.tracefs_mounted() and "tracefs" not in \
            (hostprobe.read(hostprobe.PROC / "filesystems", "") or "").split():
        return "needs tracefs: the kernel has none"
    return None


def nmi_cancel_counts(result, name=WINDOW) -> dict[str, Any] | None:
    """What the NMI IPIs did on the host over the guest's window named
    name, per vCPU thread, from a kprobe-mode Result: {"window_s",
    "complete", "lost", "vcpus": [{"vcpu", "tid", "cancels",
    "after_nmi", "nmi_injections", "entries"}], and their sums
    "cancels", "after_nmi", "nmi_injections"}. after_nmi: cancels that
    followed an NMI injection into that vCPU with no VM-entry between;
    nmi_injections: kvm_inject_nmi run on that thread (an NMI IPI's runs
    on its sender's). None where the window was not seen or the
    recording counted no cancels and injections (tracepoint mode, or a
    kprobe the kernel refused: result.notes say why)."""
    w = result.window(name)
    if w is None or not (probecount.counted(result, "cancel") and
                         probecount.counted(result, "inject_nmi")):
        return None
    rows = [{k: r[k] for k in ("vcpu", "tid", "cancels", "after_nmi",
                               "nmi_injections", "entries")}
            for r in probecount.causes(result, w)]
    return {"window_s": round(w.seconds, 6), "complete": w.complete,
            "lost": result.lost, "vcpus": rows,
            **{k: sum(r[k] for r in rows) for k in
               ("cancels", "after_nmi", "nmi_injections")}}


class Cases(list[tuple[Status, str]]):
    """[(status, line)], each added by its check."""

    def case(self, ok, text, skip=None) -> None:
        status = Status.SKIP if skip else Status.PASS if ok else Status.FAIL
        self.append((status, f"{text}" + (f" # SKIP {skip}" if skip else
                                          "")))


def judge(outcome, result) -> list[tuple[Status, str]]:
    """[(status, line)] for one probed nmi_storm run."""
    cases = Cases()
    data = probedrun.guest_data(outcome.doc, WINDOW) or {}
    w = run_cases(cases, outcome, result, data)
    vcpu_cases(cases, result, w)
    nmi_cases(cases, result, w, data.get("sent"))
    cases.case(result.perf_ok and result.lost == 0,
               f"perf ended cleanly and lost nothing (lost {result.lost})")
    cases.case(not result.leftovers,
               "no tracing state left behind" +
               ("".join(f"; {x}" for x in result.leftovers)))
    return cases


def run_cases(cases, outcome, result, data) -> probecount.Window:
    """The guest's run, its vCPU threads and its window as the host saw
    them; the window (an empty one when the host saw none)."""
    storm = probedrun.guest_test(outcome.doc, WINDOW)
    cases.case(outcome.doc["verdict"] == Status.PASS and storm is not None
               and storm["status"] == Status.PASS,
               "guest run passed, nmi_storm "
               f"{storm['status'] if storm else 'missing'}")
    named = sorted(i for i in result.vcpus.values() if i >= 0)
    cases.case(named == list(range(SMP)) and
               result.vcpu_method.startswith("thread names"),
               f"vCPU threads found by name: {named} ({result.vcpu_method})")
    w = result.window(WINDOW)
    cases.case(w is not None and w.complete and
               0.5 <= w.seconds <= data.get("seconds", 1) + 10,
               "the guest's window marks seen on the host: "
               + (f"{w.seconds:.3f} s" if w else "none"))
    return w if w is not None else probecount.Window()


def vcpu_cases(cases, result, w) -> None:
    """VM-entries and NMI IPIs on every vCPU thread over the window."""
    rows = probecount.per_vcpu(result, w)
    entries = [c["entry"] for _, _, c in rows]
    if result.fires("kvm:kvm_entry"):
        cases.case(len(entries) == SMP and all(entries),
                   f"VM-entries per vCPU thread over the window: {entries}")
    else:
        cases.case(True, "VM-entries per vCPU thread",
                   skip="kvm:kvm_entry never fired during the run (vendor "
                        f"module {hostprobe.vendor_module()}): VM-entries "
                        "cannot be counted on this host")
    ipis = [c["nmi_ipi"] for _, _, c in rows]
    cases.case(len(ipis) == SMP and all(ipis),
               f"host events per vCPU thread over the window: NMI IPIs {ipis}")


def nmi_cases(cases, result, w, sent) -> None:
    """The guest's NMIs against the host's IPIs, accepts, injections and
    the VM-entries cancelled after them."""
    vcpus = len(result.vcpus) or SMP
    check = probecount.edge_check(sent, w.total("nmi_ipi", set(result.vcpus)),
                                  vcpus)
    cases.case(check["ok"], check["line"])
    accepted = w.total("accept_nmi", set(result.vcpus))
    if accepted:
        check = probecount.edge_check(sent, accepted, vcpus, "NMIs",
                                      "kvm:kvm_apic_accept_irq")
        cases.case(check["ok"], check["line"])
    else:
        # KVM traces kvm_apic_accept_irq for fixed and lowest-priority
        # delivery only; an NMI goes straight to kvm_inject_nmi.
        cases.case(True, "NMIs the local APICs accepted "
                   "(kvm:kvm_apic_accept_irq)",
                   skip="this KVM traces no NMI delivery there (it traces "
                        "fixed and lowest-priority interrupts only)")
    counts = nmi_cancel_counts(result)
    if counts is not None:
        check = probecount.edge_check(sent, counts["nmi_injections"], vcpus,
                                      "NMIs", "kprobe on kvm_inject_nmi")
        cases.case(check["ok"], check["line"])
        cases.case(counts["cancels"] > 0,
                   "cancelled VM-entries per vCPU thread, and those after an "
                   "NMI injected into that vCPU with no VM-entry between: " +
                   ", ".join(f"CPU {r['vcpu']} {r['after_nmi']} of "
                             f"{r['cancels']}" for r in counts["vcpus"]))
    elif result.mode == "kprobe":
        cases.case(False, "cancels after NMI injections per vCPU thread: not "
                   "counted (" + ("; ".join(result.notes) or "no kprobe on "
                                  "kvm_inject_nmi") + ")")


def row(log_dir, perf="perf",
        kprobes="auto") -> tuple[results.Counts, Status, str]:
    """tools/check's row: (Counts, verdict, text). kprobes: "auto" counts
    cancels and NMI injections where the kernel has kprobe events
    (host-probe.json's "nmi_cancels": nmi_cancel_counts()), "off" never."""
    why = cannot(perf)
    if why:
        return results.Counts(skipped=1), Status.SKIP, f"SKIP {why}\n"
    run_dir = results.new_dir(log_dir, "host-probe")
    machine = qemu.Machine(boot="kernel", smp=SMP, accel="kvm",
                           cpu=qemu.KVM_CPU)
    lines = []
    try:
        with hostprobe.Probe(run_dir, perf=perf, kprobes=kprobes) as probe:
            outcome, result = probedrun.probed_run(machine, WORDS, run_dir,
                                                   TIMEOUT_S, probe)
    except (hostprobe.CannotProbe, guest.CannotRun, qemu.ConfigError,
            probedrun.QMPError, OSError) as err:
        text = f"the probed run could not take place: {err}\n"
        (run_dir / "probe.txt").write_text(text)
        return results.Counts(failed=1), Status.ERROR, text
    counts = results.Counts()
    for status, line in judge(outcome, result):
        counts.add(status)
        lines.append(f"{status.upper():4} {line}")
    w = result.window(WINDOW)
    if w is not None:
        lines += probecount.window_lines(result, w)
    lines += probecount.silent_lines(result) + result.notes
    lines.append(f"tracefs: {result.tracefs}")
    lines += outcome.lines
    text = "\n".join(lines) + "\n"
    (run_dir / "probe.txt").write_text(text)
    try:
        jsonfile.write(run_dir / "host-probe.json",
                       {**result.to_json(),
                        "nmi_cancels": nmi_cancel_counts(result)})
    except OSError as err:
        counts.add(Status.FAIL)
        text += f"FAIL cannot write host-probe.json: {err.strerror or err}\n"
    return counts, Status.FAIL if counts.failed else Status.PASS, text


EXIT_PASS, EXIT_FAIL, EXIT_SKIP = 0, 1, 4


def main(argv) -> int:
    """The row alone, for a job inside a nested host kernel: python3 -m
    tools.lib.probe.probecheck LOG_DIR [--kprobes auto|off] [--perf PATH].
    Prints the row's text; exit 0 passed, 1 failed or could not run,
    4 skipped. LOG_DIR/host-probe/host-probe.json holds the counts."""
    import argparse
    p = argparse.ArgumentParser(
        prog="python3 -m tools.lib.probe.probecheck", allow_abbrev=False,
        description="make check's host-probe row alone: nmi_storm under "
                    "KVM with the host probe attached, judged.",
        epilog="exit status: 0 passed, 1 failed or could not run, 2 bad "
               "usage, 4 skipped (the SKIP line says why)")
    p.add_argument("log_dir", metavar="LOG_DIR",
                   help="where the row's folder (host-probe) goes")
    p.add_argument("--kprobes", choices=("auto", "off"), default="auto",
                   help="auto: count cancels and NMI injections where the "
                        "kernel has kprobe events (default)")
    p.add_argument("--perf", default="perf", metavar="PATH",
                   help="perf binary (default: perf on PATH)")
    args = p.parse_args(argv)
    from pathlib import Path
    from ..base import signals
    with signals.interruptible():
        try:
            counts, verdict, text = row(Path(args.log_dir), args.perf,
                                        args.kprobes)
        except KeyboardInterrupt:
            print("probecheck: interrupted")
            return 130
    print(text, end="")
    # The counts, for a make check that ran this inside an L1 and reads
    # them through the share.
    jsonfile.write(Path(args.log_dir) / "host-probe-row.json",
                   {"passed": counts.passed, "failed": counts.failed,
                    "skipped": counts.skipped, "verdict": verdict})
    return {Status.PASS: EXIT_PASS,
            Status.SKIP: EXIT_SKIP}.get(verdict, EXIT_FAIL)


if __name__ == "__main__":
    import sys
    sys.exit(main(sys.argv[1:]))
