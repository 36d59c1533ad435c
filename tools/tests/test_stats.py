# SPDX-License-Identifier: MIT
"""The noise verdicts of tools/compare: medians, ranges, overlap."""

import unittest

from tools.lib.analysis import comparison, stats


def run(name, total_us, cpus=4, repeat=1):
    return {"scenario": {"name": name, "repeat": repeat},
            "run": f"{name}-r{repeat}", "timing": {},
            "tests": [{"name": "smp", "data": [
                {"test": "smp", "cpus": cpus, "total_us": total_us}]}]}


class Stats(unittest.TestCase):
    def test_summary(self):
        s = stats.summarize([3, 1, 2, None, "x", True])
        self.assertEqual((s.n, s.median, s.low, s.high), (3, 2, 1, 3))
        self.assertEqual(s.spread, 2)
        self.assertIsNone(stats.summarize([]))
        self.assertEqual(stats.summarize([1, 2]).median, 1.5)

    def test_overlapping_ranges_are_no_change(self):
        base, new, v = stats.compare([100, 110, 120], [115, 125, 130])
        self.assertEqual(v.verdict, stats.NO_CHANGE)
        self.assertTrue(v.noise_known)
        self.assertAlmostEqual(v.change_pct, 125 / 110 * 100 - 100)
        # Touching ends overlap too.
        self.assertEqual(stats.compare([1, 2], [2, 3])[2].verdict,
                         stats.NO_CHANGE)

    def test_separate_ranges_change(self):
        self.assertEqual(stats.compare([100, 101, 102], [110, 111])[2]
                         .verdict, stats.UP)
        v = stats.compare([100, 101, 102], [50, 51, 52])[2]
        self.assertEqual(v.verdict, stats.DOWN)
        self.assertAlmostEqual(v.change_pct, (51 - 101) / 101 * 100)

    def test_single_runs(self):
        v = stats.compare([5], [5])[2]
        self.assertEqual(v.verdict, stats.NO_CHANGE)
        v = stats.compare([5], [6, 7])[2]
        self.assertEqual(v.verdict, stats.UP)
        self.assertFalse(v.noise_known)

    def test_missing_and_zero(self):
        self.assertEqual(stats.compare([], [1])[2].verdict, stats.MISSING)
        self.assertIsNone(stats.compare([0], [1])[2].change_pct)
        self.assertEqual(stats.compare([0], [0])[2].change_pct, 0)


class Comparison(unittest.TestCase):
    def test_matches_scenarios_and_figures(self):
        base = [run("a", v, repeat=i) for i, v in
                enumerate([1000, 1100, 1050], 1)] + [run("gone", 1)]
        new = [run("a", v, repeat=i) for i, v in
               enumerate([1080, 1200, 1150], 1)] + [run("fresh", 1)]
        rows, only_base, only_new = comparison.compare(base, new)
        by_fig = {r.figure: r for r in rows}
        self.assertEqual(by_fig["smp.total_us"].verdict.verdict,
                         stats.NO_CHANGE)
        self.assertEqual(by_fig["smp.total_us"].unit, "µs")
        self.assertTrue(by_fig["smp.cpus"].constant)
        self.assertEqual((only_base, only_new), (["gone"], ["fresh"]))
        counts = comparison.tally(rows)
        self.assertEqual((counts["no change"], counts["constant"]), (1, 1))

    def test_change_beyond_noise(self):
        base = [run("a", v) for v in (1000, 1010, 1020)]
        new = [run("a", v) for v in (2000, 2010, 2020)]
        rows, _, _ = comparison.compare(base, new, ["smp.total_us"])
        [row] = rows
        self.assertEqual(row.verdict.verdict, stats.UP)
        self.assertEqual(comparison.tally(rows)["changed"], 1)


if __name__ == "__main__":
    unittest.main()
