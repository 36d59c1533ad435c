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

The host package has floors too (FLOORS, lowest first): the bottom floor
(tools.lib.base and the package root's ROOT), then the readers of what
runs said (analysis), then the command line and the host's description,
then launching guests, then host kernels booted nested, then what stands
on all of them (the host probe, the referee), then the commands and
bench/, then the tests. A module may import its own floor and the floors
below, never one above, and the packages a floor holds form no cycle, a
function-level import included.

Inside apic/smp the files call one way as well (ONE_WAY_CALLS): the
bring-up modes stand on the floor they share (kick, wait, wake, the
per-CPU record) and nothing calls back up, so no .c file calls a function
of another that calls, directly or round others, back into it.

check(root) reads every #include "..." of the C, header and assembly
sources, every import of the Python ones and the calls between the files
of ONE_WAY_CALLS, and returns the includes and imports the plan forbids
and the cycles among folders, packages and those files, each as text a
user can act on.
"""

import ast
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


# Parts whose .c files call one another one way: no circle of calls
# between files, a function passed by name counted as a call.
ONE_WAY_CALLS = (APIC_SMP,)

_C_NOISE = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"'
                      r"|'(?:\\.|[^'\\\n])*'|^[ \t]*#(?:\\\n|[^\n])*",
                      re.S | re.M)
_IDENT = re.compile(r"[A-Za-z_]\w*")
_DEF_NAME = re.compile(r"([A-Za-z_]\w*)\s*$")


def _blank(m) -> str:
    """A match of comment, literal or directive, as its newlines alone."""
    return "\n" * m.group(0).count("\n")


def _function_name(head) -> str | None:
    """The function a top-level "...(...)" before a "{" defines, or None
    for anything else (a struct, an initializer)."""
    head = head.rstrip()
    if not head.endswith(")"):
        return None
    depth = 0
    for i in range(len(head) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(head[i], 0)
        if depth == 0:
            m = _DEF_NAME.search(head[:i])
            return m.group(1) if m else None
    return None


@dataclass
class CFile:
    path: str
    # Functions it defines for other files: {name: line}.
    exported: dict[str, int]
    # Names used inside its braces, each with its first line.
    used: dict[str, int]


def read_c(path, text) -> CFile:
    """What a C file defines without static and what its bodies name."""
    text = _C_NOISE.sub(_blank, text)
    exported: dict[str, int] = {}
    used: dict[str, int] = {}
    depth, head_start, line = 0, 0, 1
    for i, ch in enumerate(text):
        if ch == "\n":
            line += 1
        elif ch == "{":
            if depth == 0:
                head = text[head_start:i]
                name = _function_name(head)
                if name and not re.search(r"\bstatic\b", head):
                    exported.setdefault(name, line)
                body_start, body_line = i, line
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                for m in _IDENT.finditer(text, body_start, i):
                    used.setdefault(m.group(0), body_line +
                                    text.count("\n", body_start, m.start()))
                head_start = i + 1
        elif ch == ";" and depth == 0:
            head_start = i + 1
    return CFile(path, exported, used)


@dataclass
class Call:
    path: str
    line: int
    name: str
    target: str     # the file that defines name


def calls(root) -> list[Call]:
    """The calls between the .c files of each part of ONE_WAY_CALLS: a
    name one file uses that another defines (defined by one file only)."""
    root = Path(root)
    found = []
    for part in ONE_WAY_CALLS:
        files = [read_c(p.relative_to(root).as_posix(),
                        p.read_text(errors="replace"))
                 for p in sorted((root / part).glob("*.c"))]
        owners: dict[str, list[str]] = {}
        for f in files:
            for name in f.exported:
                owners.setdefault(name, []).append(f.path)
        for f in files:
            for name, line in sorted(f.used.items(), key=lambda x: x[1]):
                where = owners.get(name, [])
                if len(where) == 1 and where[0] != f.path:
                    found.append(Call(f.path, line, name, where[0]))
    return found


def call_edges(found) -> dict[str, set[str]]:
    """Which file of ONE_WAY_CALLS calls which."""
    edges: dict[str, set[str]] = {}
    for c in found:
        edges.setdefault(c.path, set()).add(c.target)
    return edges


def call_cycles(found) -> list[str]:
    """The circles of calls among files, each as "a.c -> b.c -> a.c",
    with the call that makes each step."""
    first: dict[tuple[str, str], Call] = {}
    for c in found:
        first.setdefault((c.path, c.target), c)
    out = []
    for loop in _loops(call_edges(found)):
        steps = loop.split(" -> ")
        why = [first[(a, b)] for a, b in zip(steps, steps[1:])]
        out.append(loop + " (" + "; ".join(
            f"{c.path}:{c.line} calls {c.name}" for c in why) + ")")
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
    return _loops(edges)


# The host package's floors, lowest first: (name, the packages and
# modules it holds). A module belongs to the name that is it or the
# package above it, except that a package with others of the table
# inside (tools, tools.lib, bench) holds only its own __init__; every
# module of PY_TOP must belong to one.
FLOORS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("base", ("tools", "tools.lib", "tools.lib.base")),
    ("analysis", ("tools.lib.analysis",)),
    ("host", ("tools.lib.cli", "tools.lib.hostinfo", "tools.lib.buildinfo",
              "tools.lib.layering", "tools.lib.refmatrix")),
    ("launch", ("tools.lib.launch",)),
    ("hostkernels", ("tools.lib.hostkernels",)),
    ("above", ("tools.lib.probe", "tools.lib.referee")),
    ("checks", ("tools.lib.checks",)),
    ("bench.lib", ("bench", "bench.lib")),
    ("commands", ("tools.commands", "tools.entry", "bench.commands")),
    ("tests", ("tools.tests", "bench.tests")),
)
PY_TOP = ("tools", "bench")
FLOOR_OF = {unit: i for i, (_, units) in enumerate(FLOORS) for unit in units}
_HOLDERS = {u for u in FLOOR_OF if any(v.startswith(u + ".") for v in FLOOR_OF)}


def unit_of(module) -> str | None:
    """The package or module of FLOORS that module belongs to."""
    if module in FLOOR_OF:
        return module
    return next((unit for unit in FLOOR_OF if unit not in _HOLDERS
                 and module.startswith(unit + ".")), None)


@dataclass
class Import:
    path: str
    line: int
    source: str     # the importing module, dotted
    target: str     # the imported module of the package, dotted


def _module_name(rel) -> str:
    parts = list(Path(rel).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_module(root, dotted) -> bool:
    base = Path(root, *dotted.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _targets(root, module, is_package, node) -> list[str]:
    """The package's modules an import statement names."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    assert isinstance(node, ast.ImportFrom)
    if node.level:
        package = module.split(".") if is_package else module.split(".")[:-1]
        package = package[:len(package) - node.level + 1]
        where = ".".join(package + ([node.module] if node.module else []))
    else:
        where = node.module or ""
    out = []
    for alias in node.names:
        sub = f"{where}.{alias.name}"
        out.append(sub if _is_module(root, sub) else where)
    return list(dict.fromkeys(out))


def imports(root) -> list[Import]:
    """Every import of the package's own modules in the Python sources
    under root, function-level imports included."""
    root = Path(root)
    found = []
    for top in PY_TOP:
        for path in sorted((root / top).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            module = _module_name(rel)
            tree = ast.parse(path.read_text(errors="replace"), rel)
            for node in ast.walk(tree):
                if not isinstance(node, (ast.Import, ast.ImportFrom)):
                    continue
                for target in _targets(root, module,
                                       path.name == "__init__.py", node):
                    if target.split(".")[0] in PY_TOP:
                        found.append(Import(rel, node.lineno, module, target))
    return found


def forbidden_imports(found) -> list[str]:
    """The imports that run up a floor, and the modules on no floor
    (each named once, where it is first imported or imports), as
    messages."""
    out, unplaced = [], set()
    for imp in found:
        src, dst = unit_of(imp.source), unit_of(imp.target)
        if src is None or dst is None:
            which = imp.source if src is None else imp.target
            if which not in unplaced:
                unplaced.add(which)
                out.append(f"{imp.path}:{imp.line}: imports {imp.target}: "
                           f"{which} is on no floor (tools/lib/layering.py's "
                           "FLOORS)")
            continue
        if FLOOR_OF[dst] > FLOOR_OF[src]:
            below = ", ".join(name for name, _ in FLOORS[:FLOOR_OF[src] + 1])
            out.append(f"{imp.path}:{imp.line}: imports {imp.target}: "
                       f"{src} (floor {FLOORS[FLOOR_OF[src]][0]}) may import "
                       f"{below}, not {dst} (floor "
                       f"{FLOORS[FLOOR_OF[dst]][0]})")
    return out


def _loops(edges) -> list[str]:
    """The cycles of a graph ({node: {node}}), each as "a -> b -> a"."""
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


def import_edges(found) -> dict[str, set[str]]:
    """Which package or module of FLOORS imports which."""
    edges: dict[str, set[str]] = {}
    for imp in found:
        src, dst = unit_of(imp.source), unit_of(imp.target)
        if src and dst and src != dst:
            edges.setdefault(src, set()).add(dst)
    return edges


def check(root) -> tuple[list[str], list[str]]:
    """(forbidden includes and imports, cycles) for the tree at root."""
    found = includes(root)
    py = imports(root)
    return (forbidden(found) + forbidden_imports(py),
            cycles(found) + _loops(import_edges(py)) +
            call_cycles(calls(root)))


def graph(root) -> dict[str, list[str]]:
    """Each part and the parts it includes, each package and the
    packages it imports, then each file of ONE_WAY_CALLS and the files it
    calls, for a reader."""
    edges: dict[str, set[str]] = {}
    for inc in includes(root):
        if inc.source_part != inc.target_part:
            edges.setdefault(inc.source_part, set()).add(inc.target_part)
    c = {src: sorted(dst) for src, dst in sorted(edges.items())}
    py = {src: sorted(dst)
          for src, dst in sorted(import_edges(imports(root)).items())}
    files = {src: sorted(dst)
             for src, dst in sorted(call_edges(calls(root)).items())}
    return {**c, **py, **files}
