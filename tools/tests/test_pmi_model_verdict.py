# SPDX-License-Identifier: MIT
"""tools/pmi-verdict's verdict on each KVM profile of the host model, end
to end: the C model (tests/unit/model.c) runs pmi_stress under the
profile and records what a host probe would (the tracepoints and
kprobes, as perf script prints them, with the guest's DATA line and
perf's LOST count); the recording goes through the tool's own parsing
(probecount.tally, name_windows, fired_from), cause count and verdict,
with --quick --expect as git bisect run would call it.

docs/pmi.md's profile table is what the model runs: each column is
held against the profile each recording states, and its verdict column
against the verdict. What the verdict must be follows the Linux
history, checked on the table, not read from the model: before
fad505b2cb83 (first in 6.7) "late", from it "on time". So flipping a
profile's request order in the model fails test_the_table_is_the_model
and test_each_profile."""

import json
import subprocess
import tempfile
import unittest
from pathlib import Path

from tools import ROOT
from tools.commands import pmi_verdict as pv
from tools.lib import cli
from tools.lib.launch import guest
from tools.lib.probe import probecount
from tools.tests.test_pmi_verdict import KPROBE_EVENTS, Model, expect_run

UNIT = ROOT / "build" / "unit" / "hvprobe-unit"
# The model's vCPU threads (model.c's PROBE_TID + i).
VCPUS = {5000: 0, 5001: 1}
PMUS = ("Intel v2", "AMD PerfMonV2")
DOC = ROOT / "docs" / "pmi.md"
COLUMNS = ("profile", "commits", "LVTPC masked on a PMI",
           "PMIs per VM exit", "NMI vs PMI request",
           "counter reprogramming", "PMU model", "verdict")


def profile_table(text):
    """docs/pmi.md's profile table: {profile: {column: cell}}, the
    profile being the first `name` of its first cell."""
    lines = text.splitlines()
    head = next(i for i, line in enumerate(lines)
                if line.startswith("| profile |"))
    columns = tuple(c.strip() for c in lines[head].strip("|").split("|"))
    if columns != COLUMNS:
        raise AssertionError(f"{DOC}: the table's columns are {columns}")
    rows = {}
    for line in lines[head + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        rows[cells[0].split("`")[1]] = dict(zip(COLUMNS, cells))
    return rows


def commits(text):
    """The commits a cell or the model names, as a set."""
    return set(text.replace(",", " ").split()) - {"none"}


TABLE = profile_table(DOC.read_text())
# By profile name: what the verdict must be.
EXPECTED = {name: row["verdict"] for name, row in TABLE.items()}


def read_back(path):
    """(the model's header, the guest's DATA, a probecount.Result) of one
    recording, read as hostprobe.Probe.finish() reads perf's output."""
    lines = path.read_text().splitlines()
    notes = [line[2:] for line in lines if line.startswith("# ")]
    header = dict(n[len("model "):].split(": ", 1) for n in notes
                  if n.startswith("model "))
    data = json.loads(next(n[len("DATA "):] for n in notes
                           if n.startswith("DATA ")))
    stats = "\n".join(n[len("stats:"):] for n in notes
                      if n.startswith("stats:"))
    tl = probecount.tally(lines)
    probecount.name_windows(tl.windows, "\n".join(f"# {n}" for n in notes))
    result = probecount.Result(
        mode="kprobe", notes=[], recorded=KPROBE_EVENTS, vcpus=VCPUS,
        vcpu_method="the model's vCPU threads", windows=tl.windows,
        fired=probecount.fired_from(tl, KPROBE_EVENTS, {}),
        discovery_tids=[min(VCPUS)], lost=probecount.parse_lost(stats),
        events=tl.events, perf_ok=True, throttle_messages=[],
        sample_rate_after=None, cancel_symbol="vmx_cancel_injection")
    return header, data, result


class Recorded(Model):
    """The fake probed runs of tools/tests/test_pmi_verdict.py, but each
    pmi_stress run is the model's recording of that LVTPC mode."""

    def __init__(self, recordings):
        super().__init__()
        self.recordings = recordings    # {lvtpc: (header, data, result)}

    def run(self, verdict, name, words, cpu, discover=False):
        opts = dict(w.split("=", 1) for w in words)
        if opts["test"] != "pmi_stress":
            return super().run(verdict, name, words, cpu, discover)
        self.boots.append((name, words))
        _, data, result = self.recordings[opts["pmu.lvtpc"]]
        test = {"name": "pmi_stress", "status": "pass", "reason": None,
                "data": [data]}
        record = {"name": name, "probe": result.to_json()}
        verdict.doc["runs"].append(record)
        return guest.Outcome({"verdict": "pass", "tests": [test]}, [],
                             True), result, record


class EndToEnd(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        done = subprocess.run(["make", "-s", "-C", str(ROOT),
                               "build/unit/hvprobe-unit"],
                              stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, **cli.as_owner(ROOT))
        if done.returncode:
            raise AssertionError(f"make: {done.stderr[-2000:]}")
        cls.tmp = tempfile.TemporaryDirectory()
        folder = Path(cls.tmp.name)
        ran = subprocess.run([str(UNIT), "unit_pmi_model_probe_record"],
                             env={"HVPROBE_MODEL_PROBE": str(folder),
                                  "PATH": "/usr/bin:/bin"},
                             capture_output=True, text=True, timeout=300)
        if ran.returncode:
            raise AssertionError(ran.stdout[-3000:])
        cls.runs = {}
        for path in sorted(folder.glob("*.txt")):
            header, data, result = read_back(path)
            lost = path.stem.endswith("-lost")
            key = (header["host"], header["pmu"], lost)
            cls.runs.setdefault(key, {})[header["lvtpc"]] = \
                (header, data, result)
        cls.tmp.cleanup()

    def judge(self, recordings, expect):
        return expect_run(Recorded(recordings), expect, "--quick")

    def test_every_profile_is_recorded(self):
        self.assertEqual({h for h, _, _ in self.runs}, set(EXPECTED),
                         "a profile with no expected verdict here, or one "
                         "the model lost")
        for host in EXPECTED:
            for pmu in PMUS:
                self.assertEqual(set(self.runs[(host, pmu, False)]),
                                 {"nmi", "fixed"}, (host, pmu))

    def test_the_verdict_follows_fad505b2cb83(self):
        for name, row in TABLE.items():
            with self.subTest(profile=name):
                fixed = "fad505b2cb83" in commits(row["commits"])
                self.assertEqual(row["verdict"],
                                 "on time" if fixed else "late")
                self.assertEqual(row["NMI vs PMI request"],
                                 "PMI first" if fixed else "NMI first")

    def test_the_table_is_the_model(self):
        seen = set()
        for (host, pmu, _), recordings in sorted(self.runs.items()):
            for lvtpc, (header, _, _) in recordings.items():
                with self.subTest(host=host, pmu=pmu, lvtpc=lvtpc):
                    row = TABLE[host]
                    self.assertEqual(commits(header["commits"]),
                                     commits(row["commits"]))
                    for column in COLUMNS[2:-1]:
                        self.assertEqual(header[column], row[column],
                                         column)
                    seen.add(host)
        self.assertEqual(seen, set(TABLE))

    def test_each_profile(self):
        for (host, pmu, lost), recordings in sorted(self.runs.items()):
            if lost:
                continue
            want = EXPECTED[host]
            other = "late" if want == "on time" else "on-time"
            with self.subTest(host=host, pmu=pmu):
                status, out, err = self.judge(
                    recordings, want.replace(" ", "-"))
                self.assertEqual(status, pv.EXIT_VERDICT, out + err)
                self.assertIn("verdict: ", out)
                status, out, err = self.judge(recordings, other)
                self.assertEqual(status, pv.EXIT_FAILED, out + err)
                self.assertIn(f"the verdict is {want}, not", err)

    def test_the_figures_the_verdict_reads(self):
        # Per PMI, about one cancel the PMI's own NMI caused before the
        # fix, none after; on a fixed vector none on any profile.
        for (host, pmu, lost), rec in sorted(self.runs.items()):
            if lost:
                continue
            with self.subTest(host=host, pmu=pmu):
                nmi = pv.mode_figures(rec["nmi"][2], rec["nmi"][1], "nmi")
                fixed = pv.mode_figures(rec["fixed"][2], rec["fixed"][1],
                                        "fixed")
                self.assertGreaterEqual(nmi["pmis"], pv.MIN_PMIS)
                self.assertTrue(nmi["complete"] and fixed["complete"])
                self.assertEqual(fixed["caused"], 0)
                if EXPECTED[host] == "late":
                    self.assertGreater(nmi["caused_per_pmi"], 0.9)
                else:
                    self.assertEqual(nmi["caused"], 0)

    def test_the_fix_shortens_a_pmi_to_its_vm_entry(self):
        # A cancelled entry costs the model 15 cycles (CANCEL_CYCLES),
        # 15 us at its 1 MHz TSC: before the fix nearly every PMI's
        # entry waits that long; after it the entry follows at once
        # (below the recording's 1 us resolution).
        for (host, pmu, lost), rec in sorted(self.runs.items()):
            if lost:
                continue
            with self.subTest(host=host, pmu=pmu):
                us = pv.mode_figures(rec["nmi"][2], rec["nmi"][1],
                                     "nmi")["pmi_to_entry_us"]
                if EXPECTED[host] == "late":
                    self.assertGreater(us, 10)
                else:
                    self.assertLess(us, 1)
        _, out, _ = self.judge(self.runs[("6.1.141", "Intel v2", False)],
                               "late")
        self.assertRegex(out, r"\d+\.\d us from a PMI's delivery to the "
                              r"VM-entry after it")

    def test_lost_records_are_no_verdict(self):
        lost = [(k, r) for k, r in self.runs.items() if k[2]]
        self.assertEqual({k[0] for k, _ in lost}, {"6.1.141", "6.9"})
        for (host, pmu, _), recordings in lost:
            with self.subTest(host=host):
                both = {**self.runs[(host, pmu, False)],
                        "nmi": recordings["nmi"]}
                status, out, err = self.judge(both, "late")
                self.assertEqual(status, pv.EXIT_SKIP, out + err)
                self.assertRegex(err, r"perf lost \d+ records in the "
                                      r"LVTPC=nmi run")
                self.assertIn("inconclusive", out)


if __name__ == "__main__":
    unittest.main()
