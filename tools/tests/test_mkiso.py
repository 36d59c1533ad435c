# SPDX-License-Identifier: MIT
"""tools/mkiso's grub.cfg: the default entry with the command line given,
one entry per shipped scenario with that scenario's, the entry a disk or
--default picks; and tools/run's pick of an entry by a disk."""

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
        # lpj=host becomes the build host's lpj: the kernel takes numbers.
        self.assertRegex(cfg, "menuentry 'lpj-numa-32.preset' --id "
                         "'lpj-numa-32.preset' {\n\tmultiboot2 /boot/hvprobe.elf"
                         " 'test=smp,lpj' 'lpj_reuse=node' 'hz=1000' 'lpj=[1-9][0-9]*'\n")
        self.assertNotIn("lpj=host", cfg)
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
                          "machine": None})
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
