# SPDX-License-Identifier: MIT
"""bench/smp's judgement of hvprobe's concurrent bring-up against serial:
over repeats, beyond noise, with made-up runs."""

import unittest

from bench.lib import concurrency as cc
from bench.lib import sidebyside as sbs

SKY4 = sbs.Machine("Skylake-Client", 4, 1)


def row(machine, mode, bringup, *ms):
    r = sbs.Row(machine, mode, bringup, None)
    r.hvprobe_runs = [{"ms": v} for v in ms]
    return r


class Judge(unittest.TestCase):
    def test_slower_beyond_noise_fails(self):
        # Serial 100-104 ms, parallel 140-146: 4 and 6 ms of spread, a
        # 10 ms floor; 142 > 102 + 10.
        [j] = cc.judge([row(SKY4, "none", "serial", 100, 102, 104),
                        row(SKY4, "none", "parallel", 146, 142, 140)])
        self.assertEqual((j.serial.median, j.concurrent.median), (102, 142))
        self.assertEqual(j.noise_ms, 10.2)
        self.assertAlmostEqual(j.ratio, 142 / 102)
        self.assertIs(j.holds, False)
        self.assertEqual(j.repeats, 3)
        self.assertEqual(cc.failures([j]), [j])

    def test_within_the_spread_holds(self):
        # Parallel's median is 30 ms above serial's, but serial's own
        # runs span 40 ms: nothing there tells it from noise.
        [j] = cc.judge([row(SKY4, "none", "serial", 80, 100, 120),
                        row(SKY4, "none", "parallel", 125, 130, 131)])
        self.assertEqual(j.noise_ms, 40)
        self.assertIs(j.holds, True)
        # The floor: 10% of serial's median, or 0.5 ms at the least.
        [j] = cc.judge([row(SKY4, "node", "serial", 1.0),
                        row(SKY4, "node", "parallel", 1.4)])
        self.assertEqual(j.noise_ms, 0.5)
        self.assertIs(j.holds, True)
        [j] = cc.judge([row(SKY4, "node", "serial", 1.0),
                        row(SKY4, "node", "parallel", 1.6)])
        self.assertIs(j.holds, False)

    def test_faster_holds_and_one_vcpu_is_not_judged(self):
        one = sbs.Machine("qemu64", 1, 1)
        js = cc.judge([row(one, "none", "serial", 0.1),
                       row(one, "none", "parallel", 9.0),
                       row(SKY4, "preset", "serial", 50, 51),
                       row(SKY4, "preset", "parallel", 10, 11),
                       row(SKY4, "linux65", "linux-6.5", 60)])
        self.assertEqual([(j.machine, j.lpj_mode) for j in js],
                         [(SKY4, "preset")])
        self.assertIs(js[0].holds, True)

    def test_a_side_without_time_says_nothing(self):
        [j] = cc.judge([row(SKY4, "none", "serial", None),
                        row(SKY4, "none", "parallel", 5)])
        self.assertIsNone(j.holds)
        self.assertIsNone(j.ratio)
        self.assertEqual(cc.failures([j]), [])
        self.assertEqual(j.to_json()["serial"], None)

    def test_report(self):
        sky16 = sbs.Machine("Skylake-Client", 16, 4)
        js = cc.judge([row(SKY4, "none", "serial", 100, 104),
                       row(SKY4, "none", "parallel", 143, 143),
                       row(sky16, "node", "serial", 50, 50),
                       row(sky16, "node", "parallel", 20, 21)])
        lines = cc.report(js, sbs.LPJ_LABELS)
        self.assertIn("bringup=parallel, hvprobe's own, not Linux's",
                      lines[1])
        self.assertEqual(lines[2], "  SLOWER Skylake-Client 4 vCPUs 1 node "
                         "per-CPU: median 143.0 ms against serial 102.0 ms "
                         "(1.40x), beyond 10.2 ms of noise")
        self.assertEqual(lines[3], "  1 of 2 rows hold; worst 1.40x "
                         "(Skylake-Client 4 vCPUs 1 node, per-CPU)")
        self.assertIn("2+ runs", lines[4])
        doc = js[0].to_json()
        self.assertEqual((doc["holds"], doc["ratio"], doc["noise_ms"],
                          doc["parallel"]["median_ms"]),
                         (False, 1.402, 10.2, 143))
        # One run per order: the floor alone, and the report says so.
        lines = cc.report(cc.judge([row(SKY4, "none", "serial", 10),
                                    row(SKY4, "none", "parallel", 10)]))
        self.assertIn("one run per order", lines[-1])
        self.assertEqual(cc.report([]), [])


if __name__ == "__main__":
    unittest.main()
