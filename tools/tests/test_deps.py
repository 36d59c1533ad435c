# SPDX-License-Identifier: MIT
"""tools/deps, with stand-ins for id and apt-get: as root it says what
apt will install before it installs anything, and with
HVPROBE_NO_INSTALL=1 it installs nothing: it prints the exact apt-get
line and stops."""

import os
import subprocess
import tempfile
import unittest
from pathlib import Path

from tools import TOOLS

FAKE_APT = """#!/bin/sh
case "$*" in
update*) ;;
*" -s "*) echo "Inst nosuchpkg (1 Debian)"; echo "Inst libpulled (2 Debian)";;
install*) echo "INSTALLED $*" >&2;;
esac
echo "$*" >> "$FAKE_APT_LOG"
"""


class Deps(unittest.TestCase):
    def deps(self, d, **env):
        bin_dir = Path(d)
        (bin_dir / "id").write_text("#!/bin/sh\necho 0\n")
        (bin_dir / "apt-get").write_text(FAKE_APT)
        for tool in bin_dir.iterdir():
            tool.chmod(0o755)
        environ = {k: v for k, v in os.environ.items()
                   if k != "HVPROBE_NO_INSTALL"}
        return subprocess.run(
            ["sh", str(TOOLS / "deps"), "nosuchcommand:nosuchpkg"],
            capture_output=True, text=True,
            env=dict(environ, PATH=f"{d}:{os.environ['PATH']}",
                     FAKE_APT_LOG=f"{d}/apt.log", **env))

    def test_says_what_it_installs_first(self):
        with tempfile.TemporaryDirectory() as d:
            done = self.deps(d)
        self.assertEqual(done.returncode, 0, done.stderr)
        said = done.stderr
        self.assertRegex(said, r"hvprobe: installing .*\bnosuchpkg\b")
        self.assertIn("apt-get will install: nosuchpkg libpulled", said)
        self.assertLess(said.index("will install"), said.index("INSTALLED"))

    def test_no_install_prints_the_line_and_stops(self):
        with tempfile.TemporaryDirectory() as d:
            done = self.deps(d, HVPROBE_NO_INSTALL="1")
            ran = Path(d, "apt.log").read_text() \
                if Path(d, "apt.log").exists() else ""
        self.assertEqual(done.returncode, 1, done.stderr)
        self.assertRegex(done.stderr, r"(?m)^    apt-get install -y -q "
                         r"--no-install-recommends .*\bnosuchpkg\b")
        self.assertIn("HVPROBE_NO_INSTALL", done.stderr)
        self.assertNotIn("INSTALLED", done.stderr)
        self.assertNotIn("install", ran)
        self.assertNotIn("update", ran)


if __name__ == "__main__":
    unittest.main()
