# SPDX-License-Identifier: MIT
"""Scenarios and matrices: which machines to boot, with which command line.

A scenario file (TOML, or JSON with the same keys) names one QEMU machine
and one kernel command line, and may list variants of itself (the same
machine with other words on the command line, another CPU model...). A
matrix file names scenarios to run, inline or by name, and may cross a
base scenario with axes. Both turn into a flat list of RunSpec, one per
guest boot, which is all the runner sees.

Everything here is pure: it reads files and returns data, so that the
unit tests can pin what a file means without starting QEMU.
"""

import itertools
import json
import math
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ... import ROOT, TOOLS
from ..analysis import expected_data
from ..base import seconds
from ..base.series import SERIES
from . import qemu

SCENARIOS = TOOLS / "scenarios"

# Names become folder names and the parts of "scenario.variant", so they
# may not hold a dot; a matrix's own scenario without variants may
# (make check's parallel-linux-6.5), as nothing is appended to it.
_NAME = re.compile(r"[A-Za-z0-9_+-]{1,64}")
_DOTTED_NAME = re.compile(r"[A-Za-z0-9_.+-]{1,64}")
_RELEASE = re.compile(r"\d+\.\d+")
# What boots a scenario: tools/run's guest run, or tools/linux-referee
# (Debian's Linux beside hvprobe, on the scenario's accel, vcpus, numa
# and cpu).
RUNNERS = ("run", "linux-referee")
_WORD = re.compile(r"\S+")

# The keys of a scenario, with what each must be. "cpu" may also be a
# table keyed by accelerator (kvm, tcg), for flags only one of them
# takes (Hyper-V enlightenments mean something under KVM only).
KEYS = {
    "name": "a name of letters, digits, _ + -",
    "description": "a string",
    "boot": f"one of {', '.join(qemu.BOOTS)}",
    "vcpus": "a whole number >= 1",
    "numa": "a whole number >= 0 (NUMA nodes; 0 leaves -numa out)",
    "mem": "a size such as 256M or 2G",
    "cpu": "a QEMU CPU model, or a table {kvm = ..., tcg = ...}",
    "accel": f"one of {', '.join(qemu.ACCELS)}",
    "machine": "a QEMU machine type and its options",
    "qemu_args": "a list of extra QEMU arguments",
    "cmdline": "the kernel command line, a string or a list of words",
    "timeout": "seconds, a number > 0",
    "needs_kvm": "true or false",
    "expect_status": "QEMU's expected exit status, a whole number",
    "expect_fail": "a regular expression: a negative run, which passes "
                   "when it ends with its totals and a not-ok line matches",
    "expect_lines": "a list of regular expressions, each matching some "
                    "serial line",
    "expect_data": "a table of DATA figure paths and the values they must "
                   "hold (\"smp.cpus\" = 4)",
    "iso_entry": "an entry of the build ISO (NAME.preset), booted with its "
                 "own command line; boot bios or uefi",
    "min_qemu": "the oldest QEMU that can run it, \"MAJOR.MINOR\"",
    "host_kernels": "host kernel series to run it under as L1 "
                    f"({', '.join(SERIES)}), not on this host",
    "tool": f"what boots it, one of {', '.join(RUNNERS)}",
    "variants": "a table of variant name -> scenario keys",
}
# Keys a variant or axis entry may change (not its name or variants).
OVERRIDES = set(KEYS) - {"name", "variants"}
MATRIX_KEYS = {"name", "description", "repeat", "scenarios", "scenario",
               "cross", "defaults"}
MAX_RUNS = 10000


class ScenarioError(Exception):
    """A scenario or matrix file that cannot be used; a user error."""


@dataclass
class RunSpec:
    """One guest boot: the machine, the command line and where it came
    from. `name` is scenario[.variant], the same for every repeat."""
    name: str
    scenario: str
    variant: str | None = None
    description: str = ""
    boot: str = "kernel"
    vcpus: int = 1
    numa: int = 0
    mem_mib: int = 256
    cpu: str | dict | None = None
    accel: str = "auto"
    machine: str = "q35"
    qemu_args: list = field(default_factory=list)
    cmdline: list = field(default_factory=list)
    timeout: float | None = None
    needs_kvm: bool = False
    expect_status: int | None = None
    expect_fail: str | None = None
    expect_lines: list = field(default_factory=list)
    expect_data: dict = field(default_factory=dict)
    iso_entry: str | None = None
    min_qemu: str | None = None
    host_kernels: list = field(default_factory=list)
    tool: str = "run"
    source: str | None = None
    matrix: str | None = None
    repeat: int = 1
    repeats: int = 1
    # The entry of each [[cross]] axis that made this spec (axis -> label),
    # for the programs that sort runs by axis; not in results.json.
    axes: dict = field(default_factory=dict)

    @property
    def run_name(self) -> str:
        """The run folder's name: repeats of one spec get -r2, -r3..."""
        return self.name if self.repeat == 1 else f"{self.name}-r{self.repeat}"

    @property
    def timeout_s(self) -> float:
        return self.timeout or qemu.BOOT_TIMEOUT_S[self.boot]

    def cpu_for(self, accel) -> str | None:
        """The CPU model for the accelerator the run ends up with; None
        means the accelerator's default."""
        if isinstance(self.cpu, dict):
            return self.cpu.get(accel)
        return self.cpu

    def qemu_machine(self, accel=None) -> qemu.Machine:
        return qemu.Machine(boot=self.boot, smp=self.vcpus, numa=self.numa,
                            mem_mib=self.mem_mib, accel=self.accel,
                            cpu=self.cpu_for(accel) if accel else None,
                            machine=self.machine, extra=list(self.qemu_args))

    def run_argv(self) -> list[str]:
        """The tools/run command line (after tools/run itself) that
        boots this spec alone: for a run inside an L1 host kernel, and
        to print a run again by hand."""
        argv = [] if self.timeout is None else ["--timeout",
                                                f"{self.timeout:g}"]
        argv += ["--boot", self.boot, "--smp", str(self.vcpus)]
        if self.numa:
            argv += ["--numa", str(self.numa)]
        argv += ["--mem", f"{self.mem_mib}M", "--accel", self.accel]
        cpu = self.cpu_for(self.accel) if isinstance(self.cpu, dict) \
            else self.cpu
        if cpu:
            argv += ["--cpu", cpu]
        if self.machine != "q35":
            argv += ["--machine", self.machine]
        argv += [f"--qemu-arg={a}" for a in self.qemu_args]
        if self.expect_status is not None:
            argv += ["--expect-status", str(self.expect_status)]
        if self.expect_fail is not None:
            argv += ["--expect-fail", self.expect_fail]
        for pattern in self.expect_lines:
            argv += ["--expect-line", pattern]
        for path, value in self.expect_data.items():
            argv += ["--expect-data", expected_data.assignment(path, value)]
        if self.iso_entry is not None:
            argv += ["--iso-entry", self.iso_entry]
        return argv + (["--", *self.cmdline] if self.cmdline else [])

    def to_json(self) -> dict[str, Any]:
        """The scenario block of results.json."""
        return {"name": self.name, "scenario": self.scenario,
                "variant": self.variant, "description": self.description,
                "source": self.source, "matrix": self.matrix,
                "repeat": self.repeat, "repeats": self.repeats,
                "machine": {"boot": self.boot, "vcpus": self.vcpus,
                            "numa": self.numa, "mem_mib": self.mem_mib,
                            "cpu": self.cpu, "accel": self.accel,
                            "machine": self.machine,
                            "qemu_args": list(self.qemu_args)},
                "cmdline": " ".join(self.cmdline),
                "timeout_s": self.timeout_s}


def merge_cmdline(words, more) -> list[str]:
    """words with more merged in: a key=value word replaces the earlier
    word with that key (the kernel takes each key once), anything else is
    appended unless already there."""
    out = list(words)
    for word in more:
        key = word.split("=", 1)[0] + "=" if "=" in word else None
        at = next((i for i, w in enumerate(out)
                   if (key and w.startswith(key)) or w == word), None)
        if at is None:
            out.append(word)
        else:
            out[at] = word
    return out


def _words(value, where) -> list[str]:
    if isinstance(value, str):
        return _WORD.findall(value)
    if isinstance(value, list) and all(isinstance(w, str) for w in value):
        # A list element with spaces would silently become several words.
        if any(not _WORD.fullmatch(w) for w in value):
            raise ScenarioError(f"{where}: cmdline words may not be empty "
                                "or hold spaces")
        return list(value)
    raise ScenarioError(f"{where}: cmdline must be a string or a list of "
                        "words")


def _int(value, where, key, low, high=None) -> int:
    if type(value) is not int or value < low or \
            (high is not None and value > high):
        raise ScenarioError(f"{where}: {key} must be {KEYS[key]}"
                            + (f" up to {high}" if high is not None else "")
                            + f", not {value!r}")
    return value


def _apply(spec, keys, where, merge) -> RunSpec:
    """Set spec's fields from the table keys. merge: cmdline words and
    qemu_args add to what spec has (variants and axes) instead of
    replacing it (the scenario's own keys)."""
    allowed = OVERRIDES if merge else set(KEYS)
    unknown = sorted(set(keys) - allowed)
    if unknown:
        raise ScenarioError(f"{where}: unknown key {unknown[0]!r} (accepted: "
                            f"{', '.join(sorted(allowed))})")
    for key, value in keys.items():
        setter = _SETTERS.get(key)
        if setter:
            setter(spec, key, value, where, merge)
    return spec


def _set_description(spec, key, value, where, merge) -> None:
    if not isinstance(value, str):
        raise ScenarioError(f"{where}: description must be a string")
    spec.description = value


def _set_choice(spec, key, value, where, merge) -> None:
    choices = {"boot": qemu.BOOTS, "accel": qemu.ACCELS, "tool": RUNNERS}
    if value not in choices[key]:
        raise ScenarioError(f"{where}: {key} must be {KEYS[key]}, "
                            f"not {value!r}")
    setattr(spec, key, value)


def _set_count(spec, key, value, where, merge) -> None:
    low, high = {"vcpus": (1, qemu.MAX_CPUS), "numa": (0, qemu.MAX_NODES),
                 "expect_status": (0, None)}[key]
    setattr(spec, key, _int(value, where, key, low, high))


def _set_mem(spec, key, value, where, merge) -> None:
    try:
        spec.mem_mib = (value if type(value) is int and value > 0
                        else qemu.parse_size(str(value)))
    except qemu.ConfigError as err:
        raise ScenarioError(f"{where}: {err}") from None


def _set_cpu(spec, key, value, where, merge) -> None:
    spec.cpu = _cpu(value, where)


def _set_text(spec, key, value, where, merge) -> None:
    """A key whose value is any non-empty string (machine, iso_entry)."""
    if not isinstance(value, str) or not value:
        raise ScenarioError(f"{where}: {key} must be {KEYS[key]}")
    setattr(spec, key, value)


def _set_qemu_args(spec, key, value, where, merge) -> None:
    if not (isinstance(value, list)
            and all(isinstance(a, str) for a in value)):
        raise ScenarioError(f"{where}: qemu_args must be a list of "
                            "strings")
    spec.qemu_args = spec.qemu_args + value if merge else list(value)


def _set_cmdline(spec, key, value, where, merge) -> None:
    words = _words(value, where)
    spec.cmdline = merge_cmdline(spec.cmdline, words) if merge else words


def _set_timeout(spec, key, value, where, merge) -> None:
    try:
        spec.timeout = seconds.finite(value)
    except ValueError as err:
        raise ScenarioError(f"{where}: timeout {err}") from None


def _set_needs_kvm(spec, key, value, where, merge) -> None:
    if not isinstance(value, bool):
        raise ScenarioError(f"{where}: needs_kvm must be true or "
                            "false")
    spec.needs_kvm = value


def _set_expect_fail(spec, key, value, where, merge) -> None:
    spec.expect_fail = _regex(value, where, key)


def _set_expect_lines(spec, key, value, where, merge) -> None:
    if not isinstance(value, list) or not value:
        raise ScenarioError(f"{where}: expect_lines must be "
                            f"{KEYS[key]}")
    spec.expect_lines = [_regex(v, where, key) for v in value]


def _set_expect_data(spec, key, value, where, merge) -> None:
    data = _expect_data(value, where)
    spec.expect_data = {**spec.expect_data, **data} if merge else data


def _set_min_qemu(spec, key, value, where, merge) -> None:
    if not isinstance(value, str) or not _RELEASE.fullmatch(value):
        raise ScenarioError(f"{where}: min_qemu must be {KEYS[key]}, "
                            f"not {value!r}")
    spec.min_qemu = value


def _set_host_kernels(spec, key, value, where, merge) -> None:
    if not (isinstance(value, list) and value and
            all(k in SERIES for k in value)
            and len(set(value)) == len(value)):
        raise ScenarioError(f"{where}: host_kernels must list "
                            f"{KEYS[key]}, not {value!r}")
    spec.host_kernels = list(value)


# How each scenario key reaches its RunSpec field; name, variants and
# repeat are read by the loaders, not set here.
_SETTERS = {
    "description": _set_description,
    "boot": _set_choice,
    "accel": _set_choice,
    "vcpus": _set_count,
    "numa": _set_count,
    "expect_status": _set_count,
    "mem": _set_mem,
    "cpu": _set_cpu,
    "machine": _set_text,
    "qemu_args": _set_qemu_args,
    "cmdline": _set_cmdline,
    "timeout": _set_timeout,
    "needs_kvm": _set_needs_kvm,
    "expect_fail": _set_expect_fail,
    "expect_lines": _set_expect_lines,
    "expect_data": _set_expect_data,
    "iso_entry": _set_text,
    "min_qemu": _set_min_qemu,
    "host_kernels": _set_host_kernels,
    "tool": _set_choice,
}


def _regex(value, where, key) -> str:
    if not isinstance(value, str):
        raise ScenarioError(f"{where}: {key} must be {KEYS[key]}")
    try:
        re.compile(value)
    except re.error as err:
        raise ScenarioError(f"{where}: {key}: bad regular expression "
                            f"{value!r}: {err}") from None
    return value


def _expect_data(value, where) -> dict[str, Any]:
    if not isinstance(value, dict) or not value:
        raise ScenarioError(f"{where}: expect_data must be "
                            f"{KEYS['expect_data']}")
    try:
        return expected_data.flattened(value)
    except ValueError as err:
        raise ScenarioError(f"{where}: expect_data: {err}") from None


def _tests_run(cmdline) -> list[str] | None:
    """The tests a command line's test= names, None for every one (all,
    or no test= word: the kernel's default)."""
    words = [w[5:] for w in cmdline if w.startswith("test=")]
    names = words[-1].split(",") if words else ["all"]
    return None if "all" in names else names


def _checked(spec, where) -> RunSpec:
    """spec once all its keys are in: refuse what tools/run would, and
    an expect_data path on a test the command line does not run (an ISO
    entry's line is the ISO's, not checked here)."""
    tests = _tests_run(spec.cmdline)
    for path in spec.expect_data:
        test = expected_data.parse_path(path)[0]
        if tests is not None and test not in tests:
            raise ScenarioError(f"{where}: expect_data: {path}: unknown "
                                f"path: test={','.join(tests)} runs no "
                                f"test {test}")
    if spec.iso_entry is not None:
        if spec.boot == "kernel":
            raise ScenarioError(f"{where}: iso_entry needs boot bios or "
                                "uefi")
        if spec.cmdline:
            raise ScenarioError(f"{where}: iso_entry boots the entry's own "
                                "command line; give no cmdline")
    return spec


def _cpu(value, where) -> str | dict[str, str]:
    if isinstance(value, str) and value:
        return value
    if isinstance(value, dict) and value and set(value) <= {"kvm", "tcg"} \
            and all(isinstance(v, str) and v for v in value.values()):
        return dict(value)
    raise ScenarioError(f"{where}: cpu must be {KEYS['cpu']}")


def _name(value, where, what="name", dotted=False) -> str:
    pattern = _DOTTED_NAME if dotted else _NAME
    if not isinstance(value, str) or not pattern.fullmatch(value):
        raise ScenarioError(f"{where}: bad {what} {value!r} (letters, "
                            f"digits, _ + -{' .' if dotted else ''} only, "
                            "at most 64)")
    return value


def _copy(spec, **changes) -> RunSpec:
    fields = dict(spec.__dict__)
    fields["qemu_args"] = list(spec.qemu_args)
    fields["cmdline"] = list(spec.cmdline)
    fields["axes"] = dict(spec.axes)
    fields["expect_lines"] = list(spec.expect_lines)
    fields["expect_data"] = dict(spec.expect_data)
    fields["host_kernels"] = list(spec.host_kernels)
    fields.update(changes)
    return RunSpec(**fields)


def read_file(path) -> dict[str, Any]:
    """A TOML or JSON file as a dict; JSON when the name ends in .json."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ScenarioError(f"cannot read {path}: {err}") from None
    try:
        doc = json.loads(text) if path.suffix == ".json" \
            else tomllib.loads(text)
    except (ValueError, RecursionError) as err:
        raise ScenarioError(f"{path}: not valid "
                            f"{'JSON' if path.suffix == '.json' else 'TOML'}"
                            f": {err}") from None
    if not isinstance(doc, dict):
        raise ScenarioError(f"{path}: expected a table of keys")
    return doc


def from_table(table, where, default_name=None, source=None,
               dotted=False, defaults=None) -> list[RunSpec]:
    """The RunSpecs of one scenario table: the scenario itself when it has
    no variants, else one per variant, in file order. dotted: its name
    may hold a dot when it has no variants (a matrix's own scenario).
    defaults: a matrix's keys for the table's, each replaced by the
    table's own."""
    if not isinstance(table, dict):
        raise ScenarioError(f"{where}: a scenario must be a table")
    name = _name(table.get("name", default_name), where,
                 dotted=dotted and "variants" not in table)
    base = RunSpec(name=name, scenario=name, source=source)
    _apply(base, {**(defaults or {}), **{k: v for k, v in table.items()
                                         if k not in ("name", "variants")}},
           where, merge=False)
    variants = table.get("variants")
    if variants is None:
        return [_checked(base, where)]
    if not isinstance(variants, dict) or not variants:
        raise ScenarioError(f"{where}: variants must be a non-empty table "
                            "of name -> keys")
    specs = []
    for vname, keys in variants.items():
        vwhere = f"{where}: variant {vname!r}"
        _name(vname, vwhere, "variant name")
        if not isinstance(keys, dict):
            raise ScenarioError(f"{vwhere}: must be a table of keys")
        spec = _copy(base, name=f"{name}.{vname}", variant=vname)
        specs.append(_checked(_apply(spec, keys, vwhere, merge=True),
                              vwhere))
    return specs


def find(name, directory=SCENARIOS) -> Path:
    """The file of a shipped scenario, or name itself when it is a path."""
    path = Path(name)
    if path.suffix in (".toml", ".json") and path.exists():
        return path
    for suffix in (".toml", ".json"):
        candidate = Path(directory) / f"{name}{suffix}"
        if candidate.exists():
            return candidate
    shipped = sorted(p.stem for p in Path(directory).glob("*.toml")) + \
        sorted(p.stem for p in Path(directory).glob("*.json"))
    raise ScenarioError(f"no scenario {name!r} (shipped: "
                        f"{', '.join(shipped) or 'none'})")


def load_scenario(ref, directory=SCENARIOS) -> list[RunSpec]:
    """RunSpecs for a scenario reference: NAME or a path, optionally
    followed by .VARIANT to pick one variant."""
    ref = str(ref)
    if Path(ref).suffix in (".toml", ".json"):
        base, variant = ref, ""
    else:
        base, _, variant = ref.partition(".")
    path = find(base, directory)
    specs = from_table(read_file(path), str(path), default_name=path.stem,
                       source=_shown(path))
    if variant:
        specs = [s for s in specs if s.variant == variant]
        if not specs:
            raise ScenarioError(f"scenario {base!r} has no variant "
                                f"{variant!r}")
    return specs


def cross(table, where, source=None, limit=MAX_RUNS,
          defaults=None) -> tuple[list[RunSpec], list[str]]:
    """The RunSpecs of a [[cross]] table: its base keys crossed with every
    combination of its axes. An axis is a list of values for one key
    (vcpus = [4, 16]) or a table of named partial scenarios (lpj =
    {per-cpu = {cmdline = ...}, ...}). Combinations QEMU could not build
    (CPUs that do not split into the nodes) are left out, and listed.
    Each spec's axes names the entry of each axis that made it
    ({"vcpus": "vcpus4", "lpj": "per-cpu"}). limit: the runs the matrix
    has left, checked before any is built. defaults: as from_table()'s,
    for the base keys."""
    if not isinstance(table, dict):
        raise ScenarioError(f"{where}: must be a table")
    axes = table.get("axes")
    if not isinstance(axes, dict) or not axes:
        raise ScenarioError(f"{where}: needs an axes table")
    prefix = _name(table.get("name", "cross"), where)
    base = RunSpec(name=prefix, scenario=prefix, source=source)
    _apply(base, {**(defaults or {}), **{k: v for k, v in table.items()
                                         if k not in ("name", "axes")}},
           where, merge=False)
    choices = []
    for axis, values in axes.items():
        awhere = f"{where}: axis {axis!r}"
        if isinstance(values, list):
            if axis not in OVERRIDES or not values:
                raise ScenarioError(f"{awhere}: a list axis must name a "
                                    f"scenario key and hold values")
            choices.append([(axis, f"{axis}{label(v)}", {axis: v})
                            for v in values])
        elif isinstance(values, dict) and values:
            entries = []
            for entry, keys in values.items():
                _name(entry, awhere, "axis entry")
                if not isinstance(keys, dict):
                    raise ScenarioError(f"{awhere}: entry {entry!r} must be "
                                        "a table of keys")
                entries.append((axis, entry, keys))
            choices.append(entries)
        else:
            raise ScenarioError(f"{awhere}: must be a list of values or a "
                                "table of named entries")
    size = math.prod(len(c) for c in choices)
    if size > limit:
        raise ScenarioError(f"{where}: its axes cross into {size} runs, "
                            f"more than the {limit} left of {MAX_RUNS}")
    specs, left_out = [], []
    for combo in itertools.product(*choices):
        joined = "-".join(part for _, part, _ in combo)
        name = _name(f"{prefix}-{joined}", where, "combined name")
        spec = _copy(base, name=name, scenario=name,
                     axes={axis: part for axis, part, _ in combo})
        for _, part, keys in combo:
            _apply(spec, keys, f"{where}: {part}", merge=True)
        why = impossible(spec)
        if why:
            left_out.append(f"{name}: {why}")
        else:
            specs.append(_checked(spec, where))
    return specs, left_out


def label(value) -> str:
    """value as a part of a name: letters, digits, _ + - only."""
    text = re.sub(r"[^A-Za-z0-9_+-]", "_", str(value))
    return text.lower() if isinstance(value, bool) else text


def impossible(spec) -> str | None:
    """Why QEMU could not be given this machine, or None; whether this
    host has KVM for an accel = "kvm" run is the run's to find out
    (needs_kvm), not the machine's."""
    try:
        qemu.qemu_argv(spec.qemu_machine(), spec.accel == "kvm", kernel="",
                       iso="", vars_file="")
    except qemu.ConfigError as err:
        return str(err)
    return None


def load_matrix(path, directory=SCENARIOS
                ) -> tuple[list[RunSpec], list[str], str, int]:
    """(specs, left_out, name, repeat) of a matrix file: its named
    scenarios, then its inline ones, then its crosses, each once. Its
    [defaults] are keys of every inline scenario and cross base that
    does not give its own; a named scenario is a file of its own and
    says all it means."""
    path = Path(path)
    doc = read_file(path)
    where = str(path)
    unknown = sorted(set(doc) - MATRIX_KEYS)
    if unknown:
        raise ScenarioError(f"{where}: unknown key {unknown[0]!r} (accepted: "
                            f"{', '.join(sorted(MATRIX_KEYS))})")
    name = _name(doc.get("name", path.stem), where, "matrix name")
    repeat = doc.get("repeat", 1)
    if type(repeat) is not int or not 1 <= repeat <= 100:
        raise ScenarioError(f"{where}: repeat must be a whole number 1..100")
    defaults = _defaults(doc.get("defaults", {}), where)
    specs, left_out = [], []
    refs = doc.get("scenarios", [])
    if not isinstance(refs, list) or \
            not all(isinstance(r, str) for r in refs):
        raise ScenarioError(f"{where}: scenarios must be a list of names")
    for ref in refs:
        specs += load_scenario(ref, directory)
    inline = doc.get("scenario", [])
    for i, table in enumerate(inline if isinstance(inline, list)
                              else [inline]):
        specs += from_table(table, f"{where}: scenario {i + 1}",
                            source=_shown(path), dotted=True,
                            defaults=defaults)
    crosses = doc.get("cross", [])
    for i, table in enumerate(crosses if isinstance(crosses, list)
                              else [crosses]):
        more, skipped = cross(table, f"{where}: cross {i + 1}",
                              source=_shown(path),
                              limit=MAX_RUNS - len(specs),
                              defaults=defaults)
        specs += more
        left_out += skipped
    if not specs:
        raise ScenarioError(f"{where}: names no scenario")
    seen = set()
    for spec in specs:
        if spec.name in seen:
            raise ScenarioError(f"{where}: scenario {spec.name!r} twice")
        seen.add(spec.name)
        spec.matrix = name
    return specs, left_out, name, repeat


def _defaults(table, where) -> dict[str, Any]:
    """A matrix's [defaults], each key checked as a scenario's would be
    (so that a bad one is reported once, at [defaults])."""
    if not isinstance(table, dict):
        raise ScenarioError(f"{where}: defaults must be a table of "
                            "scenario keys")
    _apply(RunSpec(name="defaults", scenario="defaults"), table,
           f"{where}: defaults", merge=True)
    return table


def repeated(specs, times) -> list[RunSpec]:
    """Each spec `times` times, repeats of one spec next to each other."""
    if len(specs) * times > MAX_RUNS:
        raise ScenarioError(f"{len(specs) * times} runs is more than "
                            f"{MAX_RUNS}")
    return [_copy(spec, repeat=r, repeats=times)
            for spec in specs for r in range(1, times + 1)]


def _shown(path) -> str:
    try:
        return str(Path(path).resolve().relative_to(ROOT))
    except ValueError:
        return str(path)
