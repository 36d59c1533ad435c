# SPDX-License-Identifier: MIT
"""lpj=host: the preset a run list names without naming a machine."""

import unittest

from tools.lib import hostinfo

DMESG = """\
[    0.000000] tsc: Fast TSC calibration using PIT
[    0.000265] tsc: Detected 2095.994 MHz processor
[    1.412000] tsc: Refined TSC clocksource calibration: 2096.015 MHz
"""


class TscRate(unittest.TestCase):
    def test_refined_rate_wins_over_the_first_estimate(self):
        self.assertEqual(hostinfo.tsc_mhz_from(DMESG, ""),
                         (2096.015, "the kernel log"))

    def test_detected_rate_alone(self):
        self.assertEqual(hostinfo.tsc_mhz_from(
            "[    0.000000] tsc: Detected 2445.406 MHz processor\n", ""),
            (2445.406, "the kernel log"))

    def test_cpuinfo_when_the_log_is_silent(self):
        self.assertEqual(hostinfo.tsc_mhz_from(
            "", "processor\t: 0\ncpu MHz\t\t: 2095.994\n"),
            (2095.994, "/proc/cpuinfo"))

    def test_nothing_known(self):
        self.assertEqual(hostinfo.tsc_mhz_from("", "processor\t: 0\n"),
                         (None, None))


class HostLpj(unittest.TestCase):
    def test_two_machines_two_values(self):
        # The rates of two of this project's machines, at the kernel's HZ.
        self.assertEqual(hostinfo.resolve_host_lpj(
            ["test=smp,lpj", "lpj=host"], mhz=2450.0),
            ["test=smp,lpj", "lpj=9800000"])
        self.assertEqual(hostinfo.resolve_host_lpj(
            ["lpj=host"], mhz=2096.015), ["lpj=8384060"])

    def test_hz_on_the_same_line_counts(self):
        self.assertEqual(hostinfo.resolve_host_lpj(
            ["hz=1000", "lpj=host"], mhz=2450.0), ["hz=1000", "lpj=2450000"])

    def test_numbers_pass_through(self):
        words = ["test=smp", "lpj=4000000"]
        self.assertEqual(hostinfo.resolve_host_lpj(words, mhz=None), words)

    def test_unknown_rate_is_a_clear_error(self):
        saved = hostinfo.tsc_mhz
        hostinfo.tsc_mhz = lambda: (None, None)
        try:
            with self.assertRaisesRegex(hostinfo.HostUnknown,
                                        "give lpj= a number"):
                hostinfo.resolve_host_lpj(["lpj=host"])
        finally:
            hostinfo.tsc_mhz = saved


if __name__ == "__main__":
    unittest.main()
