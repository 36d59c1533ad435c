# SPDX-License-Identifier: MIT
"""Many guest runs at once: the RunSpecs of a scenario or matrix, up to
N QEMU processes at a time, each in its own folder under one batch
folder, with an index.json that lists them all (those that could not run
included, with the reason).

Threads are enough: each run spends its time in QEMU, and the threads
only wait on pipes.

index.json is rewritten after each run, so that a batch cut short keeps
what it ran. An interrupt (Ctrl-C, SIGTERM, SIGHUP) cancels the runs not
yet started, kills the running ones (serial.stop_all()), records both as
"interrupted", writes the index and lets KeyboardInterrupt go on (exit
130). With resume, a run whose folder already holds a results.json is
taken from it instead of booted again. A run folder or the index that
cannot be written (a full disk: CannotWrite) stops the batch as an
interrupt does, and is raised. A resume goes on only with the
batch its index names (resume_refusal: the same matrix or scenarios, the
same runs), and removes only the folders that index lists: a mistyped
folder is refused, never cleared.
"""

import concurrent.futures
import datetime
import json
import shutil
import threading
import time
from collections.abc import Collection
from pathlib import Path
from typing import Any

from ... import ROOT
from .. import hostinfo
from ..base import text
from ..analysis import results
from ..base import jsonfile
from ..base.exits import CannotWrite
from ..base.files import INDEX
from ..base.status import Status
from . import guest, media, qemu, serial
from . import kvm as kvm_lib
from .progress import Progress


INTERRUPTED = "interrupted"


def read_index(batch_dir) -> dict[str, Any]:
    """batch_dir's index.json; ValueError (OSError's included) saying
    why when it is not a readable batch index."""
    try:
        with open(Path(batch_dir) / INDEX) as f:
            index = json.load(f)
    except OSError as err:
        raise ValueError(f"cannot read {INDEX}: {err.strerror}") from None
    except ValueError as err:
        raise ValueError(f"{INDEX} is not JSON: {err}") from None
    if not isinstance(index, dict) or index.get("kind") != "batch" or \
            not isinstance(index.get("runs"), list) or \
            not all(isinstance(r, dict) for r in index["runs"]):
        raise ValueError(f"{INDEX} is not a batch's index")
    return index


def listed_runs(index) -> set[str]:
    """The run folders an index lists: the only ones a resume may clear."""
    return {r["run"] for r in index["runs"] if isinstance(r.get("run"), str)}


def resume_refusal(batch_dir, specs, about) -> str | None:
    """Why going on with the batch in batch_dir as specs (about: what
    they are, as run_all takes it) would be another batch's, or None
    when its index names this one: the same matrix or scenarios, the
    same planned runs (or, for an index that predates the plan, runs
    that are all among these)."""
    try:
        index = read_index(batch_dir)
    except ValueError as err:
        return str(err)
    for key in ("name", "matrix", "scenarios"):
        if index.get(key) != about.get(key):
            theirs = index.get("matrix") or index.get("scenarios") or \
                index.get("name")
            ours = about.get("matrix") or about.get("scenarios") or \
                about.get("name")
            return f"its {INDEX} is the batch of {theirs!r}, not of {ours!r}"
    names = [s.run_name for s in specs]
    plan = index.get("plan")
    if plan is not None and plan != names:
        return (f"its {INDEX} plans {len(plan) if isinstance(plan, list) else '?'}"
                f" other runs than these {len(names)} (another --repeat, "
                "or the scenarios changed)")
    ours = {(s.name, s.repeat) for s in specs}
    stray = [r.get("run") for r in index["runs"]
             if (r.get("name"), r.get("repeat")) not in ours]
    if stray:
        return f"its {INDEX} lists runs this batch has not: " + \
            ", ".join(str(r) for r in stray[:3])
    return None


def earlier(spec, batch_dir, listed=frozenset()) -> dict[str, Any] | None:
    """The record of spec's run from an earlier pass over batch_dir (its
    results.json), or None. listed: the run folders the earlier pass's
    index names; such a folder left without a results.json is removed,
    so that the run takes its name again. A folder it does not list is
    not this batch's to remove (the run then takes another name)."""
    run_dir = Path(batch_dir) / spec.run_name
    if run_dir.name not in listed:
        return None
    try:
        with open(run_dir / "results.json") as f:
            doc = json.load(f)
        return {"name": spec.name, "run": run_dir.name,
                "repeat": spec.repeat, "verdict": doc["verdict"],
                "reason": doc.get("crash"), "wall_s": None, "resumed": True}
    except (OSError, ValueError, KeyError, TypeError):
        if run_dir.is_dir() and not run_dir.is_symlink():
            shutil.rmtree(run_dir, ignore_errors=True)
        return None


def run_one(spec, batch_dir, kvm, resume: bool | Collection[str] = False
            ) -> tuple[dict[str, Any], guest.Outcome | None]:
    """(record, outcome or None) for one spec, in batch_dir/its run
    name: the one way every command boots a guest (tools/run, bench,
    tools/check, tools/soak). Never raises for a run that cannot start,
    so that one bad run does not stop the batch. kvm is kvm_state()'s.
    A negative run (expect_fail) adds "expected" to its record. resume:
    the run folders an earlier pass's index lists (True: spec's own), of
    which a run with results is kept."""
    record = {"name": spec.name, "run": spec.run_name, "repeat": spec.repeat,
              "verdict": None, "reason": None, "wall_s": None}
    listed = {spec.run_name} if resume is True else resume or ()
    if resume and (done := earlier(spec, batch_dir, listed)):
        return done, None
    if spec.needs_kvm and not kvm.verdict()[0]:
        record["verdict"] = Status.SKIP
        record["reason"] = f"needs KVM: {kvm.verdict()[1]}"
        return record, None
    start = time.monotonic()
    kvm_ok = kvm.ok_for(spec.accel, spec.boot, spec.qemu_machine("kvm").cpu)
    try:
        accel, _ = qemu.resolve_accel(spec.accel, kvm_ok)
        run_dir = results.new_dir(batch_dir, spec.run_name)
        record["run"] = run_dir.name
        outcome = guest.run(spec.qemu_machine(accel), spec.cmdline, run_dir,
                            spec.timeout_s, scenario=spec.to_json(),
                            quiet=True, expect_status=spec.expect_status,
                            expect_fail=spec.expect_fail,
                            expect_lines=spec.expect_lines,
                            expect_data=spec.expect_data,
                            iso_entry=spec.iso_entry, kvm_ok=kvm_ok)
    except serial.Interrupted as err:
        record["verdict"] = INTERRUPTED
        record["reason"] = str(err)
        return record, None
    except CannotWrite:
        raise   # the next run would fail the same way: the queue stops
    except (guest.CannotRun, media.MediaError, qemu.ConfigError,
            OSError) as err:
        record["verdict"] = "not run"
        record["reason"] = str(err)
        return record, None
    record["verdict"] = outcome.doc["verdict"]
    if spec.expect_fail is not None:
        record["expected"] = outcome.doc["expected"]
    record["reason"] = outcome.doc["crash"]
    record["wall_s"] = round(time.monotonic() - start, 3)
    return record, outcome


def kvm_state(works=None) -> kvm_lib.Availability:
    """This host's KVM as run_one() asks about it, each fact looked up
    once, when a run first needs it. works: kvm.works()'s (ok, reason)
    when the caller has it already."""
    return kvm_lib.Availability(ROOT, hostinfo.qemu_version(), works)


def finished_line(record) -> str:
    """The progress line of a finished run: verdict, name, time, why."""
    took = f" ({record['wall_s']:.1f} s)" if record["wall_s"] else ""
    line = f"{record['verdict'].upper():7} {record['run']}{took}"
    if record["reason"]:
        line += f": {record['reason']}"
    if record.get("resumed"):
        line += " (from an earlier pass)"
    return text.escaped(line)


def show_finished(progress, record, outcome) -> None:
    """Count a finished run in progress, with, for one that failed, the
    lines that say why, as a single run prints them."""
    bad = record["verdict"] not in (Status.PASS, Status.SKIP) \
        and not record.get("expected")
    progress.finished(finished_line(record), failed=bad,
                      skipped=record["verdict"] == Status.SKIP)
    if bad and outcome is not None:
        detail = [f"    {text.escaped(x)}" for x in outcome.lines
                  if not x.startswith(("PASS", "SKIP"))]
        progress.note("\n".join(detail))


def cancelled(spec) -> dict[str, Any]:
    """The record of a run that Ctrl-C stopped before it started."""
    return {"name": spec.name, "run": spec.run_name, "repeat": spec.repeat,
            "verdict": INTERRUPTED, "reason": "cancelled before it started",
            "wall_s": None}


def run_all(specs, batch_dir, jobs, about, stream=None, live=None,
            resume=False) -> dict[str, Any]:
    """Run every spec; returns the index document (also written to
    batch_dir/index.json, after each run and at the end). about: what the
    batch is (name, file...); resume: keep runs that have results, of
    the folders batch_dir's index lists (the caller has checked it with
    resume_refusal)."""
    listed = listed_runs(read_index(batch_dir)) if resume else False
    batch = _Batch(specs, batch_dir, jobs, about, listed)
    with Progress(len(specs), stream=stream, live=live) as progress:
        pool = concurrent.futures.ThreadPoolExecutor(jobs)
        try:
            futures = [pool.submit(batch.one, progress, i, s)
                       for i, s in enumerate(specs)]
            # In the order they end, so that the first to fail stops
            # the rest at once.
            for future in concurrent.futures.as_completed(futures):
                future.result()
        except (KeyboardInterrupt, CannotWrite) as err:
            serial.stop_all()
            pool.shutdown(wait=True, cancel_futures=True)
            batch.stopped(err, progress)
            raise
        finally:
            pool.shutdown(wait=True)
        batch.index["elapsed_s"] = round(progress.clock() - progress.start,
                                         3)
    batch.index["complete"] = True
    batch.write()
    return batch.index


class _Batch:
    """One run_all's index and records, shared by its worker threads."""

    def __init__(self, specs, batch_dir, jobs, about, listed):
        self.specs, self.batch_dir, self.listed = specs, batch_dir, listed
        self.kvm = kvm_state()
        self.index = {"schema": results.SCHEMA, "kind": "batch", **about,
                      "started_at": datetime.datetime.now(
                          datetime.timezone.utc).isoformat(
                              timespec="seconds"),
                      "jobs": jobs, "complete": False,
                      "plan": [s.run_name for s in specs], "runs": []}
        self.records: list[dict[str, Any] | None] = [None] * len(specs)
        self.lock = threading.Lock()
        # Set by the first run that cannot write: no run starts after it,
        # even one a free worker takes before the pool is shut down.
        self.full = threading.Event()

    def write(self) -> None:
        self.index["runs"] = [r for r in self.records if r is not None]
        try:
            jsonfile.write(self.batch_dir / INDEX, self.index)
        except OSError as err:
            raise CannotWrite.of(self.batch_dir / INDEX, err) from None

    def one(self, progress, i, spec) -> None:
        """Run spec i unless the disk has filled, and record it."""
        try:
            if not self.full.is_set():
                self._run_and_record(progress, i, spec)
        except CannotWrite:
            self.full.set()
            raise

    def _run_and_record(self, progress, i, spec) -> None:
        progress.started()
        record, outcome = run_one(spec, self.batch_dir, self.kvm,
                                  self.listed)
        show_finished(progress, record, outcome)
        with self.lock:
            self.records[i] = record
            self.write()

    def stopped(self, err, progress) -> None:
        """Write the index of a batch that ^C or a full disk stopped:
        what ran, and every other run cancelled."""
        with self.lock:
            for i, spec in enumerate(self.specs):
                if self.records[i] is None:
                    self.records[i] = cancelled(spec)
            self.index["interrupted"] = True
            if isinstance(err, CannotWrite):
                self.index["stopped"] = str(err)
            self.index["elapsed_s"] = round(progress.clock() -
                                            progress.start, 3)
            try:
                self.write()
            except CannotWrite:
                pass    # the disk is still full: the error is said


def tally(index) -> dict[str, int]:
    """Counts of the index's verdicts."""
    counts: dict[str, int] = {}
    for record in index["runs"]:
        counts[record["verdict"]] = counts.get(record["verdict"], 0) + 1
    return counts
