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
taken from it instead of booted again.
"""

import concurrent.futures
import datetime
import json
import shutil
import threading
import time
from pathlib import Path
from typing import Any

from ... import ROOT
from .. import hostinfo
from ..analysis import results
from ..base import jsonfile
from ..base.files import INDEX
from ..base.status import Status
from . import guest, media, qemu, serial
from . import kvm as kvm_lib
from .progress import Progress


INTERRUPTED = "interrupted"


def earlier(spec, batch_dir) -> dict[str, Any] | None:
    """The record of spec's run from an earlier pass over batch_dir (its
    results.json), or None; a folder a run left without one is removed,
    so that the run takes its name again."""
    run_dir = Path(batch_dir) / spec.run_name
    try:
        with open(run_dir / "results.json") as f:
            doc = json.load(f)
        return {"name": spec.name, "run": run_dir.name,
                "repeat": spec.repeat, "verdict": doc["verdict"],
                "reason": doc.get("crash"), "wall_s": None, "resumed": True}
    except (OSError, ValueError, KeyError, TypeError):
        shutil.rmtree(run_dir, ignore_errors=True)
        return None


def run_one(spec, batch_dir, kvm,
            resume=False) -> tuple[dict[str, Any], guest.Outcome | None]:
    """(record, outcome or None) for one spec, in batch_dir/its run
    name: the one way every command boots a guest (tools/run, bench,
    tools/check, tools/soak). Never raises for a run that cannot start,
    so that one bad run does not stop the batch. kvm is kvm_state()'s.
    A negative run (expect_fail) adds "expected" to its record."""
    record = {"name": spec.name, "run": spec.run_name, "repeat": spec.repeat,
              "verdict": None, "reason": None, "wall_s": None}
    if resume and (done := earlier(spec, batch_dir)):
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
                            iso_entry=spec.iso_entry, kvm_ok=kvm_ok)
    except serial.Interrupted as err:
        record["verdict"] = INTERRUPTED
        record["reason"] = str(err)
        return record, None
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


def run_all(specs, batch_dir, jobs, about, stream=None, live=None,
            resume=False) -> dict[str, Any]:
    """Run every spec; returns the index document (also written to
    batch_dir/index.json, after each run and at the end). about: what the
    batch is (name, file...); resume: keep runs that have results."""
    kvm = kvm_state()
    index = {"schema": results.SCHEMA, "kind": "batch", **about,
             "started_at": datetime.datetime.now(
                 datetime.timezone.utc).isoformat(timespec="seconds"),
             "jobs": jobs, "complete": False, "runs": []}
    records: list[dict[str, Any] | None] = [None] * len(specs)
    lock = threading.Lock()

    def write() -> None:
        index["runs"] = [r for r in records if r is not None]
        jsonfile.write(batch_dir / INDEX, index)

    with Progress(len(specs), stream=stream, live=live) as progress:
        def one(i, spec) -> None:
            progress.started()
            record, outcome = run_one(spec, batch_dir, kvm, resume)
            bad = record["verdict"] not in (Status.PASS, Status.SKIP) \
                and not record.get("expected")
            took = f" ({record['wall_s']:.1f} s)" if record["wall_s"] else ""
            line = f"{record['verdict'].upper():7} {record['run']}{took}"
            if record["reason"]:
                line += f": {record['reason']}"
            if record.get("resumed"):
                line += " (from an earlier pass)"
            progress.finished(line, failed=bad,
                              skipped=record["verdict"] == Status.SKIP)
            if bad and outcome is not None:
                # The lines that say why, as a single run prints them.
                detail = [f"    {x}" for x in outcome.lines
                          if not x.startswith(("PASS", "SKIP"))]
                progress.note("\n".join(detail))
            with lock:
                records[i] = record
                write()
        pool = concurrent.futures.ThreadPoolExecutor(jobs)
        try:
            futures = [pool.submit(one, i, s) for i, s in enumerate(specs)]
            for future in futures:
                future.result()
        except KeyboardInterrupt:
            serial.stop_all()
            pool.shutdown(wait=True, cancel_futures=True)
            with lock:
                for i, spec in enumerate(specs):
                    if records[i] is None:
                        records[i] = {"name": spec.name,
                                      "run": spec.run_name,
                                      "repeat": spec.repeat,
                                      "verdict": INTERRUPTED,
                                      "reason": "cancelled before it "
                                                "started",
                                      "wall_s": None}
                index["interrupted"] = True
                index["elapsed_s"] = round(progress.clock() -
                                           progress.start, 3)
                write()
            raise
        finally:
            pool.shutdown(wait=True)
        index["elapsed_s"] = round(progress.clock() - progress.start, 3)
    index["complete"] = True
    write()
    return index


def tally(index) -> dict[str, int]:
    """Counts of the index's verdicts."""
    counts: dict[str, int] = {}
    for record in index["runs"]:
        counts[record["verdict"]] = counts.get(record["verdict"], 0) + 1
    return counts
