# SPDX-License-Identifier: MIT
"""expect_data: a run's DATA checked by figure path, the way tools/report
names each value, instead of a regex over the JSON text."""

import unittest

from tools.lib.analysis import expected_data as ed
from tools.lib.base.status import Status


def run_doc(*objects):
    """A results document whose tests printed these DATA objects."""
    tests = {}
    for obj in objects:
        tests.setdefault(obj["test"], []).append(obj)
    return {"tests": [{"name": name, "data": data}
                      for name, data in tests.items()]}


SMP = {"test": "smp", "cpus": 4, "nodes": 1, "calibrations": 1,
       "init_udelay": "auto", "per_ap_us": {"min": 3, "max": 9}}
AP = {"test": "smp", "record": "ap", "cpu": 1, "cpus": 99}
LPJ = {"test": "lpj", "calibrations": 1, "lpj_source": "kvm",
       "tsc_constant": True}


class Checks(unittest.TestCase):
    def test_one_check_per_data_record_passes(self):
        doc = run_doc(SMP, AP, LPJ)
        checks = ed.checks(doc, {"smp.cpus": 4, "smp.calibrations": 1,
                                 "lpj.calibrations": 1})
        self.assertEqual([(c["name"], c["status"]) for c in checks],
                         [("expect_data", Status.PASS)] * 2)
        self.assertEqual(checks[0]["detail"],
                         "smp.cpus = 4; smp.calibrations = 1")
        self.assertEqual(checks[1]["detail"], "lpj.calibrations = 1")

    def test_key_order_in_the_line_does_not_matter(self):
        reordered = dict(reversed(list(SMP.items())))
        [check] = ed.checks(run_doc(reordered), {"smp.cpus": 4})
        self.assertEqual(check["status"], Status.PASS)

    def test_a_wrong_value_fails_naming_path_expected_and_seen(self):
        [check] = ed.checks(run_doc(SMP), {"smp.cpus": 16,
                                           "smp.calibrations": 1})
        self.assertEqual(check["status"], Status.FAIL)
        self.assertEqual(check["detail"], "smp.cpus: expected 16, saw 4; "
                                          "smp.calibrations = 1")

    def test_strings_nested_keys_and_truth_values(self):
        doc = run_doc(SMP, LPJ)
        checks = ed.checks(doc, {"smp.init_udelay": "auto",
                                 "smp.per_ap_us.max": 9,
                                 "lpj.lpj_source": "kvm",
                                 "lpj.tsc_constant": True})
        self.assertTrue(all(c["status"] == Status.PASS for c in checks),
                        checks)
        [check] = ed.checks(doc, {"lpj.lpj_source": "kvmclock"})
        self.assertEqual(check["detail"], "lpj.lpj_source: expected "
                                          "'kvmclock', saw 'kvm'")

    def test_true_is_not_one_and_four_is_four_point_oh(self):
        doc = run_doc(LPJ, {"test": "t", "x": 1, "y": 4.0})
        [lpj] = ed.checks(doc, {"lpj.tsc_constant": 1})
        self.assertEqual(lpj["detail"],
                         "lpj.tsc_constant: expected 1, saw true")
        [t] = ed.checks(doc, {"t.x": True, "t.y": 4})
        self.assertEqual(t["detail"], "t.x: expected true, saw 1; t.y = 4.0")

    def test_a_record_the_run_lacks_is_a_missing_value(self):
        [check] = ed.checks(run_doc(LPJ), {"smp.cpus": 4})
        self.assertEqual(check["status"], Status.FAIL)
        self.assertEqual(check["detail"], "smp.cpus: missing: no DATA "
                         "record from test smp (DATA from: lpj)")

    def test_a_key_the_record_lacks_is_an_unknown_path(self):
        [check] = ed.checks(run_doc(SMP), {"smp.cpu": 4})
        self.assertEqual(check["status"], Status.ERROR)
        self.assertEqual(check["detail"], "smp.cpu: unknown path: smp's DATA "
                         "record has no key 'cpu' (keys: calibrations, cpus, "
                         "init_udelay, nodes, per_ap_us)")
        [check] = ed.checks(run_doc(SMP), {"smp.per_ap_us": 4})
        self.assertEqual(check["detail"], "smp.per_ap_us: unknown path: a "
                         "table, not a value (keys: max, min)")
        [check] = ed.checks(run_doc(SMP), {"smp.cpus.x": 4})
        self.assertEqual(check["detail"], "smp.cpus.x: unknown path: "
                         "smp.cpus is a value, not a table")

    def test_an_error_outranks_a_failure_in_one_record(self):
        [check] = ed.checks(run_doc(SMP), {"smp.cpus": 1, "smp.cpu": 4})
        self.assertEqual(check["status"], Status.ERROR)

    def test_later_records_are_test_hash_n_and_per_item_records_none(self):
        second = {"test": "smp", "cpus": 8}
        doc = run_doc(SMP, AP, second)
        checks = ed.checks(doc, {"smp.cpus": 4, "smp#2.cpus": 8})
        self.assertEqual([c["status"] for c in checks], [Status.PASS] * 2)
        self.assertEqual(checks[1]["detail"], "smp#2.cpus = 8")
        [check] = ed.checks(doc, {"smp#3.cpus": 8})
        self.assertEqual(check["detail"], "smp#3.cpus: missing: test smp "
                         "printed 2 DATA records, not 3")


class Paths(unittest.TestCase):
    def test_parse(self):
        self.assertEqual(ed.parse_path("smp.cpus"), ("smp", 1, ["cpus"]))
        self.assertEqual(ed.parse_path("pmi_stress#2.gap_cycles.p99"),
                         ("pmi_stress", 2, ["gap_cycles", "p99"]))

    def test_bad_paths_say_the_form(self):
        for path in ("smp", "smp.", ".cpus", "smp#1.cpus", "smp#x.cpus",
                     "smp cpus", "smp..cpus", ""):
            with self.subTest(path=path), \
                    self.assertRaisesRegex(ValueError, "TEST.KEY"):
                ed.parse_path(path)

    def test_flattened_tables(self):
        self.assertEqual(ed.flattened({"smp": {"cpus": 4, "per_ap_us": {
            "max": 9}}, "lpj.calibrations": 1}),
            {"smp.cpus": 4, "smp.per_ap_us.max": 9, "lpj.calibrations": 1})
        for bad in ([4], None, {}):
            with self.subTest(bad=bad), \
                    self.assertRaisesRegex(ValueError, "smp.cpus: "):
                ed.flattened({"smp.cpus": bad})

    def test_assignment_from_a_command_line(self):
        self.assertEqual(ed.parse_assignment("smp.cpus=4"), ("smp.cpus", 4))
        self.assertEqual(ed.parse_assignment("lpj.lpj_source=kvm"),
                         ("lpj.lpj_source", "kvm"))
        self.assertEqual(ed.parse_assignment('t.x="4"'), ("t.x", "4"))
        self.assertEqual(ed.parse_assignment("t.x=true"), ("t.x", True))
        self.assertEqual(ed.parse_assignment("t.x=a=b"), ("t.x", "a=b"))
        for text in ("smp.cpus", "=4", "smp=4"):
            with self.subTest(text=text), self.assertRaises(ValueError):
                ed.parse_assignment(text)

    def test_shown_round_trips(self):
        for value in (4, 2.5, "kvm", "4", True, "a b"):
            with self.subTest(value=value):
                self.assertEqual(ed.parse_assignment(
                    ed.assignment("t.x", value)), ("t.x", value))


if __name__ == "__main__":
    unittest.main()
