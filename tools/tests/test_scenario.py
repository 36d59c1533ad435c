# SPDX-License-Identifier: MIT
"""Scenario and matrix files: what each key means, how variants and axes
expand, and that mistakes are user errors that name the key."""

import json
import tempfile
import unittest
from pathlib import Path

from tools.commands import run
from tools.lib.launch import scenario as scen
from tools.lib.launch.scenario import ScenarioError

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


class CheckKeys(Files):
    """The keys make check's runs need (tools/matrices/check.toml)."""

    def test_expectations_and_their_command_line(self):
        path = self.write("m.toml", """
[[scenario]]
name = "neg-1.5"
boot = "bios"
accel = "tcg"
vcpus = 2
timeout = 30
qemu_args = ["-acpitable", "file=x.aml"]
expect_status = 3
expect_fail = "^not ok 1 boot # ERROR"
expect_lines = ['"cpus":2,', "^ok \\\\d+ smp$"]
min_qemu = "8.0"
host_kernels = ["6.12"]
cmdline = "test=boot hz=100"
""")
        [spec], _, _, _ = scen.load_matrix(path)
        self.assertEqual((spec.name, spec.expect_fail, spec.expect_lines,
                          spec.min_qemu, spec.host_kernels, spec.tool),
                         ("neg-1.5", "^not ok 1 boot # ERROR",
                          ['"cpus":2,', "^ok \\d+ smp$"], "8.0", ["6.12"],
                          "run"))
        self.assertEqual(spec.run_argv(), [
            "--timeout", "30", "--boot", "bios", "--smp", "2", "--mem",
            "256M", "--accel", "tcg", "--qemu-arg=-acpitable",
            "--qemu-arg=file=x.aml", "--expect-status", "3", "--expect-fail",
            "^not ok 1 boot # ERROR", "--expect-line", '"cpus":2,',
            "--expect-line", "^ok \\d+ smp$", "--", "test=boot", "hz=100"])
        # tools/run reads it back as the same run.
        args = run.parse_args(spec.run_argv())
        self.assertEqual((args.boot, args.smp, args.timeout, args.qemu_arg,
                          args.expect_status, args.expect_fail,
                          args.expect_line, args.cmdline),
                         ("bios", 2, 30.0, ["-acpitable", "file=x.aml"], 3,
                          spec.expect_fail, spec.expect_lines,
                          ["test=boot", "hz=100"]))

    def test_iso_entry(self):
        path = self.write("m.toml", '[[scenario]]\nname = "i"\n'
                          'boot = "uefi"\niso_entry = "lpj-numa-32.preset"\n')
        [spec], _, _, _ = scen.load_matrix(path)
        self.assertEqual(spec.run_argv()[-2:], ["--iso-entry",
                                                "lpj-numa-32.preset"])
        path.write_text('[[scenario]]\nname = "i"\nboot = "uefi"\n'
                        'iso_entry = "a.preset"\ncmdline = "test=smp"\n')
        with self.assertRaisesRegex(ScenarioError, "give no cmdline"):
            scen.load_matrix(path)

    def test_a_dot_only_in_a_matrix_scenario_without_variants(self):
        with self.assertRaisesRegex(ScenarioError, "bad name 'a.b'"):
            scen.from_table({"name": "a.b"}, "x")
        path = self.write("m.toml", '[[scenario]]\nname = "a.b"\n'
                          '[scenario.variants]\nv = {vcpus = 2}\n')
        with self.assertRaisesRegex(ScenarioError, "bad name 'a.b'"):
            scen.load_matrix(path)

    def test_refusals_name_the_key(self):
        for keys, said in (
                ({"expect_lines": "x"}, "expect_lines must be a list"),
                ({"expect_lines": ["("]}, "expect_lines: bad regular "),
                ({"host_kernels": ["6.1", "6.1"]}, "host_kernels must list"),
                ({"tool": "bench"}, "tool must be what boots it"),
                ({"min_qemu": 8}, "min_qemu must be"),
                ({"expect_fail": 1}, "expect_fail must be a regular "),
                ({"iso_entry": ""}, "iso_entry must be an entry")):
            with self.subTest(keys=keys), \
                    self.assertRaisesRegex(ScenarioError, f"^x: {said}"):
                scen.from_table({"name": "s", **keys}, "x")


class ExpectData(Files):
    """expect_data: DATA values by figure path, from a scenario to the
    tools/run command line a nested leg boots it with."""

    def test_paths_quoted_or_nested_and_their_command_line(self):
        path = self.write("m.toml", """
[[scenario]]
name = "d"
cmdline = "test=smp,lpj"
expect_data = { "smp.cpus" = 4, lpj = { lpj_source = "kvm" }, "smp#2.on" = true }
""")
        [spec], _, _, _ = scen.load_matrix(path)
        self.assertEqual(spec.expect_data, {"smp.cpus": 4,
                                            "lpj.lpj_source": "kvm",
                                            "smp#2.on": True})
        argv = spec.run_argv()
        self.assertEqual(argv[argv.index("--expect-data"):], [
            "--expect-data", "smp.cpus=4", "--expect-data",
            'lpj.lpj_source="kvm"', "--expect-data", "smp#2.on=true",
            "--", "test=smp,lpj"])
        self.assertEqual(run.parse_args(argv).expect_data, spec.expect_data)

    def test_a_variant_adds_paths(self):
        path = self.write("s.toml", 'cmdline = "test=all"\n'
                          'expect_data = { "smp.cpus" = 1, "lpj.x" = 1 }\n'
                          '[variants.four]\nexpect_data = { "smp.cpus" = 4 }\n')
        [spec] = scen.load_scenario(path)
        self.assertEqual(spec.expect_data, {"smp.cpus": 4, "lpj.x": 1})

    def test_refusals_name_the_path(self):
        for keys, said in (
                ({"expect_data": {}}, "expect_data must be a table"),
                ({"expect_data": 4}, "expect_data must be a table"),
                ({"expect_data": {"smp": 4}}, "expect_data: bad path 'smp': "
                 "a path is TEST.KEY"),
                ({"expect_data": {"smp.cpus": [4]}}, "expect_data: smp.cpus: "
                 "a value must be a number, a string or true/false"),
                ({"expect_data": {"lpj.calibrations": 1},
                  "cmdline": "test=smp,timers"}, "expect_data: "
                 "lpj.calibrations: unknown path: test=smp,timers runs no "
                 "test lpj")):
            with self.subTest(keys=keys), \
                    self.assertRaisesRegex(ScenarioError, f"^x: {said}"):
                scen.from_table({"name": "s", **keys}, "x")
        # test=all, or no test= word, runs it.
        for cmdline in ("test=all", "hz=100"):
            [spec] = scen.from_table({"name": "s", "cmdline": cmdline,
                                      "expect_data": {"lpj.x": 1}}, "x")
            self.assertEqual(spec.expect_data, {"lpj.x": 1})


class Defaults(Files):
    """A matrix's [defaults]: scenario keys said once, replaced by a
    scenario's own."""

    def test_defaults_apply_and_a_scenario_replaces_them(self):
        self.write("s.toml", 'vcpus = 3\n')
        path = self.write("m.toml", """
scenarios = ["s"]
[defaults]
boot = "kernel"
accel = "tcg"
cmdline = "test=smp hz=100"
expect_data = { "smp.cpus" = 2 }
[[scenario]]
name = "plain"
[[scenario]]
name = "own"
accel = "kvm"
cmdline = "test=lpj"
expect_data = { "lpj.calibrations" = 1 }
[[cross]]
name = "c"
[cross.axes]
vcpus = [1, 2]
""")
        specs, _, _, _ = scen.load_matrix(path, self.dir)
        by = {s.name: s for s in specs}
        self.assertEqual((by["plain"].accel, by["plain"].boot,
                          by["plain"].cmdline, by["plain"].expect_data),
                         ("tcg", "kernel", ["test=smp", "hz=100"],
                          {"smp.cpus": 2}))
        self.assertEqual((by["own"].accel, by["own"].cmdline,
                          by["own"].expect_data),
                         ("kvm", ["test=lpj"], {"lpj.calibrations": 1}))
        self.assertEqual((by["c-vcpus2"].accel, by["c-vcpus2"].vcpus),
                         ("tcg", 2))
        # A named scenario is a file of its own and says all it means.
        self.assertEqual((by["s"].accel, by["s"].vcpus), ("auto", 3))

    def test_defaults_refusals(self):
        for text, said in (
                ('[defaults]\nname = "x"', r"defaults: unknown key 'name'"),
                ('[defaults]\nvariants = {}', "defaults: unknown key "),
                ('[defaults]\nvcpus = 0', "defaults: vcpus must be"),
                ('defaults = 1', "defaults must be a table")):
            path = self.write("m.toml", text + '\n[[scenario]]\nname = "a"\n')
            with self.subTest(text=text), \
                    self.assertRaisesRegex(ScenarioError, said):
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

    def test_check_runs_read_back_as_their_tools_run_command_line(self):
        # A nested leg boots its run inside L1 by run_argv(): what it
        # expects must reach that tools/run whole.
        specs, _, _, _ = scen.load_matrix(scen.SCENARIOS.parent / "matrices"
                                          / "check.toml")
        for spec in specs:
            if spec.tool != "run":
                continue
            with self.subTest(run=spec.name):
                args = run.parse_args(spec.run_argv())
                self.assertEqual((args.expect_data, args.expect_line,
                                  args.expect_status, args.expect_fail),
                                 (spec.expect_data, spec.expect_lines,
                                  spec.expect_status, spec.expect_fail))


if __name__ == "__main__":
    unittest.main()
