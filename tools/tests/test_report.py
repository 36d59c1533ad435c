# SPDX-License-Identifier: MIT
"""Figures, tables, the report's rows, what tools/plot draws, and the
progress line."""

import io
import json
import unittest

from tools.lib.analysis import figures, plotdata, report
from tools.lib.analysis.table import Column, render
from tools.lib.launch.progress import Progress


def ap(apic_id, node, marks, source="calibrate"):
    keys = ("init_us", "sipi_us", "alive_us", "calibrated_us", "online_us")
    return {"apic_id": apic_id, "node": node, "online": marks[-1] > 0,
            "lpj_source": source, **dict(zip(keys, marks))}


def run(name, total_us, cpus=3, nodes=1, cmdline="test=smp", verdict="pass",
        aps=None, more=()):
    smp = {"test": "smp", "cpus": cpus, "nodes": nodes, "total_us": total_us,
           "calibrations": cpus, "lpj_reuse": "node",
           "per_ap_us": {"median": total_us // max(cpus - 1, 1)},
           "aps": aps if aps is not None else
           [ap(i, 0, [i, i + 1, i + 2, i + 3, i + 4])
            for i in range(1, cpus)]}
    return {"scenario": {"name": name}, "run": name, "cmdline": cmdline,
            "verdict": verdict, "timing": {"totals_s": 1.5},
            "tests": [{"name": "smp", "data": [smp]},
                      *({"name": m["test"], "data": [m]} for m in more)]}


class Figures(unittest.TestCase):
    def test_names_and_units(self):
        figs = figures.of_run(run("a", 2000))
        self.assertEqual(figs["smp.total_us"], 2000)
        self.assertEqual(figs["smp.per_ap_us.median"], 1000)
        self.assertEqual(figs["run.totals_s"], 1.5)
        self.assertNotIn("smp.aps", figs)
        self.assertEqual(figures.unit_of("smp.per_ap_us.median"), "µs")
        self.assertEqual(figures.unit_of("pmi_stress.gap_cycles.p99"),
                         "cycles")
        self.assertEqual(figures.unit_of("x.pmis_per_s_per_cpu"), "/s/CPU")
        self.assertEqual(figures.unit_of("smp.cpus"), "")

    def test_second_data_object_of_a_test(self):
        doc = {"tests": [{"name": "t", "data": [{"test": "t", "v": 1},
                                                {"test": "t", "v": 2}]}]}
        self.assertEqual(figures.of_run(doc), {"t.v": 1, "t#2.v": 2})


    def test_per_ap_records(self):
        # A kernel that prints each AP on a DATA line of its own, beside
        # the summary, instead of in the summary's "aps" list.
        listed = run("r", 2000, 3, aps=[ap(1, 0, [1, 2, 3, 4, 5]),
                                       ap(2, 0, [2, 3, 4, 5, 6], "reuse")])
        smp = dict(listed["tests"][0]["data"][0])
        aps = [{"test": "smp", "record": "ap", **a} for a in smp.pop("aps")]
        lines = {**listed, "tests": [{"name": "smp", "data": [smp, *aps]}]}
        for doc in (listed, lines):
            self.assertEqual(figures.data(doc, "smp")["total_us"], 2000)
            self.assertEqual([a["apic_id"] for a in
                              figures.records(doc, "smp", "ap")], [1, 2])
            self.assertEqual(report.ap_sources(doc), "calibrate 1, reuse 1")
            self.assertEqual(len(plotdata.timeline(doc).bars), 2)
        self.assertEqual(figures.of_run(lines), figures.of_run(listed))
        self.assertEqual(figures.records({"tests": []}, "smp", "ap"), [])
        self.assertIsNone(report.ap_sources({"tests": []}))


class Table(unittest.TestCase):
    cols = [Column("name", "name"), Column("ms", "time", "ms", numeric=True)]
    rows = [{"name": "a|b", "ms": 1.5}, {"name": "long name", "ms": None}]

    def test_text_is_aligned(self):
        lines = render(self.cols, self.rows).splitlines()
        self.assertEqual(lines[0], "name       time (ms)")
        self.assertEqual(lines[2], "a|b              1.5")
        self.assertEqual(lines[3], "long name          -")

    def test_machine_formats(self):
        self.assertEqual(render(self.cols, self.rows, "csv").splitlines(),
                         ["name,time (ms)", "a|b,1.5", "long name,"])
        doc = json.loads(render(self.cols, self.rows, "json"))
        self.assertEqual(doc["rows"][0], {"name": "a|b", "ms": 1.5})
        md = render(self.cols, self.rows, "markdown").splitlines()
        self.assertTrue(md[1].endswith(":|"))
        self.assertIn("a\\|b", md[2])


class Report(unittest.TestCase):
    def test_repeats_fold_into_one_row(self):
        docs = [run("a", 1000), run("a", 3000), run("a", 2000, verdict="crash"),
                run("b", 500)]
        cols, rows, notes = report.rows_for(docs, ["run.*", "nothing.*"])
        keys = [c.key for c in cols]
        self.assertIn("bringup_min_ms", keys)
        self.assertIn("run.totals_s", keys)
        self.assertEqual(notes, ["no figure matches 'nothing.*'"])
        a = rows[0]
        self.assertEqual((a["runs"], a["bringup_ms"], a["bringup_min_ms"],
                          a["bringup_max_ms"]), (3, 2.0, 1.0, 3.0))
        self.assertEqual(a["verdict"], "2 pass, 1 crash")
        self.assertEqual(a["lpj"], "calibrate 2")
        text = report.render(docs)
        self.assertIn("bring-up (ms)", text)

    def test_pmi_columns_appear_with_pmi_data(self):
        pmi = {"test": "pmi_stress", "pmis_per_s_per_cpu": 9000,
               "skid": {"median": 3, "max": 9},
               "gap_cycles": {"p50": 100, "p99": 900, "max": 2000}}
        cols, rows, _ = report.rows_for([run("p", 1, more=[pmi])])
        self.assertEqual(rows[0]["pmi_stress.gap_cycles.p99"], 900)

    def test_no_smp_data_still_reports_verdicts(self):
        doc = {"run": "x", "verdict": "crash", "tests": []}
        cols, rows, _ = report.rows_for([doc])
        self.assertEqual([c.key for c in cols],
                         ["scenario", "runs", "verdict"])
        self.assertEqual(rows[0]["verdict"], "crash")


class PlotData(unittest.TestCase):
    def test_bringup_series(self):
        docs = [run("p4", 4000, 4, cmdline="test=smp lpj=99"),
                run("p2", 2000, 2, cmdline="test=smp lpj=99"),
                run("c2", 8000, 2, nodes=2,
                    cmdline="lpj_source=calibrate")]
        series = {s.label: s for s in plotdata.bringup_series(docs)}
        self.assertEqual(sorted(series), ["per-CPU calibration, 2 nodes",
                                          "preset (lpj=), 1 node"])
        points = series["preset (lpj=), 1 node"].points
        self.assertEqual([(v, s.median) for v, s in points],
                         [(2, 2.0), (4, 4.0)])

    def test_timeline_stops_where_an_ap_did(self):
        doc = run("t", 10, aps=[ap(1, 0, [0, 1000, 2000, 5000, 5000]),
                                ap(2, 1, [6000, 7000, 0, 0, 0])])
        tl = plotdata.timeline(doc)
        self.assertEqual(tl.bars[0], ("APIC 1 n0", [
            (0, 1, 0), (1, 1, 1), (2, 3, 2), (5, 0, 3)]))
        self.assertEqual(tl.bars[1], ("APIC 2 n1", [(6, 1, 0)]))
        self.assertIsNone(plotdata.timeline({"tests": []}))
        self.assertEqual(plotdata.timeline_choice([doc]), ["t"])

    def test_pmi_shapes(self):
        self.assertTrue(plotdata.pmi([run("a", 1)]).empty)
        pmi = {"test": "pmi_stress", "skid": {"median": 2, "max": 7},
               "gap_cycles": [5, 6, 7], "gap_hist": {"counts": [1, 2]},
               "pmis": 10}
        data = plotdata.pmi([run("a", 1, more=[pmi])])
        self.assertEqual(data.percentiles["skid"]["a"],
                         {"median": 2, "max": 7})
        self.assertEqual(data.samples["gap_cycles"]["a"], [5, 6, 7])
        self.assertIn("gap_hist", data.histograms)


class ProgressLine(unittest.TestCase):
    def test_plain_lines_when_not_a_terminal(self):
        out = io.StringIO()
        with Progress(2, stream=out, live=False,
                      clock=iter([0, 1, 2, 3]).__next__) as p:
            p.started()
            p.started()
            p.finished("PASS a", failed=False)
            p.finished("FAIL b", failed=True)
        lines = out.getvalue().splitlines()
        self.assertEqual(lines, ["[1/2] running 1, failed 0, 1.0 s  PASS a",
                                 "[2/2] running 0, failed 1, 2.0 s  FAIL b"])
        self.assertNotIn("\r", out.getvalue())

    def test_live_line_is_redrawn(self):
        out = io.StringIO()
        with Progress(1, stream=out, live=True) as p:
            p.started()
            p.finished("PASS a")
        text = out.getvalue()
        self.assertIn("\r\x1b[K", text)
        self.assertIn("PASS a\n", text)
        self.assertIn("[1/1] running 0, failed 0", text)


if __name__ == "__main__":
    unittest.main()
