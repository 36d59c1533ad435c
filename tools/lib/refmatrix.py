# SPDX-License-Identifier: MIT
"""tools/linux-referee --matrix: the referee's scenarios, and the table of
what Linux and hvprobe did in each.

Under TCG on this machine, and under each nested host kernel (L1, as
tools/run --host-kernel boots it) with KVM's CPU flavours: plain KVM,
without kvmclock, Hyper-V emulation with and without hv-frequencies,
Hyper-V alone (kvm=off, so that Linux sees no KVM leaves) with and
without them, and hv-frequencies without kvmclock; each on one node and
on several (one package per node: four under TCG, two nested). Each
scenario is one tools/linux-referee run (Debian's 6.1 and 6.12 beside
hvprobe's linux-6.1 and linux-6.12 in the same machine), which writes
its referee.json; the table is read from those: per series the AP
calibrations and boot CPU's source of each side, and the verdict of
the comparisons beyond them (lpj classes, the TSC's unstable reason,
the TSC-sync checks). Nothing here boots anything, so the tests can
feed it made-up documents.
"""

import fnmatch
import json
from dataclasses import dataclass
from typing import Any

TCG = "tcg"
# Hyper-V as KVM emulates it: the enlightenments Linux's mshyperv.c
# looks for, hv-time giving the reference TSC page.
_HV = "hv-relaxed,hv-vpindex,hv-time"
# KVM's CPU flavours for the nested scenarios, in the order.
NESTED_CPUS = {
    "kvm": "host,-arch-capabilities",
    "no-kvmclock": "host,-arch-capabilities,-kvmclock",
    "hv": f"host,-arch-capabilities,{_HV}",
    "hv-freq": f"host,-arch-capabilities,{_HV},hv-frequencies",
    "hv-alone": f"host,-arch-capabilities,{_HV},kvm=off",
    "hv-alone-freq": f"host,-arch-capabilities,{_HV},hv-frequencies,kvm=off",
    # KVM is Linux's platform but states no rate without kvmclock, and
    # Hyper-V's MSR states one Linux never asks (ms_hyperv_init_platform()
    # sets x86_platform.calibrate_tsc only where Hyper-V is the platform):
    # Linux cannot get tsc_khz.
    "hv-freq-no-kvmclock":
        f"host,-arch-capabilities,-kvmclock,{_HV},hv-frequencies",
}
NODES = (1, 4)
# TCG is cheap enough for two CPUs per package (a copy inside a package
# shows). An L2 under a TCG-nested L1 is not, so one per package there,
# and no more vCPUs than L1 has (nested.L1_VCPUS): with 4, on the 2.445
# GHz machine kind, Debian's Linux reset in most boots and L1 itself died
# (once with a KVM vCPU thread's "corrupted stack end detected inside
# scheduler") within a few, where with 2 it finishes most boots and L1
# lives through make check's legs. So two nodes, not four, nested.
TCG_VCPUS, NESTED_VCPUS = 8, 2
NESTED_NODES = (1, 2)
# Known, reported, not modelled: under a TCG-nested L1 each timer read
# takes longer than tsc_read_refs() accepts, so Linux without the
# frequency MSRs cannot calibrate its TSC on Hyper-V alone.
@dataclass(frozen=True)
class Scenario:
    name: str
    host: str           # "tcg", or the L1 host kernel's series
    cpu: str | None     # None: the accelerator's default model
    vcpus: int
    nodes: int
    flavour: str = "default"

    def argv(self, results_dir) -> list[str]:
        """tools/linux-referee's options for this scenario."""
        out = ["--no-build", "--results", str(results_dir), "--name",
               self.name, "--smp", str(self.vcpus), "--numa",
               str(self.nodes), "--accel", TCG if self.host == TCG else "kvm"]
        if self.cpu:
            out += ["--cpu", self.cpu]
        return out


def scenarios(host_kernels=("6.1", "6.12")) -> list[Scenario]:
    """Every scenario: TCG's two, then each host kernel's fourteen."""
    out = [Scenario(f"tcg-{n}node", TCG, None, TCG_VCPUS, n)
           for n in NODES]
    for host in host_kernels:
        for flavour, cpu in NESTED_CPUS.items():
            for n in NESTED_NODES:
                out.append(Scenario(f"l1-{host}-{flavour}-{n}node", host, cpu,
                                    NESTED_VCPUS, n, flavour))
    return out


def pick(all_scenarios, patterns) -> list[Scenario]:
    """The scenarios whose names match any of the shell patterns (all,
    without any)."""
    if not patterns:
        return list(all_scenarios)
    return [s for s in all_scenarios
            if any(fnmatch.fnmatchcase(s.name, p) for p in patterns)]


def read(folder) -> dict[str, Any] | None:
    """A scenario's referee.json, or None."""
    try:
        return json.loads((folder / "referee.json").read_text())
    except (OSError, ValueError):
        return None


def lines(scenario, doc, rc=None) -> list[tuple[str, ...]]:
    """Table rows (tuples of cells) of one scenario: one per Linux
    series it judged, or one saying why there is none."""
    where = "TCG" if scenario.host == TCG else f"L1 {scenario.host}"
    head = (scenario.name, where, scenario.flavour, str(scenario.nodes))
    if doc is None:
        why = "never ran" if rc is None else f"no referee.json (exit {rc})"
        return [head + ("-", why, "", "", "", "", "", "NO RESULT")]
    out: list[tuple[str, ...]] = []
    for row in doc["rows"]:
        linux, ours = row.get("linux") or {}, row["hvprobe"]
        unstable = linux.get("tsc_unstable")
        said = "never finished" if not linux else \
            f"{linux.get('calibrations')} {linux.get('bsp_lpj_source')}" \
            + (" (TSC unstable)" if unstable else "")
        verdict = "NOT RUN" if row.get("not_run") else \
            "agree" if row.get("agree") else "DISAGREE"
        out.append(head + (row["series"], row.get("release") or "?", said,
                           row["policy"], f"{ours.get('calibrations')} "
                           f"{ours.get('bsp_lpj_source')}", ours.get("verdict")
                           or "?", beyond(row.get("comparisons")), verdict))
    return out


# The comparisons beyond the two counts the table shows, by short name,
# and their verdicts as referee.json words them (tools/lib/referee.py's
# COMPARISONS and AGREE, DISAGREE, NOT_COMPARED, one floor above this).
BEYOND = {"CPUs that share an lpj": "classes",
          "why the TSC is unstable": "unstable", "TSC-sync checks": "checks"}
MARKS = {"agree": "ok", "disagree": "DIFFER", "not compared": "n/c"}


def beyond(comparisons) -> str:
    """One cell for the comparisons beyond the calibration count and the
    boot CPU's source: each one's short name and ok, DIFFER or n/c (not
    compared); "-" for a referee.json that has none."""
    cells = [f"{BEYOND[c['what']]}:{MARKS.get(c['verdict'], '?')}"
             for c in comparisons or [] if c.get("what") in BEYOND]
    return ",".join(cells) or "-"


HEADER = ("scenario", "host", "CPU flavour", "nodes", "Linux", "release",
          "Linux: APs cal, BSP lpj", "hvprobe policy",
          "hvprobe: APs cal, BSP lpj", "run", "also judged", "verdict")


def table(results) -> list[str]:
    """The table's lines from [(Scenario, referee.json doc or None, exit
    status or None)]."""
    rows: list[tuple[str, ...]] = [HEADER]
    for scenario, doc, rc in results:
        rows += lines(scenario, doc, rc)
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(HEADER))]
    out = ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip()
           for r in rows]
    return out


def agreed(results) -> tuple[int, int]:
    """(scenarios whose every row was judged and agrees, scenarios): a
    Linux that never finished judged nothing, so its scenario does not
    agree."""
    judged = [doc for _, doc, _ in results if doc is not None]
    return sum(1 for doc in judged if doc.get("agree") and
               not doc.get("not_run")), len(results)
