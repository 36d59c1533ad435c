# SPDX-License-Identifier: MIT
"""Scenario and matrix files: what each key means, how variants and axes
expand, and that mistakes are user errors that name the key."""

import json
import tempfile
import unittest
from pathlib import Path

from tools.lib import scenario as scen
from tools.lib.scenario import ScenarioError

BASE = '''
description = "d"
vcpus = 4
numa = 2
mem = "512M"
cmdline = "test=smp init_udelay=0"
timeout = 30
[cpu]
kvm = "host,pmu=on"
'''


class Files(unittest.TestCase):
    def setUp(self):
        self.dir = Path(self.enterContext(tempfile.TemporaryDirectory()))

    def write(self, name, text):
        path = self.dir / name
        path.write_text(text)
        return path


class Scenario(Files):
    def test_plain_scenario(self):
        self.write("s.toml", BASE)
        [spec] = scen.load_scenario("s", self.dir)
        self.assertEqual(spec.name, "s")
        self.assertEqual((spec.vcpus, spec.numa, spec.mem_mib),
                         (4, 2, 512))
        self.assertEqual(spec.cmdline, ["test=smp", "init_udelay=0"])
        self.assertEqual(spec.timeout_s, 30)
        self.assertEqual(spec.cpu_for("kvm"), "host,pmu=on")
        self.assertIsNone(spec.cpu_for("tcg"))
        self.assertEqual(spec.qemu_machine("kvm").cpu, "host,pmu=on")

    def test_variants_merge_words_and_override_keys(self):
        self.write("s.toml", BASE + '''
[variants.a]
cmdline = "lpj=5 test=smp,lpj"
[variants.b]
numa = 1
qemu_args = ["-x"]
''')
        a, b = scen.load_scenario("s", self.dir)
        self.assertEqual(a.name, "s.a")
        self.assertEqual(a.variant, "a")
        self.assertEqual(a.cmdline, ["test=smp,lpj", "init_udelay=0",
                                     "lpj=5"])
        self.assertEqual((b.numa, b.qemu_args), (1, ["-x"]))
        self.assertEqual(b.cmdline, ["test=smp", "init_udelay=0"])
        [only] = scen.load_scenario("s.b", self.dir)
        self.assertEqual(only.name, "s.b")

    def test_json_scenario(self):
        self.write("j.json", json.dumps({"vcpus": 2, "cmdline": ["a=1"]}))
        [spec] = scen.load_scenario("j", self.dir)
        self.assertEqual((spec.vcpus, spec.cmdline), (2, ["a=1"]))

    def test_errors_name_the_problem(self):
        cases = {
            'vcpus = 0': "vcpus",
            'boot = "floppy"': "boot",
            'colour = 1': "unknown key 'colour'",
            'mem = "lots"': "bad memory size",
            'cmdline = ["a b"]': "spaces",
            'cpu = {arm = "x"}': "cpu",
            'timeout = -1': "timeout",
            'vcpus = 2\n[variants]\n': "variants",
            'vcpus = 2\n[variants.x]\nname = "y"': "unknown key 'name'",
            'vcpus = [': "not valid TOML",
        }
        for text, words in cases.items():
            self.write("bad.toml", text)
            with self.subTest(text=text), \
                    self.assertRaisesRegex(ScenarioError, words):
                scen.load_scenario("bad", self.dir)
        with self.assertRaisesRegex(ScenarioError, "shipped: bad"):
            scen.load_scenario("nothere", self.dir)
        self.write("s.toml", BASE)
        with self.assertRaisesRegex(ScenarioError, "no variant 'zz'"):
            scen.load_scenario("s.zz", self.dir)

    def test_merge_cmdline(self):
        self.assertEqual(scen.merge_cmdline(["a=1", "b=2", "flag"],
                                            ["b=3", "flag", "c=4"]),
                         ["a=1", "b=3", "flag", "c=4"])


class Matrix(Files):
    def test_named_inline_and_crossed(self):
        self.write("s.toml", BASE + '[variants.x]\n[variants.y]\n')
        path = self.write("m.toml", '''
name = "mx"
repeat = 2
scenarios = ["s.x"]
[[scenario]]
name = "inline"
vcpus = 3
[[cross]]
name = "c"
cmdline = "test=smp"
[cross.axes]
vcpus = [1, 2, 3]
numa = [1, 2]
[cross.axes.lpj]
pre = { cmdline = "lpj=7" }
cal = { cmdline = "lpj_source=calibrate" }
''')
        specs, left_out, name, repeat = scen.load_matrix(path, self.dir)
        self.assertEqual((name, repeat), ("mx", 2))
        names = [s.name for s in specs]
        self.assertEqual(names[:2], ["s.x", "inline"])
        # 3 x 2 x 2 combinations, less 1 and 3 vCPUs on 2 nodes.
        self.assertEqual(len(specs), 2 + 8)
        self.assertIn("c-vcpus2-numa2-pre", names)
        self.assertEqual(len(left_out), 4)
        self.assertIn("do not split evenly", left_out[0])
        spec = specs[names.index("c-vcpus2-numa2-cal")]
        self.assertEqual(spec.cmdline, ["test=smp", "lpj_source=calibrate"])
        self.assertEqual(spec.matrix, "mx")
        self.assertEqual(spec.axes, {"vcpus": "vcpus2", "numa": "numa2",
                                     "lpj": "cal"})
        self.assertEqual(specs[0].axes, {})
        self.assertNotIn("axes", spec.to_json())
        runs = scen.repeated(specs, repeat)
        self.assertEqual(len(runs), 20)
        self.assertEqual([r.run_name for r in runs[:2]], ["s.x", "s.x-r2"])
        self.assertEqual(runs[1].repeats, 2)
        self.assertEqual(runs[-1].axes, specs[-1].axes)
        self.assertIsNot(runs[-1].axes, specs[-1].axes)

    def test_matrix_errors(self):
        for text, words in {
                'scenarios = []': "names no scenario",
                'nope = 1': "unknown key 'nope'",
                'repeat = 0\nscenarios = ["s"]': "repeat",
                '[[cross]]\nname = "c"': "axes",
                '[[cross]]\n[cross.axes]\ncolour = [1]': "scenario key",
                '[[scenario]]\nname = "a"\n[[scenario]]\nname = "a"':
                    "'a' twice"}.items():
            path = self.write("m.toml", text)
            with self.subTest(text=text), \
                    self.assertRaisesRegex(ScenarioError, words):
                scen.load_matrix(path, self.dir)


class Shipped(unittest.TestCase):
    """The files in tools/scenarios and tools/matrices load, and say what
    their comments promise."""

    def test_scenarios(self):
        for path in sorted(scen.SCENARIOS.glob("*.toml")):
            with self.subTest(path=path.name):
                self.assertTrue(scen.load_scenario(path.stem))

    def test_pmi_nmi_passes_its_words_through(self):
        specs = scen.load_scenario("pmi-nmi")
        for spec in specs:
            self.assertIn("test=pmi_stress,nmi_storm", spec.cmdline)
            self.assertTrue(any(w.startswith("pmu.nmi_ipi=")
                                for w in spec.cmdline))

    def test_matrices(self):
        matrices = scen.SCENARIOS.parent / "matrices"
        for path in sorted(matrices.glob("*.toml")):
            with self.subTest(path=path.name):
                specs, _, _, _ = scen.load_matrix(path)
                for spec in specs:
                    self.assertIsNone(scen.impossible(spec))
        specs, _, _, _ = scen.load_matrix(matrices / "seed.toml")
        self.assertEqual(len(specs), 8)


if __name__ == "__main__":
    unittest.main()
