# SPDX-License-Identifier: MIT
"""make check's guest runs: one run of the catalogue, booted as tools/run
boots it (batch.run_one), judged by its results.json; and what the runs
share (Context)."""

import os
from dataclasses import dataclass, field
from typing import Any

from ..analysis import results
from ..base.status import Status
from ..launch import batch


@dataclass
class Context:
    """What the guest-run rows share: KVM's (ok, reason) and QEMU's
    (major, minor), asked once before the runs start; what each run left
    (seen: its results.json document, or why it did not run); and each
    L1 host kernel's outcome (nested), for make check's last lines."""
    kvm: tuple[bool, str]
    qemu: tuple[int, int]
    seen: dict[str, Any] = field(default_factory=dict)
    nested: dict[str, Any] = field(default_factory=dict)


def too_old_qemu(run, have) -> str | None:
    """Why a QEMU of release have cannot take run (min_qemu = "8.0", e.g.
    for TCG's x2APIC), or None."""
    need = run.min_qemu
    if need and have < tuple(int(x) for x in need.split(".")):
        return f"needs QEMU >= {need}, found {have[0]}.{have[1]}"
    return None


def guest_run(run, log_dir, ctx: Context) -> tuple[results.Counts, str, str]:
    """One guest run, as tools/run boots it (batch.run_one), in its own
    folder under log_dir; its results.json goes into ctx.seen[run name]. A run this host cannot take is a skip that
    says why: without a working KVM, always; for want of a newer QEMU
    only outside CI: .ci/run installs one, and under CI=true losing the
    run is a failure, not a quiet skip."""
    missing = None
    if run.needs_kvm and not ctx.kvm[0]:
        missing = f"needs KVM: {ctx.kvm[1]}"
    elif too_old_qemu(run, ctx.qemu):
        missing = too_old_qemu(run, ctx.qemu)
        if os.environ.get("CI") == "true":
            return (results.Counts(failed=1), "lost",
                    f"CI=true and this run cannot take place: {missing}\n")
    if missing:
        ctx.seen[run.name] = missing
        return results.Counts(skipped=1), Status.SKIP, missing + "\n"
    record, outcome = batch.run_one(run, log_dir, batch.kvm_state(ctx.kvm))
    if record["verdict"] == batch.INTERRUPTED:
        return results.Counts(), "interrupted", ""
    if outcome is None:
        # Nothing booted (no build, no media, QEMU would not start): what
        # tools/run would have said before exiting 3.
        return results.Counts(failed=1), "no result", \
            f"{record['verdict']}: {record['reason']}\n"
    return judged(run.name, 0 if outcome.ok else 1,
                  "".join(f"{line}\n" for line in outcome.lines),
                  outcome.doc, ctx.seen)


def judged(name, rc, text, doc, seen) -> tuple[results.Counts, str, str]:
    """A guest run's row from how it ended (rc: tools/run's exit status,
    0 when it passed or failed as expected), what it said (text) and
    wrote (its results.json document, or None)."""
    if doc is None:
        return results.Counts(failed=1), "no result", text
    seen[name] = doc
    counts = results.count_run(doc)
    verdict = doc["verdict"]
    if doc.get("expect_fail") is not None:
        verdict = "expected" if doc.get("expected") else "unexpected"
    if (rc == 0) != (counts.failed == 0):
        # The runner and the counts disagree; the runner knows something.
        counts.failed += 1
        text += f"(tools/run exited {rc})\n"
    return counts, verdict, text
