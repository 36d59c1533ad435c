# SPDX-License-Identifier: MIT
"""What L1 sees of this machine: the folders its job needs, read-only
(/usr, the top-level bin and lib folders that are folders, this
Python's prefix, the checkout and the repository a worktree names),
never all of / (/root, /etc/shadow, /dev); a copy of a few /etc files
the job's programs read; the results folder read-write with
security_model=mapped-xattr, so that L1's root makes no real setuid
file or device node in the user's tree. The machine is a folder of
files here, never the real one."""

import gzip
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from tools.lib.hostkernels import hostkernel, nested
from tools.tests.test_hostkernel import read_cpio


def fake_host(tmp):
    """A merged-/usr machine with a non-merged /lib64, a Python under
    /root, and /etc with secrets in it."""
    host = Path(tmp) / "host"
    for d in ("usr/bin", "usr/lib", "usr/sbin", "lib64", "root/py",
              "etc/ld.so.conf.d", "etc/alternatives", "home/u", "srv/c"):
        (host / d).mkdir(parents=True)
    for link in ("bin", "sbin", "lib"):
        (host / link).symlink_to(f"usr/{link}")
    (host / "etc/shadow").write_text("root:$6$secret:::\n")
    (host / "etc/passwd").write_text("root:x:0:0::/root:/bin/sh\n")
    (host / "etc/ld.so.cache").write_bytes(b"glibc-ld.so.cache1.1")
    (host / "etc/ld.so.conf.d/x.conf").write_text("/usr/lib/x\n")
    (host / "etc/alternatives/awk").symlink_to("/usr/bin/mawk")
    (host / "etc/os-release").symlink_to("../usr/lib/os-release")
    return host


class Exports(unittest.TestCase):
    def test_what_the_job_needs_and_no_more(self):
        with tempfile.TemporaryDirectory() as tmp:
            host = fake_host(tmp)
            checkout = host / "srv/c"
            got = nested.exports(checkout, host, (str(host / "root/py"),))
            self.assertEqual(got, [host / "lib64", host / "root/py",
                                   checkout, host / "usr"])
            for secret in (host, host / "root", host / "etc", host / "home"):
                self.assertNotIn(secret, got)

    def test_a_checkout_inside_an_export_is_not_shared_twice(self):
        with tempfile.TemporaryDirectory() as tmp:
            host = fake_host(tmp)
            got = nested.exports(host / "usr/src/c", host, ())
            self.assertEqual(got, [host / "lib64", host / "usr"])

    def test_a_worktrees_repository_is_shared(self):
        with tempfile.TemporaryDirectory() as tmp:
            host = fake_host(tmp)
            repo = host / "home/u/main/.git"
            (repo / "worktrees/c").mkdir(parents=True)
            (repo / "worktrees/c/commondir").write_text("../..\n")
            (host / "srv/c/.git").write_text(
                f"gitdir: {repo}/worktrees/c\n")
            got = nested.exports(host / "srv/c", host, ())
            self.assertIn(repo, got)
            self.assertNotIn(host / "home/u", got)


class Skeleton(unittest.TestCase):
    def test_links_and_a_few_etc_files(self):
        with tempfile.TemporaryDirectory() as tmp:
            host = fake_host(tmp)
            files = nested.skeleton(host)
        link = 0o120777
        self.assertEqual(files["skel/bin"], (link, b"usr/bin"))
        self.assertEqual(files["skel/etc/passwd"][1],
                         b"root:x:0:0::/root:/bin/sh\n")
        self.assertEqual(files["skel/etc/ld.so.cache"][1],
                         b"glibc-ld.so.cache1.1")
        self.assertEqual(files["skel/etc/ld.so.conf.d/x.conf"][1],
                         b"/usr/lib/x\n")
        self.assertEqual(files["skel/etc/alternatives/awk"],
                         (link, b"/usr/bin/mawk"))
        self.assertEqual(files["skel/etc/os-release"],
                         (link, b"../usr/lib/os-release"))
        self.assertNotIn("skel/etc/shadow", files)
        self.assertNotIn("skel/lib64", files)

    def test_in_the_initramfs(self):
        with tempfile.TemporaryDirectory() as tmp:
            host = fake_host(tmp)
            tmp = Path(tmp)
            (tmp / "busybox").write_bytes(b"BB")
            kernel = hostkernel.HostKernel("6.1", tmp / "vmlinuz", tmp, "r")
            kernel.load = []
            with mock.patch.object(nested, "BUSYBOX", tmp / "busybox"), \
                    mock.patch.object(nested, "HOST", host):
                nested.initramfs(kernel, tmp / "i.gz")
            files = read_cpio(gzip.decompress((tmp / "i.gz").read_bytes()))
        self.assertIn("skel/etc/passwd", files)
        self.assertNotIn("skel/etc/shadow", files)


class Readable(unittest.TestCase):
    def test_plain_modes_after_l1(self):
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            (tmp / "run").mkdir(mode=0o700)
            for name, mode in (("results.json", 0o600), ("x", 0o4755)):
                (tmp / "run" / name).write_text("{}")
                (tmp / "run" / name).chmod(mode)
            nested.readable(tmp)
            self.assertEqual((tmp / "run").stat().st_mode & 0o7777, 0o755)
            for name in ("results.json", "x"):
                self.assertEqual((tmp / "run" / name).stat().st_mode
                                 & 0o7777, 0o644)


class Qemu(unittest.TestCase):
    def argv(self):
        kernel = hostkernel.HostKernel("6.12", Path("/k/vmlinuz"), None, "r")
        return nested.qemu_argv(kernel, Path("/s/i.gz"), Path("/s"),
                                nested.choose_l0(None, False),
                                ro=[Path("/usr"), Path("/c")])

    def test_shares(self):
        argv = self.argv()
        shares = [argv[i + 1] for i, a in enumerate(argv) if a == "-virtfs"]
        self.assertEqual(shares, [
            "local,path=/usr,mount_tag=ro0,security_model=none,"
            "multidevs=remap,readonly=on",
            "local,path=/c,mount_tag=ro1,security_model=none,"
            "multidevs=remap,readonly=on",
            "local,path=/s,mount_tag=share,security_model=mapped-xattr"])
        self.assertNotIn("path=/,", " ".join(shares))
        cmdline = argv[argv.index("-append") + 1]
        self.assertIn("hvprobe.ro=/usr,/c", cmdline.split())

    def test_l1_writes_into_the_folder_it_is_given(self):
        # Two L1 boots in one share (the referee matrix's host kernels)
        # each keep their own console, statuses and facts.
        kernel = hostkernel.HostKernel("6.12", Path("/k/vmlinuz"), None, "r")
        argv = nested.qemu_argv(kernel, Path("/s/i.gz"), Path("/s"),
                                nested.choose_l0(None, False),
                                ro=[Path("/usr")], own_dir="l1-6.12")
        self.assertIn("hvprobe.own=l1-6.12",
                      argv[argv.index("-append") + 1].split())
        self.assertNotIn("/l1/", nested.INIT)
        for path in ('"/share/$own/l1.json"', '"/share/$own/status"',
                     '"$share/$own/job.sh"'):
            self.assertIn(path, nested.INIT)

    def test_l1_that_breaks_ends_its_run(self):
        # L1's own kernel locking up ends the run at once; the same words
        # in its job's output (a guest's console quoted) do not.
        with tempfile.TemporaryDirectory() as tmp:
            console = nested.Console(Path(tmp), "6.1", None)
            self.assertFalse(console.line(
                b"", "NOT RUN  6.1: ... last lines: [   5.1] Kernel panic - "
                "not syncing: x", 1.0))
            self.assertFalse(console.line(b"", "[   26.692192] kvm [153]: "
                                          "vcpu0, Unhandled WRMSR", 1.0))
            self.assertIsNone(console.broken)
            self.assertTrue(console.line(
                b"", "[  524.966144] watchdog: BUG: soft lockup - CPU#1 "
                "stuck for 26s! [khugepaged:36]", 2.0))
            self.assertEqual(console.broken, "watchdog: BUG: soft lockup - "
                             "CPU#1 stuck for 26s! [khugepaged:36]")

    def test_a_comma_in_a_path_is_refused(self):
        kernel = hostkernel.HostKernel("6.12", Path("/k/vmlinuz"), None, "r")
        with self.assertRaisesRegex(nested.NestedError, "comma"):
            nested.qemu_argv(kernel, Path("/s/i.gz"), Path("/s"),
                             nested.choose_l0(None, False),
                             ro=[Path("/a,b")])

    def test_init_splits_without_globbing(self):
        # The command line's words are split unquoted: a * in a path
        # must not expand to the initramfs's files.
        init = nested.INIT
        self.assertLess(init.index("set -f"), init.index("$(cat /proc/cmdline)"))
        self.assertNotIn("hostroot", init)
        self.assertNotIn("mount --bind /host /rootfs", init)


if __name__ == "__main__":
    unittest.main()
