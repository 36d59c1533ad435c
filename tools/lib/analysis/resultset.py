# SPDX-License-Identifier: MIT
"""Result documents from what the user names: results.json files, batch
or run folders, whole results trees, and raw serial logs (a Hyper-V VM's
COM1, a log saved from anywhere), which are parsed here with the same
KTAP parser tools/run uses and turned into the same document.

Nothing here raises on a bad file: it becomes a problem line, and the
rest is still read.
"""

import json
import sys
from pathlib import Path
from typing import Any

from ..base.files import INDEX
from . import ktap, results

# Raw logs inside a folder are taken only under these names (or with a
# .meta.json beside them), so that a results tree's other logs (a check
# run's unit.log) are not mistaken for a guest's serial port.
LOG_SUFFIX = ".serial.log"
META_SUFFIX = ".meta.json"
MAX_LOG_BYTES = 64 << 20


def log_stem(path) -> str:
    name = Path(path).name
    for suffix in (LOG_SUFFIX, ".log", ".txt"):
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[:-len(suffix)]
    return name


def meta_for(path) -> Path:
    """The sidecar description of a raw log (what tools/hyperv writes):
    X.meta.json beside X.serial.log or X.log."""
    return Path(path).with_name(log_stem(path) + META_SUFFIX)


def doc_from_log(path, problems) -> dict[str, Any] | None:
    """A results document for a raw serial log, or None when the file
    cannot be read at all."""
    path = Path(path)
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_LOG_BYTES + 1)
    except OSError as err:
        problems.append(f"{path}: cannot read: {err.strerror}")
        return None
    meta: dict[str, Any] = {}
    if meta_for(path).exists():
        meta = _read_json(meta_for(path), problems) or {}
        if not isinstance(meta, dict):
            problems.append(f"{meta_for(path)}: not a JSON object, ignored")
            meta = {}
    report = ktap.parse(raw[:MAX_LOG_BYTES].split(b"\n"))
    log_problems = list(report.problems)
    if len(raw) > MAX_LOG_BYTES:
        log_problems.append(f"log longer than {MAX_LOG_BYTES} bytes: the "
                            "rest was not read")
    name = meta.get("name") if isinstance(meta.get("name"), str) \
        else log_stem(path)
    banner = next((line[2:] for line in
                   (ktap.clean(x).strip() for x in raw[:65536].split(b"\n"))
                   if line.startswith("# hvprobe ")), None)
    doc = {
        "schema": results.SCHEMA, "source": "serial-log", "run": name,
        "file": str(path), "started_at": meta.get("started_at"),
        "scenario": {"name": name, "scenario": name, "variant": None,
                     "description": meta.get("description", ""),
                     "source": str(path), "matrix": None, "repeat": 1,
                     "repeats": 1, "machine": meta.get("machine"),
                     "cmdline": meta.get("cmdline"), "timeout_s": None},
        "boot": (meta.get("machine") or {}).get("boot"),
        "iso_entry": meta.get("scenario"),
        "cmdline": meta.get("cmdline"), "qemu": None,
        "accel": (meta.get("host") or {}).get("accel"),
        "host": meta.get("host"),
        "hvprobe": {"version": meta.get("hvprobe_version"),
                    "banner": banner},
        "exit_status": None,
        "timing": {"first_ktap_s": None, "totals_s": None, "wall_s": None,
                   "timeout_s": None},
        "verdict": None, "crash": report.crash_reason,
        "totals": report.totals,
        "tests": [t.to_json() for t in report.tests],
        "host_checks": results.ktap_checks(report),
        "problems": log_problems,
        "expect_fail": None, "expected": None,
        "not_runnable": [], "host_notes": {},
    }
    doc["verdict"] = results.verdict(doc)
    return doc


def _read_json(path, problems) -> Any:
    try:
        # utf-8-sig: PowerShell's Set-Content writes a byte-order mark.
        with open(path, encoding="utf-8-sig") as f:
            return json.load(f)
    except (OSError, ValueError, RecursionError) as err:
        problems.append(f"{path}: not readable JSON: {err}")
        return None


def _results_doc(path, problems) -> dict[str, Any] | None:
    doc = _read_json(path, problems)
    if doc is None:
        return None
    if not (isinstance(doc, dict) and isinstance(doc.get("tests"), list)):
        problems.append(f"{path}: not a results document")
        return None
    why = malformed(doc)
    if why:
        problems.append(f"{path}: not a results document: {why}")
        return None
    doc.setdefault("file", str(path))
    return doc


def malformed(doc) -> str | None:
    """What is wrong with the shape of a results document that the
    commands reading it rely on, or None: tests and cases to a bounded
    depth, each with its name, status, reason and cases; host checks;
    the verdict, crash, problems and scenario fields."""
    kinds: dict[str, type | tuple[type, ...]] = {
        "verdict": (str, type(None)), "crash": (str, type(None)),
        "problems": list, "host_checks": list,
        "scenario": (dict, type(None)), "timing": (dict, type(None))}
    for key, kind in kinds.items():
        if key in doc and not isinstance(doc[key], kind):
            return f"{key} is a {type(doc[key]).__name__}"
    for check in doc.get("host_checks") or []:
        if not (isinstance(check, dict) and
                check.get("status") in ktap.STATUSES and
                isinstance(check.get("name"), str)):
            return "a host check without a name and a status"
    todo = [(t, 1) for t in doc["tests"]]
    while todo:
        test, depth = todo.pop()
        if depth > ktap.MAX_DEPTH + 1:
            return f"cases nested deeper than {ktap.MAX_DEPTH + 1} levels"
        if not (isinstance(test, dict) and isinstance(test.get("name"), str)
                and test.get("status") in ktap.STATUSES
                and isinstance(test.get("reason", ""), str)
                and isinstance(test.get("cases"), list)
                and isinstance(test.get("data", []), list)):
            return "a test without a name, status, reason and cases"
        if not all(isinstance(d, dict) for d in test.get("data", [])):
            return "DATA that is not an object"
        todo += [(c, depth + 1) for c in test["cases"]]
    return None


def _in_folder(folder) -> list[Path]:
    """The files of a folder that hold results, in run order: a batch's
    index order when there is one, else by name."""
    index = folder / INDEX
    found = sorted(folder.rglob("results.json"))
    if index.exists():
        try:
            runs = json.loads(index.read_text()).get("runs") or []
            order = {folder / r["run"] / "results.json": i
                     for i, r in enumerate(runs)
                     if isinstance(r, dict) and isinstance(r.get("run"), str)}
            found.sort(key=lambda p: order.get(p, len(order)))
        except (OSError, ValueError, AttributeError):
            pass
    logs = sorted(p for p in folder.rglob("*")
                  if p.is_file() and (p.name.endswith(LOG_SUFFIX) or (
                      p.suffix == ".log" and meta_for(p).exists()))
                  and not (p.parent / "results.json").exists())
    return found + logs


def load(paths) -> tuple[list[dict[str, Any]], list[str]]:
    """(docs, problems) for the given paths."""
    docs, problems = [], []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            files = _in_folder(path)
            if not files:
                problems.append(f"{path}: no results.json or serial log "
                                "inside")
        elif path.name == INDEX and path.exists():
            files = _in_folder(path.parent)     # a batch, by its index
        elif path.exists() and not path.is_file():
            problems.append(f"{path}: not a results.json, a serial log or "
                            "a folder of them")
            continue
        elif path.exists():
            if path.stat().st_size == 0:
                problems.append(f"{path}: empty")
                continue
            files = [path]
        else:
            problems.append(f"{path}: no such file or folder")
            continue
        for f in files:
            if f.suffix == ".json":
                doc = _results_doc(f, problems)
            else:
                doc = doc_from_log(f, problems)
            if doc is not None:
                docs.append(doc)
    return docs, problems


def load_noting(paths, prog, empty="no results found") -> list[dict[str, Any]]:
    """The docs of load(paths); each problem goes to stderr as "prog:
    problem", and so does empty when there is no doc at all."""
    docs, problems = load(paths)
    for problem in problems + ([empty] if empty and not docs else []):
        print(f"{prog}: {problem}", file=sys.stderr)
    return docs


def name_of(doc) -> str:
    """The name runs are grouped by: the scenario's (repeats share it),
    else the run's own."""
    scenario = doc.get("scenario")
    if isinstance(scenario, dict) and scenario.get("name"):
        return str(scenario["name"])
    return str(doc.get("run") or doc.get("file") or "?")


def host_label(doc) -> str:
    """Where a run ran when that was an L1 host kernel, e.g. "L1 6.12
    (tcg)": "" on a machine of its own."""
    nested = ((doc.get("host") or {}).get("nested")
              if isinstance(doc.get("host"), dict) else None)
    if not isinstance(nested, dict):
        return ""
    l0 = nested.get("l0")
    accel = l0.get("accel") if isinstance(l0, dict) else None
    kernel = nested.get("host_kernel")
    return (f"L1 {kernel if isinstance(kernel, str) else '?'} "
            f"({accel if isinstance(accel, str) else '?'})")


def grouped(docs, by_host=False) -> dict[str, list[dict[str, Any]]]:
    """{name: [docs]} in first-seen order; by_host keeps runs on
    different host kernels apart ("NAME @ L1 6.12 (tcg)")."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for doc in docs:
        name = name_of(doc)
        if by_host and host_label(doc):
            name += f" @ {host_label(doc)}"
        groups.setdefault(name, []).append(doc)
    return groups
