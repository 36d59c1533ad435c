# SPDX-License-Identifier: MIT
"""tools/mkiso ISODIR OUT.iso: the hybrid BIOS + UEFI GRUB ISO of an ISO
tree, for the Makefile and for tools/run's per-run ISOs alike.

It writes ISODIR/boot/grub/grub.cfg from boot/grub.cfg: the default entry
("hvprobe") boots with --cmdline's words (none: the kernel's defaults),
and one entry per shipped scenario and variant (tools/scenarios/, by its
NAME.VARIANT) boots that scenario's command line. GRUB picks the default
entry, or the one a disk's /hvprobe-scenario.cfg names ("set
default=NAME"); --default names another one for the ISO itself.
ISODIR/boot/hvprobe/scenarios.json lists the entries with the machine
each scenario wants (vCPUs, nodes, memory), for tools/hyperv/run-hvprobe.ps1.

Only the GRUB modules grub.cfg needs go in, and no fonts, locales or
themes: about 4 MB instead of about 20.

Exit status: 0 the ISO was written, 1 grub-mkrescue failed, 2 bad usage.
"""

import json
import subprocess
import tempfile
from pathlib import Path

from tools import ROOT
from tools.lib import cli, hostinfo
from tools.lib.launch import media
from tools.lib.launch import scenario as scen

TEMPLATE = ROOT / "boot" / "grub.cfg"
DEFAULT_ENTRY = "hvprobe"
MODULES = ("multiboot2 normal serial terminal configfile iso9660 part_msdos "
           "part_gpt fat all_video echo search search_fs_file test")


class MkisoError(Exception):
    """grub-mkrescue failed (exit 1)."""


EXITS = {MkisoError: 1}


def entries(directory=scen.SCENARIOS):
    """(id, words, machine) of every shipped scenario's runs, in name
    order: the ISO's menu beyond its default entry."""
    out = []
    names = sorted(f.stem for f in Path(directory).glob("*.toml"))
    for name in names:
        for spec in scen.load_scenario(name, directory):
            # The ISO may boot on another host: its lpj=host is the
            # build host's, and the kernel judges it by the delay it
            # implies there.
            out.append((spec.name, hostinfo.resolve_host_lpj(spec.cmdline),
                        {"vcpus": spec.vcpus, "numa": spec.numa,
                         "mem_mib": spec.mem_mib}))
    return out


def menu_entry(entry_id, words):
    args = "".join(" " + media.grub_quote(w) for w in words)
    return (f"\nmenuentry {media.grub_quote(entry_id)} --id "
            f"{media.grub_quote(entry_id)} {{\n"
            f"\tmultiboot2 /boot/hvprobe.elf{args}\n\tboot\n}}\n")


def grub_cfg(template, words, menu, default=None):
    """grub.cfg: the template with its entry booting words, the menu's
    entries after it, and `set default=` naming default if given."""
    text = media.rewrite_grub_cfg(template, words)
    if default is not None:
        ids = [DEFAULT_ENTRY] + [e[0] for e in menu]
        if default not in ids:
            raise ValueError(f"no ISO entry {default!r} (entries: "
                             f"{', '.join(ids)})")
        text = text.replace(f"set default={DEFAULT_ENTRY}\n",
                            f"set default={media.grub_quote(default)}\n", 1)
    return text + "".join(menu_entry(i, w) for i, w, _ in menu)


def index(words, menu):
    """scenarios.json: every entry, its command line and machine."""
    return {"default": DEFAULT_ENTRY,
            "entries": [{"id": DEFAULT_ENTRY, "cmdline": " ".join(words),
                         "machine": None}] +
                       [{"id": i, "cmdline": " ".join(w), "machine": m}
                        for i, w, m in menu]}


def parse_args(argv):
    p = cli.parser("tools/mkiso", __doc__)
    p.add_argument("--cmdline", default="", metavar="WORDS",
                   help="the default entry's kernel command line")
    p.add_argument("--default", metavar="NAME",
                   help="the entry GRUB boots unless a disk picks one "
                        "(default: hvprobe)")
    p.add_argument("isodir", help="the ISO tree (boot/hvprobe.elf in it)")
    p.add_argument("out", help="the ISO to write")
    return p, p.parse_args(argv)


def main(argv):
    p, args = parse_args(argv)
    words = args.cmdline.split()
    tree = Path(args.isodir)
    if not (tree / "boot" / "hvprobe.elf").exists():
        p.error(f"{tree}/boot/hvprobe.elf is missing")
    try:
        menu = entries()
        cfg = grub_cfg(TEMPLATE.read_text(), words, menu, args.default)
    except (ValueError, media.MediaError, hostinfo.HostUnknown) as err:
        p.error(str(err))
    (tree / "boot" / "grub").mkdir(parents=True, exist_ok=True)
    (tree / "boot" / "grub" / "grub.cfg").write_text(cfg)
    (tree / "boot" / "hvprobe").mkdir(parents=True, exist_ok=True)
    (tree / "boot" / "hvprobe" / "scenarios.json").write_text(
        json.dumps(index(words, menu), indent=1) + "\n")
    with tempfile.TemporaryFile("w+") as log:
        done = subprocess.run(
            ["grub-mkrescue", "--compress=xz", "--fonts=", "--locales=",
             "--themes=", f"--install-modules={MODULES}", "-o", args.out,
             str(tree)], stdout=log, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL)
        if done.returncode:
            log.seek(0)
            raise MkisoError(f"grub-mkrescue exited {done.returncode}:\n"
                             + log.read().rstrip())
    return 0
