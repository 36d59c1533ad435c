# SPDX-License-Identifier: MIT
"""tools/mkiso ISODIR OUT.iso: the hybrid BIOS + UEFI GRUB ISO of an ISO
tree, for the Makefile and for tools/run's per-run ISOs alike.

It writes ISODIR/boot/grub/grub.cfg from boot/grub.cfg: the default entry
("hvprobe") boots with --cmdline's words (none: the kernel's defaults),
and one entry per shipped scenario and variant (tools/scenarios/, by its
NAME.VARIANT) boots that scenario's command line. GRUB picks the default
entry, or the one a disk's /hvprobe-scenario.cfg names ("set
default=NAME"); --default names another one for the ISO itself.
The lpj thread's rows come once more under each lpj policy, as
lpj-thread.ROW@POLICY, for run-hvprobe.ps1 -Thread to give its table.
ISODIR/boot/hvprobe/scenarios.json lists the entries with the machine
each scenario wants (vCPUs, nodes, memory), for tools/hyperv/run-hvprobe.ps1.

An entry's lpj=host is the booting host's lpj: the one a disk's
hvprobe-scenario.cfg sets as hvprobe_lpj (tools/run --iso-entry), else
lpj_source=hyperv. In --cmdline it is refused: it would be the build
machine's.

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


# The lpj thread's rows (tools/scenarios/lpj-thread.toml, bench/thread-table)
# and the policies each is booted under on a Hyper-V host, with the
# bring-up each policy's Linux has (6.5 and later start APs in parallel,
# as bench/thread-table pairs them): entry THREAD.ROW@POLICY.
THREAD = "lpj-thread"
THREAD_POLICIES = (("hvprobe", "serial"), ("linux-6.1", "serial"),
                   ("linux-6.5", "linux-6.5"), ("linux-6.12", "linux-6.5"),
                   ("hv-preset", "serial"))
HOST_LPJ = f"lpj={hostinfo.HOST_LPJ}"
# What an entry's lpj=host boots as: the lpj a disk's hvprobe-scenario.cfg
# sets (tools/run --iso-entry: the host running QEMU), else the TSC rate
# the Hyper-V host states in its frequency MSR (README, "Attaching it to
# Hyper-V"). Never the build machine's: the ISO boots elsewhere.
DISK_LPJ = "lpj=$hvprobe_lpj"
HYPERV_LPJ = "lpj_source=hyperv"


def machine_of(spec):
    return {"vcpus": spec.vcpus, "numa": spec.numa, "mem_mib": spec.mem_mib}


def thread_entries(directory=scen.SCENARIOS):
    """(id, words, machine) of the thread's rows under each policy."""
    return [(f"{spec.name}@{policy}",
             scen.merge_cmdline(spec.cmdline, [f"lpj_policy={policy}",
                                               f"bringup={bringup}"]),
             machine_of(spec))
            for spec in scen.load_scenario(THREAD, directory)
            for policy, bringup in THREAD_POLICIES]


def entries(directory=scen.SCENARIOS):
    """(id, words, machine) of every shipped scenario's runs, in name
    order, then the thread's rows under each policy: the ISO's menu
    beyond its default entry."""
    out = []
    names = sorted(f.stem for f in Path(directory).glob("*.toml"))
    for name in names:
        for spec in scen.load_scenario(name, directory):
            out.append((spec.name, list(spec.cmdline), machine_of(spec)))
    return out + thread_entries(directory)


def refuse_host_lpj(words):
    """ValueError for lpj=host in words GRUB passes as they are."""
    if HOST_LPJ in words:
        raise ValueError(f"{HOST_LPJ} in an ISO entry would be the build "
                         "machine's lpj, not that of the host booting the "
                         "ISO: give lpj= a number, or lpj_source=hyperv for "
                         "the rate Hyper-V states")


def booted_words(words, lpj_word):
    return [lpj_word if w == HOST_LPJ else w for w in words]


def multiboot_line(words, indent):
    args = "".join(" " + (f'"{w}"' if w == DISK_LPJ else media.grub_quote(w))
                   for w in words)
    return f"{indent}multiboot2 /boot/hvprobe.elf{args}\n"


def menu_entry(entry_id, words):
    head = (f"\nmenuentry {media.grub_quote(entry_id)} --id "
            f"{media.grub_quote(entry_id)} {{\n")
    if HOST_LPJ not in words:
        return head + multiboot_line(words, "\t") + "\tboot\n}\n"
    return (head + '\tif [ -n "$hvprobe_lpj" ]; then\n'
            + multiboot_line(booted_words(words, DISK_LPJ), "\t\t")
            + "\telse\n"
            + multiboot_line(booted_words(words, HYPERV_LPJ), "\t\t")
            + "\tfi\n\tboot\n}\n")


def grub_cfg(template, words, menu, default=None):
    """grub.cfg: the template with its entry booting words, the menu's
    entries after it, and `set default=` naming default if given;
    ValueError for lpj=host in words, which no disk can fill in."""
    refuse_host_lpj(words)
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
    """scenarios.json: every entry, its command line (lpj=host standing
    for a disk's lpj, which tools/run puts in), the one it boots with
    no disk's (hyperv_cmdline), and its machine."""
    return {"default": DEFAULT_ENTRY,
            "entries": [{"id": DEFAULT_ENTRY, "cmdline": " ".join(words),
                         "hyperv_cmdline": " ".join(words),
                         "machine": None}] +
                       [{"id": i, "cmdline": " ".join(w),
                         "hyperv_cmdline": " ".join(booted_words(
                             w, HYPERV_LPJ)), "machine": m}
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
    except (ValueError, media.MediaError) as err:
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
