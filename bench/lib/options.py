# SPDX-License-Identifier: MIT
"""The options of the benchmarks that boot Linux and hvprobe on one fixed
machine (bench/smp, bench/linux-bringup): guest RAM, the accelerator
(TCG by default, so that figures from different hosts compare), a boot's
timeout and a folder that keeps the runs."""

import argparse

from tools.lib.base import seconds


def machine(p: argparse.ArgumentParser, mem: str, timeout: float,
            keep: str) -> None:
    """--mem, --accel, --timeout and --keep on p; mem and timeout are the
    defaults, keep says what --keep DIR keeps, and where."""
    p.add_argument("--mem", default=mem, metavar="SIZE",
                   help=f"guest RAM, split evenly over the NUMA nodes "
                        f"(default: {mem})")
    p.add_argument("--accel", choices=("tcg", "kvm"), default="tcg",
                   help="accelerator (default: tcg, so that figures from "
                        "different hosts compare)")
    p.add_argument("--timeout", type=seconds.option, default=timeout,
                   metavar="S",
                   help="seconds one boot may take before it counts as "
                        "failed (default: %(default)g)")
    p.add_argument("--keep", metavar="DIR", help=f"keep {keep}")
