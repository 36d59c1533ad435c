# SPDX-License-Identifier: MIT
"""What the host probe's recording says: perf script's lines cut into
the windows the guest marked, each event counted under the vCPU thread
that caused it, and a probed run's Result read back as figures.

Pure: tools/lib/probe/hostprobe.py runs perf and feeds this module its text;
the tests feed it text of their own.
"""

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

MARK_PORT, MARK_BEGIN, MARK_END = 0x80, 0xb0, 0xb1
SEP = ";"                   # perf stat -x: thread names hold spaces

# Our own kprobe events, in a group of our own: one someone else placed
# on the same function is left alone, and a stale one of ours is
# recognised.
PROBE_GROUP = "hvprobe"
KPROBES = {"cancel": "cancel", "pmi": "pmi", "nmi": "inject_nmi"}
# tally()'s key for each.
KPROBE_KEYS = {"cancel": "cancel", "pmi": "pmi", "nmi": "inject_nmi"}
PMI_SYMBOL = "kvm_pmu_deliver_pmi"
NMI_SYMBOL = "kvm_inject_nmi"
MARK_EVENT = "kvm:kvm_pio"
MARK_FILTER = f"port == {MARK_PORT:#x}"
# What counts mean, by tally() key.
KEYS = {
    "entry": "VM-entries (kvm:kvm_entry)",
    "exit": "VM-exits (kvm:kvm_exit)",
    "nmi_ipi": "NMI IPIs sent (kvm:kvm_apic_ipi, delivery mode NMI)",
    "other_ipi": "other IPIs sent (kvm:kvm_apic_ipi)",
    "accept_nmi": "NMIs the local APICs accepted (kvm:kvm_apic_accept_irq)",
    "cancel": "cancelled VM-entries (kprobe on *_cancel_injection)",
    "pmi": f"PMIs delivered (kprobe on {PMI_SYMBOL})",
    "inject_nmi": f"NMIs queued (kprobe on {NMI_SYMBOL})",
    "caused_nmi": "cancelled VM-entries after an NMI injection into the "
                  "same vCPU with no VM-entry between",
    "caused_pmi_nmi": "cancelled VM-entries after a PMI delivery and its "
                      "NMI injection into the same vCPU with no VM-entry "
                      "between",
    "pmi_entries": "VM-entries after one or more PMI deliveries on that "
                   "vCPU thread (the entry that injects the first one's "
                   "NMI)",
    "pmi_to_entry_ns": "from the first of those PMI deliveries to that "
                       "VM-entry, summed, in nanoseconds",
}

SCRIPT_LINE = re.compile(r"^\s*(\d+)/(\d+)\s+(\d+\.\d+):\s+"
                         r"([\w-]+:[\w-]+):\s?(.*)$")
PIO = re.compile(r"pio_write at 0x([0-9a-f]+) size \d+ count \d+ "
                 r"val 0x([0-9a-f]+)")
ACCEPT = re.compile(r"apicid ([0-9a-f]+) vec (\d+) \((\w+)\|")
VCPU_ARG = re.compile(r"\bvcpu=(0x[0-9a-f]+)")


def classify(event, trace) -> str | None:
    """tally()'s key for one event, or None for what is not counted."""
    if event == "kvm:kvm_entry":
        return "entry"
    if event == "kvm:kvm_exit":
        return "exit"
    if event == "kvm:kvm_apic_ipi":
        return "nmi_ipi" if "(NMI|" in trace else "other_ipi"
    if event == "kvm:kvm_apic_accept_irq":
        m = ACCEPT.search(trace)
        if not m or m.group(3) == "NMI":
            return "accept_nmi"
        return f"accept_{m.group(3).lower()}_{m.group(2)}"
    for key, name in KPROBES.items():
        if event == f"{PROBE_GROUP}:{name}":
            return KPROBE_KEYS[key]
    return None


def event_keys(event) -> tuple[str, ...]:
    """The prefixes of the tally() keys an event's records go under."""
    fixed = {"kvm:kvm_entry": ("entry",), "kvm:kvm_exit": ("exit",),
             "kvm:kvm_apic_ipi": ("nmi_ipi", "other_ipi"),
             "kvm:kvm_apic_accept_irq": ("accept_",)}
    if event in fixed:
        return fixed[event]
    key = classify(event, "")
    return (key,) if key else ()


@dataclass
class Window:
    """What happened between a begin and an end mark. begin or end None:
    the mark fell outside the recording, which then bounds the window."""
    begin: float | None = None
    end: float | None = None
    tid: int | None = None            # the thread that marked it
    first: float | None = None        # first and last event inside
    last: float | None = None
    counts: dict = field(default_factory=dict)     # {tid: Counter}
    accepted_by_apic: Counter = field(default_factory=Counter)
    name: str | None = None           # from the serial log's mark lines

    @property
    def complete(self) -> bool:
        return self.begin is not None and self.end is not None

    @property
    def seconds(self) -> float:
        a = self.begin if self.begin is not None else self.first
        b = self.end if self.end is not None else self.last
        return (b - a) if a is not None and b is not None else 0.0

    def add(self, tid, key, stamp, trace, amount=1) -> None:
        self.counts.setdefault(tid, Counter())[key] += amount
        if key == "accept_nmi":
            m = ACCEPT.search(trace)
            if m:
                self.accepted_by_apic[int(m.group(1), 16)] += 1
        self.first = stamp if self.first is None else self.first
        self.last = stamp

    def total(self, key, tids=None) -> int:
        return sum(c[key] for t, c in self.counts.items()
                   if tids is None or t in tids)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "begin": self.begin, "end": self.end,
                "seconds": round(self.seconds, 6),
                "complete": self.complete, "marked_by": self.tid,
                "counts": {str(t): dict(c) for t, c in
                           sorted(self.counts.items())},
                "nmis_accepted_by_apic_id":
                    {str(a): n for a, n in
                     sorted(self.accepted_by_apic.items())}}


@dataclass
class Tally:
    windows: list
    totals: dict            # {tid: Counter} over the whole recording
    events: int
    first: float | None
    last: float | None


class Causes:
    """Which cancelled VM-entries follow the sequence that explains them,
    read in the recording's order.

    Before Linux 6.7 (fad505b2cb83), vcpu_enter_guest() services
    KVM_REQ_NMI before KVM_REQ_PMI: the PMI's delivery through an LVTPC
    in NMI mode (kvm_pmu_deliver_pmi, then kvm_inject_nmi) raises a new
    NMI request after the NMI requests were serviced, the last check
    before VM-entry finds it, and the entry is cancelled
    (kvm_x86_ops.cancel_injection). So a cancel is counted as caused by
    a PMI when, for its vCPU, a PMI delivery and then an NMI injection
    came after the vCPU's last VM-entry and its last cancel. The same
    with an NMI IPI: another vCPU's thread injects the NMI (the sender
    runs kvm_inject_nmi), so each kprobe records its struct kvm_vcpu
    pointer and the sequence is followed per vCPU, not per thread;
    VM-entries are per thread (a vCPU's entries and cancels run on its
    own thread). Without the pointer (kprobes placed without it) the
    thread stands for the vCPU.

    It also times each PMI to the VM-entry after it, the figure
    fad505b2cb83 shortens by the cancel: per thread, since the PMI's
    delivery runs in vcpu_enter_guest() on its vCPU's own thread, from
    the first delivery after an entry to the next entry."""

    def __init__(self) -> None:
        # {tid: stamp of the first PMI delivery since its last VM-entry}
        self.pmi_at: dict[int, float] = {}
        # {tid: order of its last VM-entry}
        self.entry: dict[int, int] = {}
        # {vCPU: order of its last cancel, PMI delivery, NMI injection}
        self.cancel: dict[int | str, int] = {}
        self.pmi: dict[int | str, int] = {}
        self.inject: dict[int | str, int] = {}

    @staticmethod
    def vcpu(tid, trace) -> int | str:
        m = VCPU_ARG.search(trace)
        return m.group(1) if m else tid

    def see(self, n, tid, key, trace, stamp=0.0) \
            -> tuple[tuple[str, int], ...]:
        """(key, amount) of what an event at order n shows beyond
        itself: a cancel's causes, an entry's time since a PMI."""
        if key == "entry":
            self.entry[tid] = n
            if tid in self.pmi_at:
                since = self.pmi_at.pop(tid)
                return (("pmi_entries", 1),
                        ("pmi_to_entry_ns", round((stamp - since) * 1e9)))
        elif key == "pmi":
            self.pmi[self.vcpu(tid, trace)] = n
            self.pmi_at.setdefault(tid, stamp)
        elif key == "inject_nmi":
            self.inject[self.vcpu(tid, trace)] = n
        elif key == "cancel":
            vcpu = self.vcpu(tid, trace)
            since = max(self.entry.get(tid, -1), self.cancel.get(vcpu, -1))
            self.cancel[vcpu] = n
            inject, pmi = self.inject.get(vcpu, -1), self.pmi.get(vcpu, -1)
            if inject > since:
                return (("caused_pmi_nmi", 1), ("caused_nmi", 1)) \
                    if since < pmi < inject else (("caused_nmi", 1),)
        return ()


def tally(lines) -> Tally:
    """The windows the marks delimit in perf script's lines (in time
    order, as perf script sorts them), with what each thread did inside,
    and the recording's totals. Everything before the first mark is
    kept as a window with no begin in case that mark is an end (the
    recording started inside the window), or in case there is no mark at
    all; an open window at the end has no end. Each cancel that follows
    its cause (Causes) also counts under caused_nmi and caused_pmi_nmi."""
    totals: dict[int, Counter[str]] = {}
    marks = _Marks()
    first = last = None
    n = 0
    causes = Causes()
    for line in lines:
        m = SCRIPT_LINE.match(line)
        if not m:
            continue
        n += 1
        tid, stamp = int(m.group(2)), float(m.group(3))
        event, trace = m.group(4), m.group(5)
        first = stamp if first is None else first
        last = stamp
        if event == MARK_EVENT:
            marks.see(trace, tid, stamp)
            continue
        key = classify(event, trace)
        if key is None:
            continue
        for k, amount in ((key, 1), *causes.see(n, tid, key, trace,
                                                 stamp)):
            totals.setdefault(tid, Counter())[k] += amount
            marks.add(tid, k, stamp, trace, amount)
    return Tally(marks.windows_of(first, last), totals, n, first, last)


class _Marks:
    """The windows as the guest's port-0x80 marks open and close them:
    the one open now, and the stretch before the first mark."""

    def __init__(self):
        self.windows: list[Window] = []
        self.pre: Window | None = Window()
        self.current: Window | None = None

    def see(self, trace, tid, stamp) -> None:
        """A MARK_EVENT line: a begin or end mark opens or closes a
        window; any other port write is not ours."""
        pio = PIO.search(trace)
        if not pio or int(pio.group(1), 16) != MARK_PORT:
            return
        value = int(pio.group(2), 16)
        if value == MARK_BEGIN:
            if self.current is not None:
                self.windows.append(self.current)   # begun twice: keep both
            self.current, self.pre = Window(begin=stamp, tid=tid), None
        elif value == MARK_END:
            if self.current is None and self.pre is not None:
                self.current = self.pre
                self.current.tid = tid
            if self.current is not None:
                self.current.end = stamp
                self.windows.append(self.current)
            self.current = self.pre = None

    def add(self, tid, key, stamp, trace, amount) -> None:
        """Count an event in whichever windows are open."""
        for w in (self.current, self.pre):
            if w is not None:
                w.add(tid, key, stamp, trace, amount)

    def windows_of(self, first, last) -> list[Window]:
        """Every window once the recording (first to last) has ended."""
        windows = list(self.windows)
        if self.current is not None:
            windows.append(self.current)
        elif self.pre is not None and self.pre.first is not None:
            windows.append(self.pre)    # no mark at all: the whole recording
        for w in windows:           # the recording bounds what no mark does
            if w.begin is None:
                w.first = first
            if w.end is None:
                w.last = last
        return windows


MARK_LINE = re.compile(r"# host mark 0x([0-9a-f]+) \((\S+) (begins|ends)\)")


def window_names(serial_text) -> list[str]:
    """The names of the windows the serial log announces, in order."""
    return [m.group(2) for m in MARK_LINE.finditer(serial_text)
            if int(m.group(1), 16) == MARK_BEGIN]


def name_windows(windows, serial_text) -> None:
    """Each window the recording saw begin takes, in order, the name the
    serial log announces for it."""
    for w, name in zip([w for w in windows if w.begin is not None],
                       window_names(serial_text)):
        w.name = name


def fired_from(tl, recorded, fired) -> dict[str, int]:
    """fired ({event: count}, perf stat's) with each recorded event's
    count over the whole recording: what was recorded fired, or not,
    whatever the discovery says."""
    fired = dict(fired)
    for event in recorded:
        keys = event_keys(event)
        if keys:
            fired[event] = sum(n for c in tl.totals.values()
                               for k, n in c.items() if k.startswith(keys))
    return fired


@dataclass
class Result:
    """One probed guest run, as the host saw it."""
    mode: str                    # "kprobe" or "tracepoint"
    notes: list                  # why something is not counted
    recorded: list               # the events perf recorded
    vcpus: dict                  # {tid: vCPU index}
    vcpu_method: str
    windows: list
    fired: dict                  # {kvm:event: count}, whole run, discovery
    discovery_tids: list
    lost: int
    events: int
    perf_ok: bool
    throttle_messages: list
    sample_rate_after: int | None
    leftovers: list = field(default_factory=list)
    cancel_symbol: str | None = None
    tracefs: str | None = None

    def window(self, name=None) -> Window | None:
        """The window called name (else the first complete one)."""
        for w in self.windows:
            if (name is None and w.complete) or (name and w.name == name):
                return w
        return None

    def fires(self, event) -> bool:
        return self.fired.get(event, 0) > 0

    def to_json(self) -> dict[str, Any]:
        return {"mode": self.mode, "notes": self.notes,
                "recorded": self.recorded, "cancel_symbol": self.cancel_symbol,
                "vcpus": {str(t): i for t, i in sorted(self.vcpus.items())},
                "vcpu_method": self.vcpu_method,
                "windows": [w.to_json() for w in self.windows],
                "fired": self.fired, "discovery_threads": self.discovery_tids,
                "lost": self.lost, "events": self.events,
                "perf_ok": self.perf_ok,
                "throttle_messages": self.throttle_messages,
                "perf_event_max_sample_rate_after": self.sample_rate_after,
                "tracefs": self.tracefs, "leftovers": self.leftovers}


def per_vcpu(result, window) -> list[tuple[int, int, Counter[str]]]:
    """[(vCPU index, tid, Counter)] for the window, vCPUs in order."""
    rows = []
    for tid, index in sorted(result.vcpus.items(),
                             key=lambda item: (item[1], item[0])):
        rows.append((index, tid, window.counts.get(tid, Counter())))
    return rows


def causes(result, window) -> list[dict[str, Any]]:
    """Per vCPU thread over the window, what explains its cancelled
    VM-entries: [{"vcpu", "tid", "cancels", "after_nmi", "after_pmi_nmi",
    "entries", "nmi_injections", "pmis", "pmi_entries",
    "pmi_to_entry_us"}], vCPUs in order. after_nmi:
    cancels after an NMI injection into that vCPU with no VM-entry (nor
    other cancel) between; after_pmi_nmi: those whose injection came
    from a PMI delivered to it (the pre-6.7 sequence). nmi_injections
    and pmis count what ran on that thread (an NMI IPI's injection runs
    on its sender's); pmi_entries and pmi_to_entry_us: the VM-entries
    after a PMI delivery and the mean time from it (Causes). None where
    the recording did not count it."""
    have = {k: counted(result, k) for k in ("cancel", "pmi", "inject_nmi",
                                            "entry")}
    timed = have["pmi"] and have["entry"]
    rows = []
    for index, tid, c in per_vcpu(result, window):
        rows.append({
            "vcpu": index, "tid": tid,
            "cancels": c["cancel"] if have["cancel"] else None,
            "after_nmi": c["caused_nmi"] if have["cancel"] and
            have["inject_nmi"] else None,
            "after_pmi_nmi": c["caused_pmi_nmi"] if have["cancel"] and
            have["inject_nmi"] and have["pmi"] else None,
            "entries": c["entry"] if have["entry"] and
            result.fires(KEY_EVENTS["entry"]) else None,
            "nmi_injections": c["inject_nmi"] if have["inject_nmi"]
            else None,
            "pmis": c["pmi"] if have["pmi"] else None,
            "pmi_entries": c["pmi_entries"] if timed else None,
            "pmi_to_entry_us": c["pmi_to_entry_ns"] / c["pmi_entries"] / 1e3
            if timed and c["pmi_entries"] else None})
    return rows


# An NMI IPI sent while another vCPU writes a window mark is counted by
# the guest on one side of the mark and by the host on the other
# (measured on Linux 6.1 in L1: the guest sent 8391, the host counted
# 8392). Each vCPU has at most one such IPI in flight at each of the
# window's two edges.
EDGE_PER_VCPU = 1


def edge_check(sent, host, vcpus, what="NMI IPIs", host_what=
               "kvm:kvm_apic_ipi", lost=0, complete=True) -> dict[str, Any]:
    """The guest's count sent against the host's over the marked window,
    allowed to differ by EDGE_PER_VCPU per vCPU at each of the window's
    two edges: {"guest_sent", "host_nmi_ipis", "differ", "bound",
    "lost", "complete", "ok", "line"}."""
    bound = 2 * EDGE_PER_VCPU * vcpus
    differ = None if sent is None else host - sent
    ok = differ is not None and abs(differ) <= bound and not lost and \
        complete
    line = (f"{what}: guest sent {sent}, host counted {host} "
            f"({host_what}) over the window")
    if differ is not None:
        line += (f": differ by {abs(differ)}, at most {bound} may (one per "
                 f"vCPU at each of the window's two edges, {vcpus} vCPUs)")
    if lost:
        line += f"; perf lost {lost} records"
    if not complete:
        line += "; the window was not seen whole"
    return {"guest_sent": sent, "host_nmi_ipis": host, "differ": differ,
            "bound": bound, "lost": lost, "complete": complete, "ok": ok,
            "line": line}


def window_lines(result, window, guest=None) -> list[str]:
    """What one window shows per vCPU thread, as lines: every figure
    per second of the window, and what could not be counted."""
    secs = window.seconds
    lines = [f"window {window.name or '?'}: {secs:.3f} s {span(window)}, "
             f"{result.mode} mode, vCPU threads by {result.vcpu_method}"]
    keys = [k for k in ("entry", "exit", "cancel", "pmi", "inject_nmi",
                        "accept_nmi", "nmi_ipi") if counted(result, k)]
    head = f"  {'vCPU':6} {'tid':>8}" + "".join(f" {LABELS[k]:>12}"
                                                for k in keys)
    lines.append(head)
    # A tracepoint that never fired is one this vendor does not trace:
    # "-", not a rate of 0. (A kprobe that never fired counted 0.)
    silent = {k for k in ("entry", "exit")
              if not result.fires(KEY_EVENTS[k])}
    for index, tid, counts in per_vcpu(result, window):
        name = f"CPU {index}" if index >= 0 else "?"
        cells = "".join(f" {'-' if k in silent else rate(counts[k], secs):>12}"
                        for k in keys)
        lines.append(f"  {name:6} {tid:8}{cells}")
    lines.append("  (per second of the window; - : never fired)"
                 if silent & set(keys) else "  (per second of the window)")
    return lines


def span(window) -> str:
    """What bounds a window, in words."""
    if window.complete:
        return "between the guest's marks"
    if window.begin is None and window.end is None:
        return "of recording (no marks seen: the whole recording)"
    if window.begin is None:
        return "from the recording's start (inside the window) to the " \
            "guest's end mark"
    return "from the guest's begin mark to the recording's end (the " \
        "window had not ended)"


LABELS = {"entry": "entries/s", "exit": "exits/s", "cancel": "cancels/s",
          "pmi": "PMIs/s", "inject_nmi": "NMIs/s", "accept_nmi": "APIC NMI/s",
          "nmi_ipi": "NMI IPI/s"}


# The event each figure comes from.
KEY_EVENTS = {"entry": "kvm:kvm_entry", "exit": "kvm:kvm_exit",
              "accept_nmi": "kvm:kvm_apic_accept_irq",
              "nmi_ipi": "kvm:kvm_apic_ipi",
              "cancel": f"{PROBE_GROUP}:{KPROBES['cancel']}",
              "pmi": f"{PROBE_GROUP}:{KPROBES['pmi']}",
              "inject_nmi": f"{PROBE_GROUP}:{KPROBES['nmi']}"}


def counted(result, key) -> bool:
    """Whether the recording counted key at all."""
    return KEY_EVENTS[key] in result.recorded


def rate(n, seconds) -> str:
    return f"{n / seconds:.1f}" if seconds > 0 else "-"


def silent_lines(result) -> list[str]:
    """Which recorded tracepoints fired and which never did, and what
    else of kvm: fired (perf stat over the whole run)."""
    lines = []
    recorded = [e for e in result.recorded if e.startswith("kvm:")
                and e != MARK_EVENT]
    silent = [e for e in recorded if not result.fires(e)]
    if silent:
        lines.append("host: never fired during the run: " +
                     ", ".join(silent) +
                     (" (this vendor module does not trace VM-entries and "
                      "exits: VM-entries per second cannot be counted here)"
                      if "kvm:kvm_entry" in silent else ""))
    busy = sorted(((n, e) for e, n in result.fired.items() if n),
                  reverse=True)
    if busy:
        lines.append("host: kvm: tracepoints that fired (whole run, "
                     f"{len(result.discovery_tids)} vCPU thread(s)): " +
                     ", ".join(f"{e[4:]} {n}" for n, e in busy[:10]) +
                     (", ..." if len(busy) > 10 else ""))
    return lines


def parse_stat(text) -> dict[str, int]:
    """{event: total count} over the threads of perf stat -x ';'
    --per-thread output: label; count; unit; event; ... (perf-stat(1),
    CSV FORMAT). "<not counted>" and "<not supported>" count 0."""
    totals: Counter[str] = Counter()
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = [f.strip() for f in line.split(SEP)]
        for at in range(2, len(fields)):
            if re.fullmatch(r"[\w-]+:[\w-]+", fields[at]):
                break
        else:
            continue
        try:
            totals[fields[at]] += int(float(fields[at - 2]))
        except ValueError:
            totals[fields[at]] += 0
    return dict(totals)


LOST = re.compile(r"^\s*(LOST(?:_SAMPLES)?) events:\s*(\d+)", re.MULTILINE)


def parse_lost(text) -> int:
    """Records perf lost, from `perf report --stats`."""
    return sum(int(m.group(2)) for m in LOST.finditer(text))
