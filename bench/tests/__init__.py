# SPDX-License-Identifier: MIT
"""bench's unit tests, without QEMU; `python3 -m unittest` at the
checkout's root runs them with the host package's."""
