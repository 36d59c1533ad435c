# SPDX-License-Identifier: MIT
"""bench/linux-bringup's attribution of Linux's bring-up time, from a
made-up trace in the format of Linux's cpuhp events."""

import unittest

from bench.lib import bringuptrace as bt


def enter(on, ts, cpu, step, fn, target=236):
    return (f"  swapper/0-1  [{on:03d}] .....  {ts:.6f}: cpuhp_enter: cpu: "
            f"{cpu:04d} target: {target:3d} step: {step:3d} ({fn})")


def leave(on, ts, cpu, step):
    return (f"  swapper/0-1  [{on:03d}] .....  {ts:.6f}: cpuhp_exit:  cpu: "
            f"{cpu:04d}  state: {step:3d} step: {step:3d} ret: 0")


def ap(cpu, t0, kick_ms, wait_ms, before_ms, starting_ms):
    """One AP's events: the control CPU kicks it and waits in
    cpuhp_bringup_ap(); the AP runs one starting state inside that wait,
    before_ms after the release."""
    t1 = t0 + kick_ms / 1000
    t2 = t1 + wait_ms / 1000
    s0 = t1 + before_ms / 1000
    return [enter(0, t0, cpu, 84, "cpuhp_kick_ap_alive", 85),
            leave(0, t1 - 0.000001, cpu, 84),
            enter(0, t1, cpu, 86, "cpuhp_bringup_ap"),
            enter(cpu, s0, cpu, 100, "sched_cpu_starting"),
            leave(cpu, s0 + starting_ms / 1000, cpu, 100),
            leave(0, t2, cpu, 86)]


# Four CPUs on two packages: 0 and 1, 2 and 3. CPU 2 is the first of the
# second package and spends 20 ms more after its starting states than
# CPU 3: a warp check.
TRACE = "\n".join([
    bt.BEGIN,
    "processor\t: 0", "physical id\t: 0",
    "flags\t\t: fpu tsc constant_tsc", "processor\t: 1", "physical id\t: 0",
    "flags\t\t: fpu tsc constant_tsc", "processor\t: 2", "physical id\t: 1",
    "processor\t: 3", "physical id\t: 1",
    "[    1.000000] smpboot: x86: Booting SMP configuration:",
    "[    1.010000] TSC synchronization [CPU#0 -> CPU#2]: passed",
    "[    1.030000] TSC synchronization [CPU#0 -> CPU#3]: passed",
    "[    1.040000] smp: Brought up 2 nodes, 4 CPUs",
    "# tracer: nop",
    *ap(1, 10.0, 5, 40, 30, 2),
    *ap(2, 10.1, 5, 30, 5, 2),
    *ap(3, 10.2, 5, 10, 5, 2),
    # A state set up later runs on every CPU again, seconds after.
    enter(1, 15.0, 1, 200, "mce_cpu_online"), leave(1, 15.001, 1, 200),
    bt.END])


class Parse(unittest.TestCase):
    def test_spans_topology_and_log(self):
        t = bt.parse(TRACE)
        self.assertEqual(t.packages, {0: 0, 1: 0, 2: 1, 3: 1})
        self.assertEqual(t.flags, {"fpu", "tsc", "constant_tsc"})
        self.assertEqual(len(t.spans), 10)
        first = t.spans[0]
        self.assertEqual((first.on, first.cpu, first.fn), (0, 1,
                                                           "cpuhp_kick_ap_alive"))
        self.assertAlmostEqual(first.ms, 5.0 - 0.001, places=3)
        self.assertEqual(bt.window(t), (1.0, 1.04))
        self.assertIsNone(bt.parse("no end marker"))

    def test_window_stops_at_the_pause(self):
        start, end = bt.trace_window(bt.parse(TRACE))
        self.assertEqual(start, 10.0)
        self.assertAlmostEqual(end, 10.215)      # not the 15 s callback


class Attribute(unittest.TestCase):
    def test_control_cpu_and_per_ap(self):
        a = bt.attribute(bt.parse(TRACE))
        self.assertAlmostEqual(a.window_ms, 40.0)
        self.assertAlmostEqual(a.trace_ms, 215.0)
        self.assertAlmostEqual(a.control_ms["cpuhp_bringup_ap"], 80.0)
        self.assertAlmostEqual(a.control_ms["cpuhp_kick_ap_alive"], 14.997,
                               places=3)
        self.assertNotIn("mce_cpu_online", a.control_ms)
        one = a.per_ap[1]
        self.assertAlmostEqual(one["bringup"], 40.0)
        self.assertAlmostEqual(one["before"], 30.0)
        self.assertAlmostEqual(one["starting"], 2.0)
        self.assertAlmostEqual(one["after"], 8.0)
        self.assertEqual(a.first_aps, [2])
        # CPU 2's 28 ms outside its starting states against CPU 3's 8.
        self.assertAlmostEqual(bt.excess_of_first(a)[2], 20.0)
        self.assertEqual(a.sync_checks, 2)
        # No TSC_ADJUST: 20 ms for CPU 2, 2 ms each for CPUs 1 and 3.
        self.assertEqual((a.tsc_adjust, a.warp_expected_ms), (False, 24.0))

    def test_warp_rule(self):
        t = bt.parse(TRACE)
        t.flags |= {"tsc_adjust"}
        self.assertEqual(bt.attribute(t).warp_expected_ms, 20.0)
        t.flags |= {"tsc_reliable"}
        self.assertEqual(bt.attribute(t).warp_expected_ms, 0.0)
        self.assertEqual(bt.first_in_package({0: 0, 1: 0, 2: 1, 3: 1,
                                              4: 2, 5: 2}), [2, 4])

    def test_report(self):
        lines = bt.report(bt.attribute(bt.parse(TRACE)), host_ms=230.0)
        self.assertEqual(lines[0], "bring-up window: 215.0 ms by the trace's"
                         " clock (the TSC: the APs' first to last hotplug "
                         "callback); 40.0 ms by printk's (tick-bounded until"
                         " sched_clock is stable); 230.0 ms by the host's "
                         "stamps of the serial lines")
        self.assertEqual(lines[2].split(), ["80.0", "ms", "cpuhp_bringup_ap"])
        self.assertIn("bringup wait by AP, in bring-up order (ms): 40 30 10",
                      lines)
        self.assertTrue(any("CPU 2 +20.0 ms" in line for line in lines))
        self.assertIn("TSC sync checks Linux reported: 2 (its pr_debug "
                      "lines, with dyndbg for tsc_sync.c)", lines)
        self.assertTrue(lines[-1].startswith("warp check by Linux's rule: "
                                             "24 ms (TSC_ADJUST no"))


if __name__ == "__main__":
    unittest.main()
