# SPDX-License-Identifier: MIT
"""One module per benchmark command; tools/entry.py runs them (bench/smp is
smp.py here, bench/boot-time boot_time.py)."""
