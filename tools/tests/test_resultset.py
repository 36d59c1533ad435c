# SPDX-License-Identifier: MIT
"""Raw serial logs into result documents: truncated, interleaved and
garbage logs never raise, and say what could not be read; the document
has the keys docs/results.md documents."""

import json
import re
import tempfile
import unittest
from unittest import mock
from pathlib import Path

from tools import ROOT
from tools.lib.analysis import resultset, results
from tools.lib.launch import guest, qemu

GOOD = b"""\x1b[2J\x1b[HGRUB loading...
KTAP version 1
1..2
# hvprobe 0.1: multiboot2, loader "GRUB 2.06"
    KTAP version 1
    # Subtest: smp
    ok 1 every CPU online
    # DATA {"test":"smp","cpus":4,"nodes":1,"total_us":1234,"aps":[]}
    1..1
ok 1 smp
    KTAP version 1
    # Subtest: lpj
    ok 1 calibrations as predicted
    1..1
ok 2 lpj
# Totals: pass:2 fail:0 skip:0 error:0
"""


def documented_keys(section):
    """The keys of one table of docs/results.md, by its heading."""
    text = (ROOT / "docs" / "results.md").read_text()
    part = text.split(section, 1)[1].split("\n#", 1)[0]
    keys = []
    for line in part.splitlines():
        m = re.match(r"\| ((?:`\w+`(?:, )?)+) \|", line)
        if m:
            keys += re.findall(r"`(\w+)`", m.group(1))
    return keys


class Logs(unittest.TestCase):
    def setUp(self):
        self.dir = Path(self.enterContext(tempfile.TemporaryDirectory()))

    def doc(self, raw, name="vm.serial.log"):
        path = self.dir / name
        path.write_bytes(raw)
        problems = []
        doc = resultset.doc_from_log(path, problems)
        self.assertEqual(problems, [])
        json.dumps(doc)         # it must stay JSON
        return doc

    def test_complete_log(self):
        doc = self.doc(GOOD)
        self.assertEqual(doc["verdict"], "pass")
        self.assertEqual(doc["run"], "vm")
        self.assertEqual(doc["source"], "serial-log")
        self.assertEqual(doc["hvprobe"]["banner"],
                         'hvprobe 0.1: multiboot2, loader "GRUB 2.06"')
        self.assertEqual(doc["tests"][0]["data"][0]["total_us"], 1234)
        self.assertEqual(doc["problems"], [])

    def test_truncated_log_is_a_crash_that_keeps_its_data(self):
        for cut in range(0, len(GOOD), 7):
            with self.subTest(cut=cut):
                doc = self.doc(GOOD[:cut])
                if cut < GOOD.index(b"# Totals"):
                    self.assertEqual(doc["verdict"], "crash")
        doc = self.doc(GOOD[:GOOD.index(b"1..1\nok 1 smp")])
        self.assertIn("without a totals line", doc["crash"])
        self.assertEqual(doc["tests"][0]["data"][0]["cpus"], 4)

    def test_interleaved_lines_are_problems(self):
        # Another CPU's half line inside a subtest, and a DATA line cut
        # by a second writer.
        raw = GOOD.replace(b"    ok 1 every CPU online\n",
                           b"    ok 1 every CPU onAP 3 says hi\n"
                           b"line\n    # DATA {\"test\":\"smp\",\"cp\n")
        doc = self.doc(raw)
        self.assertTrue(any("not KTAP" in p for p in doc["problems"]))
        self.assertTrue(any("not valid JSON" in p for p in doc["problems"]))
        self.assertEqual(doc["totals"]["pass"], 2)

    def test_garbage_never_raises(self):
        samples = [b"", b"\x00\xff" * 1000, b"KTAP version 1\n" * 3,
                   b"ok 99999999999999999999 x\n", b"# DATA [1,2]\n",
                   bytes(range(256)) * 20, b"KTAP version 1\n1..1\n"
                   b"# DATA {\"test\": NaN}\n" + b"    " * 1000 + b"ok\n"]
        for raw in samples:
            with self.subTest(raw=raw[:20]):
                doc = self.doc(raw)
                self.assertIn(doc["verdict"], ("pass", "fail", "crash"))

    def test_meta_sidecar_names_the_run(self):
        meta = {"name": "gen2-16", "machine": {"boot": "uefi", "vcpus": 16},
                "host": {"accel": "hyperv", "kernel": "10.0.20348"}}
        (self.dir / "vm.meta.json").write_bytes(
            b"\xef\xbb\xbf" + json.dumps(meta).encode())   # PowerShell BOM
        doc = self.doc(GOOD)
        self.assertEqual(resultset.name_of(doc), "gen2-16")
        self.assertEqual((doc["boot"], doc["accel"]), ("uefi", "hyperv"))

    def test_folders_and_bad_files(self):
        (self.dir / "vm.serial.log").write_bytes(GOOD)
        (self.dir / "unit.log").write_bytes(GOOD)   # not a serial log
        (self.dir / "broken.json").write_text("{")
        docs, problems = resultset.load([self.dir, self.dir / "broken.json",
                                         self.dir / "absent"])
        self.assertEqual([d["run"] for d in docs], ["vm"])
        self.assertEqual(len(problems), 2)

    def test_documented_keys(self):
        doc = self.doc(GOOD)
        top = documented_keys("## Keys")
        self.assertEqual(set(top), set(doc) - {"file"})
        self.assertEqual(set(documented_keys("### `tests[]`")),
                         set(doc["tests"][0]))
        machine = qemu.Machine(smp=2)
        scenario = guest.adhoc_scenario(machine, "", 60)
        self.assertEqual(set(documented_keys("### `scenario`")),
                         set(scenario))
        # No probe boot from a unit test: the keys are what matter.
        with mock.patch.object(guest.kvm, "state", return_value={}):
            host = guest.host_block("tcg", False)
        self.assertEqual(set(documented_keys("### `host`")), set(host))
        self.assertEqual(doc["schema"], results.SCHEMA)


if __name__ == "__main__":
    unittest.main()
