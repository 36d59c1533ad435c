# SPDX-License-Identifier: MIT
"""Does this KVM host notice the NMI a guest's PMI raises too late on
VM-entry, and cancel the entry for it? One command, run as root on the
host: it boots hvprobe under KVM with the host probe attached, in both
LVTPC modes, and prints the verdict.

The runs, each in its own folder of results/pmi-verdict-<date-time>/:

  1. probe check: nmi_storm (no vPMU needed). The guest's NMI IPIs sent
     must match what the host counted (kvm:kvm_apic_ipi) over the
     guest's marked window, to within one per vCPU at each of the
     window's two edges: the probe counts this host right.
  2. calibration: pmi_stress with LVTPC on a fixed vector and a long
     period, to learn the guest's PMI rate per period.
  3. the comparison, at --rate PMIs/s per vCPU (the report's ~1.5k):
     pmi_stress with pmu.lvtpc=nmi, then pmu.lvtpc=fixed, both with
     pmu.nmi_ipi=0 (NMI IPIs cancel VM-entries on fixed hosts too), on
     the same host: per vCPU the guest's PMIs/s, the host's PMIs/s,
     VM-entries/s and cancelled VM-entries/s, cancels per PMI, and the
     cancels the PMI's own NMI caused (a PMI delivery and an NMI
     injection into that vCPU, then the cancel, with no VM-entry
     between: the sequence before Linux 6.7), per PMI.
  4. a rate sweep (LVTPC=nmi) from --rate upwards, doubling, until the
     host no longer sustains the rate asked for: achieved vs asked.

Where the host lacks a vPMU (kvm.enable_pmu=N, or the guest's CPUID
shows none) or kprobe events (no cancel count), what can run runs and
the rest SKIPs with the reason.

--quick runs 1 and 3 only, at a fixed pmu.period with one counter
armed (pmu.counters=1: no calibration, no sweep), for git bisect run with --expect (README, "Stressing PMI/NMI
ordering").
"""

import datetime
import json
import re
import sys

from tools import ROOT
from tools.lib import cli, hostinfo
from tools.lib.base import jsonfile, seconds, signals
from tools.lib.analysis import results
from tools.lib.base.exits import EXIT_CANNOT_RUN as EXIT_CANNOT
from tools.lib.base.exits import EXIT_FAILED, CannotRun
from tools.lib.base.exits import EXIT_OK as EXIT_VERDICT
from tools.lib.hostkernels import hostkernel, nested
from tools.lib.launch import guest, kvm, qemu
from tools.lib.probe import hostprobe, probecount, probedrun
from tools.lib.base.status import Status

# Its own status beside tools/lib/base/exits.py's: the runs ran, and the
# figures allow no verdict.
EXIT_NO_VERDICT = 4
# With --expect: git bisect run's "this commit cannot be tested" (skip).
EXIT_SKIP = 125
EXPECTS = {"on-time": "on time", "late": "late"}
LATE, ON_TIME = 0.5, 0.1    # cancels per PMI, NMI minus fixed mode
MIN_PMIS = 1000             # guest PMIs per mode, for a ratio worth a verdict
BASELINE_MAX = 0.1          # cancels per PMI on a fixed vector
EPILOG = """\
exit status with --expect (what git bisect run reads): 0 the verdict is
the one expected, 1 it is the other, 125 no verdict (each reason above
and below: no KVM, no vPMU, lost records, inconclusive figures, a run
or the probe check failed), said on stderr; 2 and 130 as without it.

exit status: 0 a verdict, 1 a run or the probe check failed, 2 bad usage,
3 cannot probe here (no KVM, not root, no perf or tracefs), 4 ran what
it could but reached no verdict: no vPMU or no kprobes (the SKIPs say),
or inconclusive figures (the verdict line says which requirement was
not met), 130 interrupted (Ctrl-C, SIGTERM, SIGHUP: kprobes, perf and
QEMU are still removed).

what the figures mean:
  guest PMIs/s   pmi_stress's pmis_per_s_per_cpu: PMIs that found an
                 overflow, per second per vCPU (mean over the vCPUs)
  host PMIs/s    PMIs the host tried to deliver to that vCPU: kprobe on
                 kvm_pmu_deliver_pmi (dropped ones included while LVTPC
                 is masked), else the LVTPC interrupts its local APIC
                 accepted (kvm:kvm_apic_accept_irq, which KVM traces for
                 fixed-vector delivery only); shown, never divided by
  entries/s      VM-entries (kvm:kvm_entry), where the vendor traces them
  cancels/s      VM-entries prepared and cancelled (kprobe on the
                 vendor's *_cancel_injection): a request (KVM_REQ_NMI,
                 ...), a signal or need-resched arrived at the last check
  cancels/PMI    cancels / PMIs, where PMIs are always the guest's
                 (pmi_stress pmis over its window: interrupts that found
                 an overflow), in both modes: about 1 with LVTPC=nmi where
                 KVM services the NMI request before the PMI request
                 (before Linux 6.7, fad505b2cb83), near 0 after, and near
                 0 with a fixed vector on every host
  caused/PMI     cancels that followed a PMI delivery and an NMI injection
                 into the same vCPU with no VM-entry between (kprobes on
                 kvm_pmu_deliver_pmi and kvm_inject_nmi), / PMIs
  PMI-entry us   per VM-entry that followed a PMI delivery on its vCPU
                 thread, the mean time from that delivery to it: what
                 fad505b2cb83 shortens by the cancelled entry
The verdict needs both windows seen whole, no perf records lost, at
least %d PMIs per mode, a fixed-vector baseline of at most %.2f
cancels per PMI, and the cause counted; "late" needs NMI minus fixed
cancels per PMI and caused/PMI both at least %.2f, "on time" both at
most %.2f; anything else is inconclusive (exit 4).
Every figure covers exactly the guest's marked window (kvm:kvm_pio of
port 0x80 values 0xb0 and 0xb1).""" % (MIN_PMIS, BASELINE_MAX, LATE,
                                      ON_TIME)

PMI_VECTOR = 0x22           # APIC_VECTOR_PMI, apic/apic.h: LVTPC=fixed
CAL_PERIOD = 1000000
# --quick's period: --rate's 1500 PMIs/s per vCPU where the guest retires
# 3e9 instructions a second (3000 PMIs/s at CAL_PERIOD), about the
# workload loop on a 3 GHz core; a slower or faster host only moves the
# rate, and the verdict divides by the guest's PMIs whatever it is.
QUICK_PERIOD = 2000000
PERIOD_MIN, PERIOD_MAX = 2000, 2**31 - 1
SUSTAINED = 0.7             # achieved / asked below this: not sustained
PMIS_ARE = "the guest's PMIs (pmi_stress pmis over its marked window)"
PMU_CPU = qemu.KVM_CPU + ",pmu=on"


def parse_args(argv):
    p = cli.parser("tools/pmi-verdict", __doc__, epilog=EPILOG)
    _add_run_options(p)
    _add_host_options(p)
    cli.results_option(p, ROOT, "where the folder goes")
    cli.no_build(p)
    args = p.parse_args(argv)
    _check_args(p, args)
    return args


def _add_run_options(p):
    """What the guest runs and how the verdict is asked for."""
    p.add_argument("--smp", type=int, default=2, metavar="N",
                   help="vCPUs (default: 2)")
    p.add_argument("--seconds", type=int, default=5, metavar="S",
                   help="each pmi_stress window (pmu.seconds, default: 5)")
    p.add_argument("--rate", type=int, default=1500, metavar="R",
                   help="PMIs/s per vCPU to compare the modes at "
                        "(default: 1500, the report's workload)")
    p.add_argument("--period", type=int, metavar="N",
                   help="pmu.period for the comparison instead of one "
                        "calibrated for --rate")
    p.add_argument("--sweep-max", type=int, default=100000, metavar="R",
                   help="highest rate the sweep asks for (default: 100000)")
    p.add_argument("--no-sweep", action="store_true",
                   help="leave the rate sweep out")
    p.add_argument("--kprobes", choices=("auto", "off"), default="auto",
                   help="auto: count cancels where the kernel has kprobe "
                        "events; off: tracepoints only")
    p.add_argument("--cpu", default=PMU_CPU, metavar="MODEL",
                   help=f"QEMU CPU for the PMU runs (default: {PMU_CPU})")
    p.add_argument("--timeout", type=seconds.option, default=120, metavar="S",
                   help="per guest run (default: 120)")
    p.add_argument("--quick", action="store_true",
                   help="the probe check and the comparison only, at "
                        f"pmu.period={QUICK_PERIOD} (or --period) and "
                        "pmu.counters=1: no calibration, no sweep")
    p.add_argument("--expect", choices=tuple(EXPECTS),
                   help="exit 0 when the verdict is this one, 1 when it "
                        "is the other, 125 with the reason when there is "
                        "none (git bisect run's good, bad and skip)")


def _add_host_options(p):
    """The host side: perf, the results folder, the host kernels."""
    p.add_argument("--perf", default="perf", metavar="PATH",
                   help="perf binary (default: perf on PATH)")
    p.add_argument("--keep-perf-data", action="store_true",
                   help="keep each run's perf.data in its folder")
    p.add_argument("--name", metavar="NAME",
                   help="folder name (default: pmi-verdict-<date-time>)")
    p.add_argument("--host-kernel", action="append", metavar="SERIES|IMAGE",
                   help="judge this host kernel instead of the running "
                        "one, booted as L1 here (as tools/run "
                        "--host-kernel); repeat to put several side by "
                        "side. The verdict needs a vPMU in L1, which only "
                        "an L0 KVM with a PMU can give")
    p.add_argument("--host-modules", metavar="DIR",
                   help="with a --host-kernel image of your own: its "
                        "modules (lib/modules/RELEASE, or a folder "
                        "holding lib/modules/), unless KVM is built in")


def _check_args(p, args):
    """p.error() for values argparse's types cannot refuse alone."""
    if not 2 <= args.smp <= 64:
        p.error("--smp must be 2..64 (nmi_storm needs two vCPUs)")
    if not 1 <= args.seconds <= 3600:
        p.error("--seconds must be 1..3600")
    if args.rate < 1 or args.sweep_max < 1:
        p.error("--rate and --sweep-max must be positive")
    if args.period is not None and not PERIOD_MIN <= args.period <= \
            PERIOD_MAX:
        p.error(f"--period must be {PERIOD_MIN}..{PERIOD_MAX}")
    if args.host_modules and not args.host_kernel:
        p.error("--host-modules goes with --host-kernel")
    if args.expect and len(args.host_kernel or ()) > 1:
        p.error("--expect judges one host kernel: give --host-kernel once")
    if args.name is not None and not re.fullmatch(r"[\w.+-]+", args.name):
        p.error("--name may hold letters, digits and . _ + - only")


def period_for(rate, cal_period, cal_rate):
    """The pmu.period that should give rate PMIs/s per vCPU, from a
    calibration run (PMIs/s scale as 1/period), clamped to the range
    the guest accepts; None without a calibration."""
    if not cal_rate:
        return None
    return max(PERIOD_MIN, min(PERIOD_MAX, round(cal_period * cal_rate
                                                  / rate)))


def sweep_rates(start, top):
    """start, 2 start, 4 start, ... up to top."""
    rates, r = [], start
    while r <= top:
        rates.append(r)
        r *= 2
    return rates or [start]


def host_pmis(result, counts, lvtpc):
    """(PMIs the host delivered to one vCPU, how counted), or (None, why)."""
    if probecount.counted(result, "pmi"):
        return counts["pmi"], "kprobe kvm_pmu_deliver_pmi"
    if "kvm:kvm_apic_accept_irq" in result.recorded:
        key = "accept_nmi" if lvtpc == "nmi" else f"accept_fixed_{PMI_VECTOR}"
        return counts[key], "LVTPC interrupts accepted"
    return None, "no host PMI count"


def mode_figures(result, data, lvtpc):
    """Per vCPU (and their mean) figures of one pmi_stress window. PMIs,
    the one denominator, are the guest's: its pmis over the window,
    shared equally among the vCPUs for the per-vCPU rows."""
    w = result.window("pmi_stress")
    data = data or {}
    cpus = data.get("cpus") or len(result.vcpus) or 1
    pmis = data.get("pmis")
    out = {"lvtpc": lvtpc, "window_s": w.seconds if w else None,
           "complete": bool(w and w.complete), "lost": result.lost,
           "vcpus": [], "guest_pmis_per_s": data.get("pmis_per_s_per_cpu"),
           "period": data.get("period"), "pmis": pmis,
           "pmis_are": PMIS_ARE, "cancels": None, "caused": None,
           "cancels_per_pmi": None, "caused_per_pmi": None}
    if w is None:
        return out
    secs = w.seconds
    each = pmis / cpus if pmis else None
    causes = probecount.causes(result, w)
    for (index, tid, counts), cause in zip(probecount.per_vcpu(result, w),
                                           causes):
        host, how = host_pmis(result, counts, lvtpc)
        row = {"vcpu": index, "tid": tid, "pmis_how": how,
               "host_pmis_per_s": host / secs if host is not None and secs
               else None,
               "entries_per_s": cause["entries"] / secs
               if cause["entries"] is not None and secs else None,
               "cancels_per_s": cause["cancels"] / secs
               if cause["cancels"] is not None and secs else None,
               "cancels": cause["cancels"],
               "caused": cause["after_pmi_nmi"],
               "pmi_entries": cause["pmi_entries"],
               "pmi_to_entry_us": cause["pmi_to_entry_us"]}
        row["cancels_per_pmi"] = row["cancels"] / each \
            if row["cancels"] is not None and each else None
        row["caused_per_pmi"] = row["caused"] / each \
            if row["caused"] is not None and each else None
        out["vcpus"].append(row)
    for key in ("host_pmis_per_s", "entries_per_s", "cancels_per_s"):
        vals = [r[key] for r in out["vcpus"] if r[key] is not None]
        out[key] = sum(vals) / len(vals) if vals else None
    timed = [r for r in out["vcpus"] if r["pmi_to_entry_us"] is not None]
    out["pmi_to_entry_us"] = sum(
        r["pmi_to_entry_us"] * r["pmi_entries"] for r in timed) / \
        sum(r["pmi_entries"] for r in timed) if timed else None
    for key in ("cancels", "caused"):
        vals = [r[key] for r in out["vcpus"]]
        if vals and None not in vals:
            out[key] = sum(vals)
            out[f"{key}_per_pmi"] = out[key] / pmis if pmis else None
    return out


def fmt(value, digits=1):
    return "-" if value is None else f"{value:.{digits}f}"


def count(value):
    return "-" if value is None else str(value)


def mode_lines(fig):
    lines = [f"  LVTPC={fig['lvtpc']}: pmu.period={fig['period']}, window "
             f"{fmt(fig['window_s'], 3)} s"
             + ("" if fig["complete"] else " (marks not both seen)")]
    lines.append(f"    {'vCPU':6} {'tid':>8} {'guest PMIs/s':>13} "
                 f"{'host PMIs/s':>12} {'entries/s':>10} {'cancels/s':>10} "
                 f"{'cancels/PMI':>12} {'caused/PMI':>11} "
                 f"{'PMI-entry us':>12}")
    for r in fig["vcpus"]:
        lines.append(f"    {'CPU ' + str(r['vcpu']):6} {r['tid']:8} "
                     f"{fmt(fig['guest_pmis_per_s']):>13} "
                     f"{fmt(r['host_pmis_per_s']):>12} "
                     f"{fmt(r['entries_per_s']):>10} "
                     f"{fmt(r['cancels_per_s']):>10} "
                     f"{fmt(r['cancels_per_pmi'], 3):>12} "
                     f"{fmt(r['caused_per_pmi'], 3):>11} "
                     f"{fmt(r['pmi_to_entry_us'], 1):>12}")
    if fig["vcpus"]:
        lines.append(f"    all vCPUs: {count(fig['pmis'])} PMIs, "
                     f"{count(fig['cancels'])} cancels "
                     f"({fmt(fig['cancels_per_pmi'], 3)}/PMI), "
                     f"{count(fig['caused'])} after the PMI's own NMI "
                     f"({fmt(fig['caused_per_pmi'], 3)}/PMI), "
                     f"{fmt(fig['pmi_to_entry_us'], 1)} us from a PMI's "
                     "delivery to the VM-entry after it")
        lines.append(f"    (PMIs are {PMIS_ARE}, shared equally among the "
                     f"vCPUs; guest PMIs/s is their mean; host PMIs/s: "
                     f"{fig['vcpus'][0]['pmis_how']}, shown, never divided "
                     f"by)")
    return lines


def verdict(nmi, fixed):
    """(status, line) from the two modes' figures: status "late",
    "on time" or "inconclusive", the line saying why; (None, None)
    where cancels were not counted at all (no kprobes)."""
    a, b = nmi.get("cancels_per_pmi"), fixed.get("cancels_per_pmi")
    if nmi.get("cancels") is None or fixed.get("cancels") is None:
        return None, None
    head = (f"{fmt(a, 2)} cancels per PMI with LVTPC=NMI vs {fmt(b, 2)} on "
            f"a fixed vector, {fmt(nmi.get('caused_per_pmi'), 2)} after "
            "the PMI's own NMI: ")
    missing = []
    for fig in (nmi, fixed):
        mode = f"LVTPC={fig['lvtpc']}"
        if not fig.get("complete"):
            missing.append(f"the {mode} window was not seen whole on the "
                           "host")
        if fig.get("lost"):
            missing.append(f"perf lost {fig['lost']} records in the {mode} "
                           "run")
        if fig.get("guest_failed"):
            missing.append(f"the guest's pmi_stress failed with {mode}: "
                           f"{fig['guest_failed']}")
        if (fig.get("pmis") or 0) < MIN_PMIS:
            missing.append(f"{fig.get('pmis') or 0} PMIs with {mode}, "
                           f"fewer than {MIN_PMIS}")
    if nmi.get("caused") is None:
        missing.append("the cause was not counted (kprobes on "
                       f"{probecount.PMI_SYMBOL} and {probecount.NMI_SYMBOL}"
                       " needed)")
    if b is not None and b > BASELINE_MAX:
        missing.append(f"the fixed-vector baseline is {b:.2f} cancels per "
                       f"PMI, above {BASELINE_MAX:.2f}: something other "
                       "than the PMI's NMI cancels VM-entries here")
    if missing or a is None or b is None:
        return "inconclusive", head + "inconclusive: " + \
            "; ".join(missing or ["no PMIs to divide by"])
    caused = nmi["caused_per_pmi"]
    if a - b >= LATE and caused >= LATE:
        return "late", head + "this host notices the PMI's NMI late on " \
            "VM-entry (NMI requests serviced before PMI requests)"
    if a - b <= ON_TIME and caused <= ON_TIME:
        return "on time", head + "this host services the PMI's NMI in " \
            "the same VM-entry (PMI requests first, as since Linux 6.7)"
    return "inconclusive", head + "inconclusive: between the thresholds " \
        f"(late: both at least {LATE}, on time: both at most {ON_TIME}); " \
        "a partial fix, or noise: rerun with a longer --seconds"


KVM_COMMITS = ("a16eb25b09c0", "49ff3b4aec51", "73554b29bd70",
               "fad505b2cb83")


def guest_kvm(doc):
    """pmi_stress's kvm record in a results.json document: what the
    guest infers of the four KVM commits (pmu/stress.c), or None."""
    for t in doc.get("tests", []):
        for d in t.get("data", []):
            if isinstance(d, dict) and d.get("test") == "pmi_stress" and \
                    d.get("record") == "kvm":
                return d
    return None


def fixes_lines(guest, host):
    """The guest's inference of the KVM commits beside what the host's
    own symbols say (hostprobe.fixes()), a disagreement said outright."""
    lines = []
    if guest:
        lines.append("guest infers (LVTPC=nmi): " + ", ".join(
            f"{c} {guest.get(c, 'unseen')}" for c in KVM_COMMITS))
    for commit, said in sorted((host or {}).items()):
        seen = (guest or {}).get(commit, "unseen")
        if said in ("yes", "no") and seen in ("yes", "no") and seen != said:
            lines.append(f"{commit}: the guest says {seen}, the host's "
                         f"kallsyms {said}: they disagree")
    return lines


def ipi_check(sent, host, vcpus, lost=0, complete=True):
    """The probe check: the guest's NMI IPIs sent against the host's
    kvm:kvm_apic_ipi NMIs over the window, to within the window's edges
    (probecount.edge_check)."""
    return probecount.edge_check(sent, host, vcpus, lost=lost,
                                 complete=complete)


class Verdict:
    """The runs, one after another, each printed as it ends."""

    def __init__(self, args, folder):
        self.args, self.folder = args, folder
        self.doc = {"schema": results.SCHEMA, "kind": "pmi-verdict",
                    "started_at": datetime.datetime.now(
                        datetime.timezone.utc).isoformat(timespec="seconds"),
                    "host": hostprobe.host_facts(), "runs": [],
                    "skipped": [], "verdict": None}
        self.failed = False
        self.throttle = []
        self.step = 0
        self.kprobe_note = None

    def say(self, *lines):
        print("\n".join(lines), flush=True)

    def skip(self, what, why):
        self.doc["skipped"].append({"what": what, "why": why})
        self.say(f"SKIP {what}: {why}")

    def run(self, name, words, cpu, discover=False):
        """One probed boot: (outcome, result), or None when it could not
        take place (said, and counted as a failure)."""
        run_dir = results.new_dir(self.folder, name)
        machine = qemu.Machine(boot="kernel", smp=self.args.smp,
                               accel="kvm", cpu=cpu)
        try:
            with hostprobe.Probe(run_dir, perf=self.args.perf,
                                 kprobes=self.args.kprobes,
                                 keep_data=self.args.keep_perf_data,
                                 discover=discover) as probe:
                outcome, result = probedrun.probed_run(
                    machine, words, run_dir, self.args.timeout, probe)
        except hostprobe.CannotProbe as err:
            raise CannotRun(str(err)) from None
        except (guest.CannotRun, qemu.ConfigError, probedrun.QMPError,
                OSError) as err:
            self.failed = True
            self.say(f"FAIL {name}: could not run: {err}")
            return None
        self.throttle += result.throttle_messages
        record = {"name": name, "folder": guest.shown(run_dir),
                  "cmdline": " ".join(words),
                  "guest_verdict": outcome.doc["verdict"],
                  "probe": result.to_json()}
        self.doc["runs"].append(record)
        try:
            jsonfile.write(run_dir / "host-probe.json", result.to_json())
        except OSError as err:
            self.failed = True
            self.say(f"FAIL {name}: cannot write host-probe.json: "
                     f"{err.strerror or err}")
        for left in result.leftovers:
            self.failed = True
            self.say(f"FAIL {name}: tracing state left behind: {left}")
        return outcome, result, record

    def header(self, text):
        self.step += 1
        self.say("", f"[{self.step}] {text}")

    def probe_check(self):
        self.header(f"probe check: nmi_storm on {self.args.smp} vCPUs, "
                    "no vPMU needed")
        done = self.run("probe-check", ["test=nmi_storm"], qemu.KVM_CPU,
                        discover=True)
        if done is None:
            return None
        outcome, result, record = done
        data = probedrun.guest_data(outcome.doc, "nmi_storm") or {}
        w = result.window("nmi_storm")
        if w is None:
            self.failed = True
            self.say("FAIL the guest's nmi_storm window marks were not seen "
                     "on the host")
            return result
        self.say(*indent(probecount.window_lines(result, w)))
        self.say(*indent(probecount.silent_lines(result)))
        sent, host = data.get("sent"), w.total("nmi_ipi", set(result.vcpus))
        check = ipi_check(sent, host, len(result.vcpus) or self.args.smp,
                          result.lost, w.complete)
        record["check"] = check
        self.say(f"  {'PASS' if check['ok'] else 'FAIL'} {check['line']}")
        ok = check["ok"]
        if probecount.counted(result, "cancel"):
            self.say("  cancelled VM-entries/s per vCPU under NMI IPIs: "
                     + ", ".join(rate_of(c["cancel"], w.seconds)
                                 for _, _, c in probecount.per_vcpu(result, w))
                     + " (NMI IPIs cancel entries on fixed hosts too: not "
                       "the verdict's figure)")
        rows = probecount.causes(result, w)
        record["causes"] = rows
        if rows and all(r["after_nmi"] is not None for r in rows):
            self.say("  cancels after an NMI injected into that vCPU with no "
                     "VM-entry between, per vCPU: " +
                     ", ".join(f"{r['after_nmi']} of {r['cancels']}"
                               for r in rows))
        self.failed |= not ok
        return result

    def stress(self, name, lvtpc, period, seconds):
        words = ["test=pmi_stress", f"pmu.lvtpc={lvtpc}",
                 f"pmu.period={period}", f"pmu.seconds={seconds}",
                 "pmu.nmi_ipi=0"] + \
            (["pmu.counters=1"] if self.args.quick else [])
        done = self.run(name, words, self.args.cpu)
        if done is None:
            return None, None, None
        outcome, result, record = done
        test = probedrun.guest_test(outcome.doc, "pmi_stress")
        data = probedrun.guest_data(outcome.doc, "pmi_stress")
        record["guest_test"] = test and {"status": test["status"],
                                         "reason": test["reason"]}
        if name == "lvtpc-nmi" and guest_kvm(outcome.doc):
            self.doc["guest_kvm"] = guest_kvm(outcome.doc)
        return test, data, (result, record)

    def main(self):
        a = self.args
        self.say(f"pmi-verdict: {guest.shown(self.folder)}",
                 *hostprobe.facts_lines(self.doc["host"]))
        self.note_probe_check()
        if a.quick:
            period, cal_rate = a.period or QUICK_PERIOD, 0
            asked = "fixed: --quick" if not a.period else "--period"
        else:
            period, cal_rate, ended = self.calibrated_period()
            if period is None:
                return ended
            asked = f"asked {a.rate} PMIs/s per vCPU"
        figures, ended = self.compare_modes(period, asked)
        if figures is None:
            return ended
        self.doc["figures"] = figures
        if not a.no_sweep and not a.quick:
            self.sweep(cal_rate)
        return self.judge(figures)

    def note_probe_check(self):
        """Say how the host's events are counted and keep it in the doc."""
        check = self.probe_check()
        if check is None:
            return
        self.say(f"probe: {check.mode} mode" +
                 (f" (cancels: kprobe on {check.cancel_symbol})"
                  if check.mode == "kprobe" else ""),
                 *[f"probe: {n}" for n in check.notes],
                 f"probe: tracefs {check.tracefs}")
        self.doc["probe_mode"] = check.mode
        self.doc["probe_notes"] = check.notes
        self.kprobe_note = next((n for n in check.notes
                                 if n.startswith("cancelled")), None)

    def calibrated_period(self):
        """(period, calibration PMIs/s, None) for --rate from a
        calibration run, or (None, None, finish's status) when there is
        none to be had."""
        a = self.args
        test, data, rec = self.calibrate()
        if rec is None:
            return None, None, self.finish(None, "the calibration run failed")
        why = self.no_vpmu(test, data)
        if why:
            self.skip("calibration", why)
            self.skip(f"LVTPC=nmi vs LVTPC=fixed at {a.rate} PMIs/s",
                      "no vPMU (as above)")
            if not a.no_sweep:
                self.skip("rate sweep", "no vPMU (as above)")
            return None, None, self.finish(None, self.with_kprobe_note(why))
        cal_rate = data.get("pmis_per_s_per_cpu") or 0
        self.say(f"  {cal_rate} PMIs/s per vCPU at "
                 f"pmu.period={CAL_PERIOD}")
        period = a.period or period_for(a.rate, CAL_PERIOD, cal_rate)
        if period is None:
            self.failed = True
            return None, None, self.finish(None,
                                           "the calibration run took no PMIs")
        return period, cal_rate, None

    def compare_modes(self, period, asked):
        """({lvtpc: figures}, None) of a run per LVTPC mode at period,
        or (None, finish's status) when one could not be judged."""
        a = self.args
        self.header(f"LVTPC=nmi vs LVTPC=fixed, pmu.nmi_ipi=0, "
                    f"pmu.period={period} ({asked}), {a.seconds} s each")
        figures = {}
        for lvtpc in ("nmi", "fixed"):
            test, data, rec = self.stress(f"lvtpc-{lvtpc}", lvtpc, period,
                                          a.seconds)
            if rec is None:
                return None, self.finish(None, f"the LVTPC={lvtpc} run failed")
            why = self.no_vpmu(test, data)
            if why:
                # Only --quick gets here so: a calibration would have
                # found it first.
                self.skip(f"LVTPC={lvtpc}", why)
                return None, self.finish(None, self.with_kprobe_note(why))
            fig = mode_figures(rec[0], data, lvtpc)
            if test and test["status"] not in (Status.PASS, Status.SKIP):
                # Lost PMIs, say: its ratio would divide what it missed.
                fig["guest_failed"] = test["reason"] or \
                    f"{test['status']}, see its serial.log"
            rec[1]["figures"] = fig
            figures[lvtpc] = fig
            self.say(*mode_lines(fig))
            if test and test["status"] not in (Status.PASS, Status.SKIP):
                self.say(f"    guest pmi_stress {test['status']}: "
                         f"{test['reason'] or 'see its serial.log'}")
        return figures, None

    def judge(self, figures):
        """finish() with the verdict of the two modes' figures, or with
        why there is none."""
        status, line = verdict(figures["nmi"], figures["fixed"])
        if status is not None:
            return self.finish(line, None, figures, status)
        probe = self.doc["runs"][-1]["probe"]
        why = "; ".join(n for n in probe["notes"]
                        if n.startswith("cancelled")) or \
            "cancelled VM-entries were not counted"
        return self.finish(None, why, figures)

    def calibrate(self):
        self.header("calibration: pmi_stress, LVTPC on a fixed vector, "
                    f"pmu.period={CAL_PERIOD}, 1 s")
        return self.stress("calibrate", "fixed", CAL_PERIOD, 1)

    def no_vpmu(self, test, data):
        """Why a pmi_stress run had no vPMU to stress, or None."""
        if test is not None and test["status"] != Status.SKIP and data \
                and "skipped" not in data:
            return None
        why = (data or {}).get("skipped") or \
            (test or {}).get("reason") or "the guest ran no pmi_stress"
        no_pmu = self.doc["host"].get("enable_pmu") == "N"
        return f"no vPMU: guest: {why}" + \
            ("; host: kvm.enable_pmu=N" if no_pmu else "")

    def with_kprobe_note(self, why):
        return why + (f"; and {self.kprobe_note}" if self.kprobe_note
                      else "")

    def judged(self):
        """What --expect judges: the verdict's status ("late", "on time",
        "inconclusive" or None), whether a run failed, and its line or
        why there is none."""
        return {"status": self.doc.get("verdict_status"),
                "failed": self.failed,
                "why": self.doc.get("verdict") or self.doc.get("no_verdict")}

    def sweep(self, cal_rate):
        a = self.args
        self.header(f"rate sweep, LVTPC=nmi, pmu.nmi_ipi=0, {a.rate} to "
                    f"{a.sweep_max} PMIs/s per vCPU asked, until the host "
                    "stops keeping up")
        self.say(f"    {'asked/s':>8} {'period':>10} {'achieved/s':>11} "
                 f"{'host PMIs/s':>12} {'entries/s':>10} {'cancels/s':>10} "
                 f"{'cancels/PMI':>12}  guest")
        rows, best = [], None
        for want in sweep_rates(a.rate, a.sweep_max):
            period = period_for(want, CAL_PERIOD, cal_rate)
            test, data, rec = self.stress(f"sweep-{want}", "nmi", period,
                                          min(a.seconds, 2))
            if rec is None:
                break
            fig = mode_figures(rec[0], data, "nmi")
            got = fig["guest_pmis_per_s"] or 0
            row = {"asked": want, "period": period, "achieved": got,
                   "sustained": got >= SUSTAINED * want,
                   "host_pmis_per_s": fig["host_pmis_per_s"],
                   "entries_per_s": fig["entries_per_s"],
                   "cancels_per_s": fig["cancels_per_s"],
                   "cancels_per_pmi": fig["cancels_per_pmi"],
                   "guest": test["status"] if test else "none",
                   "throttle_messages": len(rec[0].throttle_messages)}
            rows.append(row)
            self.say(f"    {want:8} {period:10} {got:11} "
                     f"{fmt(row['host_pmis_per_s']):>12} "
                     f"{fmt(row['entries_per_s']):>10} "
                     f"{fmt(row['cancels_per_s']):>10} "
                     f"{fmt(row['cancels_per_pmi'], 3):>12}  {row['guest']}"
                     + (f", {row['throttle_messages']} throttling messages"
                        if row["throttle_messages"] else "")
                     + ("" if got >= SUSTAINED * want else
                        f", below {SUSTAINED:.0%} of asked: not sustained"))
            sustained = got >= SUSTAINED * want
            if sustained:
                best = row
            if not sustained or period == PERIOD_MIN:
                break
        self.doc["sweep"] = rows
        if best:
            self.say(f"  highest sustained: {best['achieved']} PMIs/s per "
                     f"vCPU (asked {best['asked']})")

    def finish(self, line, why, figures=None, status=None):
        """Say and save the outcome: line, the verdict's (status "late",
        "on time" or "inconclusive"), or why there is none."""
        self.doc["host"]["throttle_messages"] = self.throttle
        self.doc["host"]["perf_event_max_sample_rate_after"] = \
            hostprobe.sample_rate()
        self.say("", *hostprobe.facts_lines(self.doc["host"])[1:],
                 *fixes_lines(self.doc.get("guest_kvm"),
                              self.doc["host"].get("fixes")))
        self.doc["verdict_status"] = status
        if status in ("late", "on time"):
            self.doc["verdict"] = line
            self.say(f"verdict: {line}")
        elif status == "inconclusive":
            self.doc["no_verdict"] = line
            self.say(f"verdict: {line}")
        else:
            self.doc["no_verdict"] = why
            self.say(f"verdict: none: {why}")
        rc = EXIT_FAILED if self.failed else EXIT_VERDICT \
            if status in ("late", "on time") else EXIT_NO_VERDICT
        self.doc["exit"] = rc
        try:
            jsonfile.write(self.folder / "verdict.json", self.doc)
        except OSError as err:
            self.say(f"FAIL cannot write {guest.shown(self.folder)}/"
                     f"verdict.json: {err.strerror or err}")
            return EXIT_FAILED
        self.say(f"results: {guest.shown(self.folder)}")
        return rc


# --- several host kernels, side by side --------------------------------

def kernel_summary(label, doc=None, error=None):
    """One host kernel's outcome, as side_by_side() takes it: from its
    Verdict's doc (or verdict.json read back), or error, the reason it
    could not run at all (it did not boot, no KVM in it...)."""
    out = {"kernel": label, "error": error, "release": None,
           "vendor_module": None, "enable_pmu": None, "probe": None,
           "probe_check": None, "ipi_causes": None, "figures": {},
           "status": None, "verdict": None, "no_verdict": None,
           "skipped": [], "exit": EXIT_CANNOT if error else None}
    if doc is None:
        return out
    host = doc.get("host") or {}
    out.update(release=host.get("kernel"),
               vendor_module=host.get("vendor_module"),
               enable_pmu=host.get("enable_pmu"),
               probe=doc.get("probe_mode"),
               figures=doc.get("figures") or {},
               status=doc.get("verdict_status"),
               verdict=doc.get("verdict"), no_verdict=doc.get("no_verdict"),
               skipped=list(doc.get("skipped") or []),
               exit=doc.get("exit"))
    for run in doc.get("runs") or []:
        if run.get("name") == "probe-check":
            out["probe_check"] = run.get("check")
            rows = run.get("causes") or []
            if rows and all(r.get("after_nmi") is not None for r in rows):
                out["ipi_causes"] = (sum(r["after_nmi"] for r in rows),
                                     sum(r["cancels"] for r in rows))
    return out


def _cells(k):
    """The column of one kernel: {row label: text}."""
    if k["error"]:
        return {"result": "could not run"}
    check = k["probe_check"]
    nmi, fixed = k["figures"].get("nmi") or {}, \
        k["figures"].get("fixed") or {}
    cells = {
        "release": k["release"] or "?",
        "vendor module": k["vendor_module"] or "none found",
        "kvm.enable_pmu": k["enable_pmu"] or "?",
        "probe mode": k["probe"] or "-",
        "probe check": "-" if not check else
        f"{'PASS' if check.get('ok') else 'FAIL'} "
        f"{check.get('guest_sent')}/{check.get('host_nmi_ipis')}",
        "NMI-IPI cancels caused": "-" if not k["ipi_causes"] else
        f"{k['ipi_causes'][0]} of {k['ipi_causes'][1]}",
        "PMIs (guest), nmi/fixed": f"{count(nmi.get('pmis'))}/"
                                   f"{count(fixed.get('pmis'))}",
        "cancels/PMI, LVTPC=nmi": fmt(nmi.get("cancels_per_pmi"), 3),
        "cancels/PMI, fixed": fmt(fixed.get("cancels_per_pmi"), 3),
        "caused/PMI, LVTPC=nmi": fmt(nmi.get("caused_per_pmi"), 3),
        "result": k["status"] or "no verdict"}
    return cells


ROWS = ("release", "vendor module", "kvm.enable_pmu", "probe mode",
        "probe check", "NMI-IPI cancels caused", "PMIs (guest), nmi/fixed",
        "cancels/PMI, LVTPC=nmi", "cancels/PMI, fixed",
        "caused/PMI, LVTPC=nmi", "result")


def side_by_side(kernels):
    """Lines showing each host kernel's figures in a column (kernels: a
    list of kernel_summary() dicts, in the order asked), then each one's
    verdict line, or what could not run and why."""
    cols = [_cells(k) for k in kernels]
    width = max(len(r) for r in ROWS) + 2
    widths = [max([len(k["kernel"])] + [len(c.get(r, "")) for r in ROWS])
              for k, c in zip(kernels, cols)]
    lines = ["host kernel".ljust(width) + "  ".join(
        k["kernel"].rjust(w) for k, w in zip(kernels, widths))]
    for row in ROWS:
        if all(row not in c for c in cols):
            continue
        lines.append(row.ljust(width) + "  ".join(
            c.get(row, "-").rjust(w) for c, w in zip(cols, widths)))
    lines.append(f"(PMIs are {PMIS_ARE}; probe check: guest NMI IPIs sent/"
                 "host kvm:kvm_apic_ipi; NMI-IPI cancels caused: cancels "
                 "after an NMI injected into that vCPU with no VM-entry "
                 "between, of all cancels)")
    for k in kernels:
        if k["error"]:
            lines.append(f"{k['kernel']}: could not run: {k['error']}")
            continue
        if k["verdict"]:
            lines.append(f"{k['kernel']}: verdict: {k['verdict']}")
        elif k["status"] == "inconclusive":
            lines.append(f"{k['kernel']}: verdict: {k['no_verdict']}")
        else:
            lines.append(f"{k['kernel']}: verdict: none: "
                         f"{k['no_verdict'] or 'not reached'}")
        for skip in k["skipped"]:
            lines.append(f"{k['kernel']}:   SKIP {skip.get('what')}: "
                         f"{skip.get('why')}")
    return lines


def combined_exit(kernels):
    """One exit status for several kernels: 1 if any run or probe check
    failed, 3 if no kernel could be probed, 0 if every kernel has a
    verdict, else 4."""
    codes = [k["exit"] for k in kernels]
    if EXIT_FAILED in codes:
        return EXIT_FAILED
    if codes and all(c == EXIT_CANNOT for c in codes):
        return EXIT_CANNOT
    if codes and all(c == EXIT_VERDICT for c in codes):
        return EXIT_VERDICT
    return EXIT_NO_VERDICT


def indent(lines):
    return [f"  {line}" for line in lines]


def rate_of(n, seconds):
    return f"{n / seconds:.1f}" if seconds else "-"


def bisect_exit(expect, judged):
    """The exit status --expect gives: 0 the verdict expected, 1 the
    other, EXIT_SKIP (said on stderr, with the reason) no verdict."""
    status, want = judged["status"], EXPECTS[expect]
    if status in EXPECTS.values() and not judged["failed"]:
        if status == want:
            return EXIT_VERDICT
        print(f"{PROG}: the verdict is {status}, not {want}", file=sys.stderr)
        return EXIT_FAILED
    why = judged["why"] or "not reached"
    if judged["failed"]:
        why = f"a run or the probe check failed (above): {why}"
    print(f"{PROG}: no verdict (125, git bisect's skip): {why}",
          file=sys.stderr)
    return EXIT_SKIP


def main(argv):
    args = parse_args(argv)
    # SIGTERM and SIGHUP as Ctrl-C: the probes, perf and QEMU are undone
    # on the way out, and tools/entry.py says "interrupted" (exit 130).
    with signals.interruptible():
        try:
            if args.host_kernel:
                rc, judged = host_kernels_main(args, argv)
            else:
                rc, judged = verdict_main(args)
        except tuple(EXITS) as err:
            if args.expect is None:
                raise
            rc, judged = EXIT_CANNOT, {"status": None, "failed": False,
                                       "why": str(err)}
        return rc if args.expect is None else bisect_exit(args.expect,
                                                          judged)


def build(args):
    failed = None if args.no_build else cli.build(ROOT)
    if failed:
        raise CannotRun(failed)


def results_folder(args):
    """The results folder: --name, else pmi-verdict-<date-time>."""
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    try:
        return results.new_dir(args.results,
                               args.name or f"pmi-verdict-{stamp}")
    except OSError as err:
        raise CannotRun(f"cannot make the results folder: {err}") from None


def l1_has_no_vpmu(l0):
    """Why an L1 host kernel run on l0 has no vPMU to judge, or None."""
    if l0.accel != "kvm":
        return f"no vPMU in L1: it would run under TCG ({l0.why}), and " \
            "only an L0 KVM with a PMU gives L1 one"
    if kvm.flavour()["enable_pmu"] is False:
        return "no vPMU in L1: this host's kvm.enable_pmu=N"
    return None


def host_kernels_main(args, argv):
    """This command inside each --host-kernel as L1, one after another,
    then their outcomes side by side: (exit status, what --expect
    judges of the one kernel it allows)."""
    l0 = nested.choose_l0(*kvm.flavour_works(ROOT, hostinfo.qemu_version()))
    if args.expect:
        # Before anything is built, fetched or booted: git bisect run
        # then skips each commit at once.
        why = l1_has_no_vpmu(l0)
        if why:
            raise CannotRun(why)
    build(args)
    folder = results_folder(args)
    inner = cli.without_options(
        argv, ("--host-kernel", "--host-modules", "--results", "--name"),
        ("--no-build",))
    print(f"L0: {l0.accel} ({l0.why})", flush=True)
    summaries = []
    for spec in args.host_kernel:
        try:
            kernel = hostkernel.resolve(spec, args.host_modules)
        except hostkernel.HostKernelError as err:
            summaries.append(kernel_summary(spec, error=str(err)))
            continue
        share = folder / f"on-{kernel.label}"
        command = [sys.executable, str(ROOT / "tools" / "pmi-verdict"),
                   "--no-build", "--results", str(share), "--name",
                   "verdict", *inner]
        print(f"host kernel {kernel.label}: {kernel.describe()} as L1",
              flush=True)
        try:
            outcome = nested.run(kernel, [command], share,
                                 args.timeout * 8, l0)
        except nested.NestedError as err:
            summaries.append(kernel_summary(kernel.label, error=str(err)))
            continue
        try:
            doc = json.loads((share / "verdict" / "verdict.json").read_text())
            summaries.append(kernel_summary(kernel.label, doc))
        except (OSError, ValueError):
            summaries.append(kernel_summary(
                kernel.label, error=f"pmi-verdict in L1 exited "
                f"{outcome.statuses[0]} and wrote no verdict.json "
                f"(L1 {outcome.info.get('release')}, "
                f"{outcome.info.get('module')}, enable_pmu="
                f"{outcome.info.get('enable_pmu')})"))
    print("\n".join(side_by_side(summaries)))
    jsonfile.write(folder / "verdicts.json",
                   {"l0": l0.to_json(), "kernels": summaries})
    print(f"results: {guest.shown(folder)}")
    one = summaries[0]
    return combined_exit(summaries), {
        "status": one["status"], "failed": one["exit"] == EXIT_FAILED,
        "why": one["error"] or one["verdict"] or one["no_verdict"]}


def verdict_main(args):
    if hostprobe.geteuid() != 0:
        raise CannotRun("needs root: the host probe runs perf on kvm: "
                        "tracepoints (and kprobes)")
    build(args)
    ok, why = kvm.works(str(ROOT), hostinfo.qemu_version())
    if not ok:
        raise CannotRun(f"needs KVM: {why}")
    folder = results_folder(args)
    verdict = Verdict(args, folder)
    try:
        return verdict.main(), verdict.judged()
    except KeyboardInterrupt as err:
        # What ran is kept, marked as cut short; the runs in progress
        # were undone on the way here.
        verdict.doc["interrupted"] = str(err) or "SIGINT"
        try:
            jsonfile.write(folder / "verdict.json", verdict.doc)
        except OSError:
            pass
        raise


PROG = "pmi-verdict"
EXITS = {CannotRun: EXIT_CANNOT, hostprobe.CannotProbe: EXIT_CANNOT}
