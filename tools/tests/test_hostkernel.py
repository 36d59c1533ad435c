# SPDX-License-Identifier: MIT
"""Host kernels: which Debian package, checked and unpacked, never
installed; module load order from the modules' own depends= fields; and
the L1 that boots them (its initramfs, job and QEMU command line)."""

import gzip
import hashlib
import io
import lzma
import os
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from tools.commands import run
from tools.lib import cli
from tools.lib.hostkernels import hostkernel, nested

MADISON = """\
linux-image-amd64 | 6.12.95-1~bpo12+1 | http://mirror bookworm-backports/main amd64 Packages
linux-image-amd64 |  6.1.192-3 | http://mirror bookworm-security/main amd64 Packages
linux-image-amd64 |  6.1.176-1 | http://mirror bookworm/main amd64 Packages
"""


def module(depends, name="x"):
    """The bytes of a module whose .modinfo says depends=..."""
    return (b"\x7fELF junk\0license=GPL\0depends=" + depends.encode()
            + b"\0retpoline=Y\0name=" + name.encode() + b"\0")


class Apt(unittest.TestCase):
    def test_newest_of_each_series(self):
        self.assertEqual(hostkernel.newest_in_series(MADISON, "6.1"),
                         "6.1.192-3")
        self.assertEqual(hostkernel.newest_in_series(MADISON, "6.12"),
                         "6.12.95-1~bpo12+1")
        self.assertIsNone(hostkernel.newest_in_series(MADISON, "6.6"))

    def test_image_package(self):
        show = ("Package: linux-image-amd64\nVersion: 6.1.192-3\n"
                "Depends: linux-image-6.1.0-57-amd64 (= 6.1.192-3)\n")
        self.assertEqual(hostkernel.image_package(show),
                         ("linux-image-6.1.0-57-amd64", "6.1.192-3"))
        self.assertEqual(hostkernel.image_package("Package: x\n"),
                         (None, None))

    def test_unknown_series_and_paths(self):
        with self.assertRaisesRegex(hostkernel.HostKernelError,
                                    "neither a Debian series"):
            hostkernel.resolve("5.10")
        with self.assertRaisesRegex(hostkernel.HostKernelError,
                                    "no such kernel image"):
            hostkernel.resolve("/nonexistent/bzImage")
        with self.assertRaisesRegex(hostkernel.HostKernelError,
                                    "goes with a kernel image"):
            hostkernel.resolve("6.1", modules="/tmp")


FAKE_APT = """\
#!/bin/sh
# apt-get and apt-cache as far as fetch_debian asks them.
case "$(basename "$0") $*" in
"apt-cache madison linux-image-amd64") cat "$FAKE/madison" ;;
"apt-cache show "*) printf 'Depends: linux-image-6.1.0-57-amd64 (= 6.1.192-3)\\n' ;;
"apt-get download --print-uris "*)
	printf "'http://m/$DEB' $DEB 4 SHA256:%s\\n" "$(cat "$FAKE/sha")" ;;
"apt-get download "*) cp "$FAKE/k.deb" "$DEB"; echo "$PWD" > "$FAKE/where"
	stat -c %a . > "$FAKE/mode"
	# _apt owns the folder: it can plant links where root unpacks.
	[ -z "$FAKE_PLANT" ] || ln -s "$FAKE/victim" tree ;;
*) exit 100 ;;
esac
"""
FAKE_DPKG = """\
#!/bin/sh
# dpkg-deb -x DEB DIR: a kernel tree, and a record that it ran.
mkdir -p "$3/boot" "$3/lib/modules/6.1.0-57-amd64/kernel"
echo image > "$3/boot/vmlinuz-6.1.0-57-amd64"
echo "$2" >> "$FAKE/unpacked"
echo "$2 $3" >> "$FAKE/args"
"""


class Fetch(unittest.TestCase):
    """fetch_debian with apt and dpkg-deb faked on PATH."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name)
        bin_dir = self.dir / "bin"
        bin_dir.mkdir()
        for name, text in (("apt-get", FAKE_APT), ("apt-cache", FAKE_APT),
                           ("dpkg-deb", FAKE_DPKG)):
            (bin_dir / name).write_text(text)
            (bin_dir / name).chmod(0o755)
        (self.dir / "madison").write_text(MADISON)
        (self.dir / "k.deb").write_bytes(b"deb!")
        env = {"PATH": f"{bin_dir}:{os.environ['PATH']}",
               "FAKE": str(self.dir),
               "DEB": "linux-image-6.1.0-57-amd64_6.1.192-3_amd64.deb"}
        self.env = mock.patch.dict(os.environ, env)
        self.env.start()
        self.cache = self.dir / "cache"

    def tearDown(self):
        self.env.stop()
        self.tmp.cleanup()

    def test_checked_unpacked_cached_in_a_private_folder(self):
        (self.dir / "sha").write_text(hashlib.sha256(b"deb!").hexdigest())
        kernel = hostkernel.fetch_debian("6.1", self.cache, log=lambda _: 0)
        self.assertEqual(kernel.release, "6.1.0-57-amd64")
        self.assertEqual(kernel.package, "linux-image-6.1.0-57-amd64")
        self.assertTrue(kernel.vmlinuz.is_relative_to(self.cache))
        # apt wrote into a folder only its owner may enter, now gone.
        where = Path((self.dir / "where").read_text().strip())
        self.assertTrue(where.is_relative_to(self.cache))
        self.assertFalse(where.exists())
        self.assertEqual(list(self.cache.glob(".apt-*")), [])
        # A second call finds it unpacked.
        hostkernel.fetch_debian("6.1", self.cache, log=lambda _: 0)
        self.assertEqual(len((self.dir / "unpacked").read_text().split()), 1)

    def test_a_file_that_is_not_apts_is_refused(self):
        (self.dir / "sha").write_text("0" * 64)
        with self.assertRaisesRegex(hostkernel.HostKernelError,
                                    "not the file apt's index names"):
            hostkernel.fetch_debian("6.1", self.cache, log=lambda _: 0)
        self.assertFalse((self.dir / "unpacked").exists())

    def test_apts_folder_is_never_unpacked_from_or_into(self):
        # As root, apt's sandbox user owns the folder it downloads into
        # and could swap the .deb after its check or plant a link where
        # it is unpacked: the file is taken into a folder of root's own,
        # checked as it is copied, and only the copy is unpacked.
        (self.dir / "sha").write_text(hashlib.sha256(b"deb!").hexdigest())
        (self.dir / "victim").mkdir()
        with mock.patch.dict(os.environ, {"FAKE_PLANT": "1"}):
            hostkernel.fetch_debian("6.1", self.cache, log=lambda _: 0)
        self.assertEqual(list((self.dir / "victim").iterdir()), [])
        where = Path((self.dir / "where").read_text().strip())
        deb, tree = map(Path, (self.dir / "args").read_text().split())
        for path in (deb, tree):
            self.assertFalse(path.is_relative_to(where), path)
            self.assertTrue(path.is_relative_to(self.cache), path)

    def test_private_folder_mode(self):
        (self.dir / "sha").write_text(hashlib.sha256(b"deb!").hexdigest())
        hostkernel.fetch_debian("6.1", self.cache, log=lambda _: 0)
        self.assertEqual((self.dir / "mode").read_text().strip(), "700")


class Modules(unittest.TestCase):
    def test_depends_field(self):
        self.assertEqual(hostkernel.depends(module("kvm,ccp")),
                         ["kvm", "ccp"])
        self.assertEqual(hostkernel.depends(module("")), [])
        self.assertEqual(hostkernel.depends(b"no modinfo"), [])

    def test_load_order_dependencies_first(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "lib/modules/6.12.0/kernel"
            (root / "arch").mkdir(parents=True)
            (root / "arch/kvm-amd.ko").write_bytes(module("kvm,ccp"))
            (root / "arch/kvm.ko").write_bytes(module("irqbypass"))
            (root / "irqbypass.ko.xz").write_bytes(
                lzma.compress(module("")))
            (root / "ccp.ko").write_bytes(module(""))
            (root / "9p.ko").write_bytes(module("netfs,9pnet"))
            (root / "9pnet.ko").write_bytes(module(""))
            # netfs is built in: no file, taken as present.
            order = hostkernel.load_order(root.parent, ("kvm_amd", "9p"))
            names = [hostkernel.module_name(p) for p in order]
            self.assertEqual(names, ["irqbypass", "kvm", "ccp", "kvm_amd",
                                     "9pnet", "9p"])
            self.assertEqual(hostkernel.module_bytes(order[0]), module(""))

    def test_loop_is_an_error(self):
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "a.ko").write_bytes(module("b"))
            (Path(tmp) / "b.ko").write_bytes(module("a"))
            with self.assertRaisesRegex(hostkernel.HostKernelError, "loop"):
                hostkernel.load_order(tmp, ("a",))


def read_cpio(data):
    """{name: (mode, bytes)} of a newc archive."""
    out, at = {}, 0
    while True:
        head = data[at:at + 110]
        assert head[:6] == b"070701", head[:6]
        f = [int(head[6 + 8 * i:14 + 8 * i], 16) for i in range(13)]
        mode, size, namesize = f[1], f[6], f[11]
        at += 110
        name = data[at:at + namesize - 1].decode()
        at += namesize
        at += -at % 4
        body = data[at:at + size]
        at += size
        at += -at % 4
        if name == "TRAILER!!!":
            return out
        out[name] = (mode, body)


class L1(unittest.TestCase):
    def test_l0_is_kvm_only_where_it_nests_a_stock_kernel(self):
        self.assertEqual(nested.choose_l0("kvm_intel", True).cpu,
                         "host,pmu=on")
        self.assertEqual(nested.choose_l0("kvm_pvm", True).accel, "tcg")
        self.assertEqual(nested.choose_l0(None, False).accel, "tcg")
        self.assertEqual(nested.choose_l0("kvm_amd", False).cpu, "max")

    def test_initramfs(self):
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            (tmp / "busybox").write_bytes(b"BB")
            (tmp / "kvm.ko").write_bytes(module(""))
            (tmp / "kvm-amd.ko").write_bytes(module("kvm"))
            kernel = hostkernel.HostKernel("6.1", tmp / "vmlinuz", tmp, "r")
            kernel.load = [tmp / "kvm.ko", tmp / "kvm-amd.ko"]
            with mock.patch.object(nested, "BUSYBOX", tmp / "busybox"), \
                    mock.patch.object(nested, "HOST", tmp):
                nested.initramfs(kernel, tmp / "i.gz")
            files = read_cpio(gzip.decompress((tmp / "i.gz").read_bytes()))
        self.assertEqual(files["bin/busybox"], (nested.EXE, b"BB"))
        self.assertEqual(files["init"][0], nested.EXE)
        self.assertTrue(files["init"][1].startswith(b"#!/bin/busybox sh\n"))
        self.assertEqual(files["modules/order"][1],
                         b"any kvm.ko\nkvm_amd kvm_amd.ko\n")
        self.assertEqual(files["vendors/kvm_amd"][1],
                         b"AuthenticAMD HygonGenuine")
        self.assertEqual(files["modules/kvm_amd.ko"][1], module("kvm"))

    def test_no_busybox_says_which_package(self):
        kernel = hostkernel.HostKernel("6.1", Path("v"), None, "r")
        with mock.patch.object(nested, "BUSYBOX", Path("/nonexistent/bb")):
            with self.assertRaisesRegex(nested.NestedError,
                                        "busybox-static"):
                nested.initramfs(kernel, Path("/nonexistent/out"))

    def test_job_records_each_status(self):
        script = nested.job_script([["tools/run", "--name", "a b"],
                                    ["true"]], Path("/r/l1"), {"K": "v w"})
        self.assertIn("export K='v w'\n", script)
        self.assertIn("{ tools/run --name 'a b' </dev/null; echo 0 $? >> "
                      "/r/l1/status.each; } 2>&1 | cat\n", script)
        self.assertIn("echo 1 $? >> /r/l1/status.each", script)

    def test_qemu_under_tcg(self):
        # The shares themselves: test_l1_shares.
        kernel = hostkernel.HostKernel("6.12", Path("/k/vmlinuz"), None, "r")
        argv = nested.qemu_argv(kernel, Path("/s/i.gz"), Path("/s"),
                                nested.choose_l0(None, False),
                                ro=[Path("/usr")])
        self.assertEqual(argv[argv.index("-accel") + 1], "tcg")
        self.assertEqual(argv[argv.index("-cpu") + 1], "max")
        self.assertIn("hvprobe.share=/s", argv[argv.index("-append") + 1])
        # QEMU's log of L1's resets, where a triple fault shows.
        self.assertEqual(argv[argv.index("-d") + 1], "cpu_reset")
        self.assertEqual(argv[argv.index("-D") + 1], "/s/l1/qemu.log")

    def test_a_share_with_spaces_is_refused(self):
        kernel = hostkernel.HostKernel("6.12", Path("/k/vmlinuz"), None, "r")
        with self.assertRaisesRegex(nested.NestedError, "spaces"), \
                mock.patch.object(nested, "exports", return_value=[]):
            nested.run(kernel, [], "/tmp/a b", 1, nested.choose_l0(None, 0))


class L1Ends(unittest.TestCase):
    """What nested.run() says of an L1 whose QEMU stopped before its
    commands did: here a fake QEMU that writes L1's own files for the
    first command and exits, as a guest that resets under -no-reboot."""

    def ended(self, qemu_log=None):
        """outcome.why_ended() of an L1 whose fake QEMU finished the first
        of two commands and exited 0, having logged qemu_log."""
        kernel = hostkernel.HostKernel("6.12", Path("/k/vmlinuz"), None, "r")
        with tempfile.TemporaryDirectory() as tmp:
            own = Path(tmp) / nested.L1_DIR
            fake = ["sh", "-c", f"echo '{{}}' > {own}/{nested.INFO}; "
                    f"echo 0 0 > {own}/{nested.STATUS}.each" +
                    (f"; printf '{qemu_log}' > {own}/{nested.QEMU_LOG}"
                     if qemu_log is not None else "")]

            def initramfs(kernel, out):
                Path(out).write_bytes(b"")
                return Path(out)
            with mock.patch.object(nested, "exports", return_value=[]), \
                    mock.patch.object(nested, "initramfs", initramfs), \
                    mock.patch.object(nested, "qemu_argv",
                                      return_value=fake), \
                    mock.patch.object(nested.owner, "hand_over"):
                outcome = nested.run(kernel, [["true"], ["true"]], tmp, 30,
                                     nested.choose_l0(None, False),
                                     stream=io.StringIO())
        self.assertEqual(outcome.statuses, [0, None])
        return outcome.why_ended()

    def test_an_l1_that_resets_says_qemu_exited(self):
        for log in (None, "CPU Reset (CPU 0)\nEIP=0000fff0\n"):
            self.assertRegex(self.ended(log),
                             r"^QEMU exited with status 0 after \d+ s, with "
                             r"no end marker: the guest reset or powered off")

    def test_an_l1_that_triple_faulted_says_so(self):
        # What QEMU 10's TCG logs under -d cpu_reset before it resets a
        # CPU that faulted delivering a double fault.
        self.assertRegex(self.ended("CPU Reset (CPU 1)\nTriple fault\n"),
                         r"^QEMU exited after \d+ s: L1 triple-faulted "
                         r"\(its QEMU's log: .*/l1/qemu.log\)$")


class L1Hangs(unittest.TestCase):
    """nested.Console.stopped(): an L1 whose QEMU used under 5 % of a
    CPU over L1_IDLE_S is hung; a busy one, or one idle for less, is
    not. The clock and the CPU reading are the test's."""

    def ask(self, samples):
        """stopped() at each (seconds, CPU seconds) of samples; the last
        answer and the console."""
        clock = iter([t for t, _ in samples])
        cpu = iter([c for _, c in samples])
        with tempfile.TemporaryDirectory() as tmp:
            console = nested.Console(tmp, "6.12", None,
                                     cpu_s=lambda pid: next(cpu))
            with mock.patch.object(nested.time, "monotonic",
                                   lambda: next(clock)):
                answers = [console.stopped() for _ in samples]
        return answers, console

    def test_an_idle_l1_is_hung_after_the_idle_time(self):
        step = nested.L1_IDLE_S / 4
        answers, console = self.ask([(i * step, 100.0 + i * 0.1)
                                     for i in range(6)])
        self.assertEqual(answers, [False] * 4 + [True, True])
        self.assertEqual(console.hung, "hung: its QEMU used 0.4 s of CPU in "
                         f"the last {nested.L1_IDLE_S} s")

    def test_a_busy_l1_or_one_idle_for_less_is_not(self):
        step = nested.L1_IDLE_S / 4
        busy = [(i * step, i * step * 0.9) for i in range(12)]
        # Busy for a while, then idle for three quarters of the time.
        paused = busy[:5] + [(t, busy[4][1]) for t, _ in busy[5:8]]
        for samples in (busy, paused):
            answers, console = self.ask(samples)
            self.assertEqual((any(answers), console.hung), (False, None))

    def test_the_cpu_of_a_process_from_proc(self):
        own = nested.process_cpu_s(os.getpid())
        self.assertGreater(own, 0.0)
        self.assertEqual(nested.process_cpu_s(2 ** 22 + 1), 0.0)


class RunInside(unittest.TestCase):
    def test_the_same_command_less_the_host_options(self):
        argv = ["--no-build", "--host-kernel", "6.12", "--results=x",
                "--scenario", "s", "--name", "n", "--", "--host-kernel"]
        self.assertEqual(cli.without_options(
            argv, ("--host-kernel", "--results", "--name"), ("--no-build",)),
            ["--scenario", "s", "--", "--host-kernel"])

    def test_tcg_and_host_modules_alone_are_usage_errors(self):
        for argv in (["--host-kernel", "6.1", "--accel", "tcg"],
                     ["--host-modules", "/tmp"]):
            with self.assertRaises(SystemExit) as exit_, \
                    mock.patch("sys.stderr", new=io.StringIO()) as err:
                run.parse_args(argv)
            self.assertEqual(exit_.exception.code, 2)
            self.assertIn("--host-", err.getvalue())


if __name__ == "__main__":
    unittest.main()


class CachedDebian(unittest.TestCase):
    """Where apt cannot say which kernel a series is (an L1, which sees
    the checkout's build/ but not apt's lists), the newest one already
    unpacked there is booted."""

    def test_newest_unpacked_of_the_series(self):
        with tempfile.TemporaryDirectory() as d:
            for name in ("linux-image-6.1.0-9-amd64_6.1.27-1",
                         "linux-image-6.1.0-57-amd64_6.1.192-3",
                         "linux-image-6.12.9+bpo-amd64_6.12.9-1~bpo12+1"):
                (Path(d) / name / "boot").mkdir(parents=True)
                (Path(d) / name / "boot" / "vmlinuz-x").write_text("")
                (Path(d) / name / "lib/modules/x").mkdir(parents=True)
            (Path(d) / "linux-image-6.1.0-99-amd64_6.1.999-1").mkdir()
            with mock.patch.object(hostkernel, "debian_package",
                                   side_effect=hostkernel.HostKernelError(
                                       "no apt source offers it")):
                k = hostkernel.fetch_debian("6.1", cache=d, log=lambda m: 0)
            self.assertIn("linux-image-6.1.0-57-amd64_6.1.192-3",
                          str(k.vmlinuz))
            self.assertIsNone(hostkernel.cached_debian("6.6", d))
