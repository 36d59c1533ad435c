# SPDX-License-Identifier: MIT
"""tools/entry.py: every command is a link to it and runs the module its
path names; what a command raises becomes a message and an exit status;
and no other file touches the module search path."""

import contextlib
import io
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from tools import ROOT, entry
from tools.lib.checks import python
from tools.lib import cli

COMMANDS = {
    "bench/boot-time": "bench.commands.boot_time",
    "bench/linux-bringup": "bench.commands.linux_bringup",
    "bench/smp": "bench.commands.smp",
    "bench/thread-table": "bench.commands.thread_table",
    "tools/check": "tools.commands.check",
    "tools/compare": "tools.commands.compare",
    "tools/host-cancel-probe": "tools.commands.host_cancel_probe",
    "tools/layering": "tools.commands.layering",
    "tools/linux-referee": "tools.commands.linux_referee",
    "tools/mkiso": "tools.commands.mkiso",
    "tools/lava/run": "tools.commands.lava_run",
    "tools/plot": "tools.commands.plot",
    "tools/pmi-verdict": "tools.commands.pmi_verdict",
    "tools/report": "tools.commands.report",
    "tools/run": "tools.commands.run",
    "tools/soak": "tools.commands.soak",
}


class Dispatch(unittest.TestCase):
    def test_every_link_names_its_module(self):
        self.assertEqual(sorted(entry.commands()), sorted(COMMANDS))
        for command, module in COMMANDS.items():
            with self.subTest(command=command):
                self.assertEqual(entry.command_for(str(ROOT / command)),
                                 (command, module))
                # As make and a shell in the checkout run it.
                with contextlib.chdir(ROOT):
                    self.assertEqual(entry.command_for(command)[1], module)
                self.assertTrue(callable(
                    __import__(module, fromlist=["main"]).main))

    def test_a_link_from_elsewhere(self):
        with tempfile.TemporaryDirectory() as tmp:
            link = Path(tmp) / "hvrun"
            link.symlink_to(ROOT / "tools" / "run")
            self.assertEqual(entry.command_for(str(link)),
                             ("tools/run", "tools.commands.run"))
            (Path(tmp) / "other").symlink_to(ROOT / "tools" / "entry.py")
            with self.assertRaisesRegex(entry.NoCommand, "tools/run"):
                entry.command_for(str(Path(tmp) / "other"))

    def test_not_a_command(self):
        for path in (ROOT / "tools" / "entry.py", Path("/usr/bin/true")):
            with self.subTest(path=path), \
                    self.assertRaisesRegex(entry.NoCommand, "not a command"):
                entry.command_for(str(path))

    def test_the_links_run(self):
        for command in ("tools/report", "bench/smp", "tools/lava/run"):
            with self.subTest(command=command):
                done = subprocess.run([str(ROOT / command), "--help"],
                                      capture_output=True, text=True,
                                      cwd="/", timeout=60)
                self.assertEqual(done.returncode, 0, done.stderr)
                self.assertIn(f"usage: {command}", done.stdout)
        done = subprocess.run([sys.executable, "tools/report", "/nonexistent"],
                              capture_output=True, text=True, cwd=ROOT,
                              timeout=60)
        self.assertEqual(done.returncode, 1)
        self.assertIn("tools/report: /nonexistent: no such file",
                      done.stderr)
        self.assertNotIn("Traceback", done.stderr)
        done = subprocess.run([str(ROOT / "tools" / "entry.py")],
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(done.returncode, 2)
        self.assertIn("not a command", done.stderr)


class Fails(Exception):
    pass


class Command:
    """A command module's face: main, and what its errors mean."""
    EXITS = {Fails: 3}

    def __init__(self, raises=None, prog=None):
        self.raises = raises
        if prog:
            self.PROG = prog

    def main(self, argv):
        if self.raises:
            raise self.raises
        return len(argv)


class Call(unittest.TestCase):
    def call(self, module, argv=()):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            status = entry.call(module, "tools/x", list(argv))
        return status, err.getvalue()

    def test_status_and_errors(self):
        self.assertEqual(self.call(Command(), ["a", "b"]), (2, ""))
        self.assertEqual(self.call(Command(Fails("no QEMU"))),
                         (3, "tools/x: no QEMU\n"))
        self.assertEqual(self.call(Command(KeyboardInterrupt(), "probe")),
                         (130, "probe: interrupted\n"))
        # A bug: its traceback and its own status, never 1 ("a run
        # failed").
        status, said = self.call(Command(ValueError("a bug")))
        self.assertEqual(status, entry.EXIT_INTERNAL_ERROR)
        self.assertIn("ValueError: a bug", said)
        self.assertTrue(said.endswith("tools/x: internal error (a bug in "
                                      "hvprobe's tools; the traceback "
                                      "above says where)\n"), said)

    def test_reader_gone(self):
        saved = sys.stdout
        try:
            self.assertEqual(self.call(Command(BrokenPipeError())), (0, ""))
        finally:
            if sys.stdout is not saved:
                sys.stdout.close()
            sys.stdout = saved


class OnePlace(unittest.TestCase):
    def test_only_the_entry_touches_the_path(self):
        needle = "sys." + "path"
        found = []
        for top in ("tools", "bench", "tests"):
            for path in (ROOT / top).rglob("*"):
                if not path.is_file() or path.is_symlink() or \
                        "__pycache__" in path.parts:
                    continue
                first = path.read_bytes()[:80].split(b"\n")[0]
                if path.suffix != ".py" and not (first.startswith(b"#!")
                                                 and b"python" in first):
                    continue
                if needle in path.read_text(errors="replace"):
                    found.append(path.relative_to(ROOT).as_posix())
        self.assertEqual(found, ["tools/entry.py"])
        self.assertTrue(os.access(ROOT / "tools" / "entry.py", os.X_OK))


class Build(unittest.TestCase):
    """tools/lib/cli.py's build(): one way every command runs make."""

    def test_built_and_failed(self):
        with tempfile.TemporaryDirectory() as d, \
                tempfile.TemporaryDirectory() as out:
            (Path(d) / "Makefile").write_text("all:\n\t@true\n")
            self.assertIsNone(cli.build(d))
            (Path(d) / "Makefile").write_text("all:\n\t@exit 2\n")
            # make's own complaint is expected here: keep it off the
            # terminal of whoever runs the tests.
            with python.fds_into(Path(out) / "make.log"):
                failed = cli.build(d)
            self.assertEqual(failed, "build failed (make -s exited 2)")
            self.assertIn("Error 2", (Path(out) / "make.log").read_text())


class BuildAsRoot(unittest.TestCase):
    @unittest.skipUnless(os.geteuid() == 0, "needs root")
    def test_files_belong_to_the_tree_s_owner(self):
        with tempfile.TemporaryDirectory() as d:
            os.chmod(d, 0o755)
            (Path(d) / "Makefile").write_text("all:\n\t@touch built\n")
            os.chown(d, 65534, 65534)
            self.assertIsNone(cli.build(d))
            self.assertEqual(os.stat(Path(d) / "built").st_uid, 65534)


if __name__ == "__main__":
    unittest.main()
