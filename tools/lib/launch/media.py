# SPDX-License-Identifier: MIT
"""Boot media for the firmware paths: a per-run GRUB CD carrying the
run's kernel command line, a disk that picks one of the ISO's own
entries, and a private copy of OVMF's variable store.

GRUB takes the command line from the `multiboot2 <kernel> <args...>` line
of grub.cfg, so a run with its own command line gets its own ISO, made
by tools/mkiso from the build's ISO tree with that line as the default
entry's. A run of one of the shipped scenarios' entries boots the build's
ISO itself, with a small disk whose hvprobe-scenario.cfg names the entry.
"""

import re
import shutil
import subprocess
from pathlib import Path

from ... import TOOLS

# The one recipe for a GRUB ISO, shared with the Makefile.
MKISO = TOOLS / "mkiso"
_MULTIBOOT2 = re.compile(r"^(\s*multiboot2\s+)(\S+)")


class MediaError(Exception):
    """The boot media could not be made; the run cannot start."""


def grub_quote(word) -> str:
    """A GRUB word that stands for exactly `word`: inside single quotes
    everything is literal, so only the quote itself needs '\\''."""
    return "'" + word.replace("'", "'\\''") + "'"


def rewrite_grub_cfg(text, words) -> str:
    """grub.cfg with every multiboot2 line passing words as the command
    line in place of the default one."""
    args = "".join(" " + grub_quote(w) for w in words)
    lines, found = [], 0
    for line in text.splitlines(keepends=True):
        match = _MULTIBOOT2.match(line)
        if match:
            found += 1
            end = "\n" if line.endswith("\n") else ""
            line = match.group(1) + match.group(2) + args + end
        lines.append(line)
    if not found:
        raise MediaError("grub.cfg has no multiboot2 line to carry the "
                         "command line")
    return "".join(lines)


def make_iso(isodir, run_dir, words) -> Path:
    """Build run_dir/hvprobe.iso from the ISO tree isodir with words as
    the default entry's kernel command line; returns its path."""
    tree = Path(run_dir) / "isodir"
    iso = Path(run_dir) / "hvprobe.iso"
    try:
        shutil.copytree(isodir, tree)
    except OSError as err:
        raise MediaError(f"cannot prepare the ISO tree: {err}") from None
    try:
        done = subprocess.run([str(MKISO), "--cmdline", " ".join(words),
                               str(tree), str(iso)],
                              stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, errors="replace")
    except OSError as err:
        raise MediaError(f"cannot run {MKISO.name}: {err}") from None
    finally:
        # The tree is the build's plus one line; the ISO is what the run
        # used, and a failed one is no use either.
        shutil.rmtree(tree, ignore_errors=True)
    if done.returncode:
        iso.unlink(missing_ok=True)
        raise MediaError(f"{MKISO.name} failed ({done.returncode}):\n"
                         f"{done.stdout}{done.stderr}".rstrip())
    return iso


# The file GRUB looks for on any disk (boot/grub.cfg): it names the entry.
CHOICE_FILE = "hvprobe-scenario.cfg"


def choice_text(entry, lpj=None) -> str:
    """CHOICE_FILE's script: boot entry, and with lpj give the lpj an
    entry's lpj=host boots with (tools/mkiso; exported, so that the menu
    entry sees it whatever GRUB's scope)."""
    text = f"set default={grub_quote(entry)}\n"
    if lpj is not None:
        text += f"set hvprobe_lpj={int(lpj)}\nexport hvprobe_lpj\n"
    return text


def choice_disk(run_dir, entry, lpj=None) -> Path:
    """run_dir/choice.img: a FAT floppy-sized disk holding CHOICE_FILE
    (choice_text), for GRUB to boot that ISO entry; made with mtools, as
    a Hyper-V user makes a VHDX with the same file."""
    img = Path(run_dir) / "choice.img"
    cfg = Path(run_dir) / CHOICE_FILE
    cfg.write_text(choice_text(entry, lpj))
    for argv in (["mformat", "-C", "-f", "1440", "-v", "HVPROBE", "-i",
                  str(img), "::"],
                 ["mcopy", "-i", str(img), str(cfg), f"::/{CHOICE_FILE}"]):
        try:
            done = subprocess.run(argv, stdin=subprocess.DEVNULL,
                                  capture_output=True, text=True)
        except OSError as err:
            raise MediaError(f"cannot run {argv[0]}: {err}") from None
        if done.returncode:
            raise MediaError(f"{argv[0]} failed ({done.returncode}): "
                             f"{done.stderr.strip()}")
    return img


def copy_ovmf_vars(source, run_dir) -> Path:
    """A writable variable store for one run, so runs never share one."""
    target = Path(run_dir) / "OVMF_VARS.fd"
    try:
        shutil.copyfile(source, target)
    except OSError as err:
        raise MediaError(f"cannot copy OVMF variables {source}: "
                         f"{err.strerror}") from None
    return target
