# SPDX-License-Identifier: MIT
"""The host package's library (tools.lib), by role:

  base/         the bottom floor, what everything shares: exit
                statuses, status words, the guest's exit codes, the
                results' file names, the host-kernel series, JSON
                files, signals and the checked apt download
  launch/       booting guests: QEMU command lines, boot media, the
                serial console, KVM detection, scenarios and matrices,
                one guest run and batches of them
  analysis/     reading what runs said: KTAP, results and the verdict
                rules, result sets, figures, reports, comparisons,
                statistics, tables, and Linux's kunit.py and LAVA's log
                as second readers
  probe/        the host probe: what a KVM host did for a guest,
                recorded with perf and counted, and make check's row
  hostkernels/  Debian's kernels as L1 hosts, booted nested
  checks/       make check's rows, a module per kind, which
                tools/commands/check.py lays out as a table

and, beside them, the command-line pieces (cli), the host's
description (hostinfo), the build's names (buildinfo), the house plan
(layering) and Debian's Linux as a referee (referee). tools/run,
tools/check and bench/ are built from it."""
