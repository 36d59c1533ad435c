# SPDX-License-Identifier: MIT
"""One Debian package file, downloaded with apt and checked, never
installed: what make check's kunit row (Linux's kunit.py) and bench/'s
reference kernels unpack.

`apt-get download --print-uris PACKAGE` names the exact file apt would
fetch, its size and its SHA256, from the package index apt has already
checked against the archive's signed Release file. The download goes
into a private folder (mode 0700, made here): as root, apt fetches as
its sandbox user _apt, so the folder is handed to _apt and stays closed
to everyone else; nobody can plant a file there. Only the named file is
taken, and only once its size and SHA256 match.
"""

import hashlib
import os
import pwd
import re
import shutil
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


def sha256_of(path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def private_dir(parent) -> Path:
    """A new folder under parent that only this process (and, as root,
    apt's download user) may enter."""
    Path(parent).mkdir(parents=True, exist_ok=True)
    work = tempfile.mkdtemp(prefix=".apt-", dir=parent)     # mode 0700
    if os.geteuid() == 0:
        try:
            os.chown(work, pwd.getpwnam(APT_USER).pw_uid, -1)
        except KeyError:
            pass        # no sandbox user: apt downloads as root
    return Path(work)


def download(spec, work) -> Path:
    """spec's .deb, downloaded into the private folder work and checked:
    its path."""
    listed = _apt(["apt-get", "download", "--print-uris", "-q", spec])
    if listed.returncode:
        why = (listed.stderr.strip().splitlines() or ["no package"])[-1]
        raise AptError(f"apt-get download {spec} failed: {why}")
    name, size, sha256 = named_file(spec, listed.stdout)
    got = _apt(["apt-get", "download", "-q", spec], cwd=work)
    deb = Path(work) / name
    if got.returncode or not deb.is_file() or deb.is_symlink():
        why = (got.stderr.strip().splitlines() or [f"no {name}"])[-1]
        raise AptError(f"apt-get download {spec} failed: {why}")
    if deb.stat().st_size != size or sha256_of(deb) != sha256:
        raise AptError(f"{name} is not the file apt's index names "
                       f"(size {size}, SHA256 {sha256[:16]}...)")
    return deb


def owned_like(path, ref) -> None:
    """As root, give path and all under it to ref's owner (the checkout's
    user), so that a build as root leaves no root-owned files in a user's
    tree; nothing otherwise, or when ref is root's."""
    if os.geteuid() != 0:
        return
    st = os.stat(ref)
    if st.st_uid == 0:
        return
    for top, dirs, files in os.walk(path):
        for name in [top] + [os.path.join(top, n) for n in dirs + files]:
            os.lchown(name, st.st_uid, st.st_gid)
