# SPDX-License-Identifier: MIT
"""What a root run makes in a user's checkout is the user's: a root-owned
results/ or build/kvm-probe.json would refuse the user's next run (no
new run folder, no cache). As root, and only inside the checkout, each
folder and file a run makes goes to the checkout's owner; a checkout
that is root's own, and every run that is not root's, keep what they
make as it is."""

import os
from pathlib import Path

from ... import ROOT

CHECKOUT = ROOT


def _owner_of(path) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_uid, st.st_gid


def _inside_checkout(path: Path) -> bool:
    real = Path(os.path.realpath(path.parent)) / path.name
    return real.is_relative_to(os.path.realpath(CHECKOUT))


def hand_over(path, recursive=False) -> None:
    """As root, give path (a link itself, not what it names; with
    recursive, all under it too) to the checkout's owner, when path is
    inside the checkout and that owner is not root. A file system that
    refuses (a 9p share, a read-only one) keeps its owner, and so does
    a file with another name elsewhere (a hard link is not the run's to
    give: it may name /etc/shadow)."""
    path = Path(path)
    if os.geteuid() != 0 or not _inside_checkout(path):
        return
    uid, gid = _owner_of(CHECKOUT)
    if uid == 0:
        return
    names = [path]
    if recursive and path.is_dir() and not path.is_symlink():
        for top, dirs, files in os.walk(path):
            names += [Path(top, n) for n in dirs + files]
    for name in names:
        try:
            st = os.lstat(name)
            if not os.path.isdir(name) and st.st_nlink > 1:
                continue
            os.lchown(name, uid, gid)
        except OSError:
            pass


def make_dirs(path) -> None:
    """mkdir -p path, each folder it makes handed over."""
    path = Path(path)
    missing = []
    here = path
    while not here.exists() and here != here.parent:
        missing.append(here)
        here = here.parent
    path.mkdir(parents=True, exist_ok=True)
    for folder in reversed(missing):
        hand_over(folder)
