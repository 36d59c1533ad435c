# SPDX-License-Identifier: MIT
"""tools/mkiso's grub.cfg: the default entry with the command line given,
one entry per shipped scenario with that scenario's, the entry a disk or
--default picks; and tools/run's pick of an entry by a disk."""

import contextlib
import io
import re
import tempfile
import unittest
from pathlib import Path

from tools.commands import mkiso
from tools.lib.launch import guest, media

TEMPLATE = mkiso.TEMPLATE.read_text()


class GrubCfg(unittest.TestCase):
    def test_every_scenario_is_an_entry(self):
        menu = mkiso.entries()
        ids = [e[0] for e in menu]
        self.assertIn("lpj-hyperv-16.preset", ids)
        self.assertIn("lpj-numa-32.four-nodes", ids)
        cfg = mkiso.grub_cfg(TEMPLATE, [], menu)
        self.assertEqual(cfg.count("menuentry "), 1 + len(menu))
        self.assertIn("set default=hvprobe\n", cfg)
        # lpj=host is the booting host's, from a disk or Hyper-V's MSR.
        self.assertIn("menuentry 'lpj-numa-32.preset' --id "
                      "'lpj-numa-32.preset' {\n\tif [ -n \"$hvprobe_lpj\" ]",
                      cfg)
        self.assertNotIn("'lpj=host'", cfg)
        # The default entry boots the kernel's defaults.
        self.assertIn('menuentry "hvprobe" --id hvprobe {\n\tmultiboot2 '
                      '/boot/hvprobe.elf\n', cfg)
        # A disk's file can pick another entry.
        self.assertIn("search --no-floppy --file --set=hvprobe_choice "
                      f"/{media.CHOICE_FILE}", cfg)

    def test_cmdline_and_default(self):
        menu = [("a.b", ["test=smp"], {"vcpus": 2, "numa": 0,
                                       "mem_mib": 256})]
        cfg = mkiso.grub_cfg(TEMPLATE, ["hz=100", "it's"], menu, "a.b")
        self.assertIn("multiboot2 /boot/hvprobe.elf 'hz=100' 'it'\\''s'\n",
                      cfg)
        self.assertIn("set default='a.b'\n", cfg)
        self.assertNotIn("set default=hvprobe\n", cfg)
        with self.assertRaises(ValueError) as cm:
            mkiso.grub_cfg(TEMPLATE, [], menu, "nosuch")
        self.assertIn("no ISO entry 'nosuch' (entries: hvprobe, a.b)",
                      str(cm.exception))

    def test_index(self):
        menu = [("a.b", ["test=smp", "lpj=1"], {"vcpus": 16, "numa": 4,
                                                "mem_mib": 512})]
        doc = mkiso.index(["hz=100"], menu)
        self.assertEqual(doc["default"], "hvprobe")
        self.assertEqual(doc["entries"][0],
                         {"id": "hvprobe", "cmdline": "hz=100",
                          "hyperv_cmdline": "hz=100", "machine": None})
        self.assertEqual(doc["entries"][1]["cmdline"], "test=smp lpj=1")
        self.assertEqual(doc["entries"][1]["machine"]["numa"], 4)


class Entry(unittest.TestCase):
    def test_words_of_an_entry(self):
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "boot" / "hvprobe").mkdir(parents=True)
            doc = mkiso.index([], [("x.y", ["test=smp", "lpj=5"], {})])
            (Path(tmp) / "boot" / "hvprobe" / "scenarios.json").write_text(
                __import__("json").dumps(doc))
            self.assertEqual(guest.iso_entry_words("x.y", tmp),
                             ["test=smp", "lpj=5"])
            self.assertEqual(guest.iso_entry_words("hvprobe", tmp), [])
            with self.assertRaises(guest.CannotRun) as cm:
                guest.iso_entry_words("nope", tmp)
            self.assertIn("no entry 'nope'", str(cm.exception))


class ThreadEntries(unittest.TestCase):
    """The lpj thread's rows under every policy, for one ISO to give the
    table on a Hyper-V host."""

    ROWS = ("calibrating-16", "preset-16", "one-node-32", "four-nodes-32",
            "preset-32")
    POLICIES = ("hvprobe", "linux-6.1", "linux-6.5", "linux-6.12",
                "hv-preset")

    def test_every_row_under_every_policy(self):
        menu = {i: (w, m) for i, w, m in mkiso.entries()}
        for row in self.ROWS:
            for policy in self.POLICIES:
                self.assertIn(f"lpj-thread.{row}@{policy}", menu)
        self.assertEqual(len(mkiso.thread_entries()), 25)
        words, machine = menu["lpj-thread.four-nodes-32@linux-6.12"]
        self.assertEqual(words, ["test=smp,lpj", "hz=1000",
                                 "lpj_policy=linux-6.12",
                                 "bringup=linux-6.5"])
        self.assertEqual(machine, {"vcpus": 32, "numa": 4, "mem_mib": 512})
        words, machine = menu["lpj-thread.calibrating-16@hv-preset"]
        self.assertEqual(words, ["test=smp,lpj", "hz=250",
                                 "lpj_policy=hv-preset", "bringup=serial"])
        self.assertEqual(machine, {"vcpus": 16, "numa": 1, "mem_mib": 512})

    def test_preset_rows_take_the_booting_hosts_lpj(self):
        menu = {i: w for i, w, _ in mkiso.entries()}
        words = menu["lpj-thread.preset-32@linux-6.1"]
        self.assertIn("lpj=host", words)
        cfg = mkiso.grub_cfg(TEMPLATE, [], mkiso.entries())
        body = cfg.split("menuentry 'lpj-thread.preset-32@linux-6.1'")[1]
        body = body.split("\n}\n")[0]
        # A disk's hvprobe_lpj (tools/run: the host running QEMU), else
        # the rate the Hyper-V host states: never the build machine's.
        self.assertIn('if [ -n "$hvprobe_lpj" ]; then\n\t\tmultiboot2 '
                      "/boot/hvprobe.elf 'test=smp,lpj' 'hz=1000' "
                      "\"lpj=$hvprobe_lpj\" 'lpj_policy=linux-6.1' "
                      "'bringup=serial'\n\telse\n\t\tmultiboot2 "
                      "/boot/hvprobe.elf 'test=smp,lpj' 'hz=1000' "
                      "'lpj_source=hyperv' 'lpj_policy=linux-6.1' "
                      "'bringup=serial'\n\tfi\n\tboot", body)
        self.assertNotIn("'lpj=host'", cfg)
        self.assertNotRegex(cfg, r"'lpj=[0-9]")
        doc = mkiso.index([], mkiso.entries())
        entry = next(e for e in doc["entries"]
                     if e["id"] == "lpj-thread.preset-32@linux-6.1")
        self.assertEqual(entry["hyperv_cmdline"],
                         "test=smp,lpj hz=1000 lpj_source=hyperv "
                         "lpj_policy=linux-6.1 bringup=serial")

    def test_lpj_host_in_the_default_entry_is_refused(self):
        with self.assertRaises(ValueError) as cm:
            mkiso.grub_cfg(TEMPLATE, ["test=smp", "lpj=host"], [])
        self.assertIn("lpj=host in an ISO entry would be the build "
                      "machine's lpj", str(cm.exception))
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "boot").mkdir()
            (Path(tmp) / "boot" / "hvprobe.elf").write_bytes(b"")
            with self.assertRaises(SystemExit) as cm, \
                    contextlib.redirect_stderr(io.StringIO()) as err:
                mkiso.main(["--cmdline", "lpj=host", tmp,
                            str(Path(tmp) / "x.iso")])
            self.assertEqual(cm.exception.code, 2)
            self.assertIn("lpj=host in an ISO entry", err.getvalue())
            self.assertFalse((Path(tmp) / "boot" / "grub").exists())

    def test_choice_disk_carries_the_lpj(self):
        self.assertEqual(media.choice_text("a.b"), "set default='a.b'\n")
        self.assertEqual(media.choice_text("a.b", 4000000),
                         "set default='a.b'\nset hvprobe_lpj=4000000\n"
                         "export hvprobe_lpj\n")


class HypervScript(unittest.TestCase):
    """run-hvprobe.ps1 -Thread boots the ISO's thread entries: the script
    names each (read as text: no PowerShell here)."""

    SCRIPT = mkiso.ROOT / "tools" / "hyperv" / "run-hvprobe.ps1"

    def named_entries(self):
        text = self.SCRIPT.read_text()
        block = re.search(r"\$ThreadEntries = @\((.*?)\n\)", text, re.S)
        self.assertIsNotNone(block, "no $ThreadEntries list")
        return re.findall(r'"([^"]+)"', block.group(1))

    def test_names_every_thread_entry(self):
        self.assertEqual(self.named_entries(),
                         [i for i, _, _ in mkiso.thread_entries()])

    def test_boots_each_as_a_scenario(self):
        text = self.SCRIPT.read_text()
        self.assertRegex(text, r"foreach \(\$id in \$ThreadEntries\)")
        self.assertIn("-Scenario $id", text)
        self.assertIn("-Name $id", text)
