# SPDX-License-Identifier: MIT
"""Debian's Linux series that hvprobe boots as an L1 host kernel: 6.1 from
bookworm, 6.12 from bookworm-backports. Scenarios name them, the host
kernels fetch them."""

SERIES = ("6.1", "6.12")
