# SPDX-License-Identifier: MIT
"""Host kernels: Debian's Linux by series, or a kernel of one's own
(hostkernel), booted as an L1 with this checkout inside (nested), and
the checked apt download every Debian package comes through (aptdeb)."""
