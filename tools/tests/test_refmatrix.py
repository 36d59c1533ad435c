# SPDX-License-Identifier: MIT
"""tools/linux-referee --matrix: its scenarios, the options each gives
tools/linux-referee, and the table read from made-up referee.json
documents (nothing is booted)."""

import contextlib
import io
import json
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from tools.commands import linux_referee as lr
from tools.lib import referee
from tools.lib import refmatrix as rm
from tools.lib.hostkernels import nested


L1_RESET = ("QEMU exited with status 0 after 40 s, with no end marker: "
            "the guest reset or powered off (-no-reboot)")


@contextlib.contextmanager
def nested_l1(run):
    """run_nested() with run standing for nested.run() and nothing of
    this machine read: its host kernel, KVM, QEMU."""
    with mock.patch.object(lr.hostkernel, "resolve"), \
            mock.patch.object(lr.hostinfo, "qemu_version",
                              return_value=(10, 0, 2)), \
            mock.patch.object(lr.kvm_lib, "flavour_works",
                              return_value=("kvm_pvm", True)), \
            mock.patch.object(lr.nested, "run", run):
        yield


def referee_doc(linux61=(2, "lpj_fine", None), hv61=(2, "lpj_fine"),
                linux612=(0, "lpj_fine", None), hv612=(0, "lpj_fine"),
                beyond=("agree", "agree", "not compared")):
    """What tools/linux-referee writes: per series, Linux's count of APs
    that calibrated, its boot CPU's source and TSC verdict, hvprobe's
    count and source under the policy of the same name, and the
    verdicts of the comparisons beyond them."""
    rows = []
    for series, policy, lx, hv in (("6.1", "linux-6.1", linux61, hv61),
                                   ("6.12", "linux-6.12", linux612, hv612)):
        agree = lx[:2] == hv and "disagree" not in beyond
        rows.append({"series": series, "release": f"{series}.0-test",
                     "policy": policy, "bringup": "serial",
                     "linux": {"calibrations": lx[0], "bsp_lpj_source": lx[1],
                               "tsc_unstable": lx[2]},
                     "hvprobe": {"calibrations": hv[0],
                                 "bsp_lpj_source": hv[1], "verdict": "pass"},
                     "comparisons": [
                         {"what": what, "verdict": verdict}
                         for what, verdict in zip(referee.COMPARISONS[2:],
                                                  beyond)],
                     "agree": agree})
    return {"rows": rows, "agree": all(r["agree"] for r in rows)}


class Scenarios(unittest.TestCase):
    def test_every_scenario_of_the_issue(self):
        all_ = rm.scenarios()
        self.assertEqual(len(all_), 2 + 2 * 7 * 2)
        self.assertEqual([(s.name, s.vcpus, s.nodes, s.cpu)
                          for s in all_[:2]],
                         [("tcg-1node", 8, 1, None), ("tcg-4node", 8, 4, None)])
        by_name = {s.name: s for s in all_}
        s = by_name["l1-6.12-hv-alone-2node"]
        # Nested, no more vCPUs than L1 has: one package per node.
        self.assertEqual((s.host, s.vcpus, s.nodes, s.flavour),
                         ("6.12", nested.L1_VCPUS, 2, "hv-alone"))
        self.assertNotIn("l1-6.12-hv-alone-4node", by_name)
        self.assertEqual(s.cpu, "host,-arch-capabilities,hv-relaxed,"
                                "hv-vpindex,hv-time,kvm=off")
        self.assertNotIn("hv-frequencies", s.cpu)
        self.assertIn("hv-frequencies",
                      by_name["l1-6.1-hv-freq-1node"].cpu)
        self.assertIn("-kvmclock", by_name["l1-6.1-no-kvmclock-2node"].cpu)
        self.assertEqual(by_name["l1-6.12-hv-freq-no-kvmclock-2node"].cpu,
                         "host,-arch-capabilities,-kvmclock,hv-relaxed,"
                         "hv-vpindex,hv-time,hv-frequencies")
        self.assertEqual(s.argv("/r"), [
            "--no-build", "--results", "/r", "--name",
            "l1-6.12-hv-alone-2node", "--smp", "2", "--numa", "2", "--accel",
            "kvm", "--cpu", s.cpu])
        self.assertEqual(all_[0].argv("/r")[-2:], ["--accel", "tcg"])

    def test_pick(self):
        names = [s.name for s in rm.pick(rm.scenarios(("6.12",)),
                                         ["tcg-*", "*hv-alone-2node"])]
        self.assertEqual(names, ["tcg-1node", "tcg-4node",
                                 "l1-6.12-hv-alone-2node"])
        self.assertEqual(len(rm.pick(rm.scenarios(("6.1",)), None)), 16)


class Table(unittest.TestCase):
    def test_rows_per_series(self):
        tcg = rm.scenarios(())[1]
        hv = rm.Scenario("l1-6.12-hv-alone-4node", "6.12", "x", 4, 4,
                         "hv-alone")
        freq = rm.Scenario("l1-6.12-hv-freq-1node", "6.12", "x", 4, 1,
                           "hv-freq")
        lines = rm.table([
            (tcg, referee_doc(), 0),
            (hv, referee_doc(linux61=(3, "calibrate", "running on Hyper-V"),
                             hv61=(3, "lpj_fine")), 1),
            (freq, None, 3)])
        self.assertEqual(lines[0].split()[:3], ["scenario", "host", "CPU"])
        cells = [line.split() for line in lines[1:]]
        self.assertEqual(cells[0], ["tcg-4node", "TCG", "default", "4", "6.1",
                                    "6.1.0-test", "2", "lpj_fine",
                                    "linux-6.1", "2", "lpj_fine", "pass",
                                    "classes:ok,unstable:ok,checks:n/c",
                                    "agree"])
        self.assertEqual(cells[1][4], "6.12")
        # hvprobe models Linux's refusal to calibrate its TSC, so a
        # disagreement under Hyper-V alone is one like any other.
        self.assertEqual(cells[2][:10], [
            "l1-6.12-hv-alone-4node", "L1", "6.12", "hv-alone", "4", "6.1",
            "6.1.0-test", "3", "calibrate", "(TSC"])
        self.assertEqual(cells[2][-1], "DISAGREE")
        self.assertEqual(cells[3][-1], "agree")
        # A comparison beyond the counts that differs is a disagreement
        # the table names.
        differ = rm.lines(tcg, referee_doc(
            beyond=("disagree", "agree", "agree")))[0]
        self.assertEqual(differ[-2:], ("classes:DIFFER,unstable:ok,checks:ok",
                                       "DISAGREE"))
        self.assertEqual(rm.beyond(None), "-")
        self.assertEqual(cells[4][-2:], ["NO", "RESULT"])
        self.assertIn("no referee.json (exit 3)", lines[5])
        self.assertEqual(len(lines), 6)
        self.assertEqual(rm.agreed([(tcg, referee_doc(), 0),
                                    (hv, referee_doc(hv61=(1, "lpj_fine")),
                                     1), (freq, None, None)]), (1, 3))

    def test_a_linux_that_never_finished_is_not_run_not_agreed(self):
        # tools/linux-referee keeps "agree" true for a series it could not
        # judge (it disagreed with nothing) and names it in not_run: the
        # table says NOT RUN and the scenario is not counted as agreeing.
        tcg = rm.scenarios(())[0]
        doc = referee_doc()
        doc["rows"][0].update(linux=None, not_run="Linux 6.1 never "
                              "finished (QEMU exited with status 0)")
        del doc["rows"][0]["agree"]
        doc["not_run"] = ["6.1"]
        rows = rm.lines(tcg, doc)
        self.assertEqual((rows[0][6], rows[0][-1]), ("never finished",
                                                     "NOT RUN"))
        self.assertEqual(rows[1][-1], "agree")
        self.assertEqual(rm.agreed([(tcg, doc, 3)]), (0, 1))


class Words(unittest.TestCase):
    def test_the_table_reads_the_referees_words(self):
        self.assertEqual(set(rm.BEYOND), set(referee.COMPARISONS[2:]))
        self.assertEqual(set(rm.MARKS), {referee.AGREE, referee.DISAGREE,
                                         referee.NOT_COMPARED})


def referee_agrees(cmd):
    """What a TCG scenario's tools/linux-referee leaves behind when both
    series agree; its name."""
    name = cmd[cmd.index("--name") + 1]
    folder = Path(cmd[cmd.index("--results") + 1]) / name
    folder.mkdir()
    (folder / "referee.json").write_text(json.dumps(referee_doc()))
    return name


class Command(unittest.TestCase):
    def test_list_and_only(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertEqual(lr.main(["--list-scenarios", "--only", "tcg-*"]),
                             0)
        self.assertEqual(out.getvalue().splitlines(), [
            "tcg-1node: 8 vCPUs on 1 node(s), TCG, -cpu default",
            "tcg-4node: 8 vCPUs on 4 node(s), TCG, -cpu default"])
        with contextlib.redirect_stderr(io.StringIO()):
            with self.assertRaises(SystemExit):
                lr.parse_args(["--matrix", "--only", "nothing-*"])
            with self.assertRaises(SystemExit):
                lr.parse_args(["--matrix", "--host-kernel", "5.10"])

    def test_matrix_runs_tcg_here_and_the_rest_in_one_l1(self):
        with tempfile.TemporaryDirectory() as tmp:
            args = lr.parse_args(["--matrix", "--no-build", "--results", tmp,
                                  "--host-kernel", "6.12", "--only",
                                  "tcg-1node", "--only", "l1-*-kvm-*"])
            ran, nested_calls = [], []

            def fake_run(cmd, **kwargs):
                ran.append(referee_agrees(cmd))
                return mock.Mock(returncode=0)

            def fake_nested(host, mine, folder):
                nested_calls.append((host, [s.name for s in mine]))
                return dict.fromkeys(mine)
            out = io.StringIO()
            with mock.patch("subprocess.run", fake_run), \
                    mock.patch.object(lr, "run_nested", fake_nested), \
                    contextlib.redirect_stdout(out):
                rc = lr.main(["--matrix", "--no-build", "--results", tmp,
                              "--host-kernel", "6.12", "--only", "tcg-1node",
                              "--only", "l1-*-kvm-*"])
            self.assertEqual(ran, ["tcg-1node"])
            self.assertEqual(nested_calls, [
                ("6.12", ["l1-6.12-kvm-1node", "l1-6.12-kvm-2node"])])
            self.assertEqual(rc, 1)     # the nested two left no result
            self.assertIn("1 of 3 scenarios agree", out.getvalue())
            [folder] = Path(tmp).glob("referee-matrix-*")
            doc = json.loads((folder / "matrix.json").read_text())
            self.assertEqual((doc["agree"], doc["total"]), (1, 3))
            self.assertEqual(len(args.scenarios), 3)

    def test_an_l1_that_ends_early_is_booted_again_for_the_rest(self):
        # L1 6.1 reset during the second of three scenarios: the first
        # keeps its result; the other two run in a second L1 boot, with
        # its own console folder, and the half-written folder is kept
        # aside, not read as the scenario's.
        mine = [s for s in rm.scenarios(("6.1",))
                if s.flavour == "kvm"] + \
            [s for s in rm.scenarios(("6.1",))
             if s.name == "l1-6.1-hv-1node"]
        calls = []

        def fake_run(kernel, commands, share, timeout, l0, stream, own_dir):
            calls.append((own_dir, [c[c.index("--name") + 1]
                                    for c in commands]))
            if len(calls) == 1:
                (Path(share) / "l1-6.1-kvm-2node").mkdir()
                return nested.Outcome([0, None, None], {}, l0, kernel, 40.0,
                                      Path("serial.log"),
                                      "Kernel panic - not syncing: x",
                                      L1_RESET)
            return nested.Outcome([0, 1], {}, l0, kernel, 40.0,
                                  Path("serial.log"))

        with tempfile.TemporaryDirectory() as tmp, nested_l1(fake_run), \
                contextlib.redirect_stdout(io.StringIO()) as out:
            done = lr.run_nested("6.1", mine, Path(tmp))
            left = sorted(p.name for p in Path(tmp).iterdir())
        self.assertEqual(calls, [
            ("l1-6.1", ["l1-6.1-kvm-1node", "l1-6.1-kvm-2node",
                        "l1-6.1-hv-1node"]),
            ("l1-6.1-2", ["l1-6.1-kvm-2node", "l1-6.1-hv-1node"])])
        self.assertEqual([done[s] for s in mine], [0, 0, 1])
        self.assertEqual(left, ["l1-6.1-kvm-2node.l1-ended-1"])
        self.assertIn("L1 6.1: L1 ended before 2 of its 3 commands did "
                      "(l1-6.1-kvm-2node, l1-6.1-hv-1node; its kernel: "
                      "Kernel panic - not syncing: x; its console: "
                      "serial.log); booting it again",
                      out.getvalue())

    def test_l1_is_booted_again_while_each_boot_finishes_one(self):
        # Dying after one scenario each time, L1 is booted once per
        # scenario; the second boot in a row that finishes none is the
        # last.
        mine = [s for s in rm.scenarios(("6.12",)) if s.flavour == "kvm"] + \
            [s for s in rm.scenarios(("6.12",)) if s.flavour == "hv"]
        runs = []

        def one_each(kernel, commands, share, timeout, l0, stream, own_dir):
            runs.append((own_dir, len(commands)))
            return nested.Outcome([0] + [None] * (len(commands) - 1), {},
                                  l0, kernel, 40.0, Path("serial.log"),
                                  ended=L1_RESET)

        def none_after_two(kernel, commands, share, timeout, l0, stream,
                           own_dir):
            runs.append((own_dir, len(commands)))
            first = [0] if len(runs) <= 2 else [None]
            return nested.Outcome(first + [None] * (len(commands) - 1), {},
                                  l0, kernel, 40.0, Path("serial.log"),
                                  ended=L1_RESET)

        for fake, boots, finished in ((one_each, 4, 4),
                                      (none_after_two, 4, 2)):
            runs.clear()
            with tempfile.TemporaryDirectory() as tmp, nested_l1(fake), \
                    contextlib.redirect_stdout(io.StringIO()) as out:
                done = lr.run_nested("6.12", mine, Path(tmp))
            self.assertEqual(len(runs), boots)
            self.assertEqual(runs[0], ("l1-6.12", 4))
            self.assertEqual(runs[1], ("l1-6.12-2", 3))
            self.assertEqual(sum(v == 0 for v in done.values()), finished)
        self.assertIn("not booting it again: two boots in a row finished "
                      "none", out.getvalue())
        # A silent end says how L1's QEMU stopped.
        self.assertIn(f"L1 6.12: L1 ended before 3 of its 4 commands did "
                      f"(l1-6.12-kvm-2node, l1-6.12-hv-1node, "
                      f"l1-6.12-hv-2node; {L1_RESET}; its console: "
                      "serial.log)", out.getvalue())

    def test_an_interrupted_matrix_keeps_what_it_measured(self):
        # Ctrl-C (or SIGTERM, which entry.py turns into the same) during
        # the nested part: the TCG scenario's result is printed and saved,
        # the rest are marked, and the exit is 130.
        with tempfile.TemporaryDirectory() as tmp:
            def fake_run(cmd, **kwargs):
                referee_agrees(cmd)
                return mock.Mock(returncode=0)

            def interrupted(host, mine, folder):
                raise KeyboardInterrupt("SIGTERM")
            out = io.StringIO()
            with mock.patch("subprocess.run", fake_run), \
                    mock.patch.object(lr, "run_nested", interrupted), \
                    contextlib.redirect_stdout(out):
                rc = lr.main(["--matrix", "--no-build", "--results", tmp,
                              "--host-kernel", "6.12", "--only", "tcg-1node",
                              "--only", "l1-*-kvm-1node"])
            self.assertEqual(rc, 130)
            self.assertIn("interrupted", out.getvalue())
            self.assertIn("1 of 2 scenarios agree", out.getvalue())
            [folder] = Path(tmp).glob("referee-matrix-*")
            doc = json.loads((folder / "matrix.json").read_text())
            self.assertTrue(doc["interrupted"])
            self.assertEqual((doc["agree"], doc["total"]), (1, 2))


if __name__ == "__main__":
    unittest.main()
