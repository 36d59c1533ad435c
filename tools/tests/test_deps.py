# SPDX-License-Identifier: MIT
"""tools/deps, with stand-ins for id and apt-get: as root it says what
apt will install before it installs anything."""

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
"""


class Deps(unittest.TestCase):
    def test_says_what_it_installs_first(self):
        with tempfile.TemporaryDirectory() as d:
            bin_dir = Path(d)
            (bin_dir / "id").write_text("#!/bin/sh\necho 0\n")
            (bin_dir / "apt-get").write_text(FAKE_APT)
            for tool in bin_dir.iterdir():
                tool.chmod(0o755)
            done = subprocess.run(
                ["sh", str(TOOLS / "deps"), "nosuchcommand:nosuchpkg"],
                capture_output=True, text=True,
                env=dict(os.environ, PATH=f"{d}:{os.environ['PATH']}"))
        self.assertEqual(done.returncode, 0, done.stderr)
        said = done.stderr
        self.assertRegex(said, r"hvprobe: installing .*\bnosuchpkg\b")
        self.assertIn("apt-get will install: nosuchpkg libpulled", said)
        self.assertLess(said.index("will install"), said.index("INSTALLED"))


if __name__ == "__main__":
    unittest.main()
