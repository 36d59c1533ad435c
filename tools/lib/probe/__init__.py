# SPDX-License-Identifier: MIT
"""The host probe: what a KVM host did for an hvprobe guest, recorded
with perf (hostprobe), counted from the recording (probecount), around
one guest run (probedrun), and make check's host-probe row (probecheck,
also run inside an L1 as python3 -m tools.lib.probe.probecheck)."""
