# SPDX-License-Identifier: MIT
"""Booting guests: QEMU command lines (qemu), boot media (media), the
serial console (serial), whether KVM works (kvm), scenarios and matrices
(scenario), one guest run (guest), many of them (batch) and their
progress line (progress). Every command boots through batch.run_one."""
