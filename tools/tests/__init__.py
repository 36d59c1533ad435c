# SPDX-License-Identifier: MIT
"""The host package's unit tests: `python3 -m unittest` at the checkout's
root runs them with the benchmarks' (tools/check's python row does too)."""
