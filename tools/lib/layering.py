# SPDX-License-Identifier: MIT
"""The house plan, checked: which folder's sources may include which.

Dependencies point one way. kernel/ is the ground floor and, inside it,
lib/ < x86/ < acpi/ < time/ < test/ < the top-level files (console,
command line, power-off); kernel/main.c alone composes everything and may
include any folder. boot/, hv/ and apic/ stand on kernel/; SMP
bring-up, apic/smp/, on kernel/ and apic/; pmu/ on kernel/, apic/ and
apic/smp/. The tests may include anything. A folder that needs
something from above registers with the one below (a linker-section
table, a hook set at boot) instead of including it.

check(root) reads every #include "..." of the C, header and assembly
sources and returns the includes the plan forbids and the cycles among
folders, each as text a user can act on.
"""

import re
from dataclasses import dataclass
from pathlib import Path

SOURCES = ("*.c", "*.h", "*.S")
TOP = ("apic", "boot", "hv", "kernel", "pmu", "tests")
KERNEL_ORDER = ("kernel/lib", "kernel/x86", "kernel/acpi", "kernel/time",
                "kernel/test", "kernel")
COMPOSER = "kernel/main.c"
# Folders whose subfolders are parts of their own, above or below them.
SPLIT = ("kernel", "tests")
APIC_SMP = "apic/smp"
ANYTHING = None

# What each part may include besides itself; ANYTHING for no limit.
ALLOWED = {
    **{part: set(KERNEL_ORDER[:i]) for i, part in enumerate(KERNEL_ORDER)},
    COMPOSER: ANYTHING,
    "boot": set(KERNEL_ORDER),
    "hv": set(KERNEL_ORDER),
    "apic": set(KERNEL_ORDER),
    APIC_SMP: set(KERNEL_ORDER) | {"apic"},
    "pmu": set(KERNEL_ORDER) | {"apic", APIC_SMP},
    "tests": ANYTHING,
    "tests/unit": ANYTHING,
    "tests/fuzz": ANYTHING,
}

_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def part_of(path) -> str:
    """The part of the plan a source path belongs to."""
    parts = Path(path).parts
    if str(Path(path)) == COMPOSER:
        return COMPOSER
    if parts[0] in SPLIT and len(parts) > 2:
        return f"{parts[0]}/{parts[1]}"
    if len(parts) > 2 and f"{parts[0]}/{parts[1]}" == APIC_SMP:
        return APIC_SMP
    return parts[0]


@dataclass
class Include:
    path: str
    line: int
    target: str

    @property
    def source_part(self) -> str:
        return part_of(self.path)

    @property
    def target_part(self) -> str:
        return part_of(self.target)


def includes(root) -> list[Include]:
    """Every quoted #include of the plan's sources under root."""
    root = Path(root)
    found = []
    for top in TOP:
        for pattern in SOURCES:
            for path in sorted((root / top).rglob(pattern)):
                rel = path.relative_to(root).as_posix()
                with open(path, errors="replace") as f:
                    for n, text in enumerate(f, 1):
                        m = _INCLUDE.match(text)
                        if m:
                            found.append(Include(rel, n, m.group(1)))
    return found


def forbidden(found) -> list[str]:
    """The includes the plan does not allow, as messages."""
    out = []
    for inc in found:
        src, dst = inc.source_part, inc.target_part
        allowed = ALLOWED.get(src, set())
        if src == dst or allowed is ANYTHING or dst in allowed:
            continue
        may = ", ".join(sorted(allowed)) or "nothing outside itself"
        out.append(f'{inc.path}:{inc.line}: includes "{inc.target}": '
                   f"{src} may include {may}")
    return out


def cycles(found) -> list[str]:
    """Cycles in the graph of parts the includes draw, each as
    "a -> b -> a"; the composer and the tests are left out, since
    nothing includes them."""
    edges: dict[str, set[str]] = {}
    for inc in found:
        src, dst = inc.source_part, inc.target_part
        if src != dst and ALLOWED.get(src, set()) is not ANYTHING:
            edges.setdefault(src, set()).add(dst)
    seen, out = set(), []

    def visit(node, path) -> None:
        if node in path:
            loop = path[path.index(node):] + [node]
            key = frozenset(loop)
            if key not in seen:
                seen.add(key)
                out.append(" -> ".join(loop))
            return
        for nxt in sorted(edges.get(node, ())):
            visit(nxt, path + [node])

    for node in sorted(edges):
        visit(node, [])
    return out


def check(root) -> tuple[list[str], list[str]]:
    """(forbidden includes, cycles) for the tree at root."""
    found = includes(root)
    return forbidden(found), cycles(found)


def graph(root) -> dict[str, list[str]]:
    """Each part and the parts it includes, for a reader."""
    edges: dict[str, set[str]] = {}
    for inc in includes(root):
        if inc.source_part != inc.target_part:
            edges.setdefault(inc.source_part, set()).add(inc.target_part)
    return {src: sorted(dst) for src, dst in sorted(edges.items())}
