# SPDX-License-Identifier: MIT
"""Host kernels: Debian's Linux by series, or a kernel of one's own
(hostkernel), booted as an L1 with this checkout inside (nested); the
checked apt download they come through is the bottom floor's
(base/aptdeb)."""
