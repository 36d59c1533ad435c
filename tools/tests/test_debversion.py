# SPDX-License-Identifier: MIT
"""Of several kernels, the newest by Debian's version order
(deb-version(7)), where a string sort or a sort of the numbers in the
name picks another: 6.1.0-10 after 6.1.0-9, 6.1.123-1 after
6.1.123-1~bpo12+1."""

import tempfile
import unittest
from pathlib import Path

from bench.lib import linuxref
from tools.lib.base import debversion
from tools.lib.hostkernels import hostkernel


class Order(unittest.TestCase):
    def test_pairs(self):
        for older, newer in (("6.1.0-9", "6.1.0-10"),
                             ("6.1.123-1~bpo12+1", "6.1.123-1"),
                             ("6.12.9-1~bpo12+1", "6.12.10-1~bpo12+1"),
                             ("2.0", "1:1.0"), ("1.0~rc1", "1.0"),
                             ("1.0", "1.0a"), ("1.0a", "1.0+"),
                             ("1.0", "1.0.0"), ("6.1.0-9-amd64",
                                                "6.1.0-10-amd64")):
            self.assertEqual(debversion.compare(older, newer), -1,
                             (older, newer))
            self.assertEqual(debversion.compare(newer, older), 1)
        self.assertEqual(debversion.compare("1.0", "1.0-0"), 0)
        self.assertEqual(debversion.newest(["6.1.0-9", "6.1.0-10",
                                            "6.1.0-2"]), "6.1.0-10")
        self.assertIsNone(debversion.newest([]))


def tree(folder, release="x", image="vmlinuz-x"):
    (Path(folder) / "boot").mkdir(parents=True, exist_ok=True)
    (Path(folder) / "boot" / image).write_text("")
    (Path(folder) / "lib/modules" / release).mkdir(parents=True)


class Choosers(unittest.TestCase):
    def test_apt_lists_an_older_version_first(self):
        madison = ("linux-image-amd64 | 6.1.0-9 | http://m a/main amd64\n"
                   "linux-image-amd64 | 6.1.0-10 | http://m b/main amd64\n")
        self.assertEqual(hostkernel.newest_in_series(madison, "6.1"),
                         "6.1.0-10")
        self.assertEqual(linuxref.backport_versions(
            madison.replace("amd64 |", "cloud-amd64 |"), "6.1"),
            ["6.1.0-10", "6.1.0-9"])

    def test_a_cached_backport_is_older_than_its_release(self):
        with tempfile.TemporaryDirectory() as d:
            for name in ("linux-image-6.1.0-28-amd64_6.1.123-1",
                         "linux-image-6.1.0-28-amd64_6.1.123-1~bpo12+1"):
                tree(Path(d) / name)
            self.assertEqual(hostkernel.cached_debian("6.1", d),
                             ("linux-image-6.1.0-28-amd64", "6.1.123-1"))

    def test_own_modules_folder_with_two_releases(self):
        with tempfile.TemporaryDirectory() as d:
            (Path(d) / "bzImage").write_text("")
            tree(Path(d) / "mods", "6.1.0-9-amd64")
            tree(Path(d) / "mods", "6.1.0-10-amd64")
            k = hostkernel.own_build(Path(d) / "bzImage", Path(d) / "mods")
        self.assertEqual(k.release, "6.1.0-10-amd64")

    def test_bench_unpacked_images(self):
        with tempfile.TemporaryDirectory() as d:
            (Path(d) / "boot").mkdir()
            for name in ("vmlinuz-6.1.0-10~rc99-cloud-amd64",
                         "vmlinuz-6.1.0-10-cloud-amd64",
                         "vmlinuz-6.1.0-9-cloud-amd64"):
                (Path(d) / "boot" / name).write_text("")
            self.assertEqual(linuxref.find_series("6.1", d).name,
                             "vmlinuz-6.1.0-10-cloud-amd64")


if __name__ == "__main__":
    unittest.main()
