# SPDX-License-Identifier: MIT
"""One Debian package file, downloaded with apt and checked, never
installed: what make check's kunit row (Linux's kunit.py) and bench/'s
reference kernels unpack.

`apt-get download --print-uris PACKAGE` names the exact file apt would
fetch, its size and its SHA256, from the package index apt has already
checked against the archive's signed Release file. The download goes
into a folder of its own (mode 0700, made here): as root, apt fetches
as its sandbox user _apt, so that folder is handed to _apt and stays
closed to everyone else. _apt could still swap the file after a check,
or plant links in its folder, so nothing is checked or unpacked there:
the named file is opened once, without following links, and copied
from that one descriptor into the caller's folder, root's own (mode
0700, never _apt's), its size and SHA256 taken from the bytes copied;
only that copy is returned, and _apt's folder is removed.
"""

import hashlib
import os
import pwd
import re
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

TIMEOUT_S = 600
APT_USER = "_apt"
# 'URI' FILE SIZE SHA256:HEX, one line per file apt would fetch.
_URI = re.compile(r"^'(?P<uri>[^']+)' (?P<file>[\w.+~%-]+\.deb) "
                  r"(?P<size>\d+) SHA256:(?P<sha256>[0-9a-f]{64})$")


class AptError(Exception):
    """The package could not be had, or was not the file apt named."""


def available() -> bool:
    return bool(shutil.which("apt-get") and shutil.which("dpkg-deb"))


def _apt(argv, cwd=None) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(argv, cwd=cwd, capture_output=True, text=True,
                              errors="replace", timeout=TIMEOUT_S,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise AptError(f"{' '.join(argv)} took over {TIMEOUT_S} s") \
            from None
    except OSError as err:
        raise AptError(f"cannot run {argv[0]}: {err}") from None


def named_file(spec, print_uris) -> tuple[str, int, str]:
    """(file name, size, sha256) of spec's package (NAME or NAME=VERSION)
    in `apt-get download --print-uris` output; AptError unless it names
    exactly one .deb of that package."""
    name = spec.partition("=")[0]
    found = [m for m in map(_URI.match, print_uris.splitlines())
             if m and m.group("file").startswith(f"{name}_")]
    if len(found) != 1:
        raise AptError(f"apt-get download --print-uris {spec} named "
                       f"{len(found)} files of {name}, not one")
    m = found[0]
    return m.group("file"), int(m.group("size")), m.group("sha256")


def private_dir(parent) -> Path:
    """A new folder under parent that only this process's user may
    enter (mode 0700; as root, root's alone): where download() leaves
    the checked file and the caller unpacks it."""
    Path(parent).mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=".apt-", dir=parent))  # mode 0700


def _apt_dir(parent) -> Path:
    """A new folder under parent for apt to download into: as root,
    handed to apt's sandbox user, closed to everyone else."""
    work = tempfile.mkdtemp(prefix=".apt-in-", dir=parent)  # mode 0700
    if os.geteuid() == 0:
        try:
            os.chown(work, pwd.getpwnam(APT_USER).pw_uid, -1)
        except KeyError:
            pass        # no sandbox user: apt downloads as root
    return Path(work)


def download(spec, work) -> Path:
    """spec's .deb, checked, in work (a private_dir() of this user's
    own): apt downloads it into a folder of its own beside work, and the
    file is copied out of it from one descriptor as it is checked (the
    module's docstring). Returns the copy's path."""
    listed = _apt(["apt-get", "download", "--print-uris", "-q", spec])
    if listed.returncode:
        why = (listed.stderr.strip().splitlines() or ["no package"])[-1]
        raise AptError(f"apt-get download {spec} failed: {why}")
    name, size, sha256 = named_file(spec, listed.stdout)
    inbox = _apt_dir(Path(work).parent)
    try:
        got = _apt(["apt-get", "download", "-q", spec], cwd=inbox)
        try:
            if got.returncode:
                raise OSError
            fd = os.open(inbox / name,
                         os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            why = (got.stderr.strip().splitlines() or [f"no {name}"])[-1]
            raise AptError(f"apt-get download {spec} failed: {why}") \
                from None
        with os.fdopen(fd, "rb") as f:
            copied, digest = _copy_checked(f, Path(work) / name, size)
    finally:
        shutil.rmtree(inbox, ignore_errors=True)
    if copied != size or digest != sha256:
        (Path(work) / name).unlink(missing_ok=True)
        raise AptError(f"{name} is not the file apt's index names "
                       f"(size {size}, SHA256 {sha256[:16]}...)")
    return Path(work) / name


def _copy_checked(f, to, size) -> tuple[int, str]:
    """Copy the regular file open as f to the new file to, at most
    size + 1 bytes: (bytes copied, their SHA256); (-1, "") for a file
    that is not a regular file."""
    if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
        return -1, ""
    digest = hashlib.sha256()
    copied = 0
    out = os.open(to, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                  0o600)
    with os.fdopen(out, "wb") as g:
        while copied <= size:
            block = f.read(min(1 << 20, size + 1 - copied))
            if not block:
                break
            copied += len(block)
            digest.update(block)
            g.write(block)
    return copied, digest.hexdigest()
