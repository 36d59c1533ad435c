# SPDX-License-Identifier: MIT
""".ci/run's pieces: the backports entry made from the machine's own apt
sources, and a tree that names no package archive."""

import re
import subprocess
import tempfile
import unittest
from pathlib import Path

from tools import ROOT

BACKPORTS = ROOT / ".ci" / "backports"


def backports(**files):
    with tempfile.TemporaryDirectory() as d:
        paths = []
        for name, text in files.items():
            path = Path(d) / name.replace("_", ".")
            path.write_text(text)
            paths.append(str(path))
        done = subprocess.run(["sh", str(BACKPORTS), *paths],
                              capture_output=True, text=True)
        return done.returncode, done.stdout


class Backports(unittest.TestCase):
    def test_from_a_deb822_entry_with_its_key(self):
        rc, out = backports(debian_sources=(
            "Types: deb\n# a comment\nURIs: http://mirror.invalid/debian\n"
            "Suites: bookworm bookworm-updates\nComponents: main\n"
            "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\n"
            "Types: deb\nURIs: http://mirror.invalid/debian-security\n"
            "Suites: bookworm-security\nComponents: main\n"))
        self.assertEqual((rc, out), (0,
            "Types: deb\nURIs: http://mirror.invalid/debian\n"
            "Suites: bookworm-backports\nComponents: main\n"
            "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n"))

    def test_from_a_one_line_list(self):
        rc, out = backports(sources_list=(
            "deb-src http://src.invalid/debian bookworm main\n"
            "deb [arch=amd64 signed-by=/k.gpg] http://proxy.invalid:3142/debian bookworm main\n"))
        self.assertEqual(rc, 0)
        self.assertIn("URIs: http://proxy.invalid:3142/debian\n", out)
        self.assertIn("Signed-By: /k.gpg\n", out)

    def test_the_security_suite_alone_is_not_enough(self):
        rc, out = backports(sources_list="deb http://m.invalid/d bookworm-security main\n")
        self.assertEqual((rc, out), (1, ""))


class NoArchiveHost(unittest.TestCase):
    def test_no_package_archive_is_named(self):
        files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                               check=True).stdout.decode().split("\0")
        host = re.compile(r"\b[\w.-]*debian\.(?:org|net)\b|\bubuntu\.com\b|"
                          r"\bpackages\.[\w-]+\.(?:com|org)\b")
        named = []
        for name in filter(None, files):
            path = ROOT / name
            if not path.is_file():
                continue
            text = path.read_bytes().decode(errors="replace")
            named += [f"{name}: {m.group(0)}" for m in host.finditer(text)]
        self.assertEqual(named, [])


if __name__ == "__main__":
    unittest.main()
