# SPDX-License-Identifier: MIT
"""Where Linux spends its SMP bring-up: its cpuhp trace events (enabled
from the command line, trace_event=cpuhp:*, so that they record from
start_kernel() on) read back from tracefs by an initramfs, with the
topology from /proc/cpuinfo and the dmesg window, all on Linux's own
clock.

In Linux 6.5 and later (kernel/cpu.c, arch/x86/kernel/smpboot.c) the
control CPU runs each AP's hotplug states up to CPUHP_BRINGUP_CPU;
bringup_cpu() releases the AP from its alive point and waits until it
reaches CPUHP_AP_ONLINE_IDLE. In between the AP runs its starting
states (notify_cpu_starting(), traced on the AP), then
check_tsc_sync_target() and ap_calibrate_delay() (not traced: the gap
after its last starting state). check_tsc_warp() runs 20 ms on the
first CPU of a package and 2 ms on the others (loop_timeout()); a CPU
skips it when its TSC_ADJUST matches its package's first CPU
(tsc_store_and_check_tsc_adjust()) or the TSC is reliable. So the gap
of a package's first AP against its siblings' measures the warp check.

Nothing here boots anything: the tests feed it made-up traces.
"""

import re
import statistics
from dataclasses import dataclass, field

BEGIN, END = "hvprobe-bringup: begin", "hvprobe-bringup: end"
# What the initramfs prints: the topology and flags Linux settled on,
# its log, and the trace buffer.
INIT = f"""#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t tracefs nodev /sys/kernel/tracing
echo "{BEGIN}"
grep -E '^(processor|physical id|flags)' /proc/cpuinfo
dmesg
cat /sys/kernel/tracing/trace
echo "{END}"
poweroff -f
"""
# The words that record the hotplug states from boot on (Linux's
# Documentation/trace/events.rst, "Boot option"). The buffer is small on
# purpose: each new CPU's is allocated inside its bring-up
# (trace_rb_cpu_prepare), and 32 KiB holds the few hundred events a CPU
# records.
CMDLINE = ["trace_event=cpuhp:cpuhp_enter,cpuhp:cpuhp_multi_enter,"
           "cpuhp:cpuhp_exit", "trace_buf_size=32K"]
# The control CPU's state that releases an AP and waits for it to reach
# CPUHP_AP_ONLINE_IDLE: bringup_cpu() in Linux 6.1, cpuhp_bringup_ap()
# with 6.5's parallel bring-up.
BRINGUP = ("bringup_cpu", "cpuhp_bringup_ap")

# kernel/cpu.c's events (include/trace/events/cpuhp.h):
# "cpu: %04u target: %3d step: %3d (%ps)" and
# "cpu: %04u  state: %3d step: %3d ret: %d".
_EVENT = re.compile(
    r"\[(?P<on>\d+)\]\s+\S+\s+(?P<ts>\d+\.\d+): "
    r"(?P<kind>cpuhp_enter|cpuhp_multi_enter|cpuhp_exit):\s+"
    r"cpu: (?P<cpu>\d+)\s+(?:target|state):\s*(?P<target>-?\d+)\s+"
    r"step:\s*(?P<step>-?\d+)\s*(?:\((?P<fn>[^)]+)\)|ret:)")
_DMESG = re.compile(r"^\[\s*(\d+\.\d+)\]\s?(.*)$")


@dataclass
class Span:
    on: int             # the CPU that ran the callback
    cpu: int            # the CPU being brought up
    step: int
    fn: str
    start: float        # Linux's clock, seconds
    end: float

    @property
    def ms(self):
        return (self.end - self.start) * 1000.0


@dataclass
class Trace:
    spans: list = field(default_factory=list)
    packages: dict = field(default_factory=dict)   # cpu -> physical id
    flags: set = field(default_factory=set)        # the boot CPU's
    dmesg: list = field(default_factory=list)      # (seconds, text)


def _body(text):
    if END not in text:
        return None
    return text.split(BEGIN, 1)[-1].split(END, 1)[0]


def parse(text):
    """A Trace from the initramfs's output; None without its end."""
    body = _body(text)
    if body is None:
        return None
    t = Trace()
    stacks = {}
    cpu = None
    for line in body.splitlines():
        line = line.strip()
        key, _, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if key == "processor" and value.isdigit():
            cpu = int(value)
        elif key == "physical id" and cpu is not None:
            t.packages[cpu] = int(value)
        elif key == "flags" and cpu == 0:
            t.flags = set(value.split())
        if m := _DMESG.match(line):
            t.dmesg.append((float(m.group(1)), m.group(2)))
            continue
        m = _EVENT.search(line)
        if not m:
            continue
        on, ts = int(m.group("on")), float(m.group("ts"))
        who = (on, int(m.group("cpu")))
        if m.group("kind") == "cpuhp_exit":
            if stacks.get(who):
                step, fn, start = stacks[who].pop()
                t.spans.append(Span(on, who[1], step, fn, start, ts))
        else:
            stacks.setdefault(who, []).append(
                (int(m.group("step")), m.group("fn") or "?", ts))
    t.spans.sort(key=lambda s: s.start)
    return t


def window(trace):
    """(start, end) in seconds of 'x86: Booting SMP configuration' to
    'smp: Brought up' by printk's clock, or None. Until sched_clock is
    marked stable, printk's local_clock() moves at most a tick past the
    last tick's time, so where ticks come late (TCG) it undercounts; the
    trace's clock is the TSC's (trace_window())."""
    start = next((s for s, x in trace.dmesg
                  if "Booting SMP configuration" in x), None)
    end = next((s for s, x in trace.dmesg if "smp: Brought up" in x), None)
    return None if start is None or end is None else (start, end)


# States set up later (cpuhp_setup_state() from an initcall) run their
# callbacks on every CPU again, seconds after the bring-up; a pause this
# long between callbacks ends the bring-up's run of them.
PAUSE_S = 1.0


def trace_window(trace):
    """(start, end) in seconds of the APs' hotplug callbacks by the
    trace's clock (sched_clock(): the TSC), up to the first pause of
    PAUSE_S, or None."""
    aps = sorted((s for s in trace.spans if s.cpu != 0),
                 key=lambda s: s.start)
    if not aps:
        return None
    start = end = aps[0].start
    for s in aps:
        if s.start - end > PAUSE_S:
            break
        end = max(end, s.end)
    return start, end


_SYNC = re.compile(r"TSC synchronization \[CPU#\d+ -> CPU#(\d+)\]")


def sync_checks(trace):
    """How many APs Linux says ran the TSC sync check (its pr_debug line
    in check_tsc_sync_source(), shown with dyndbg), or None when it
    printed none."""
    cpus = {m.group(1) for _, x in trace.dmesg if (m := _SYNC.search(x))}
    return len(cpus) or None


def first_in_package(packages):
    """The APs that are the first CPU of their package, in CPU order:
    check_tsc_warp() runs 20 ms on them, 2 ms on their siblings."""
    seen, out = {0: packages.get(0)}, []
    for cpu in sorted(packages):
        if cpu and packages[cpu] not in seen.values():
            out.append(cpu)
        seen[cpu] = packages[cpu]
    return out


@dataclass
class Attribution:
    window_ms: float | None     # printk's clock
    trace_ms: float | None      # the TSC's
    control_ms: dict            # callback -> ms on the control CPU (0)
    per_ap: dict                # AP -> {"bringup", "starting", "after"}
    first_aps: list
    packages: dict
    warp_expected_ms: float
    tsc_adjust: bool
    reliable: bool
    sync_checks: int | None = None      # None: Linux did not say


def attribute(trace):
    """Where the control CPU's time went, callback by callback, and for
    each AP the bringup_cpu() wait split into its starting states and
    what follows them (TSC sync, delay calibration, reaching idle)."""
    w = window(trace)
    tw = trace_window(trace)
    control = {}
    for s in trace.spans:
        if s.on == 0 and s.cpu != 0 and tw and s.end <= tw[1]:
            control[s.fn] = control.get(s.fn, 0.0) + s.ms
    per_ap = {}
    for b in (s for s in trace.spans if s.fn in BRINGUP and s.on == 0):
        mine = [s for s in trace.spans if s.on == b.cpu and s.cpu == b.cpu
                and b.start <= s.start and s.end <= b.end]
        starting = sum(s.ms for s in mine)
        last = max((s.end for s in mine), default=b.start)
        first_start = min((s.start for s in mine), default=b.end)
        per_ap[b.cpu] = {"bringup": b.ms,
                         "before": (first_start - b.start) * 1000.0,
                         "starting": starting,
                         "after": (b.end - last) * 1000.0}
    first = first_in_package(trace.packages)
    adjust = "tsc_adjust" in trace.flags
    reliable = "tsc_reliable" in trace.flags
    aps = [c for c in trace.packages if c]
    if reliable:
        expected = 0.0
    elif adjust:
        expected = 20.0 * len(first)
    else:
        expected = 20.0 * len(first) + 2.0 * (len(aps) - len(first))
    return Attribution(None if w is None else (w[1] - w[0]) * 1000.0,
                       None if tw is None else (tw[1] - tw[0]) * 1000.0,
                       control, per_ap, first, dict(trace.packages),
                       expected, adjust, reliable, sync_checks(trace))


def _median(values):
    return statistics.median(values) if values else None


def _outside(ap):
    return ap["bringup"] - ap["starting"]


def excess_of_first(a, packages=None):
    """{first AP of a package: its wait outside its starting states minus
    the median of its package's other APs'}: the warp check's 20 ms
    against 2, measured among CPUs that came up close together. (Where in
    start_secondary() the check runs, before or after the starting
    states, does not matter here.)"""
    packages = packages if packages is not None else a.packages
    out = {}
    for cpu in a.first_aps:
        mates = [c for c, p in packages.items()
                 if p == packages.get(cpu) and c != cpu and c in a.per_ap]
        if cpu in a.per_ap and mates:
            out[cpu] = _outside(a.per_ap[cpu]) - _median(
                [_outside(a.per_ap[c]) for c in mates])
    return out


def report(a, host_ms=None):
    """The attribution as lines."""
    out = []
    clocks = []
    if a.trace_ms is not None:
        clocks.append(f"{a.trace_ms:.1f} ms by the trace's clock (the TSC: "
                      "the APs' first to last hotplug callback)")
    if a.window_ms is not None:
        clocks.append(f"{a.window_ms:.1f} ms by printk's (tick-bounded "
                      "until sched_clock is stable)")
    if host_ms:
        clocks.append(f"{host_ms:.1f} ms by the host's stamps of the "
                      "serial lines")
    if clocks:
        out.append("bring-up window: " + "; ".join(clocks))
    total = sum(a.control_ms.values())
    out.append(f"control CPU in AP hotplug callbacks: {total:.1f} ms (TSC);"
               " the largest:")
    for fn, ms in sorted(a.control_ms.items(), key=lambda x: -x[1])[:8]:
        out.append(f"  {ms:8.1f} ms  {fn}")
    if a.trace_ms is not None:
        out.append(f"  {a.trace_ms - total:8.1f} ms  between callbacks (the "
                   "hotplug core's own loop, console output)")
    first = [a.per_ap[c] for c in a.first_aps if c in a.per_ap]
    rest = [v for c, v in a.per_ap.items() if c not in a.first_aps]
    for what, group in (("first CPU of a package", first),
                        ("other APs", rest)):
        if not group:
            continue
        out.append(
            f"bringup wait per AP, {what} ({len(group)}): median "
            f"{_median([g['bringup'] for g in group]):.1f} ms, of which "
            f"starting states {_median([g['starting'] for g in group]):.1f}"
            f", after them (TSC sync, calibration, to idle) "
            f"{_median([g['after'] for g in group]):.1f}")
    order = sorted(a.per_ap)
    if order:
        out.append("bringup wait by AP, in bring-up order (ms): " + " ".join(
            f"{a.per_ap[c]['bringup']:.0f}" for c in order))
        out.append("  of which before its starting states (release, "
                   "cpu_init()): " + " ".join(
                       f"{a.per_ap[c]['before']:.0f}" for c in order))
    excess = excess_of_first(a)
    if excess:
        out.append("first CPU of a package against its own package's "
                   "later APs, wait outside the starting states: "
                   + ", ".join(
                       f"CPU {c} {d:+.1f} ms" for c, d in excess.items())
                   + " (check_tsc_warp() would make it about +18: 20 ms "
                   "against 2)")
    if a.sync_checks is not None:
        out.append(f"TSC sync checks Linux reported: {a.sync_checks} (its "
                   "pr_debug lines, with dyndbg for tsc_sync.c)")
    out.append(f"warp check by Linux's rule: {a.warp_expected_ms:.0f} ms "
               f"(TSC_ADJUST {'yes' if a.tsc_adjust else 'no'}, reliable "
               f"{'yes' if a.reliable else 'no'}, {len(a.first_aps)} "
               "packages after the boot CPU's)")
    return out
